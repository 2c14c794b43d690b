"""A request for a table that another node is taking over, and that this node cannot see
as live, is answered ``storage_error`` ("try again") when its wait runs out, never
``no_such_table`` (server/cluster.py, Cluster.locate; docs/PROTOCOL.md, "Clusters"): both
clients take no_such_table as final and forget the seat's token, which would leave the
player unseated at a table that plays on.

Three real nodes on the simulator's store (wildtable/sim): the owner n1 is killed; n3, whose
heartbeats never reach the store (so no other node counts it as live), adopts the table and
keeps renewing its lease; n2 is then asked for the table. n2 can neither redirect to n3 nor
take the table over while n3's lease runs, so it waits its whole bound and says so."""

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


class UnseenStore(SimStore):
    """n3's store: its heartbeats are lost on the way (its leases are renewed as usual)."""

    def heartbeat(self, url: str, load: int, capacity: int) -> None:
        return None


def test_a_table_held_by_an_unseen_node_is_try_again_not_no_such_table(tmp_path):
    bugs: list[str] = []
    seen: dict = {}

    async def main():
        net, db = Net(random.Random(1)), SimDb(random.Random(2))

        def store(name, clock):
            s = (UnseenStore if name == "n3" else SimStore)(db, name, clock)
            return s, SimWriter(s, "always")
        n1, n2, n3 = (Node(net, name, ServerConfig(data_dir=tmp_path / name, durability="always"),
                           random.Random(k), bugs.append, store=store) for k, name in ((3, "n1"), (4, "n2"), (5, "n3")))
        async with trio.open_nursery() as nursery:
            nursery.start_soon(net.loop.run)
            await n1.start(nursery)
            await n3.start(nursery)
            assert n1.server is not None and n3.server is not None
            table = await n1.server.create_table("go-wild", 2, {})
            n1.kill()                                   # SIGKILL: its lease is left to pass
            await n1.stopped()
            with trio.fail_after(10 * LEASE_SECONDS):
                while table.id not in n3.server.tables:     # n3's adoption pass took it up
                    await trio.sleep(0.1)
            await n2.start(nursery)
            assert n2.server is not None
            asked = trio.current_time()
            with pytest.raises(IllegalAction) as refused:
                await n2.server.cluster.locate(table.id)
            seen["waited"] = trio.current_time() - asked
            seen["refused"] = refused.value
            assert table.id in n3.server.tables and table.id not in n2.server.tables
            nursery.cancel_scope.cancel()

    SPAWNS.reset()
    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0), instruments=[SPAWNS])
    assert not bugs, bugs
    bound = LEASE_SECONDS + 2 * cluster_mod.ADOPT_EVERY
    assert bound - 0.01 <= seen["waited"] <= bound + LEASE_SECONDS + 0.1, seen["waited"]
    refused = seen["refused"]
    assert refused.code == "storage_error", refused
    assert "try again" in refused.reason and "taken over" in refused.reason, refused.reason
