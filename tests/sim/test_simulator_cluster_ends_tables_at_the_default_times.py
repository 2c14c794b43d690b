"""Tables that end on a cluster, at serve's default times (docs/PROTOCOL.md, "Clusters";
docs/ARCHITECTURE.md, "Bounded resources"), in the simulator: two or three real nodes on
the simulated store (wildtable/sim), each at `ServerConfig()`'s defaults. The real-
PostgreSQL tests of the same (tests/server/test_cluster_ended_tables.py,
test_store_finished_table_forgotten_quietly.py) shorten --waiting-expiry, --keep-finished
and the lease to a second or so; here a simulated hour costs seconds.

- A table waiting for players that nobody is at expires 600 s after it was made, on its
  owner, and every node then says it expired (the store's row), with no redirect.
- A game played out and left is held for the hour (--keep-finished) and forgotten
  then; its lease passed long before (a finished table's lease is not renewed), and its
  forgetting is not taken for a lost lease: nothing is logged as one, no commit counted
  as fenced out. Every node then says it is over and where its replay is."""

from __future__ import annotations

import logging
import random

import trio

from wildtable.protocol import messages as m
from wildtable.server.cluster import ADOPT_EVERY
from wildtable.server.config import KEEP_FINISHED, WAITING_EXPIRY
from wildtable.server.store_pg import LEASE_SECONDS
from wildtable.sim.cluster import ClusterWorld
from wildtable.sim.players import Client

from simkit import cluster_nodes, held_then_forgotten, joined, simulate

SLACK = 2.0         # seconds either side of a deadline: the arbiter's wake-up, a store call or two


def owner_of(world: ClusterWorld, table: str):
    (owner,) = [n for n in world.nodes if n.server is not None and table in n.server.tables]
    return owner


async def told_at(world: ClusterWorld, node: str, table: str, seed: int) -> m.Error:
    """What a client connected to ``node`` is told when it asks to spectate ``table``."""
    c = Client(world, f"asker{seed}", random.Random(seed))
    c.at = node
    assert await c.connect() and c.at == node
    c.send(m.Spectate(table))
    while True:
        got = await c.next()
        if type(got) in (m.Error, m.Redirect, m.Spectating):
            c.end.close()
            assert type(got) is m.Error, got
            return got


def at_the_defaults(world: ClusterWorld) -> None:
    for node in world.nodes:
        assert node.config.waiting_expiry == WAITING_EXPIRY and node.config.keep_finished == KEEP_FINISHED


def test_a_waiting_table_nobody_is_at_expires_at_the_default_and_every_node_says_so(tmp_path):
    async def main():
        async with cluster_nodes(tmp_path, "go-wild", 2, {}) as world:      # made, never joined
            at_the_defaults(world)
            made = trio.current_time()
            table = world.table_id
            await held_then_forgotten(world, made, WAITING_EXPIRY, SLACK, "--waiting-expiry",
                                      node=owner_of(world, table))
            for i, node in enumerate(world.nodes):
                said = await told_at(world, node.name, table, 100 + i)
                assert said.code == "no_such_table" and "expired" in said.message, (node.name, said)
    simulate(main)


def test_a_finished_game_is_held_an_hour_then_forgotten_quietly_and_every_node_says_it_is_over(tmp_path, caplog):
    caplog.set_level(logging.INFO, logger="wildtable.server")

    async def main():
        # Go Wild! to one point, played out by its turn timer (the game's settings are not
        # what this test is about)
        async with cluster_nodes(tmp_path, "go-wild", 2, {"turn_timer": 0.01, "target": 1}) as world:
            at_the_defaults(world)
            table = world.table_id
            players = [await joined(world, name, seed) for name, seed in (("ann", 1), ("bob", 2))]
            while type(await players[0].next()) is not m.GameOver:
                pass
            for p in players:
                p.end.close()
            owner = owner_of(world, table)
            t = owner.server.tables[table]
            assert t.finished
            left = trio.current_time()
            await held_then_forgotten(world, left, KEEP_FINISHED, SLACK, "--keep-finished", node=owner)
            await trio.sleep(10)            # its release goes through the writer after it is forgotten
            assert owner.server.metrics.fenced_commits == 0 and owner.server.metrics.leases_lost == 0
            for i, node in enumerate(world.nodes):
                said = await told_at(world, node.name, table, 200 + i)
                assert said.code == "no_such_table" and "is over" in said.message and "/replay/" in said.message, \
                    (node.name, said)
    simulate(main)
    said = [r.getMessage() for r in caplog.records if r.name == "wildtable.server"]
    assert any("forgotten (finished, nobody at it)" in s for s in said), said[-20:]
    assert not [s for s in said if "lease lost" in s or "lost its lease" in s], said


def test_a_node_stopped_cleanly_hands_its_table_over_well_within_the_default_lease(tmp_path, caplog):
    """`serve` stopped (SIGTERM's path: Server.shutdown) gives up its tables' leases; the
    other node adopts the table at its next look, within ADOPT_EVERY (1 s) and a store call
    or two, not once the lease (5 s by default, renewed every third of it) that a node
    killed leaves to pass has passed. The
    real-PostgreSQL test of it (tests/server/test_cluster_handover.py) runs a 1.5 s lease,
    which a handover that waited the lease out would pass too."""
    caplog.set_level(logging.INFO, logger="wildtable.server")

    async def main():
        async with cluster_nodes(tmp_path, "go-wild", 2, {}) as world:
            at_the_defaults(world)
            assert all(n.config.lease_seconds == LEASE_SECONDS == 5.0 for n in world.nodes)
            table = world.table_id
            players = [await joined(world, name, seed) for name, seed in (("ann", 1), ("bob", 2))]
            owner = owner_of(world, table)
            for p in players:       # gone first: the shutdown's goodbye then waits for nobody
                p.end.close()
            while owner.server.connections:
                await trio.sleep(0.01)
            began = trio.current_time()
            await owner.server.shutdown("handover test")
            await owner.stopped()
            others = [n for n in world.nodes if n is not owner]
            with trio.move_on_after(LEASE_SECONDS):
                while not any(table in n.server.tables for n in others):
                    await trio.sleep(0.01)
            took = trio.current_time() - began
            # the lease, renewed every third of it, would pass 3.3 s after the stop at the soonest
            assert took <= ADOPT_EVERY + 0.5, f"adopted {took:.2f} s after the stop began"
    simulate(main)
    said = [r.getMessage() for r in caplog.records if r.name == "wildtable.server"]
    assert any("gave up the leases of 1 table(s)" in s for s in said), said[-20:]
