"""One simulated run from one seed: a node running the real server, players, a spectator
and liars on a simulated network, faults on a seeded schedule, the invariants checked at
every crash and at the end. ``run(seed)`` returns the trace's hash (one seed, one run:
the same hash every time) and what was found wrong.
"""

from __future__ import annotations

import hashlib
import logging
import os
import random
import shutil
import tempfile
from pathlib import Path
from typing import Any

import attrs
import trio
import trio.testing

from wildtable.headless import redirects
from wildtable.server.config import ServerConfig

from . import check
from .net import Net
from .node import Node
from .pause import SPAWNS, PauseWatch
from .players import Client, Moving, Player, Spectator, Thief

PLAY = (15.0,) * 5 + (240.0,) # simulated seconds of play at most, per run (one drawn): most runs
                                   # are a stretch of a game, some play it out
FAULT_EVERY = 6.0     # simulated seconds between faults, on average
GAMES: tuple[tuple[str, dict[str, Any]], ...] = (("run-wild", {"rounds": 1}),) * 3 + (("go-wild", {}), ("wild-shots", {}), ("go-fish-wildcard", {}))
WATCH = 5.0           # simulated seconds between checks of the live log
CLUSTER_EVERY = 4     # one seed in this many runs a cluster of nodes on a shared store (cluster.py)
QUIET = 30.0          # at the end: no faults for this long, so everyone can be seated again


@attrs.frozen
class Result:
    seed: int
    trace_hash: str
    violations: tuple[str, ...]
    sim_seconds: float
    seq: int
    crashes: int
    cuts: int
    events: int
    lost_bytes: int       # bytes of log the crashes cut (written, never synced)
    cluster: bool = False # nodes sharing a store (cluster.py), not one node on its disk
    disk_fulls: int = 0   # times the node's disk filled (and freed again)
    paused_heard: int = 0 # storage_full notices the players heard
    store_outages: int = 0  # times a cluster node lost the store for a while
    pauses: int = 0       # times a node was paused (SIGSTOP, then SIGCONT: pause.py)

    @property
    def ok(self) -> bool:
        return not self.violations


def replay_command(seed: int) -> str:
    return f".venv/bin/python -m wildtable.sim --seed {seed}"


class World:
    """One run's world: the network, the node, the clients, the trace."""

    def __init__(self, seed: int, data_dir: Path, plant: set[str], verbose: bool = False):
        self.seed = seed
        self.verbose = verbose
        self.rng = random.Random(seed)
        self.net = Net(self.rng)
        self.data_dir = data_dir
        self.violations: list[str] = []
        self.checker = check.Checker()      # the table's log, checked as it grows
        self._hashes: dict = {}
        self.events = 0
        self.table_ready = trio.Event()
        self.table_id: str | None = None
        self.stopping = False
        self.nursery: trio.Nursery | None = None
        self.seats = self.rng.choice((2, 2, 3, 4))
        # Run Wild (one round, so that a run may play it out) in half the runs, a
        # turn-based game at its defaults in the others
        self.game, self.settings = self.rng.choice(GAMES)
        self.crashes = self.cuts = self.disk_fulls = self.paused_heard = self.pauses = 0
        self.pause_watch = PauseWatch(self.violation)   # a paused node runs nothing (pause.py)
        self.plant = plant
        self.node = Node(self.net, "n1", ServerConfig(data_dir=data_dir, durability="always"),
                         random.Random(self.rng.getrandbits(64)), self.violation)

    # The trace: one hash per client (and one for the world's faults) of what it heard
    # and when; the run's hash is made of them. Each client's is in its own order, not in
    # the order Trio happens to run clients that act at one instant.
    def _stream(self, who: str):
        h = self._hashes.get(who)
        if h is None:
            h = self._hashes[who] = hashlib.sha256()
        return h

    def trace(self, line: str, who: str = "world") -> None:
        if self.verbose:
            print(f"{trio.current_time():10.3f} {line}"[:300])
        self.events += 1
        self._stream(who).update(b"%.9f " % trio.current_time() + line.encode() + b"\n")

    def trace_bytes(self, who: str, data: bytes, msg) -> None:
        if self.verbose:
            print(f"{trio.current_time():10.3f} {who} {msg!r}"[:300])
        self.events += 1
        self._stream(who).update(b"%.9f " % trio.current_time() + data)

    def trace_hash(self) -> str:
        h = hashlib.sha256()
        for who in sorted(self._hashes):
            h.update(who.encode() + b"=" + self._hashes[who].digest())
        return h.hexdigest()

    def violation(self, what: str) -> None:
        self.violations.append(f"at {trio.current_time():.3f} s: {what}")

    def clients(self):
        return self.players + self.others

    def check_log(self, when: str, durable: bool = False) -> None:
        """The invariants against the table's log; ``durable``: only against what the
        disk has synced (what a crash now would keep), not what it merely holds."""
        if self.table_id is None:
            return
        data = check.find_log(self.data_dir, self.table_id)
        if data is None:
            self.violation(f"{when}: the table's log is gone")
            return
        if durable and self.node.disk is not None:
            n = self.node.disk.durable(self.data_dir / f"{self.table_id}.wlog")
            if n is not None:
                data = data[:n]
        seen = [s for c in self.clients() for s in c.seen]
        for v in self.checker.check(data, seen, when):
            self.violation(v)

    async def create_table(self) -> None:
        """The host makes the table over the network, as a client does."""
        from wildtable.protocol import messages as msg
        host = Player(self, "host", random.Random(self.rng.getrandbits(64)))
        ask = msg.CreateTable(self.game, self.seats, dict(self.settings), "sim")
        while self.table_id is None:
            try:
                if await host.connect():
                    host.send(ask)
                    chase = None
                    while self.table_id is None:
                        got = await host.next()
                        if type(got) is msg.TableCreated:
                            self.table_id = got.table
                        elif type(got) is msg.Redirect:       # the cluster places it on another node
                            chase = await host.redirected(got, chase, ask, patient=True)
            except Moving:
                ask = redirects.sent_again(ask)
                continue
            except Exception as e:       # Closed, TooSlow: try again
                self.trace(f"host: {type(e).__name__}")
            finally:
                if host.end is not None:
                    host.end.close()
            if self.table_id is None:
                await trio.sleep(0.5)
        self.table_ready.set()

    async def faults(self, nursery: trio.Nursery) -> None:
        """Kill and restart the node, hold its links' messages for a while (a stalled
        network, or the node paused as far as its clients can tell), fill its disk for a
        while, cut links, cut the node off for a while."""
        rng = random.Random(self.rng.getrandbits(64))
        while True:
            await trio.sleep(rng.expovariate(1 / FAULT_EVERY))
            r = rng.random()
            if r < 0.3 and self.node.up and self.table_id is not None:
                self.crashes += 1
                self.trace("fault: kill n1")
                self.node.kill()
                await self.node.stopped()
                self.check_log(f"after crash {self.crashes}")
                await trio.sleep(rng.uniform(0.2, 5.0))
                self.trace("fault: restart n1")
                await self.node.start(nursery)
            elif r < 0.35:
                until = trio.current_time() + rng.uniform(0.5, 12.0)
                self.trace(f"fault: hold n1's links until {until:.3f}")
                self.net.held["n1"] = until
            elif r < 0.4:
                until = trio.current_time() + rng.uniform(0.5, 12.0)
                if self.node.up:
                    self.pause(self.node, until, rng.random() < 0.5)
            elif r < 0.43 and self.node.up and self.table_id is not None:
                await self.disk_full(rng)
            elif r < 0.8 and self.net.links:
                links = sorted(self.net.links, key=lambda lk: lk.n)
                link = rng.choice(links)
                self.cuts += 1
                self.trace(f"fault: cut link {link.n}")
                link.sever()
            elif self.node.up:
                self.trace("fault: partition n1")
                self.net.partitioned.add("n1")
                self.net.cut_node("n1")
                await trio.sleep(rng.uniform(0.5, 8.0))
                self.net.partitioned.discard("n1")
                self.trace("fault: heal n1")

    def pause(self, node: Node, until: float, timers_first: bool) -> None:
        """SIGSTOP now, SIGCONT at ``until``: none of the node's code runs meanwhile (its
        timers, its readers, its writer: pause.py); then what came due fires late, before
        or after the inputs that waited (``timers_first``). A paused node stays paused
        until its first resume."""
        if node.clock.paused:
            return
        self.pauses += 1
        self.trace(f"fault: pause {node.name} until {until:.3f}{' (timers first)' if timers_first else ''}")
        self.pause_watch.pause(node.clock)
        if self.nursery is not None:
            self.nursery.start_soon(self._resume_at, node, until, timers_first)

    async def _resume_at(self, node: Node, until: float, timers_first: bool) -> None:
        clock = node.clock
        await trio.sleep_until(until)
        if clock is node.clock:
            self.resume(node, timers_first)
        self.pause_watch.forget(clock)      # (killed meanwhile: its tasks were cancelled)

    def resume(self, node: Node, timers_first: bool = False) -> None:
        if node.clock.paused:
            self.trace(f"fault: resume {node.name}")
            self.pause_watch.resume(node.clock, timers_first)

    async def disk_full(self, rng: random.Random) -> None:
        """The node's disk fills for 0.5 to 12 s (a write may take the few bytes left):
        the server pauses play and tells its players (server/diskfull.py). While it is
        full nothing may be acknowledged that is not durable; once it frees, play resumes
        and the players are told."""
        disk = self.node.disk
        assert disk is not None
        self.disk_fulls += 1
        room = rng.choice((0, 0, rng.randint(1, 300)))
        self.trace(f"fault: disk of n1 full ({room} bytes left)")
        disk.fill(room)
        try:
            await trio.sleep(rng.uniform(0.5, 12.0))
        finally:                         # (the faults end while it is full: it frees at once)
            self.check_log("while the disk was full", durable=True)
            disk.free()
        self.trace("fault: disk of n1 has room")

    async def watch(self) -> None:
        """The invariants all the time: every WATCH seconds against what is durable."""
        while True:
            await trio.sleep(WATCH)
            if self.node.up:
                self.check_log("live", durable=True)

    # The hooks a world of several nodes (cluster.py) fills in its own way.
    def node_names(self) -> tuple[str, ...]:
        """The nodes a client may connect to, the first one first."""
        return (self.node.name,)

    async def start_nodes(self, nursery: trio.Nursery) -> None:
        await self.node.start(nursery)

    async def quiet(self, nursery: trio.Nursery) -> None:
        """No more faults: the node is up and everyone may come back."""
        self.net.partitioned.clear()
        self.net.held.clear()
        self.resume(self.node)
        if not self.node.up:
            await self.node.stopped()
            await self.node.start(nursery)

    def lost_bytes(self) -> int:
        return self.node.lost_bytes

    def settled(self) -> bool:
        """After the faults: every player is seated again (and told play resumed, if it
        was told the disk was full) or done."""
        return all(p.over or (p.connected and not p.paused) for p in self.players)

    async def main(self) -> None:
        async with trio.open_nursery() as nursery:
            self.nursery = nursery
            nursery.start_soon(self.net.loop.run)
            await self.start_nodes(nursery)
            rng = self.rng
            self.players: list[Player] = []
            for i in range(self.seats):
                crng = random.Random(rng.getrandbits(64))
                kind = rng.random()
                kw: dict[str, Any] = {}
                if kind < 0.15:
                    kw = dict(pong_lag=rng.uniform(0.3, 3.0))       # a liar: answers pings late
                elif kind < 0.25:
                    kw = dict(stale=True)                            # a liar: acts on an old view
                elif kind < 0.35:
                    kw = dict(slow=True)                             # a slow reader
                elif kind < 0.45:
                    kw = dict(stalls=True)                           # a reader that stops now and then
                self.players.append(Player(self, f"p{i}", crng, **kw))
            self.others: list[Client] = []
            if rng.random() < 0.6:
                self.others.append(Spectator(self, "spec", random.Random(rng.getrandbits(64))))
            if rng.random() < 0.3:
                self.others.append(Thief(self, "thief", random.Random(rng.getrandbits(64))))
            await self.create_table()
            for c in self.clients():
                nursery.start_soon(c.run)
            nursery.start_soon(self.watch)
            with trio.move_on_after(rng.choice(PLAY)):
                fault_scope = trio.CancelScope()

                async def faults():
                    with fault_scope:
                        await self.faults(nursery)
                nursery.start_soon(faults)
                while not all(p.over for p in self.players):
                    await trio.sleep(1.0)
            fault_scope.cancel()
            await self.quiet(nursery)
            with trio.move_on_after(QUIET):
                while not self.settled():
                    await trio.sleep(0.5)
            self.stopping = True
            for p in self.players:
                if not (p.over or p.connected):
                    self.violation(f"{p.name} is neither seated nor told why ({QUIET:g} s after the last fault; "
                                   f"heard {p.told[-3:]})")
                elif p.connected and p.paused and not p.over:
                    self.violation(f"{p.name} was told play is paused (the disk full) and never that it resumed "
                                   f"({QUIET:g} s after the disk had room)")
            self.check_log("at the end")
            for node in getattr(self, "nodes", [self.node]):
                if node.server is not None:
                    for v in check.count_problems(node.server, node.name):
                        self.violation(v)
            self.seq = max((c.seq for c in self.clients()), default=0)
            nursery.cancel_scope.cancel()


def run(seed: int, plant: set[str] | frozenset = frozenset(), verbose: bool = False) -> Result:
    """One run; ``plant`` names test-only bugs already planted (tests/sim). One seed in
    CLUSTER_EVERY runs a cluster on a shared store (cluster.py), the others one node."""
    logger = logging.getLogger("wildtable")
    level = logger.level            # given back at the end: the caller's logging is its own
    logger.setLevel(logging.CRITICAL)
    base = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
    tmp = Path(tempfile.mkdtemp(prefix="wtsim-", dir=base))
    try:
        from .cluster import ClusterWorld
        kind = ClusterWorld if seed % CLUSTER_EVERY == CLUSTER_EVERY - 1 else World
        world = kind(seed, tmp / "data", set(plant), verbose)
        clock = trio.testing.MockClock(autojump_threshold=0)
        SPAWNS.reset()          # a fresh tree of spawns for each run (pause.py)
        trio.run(world.main, clock=clock, instruments=[SPAWNS])
        return Result(seed, world.trace_hash(), tuple(world.violations), clock.current_time(), world.seq,
                      world.crashes, world.cuts, world.events,
                      world.lost_bytes(), isinstance(world, ClusterWorld), world.disk_fulls, world.paused_heard,
                      getattr(world, "store_outages", 0), world.pauses)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        logger.setLevel(level)
