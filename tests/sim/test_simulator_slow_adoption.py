"""A request for a table that this node is adopting waits a bounded time
(server/cluster.py, Cluster.locate; docs/PROTOCOL.md, "Clusters"): two real nodes on the
simulator's store (wildtable/sim), the table's owner killed, and the survivor's store so
slow to read the table back (a statement stuck in the database for a minute) that its
adoption pass is still at it when a player asks for the table. The player is answered
storage_error after a lease and two passes, told to try again, and the log says so; the
adoption goes on, and once it is done the table is served there."""

import logging
import random

import pytest
import trio
import trio.testing

from wildtable.protocol.errors import IllegalAction
from wildtable.server import cluster as cluster_mod
from wildtable.server.config import ServerConfig
from wildtable.server.store_pg import LEASE_SECONDS
from wildtable.sim.net import Net
from wildtable.sim.node import Node
from wildtable.sim.pause import SPAWNS
from wildtable.sim.store import SimDb, SimStore, SimWriter

STUCK = 60.0        # seconds the survivor's store takes to read the table back


class SlowDb(SimDb):
    """The simulated database, but the adoption's read on node n2 takes STUCK seconds."""

    slow = False

    def latency(self, node: str, what: str) -> float:
        if self.slow and node == "n2" and what == "load":       # store_tables.adopt_table's one call
            return STUCK
        return super().latency(node, what)


def test_a_request_waits_for_a_slow_adoption_a_bounded_time(tmp_path, caplog):
    caplog.set_level(logging.INFO, logger="wildtable.server")
    bugs: list[str] = []
    seen: dict = {}

    async def main():
        net, db = Net(random.Random(1)), SlowDb(random.Random(2))

        def store(name, clock):
            s = SimStore(db, name, clock)
            return s, SimWriter(s, "always")
        n1, n2 = (Node(net, name, ServerConfig(data_dir=tmp_path / name, durability="always"),
                       random.Random(k), bugs.append, store=store) for k, name in ((3, "n1"), (4, "n2")))
        with trio.fail_after(10 * STUCK):
            await run_it(net, db, n1, n2)

    async def run_it(net, db, n1, n2):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(net.loop.run)
            await n1.start(nursery)
            await n2.start(nursery)
            assert n1.server is not None and n2.server is not None
            table = await n1.server.create_table("go-wild", 2, {})
            db.slow = True
            n1.kill()                                   # SIGKILL: its lease is left to pass
            await n1.stopped()
            cluster = n2.server.cluster
            while table.id not in cluster._adopting:    # the survivor's pass took it up once the lease passed
                await trio.sleep(0.1)
            asked = trio.current_time()
            with pytest.raises(IllegalAction) as refused:
                await cluster.locate(table.id)
            seen["waited"] = trio.current_time() - asked
            seen["refused"] = refused.value
            assert table.id not in n2.server.tables     # still reading it
            while table.id not in n2.server.tables:     # the adoption went on: served here once read
                await trio.sleep(0.5)
            assert await cluster.locate(table.id) is n2.server.tables[table.id]
            nursery.cancel_scope.cancel()

    SPAWNS.reset()
    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0), instruments=[SPAWNS])
    assert not bugs, bugs
    bound = LEASE_SECONDS + 2 * cluster_mod.ADOPT_EVERY
    assert bound - 0.01 <= seen["waited"] <= bound + 0.01, seen["waited"]
    refused = seen["refused"]
    assert refused.code == "storage_error", refused
    assert "try again" in refused.reason and "adoption" in refused.reason, refused.reason
    assert any("waited" in r.getMessage() and "storage_error" in r.getMessage() for r in caplog.records)
