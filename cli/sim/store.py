"""The simulated store (docs/ARCHITECTURE.md, "Simulation"): the PostgreSQL store that
the nodes of a cluster share (server/store_pg.py), in memory, driven by Trio's (mock)
clock, which is the database's clock here. ``SimDb`` is the database: its rows and its
statements, each one the in-memory twin of PgStore's SQL with the same lease and fencing
semantics (epochs bumped by adoption, leases that pass by the database's clock, a group
commit that locks and checks ``owner = me AND epoch = mine AND lease_until > now`` before
it writes a table's records). ``SimStore`` is one node's handle (server/interfaces.py,
Store); ``SimWriter`` its log sink, PgWriter with the store's transaction run in memory.

The database also keeps the invariants' account: every record written, by which node
under which epoch, and every commit acknowledged (check.py, ``store_violations``).
"""

from __future__ import annotations

import random
import zlib
from collections.abc import Callable
from typing import Any

import attrs
import trio

from wildtable.server import store_pg
from wildtable.server.groupcommit import fill_group
from wildtable.server.logwriter import EXPIRED, OVER, StorageFailed
from .pause import NodeClock
from wildtable.server.store_pg import LEASE_SECONDS, LobbyRow, NodeRow, PgLog, PgWriter, psycopg_module, split_frames


LATENCIES = (0.0003, 0.001, 0.002, 0.006)     # a statement's round trip, seconds


@attrs.define
class Row:
    """wt_tables: one row a table."""
    game: str
    owner: str | None
    epoch: int
    lease_until: float
    created: float
    order: int                     # (created, table_id) ties broken as PostgreSQL's ORDER BY would
    finished: bool = False
    finished_at: float | None = None
    ended: str | None = None
    entry: bytes | None = None
    bots: bytes | None = None
    creator: str | None = None


@attrs.define
class NodeInfo:
    """wt_nodes: one row a node."""
    url: str
    heartbeat: float
    load: int
    capacity: int
    alive: bool = True


@attrs.frozen
class Written:
    """A record the store took: of ``table`` at ``n``, by ``node`` under ``epoch``."""
    table: str
    n: int
    node: str
    epoch: int
    at: float


class SimDb:
    """The database the nodes share. Its clock is Trio's: ``now()``."""

    fence = True        # the group commit checks the lease (plant.py's missing lease check: False)

    def __init__(self, rng: random.Random):
        self.salt = rng.getrandbits(32)
        self.tables: dict[str, Row] = {}
        self.records: dict[str, list[bytes]] = {}
        self.nodes: dict[str, NodeInfo] = {}
        self.written: list[Written] = []                 # every record taken, in order
        self.acked: list[tuple[str, int, tuple[bytes, ...], str]] = []   # (table, first n, frames, node) acknowledged
        self.violations: list[str] = []                  # found as they happened (a write out of its lease)
        self._order = 0

    @staticmethod
    def now() -> float:
        return trio.current_time()

    def latency(self, node: str, what: str) -> float:
        """A statement's round trip: 0.3 to 6 ms, drawn from the run's seed, the node, the
        statement and the instant, not from a Random called in turn (Trio runs the tasks
        ready at one instant in any order, docs/ARCHITECTURE.md "Determinism")."""
        h = zlib.crc32(b"%d %s %s %.9f" % (self.salt, node.encode(), what.encode(), trio.current_time()))
        return LATENCIES[h % len(LATENCIES)]

    # ------------------------------------------------------------ the group commit
    def write_group(self, me: str, by_table: dict[str, list], finish: dict[str, str]) -> tuple[dict[str, int], frozenset]:
        """_GROUP_STATEMENT: lock the group's tables, keep those whose owner is ``me``, epoch
        the handle's and lease unexpired (the fence), write their records at their numbers,
        mark the finished ones. ({table: records written}, tables fenced out). A record
        number already taken is the primary key's violation: StorageFailed."""
        now = self.now()
        held = []
        for t, commits in by_table.items():
            row, log = self.tables.get(t), commits[0].log
            if row is None:
                continue
            if not self.fence or (row.owner == me and row.epoch == log.epoch and row.lease_until > now):
                held.append(t)
        written: dict[str, int] = {}
        for t in held:
            commits = by_table[t]
            log = commits[0].log
            frames = [f for c in commits if c.data for f in split_frames(c.data)]
            recs = self.records[t]
            if frames and len(recs) != log.next_n:
                raise StorageFailed(f"table {t}: duplicate key (table_id, n)=({t}, {log.next_n}): the store holds "
                                    f"{len(recs)} records where node {me} wrote {log.next_n}")
            row = self.tables[t]
            if frames and (row.owner != me or row.epoch != log.epoch or row.lease_until <= now):
                self.violations.append(
                    f"node {me} wrote {len(frames)} record(s) of table {t} from n {log.next_n} under epoch "
                    f"{log.epoch} while the table is {row.owner}'s at epoch {row.epoch}, lease "
                    f"{'passed' if row.lease_until <= now else 'running'} (one owner writes a table)")
            for i, f in enumerate(frames):
                recs.append(f)
                self.written.append(Written(t, log.next_n + i, me, log.epoch, now))
            written[t] = len(frames)
            if t in finish:
                if not row.finished:
                    row.finished_at = now
                row.finished = True
                row.ended = row.ended or finish[t]
        return written, frozenset(by_table) - set(held)


class SimStore:
    """One node's handle on the shared SimDb (server/interfaces.py, Store): PgStore's
    functions, statement for statement. While the node is paused (``clock``, pause.py) a
    call under way waits before it runs (its thread is stopped too) and then runs on the
    database's clock: past the node's lease, a renewal returns nothing."""

    def __init__(self, db: SimDb, node_id: str, clock: NodeClock, lease_seconds: float = LEASE_SECONDS):
        self.db = db
        self.clock = clock
        self.dsn = f"sim://{node_id}"
        self.node_id = node_id
        self.lease_seconds = lease_seconds
        self.down_until = 0.0    # the store out of this node's reach until then: every call refused

    def unreachable(self) -> bool:
        return self.down_until > trio.current_time()

    async def call(self, fn: Callable[..., Any], *args: Any) -> Any:
        await trio.sleep(self.db.latency(self.node_id, getattr(fn, "__name__", "call")))
        await self.clock.gate()
        if self.unreachable():
            # as psycopg says it of a PostgreSQL that is down (store_pg._transient: retried)
            raise psycopg_module().OperationalError("connection refused: the store is unreachable (simulated)")
        return fn(*args)

    def close(self) -> None:
        pass

    def ensure_schema(self) -> None:
        pass

    def _new(self) -> float:
        return self.db.now() + self.lease_seconds

    # ------------------------------------------------------------ tables
    def create_table_row(self, table_id: str, game: str, header: bytes, creator: str | None = None) -> PgLog:
        db = self.db
        if table_id in db.tables:
            raise KeyError(f"duplicate key table_id={table_id}")
        db._order += 1
        db.tables[table_id] = Row(game, self.node_id, 1, self._new(), db.now(), db._order, creator=creator)
        db.records[table_id] = [header]
        db.written.append(Written(table_id, 0, self.node_id, 1, db.now()))
        return PgLog(table_id, 1, 1, creator=creator)

    def table_exists(self, table_id: str) -> bool:
        return table_id in self.db.tables

    def load_records(self, table_id: str) -> bytes:
        recs = self.db.records.get(table_id)
        if not recs:
            raise store_pg.StoreError(f"no table {table_id!r} in the store")
        return b"".join(recs)

    def _how(self, row: Row) -> str | None:
        if not row.finished:
            return None
        return EXPIRED if row.ended == "expired" else OVER

    def table_info(self, table_id: str) -> dict | None:
        row = self.db.tables.get(table_id)
        if row is None:
            return None
        node = self.db.nodes.get(row.owner) if row.owner is not None else None
        return {"game": row.game, "owner": row.owner, "epoch": row.epoch, "finished": row.finished,
                "lease_left": row.lease_until - self.db.now(), "url": node.url if node else None,
                "ended": self._how(row), "listed": row.entry is not None}

    def _sorted(self) -> list[tuple[str, Row]]:
        return sorted(self.db.tables.items(), key=lambda kv: (kv[1].created, kv[1].order, kv[0]))

    def finished_tables(self) -> list[tuple[str, float | None]]:
        over = [(t, r) for t, r in self._sorted() if self._how(r) == OVER]
        over.sort(key=lambda kv: -(kv[1].finished_at or 0.0))
        return [(t, None if r.finished_at is None else r.finished_at) for t, r in over]

    def log_size(self, table_id: str) -> tuple[str, int, int] | None:
        row = self.db.tables.get(table_id)
        if row is None:
            return None
        recs = self.db.records.get(table_id, [])
        return (self._how(row) or "playing", sum(map(len, recs)), len(recs))

    def log_head(self, table_id: str, max_bytes: int) -> bytes:
        out, size = [], 0
        for data in self.db.records.get(table_id, [])[:256]:
            if size >= max_bytes:
                break
            out.append(data)
            size += len(data)
        return b"".join(out)

    def table_ids(self) -> list[str]:
        return [t for t, _ in self._sorted()]

    # ------------------------------------------------------------ leases
    def _unowned(self, limit: int, mine_too: bool) -> list[str]:
        now = self.db.now()
        return [t for t, r in self._sorted() if not r.finished and (
            r.owner is None or (mine_too and r.owner == self.node_id) or r.lease_until < now)][:limit]

    def adoptable(self, limit: int = 100) -> list[str]:
        return self._unowned(limit, True)

    def expired_tables(self, limit: int = 100) -> list[str]:
        return self._unowned(limit, False)

    def adopt(self, table_id: str) -> PgLog | None:
        """The UPDATE ... SET epoch = epoch + 1 under the row lock: a new epoch fences the
        former owner out."""
        row = self.db.tables.get(table_id)
        now = self.db.now()
        if row is None or row.finished or not (row.owner is None or row.owner == self.node_id
                                                or row.lease_until < now):
            return None
        row.owner, row.epoch, row.lease_until = self.node_id, row.epoch + 1, self._new()
        return PgLog(table_id, row.epoch, len(self.db.records[table_id]), creator=row.creator)

    def renew(self) -> dict[str, int]:
        now = self.db.now()
        out = {}
        for t, r in sorted(self.db.tables.items()):
            if r.owner == self.node_id and not r.finished and r.lease_until > now:
                r.lease_until = self._new()
                out[t] = r.epoch
        return out

    def release_leases(self, table_ids: list[str] | None = None) -> int:
        n = 0
        for t, r in self.db.tables.items():
            if r.owner == self.node_id and not r.finished and (table_ids is None or t in table_ids):
                r.owner = None
                n += 1
        return n

    def finished_here(self, keep_seconds: float) -> list[tuple[str, int, int, float]]:
        now = self.db.now()
        for r in self.db.tables.values():
            if r.owner == self.node_id and r.finished:
                r.entry = None
        rows = [(t, r.epoch, len(self.db.records[t]), now - r.finished_at, r.finished_at)
                for t, r in self.db.tables.items()
                if r.owner == self.node_id and self._how(r) == OVER and r.finished_at is not None
                and now - r.finished_at < keep_seconds]
        rows.sort(key=lambda x: (x[4], x[0]))
        return [(t, e, n, ago) for t, e, n, ago, _ in rows]

    # ------------------------------------------------------------ nodes and lobby
    def heartbeat(self, url: str, load: int, capacity: int) -> None:
        self.db.nodes[self.node_id] = NodeInfo(url, self.db.now(), load, capacity, True)

    def node_down(self) -> None:
        if self.node_id in self.db.nodes:
            self.db.nodes[self.node_id].alive = False

    def _live(self, max_age: float) -> dict[str, NodeInfo]:
        now = self.db.now()
        return {k: v for k, v in self.db.nodes.items() if v.alive and v.heartbeat > now - max_age}

    def live_nodes(self, max_age: float) -> list[NodeRow]:
        now = self.db.now()
        return [NodeRow(k, v.url, v.load, v.capacity, now - v.heartbeat)
                for k, v in sorted(self._live(max_age).items())]

    def set_entries(self, entries: dict[str, bytes | None]) -> None:
        for t in sorted(entries):
            r = self.db.tables.get(t)
            if r is not None and r.owner == self.node_id:
                r.entry = entries[t]

    def set_bots(self, table_id: str, bots: bytes | None) -> None:
        r = self.db.tables.get(table_id)
        if r is not None and r.owner == self.node_id:
            r.bots = bots

    def bots_of(self, table_id: str) -> bytes | None:
        r = self.db.tables.get(table_id)
        return None if r is None else r.bots

    def lobby(self, max_age: float) -> list[LobbyRow]:
        live = self._live(max_age)
        out = []
        for t, r in self._sorted():
            node = live.get(r.owner) if r.owner is not None else None
            if r.entry is not None and (not r.finished or node is not None):
                out.append(LobbyRow(t, r.game, r.owner, node.url if node else None, r.entry))
        return out


class SimWriter(PgWriter):
    """PgWriter with its transaction run against the SimDb (in the task, after the
    statement's round trip, on the database's clock; no worker thread). What follows the
    transaction (numbering, fencing, waking the tables: PgWriter's settle) is PgWriter's
    own. A paused node's writer waits (its retries are its own timers; a group under way
    reaches the database once it runs again, and is fenced if its lease passed meanwhile);
    one that cannot reach the store retries as PgWriter does (``down_until``), acknowledging
    nothing meanwhile."""

    def __init__(self, store: SimStore, durability: str = "always"):
        super().__init__(store, durability)
        self.sim = store

    async def run(self, task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
        task_status.started()
        async with self._recv:
            while True:
                try:
                    first = await self._recv.receive()
                except trio.EndOfChannel:
                    break
                group = fill_group(self._recv, [first])
                outcome = await self._transaction(group)
                self._settle(group, outcome)
                self._account(group)

    async def _transaction(self, group: list) -> store_pg._Outcome:
        by_table: dict[str, list] = {}
        finish: dict[str, str] = {}
        for c in group:
            if c.log is not None:
                by_table.setdefault(c.log.table_id, []).append(c)
                if c.ended is not None:
                    finish.setdefault(c.log.table_id, c.ended)
        if not by_table:
            return store_pg._Outcome({}, frozenset(), 0.0)
        # the store out of reach: PgWriter's retries (RETRY_FIRST doubling to RETRY_MAX),
        # nothing of the group acknowledged until a transaction commits
        delay = store_pg.RETRY_FIRST
        while self.sim.unreachable():
            self.retries += 1
            await self.sim.clock.sleep(delay)
            delay = min(delay * 2, store_pg.RETRY_MAX)
        t0 = trio.current_time()
        # the statement reaches the database after half its round trip, and answers after the other half
        rtt = self.sim.db.latency(self.sim.node_id, "commit")
        await trio.sleep(rtt / 2)
        await self.sim.clock.gate()              # a paused node sends it once it runs again
        with trio.CancelScope(shield=True):      # a node killed now: the transaction still commits
            written, fenced = self.sim.db.write_group(self.sim.node_id, by_table, finish)
            await trio.sleep(rtt / 2)
        await self.sim.clock.gate()
        return store_pg._Outcome(written, fenced, trio.current_time() - t0)

    def _account(self, group: list) -> None:
        """The commits acknowledged: their frames are at their numbers in the store."""
        pos: dict[str, int] = {}
        for c in group:
            if c.log is None or not c.data or c.error is not None:
                continue
            frames = tuple(split_frames(c.data))
            t = c.log.table_id
            start = pos.get(t, c.log.next_n - sum(len(split_frames(d.data)) for d in group
                                                  if d.log is c.log and d.data and d.error is None))
            self.sim.db.acked.append((t, start, frames, self.sim.node_id))
            pos[t] = start + len(frames)
