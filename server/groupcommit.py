"""What both log writers (server/logwriter.py's LogWriter, files, and server/store_pg.py's
PgWriter, the store) do alike with their queue of commits: how a group is gathered, how a
commit is handed over, how the group-commit latency is said."""

from __future__ import annotations

import math

import trio

from .world import Clock

QUEUE = 4096          # pending commits across all tables (bounded: a full queue makes arbiters wait)
GROUP = 1024          # commits taken into one group at most


def group_commit_phrase(mean_ms: float, max_ms: float, count: int) -> str:
    """The group-commit latency as both writers' summaries say it (bench/load.py reads it)."""
    return f"group commits: mean {mean_ms:.2f} ms, max {max_ms:.1f} ms ({count})"


def fill_group(recv: trio.MemoryReceiveChannel, group: list) -> list:
    """``group`` with what else waits in ``recv`` now, up to GROUP commits (both writers)."""
    while len(group) < GROUP:
        try:
            group.append(recv.receive_nowait())
        except (trio.WouldBlock, trio.EndOfChannel):
            break
    return group


async def next_commit(recv: trio.MemoryReceiveChannel, clock: Clock | None = None, wake: float = math.inf):
    """The first commit of the next group (both writers): one already waiting is taken at
    once, with no schedule point, since one here would wait for every task the last
    group's acknowledgment woke (at 4,000 players, 95 to 200 arbiters) before the next
    group could start (the group's write in a worker thread is a schedule point anyway).
    Else it waits for one, until ``wake`` on ``clock`` (then None). EndOfChannel once the
    channel is closed and drained."""
    try:
        return recv.receive_nowait()
    except trio.WouldBlock:
        pass
    if clock is None or wake == math.inf:
        return await recv.receive()
    with clock.move_on_at(wake):
        return await recv.receive()
    return None


async def hand_over(send: trio.MemorySendChannel, c) -> bool:
    """Queue commit ``c`` on a writer's channel; False if the writer is gone. A writer that
    failed (its channel broken) is stopping the server: the caller waits, acknowledging
    nothing, until the stop cancels it, instead of dying of a closed channel mid-goodbye.
    One closed by ``close()`` has written everything: nothing is left to wait for."""
    try:
        await send.send(c)
        return True
    except trio.BrokenResourceError:
        await trio.sleep_forever()
    except trio.ClosedResourceError:
        pass
    return False
