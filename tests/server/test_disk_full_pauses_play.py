"""`wildtable serve` on a data dir whose file system really fills mid-play (a small tmpfs),
at the default settings, with a Run Wild table in play, a slow spectator that reads
nothing, and a Go Wild! table whose turn timer plays for its players: play pauses (every
one at a table is told, intents are refused with `storage_full`, nothing is acknowledged,
a new table is refused), and once room is made the same process plays on by itself, with
nothing acknowledged lost and every log whole (docs/ARCHITECTURE.md "Disk full").
Found: the first write with no room stopped the server, and every table with it."""

from __future__ import annotations

import signal
import subprocess
import sys
from contextlib import asynccontextmanager

import trio

from wildtable.headless.net import connect
from wildtable.protocol import messages as m
from wildtable.protocol.logfmt import ActionAccepted, read_log
from wildtable.protocol.replay import replay

from proc import LineReader
from serverkit import create, join, unread_spectator
from smallfs import fill, small_filesystem
from waitkit import wait_until

PAD = "x" * 400     # a refused intent's action is logged whole up to 512 bytes: it grows the log


@asynccontextmanager
async def serving(data):
    """`wildtable serve` on ``data`` at the defaults: (process, its stderr, its URL); killed
    at the end if it is still running."""
    proc = await trio.lowlevel.open_process(
        [sys.executable, "-m", "wildtable", "serve", "--port", "0", "--data-dir", str(data)],
        stderr=subprocess.PIPE, stdout=subprocess.DEVNULL)
    try:
        err = LineReader(proc.stderr, errors="replace")
        yield proc, err, (await err.until(r"serving on (ws://\S+)", timeout=20)).group(1)
    finally:
        if proc.returncode is None:
            proc.kill()


async def _watcher(url, table, task_status=trio.TASK_STATUS_IGNORED):
    """A client that asks to spectate ``table``; what it reads goes to the list it starts with."""
    got: list = []
    async with connect(url, "fay") as fay:
        await fay.send(m.Spectate(table))
        task_status.started(got)
        while True:
            got.append((trio.current_time(), await fay.receive()))


async def test_a_full_disk_pauses_play_and_room_resumes_it_in_the_same_process(tmp_path):
    with small_filesystem(tmp_path / "fs", 8 << 20) as fs:
        data = fs / "data"
        with trio.fail_after(60):
            async with serving(data) as (proc, err, url):
                got: dict[str, list] = {}

                async def read(name, conn):
                    got[name] = box = []
                    while True:
                        box.append((trio.current_time(), await conn.receive()))

                def notices(name, code):
                    return [t for t, x in got[name] if isinstance(x, m.Notice) and x.code == code]

                async with (connect(url, "ann") as ann, connect(url, "bob") as bob, connect(url, "cat") as cat,
                            connect(url, "dan") as dan, connect(url, "eve") as eve):
                    rw = await create(ann, "run-wild", 2)
                    await join(ann, rw, 0)
                    await join(bob, rw, 1)
                    gw = await create(cat, "go-wild", 2, turn_timer=1.0)   # the timer plays for cat and dan
                    await join(cat, gw, 0)
                    await join(dan, gw, 1)
                    await eve.send(m.Spectate(rw))
                    await eve.receive_until(lambda x: isinstance(x, m.Spectating))
                    async with unread_spectator(url, rw, "slow"), trio.open_nursery() as n:
                        for name, c in (("ann", ann), ("bob", bob), ("cat", cat), ("dan", dan), ("eve", eve)):
                            n.start_soon(read, name, c)
                        for i, c in enumerate((ann, bob)):
                            await c.send(m.Intent(i + 1, {"kind": "ready"}))
                        filler = fill(fs)
                        # play on (draws, refusals that are logged) until the disk is full: each
                        # round of four intents is answered (or play pauses) before the next
                        intent = 10

                        def answered(who, i):
                            return [x for _, x in got[who] if getattr(x, "intent", None) == i]
                        while not notices("ann", "storage_full"):
                            for c in (ann, bob):
                                intent += 1
                                await c.send(m.Intent(intent, {"kind": "draw"}))
                                intent += 1
                                await c.send(m.Intent(intent, {"kind": "draw", "pad": PAD}))
                            await wait_until(lambda: notices("ann", "storage_full") or answered("bob", intent),
                                             what=f"an answer to intent {intent}, or storage_full")
                        paused_at = trio.current_time()
                        # everyone at a table is told, at once
                        for name in ("bob", "cat", "dan", "eve"):
                            await wait_until(lambda: notices(name, "storage_full"), what=f"{name} told storage_full")
                        # intents are refused, saying why; a new table is refused too
                        await ann.send(m.Intent(1000, {"kind": "draw"}))
                        (refused,) = await wait_until(lambda: answered("ann", 1000), what="an answer to intent 1000")
                        assert isinstance(refused, m.Rejected), refused
                        assert refused.code == "storage_full" and "resumes by itself" in refused.reason, refused
                        await bob.send(m.CreateTable("run-wild", 2, {}))
                        await wait_until(lambda: [x for _, x in got["bob"] if isinstance(x, m.Error)
                                                  and x.code == "storage_full"], what="create_table refused: storage_full")
                        # one who comes to watch is told at once, and answered once play resumes
                        fay = await n.start(_watcher, url, gw)
                        await wait_until(lambda: [x for _, x in fay if isinstance(x, m.Notice)], what="fay told of the pause")
                        assert not [x for _, x in fay if isinstance(x, m.Spectating)], fay
                        # the turn timer does not play while paused (it restarts after): not a
                        # condition but the point, longer than the 1 s timer; any update in this
                        # time fails the "nothing shown while paused" check below
                        await trio.sleep(1.5)
                        assert proc.returncode is None
                        room_at = trio.current_time()
                        filler.unlink()
                        for name in ("ann", "bob", "cat", "dan", "eve"):
                            await wait_until(lambda: notices(name, "storage_resumed"), what=f"{name} told storage_resumed")
                            assert notices(name, "storage_resumed")[0] - room_at < 5.0
                        await wait_until(lambda: [x for _, x in fay if isinstance(x, m.Spectating)], what="fay spectating")
                        # play goes on: the timer plays again, an intent is answered as ever
                        resumed_at = max(notices("cat", "storage_resumed"))
                        await wait_until(lambda: [x for t, x in got["cat"] if isinstance(x, m.Update) and t > resumed_at],
                                         what="the turn timer playing after play resumed")
                        await ann.send(m.Intent(2000, {"kind": "draw"}))
                        (answer,) = await wait_until(lambda: answered("ann", 2000), what="an answer to intent 2000")
                        assert not isinstance(answer, m.Rejected) or answer.code != "storage_full", answer
                        n.cancel_scope.cancel()
                # nothing was acknowledged nor shown while paused
                for name in got:
                    began = min(notices(name, "storage_full"))
                    ended = min(notices(name, "storage_resumed"))
                    during = [x for t, x in got[name] if began < t < ended
                              and isinstance(x, (m.Accepted, m.Update, m.Joined, m.Spectating))]
                    assert not during, (name, during[:3])
                assert paused_at < room_at
                proc.send_signal(signal.SIGTERM)
                assert await proc.wait() == 0
                text = await err.read_to_end()
        assert "Traceback" not in text, text[-3000:]
        # the operator is told once when it began and once when it ended, not per table or retry
        assert text.count("disk of the table logs is full") == 1 and text.count("has room again") == 1, text[-3000:]
        assert "cannot create a table's log" not in text, text[-3000:]
        # nothing acknowledged lost, every log whole and verified
        for table, names in ((rw, ("ann", "bob")), (gw, ("cat", "dan"))):
            contents = read_log((data / f"{table}.wlog").read_bytes())
            replay(contents)
            logged = {r.seq for r in contents.records if isinstance(r, ActionAccepted)}
            acked = {x.seq for name in names for _, x in got[name] if isinstance(x, m.Accepted)}
            assert acked <= logged, sorted(acked - logged)[:10]


async def test_a_server_stopped_while_its_disk_is_full_stops_cleanly_and_its_logs_verify(tmp_path):
    """SIGTERM while paused: the group that waits for room was never acknowledged and is
    given up, nothing after it is written (no gap in a log), the players get `goodbye`,
    and the process exits 0 saying how many commits were not written."""
    with small_filesystem(tmp_path / "fs", 8 << 20) as fs:
        data = fs / "data"
        with trio.fail_after(60):
            async with serving(data) as (proc, err, url):
                acked: list[int] = []
                async with connect(url, "ann") as ann, connect(url, "bob") as bob:
                    rw = await create(ann, "run-wild", 2)
                    await join(ann, rw, 0)
                    await join(bob, rw, 1)
                    for i, c in enumerate((ann, bob)):
                        await c.send(m.Intent(i + 1, {"kind": "ready"}))
                    fill(fs)
                    intent, paused = 10, False
                    while not paused:
                        intent += 1
                        await ann.send(m.Intent(intent, {"kind": "draw", "pad": PAD} if intent % 2 else {"kind": "draw"}))
                        x = await ann.receive_until(lambda x: isinstance(x, (m.Accepted, m.Rejected, m.Notice)))
                        if isinstance(x, m.Accepted):
                            acked.append(x.seq)
                        paused = isinstance(x, m.Notice) and x.code == "storage_full"
                    proc.send_signal(signal.SIGTERM)
                    said = await ann.receive_until(lambda x: isinstance(x, m.Goodbye))
                    assert "stopping" in said.reason, said
                assert await proc.wait() == 0
                text = await err.read_to_end()
        assert "Traceback" not in text, text[-3000:]
        assert "stopping while the disk is full" in text and "not written" in text, text[-3000:]
        contents = read_log((data / f"{rw}.wlog").read_bytes())
        replay(contents)
        assert acked and set(acked) <= {r.seq for r in contents.records if isinstance(r, ActionAccepted)}
