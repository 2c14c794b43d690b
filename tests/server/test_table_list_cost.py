"""list_tables stays cheap whatever the table count. Found: every list_tables rebuilt and
encoded every table's entry, so a flood of them from one connection cost O(tables) each.
Now the answer is encoded once per change and the same bytes are sent until a lobby fact
changes (a table created or forgotten, a seat taken, released, connected or dropped, a
spectator come or gone, a game started or over); seqs alone refresh it at most every
``list_refresh`` seconds."""

from __future__ import annotations

import math
import time

import trio

from wildtable.headless.net import connect
from wildtable.protocol import messages as m
from wildtable.server.config import LIST_REFRESH

from mockclockkit import OneThreadWorld
from serverkit import answer, create, join, running_server, server_config

TABLES = 300
FLOOD = 500


async def _list(conn) -> m.TableList:
    await conn.send(m.ListTables())
    return await conn.receive_until(lambda x: isinstance(x, m.TableList))


async def test_a_flood_of_list_tables_builds_the_answer_once(tmp_path):
    with trio.fail_after(60):
        async with running_server(server_config(tmp_path / "data", list_refresh=math.inf)) as (server, url):
            async with connect(url, "maker") as maker, connect(url, "flood") as flood:
                tables = [await create(maker, "run-wild", 2, rounds=1 + i % 5) for i in range(TABLES)]
                first = await _list(flood)
                assert [t["table"] for t in first.tables] == tables
                # the cached answer is exactly what encoding every entry afresh gives
                assert first == m.TableList(tuple(server.tables[t].info() for t in tables))
                builds = server.list_builds
                began = time.perf_counter()
                for _ in range(FLOOD // 10):        # ten at a time (more would be a slow consumer)
                    for _ in range(10):
                        await flood.send(m.ListTables())
                    for _ in range(10):
                        assert await flood.receive_until(lambda x: isinstance(x, m.TableList)) == first
                took = time.perf_counter() - began
                assert server.list_builds == builds, "list_tables was built again with nothing changed"
                print(f"\n{FLOOD} list_tables of {TABLES} tables: {took / FLOOD * 1e6:.0f} us each, round trip")


async def test_every_lobby_change_shows_in_the_next_list(tmp_path):
    with trio.fail_after(30):
        async with running_server(server_config(tmp_path / "data", list_refresh=math.inf)) as (server, url):
            async with connect(url, "ann") as ann, connect(url, "bob") as bob, connect(url, "wes") as wes:
                t = await create(ann, "run-wild", 2)
                (e,) = (await _list(wes)).tables
                assert e["status"] == "waiting" and e["players"] == [None, None]
                await join(ann, t, 0)
                (e,) = (await _list(wes)).tables
                assert e["players"] == ["ann", None] and e["connected"] == [True, False]
                await wes.send(m.Spectate(t))
                assert isinstance(await answer(wes), m.Spectating)
                assert (await _list(wes)).tables[0]["spectators"] == 1
                await wes.send(m.Leave())
                assert isinstance(await answer(wes), m.Left)
                assert (await _list(wes)).tables[0]["spectators"] == 0
                await join(bob, t, 1)
                (e,) = (await _list(wes)).tables
                assert e["status"] == "playing" and e["players"] == ["ann", "bob"], e
                await bob.close()
                while server.tables[t].seats[1].conn is not None:
                    await trio.sleep(0.01)
                assert (await _list(wes)).tables[0]["connected"] == [True, False]
                u = await create(ann, "go-wild", 2)
                assert [x["table"] for x in (await _list(wes)).tables] == [t, u]


async def test_seqs_alone_refresh_the_list_after_list_refresh(tmp_path):
    with trio.fail_after(30):
        async with running_server(server_config(tmp_path / "data", list_refresh=0.2)) as (server, url):
            async with connect(url, "ann") as ann, connect(url, "bob") as bob:
                t = await create(ann, "run-wild", 2)
                await join(ann, t, 0)
                await join(bob, t, 1)
                await ann.send(m.Intent(1, {"kind": "ready"}))
                await ann.receive_until(lambda x: isinstance(x, m.Accepted))
                while (await _list(bob)).tables[0]["seq"] != server.tables[t].seq:
                    await trio.sleep(0.05)


async def test_seqs_alone_refresh_the_list_at_the_default(tmp_path, autojump_clock):
    """As above at the default (1 s), on trio's mock clock: a list built, then a move
    (a seq, no lobby fact); the lists asked meanwhile show the old seq until 1 s after that
    build, and the new one from then on."""
    assert server_config(tmp_path).list_refresh == LIST_REFRESH == 1.0
    async with running_server(server_config(tmp_path / "data"), world=OneThreadWorld()) as (server, url):
        async with connect(url, "ann") as ann, connect(url, "bob") as bob:
            t = await create(ann, "run-wild", 2)
            await join(ann, t, 0)
            await join(bob, t, 1)
            before = (await _list(bob)).tables[0]["seq"]
            built = trio.current_time()
            await ann.send(m.Intent(1, {"kind": "ready"}))
            await ann.receive_until(lambda x: isinstance(x, m.Accepted))
            assert server.tables[t].seq == before + 1
            while (await _list(bob)).tables[0]["seq"] == before:
                assert trio.current_time() < built + LIST_REFRESH + 0.05, "not refreshed after list_refresh"
                await trio.sleep(0.01)
            assert trio.current_time() >= built + LIST_REFRESH - 0.01, "refreshed for a seq alone before list_refresh"
