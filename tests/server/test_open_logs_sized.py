"""Open log files sized to the tables in play (issue #25). Found: at 1,000 tables in play
the --max-open-logs default of 256 made nearly every commit close one table's file and
open another's (49,982 opens in 45 s). Now the default is one file per table that may be
in play (--max-tables), lowered only when the open-file limit cannot hold it."""

from __future__ import annotations

import argparse
import resource
import signal
import subprocess
import sys

import pytest
import trio

from wildtable.server.logwriter import LogFile, LogWriter
from wildtable.server.main import MAX_CONNECTIONS, default_open_logs, file_budget, fit_caps

from proc import LineReader

TABLES = 1000       # wildtable serve --max-tables, at its default


def test_the_default_holds_every_table_in_play():
    assert default_open_logs(TABLES) >= TABLES
    # the limit holds the defaults: nothing is lowered
    assert fit_caps(MAX_CONNECTIONS, default_open_logs(TABLES), conns_given=False, logs_given=False,
                    fixed=160, soft=8192) == (MAX_CONNECTIONS, TABLES)


def test_a_low_limit_lowers_only_the_caps_left_at_their_defaults():
    # 10,000 connections given and 100,000 tables: the logs get what the connections leave
    assert fit_caps(10_000, default_open_logs(100_000), conns_given=True, logs_given=False,
                    fixed=160, soft=20_000) == (10_000, 20_000 - 160 - 10_000)
    # both at their defaults under 1,024: an eighth of the room for the logs
    assert fit_caps(MAX_CONNECTIONS, TABLES, conns_given=False, logs_given=False, fixed=160,
                    soft=1024) == (1024 - 160 - 108, 108)
    # given caps the limit cannot hold are refused, not lowered
    assert fit_caps(5000, 300, conns_given=True, logs_given=True, fixed=160, soft=1024) is None


def test_file_budget_reads_max_tables():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < MAX_CONNECTIONS + TABLES + 200:
        pytest.skip(f"the hard open-file limit here ({hard}) cannot hold the defaults")
    args = argparse.Namespace(max_connections=None, max_open_logs=None, max_tables=TABLES, max_handshakes=128)
    assert file_budget(args) == (MAX_CONNECTIONS, TABLES)


async def test_a_thousand_tables_in_play_open_each_file_once(tmp_path):
    """At the default cap for --max-tables 1000, every table committing in turn (round
    robin, the worst order for a least-recently-written cache) opens each file once."""
    logs = []
    for i in range(TABLES):
        path = tmp_path / f"t{i:04d}.wlog"
        path.write_bytes(b"x")
        logs.append(LogFile(path, -1, 1))
    writer = LogWriter("batch", max_open=default_open_logs(TABLES))
    with trio.fail_after(60):
        async with trio.open_nursery() as n:
            await n.start(writer.run)
            for _ in range(3):
                for log in logs:
                    await writer.commit(log, b"r")
            writer.close()
    assert writer.opens == TABLES, writer.opens
    assert all(log.path.read_bytes() == b"xrrr" for log in logs)


async def test_serve_at_its_defaults_opens_a_file_for_each_table(tmp_path):
    """The real server under a hard limit of 8,192 (the soft one raised to it): 5,000
    connections and 1,000 log files, no warning."""
    def limit():
        resource.setrlimit(resource.RLIMIT_NOFILE, (256, 8192))
    with trio.fail_after(30):
        proc = await trio.lowlevel.open_process(
            [sys.executable, "-m", "wildtable", "serve", "--port", "0", "--data-dir", str(tmp_path / "d")],
            stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, preexec_fn=limit)
        err = LineReader(proc.stderr, errors="replace")
        try:
            # said once it serves, after its "serving on" line
            await err.until(r"serving on", timeout=20)
            await err.until(r"at most 5000 connections and 1000 log files open at once", timeout=20)
            assert "open-file limit" not in err.text
        finally:
            proc.send_signal(signal.SIGTERM)
            await proc.wait()
        assert proc.returncode == 0


