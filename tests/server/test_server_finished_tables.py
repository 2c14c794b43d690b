"""Arriving at a finished table over real sockets: a spectator or a rejoining player gets
the final snapshot and then the same `game_over` the players got, alone; and after a
restart the finished tables are loaded read-only, so they can still be watched."""

from __future__ import annotations

import gc
import weakref

import pytest
import trio

from wildtable.headless.net import connect
from wildtable.protocol import messages as m
from wildtable.protocol.logfmt import read_log

from mockclockkit import OneThreadWorld
from serverkit import (answer, check_views, create, get, info, join, read_into, replay_by_seq, reply_to, running_server,
                       server_config)
from waitkit import wait_until

# Go Wild! to one point, played by the turn timer: over in a few dozen records
FAST = {"turn_timer": 0.01, "target": 1}




async def play_out(url, watcher=None) -> tuple[str, list[m.Joined], m.GameOver]:
    """A two-seat Go Wild! table played to its end by the timer; its players leave.
    ``watcher``: a connection that spectates it from before the deal, and so is still at
    it when they have gone (a table with nobody at it is forgotten keep_finished after its
    end, which on a loaded machine may come before a spectator sent only then)."""
    async with connect(url, "ann") as ann, connect(url, "bob") as bob:
        table = await create(ann, "go-wild", 2, **FAST)
        if watcher is not None:
            await watcher.send(m.Spectate(table))
            assert isinstance(await answer(watcher), m.Spectating)
        joined = [await join(ann, table, 0), await join(bob, table, 1)]
        overs = [await c.receive_until(lambda x: isinstance(x, m.GameOver), timeout=8)
                 for c in (ann, bob, watcher) if c is not None]
        assert all(x == overs[0] for x in overs)
    return table, joined, overs[0]


async def nxt(conn):
    """The very next message (bounded: a missing one fails fast)."""
    with trio.fail_after(2):
        return await conn.receive()


async def nothing_more(conn, seconds=0.3) -> list:
    got = []
    with trio.move_on_after(seconds):
        while True:
            got.append(await conn.receive())
    return got


async def test_a_spectator_of_a_finished_table_gets_its_game_over_after_the_snapshot(tmp_path):
    """Found: spectating a finished table gave the final view but no `game_over`, so a
    client that arrived after the end could not tell the result the usual way."""
    with trio.fail_after(20):
        async with running_server(tmp_path / "data") as (server, url):
            table, _, over = await play_out(url)
            async with connect(url, "wes") as wes, connect(url, "vic") as vic:
                await vic.send(m.Spectate(table))
                assert isinstance(await answer(vic), m.Spectating)
                assert isinstance(await nxt(vic), m.GameOver)
                await wes.send(m.Spectate(table))
                s = await nxt(wes)
                assert isinstance(s, m.Spectating) and s.seq == over.seq, s
                g = await nxt(wes)             # right after the snapshot
                assert g == over, (g, over)
                # a resync (spectate of the table it watches) gets both again
                await wes.send(m.Spectate(table))
                assert isinstance(await nxt(wes), m.Spectating)
                assert await nxt(wes) == over
                # ... and only that connection: the other spectator hears no second game_over
                assert not [x for x in await nothing_more(vic) if isinstance(x, m.GameOver)]


async def test_a_player_rejoining_a_finished_table_gets_its_game_over_after_the_snapshot(tmp_path):
    with trio.fail_after(20):
        async with running_server(tmp_path / "data") as (server, url):
            async with connect(url, "wes") as wes:
                table, joined, over = await play_out(url)
                await wes.send(m.Spectate(table))
                assert isinstance(await answer(wes), m.Spectating)
                assert await nxt(wes) == over
                async with connect(url, "ann2") as ann2:
                    await ann2.send(m.Rejoin(table, 0, joined[0].token))
                    j = await nxt(ann2)
                    assert isinstance(j, m.Joined) and j.seat == 0 and j.seq == over.seq, j
                    assert await nxt(ann2) == over
                    # the spectator hears the seat is connected again, not the result twice
                    got = await nothing_more(wes)
                    assert any(isinstance(x, m.Players) for x in got) and not any(isinstance(x, m.GameOver) for x in got), got


async def test_after_a_restart_a_finished_table_can_be_watched_and_rejoined_read_only(tmp_path):
    """Found: recovery skipped finished tables, so after a restart `spectate` or `rejoin`
    of a finished game got `no_such_table` although its log was on disk."""
    data = tmp_path / "data"
    with trio.fail_after(20):
        async with running_server(data) as (server, url):
            table, joined, over = await play_out(url)
        path = data / f"{table}.wlog"
        before = path.read_bytes()
        for life in range(2):       # and again after a second restart: nothing was written
            async with running_server(server_config(data, max_tables=1)) as (server, url):
                t = server.tables[table]
                assert t.finished and t.readonly and t.seq == over.seq
                async with connect(url, "wes") as wes, connect(url, "ann2") as ann2, connect(url, "cat") as cat:
                    assert (await info(wes, table))["status"] == "over"
                    await wes.send(m.Spectate(table))
                    s = await answer(wes)
                    assert isinstance(s, m.Spectating) and s.seq == over.seq
                    assert await nxt(wes) == over
                    await ann2.send(m.Rejoin(table, 0, joined[0].token))
                    j = await answer(ann2)
                    assert isinstance(j, m.Joined) and j.seq == over.seq
                    assert await nxt(ann2) == over
                    # no play, no joins
                    await ann2.send(m.Intent(1, {"kind": "play", "cards": [0]}))
                    r = await reply_to(ann2, 1)
                    assert isinstance(r, m.Rejected) and r.code == "game_over", r
                    await cat.send(m.Join(table, None))
                    assert (await answer(cat)).code == "game_over"
                    # a leave at a read-only table writes nothing (the seat stays held)
                    await ann2.send(m.Leave())
                    assert isinstance(await answer(ann2), m.Left)
                    # the finished table does not count against the table cap
                    await create(cat, "go-wild", 2, **FAST)
                    log = replay_by_seq(read_log(path.read_bytes()))
                    check_views([s], log, None)
                    check_views([j], log, 0)
            assert path.read_bytes() == before, f"life {life}: the finished log changed"
            for other in data.glob("*.wlog"):       # drop the table made to test the cap
                if other != path:
                    other.unlink()


async def _listed(conn) -> set:
    await conn.send(m.ListTables())
    msg = await conn.receive_until(lambda x: isinstance(x, m.TableList))
    return {t["table"] for t in msg.tables}


async def _until_forgotten(server, table: str, seconds: float = 5) -> None:
    await wait_until(lambda: table not in server.tables and (server.finished_dir / f"{table}.wlog").exists(),
                     timeout=seconds, what=f"table {table} forgotten, its log in finished/")


async def test_a_finished_table_nobody_is_at_is_forgotten_and_its_log_moved_to_finished(tmp_path):
    """A long-running server must not hold and list every game it ever hosted: once
    keep_finished has passed and nobody is at it, a finished table is forgotten and its
    log, unchanged, moves to finished/ (where recovery does not read it)."""
    data = tmp_path / "data"
    with trio.fail_after(20):
        async with running_server(server_config(data, keep_finished=0.3)) as (server, url):
            async with connect(url, "vic") as vic:
                table, joined, over = await play_out(url, watcher=vic)
                before = (data / f"{table}.wlog").read_bytes()      # held: vic is still at it
            await _until_forgotten(server, table)
            assert not (data / f"{table}.wlog").exists()
            moved = server.finished_dir / f"{table}.wlog"
            assert moved.read_bytes() == before
            async with connect(url, "wes") as wes:
                assert table not in await _listed(wes)
                for ask in (m.Spectate(table), m.Rejoin(table, 0, joined[0].token), m.Join(table, None)):
                    await wes.send(ask)
                    e = await answer(wes)
                    assert isinstance(e, m.Error) and e.code == "no_such_table", e
                    assert f"finished/{table}.wlog" in e.message and "is over" in e.message, e.message
                    assert f"its replay is at /replay/{table}.json" in e.message, e.message
                status, replayed = await get(server, f"/replay/{table}.json")      # as the message says
                assert status == 200 and replayed["table"] == table, replayed
                # the server goes on: a new table works, with an id of its own
                assert await create(wes, "go-wild", 2, **FAST) != table
        # and a restart does not bring it back
        async with running_server(server_config(data, keep_finished=0.3)) as (server, url):
            assert table not in server.tables


@pytest.mark.parametrize("keep", [0.2, 0.0])
async def test_a_finished_table_is_kept_while_anyone_is_at_it(tmp_path, keep):
    with trio.fail_after(20):
        async with running_server(server_config(tmp_path / "data", keep_finished=keep)) as (server, url):
            async with connect(url, "wes") as wes:
                table, _, over = await play_out(url, watcher=wes)
                await trio.sleep(0.8)               # well past keep_finished: still watched, still held
                assert table in server.tables
                assert (await info(wes, table))["status"] == "over"
                held = weakref.ref(server.tables[table])
                await wes.send(m.Leave())
                assert isinstance(await answer(wes), m.Left)
                await _until_forgotten(server, table)       # looked at again within keep_finished
                assert table not in await _listed(wes)
                # forgotten for good: nothing keeps the table in memory (wes's connection
                # sent its last request there)
                gc.collect()
                assert held() is None, gc.get_referrers(held())


async def test_a_finished_table_is_kept_while_anyone_is_at_it_at_the_default(tmp_path, autojump_clock):
    """As above at the default --keep-finished (an hour), on trio's mock clock: watched
    for two minutes past the hour, still held; once its spectator leaves, forgotten at the
    next look, which comes a minute after the last at most (``Arbiter.hold_again``)."""
    keep = server_config(tmp_path).keep_finished
    assert keep == 3600.0
    async with running_server(server_config(tmp_path / "data"), world=OneThreadWorld()) as (server, url):
        async with connect(url, "wes") as wes:
            table, _, over = await play_out(url, watcher=wes)
            ended = trio.current_time()
            heard: list = []
            async with trio.open_nursery() as n:
                n.start_soon(read_into, wes, heard)         # (so that it answers pings)
                n.start_soon(keep_alive, wes)
                await trio.sleep_until(ended + keep + 120)
                assert table in server.tables and server.tables[table].spectators
                await wes.send(m.Leave())
                left = trio.current_time()
                await wait_until(lambda: table not in server.tables, step=0.01, timeout=61, what="forgotten")
                assert trio.current_time() <= left + 60 + 0.05
                assert any(isinstance(x, m.Left) for _, x in heard)
                n.cancel_scope.cancel()
        await _until_forgotten(server, table)


async def keep_alive(conn) -> None:
    """A message every 5 minutes, as a client at a table does (the idle timeout is 10)."""
    while True:
        await trio.sleep(300)
        await conn.send(m.ListTables())


async def test_at_start_a_game_that_finished_long_ago_is_moved_not_loaded(tmp_path):
    """Recovery replays a finished log once to learn it is finished; one that finished
    more than keep_finished ago (its log's mtime) goes to finished/ and is not held."""
    import os
    data = tmp_path / "data"
    with trio.fail_after(20):
        async with running_server(data) as (server, url):
            old, _, _ = await play_out(url)
            recent, _, _ = await play_out(url)
        week_ago = os.stat(data / f"{old}.wlog").st_mtime - 7 * 86400
        os.utime(data / f"{old}.wlog", (week_ago, week_ago))
        async with running_server(server_config(data, keep_finished=3600)) as (server, url):
            assert old not in server.tables and (server.finished_dir / f"{old}.wlog").exists()
            assert server.tables[recent].finished and (data / f"{recent}.wlog").exists()
            async with connect(url, "wes") as wes:
                assert await _listed(wes) == {recent}
