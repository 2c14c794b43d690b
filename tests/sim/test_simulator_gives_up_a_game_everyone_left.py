"""A game in play that everyone left, at the server's DEFAULT --abandoned-expiry (a day),
in the simulator (wildtable/sim: the real server on a simulated network, clock and disk):
held for its players a whole day, then given up, its log moved to expired/, and a player
who comes back is told why. (tests/server/test_games_nobody_is_at_are_given_up.py tries
the same through real sockets with a shortened expiry.)"""

import random

import trio

from wildtable.protocol import messages as m
from wildtable.server.config import ServerConfig
from wildtable.sim.players import Client

from simkit import held_then_forgotten, joined, one_node, simulate

DAY = ServerConfig().abandoned_expiry


def test_a_game_everyone_left_is_held_a_day_then_given_up(tmp_path):
    data = tmp_path / "data"
    told: list[m.Error] = []

    async def main():
        async with one_node(data, "go-wild", 2, {"turn_timer": 0}) as world:
            server, table = world.node.server, world.table_id
            players = [await joined(world, name, i) for i, name in enumerate(("ann", "bob"))]
            assert server.tables[table].started
            for p in players:
                p.link_end().close()
            while server.tables[table].empty_since() is None:       # the server hears both go
                await trio.sleep(0.1)
            left = trio.current_time()
            await held_then_forgotten(world, left, DAY, 60, "--abandoned-expiry from when everyone left")
            assert (data / "expired" / f"{table}.wlog").exists() and not (data / f"{table}.wlog").exists()
            ann = Client(world, "ann", random.Random(9))
            assert await ann.connect()
            ann.send(m.Rejoin(table, 0, players[0].token))
            while not isinstance(got := await ann.next(), m.Error):
                pass
            told.append(got)

    simulate(main)
    assert told and told[0].code == "no_such_table", told
    assert "while its game was in play" in told[0].message, told[0].message
