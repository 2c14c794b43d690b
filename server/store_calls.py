"""What a node asks the PostgreSQL store besides the group commits (``PgStore``): the
schema at start, tables created, read and listed (the replay viewer's finished games
too), the leases (adoption, renewal, giving them up, a restarted node's finished tables),
heartbeats and the lobby across nodes, the bots a table takes with it. Each call is sync,
run in a worker thread on a small pool of connections. Apart from server/store_pg.py (its
errors, connections, PgLog and the group-commit writer) so each module has one job; the
schema and the fence: server/store_pg.py's docstring.
"""

from __future__ import annotations

import threading
from collections import deque
from contextlib import contextmanager

import attrs
import trio

from . import affinity
from .store_pg import LEASE_SECONDS, POOL, PgLog, StoreError, connect, psycopg_module
from .store_sql import ADDED_COLUMNS, HOW_ENDED, IN_ORDER, IS_OVER, SCHEMA, SCHEMA_LOCK


@attrs.frozen
class NodeRow:
    node_id: str
    url: str
    load: int
    capacity: int
    age: float                  # seconds since its last heartbeat (the database's clock)


@attrs.frozen
class LobbyRow:
    table_id: str
    game: str
    owner: str | None
    url: str | None             # the owner's public URL (None: no live owner)
    entry: bytes | None         # the owner's encoded list_tables entry


class PgStore:
    """What a node asks the store besides the group commits (sync: run them in a thread,
    ``await store.call(store.adopt, tid)``, at most POOL at once)."""

    def __init__(self, dsn: str, node_id: str = "", *, lease_seconds: float = LEASE_SECONDS, pool: int = POOL):
        psycopg_module()
        self.dsn = dsn
        self.node_id = node_id
        self.lease_seconds = lease_seconds
        self.limiter = trio.CapacityLimiter(pool)
        self._idle: deque = deque()
        self._lock = threading.Lock()

    # ------------------------------------------------------------ connections
    @contextmanager
    def connection(self):
        """A pooled connection; one that failed is closed, never reused."""
        with self._lock:
            conn = self._idle.pop() if self._idle else None
        if conn is None or conn.closed:
            conn = connect(self.dsn)
        try:
            yield conn
        except BaseException:
            conn.close()
            raise
        with self._lock:
            self._idle.append(conn)

    def close(self) -> None:
        with self._lock:
            while self._idle:
                self._idle.pop().close()

    async def call(self, fn, *args):
        """``fn(*args)`` in a worker thread, on one of the pool's connections."""
        return await affinity.to_thread(fn, *args, limiter=self.limiter)     # beside the Trio thread

    def _ttl(self) -> str:
        return f"{self.lease_seconds} seconds"

    # ------------------------------------------------------------ schema
    def ensure_schema(self) -> None:
        with self.connection() as conn, conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (SCHEMA_LOCK,))
            for statement in SCHEMA:
                conn.execute(statement)
            for table, column, kind in ADDED_COLUMNS:
                if conn.execute("SELECT 1 FROM information_schema.columns WHERE table_schema = current_schema() "
                                "AND table_name = %s AND column_name = %s", (table, column)).fetchone() is None:
                    conn.execute(f"ALTER TABLE {table} ADD COLUMN IF NOT EXISTS {column} {kind}")

    # ------------------------------------------------------------ tables
    def create_table_row(self, table_id: str, game: str, header: bytes, creator: str | None = None) -> PgLog:
        """A new table owned by this node (epoch 1, its lease from now) with its header
        record (n 0), in one transaction; ``creator``: the address that made it. psycopg's
        UniqueViolation if the id is taken."""
        with self.connection() as conn, conn.transaction():
            conn.execute("INSERT INTO wt_tables (table_id, game, owner, epoch, lease_until, creator) "
                         "VALUES (%s, %s, %s, 1, clock_timestamp() + %s::interval, %s)",
                         (table_id, game, self.node_id, self._ttl(), creator))
            conn.execute("INSERT INTO wt_records (table_id, n, data) VALUES (%s, 0, %s)", (table_id, header))
        return PgLog(table_id, 1, 1, creator=creator)

    def table_exists(self, table_id: str) -> bool:
        with self.connection() as conn:
            return conn.execute("SELECT 1 FROM wt_tables WHERE table_id = %s", (table_id,)).fetchone() is not None

    def load_records(self, table_id: str) -> bytes:
        """The table's log: its records in n order, which is its .wlog file. StoreError if
        the table is unknown or its records are not numbered 0, 1, 2, ... (never cut silently)."""
        with self.connection() as conn:
            rows = conn.execute("SELECT n, data FROM wt_records WHERE table_id = %s ORDER BY n", (table_id,)).fetchall()
        if not rows:
            raise StoreError(f"no table {table_id!r} in the store")
        for i, (n, _) in enumerate(rows):
            if n != i:
                raise StoreError(f"table {table_id!r}: its records in the store skip from {i - 1} to {n} "
                                 f"(record {i} is missing); the log is damaged")
        return b"".join(bytes(data) for _, data in rows)

    def table_info(self, table_id: str) -> dict | None:
        """The table's row (game, owner, epoch, finished, lease_left in seconds, the owner's
        url if it is a known node; ended: None while it is not finished, else OVER or
        EXPIRED, a row marked finished before the store kept that counting as over; listed:
        it has a lobby entry, which a finished table keeps while its owner holds it), or None."""
        with self.connection() as conn:
            row = conn.execute(
                "SELECT t.game, t.owner, t.epoch, t.finished, "
                "extract(epoch FROM t.lease_until - clock_timestamp())::float8, n.url, "
                f"{HOW_ENDED}, t.entry IS NOT NULL "
                "FROM wt_tables t LEFT JOIN wt_nodes n ON n.node_id = t.owner WHERE t.table_id = %s",
                (table_id,)).fetchone()
        if row is None:
            return None
        return dict(zip(("game", "owner", "epoch", "finished", "lease_left", "url", "ended", "listed"), row))

    # ------------------------------------------------------------ finished games (the replay viewer)
    def finished_tables(self) -> list[tuple[str, float | None]]:
        """(id, when it was marked finished: Unix time, None if before the store kept that)
        of every finished game (not the waiting tables that expired), the most recently
        finished first."""
        with self.connection() as conn:
            return conn.execute("SELECT table_id, extract(epoch FROM finished_at)::float8 FROM wt_tables "
                                f"WHERE {IS_OVER} ORDER BY finished_at DESC NULLS LAST, created DESC, table_id").fetchall()

    def log_size(self, table_id: str) -> tuple[str, int, int] | None:
        """(what the table is: 'playing', OVER or EXPIRED; bytes of its records, number of
        records) of a table; None if the store has no such table."""
        with self.connection() as conn:
            row = conn.execute(f"SELECT coalesce({HOW_ENDED}, 'playing'), "
                               "coalesce(sum(length(r.data)), 0)::bigint, count(r.n) "
                               "FROM wt_tables t LEFT JOIN wt_records r ON r.table_id = t.table_id "
                               "WHERE t.table_id = %s GROUP BY t.table_id", (table_id,)).fetchone()
        return None if row is None else (row[0], int(row[1]), int(row[2]))

    def log_head(self, table_id: str, max_bytes: int) -> bytes:
        """The first records of a table's log, in order, up to about ``max_bytes`` (whole
        records: its header and the first seat claims)."""
        out, size = [], 0
        with self.connection() as conn:
            for (data,) in conn.execute("SELECT data FROM wt_records WHERE table_id = %s ORDER BY n LIMIT 256",
                                        (table_id,)):
                if size >= max_bytes:
                    break
                out.append(bytes(data))
                size += len(data)
        return b"".join(out)

    def table_ids(self) -> list[str]:
        with self.connection() as conn:
            return [r[0] for r in conn.execute("SELECT table_id FROM wt_tables ORDER BY created, table_id")]

    # ------------------------------------------------------------ leases
    def adoptable(self, limit: int = 100) -> list[str]:
        """Unfinished tables this node may adopt now: its own (a restart), ownerless, or
        with a lease that has passed; oldest first."""
        return self._unowned(limit, "OR owner = %s ", (self.node_id,))

    def expired_tables(self, limit: int = 100) -> list[str]:
        """Unfinished tables any node may adopt now: ownerless, or with a lease that has
        passed (the cluster's adoption loop; never a table whose owner's lease still runs,
        this node's included: one being created here is not adopted from under itself)."""
        return self._unowned(limit)

    def _unowned(self, limit: int, also: str = "", params: tuple = ()) -> list[str]:
        with self.connection() as conn:
            return [r[0] for r in conn.execute(
                f"SELECT table_id FROM wt_tables WHERE NOT finished AND (owner IS NULL {also}"
                "OR lease_until < clock_timestamp()) ORDER BY created, table_id LIMIT %s", (*params, limit))]

    def adopt(self, table_id: str) -> PgLog | None:
        """Take the table's lease (a new epoch, which fences its former owner out) if it is
        unfinished and ownerless, this node's own, or its lease has passed; then read its
        records. (PgLog, its .wlog bytes), or None if it cannot be taken now."""
        with self.connection() as conn:
            with conn.transaction():
                row = conn.execute(
                    "UPDATE wt_tables SET owner = %(me)s, epoch = epoch + 1, "
                    "lease_until = clock_timestamp() + %(ttl)s::interval "
                    "WHERE table_id = %(t)s AND NOT finished AND (owner IS NULL OR owner = %(me)s "
                    "OR lease_until < clock_timestamp()) RETURNING epoch, creator",
                    {"me": self.node_id, "ttl": self._ttl(), "t": table_id}).fetchone()
                if row is None:
                    return None
                n = conn.execute("SELECT count(*) FROM wt_records WHERE table_id = %s", (table_id,)).fetchone()[0]
        return PgLog(table_id, row[0], n, creator=row[1])

    def renew(self) -> dict[str, int]:
        """Extend every lease this node still holds; {table_id: epoch} of those. A table it
        runs that is missing (or with another epoch) was lost: it must step down."""
        with self.connection() as conn:
            return dict(conn.execute(
                "UPDATE wt_tables t SET lease_until = clock_timestamp() + %s::interval FROM ("
                "SELECT table_id FROM wt_tables WHERE owner = %s AND NOT finished AND lease_until > clock_timestamp() "
                f"{IN_ORDER}) AS mine WHERE t.table_id = mine.table_id RETURNING t.table_id, t.epoch",
                (self._ttl(), self.node_id)).fetchall())

    def release_leases(self, table_ids: list[str] | None = None) -> int:
        """Give up this node's leases (of ``table_ids``, or all) of unfinished tables: another
        node may adopt those at once (a node shutting down cleanly). The epoch stays: adoption
        bumps it. Its finished tables stay its own (nobody adopts them; it holds them again
        when it starts again, ``finished_here``)."""
        with self.connection() as conn:
            mine = "owner = %s AND NOT finished" + ("" if table_ids is None else " AND table_id = ANY(%s)")
            cur = conn.execute(f"UPDATE wt_tables t SET owner = NULL FROM (SELECT table_id FROM wt_tables WHERE {mine} "
                               f"{IN_ORDER}) AS m WHERE t.table_id = m.table_id",
                               (self.node_id,) if table_ids is None else (self.node_id, table_ids))
            return cur.rowcount

    def finished_here(self, keep_seconds: float) -> list[tuple[str, int, int, float]]:
        """At a node's start: its finished games to hold again, read-only, as recovery holds
        a finished log from files: (id, epoch, records, seconds since it was marked finished)
        of those marked finished under ``keep_seconds`` ago, the oldest first; never a table
        that expired waiting for players (as recovery never reads expired/). The lobby
        entries of all its finished tables are cleared first: those it holds again are listed
        anew, and no other node lists one it does not hold as held."""
        with self.connection() as conn, conn.transaction():
            conn.execute("UPDATE wt_tables t SET entry = NULL FROM (SELECT table_id FROM wt_tables WHERE owner = %s "
                         f"AND finished AND entry IS NOT NULL {IN_ORDER}) AS m WHERE t.table_id = m.table_id",
                         (self.node_id,))
            return conn.execute(
                "SELECT table_id, epoch, (SELECT count(*) FROM wt_records r WHERE r.table_id = t.table_id), ago "
                "FROM (SELECT table_id, epoch, finished_at, "
                "extract(epoch FROM clock_timestamp() - finished_at)::float8 AS ago FROM wt_tables "
                f"WHERE owner = %s AND {IS_OVER} AND finished_at IS NOT NULL) AS t "
                "WHERE ago < %s::float8 ORDER BY finished_at, table_id", (self.node_id, keep_seconds)).fetchall()

    # ------------------------------------------------------------ nodes and lobby
    def heartbeat(self, url: str, load: int, capacity: int) -> None:
        """Register this node or say it is alive (its heartbeat is the database's clock now)."""
        with self.connection() as conn:
            conn.execute(
                "INSERT INTO wt_nodes (node_id, url, heartbeat, load, capacity, alive) "
                "VALUES (%s, %s, clock_timestamp(), %s, %s, true) ON CONFLICT (node_id) DO UPDATE SET "
                "url = excluded.url, heartbeat = excluded.heartbeat, load = excluded.load, "
                "capacity = excluded.capacity, alive = true",
                (self.node_id, url, load, capacity))

    def node_down(self) -> None:
        """This node stops (a clean shutdown): not alive any more."""
        with self.connection() as conn:
            conn.execute("UPDATE wt_nodes SET alive = false WHERE node_id = %s", (self.node_id,))

    def live_nodes(self, max_age: float) -> list[NodeRow]:
        """Nodes alive with a heartbeat younger than ``max_age`` seconds, this one included."""
        with self.connection() as conn:
            rows = conn.execute(
                "SELECT node_id, url, load, capacity, extract(epoch FROM clock_timestamp() - heartbeat)::float8 "
                "FROM wt_nodes WHERE alive AND heartbeat > clock_timestamp() - %s::interval ORDER BY node_id",
                (f"{max_age} seconds",)).fetchall()
        return [NodeRow(*r) for r in rows]

    def set_entries(self, entries: dict[str, bytes | None]) -> None:
        """The lobby entries of tables this node owns (list_tables across nodes)."""
        if not entries:
            return
        ids = sorted(entries)
        with self.connection() as conn:
            # one statement, its rows locked in table_id order (IN_ORDER): row by row in one
            # transaction, in the dict's order, it deadlocked with the group commit
            conn.execute(
                "UPDATE wt_tables t SET entry = w.entry FROM unnest(%s::text[], %s::bytea[]) AS w(table_id, entry), "
                f"(SELECT table_id FROM wt_tables WHERE table_id = ANY(%s) AND owner = %s {IN_ORDER}) AS m "
                "WHERE t.table_id = w.table_id AND t.table_id = m.table_id",
                (ids, [entries[t] for t in ids], ids, self.node_id))

    def set_bots(self, table_id: str, bots: bytes | None) -> None:
        """The server-run bots of a table this node owns (msgpack), for its adopter."""
        with self.connection() as conn:
            conn.execute("UPDATE wt_tables SET bots = %s WHERE table_id = %s AND owner = %s",
                         (bots, table_id, self.node_id))

    def bots_of(self, table_id: str) -> bytes | None:
        with self.connection() as conn:
            row = conn.execute("SELECT bots FROM wt_tables WHERE table_id = %s", (table_id,)).fetchone()
        return bytes(row[0]) if row and row[0] is not None else None

    def lobby(self, max_age: float) -> list[LobbyRow]:
        """Every table with a lobby entry that is unfinished (a dead node's too, until it is
        adopted) or finished and still held by a live node, with its owner, the owner's
        URL if the owner is alive (heartbeat younger than ``max_age``), and its entry."""
        with self.connection() as conn:
            rows = conn.execute(
                "SELECT t.table_id, t.game, t.owner, n.url, t.entry FROM wt_tables t "
                "LEFT JOIN wt_nodes n ON n.node_id = t.owner AND n.alive "
                "AND n.heartbeat > clock_timestamp() - %s::interval "
                "WHERE t.entry IS NOT NULL AND (NOT t.finished OR n.url IS NOT NULL) "
                "ORDER BY t.created, t.table_id",
                (f"{max_age} seconds",)).fetchall()
        return [LobbyRow(t, g, o, u, bytes(e) if e is not None else None) for t, g, o, u, e in rows]
