"""Open log files are bounded. Found: each table held its log open, so a restarted server
with 1,000 tables used 1,011 of its 1,024 file handles; then clients could not connect
and EMFILE tracebacks filled the log. Now idle and finished tables close their logs (the
log writer opens one again for its next record, at most `--max-open-logs` at once), and
`wildtable serve` raises its soft open-file limit toward the hard one, and refuses caps
that the limit cannot hold."""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import trio

from wildtable.headless.net import connect
from wildtable.protocol import messages as m
from wildtable.protocol.logfmt import (
    FORMAT_VERSION, ActionAccepted, Header, SeatClaimed, encode_record, read_log,
)
from wildtable.server.logwriter import LOG_IDLE
from wildtable.server.table import token_hash

from hostilekit import steady_player_process
from mockclockkit import OneThreadWorld
from proc import LineReader
from serverkit import create, read_into, ready_all, reply_to, running_server, seated, server_config
from waitkit import wait_until

pytestmark = pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="counts file handles in /proc")

WAITING, PLAYING = 300, 200      # tables in the data dir, beside a limit of 256 handles


def _nofile(soft: int, hard: int):
    def limit():
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    return limit


def _fill(data: Path) -> list[str]:
    """WAITING tables waiting for players and PLAYING tables with every seat held (dealt
    at start, so written to); the ids of those in play (seat i's token: "tok<i>")."""
    data.mkdir(mode=0o700)
    playing = []
    for i in range(WAITING + PLAYING):
        tid = f"t{i:04d}"
        out = [encode_record(Header(FORMAT_VERSION, "run-wild", tid, 2, {}))]
        if i >= WAITING:
            out += [encode_record(SeatClaimed(s, f"p{s}", token_hash(f"tok{s}"))) for s in range(2)]
            playing.append(tid)
        (data / f"{tid}.wlog").write_bytes(b"".join(out))
    return playing


def _open_logs(pid: int) -> int:
    n = 0
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            n += os.readlink(fd).endswith(".wlog")
        except OSError:
            pass        # closed meanwhile
    return n


async def _serve(data: Path, *extra, limit=(256, 256)):
    proc = await trio.lowlevel.open_process(
        [sys.executable, "-m", "wildtable", "serve", "--port", "0", "--data-dir", str(data), *extra],
        stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, preexec_fn=_nofile(*limit))
    return proc, LineReader(proc.stderr, errors="replace")


async def test_under_ulimit_256_a_server_holding_500_tables_lets_clients_connect_and_play(tmp_path):
    data = tmp_path / "data"
    playing = _fill(data)
    with trio.fail_after(120):
        proc, err = await _serve(data, "--max-connections", "60", "--max-open-logs", "16",
                                 "--max-waiting-per-address", "0", "--max-per-address", "0")
        try:
            url = (await err.until(r"serving on (ws://\S+)", timeout=60)).group(1)
            async with trio.open_nursery() as bg:
                bg.start_soon(err.read_to_end)           # the rest of the log, as it comes
                most = 0
                # a well-behaved player at a table of its own plays on throughout, p99 < 50 ms
                async with steady_player_process(url), trio.open_nursery() as n:     # 50 clients at once, each at a table in play
                    async def player(k: int):
                        nonlocal most
                        tid, seat = playing[k // 2], k % 2
                        async with connect(url, f"p{k}") as c:
                            await c.send(m.Rejoin(tid, seat, f"tok{seat}"))
                            j = await c.receive_until(lambda x: isinstance(x, (m.Joined, m.Error)))
                            assert isinstance(j, m.Joined), j
                            await c.send(m.Intent(1, {"kind": "ready"}))
                            assert isinstance(await reply_to(c, 1), m.Accepted)
                            most = max(most, _open_logs(proc.pid))
                    for k in range(50):
                        n.start_soon(player, k)
                # and a new table is created, played at, and listed
                async with seated(url, "run-wild", 2) as (table, conns, _):
                    await ready_all(conns)
                    most = max(most, _open_logs(proc.pid))
                    await conns[0].send(m.ListTables())
                    lst = await conns[0].receive_until(lambda x: isinstance(x, m.TableList))
                    assert table in [t["table"] for t in lst.tables]
                assert len(list(Path(f"/proc/{proc.pid}/fd").iterdir())) < 256
                assert most <= 16, most
                proc.send_signal(signal.SIGTERM)
                assert await proc.wait() == 0
        finally:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
    text = err.text
    assert "Too many open files" not in text and "Traceback" not in text, text[-3000:]
    assert f"recovered {PLAYING + WAITING} unfinished table(s)" in text, text[-3000:]
    # every acknowledged ready is in its table's log
    for tid in playing[:25]:
        readies = [r for r in read_log((data / f"{tid}.wlog").read_bytes()).records
                   if type(r) is ActionAccepted and r.action == {"kind": "ready"}]
        assert len(readies) == 2, tid


async def test_caps_the_open_file_limit_cannot_hold_are_refused(tmp_path):
    with trio.fail_after(30):
        proc, err = await _serve(tmp_path / "d", "--max-connections", "5000")
        assert await proc.wait() == 2
    text = (await err.read_to_end()).strip()
    assert text.startswith("wildtable serve: the open-file limit (ulimit -n) is 256, too low for "
                           "--max-connections 5000"), text
    assert "lower --max-connections or --max-open-logs, or raise the limit" in text, text
    assert len(text.splitlines()) == 1, text
    assert not (tmp_path / "d").exists()          # nothing started


async def test_default_caps_are_lowered_to_what_the_limit_holds(tmp_path):
    with trio.fail_after(30):
        proc, err = await _serve(tmp_path / "d")
        try:
            hit = await err.until(r"open-file limit \(ulimit -n\) is 256: serving at most (\d+) connections "
                                  r"with at most (\d+) log files open", timeout=20)
            conns, logs = int(hit.group(1)), int(hit.group(2))
            assert conns >= 1 and logs >= 1 and conns + logs < 256
            url = (await err.until(r"serving on (ws://\S+)", timeout=20)).group(1)
            async with connect(url, "ann") as ann:
                await create(ann, "go-wild", 2)
        finally:
            proc.send_signal(signal.SIGTERM)
            await proc.wait()
        assert proc.returncode == 0


async def test_the_soft_limit_is_raised_to_the_hard_one(tmp_path):
    with trio.fail_after(30):
        proc, err = await _serve(tmp_path / "d", limit=(256, 8192))
        try:
            await err.until(r"serving on", timeout=20)
            limits = Path(f"/proc/{proc.pid}/limits").read_text()
            (line,) = [x for x in limits.splitlines() if x.startswith("Max open files")]
            assert line.split()[3:5] == ["8192", "8192"], line
            assert "open-file limit" not in err.text        # no warning: the defaults fit
        finally:
            proc.send_signal(signal.SIGTERM)
            await proc.wait()


async def test_finished_and_idle_tables_close_their_logs_and_reopen_them_to_write(tmp_path):
    """In process: at most max_open_logs files open while eight tables play at once; a
    finished game's file is closed; durability is unchanged (every acknowledged action is
    in the log once it is acknowledged)."""
    me = os.getpid()
    with trio.fail_after(60):
        async with running_server(server_config(tmp_path / "data", max_open_logs=3)) as (server, url):
            assert _open_logs(me) == 0
            most = 0
            async with trio.open_nursery() as n:
                async def table(k: int):
                    nonlocal most
                    async with seated(url, "run-wild", 2) as (tid, conns, _):
                        await ready_all(conns)
                        path = server.tables[tid].logfile.path
                        for i in range(20):
                            await conns[0].send(m.Intent(i, {"kind": "draw"}))
                            a = await reply_to(conns[0], i)
                            if isinstance(a, m.Accepted):
                                # told, so in the log already (durability always)
                                logged = {r.seq for r in read_log(path.read_bytes()).records
                                          if type(r) is ActionAccepted}
                                assert a.seq in logged
                            most = max(most, _open_logs(me))
                for k in range(8):
                    n.start_soon(table, k)
            assert most <= 3, most
            assert server.writer.opens > 3          # files were closed and opened again
            # a game played out: its file is closed
            async with seated(url, "go-wild", 2, {"turn_timer": 0.01, "target": 1}) as (tid, conns, _):
                await conns[0].receive_until(lambda x: isinstance(x, m.GameOver), timeout=10)
                t = server.tables[tid]
                # readonly holds once the table's close has returned (server/table.py): the
                # writer closes the fd first, and the table's task hears of it when it next
                # runs, which on a loaded machine can be well after
                await wait_until(lambda: t.readonly, what="the finished table's log closed for good",
                                 show=lambda: (t.logfile.fd, t.core.finished))
                assert t.logfile.fd < 0


async def test_an_idle_table_closes_its_log_and_opens_it_again_for_its_next_record(tmp_path):
    me = os.getpid()
    with trio.fail_after(30):
        async with running_server(tmp_path / "data") as (server, url):
            server.writer.idle = 0.2          # (LOG_IDLE, 60 s, in production)
            async with seated(url, "run-wild", 2) as (tid, conns, _):
                t = server.tables[tid]
                await wait_until(lambda: t.logfile.fd < 0 and not _open_logs(me),
                                 what='nothing written for a while: closed')
                opens = server.writer.opens
                await ready_all(conns)          # told, so in the log (durability always)
                readies = [r for r in read_log(t.logfile.path.read_bytes()).records
                           if type(r) is ActionAccepted and r.action == {"kind": "ready"}]
                assert len(readies) == 2
                assert server.writer.opens > opens          # opened again to write them


async def test_an_idle_log_is_closed_at_the_default_and_opened_again(tmp_path, autojump_clock):
    """As above at the default (LOG_IDLE, 60 s), on trio's mock clock with the log writer
    in the task (OneThreadWorld): open 59 s after the table's last write, closed at 60 s,
    opened again for the next record. Run Wild with the ready timer off: nothing is
    written while the two players wait (reading, so that they answer pings)."""
    async with running_server(server_config(tmp_path / "data"), world=OneThreadWorld()) as (server, url):
        assert server.writer.idle == LOG_IDLE == 60.0
        async with seated(url, "run-wild", 2, {"ready_timeout": 0}) as (tid, conns, _), trio.open_nursery() as n:
            heard: list[list] = [[], []]
            for c, into in zip(conns, heard):
                n.start_soon(read_into, c, into)
            t = server.tables[tid]
            written = t.logfile.last_write          # the deal's records, on trio's clock
            assert t.logfile.fd >= 0
            await trio.sleep_until(written + LOG_IDLE - 1)
            assert t.logfile.fd >= 0, "closed before LOG_IDLE"
            await wait_until(lambda: t.logfile.fd < 0, step=0.01, timeout=2, what="closed at LOG_IDLE")
            assert written + LOG_IDLE <= trio.current_time() <= written + LOG_IDLE + 0.05
            opens = server.writer.opens
            for i, c in enumerate(conns):
                await c.send(m.Intent(900 + i, {"kind": "ready"}))
            await wait_until(lambda: all(answers_of(h) for h in heard), step=0.01, what="both readies answered")
            assert [type(answers_of(h)[0]) for h in heard] == [m.Accepted, m.Accepted], heard
            readies = [r for r in read_log(t.logfile.path.read_bytes()).records
                       if type(r) is ActionAccepted and r.action == {"kind": "ready"}]
            assert len(readies) == 2 and server.writer.opens == opens + 1
            n.cancel_scope.cancel()


def answers_of(heard: list) -> list:
    return [x for _, x in heard if isinstance(x, (m.Accepted, m.Rejected))]
