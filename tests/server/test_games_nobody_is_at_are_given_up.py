"""A game in play that nobody is at is given up, and one address cannot hold many.
Found: a game whose timers were off (Go Wild! `turn_timer` 0) was held for as long as the
server ran once its players had gone, so one address could create a two-seat table, join
both seats from two connections, hang up and do it again until every player got
`too_many_tables`. Now such a game counts against its creator's address as a waiting
table does (`--max-waiting-per-address`, 4), and is forgotten after `--abandoned-expiry`
(a day) with its log moved to expired/, at run time and at start."""

from __future__ import annotations

import os

import trio

from wildtable.headless.net import connect
from wildtable.protocol import messages as m
from wildtable.server.config import ServerConfig

from botsharekit import dial_from
from serverkit import answer, create, join, running_server, server_config
from waitkit import wait_until


async def _started_and_left(server, url: str, dial=None) -> tuple[str, str]:
    """A two-seat Go Wild! game without timers, dealt, then both players hang up: (its
    id, the first seat's token), once the server knows nobody is at it."""
    async with connect(url, "ann", dial=dial) as ann, connect(url, "bob", dial=dial) as bob:
        table = await create(ann, "go-wild", 2, turn_timer=0)
        token = (await join(ann, table, 0)).token
        await join(bob, table, 1)
    await wait_until(lambda: table in server.tables and server.tables[table].started
                     and server.tables[table].empty_since() is not None,
                     what=f"the server sees nobody at {table}")
    return table, token


async def _create_from(url: str, dial) -> m.TableCreated | m.Error:
    async with connect(url, "eve", dial=dial) as eve:
        await eve.send(m.CreateTable("go-wild", 2, {"turn_timer": 0}))
        return await eve.receive_until(lambda x: isinstance(x, (m.TableCreated, m.Error)))


async def test_one_address_holds_no_more_left_games_than_the_cap_at_the_defaults(tmp_path):
    """serve with no flags: the fifth game started and left from one address is refused
    (its message names the four); another address is not held back; a player back at one
    of the four frees a place."""
    with trio.fail_after(60):
        async with running_server(ServerConfig(data_dir=tmp_path / "data")) as (server, url):
            here, there = dial_from("127.0.0.1"), dial_from("127.0.0.2")
            left = [await _started_and_left(server, url, here) for _ in range(4)]
            refused = await _create_from(url, here)
            assert isinstance(refused, m.Error) and refused.code == "too_many_waiting_tables", refused
            assert all(t in refused.message for t, _ in left), refused.message
            assert "left in play with nobody at them" in refused.message, refused.message
            assert "86400 s" in refused.message, refused.message
            assert isinstance(await _create_from(url, there), m.TableCreated)
            # ann comes back to her seat: that game no longer counts, so one more may be made
            async with connect(url, "ann", dial=here) as ann:
                await ann.send(m.Rejoin(left[0][0], 0, left[0][1]))
                assert isinstance(await answer(ann), m.Joined)
                assert isinstance(await _create_from(url, here), m.TableCreated)


async def test_a_game_nobody_is_at_is_given_up_and_its_log_goes_to_expired(tmp_path):
    data = tmp_path / "data"
    with trio.fail_after(30):
        async with running_server(server_config(data, abandoned_expiry=0.5)) as (server, url):
            table, token = await _started_and_left(server, url)
            await wait_until(lambda: table not in server.tables and table not in server._moving,
                             what=f"the game {table} given up and its log put away")
            assert (data / "expired" / f"{table}.wlog").exists() and not (data / f"{table}.wlog").exists()
            async with connect(url, "ann") as ann:
                await ann.send(m.Rejoin(table, 0, token))
                e = await answer(ann)
                assert isinstance(e, m.Error) and e.code == "no_such_table", e
                assert "while its game was in play" in e.message and f"expired/{table}.wlog" in e.message, e.message


async def test_a_spectator_keeps_a_game_and_it_goes_once_they_leave(tmp_path):
    data = tmp_path / "data"
    with trio.fail_after(30):
        async with running_server(server_config(data, abandoned_expiry=0.5)) as (server, url):
            async with connect(url, "wes") as wes:
                async with connect(url, "ann") as ann, connect(url, "bob") as bob:
                    table = await create(ann, "go-wild", 2, turn_timer=0)
                    await wes.send(m.Spectate(table))
                    assert isinstance(await answer(wes), m.Spectating)
                    await join(ann, table, 0)
                    await join(bob, table, 1)
                await wait_until(lambda: server.tables[table].started and all(
                    p["connected"] is False for p in server.tables[table].players()),
                    what="both players gone, the spectator still there")
                # two expiries with the spectator at it: still held (a wait for time, the
                # point: that nothing happens has no condition to wait for)
                await trio.sleep(1.0)
                assert table in server.tables
            await wait_until(lambda: table not in server.tables and table not in server._moving,
                             what=f"the game {table} given up once its spectator left")
            assert (data / "expired" / f"{table}.wlog").exists()


async def test_at_start_a_game_whose_log_is_older_than_the_default_expiry_is_moved_to_expired(tmp_path):
    data = tmp_path / "data"
    with trio.fail_after(30):
        async with running_server(data) as (server, url):
            old, _ = await _started_and_left(server, url)
            fresh, _ = await _started_and_left(server, url)
        os.utime(data / f"{old}.wlog", (1, 1))          # nobody was at it for decades
        async with running_server(ServerConfig(data_dir=data)) as (server, url):
            assert old not in server.tables and fresh in server.tables
            assert (data / "expired" / f"{old}.wlog").exists() and not (data / f"{old}.wlog").exists()


async def test_a_game_someone_was_at_until_shutdown_counts_its_expiry_from_the_shutdown(tmp_path):
    """Its log was last written long ago, but a spectator was there until the server
    stopped: at shutdown its mtime is set to then, so the next start keeps it."""
    data = tmp_path / "data"
    with trio.fail_after(30):
        async with running_server(data) as (server, url):
            table, _ = await _started_and_left(server, url)
            os.utime(data / f"{table}.wlog", (1, 1))
            async with connect(url, "wes") as wes:
                await wes.send(m.Spectate(table))
                assert isinstance(await answer(wes), m.Spectating)
                await server.shutdown("test")
        async with running_server(ServerConfig(data_dir=data)) as (server, url):
            assert table in server.tables, "given up at start although someone was at it until the shutdown"
