"""The logs hold every shuffle, so they are as secret as the hands: the data dir is made
0700 (narrowed, with a warning, if it is open to others), every log 0600 (one found
readable by others is narrowed at start, with a warning), and finished/ and expired/ 0700."""

from __future__ import annotations

import logging
import os
import stat

import trio

from wildtable.headless.net import connect
from wildtable.protocol import messages as m

from serverkit import at_a_new_table, create, join, running_server, server_config
from waitkit import wait_until


def mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


async def test_a_new_data_dir_is_0700_and_its_logs_0600(tmp_path):
    data = tmp_path / "deep" / "data"
    old = os.umask(0o022)            # the usual umask: files 0644 and dirs 0755 unless asked
    try:
        with trio.fail_after(30):
            async with running_server(server_config(data, waiting_expiry=0.2, keep_finished=0)) as (server, url):
                assert mode(data) == 0o700
                async with connect(url, "ann") as ann, connect(url, "bob") as bob:
                    waiting = await create(ann, "run-wild", 2)
                    assert mode(data / f"{waiting}.wlog") == 0o600
                    # (a table nobody is at expires 0.2 s after its creation: at_a_new_table)
                    played, _, _ = await at_a_new_table(
                        ann, lambda: create(ann, "go-wild", 2, turn_timer=0.01, target=1), lambda t: m.Join(t, 0))
                    await join(bob, played, 1)
                    await ann.receive_until(lambda x: isinstance(x, m.GameOver), timeout=10)
                await wait_until(lambda: waiting not in server.tables and played not in server.tables and not server._moving,
                                 what="both tables forgotten, their logs moved")
        assert mode(data / "expired") == 0o700 and mode(data / "finished") == 0o700
        assert mode(data / "expired" / f"{waiting}.wlog") == 0o600
        assert mode(data / "finished" / f"{played}.wlog") == 0o600
    finally:
        os.umask(old)


async def test_a_data_dir_and_logs_open_to_others_are_narrowed_with_a_warning(tmp_path, caplog):
    data = tmp_path / "data"
    with trio.fail_after(30):
        async with running_server(data) as (server, url):
            async with connect(url, "ann") as ann:
                table = await create(ann, "run-wild", 2)
        os.chmod(data, 0o755)
        os.chmod(data / f"{table}.wlog", 0o644)
        caplog.set_level(logging.WARNING, logger="wildtable")
        async with running_server(data) as (server, url):
            assert table in server.tables
            assert mode(data) == 0o700 and mode(data / f"{table}.wlog") == 0o600
    warned = "\n".join(r.getMessage() for r in caplog.records)
    assert "open to other users (mode 0755); narrowed to 0700" in warned, warned
    assert f"1 log(s) could be read by other users ({table}.wlog); made readable by the owner only" in warned, warned
