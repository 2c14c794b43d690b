"""The counts a new table is checked against (server/open_tables.py: open tables for
`--max-tables`, an address's for `--max-waiting-per-address`) are kept as tables start,
finish and are forgotten, not walked; here they are held against the walk they replace at
every step of tables' lives, at serve's defaults, in the simulator (tests/simkit.py): one
address makes as many waiting tables as the default allows and is refused one more, one
of them is played to its end (it no longer counts: the address may make another), then
the simulated clock runs past `--waiting-expiry` and `--keep-finished` and every table is
forgotten."""

import json
import random

import trio

from wildtable.protocol import messages as m
from wildtable.server.config import ServerConfig
from wildtable.server.local_tables import OWNERS_EVERY, OWNERS_FILE
from wildtable.sim.check import count_problems
from wildtable.sim.players import Client, Player

from simkit import one_node, simulate

DEFAULTS = ServerConfig()


def agrees_with_the_walk(server) -> int:
    """The kept counts are what a walk over every table the server holds finds; how many."""
    assert not count_problems(server, "n1")
    return len(server.open_tables)


async def create(client: Client) -> m.TableCreated | m.Error:
    client.send(m.CreateTable("go-wild", 2, {"turn_timer": 0, "target": 1}, "mine"))
    while True:
        got = await client.next()
        if type(got) in (m.TableCreated, m.Error):
            return got


async def made_to_the_cap(client: Client, each=lambda made: True) -> list[str]:
    """``client`` connects and makes as many waiting tables as serve's default cap allows
    (``each(made so far)`` holds after each); their ids."""
    assert await client.connect()
    made: list[str] = []
    for _ in range(DEFAULTS.max_waiting_per_address):
        got = await create(client)
        assert type(got) is m.TableCreated, got
        made.append(got.table)
        assert each(made)
    return made


def test_the_counts_follow_tables_made_finished_and_forgotten_at_the_defaults(tmp_path):
    cap = DEFAULTS.max_waiting_per_address
    assert cap >= 2

    async def main():
        async with one_node(tmp_path / "data", "go-wild", 2, {"turn_timer": 0, "target": 1}) as world:
            server = world.node.server
            assert agrees_with_the_walk(server) == 1           # the host's, waiting
            ann = Client(world, "ann", random.Random(1))
            made = await made_to_the_cap(ann, lambda made: agrees_with_the_walk(server) == 1 + len(made))
            refused = await create(ann)
            assert type(refused) is m.Error and refused.code == "too_many_waiting_tables", refused
            assert all(t in refused.message for t in made[:5])
            owner = server.tables[made[0]].owner

            assert [t.id for t in server.open_tables.owned_by(owner)] == made

            # one of ann's is played to its end: it counts against nothing any more
            world.table_id = made[0]
            players = [Player(world, name, random.Random(i)) for i, name in enumerate(("bob", "cy"))]
            async with trio.open_nursery() as nursery:
                for p in players:
                    nursery.start_soon(p.run)
            assert server.tables[made[0]].finished
            assert agrees_with_the_walk(server) == cap          # the host's and ann's other waiting ones
            again = await create(ann)
            assert type(again) is m.TableCreated, again
            assert agrees_with_the_walk(server) == cap + 1
            ann.end.close()

            # every table forgotten in time: the waiting ones after --waiting-expiry, the
            # finished one after --keep-finished
            with trio.move_on_after(DEFAULTS.keep_finished + DEFAULTS.waiting_expiry + 60):
                while server.tables:
                    await trio.sleep(1.0)
                    agrees_with_the_walk(server)
            assert not server.tables, sorted(server.tables)
            assert agrees_with_the_walk(server) == 0
            assert server.open_tables.owned_by(owner) == []

    simulate(main)


def test_a_crash_keeps_the_makers_written_while_it_served(tmp_path):
    """owners.json is written again while the server serves (server/local_tables.py,
    OWNERS_EVERY), so a node killed (SIGKILL: no shutdown) and started again still counts
    the tables an address made before the crash against it."""
    data = tmp_path / "data"

    async def main():
        async with one_node(data, "go-wild", 2, {"turn_timer": 0, "target": 1}) as world:
            made = await made_to_the_cap(Client(world, "ann", random.Random(1)))
            owner = world.node.server.tables[made[0]].owner
            with trio.fail_after(OWNERS_EVERY + 5):
                while not set(made) <= set(_written(data)):
                    await trio.sleep(0.5)
            world.node.kill()
            await world.node.stopped()
            await world.node.start(world.nursery)
            server = world.node.server

            assert sorted(t.id for t in server.open_tables.owned_by(owner)) == sorted(made)
            ann = Client(world, "ann", random.Random(2))
            assert await ann.connect()
            refused = await create(ann)
            assert type(refused) is m.Error and refused.code == "too_many_waiting_tables", refused

    simulate(main)


def _written(data) -> dict:
    try:
        return json.loads((data / OWNERS_FILE).read_text())
    except (OSError, ValueError):
        return {}
