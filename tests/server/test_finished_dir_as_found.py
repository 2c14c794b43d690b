"""The finished/ directory as it may be found: already holding a log of the same name,
or not a directory at all. Moving a log there must never destroy anything, and the
server must go on."""

from __future__ import annotations

import os

import trio

from wildtable.headless.net import connect
from wildtable.protocol import messages as m

from serverkit import answer, create, join, running_server, server_config
from waitkit import wait_until

FAST = {"turn_timer": 0.01, "target": 1}


async def play_out(url) -> str:
    async with connect(url, "ann") as ann, connect(url, "bob") as bob:
        table = await create(ann, "go-wild", 2, **FAST)
        await join(ann, table, 0)
        await join(bob, table, 1)
        await ann.receive_until(lambda x: isinstance(x, m.GameOver), timeout=8)
    return table


async def refused_moves(caplog, count: int) -> None:
    """Until the server has said ``count`` times that it would not move a log into
    finished/ (the move runs in a thread: the table is forgotten before it is tried)."""
    said = "cannot move the table's log to finished/"
    await wait_until(lambda: sum(said in r.getMessage() for r in caplog.records) >= count, timeout=10,
                     what=f"the server saying {count} time(s) {said!r}")


async def test_a_log_already_in_finished_is_never_overwritten(tmp_path, caplog):
    """Found: os.rename replaced a log of the same name already in finished/ (one put
    back by hand, say), silently destroying it. Now the move is refused with a warning
    and the log stays where it is."""
    data = tmp_path / "data"
    with trio.fail_after(20):
        async with running_server(data) as (server, url):
            table = await play_out(url)
        mine = data / f"{table}.wlog"
        before = mine.read_bytes()
        other = data / "finished" / f"{table}.wlog"
        other.parent.mkdir()
        other.write_bytes(b"another log, kept here by hand")
        os.utime(mine, (1, 1))                  # finished long ago: start-up would move it
        async with running_server(server_config(data, keep_finished=60)) as (server, url):
            await refused_moves(caplog, 1)
            assert other.read_bytes() == b"another log, kept here by hand"
            assert mine.read_bytes() == before
        # a table forgotten at run time is not moved over it either
        os.utime(mine)
        async with running_server(server_config(data, keep_finished=0.5)) as (server, url):
            assert server.tables[table].readonly
            await refused_moves(caplog, 2)
        assert other.read_bytes() == b"another log, kept here by hand"
        assert mine.read_bytes() == before


async def test_finished_being_a_file_leaves_logs_in_place_and_the_server_serving(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    (data / "finished").write_bytes(b"not a directory")
    with trio.fail_after(20):
        async with running_server(server_config(data, keep_finished=0)) as (server, url):
            table = await play_out(url)
            await wait_until(lambda: table not in server.tables, timeout=5, what=f"table {table} forgotten")
            async with connect(url, "wes") as wes:
                await wes.send(m.Spectate(table))
                e = await answer(wes)
                assert isinstance(e, m.Error) and e.code == "no_such_table", e
                assert await create(wes, "go-wild", 2) != table
        assert (data / f"{table}.wlog").exists()
        assert (data / "finished").read_bytes() == b"not a directory"
