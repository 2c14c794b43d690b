"""`wildtable serve` whose logs fail for good (a file size limit: EFBIG is not waited out,
docs/ARCHITECTURE.md "Disk full") while turn timers keep logging and a spectator reads
nothing: the stop is clean. Every client, the slow one too, gets `goodbye` then close 1011,
the process exits 1 with the sentence and no traceback. The crash this guards against (a
table that logged during the goodbye died of the writer's closed channel and escaped as a
traceback) is pinned down where it began by test_disk_full_log_writer.py; here the whole
stop is checked end to end. On the old code (hand_over without its BrokenResourceError
branch, tables that log after the writer failed) it fails about 3 runs in 4: a traceback
when a table's timer falls due inside the goodbye; it passes when every table's commit
was in the failed group (they wait for ever, logging nothing more)."""

from __future__ import annotations

import resource
import subprocess
import sys

import trio

from wildtable.headless.net import Connection, connect
from wildtable.headless.wire import ConnectionClosed
from wildtable.protocol import messages as m

from proc import LineReader
from serverkit import create, join, unread_spectator
from waitkit import wait_until

LIMIT = 2_500           # bytes a file of the server's may grow to: reached by the accepted draws
ABSENT_TABLES = 2       # Go Wild! tables whose turn timers log all through the goodbye
SLOW = 0.5              # seconds the slow reader reads nothing after the others are gone (the goodbye waits 1 s)


def _limit_file_size():
    resource.setrlimit(resource.RLIMIT_FSIZE, (LIMIT, LIMIT))


async def _to_the_end(conn) -> tuple[list, int | None]:
    """What ``conn`` (a Connection, or a bare WebSocket) reads until the server closes it,
    and the close code."""
    got = []
    try:
        while True:
            got.append(await conn.receive() if isinstance(conn, Connection) else m.decode(await conn.get_message()))
    except ConnectionClosed as e:
        return got, e.code


async def test_a_fatal_storage_error_says_goodbye_to_everyone_and_exits_without_a_traceback(tmp_path):
    data = tmp_path / "data"
    with trio.fail_after(60):
        proc = await trio.lowlevel.open_process(
            [sys.executable, "-m", "wildtable", "serve", "--port", "0", "--data-dir", str(data)],
            stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, preexec_fn=_limit_file_size)
        try:
            err = LineReader(proc.stderr, errors="replace")
            url = (await err.until(r"serving on (ws://\S+)", timeout=20)).group(1)
            ends: dict[str, tuple] = {}

            async def until_closed(name, conn):
                ends[name] = await _to_the_end(conn)

            async with (connect(url, "ann") as ann, connect(url, "bob") as bob, connect(url, "cat") as cat,
                        connect(url, "dan") as dan, connect(url, "eve") as eve):
                rw = await create(ann, "run-wild", 2)
                await join(ann, rw, 0)
                await join(bob, rw, 1)
                gw = await create(cat, "go-wild", 2, turn_timer=0.2)   # logs five moves a second
                await join(cat, gw, 0)
                await join(dan, gw, 1)
                await eve.send(m.Spectate(rw))
                await eve.receive_until(lambda x: isinstance(x, m.Spectating))
                fast = None
                for i in range(ABSENT_TABLES):
                    # tables whose players left at once: the timer plays every move for them,
                    # the first one fast (its slow spectator falls behind: the goodbye waits)
                    async with connect(url, f"p{i}") as p, connect(url, f"q{i}") as q:
                        t = await create(p, "go-wild", 2, turn_timer=0.02 if i == 0 else 0.25)
                        await join(p, t, 0)
                        await join(q, t, 1)
                    if i == 0:
                        fast = t
                async with unread_spectator(url, fast, "slow") as slow, trio.open_nursery() as n:
                    for name, c in (("bob", bob), ("cat", cat), ("dan", dan), ("eve", eve)):
                        n.start_soon(until_closed, name, c)
                    for i, c in enumerate((ann, bob)):
                        await c.send(m.Intent(i + 1, {"kind": "ready"}))
                    # ann draws until the log is at its limit; bob's intents keep coming too
                    intent = 10
                    seen: list = []
                    try:
                        while True:
                            for c in (ann, bob):
                                intent += 1
                                await c.send(m.Intent(intent, {"kind": "draw"}))
                            seen.append(await ann.receive_until(
                                lambda x: isinstance(x, (m.Accepted, m.Rejected, m.Goodbye)), keep=seen))
                    except (ConnectionClosed, trio.TooSlowError):
                        pass
                    # intents that reach a table during the goodbye: refusals are logged too
                    try:
                        for i in range(5):
                            await cat.send(m.Intent(100 + i, {"kind": "no-such-move"}))
                    except ConnectionClosed:
                        pass
                    rest, code = await _to_the_end(ann)
                    ends["ann"] = (seen + rest, code)
                    await wait_until(lambda: len(ends) == 5, what="every client but the slow one closed")
                    # the slow reader: it reads nothing for a while yet, so the goodbye stays
                    # open while the turn timers fall due (within the server's bounded wait);
                    # a wait for time, the point: nothing on its side says when a timer fell due
                    await trio.sleep(SLOW)
                    ends["slow"] = await _to_the_end(slow)
            async with trio.open_nursery() as n:
                n.start_soon(err.read_to_end)       # read as it comes: a full pipe would stall the server
                with trio.move_on_after(30):
                    await proc.wait()
                if proc.returncode is None:
                    n.cancel_scope.cancel()
            text = err.text
            assert proc.returncode is not None, "the server did not stop:\n" + text[-5000:]
            status = proc.returncode
        finally:
            if proc.returncode is None:
                proc.kill()
    assert "Traceback" not in text, text[-3000:]
    assert "wildtable serve: cannot write the table logs: File too large; stopped." in text, text[-3000:]
    assert status == 1, text[-3000:]
    for name, (got, code) in ends.items():
        said = [x for x in got if isinstance(x, m.Goodbye)]
        assert said and "cannot write the table logs" in said[0].reason, (name, got[-3:], code)
        assert code == 1011, (name, code)
