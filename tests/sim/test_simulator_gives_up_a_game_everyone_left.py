"""A game in play that everyone left, at the server's DEFAULT --abandoned-expiry (a day),
in the simulator (wildtable/sim: the real server on a simulated network, clock and disk):
held for its players a whole day, then given up, its log moved to expired/, and a player
who comes back is told why. (tests/server/test_games_nobody_is_at_are_given_up.py tries
the same through real sockets with a shortened expiry.)"""

import random

import trio
import trio.testing

from wildtable.protocol import messages as m
from wildtable.server.config import ServerConfig
from wildtable.sim.pause import SPAWNS
from wildtable.sim.players import Client
from wildtable.sim.run import World

DAY = ServerConfig().abandoned_expiry


async def _joined(world: World, name: str, seed: int) -> Client:
    c = Client(world, name, random.Random(seed))
    assert await c.connect()
    c.send(m.Join(world.table_id, None))
    while type(await c.next()) is not m.Joined:
        pass
    return c


def test_a_game_everyone_left_is_held_a_day_then_given_up(tmp_path):
    data = tmp_path / "data"
    told: list[m.Error] = []

    async def main():
        world = World(1, data, set())
        world.game, world.settings, world.seats = "go-wild", {"turn_timer": 0}, 2
        async with trio.open_nursery() as nursery:
            world.nursery = nursery
            nursery.start_soon(world.net.loop.run)
            await world.start_nodes(nursery)
            await world.create_table()
            server, table = world.node.server, world.table_id
            players = [await _joined(world, name, i) for i, name in enumerate(("ann", "bob"))]
            assert server.tables[table].started
            for p in players:
                p.link_end().close()
            while server.tables[table].empty_since() is None:       # the server hears both go
                await trio.sleep(0.1)
            left = trio.current_time()
            await trio.sleep(DAY - 60)
            assert table in server.tables, "given up before a day had passed"
            with trio.move_on_after(120):       # (simulated seconds)
                while table in server.tables or table in server._moving:
                    await trio.sleep(1.0)
            assert table not in server.tables, "still held a day after everyone left"
            assert DAY - 1 <= trio.current_time() - left <= DAY + 60     # (left: as the test saw it)
            assert (data / "expired" / f"{table}.wlog").exists() and not (data / f"{table}.wlog").exists()
            ann = Client(world, "ann", random.Random(9))
            assert await ann.connect()
            ann.send(m.Rejoin(table, 0, players[0].token))
            while not isinstance(got := await ann.next(), m.Error):
                pass
            told.append(got)
            nursery.cancel_scope.cancel()

    SPAWNS.reset()
    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0), instruments=[SPAWNS])
    assert told and told[0].code == "no_such_table", told
    assert "while its game was in play" in told[0].message, told[0].message
