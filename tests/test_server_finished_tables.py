"""Arriving at a finished table over real sockets: a spectator or a rejoining player gets
the final snapshot and then the same `game_over` the players got, alone; and after a
restart the finished tables are loaded read-only, so they can still be watched."""

from __future__ import annotations

import trio

from wildtable.client.net import connect
from wildtable.protocol import messages as m
from wildtable.protocol.logfmt import read_log

from serverkit import answer, info, check_views, create, join, reply_to, replay_by_seq, running_server

# Go Wild! to one point, played by the turn timer: over in a few dozen records
FAST = {"turn_timer": 0.01, "target": 1}




async def play_out(url) -> tuple[str, list[m.Joined], m.GameOver]:
    """A two-seat Go Wild! table played to its end by the timer; its players leave."""
    async with connect(url, "ann") as ann, connect(url, "bob") as bob:
        table = await create(ann, "go-wild", 2, **FAST)
        joined = [await join(ann, table, 0), await join(bob, table, 1)]
        overs = [await c.receive_until(lambda x: isinstance(x, m.GameOver), timeout=8) for c in (ann, bob)]
        assert overs[0] == overs[1]
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
            async with running_server(data, max_tables=1) as (server, url):
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
