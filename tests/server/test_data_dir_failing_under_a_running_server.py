"""The data dir failing under a running server (removed, unwritable): one request fails
with a readable error, and the server, its tables and its other connections go on."""

from __future__ import annotations

import shutil
import subprocess

import pytest
import trio

from wildtable.headless.net import connect
from wildtable.protocol import messages as m
from wildtable.server.datadir import LOCK_NAME
from wildtable.server.health import PROBE_NAME

from serverkit import answer, create, info, join, played_out_and_left, running_server, server_config
from waitkit import wait_until


async def test_create_table_when_the_log_cannot_be_made_is_an_error_not_a_crash(tmp_path):
    """Found: an OSError making a new table's log (the data dir gone, a full disk, no
    permission) escaped the connection's reader and stopped the whole server: every
    table and every connection with it."""
    data = tmp_path / "data"
    with trio.fail_after(20):
        async with running_server(data) as (server, url):
            async with connect(url, "ann") as ann, connect(url, "bob") as bob:
                table = await create(ann, "run-wild", 2)
                await join(ann, table, 0)
                shutil.move(data, tmp_path / "elsewhere")       # the data dir vanishes
                await bob.send(m.CreateTable("run-wild", 2, {}))
                e = await answer(bob)
                assert isinstance(e, m.Error) and e.code == "storage_error", e
                assert "log" in e.message and e.ref == "create_table"
                # the server goes on: the same connection, another one, the open table
                assert (await info(bob, table))["status"] == "waiting"
                await ann.send(m.ListTables())
                assert isinstance(await ann.receive_until(lambda x: isinstance(x, m.TableList)), m.TableList)
                assert server._creating.total == 0 and not server._creating.by_address
                shutil.move(tmp_path / "elsewhere", data)
                assert await create(bob, "run-wild", 2) != table


async def test_an_unwritable_data_dir_leaves_no_headless_log_and_forgets_tables_in_place(tmp_path):
    """An immutable data dir (chattr +i: root too may not add, remove or rename files):
    create_table fails cleanly; a finished table is still forgotten, its log left where
    it is (the move is refused with a warning), and a request for it is answered."""
    data = tmp_path / "data"
    data.mkdir()
    if shutil.which("chattr") is None or subprocess.run(["chattr", "+i", str(data)], capture_output=True).returncode:
        pytest.skip("chattr +i is not available here")
    subprocess.run(["chattr", "-i", str(data)], check=True)
    try:
        with trio.fail_after(20):
            async with running_server(server_config(data, keep_finished=0)) as (server, url):
                async with connect(url, "ann") as ann, connect(url, "bob") as bob:
                    table = await create(ann, "go-wild", 2, turn_timer=0.01, target=1)
                    subprocess.run(["chattr", "+i", str(data)], check=True)
                    await played_out_and_left([ann, bob], table)
                    await wait_until(lambda: table not in server.tables, what=f"table {table} forgotten")
                    await ann.send(m.CreateTable("go-wild", 2, {}))
                    e = await answer(ann)
                    assert isinstance(e, m.Error) and e.code == "storage_error", e
                    await bob.send(m.Spectate(table))
                    e = await answer(bob)
                    assert isinstance(e, m.Error) and e.code == "no_such_table", e
            # the health probe's small file may be there too: made just before the dir
            # became immutable, it could not be removed (it is the only file the probe
            # writes; recovery reads only *.wlog, and the next probe there removes it)
            left = sorted(p.name for p in data.iterdir() if p.name != PROBE_NAME)
            assert left == sorted([f"{table}.wlog", LOCK_NAME])
    finally:
        subprocess.run(["chattr", "-i", str(data)])
