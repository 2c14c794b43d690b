"""A simulated cluster (docs/ARCHITECTURE.md, "Simulation"): two or three nodes running
the real server on one shared store (store.py), at the default lease
(server/store_pg.py LEASE_SECONDS). Faults: a node killed (SIGKILL: its connections cut,
its leases left to pass) and restarted after a while, shorter or longer than the lease;
a node paused (SIGSTOP or a long GC pause: none of its code runs, pause.py), shorter or
longer than the lease; links cut; a node cut off from its clients.
Players follow ``redirect`` as the real client does (headless/redirects.py).

The invariants on top of the single node's (check.py), against the store:
- one owner writes a table: no record taken from a node that did not hold the table's
  lease under the epoch it wrote with (SimDb.write_group keeps that account as it writes);
  so no two nodes' writes interleave under one epoch, and no epoch writes after a newer one;
- a fenced write is never acknowledged: every commit acknowledged is in the store at its
  place, and so is every seq a client was shown;
- after a kill or a pause every player of the table is seated again at the node that
  owns it now, its lease running, without typing anything, or told why.
"""

from __future__ import annotations

import random
from pathlib import Path

import trio

from wildtable.server.config import ServerConfig

from .node import Node
from .pause import NodeClock
from .run import FAULT_EVERY, QUIET, World
from .store import SimDb, SimStore, SimWriter

NODE_NAMES = ("n1", "n2", "n3")


class ClusterWorld(World):
    """One run's world with several nodes on one store."""

    def __init__(self, seed: int, data_dir: Path, plant: set[str], verbose: bool = False):
        super().__init__(seed, data_dir / "n1", plant, verbose)
        self.db = SimDb(random.Random(self.rng.getrandbits(64)))
        count = self.rng.choice((2, 2, 3))
        self.nodes = [Node(self.net, name, ServerConfig(data_dir=data_dir / name, durability="always"),
                           random.Random(self.rng.getrandbits(64)), self.violation, store=self._store)
                      for name in NODE_NAMES[:count]]
        self.node = self.nodes[0]
        self.store_outages = 0
        self.checked_written = 0
        self.checked_epochs = 0
        self.epoch_of: dict[str, int] = {}                # the newest epoch that wrote, per table
        self.writer_of: dict[tuple[str, int], str] = {}   # (table, epoch) -> the node that wrote under it

    def _store(self, name: str, clock: NodeClock) -> tuple[SimStore, SimWriter]:
        store = SimStore(self.db, name, clock)
        return store, SimWriter(store, "always")

    def node_names(self) -> tuple[str, ...]:
        return tuple(n.name for n in self.nodes)

    def lost_bytes(self) -> int:
        return 0

    async def start_nodes(self, nursery: trio.Nursery) -> None:
        for node in self.nodes:
            await node.start(nursery)

    def check_log(self, when: str, durable: bool = False) -> None:
        """The single node's invariants against the store's log, and the store's own
        (what the store holds is durable: ``durable`` changes nothing here)."""
        if self.table_id is None:
            return
        recs = self.db.records.get(self.table_id)
        if recs is None:
            self.violation(f"{when}: the table is not in the store")
            return
        seen = [s for c in self.clients() for s in c.seen]
        for v in self.checker.check(b"".join(recs), seen, when):
            self.violation(v)
        for v in self.db.violations[self.checked_written:]:
            self.violation(f"{when}: {v}")
        self.checked_written = len(self.db.violations)
        for t, start, frames, node in self.db.acked:
            have = tuple(self.db.records.get(t, [])[start:start + len(frames)])
            if have != frames:
                self.violation(f"{when}: node {node} acknowledged {len(frames)} record(s) of table {t} from n {start} "
                               "that the store does not hold there (a fenced write acknowledged)")
        self.db.acked.clear()
        self.check_epochs(when)
        if when == "at the end":
            self.check_seated_at_owner(when)

    def settled(self) -> bool:
        """Seated again at the table's owner (a paused node's players look seated until it
        resumes and steps down)."""
        return super().settled() and not self.not_at_owner()

    def not_at_owner(self) -> list[str]:
        row = self.db.tables.get(self.table_id or "")
        if row is None or row.finished:
            return []
        return [f"{p.name} is seated at {p.at}, but the table is {row.owner}'s (epoch {row.epoch}, lease "
                f"{'running' if row.lease_until > self.db.now() else 'passed'})"
                for p in self.players if p.connected and not p.over and (p.at != row.owner or row.lease_until <= self.db.now())]

    def check_seated_at_owner(self, when: str) -> None:
        """Every player seated is seated at the node that owns the table now (the new
        owner, after a kill or a pause), with its lease running."""
        for line in self.not_at_owner():
            self.violation(f"{when}: {line} (after up to {QUIET:g} s without faults)")

    def check_epochs(self, when: str) -> None:
        """From the store's account of every record taken (not from the fence that let it
        in): a table's records were written under epochs that never go back, each epoch by
        one node."""
        last, by = self.epoch_of, self.writer_of
        for w in self.db.written[self.checked_epochs:]:
            if w.epoch < last.get(w.table, 0):
                self.violation(f"{when}: node {w.node} wrote record {w.n} of table {w.table} under epoch {w.epoch} "
                               f"after epoch {last[w.table]} had written (two owners' writes interleave)")
            last[w.table] = max(last.get(w.table, 0), w.epoch)
            other = by.setdefault((w.table, w.epoch), w.node)
            if other != w.node:
                self.violation(f"{when}: nodes {other} and {w.node} both wrote table {w.table} under epoch {w.epoch}")
        self.checked_epochs = len(self.db.written)

    async def watch(self) -> None:
        while True:
            await trio.sleep(5.0)
            self.check_log("live")

    async def faults(self, nursery: trio.Nursery) -> None:
        rng = random.Random(self.rng.getrandbits(64))
        while True:
            await trio.sleep(rng.expovariate(1 / FAULT_EVERY))
            r = rng.random()
            node = rng.choice(self.nodes)
            up = [n for n in self.nodes if n.up]
            if r < 0.3 and node.up and len(up) > 1 and self.table_id is not None:
                self.crashes += 1
                self.trace(f"fault: kill {node.name}")
                node.kill()
                await node.stopped()
                self.check_log(f"after crash {self.crashes}")
                nursery.start_soon(self._restart, node, rng.uniform(0.2, 15.0))
            elif r < 0.5 and node.up and node.store is not None:
                self.pause(node, trio.current_time() + rng.uniform(0.5, 12.0), rng.random() < 0.5)
            elif r < 0.56 and self._owner(node).up and isinstance(self._owner(node).store, SimStore):
                node = self._owner(node)
                # the store out of the node's reach (refused, not slow): its writer retries and
                # acknowledges nothing, its leases pass unrenewed and its tables step down
                until = trio.current_time() + rng.uniform(0.5, 12.0)
                self.store_outages += 1
                self.trace(f"fault: store unreachable from {node.name} until {until:.3f}")
                assert isinstance(node.store, SimStore)
                node.store.down_until = until
            elif r < 0.8 and self.net.links:
                links = sorted(self.net.links, key=lambda lk: lk.n)
                link = rng.choice(links)
                self.cuts += 1
                self.trace(f"fault: cut link {link.n}")
                link.sever()
            elif node.up:
                self.trace(f"fault: partition {node.name}")
                self.net.partitioned.add(node.name)
                self.net.cut_node(node.name)
                await trio.sleep(rng.uniform(0.5, 8.0))
                self.net.partitioned.discard(node.name)
                self.trace(f"fault: heal {node.name}")

    def _owner(self, drawn: Node) -> Node:
        """The node that holds the run's table (the store says it), else the one drawn."""
        row = self.db.tables.get(self.table_id) if self.table_id is not None else None
        return next((n for n in self.nodes if row is not None and n.name == row.owner), drawn)

    async def _restart(self, node: Node, after: float) -> None:
        await trio.sleep(after)
        if not node.up and not self.stopping:
            self.trace(f"fault: restart {node.name}")
            await node.start(self.nursery_or_fail())

    def nursery_or_fail(self) -> trio.Nursery:
        if self.nursery is None:
            raise RuntimeError("the world is not running")
        return self.nursery

    async def quiet(self, nursery: trio.Nursery) -> None:
        """No more faults. The nodes that are down stay down (their tables must have moved
        to a live node); pauses end, partitions heal."""
        self.net.partitioned.clear()
        self.net.held.clear()
        for node in self.nodes:
            self.resume(node)
            if isinstance(node.store, SimStore):
                node.store.down_until = 0.0
