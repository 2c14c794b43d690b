"""`wildtable serve` as a real subprocess: it logs where it listens, and SIGTERM / Ctrl-C
stop it cleanly: clients hear goodbye, logs are flushed, exit code 0."""

from __future__ import annotations

import signal
import subprocess
import sys

import pytest
import trio

from wildtable.headless.net import connect
from wildtable.protocol import messages as m
from wildtable.protocol.logfmt import read_log

from proc import LineReader


async def start_server(data_dir, *extra):
    """The process, its url, and a reader of its stderr (the log)."""
    proc = await trio.lowlevel.open_process(
        [sys.executable, "-m", "wildtable", "serve", "--port", "0", "--data-dir", str(data_dir), *extra],
        stderr=subprocess.PIPE, stdout=subprocess.DEVNULL)
    err = LineReader(proc.stderr, errors="replace")
    found = await err.until(r"serving on (ws://\S+)", timeout=20)
    return proc, found.group(1), err


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
async def test_signal_stops_server_cleanly(tmp_path, sig):
    with trio.fail_after(60):
        proc, url, err = await start_server(tmp_path / "data")
        async with connect(url, "ann") as c:
            await c.send(m.CreateTable("run-wild", 2, {}))
            created = await c.receive_until(lambda x: isinstance(x, m.TableCreated))
            await c.send(m.Join(created.table, 0))
            await c.receive_until(lambda x: isinstance(x, m.Joined))
            proc.send_signal(sig)
            bye = await c.receive_until(lambda x: isinstance(x, m.Goodbye))
            assert "stopping" in bye.reason
        with trio.fail_after(10):
            await proc.wait()
        log = await err.read_to_end()
        assert proc.returncode == 0, log
        assert "flushed" in log
        contents = read_log((tmp_path / "data" / f"{created.table}.wlog").read_bytes())
        assert contents.torn is None
        assert any(type(r).__name__ == "SeatClaimed" for r in contents.records)
        # started again on the same data dir, it recovers the unfinished table
        proc2, url2, err2 = await start_server(tmp_path / "data")
        try:
            async with connect(url2, "bob") as c:
                await c.send(m.ListTables())
                lst = await c.receive_until(lambda x: isinstance(x, m.TableList))
                assert [t["table"] for t in lst.tables] == [created.table]
        finally:
            proc2.send_signal(signal.SIGTERM)
            await proc2.wait()
        assert "recovered 1 unfinished table" in await err2.read_to_end()


async def test_port_in_use_is_a_clear_error(tmp_path):
    with trio.fail_after(30):
        proc, url, err = await start_server(tmp_path / "a")
        port = url.rsplit(":", 1)[1]
        try:
            other = subprocess.run([sys.executable, "-m", "wildtable", "serve", "--port", port, "--data-dir",
                                    str(tmp_path / "b")], capture_output=True, text=True, timeout=20)
            assert other.returncode == 1
            assert "cannot listen" in other.stderr
        finally:
            proc.send_signal(signal.SIGTERM)
            await proc.wait()


@pytest.mark.parametrize("value", ["-1", "nan"])
def test_keep_finished_must_be_seconds(tmp_path, value):
    done = subprocess.run([sys.executable, "-m", "wildtable", "serve", "--port", "0", "--data-dir",
                           str(tmp_path / "d"), "--keep-finished", value], capture_output=True, text=True, timeout=20)
    assert done.returncode == 2, done
    assert done.stderr.strip() == "wildtable serve: --keep-finished wants seconds, 0 or more", done.stderr
    assert not (tmp_path / "d").exists()          # nothing started
