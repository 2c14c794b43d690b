"""The server's other table clocks at their DEFAULTS, in the simulator (the real server on
a simulated network, clock and disk; tests/simkit.py): a table waiting for players that
nobody is at is forgotten `--waiting-expiry` (600 s) after it was made, its log in
expired/; a finished game nobody is at is held `--keep-finished` (3600 s) after its end,
then forgotten, its log in finished/. (tests/server/test_waiting_tables_expire.py and the
keep-finished tests try them through real sockets, shortened.)"""

import random

import trio

from wildtable.server.config import ServerConfig
from wildtable.sim.players import Player

from simkit import held_then_forgotten, one_node, simulate

DEFAULTS = ServerConfig()


def test_a_waiting_table_nobody_is_at_is_forgotten_after_the_default_expiry(tmp_path):
    data = tmp_path / "data"

    async def main():
        async with one_node(data, "run-wild", 2, {}) as world:       # made, never joined
            table = world.table_id
            made = trio.current_time()
            await held_then_forgotten(world, made, DEFAULTS.waiting_expiry, 5, "its --waiting-expiry")
            assert (data / "expired" / f"{table}.wlog").exists()

    simulate(main)


def test_a_finished_game_is_held_for_the_default_keep_finished_then_forgotten(tmp_path):
    data = tmp_path / "data"

    async def main():
        async with one_node(data, "go-wild", 2, {"turn_timer": 0, "target": 1}) as world:
            server, table = world.node.server, world.table_id
            players = [Player(world, name, random.Random(i)) for i, name in enumerate(("ann", "bob"))]
            async with trio.open_nursery() as nursery:
                for p in players:
                    nursery.start_soon(p.run)      # they play it out, then hang up
            assert server.tables[table].finished
            ended = trio.current_time()
            await held_then_forgotten(world, ended, DEFAULTS.keep_finished, 30, "--keep-finished")
            assert (data / "finished" / f"{table}.wlog").exists()

    simulate(main)
