"""The PostgreSQL store (`wildtable serve --store postgresql://...`): tables kept in a
database that several nodes share, their records written by a log writer with the same
interface as the files' (server/logwriter.py).

Schema (created with CREATE TABLE IF NOT EXISTS at start, ``PgStore.ensure_schema``):

    wt_nodes   one row a node: its public URL, heartbeat, load and capacity
    wt_tables  one row a table: its game, its owner node, the owner's lease (epoch and
               lease_until), whether it is finished, since when and how it ended (its game
               over, or expired waiting for players), its lobby entry and its bots
    wt_records (table_id, n, data): record ``n`` of a table's log, ``data`` exactly the
               bytes of that .wlog frame (n 0 is the header): the rows in n order ARE
               the .wlog file (``load_records``, `wildtable export`)

Every time is the database's clock (clock_timestamp()), never a node's.

Fencing. A table has one owner, holding a lease (``epoch``, ``lease_until``). Every group
commit is one transaction that first locks the rows of its tables and checks the lease:

    SELECT table_id, epoch FROM wt_tables WHERE table_id = ANY(...) AND owner = me
       AND lease_until > clock_timestamp() FOR UPDATE

and writes the records of the tables whose (table_id, epoch) is the writer's handle's. A
table that fails the check gets LeaseLost from its commit: nothing of it was written,
nothing may be acknowledged, its table steps down. Adoption bumps the epoch under the same
row lock, so a node that lost a lease (crashed, paused past it, cut off from the store)
can never write to that table again, whatever its clock says.

The driver is psycopg 3. Its async side is asyncio-only, so every call runs in a worker
thread (trio.to_thread): the writer on a connection of its own, the rest (``PgStore``'s
functions) on a small pool of connections, at most ``POOL`` at once.

The store unreachable: the writer retries the group with a bounded backoff and logs it;
nothing is acknowledged meanwhile (the arbiters wait in commit(), the bounded queue fills
and the connections' readers wait in turn). Once the lease has passed, the fence decides:
the tables step down (and are adopted, by this node or another, from what was committed).
A retried group whose first attempt may have committed (the connection broke during
COMMIT) is written only if it was not: the rows already there are counted first.
"""

from __future__ import annotations

import logging
import struct
import threading
import time
from collections import deque
from contextlib import contextmanager

import attrs
import trio

from wildtable.protocol.logfmt import FRAME_HEADER

from .interfaces import LogSink, Store, TableLog
from .logwriter import DURABILITIES, EXPIRED, OVER, QUEUE, StorageFailed, fill_group, group_commit_phrase
from .metrics import Metrics

log = logging.getLogger("wildtable.server")

LEASE_SECONDS = 5.0       # a table's lease (serve --lease-seconds); renewed every third of it
POOL = 4                  # connections of PgStore's functions at most (the writer has its own)
CONNECT_TIMEOUT = 5       # seconds to connect to the store
STATEMENT_TIMEOUT = 15    # seconds a statement may take (a COMMIT waiting on the disk included)
LOCK_TIMEOUT = 5          # seconds a statement may wait for a row lock
RETRY_FIRST = 0.05        # seconds before the first retry of a group the store did not take
RETRY_MAX = 2.0           # ... doubling up to this
UNREACHABLE_LOG_EVERY = 10.0   # seconds between the lines that say the store is still unreachable
CLOSE_GIVE_UP = 10.0      # seconds a closing writer keeps retrying an unreachable store

INSTALL_HINT = "pip install 'wildtable[postgres]' (psycopg 3 with its binary wheel)"

SCHEMA = (
    """CREATE TABLE IF NOT EXISTS wt_nodes (
        node_id text PRIMARY KEY,
        url text NOT NULL,
        heartbeat timestamptz NOT NULL,
        load integer NOT NULL DEFAULT 0,
        capacity integer NOT NULL,
        alive boolean NOT NULL DEFAULT true)""",
    """CREATE TABLE IF NOT EXISTS wt_tables (
        table_id text PRIMARY KEY,
        game text NOT NULL,
        owner text,
        epoch bigint NOT NULL DEFAULT 1,
        lease_until timestamptz NOT NULL,
        finished boolean NOT NULL DEFAULT false,
        entry bytea,
        bots bytea,
        created timestamptz NOT NULL DEFAULT now(),
        finished_at timestamptz,
        ended text CHECK (ended IN ('over', 'expired')))""",
    """CREATE TABLE IF NOT EXISTS wt_records (
        table_id text NOT NULL REFERENCES wt_tables,
        n bigint NOT NULL,
        data bytea NOT NULL,
        PRIMARY KEY (table_id, n))""",
    "CREATE INDEX IF NOT EXISTS wt_tables_owner ON wt_tables (owner) WHERE NOT finished",
)
# columns added since the first stores were made, (table, column, type): each is added to
# a store that lacks it, and only there (ALTER TABLE takes an ACCESS EXCLUSIVE lock even
# when the column exists, which would stall every node's commits at each node's start)
ADDED_COLUMNS = (
    ("wt_tables", "finished_at", "timestamptz"),    # when it was marked finished; NULL: before this column
    # how it ended: its game 'over', or 'expired' waiting for players (no game to replay);
    # NULL: not finished, or marked finished before this column, which counts as over
    ("wt_tables", "ended", "text CHECK (ended IN ('over', 'expired'))"),
)
# one schema at a time: CREATE TABLE IF NOT EXISTS run by two nodes at once can still
# collide in the catalog, so ensure_schema holds this advisory lock while it runs
_SCHEMA_LOCK = 0x77746162   # "wtab"


# Every statement that locks several rows of wt_tables locks them in table_id order (the
# group commit, the renewal, the lobby entries, giving leases up): two of them that wait
# for each other's rows would deadlock, which PostgreSQL finds only after deadlock_timeout
# (1 s), a stall every player at those tables waits through, and the writer retries its
# group. A 1,000-player bench/load.py run on PostgreSQL had 4 to 8 such retries (its p99
# over a second) before; none since (tests/server/test_store_lock_order.py).
_IN_ORDER = "ORDER BY table_id FOR UPDATE"

# tables marked finished (``t``, from the rows ``f`` (table_id, ended) of %(finish)s and
# %(ended)s): nobody adopts them any more; and, the first time, since when (the replay viewer
# lists the most recently finished first, and a node restarted holds its own finished tables
# again for --keep-finished from then) and how they ended (the game over, or expired waiting)
_MARK_FINISHED = ("UPDATE wt_tables t SET finished = true, finished_at = coalesce(t.finished_at, clock_timestamp()), "
                  "ended = coalesce(t.ended, f.ended) "
                  "FROM unnest(%(finish)s::text[], %(ended)s::text[]) AS f(table_id, ended) "
                  "WHERE t.table_id = f.table_id")
# a finished table whose game is over, not one that expired waiting for players (those
# marked finished before wt_tables.ended was kept count as over: their replay still has to
# end the game, or the viewer refuses it)
_OVER = "finished AND ended IS DISTINCT FROM 'expired'"
# how a table ended, in SQL: OVER or EXPIRED, NULL while it is not finished (table_info, log_size)
_HOW_ENDED = f"CASE WHEN {_OVER} THEN '{OVER}' WHEN finished THEN '{EXPIRED}' END"


class StoreError(Exception):
    """The store cannot be used: not installed, unreachable at start, or holding something
    that is not what we wrote. The sentence says what and what to do."""


class LeaseLost(Exception):
    """This node no longer holds the lease of ``table_id``: another node adopted it, or the
    lease passed (the node was paused or cut off from the store). Nothing of the commit was
    written; the table must stop acknowledging and step down."""

    def __init__(self, table_id: str):
        super().__init__(f"table {table_id}: this node's lease was lost (another node owns it now, or the lease passed)")
        self.table_id = table_id


def psycopg_module():
    """psycopg, or StoreError saying how to install it."""
    try:
        import psycopg
    except ImportError:
        raise StoreError(f"--store needs the PostgreSQL driver, which is not installed: {INSTALL_HINT}") from None
    return psycopg


def id_taken(e: BaseException) -> bool:
    """The error of create_table_row when another node has already made a table with that
    id (ids are drawn per node): a unique violation."""
    return isinstance(e, psycopg_module().errors.UniqueViolation)


def _transient(e: BaseException) -> bool:
    """An error after which the same work may succeed on a new connection (the store gone,
    restarting, a lock or statement timeout, a serialization failure)."""
    psycopg = psycopg_module()
    return isinstance(e, (psycopg.OperationalError, psycopg.InterfaceError, psycopg.errors.TransactionRollback))


def redact(dsn: str) -> str:
    """``dsn`` for a log line or a message: its parameters without the password."""
    try:
        from psycopg.conninfo import conninfo_to_dict, make_conninfo
        params = conninfo_to_dict(dsn)
        params.pop("password", None)
        return make_conninfo("", **params)
    except Exception:
        return "the store"


def split_frames(data: bytes) -> list[bytes]:
    """The whole .wlog frames ``data`` is made of (one row each); ValueError if it is not
    whole frames (our bug: a table hands the writer whole records only)."""
    out = []
    pos, n = 0, len(data)
    unpack = struct.Struct("<I").unpack_from
    while pos < n:
        if pos + FRAME_HEADER > n:
            raise ValueError(f"a log record cut at byte {pos} of {n}")
        end = pos + FRAME_HEADER + unpack(data, pos)[0]
        if end > n:
            raise ValueError(f"a log record of {end - pos} bytes at byte {pos} of {n}")
        out.append(data[pos:end])
        pos = end
    return out


def connect(dsn: str):
    """A connection to the store with the timeouts every wait on it must have."""
    psycopg = psycopg_module()
    conn = psycopg.connect(dsn, autocommit=True, connect_timeout=CONNECT_TIMEOUT, application_name="wildtable",
                           keepalives=1, keepalives_idle=5, keepalives_interval=2, keepalives_count=3,
                           tcp_user_timeout=STATEMENT_TIMEOUT * 1000)
    try:
        conn.execute(f"SET statement_timeout = '{STATEMENT_TIMEOUT}s'")
        conn.execute(f"SET lock_timeout = '{LOCK_TIMEOUT}s'")
    except BaseException:
        conn.close()
        raise
    return conn


@attrs.define(eq=False)
class PgLog:
    """A table's log in the store: the writer's handle, as LogFile is for a file. ``epoch``
    is the lease the table was created or adopted with; ``next_n`` the number of the next
    record. Only the PgWriter changes ``next_n`` and ``lost``."""
    table_id: str
    epoch: int
    next_n: int
    lost: bool = False          # a commit was fenced out: every later one is refused at once

    @property
    def name(self) -> str:
        """What game_over calls the log: the file `wildtable export` writes by default."""
        return f"{self.table_id}.wlog"


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
        return await trio.to_thread.run_sync(fn, *args, limiter=self.limiter)

    def _ttl(self) -> str:
        return f"{self.lease_seconds} seconds"

    # ------------------------------------------------------------ schema
    def ensure_schema(self) -> None:
        with self.connection() as conn, conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK,))
            for statement in SCHEMA:
                conn.execute(statement)
            for table, column, kind in ADDED_COLUMNS:
                if conn.execute("SELECT 1 FROM information_schema.columns WHERE table_schema = current_schema() "
                                "AND table_name = %s AND column_name = %s", (table, column)).fetchone() is None:
                    conn.execute(f"ALTER TABLE {table} ADD COLUMN IF NOT EXISTS {column} {kind}")

    # ------------------------------------------------------------ tables
    def create_table_row(self, table_id: str, game: str, header: bytes) -> PgLog:
        """A new table owned by this node (epoch 1, its lease from now) with its header
        record (n 0), in one transaction. psycopg's UniqueViolation if the id is taken."""
        with self.connection() as conn, conn.transaction():
            conn.execute("INSERT INTO wt_tables (table_id, game, owner, epoch, lease_until) "
                         "VALUES (%s, %s, %s, 1, clock_timestamp() + %s::interval)",
                         (table_id, game, self.node_id, self._ttl()))
            conn.execute("INSERT INTO wt_records (table_id, n, data) VALUES (%s, 0, %s)", (table_id, header))
        return PgLog(table_id, 1, 1)

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
                f"{_HOW_ENDED}, t.entry IS NOT NULL "
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
                                f"WHERE {_OVER} ORDER BY finished_at DESC NULLS LAST, created DESC, table_id").fetchall()

    def log_size(self, table_id: str) -> tuple[str, int, int] | None:
        """(what the table is: 'playing', OVER or EXPIRED; bytes of its records, number of
        records) of a table; None if the store has no such table."""
        with self.connection() as conn:
            row = conn.execute(f"SELECT coalesce({_HOW_ENDED}, 'playing'), "
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
                    "OR lease_until < clock_timestamp()) RETURNING epoch",
                    {"me": self.node_id, "ttl": self._ttl(), "t": table_id}).fetchone()
                if row is None:
                    return None
                n = conn.execute("SELECT count(*) FROM wt_records WHERE table_id = %s", (table_id,)).fetchone()[0]
        return PgLog(table_id, row[0], n)

    def renew(self) -> dict[str, int]:
        """Extend every lease this node still holds; {table_id: epoch} of those. A table it
        runs that is missing (or with another epoch) was lost: it must step down."""
        with self.connection() as conn:
            return dict(conn.execute(
                "UPDATE wt_tables t SET lease_until = clock_timestamp() + %s::interval FROM ("
                "SELECT table_id FROM wt_tables WHERE owner = %s AND NOT finished AND lease_until > clock_timestamp() "
                f"{_IN_ORDER}) AS mine WHERE t.table_id = mine.table_id RETURNING t.table_id, t.epoch",
                (self._ttl(), self.node_id)).fetchall())

    def release_leases(self, table_ids: list[str] | None = None) -> int:
        """Give up this node's leases (of ``table_ids``, or all) of unfinished tables: another
        node may adopt those at once (a node shutting down cleanly). The epoch stays: adoption
        bumps it. Its finished tables stay its own (nobody adopts them; it holds them again
        when it starts again, ``finished_here``)."""
        with self.connection() as conn:
            mine = "owner = %s AND NOT finished" + ("" if table_ids is None else " AND table_id = ANY(%s)")
            cur = conn.execute(f"UPDATE wt_tables t SET owner = NULL FROM (SELECT table_id FROM wt_tables WHERE {mine} "
                               f"{_IN_ORDER}) AS m WHERE t.table_id = m.table_id",
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
                         f"AND finished AND entry IS NOT NULL {_IN_ORDER}) AS m WHERE t.table_id = m.table_id",
                         (self.node_id,))
            return conn.execute(
                "SELECT table_id, epoch, (SELECT count(*) FROM wt_records r WHERE r.table_id = t.table_id), ago "
                "FROM (SELECT table_id, epoch, finished_at, "
                "extract(epoch FROM clock_timestamp() - finished_at)::float8 AS ago FROM wt_tables "
                f"WHERE owner = %s AND {_OVER} AND finished_at IS NOT NULL) AS t "
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
            # one statement, its rows locked in table_id order (_IN_ORDER): row by row in one
            # transaction, in the dict's order, it deadlocked with the group commit
            conn.execute(
                "UPDATE wt_tables t SET entry = w.entry FROM unnest(%s::text[], %s::bytea[]) AS w(table_id, entry), "
                f"(SELECT table_id FROM wt_tables WHERE table_id = ANY(%s) AND owner = %s {_IN_ORDER}) AS m "
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


# ---------------------------------------------------------------- the writer

# A first attempt at a group: one statement, committed on its own (autocommit). Its WITH
# parts run once each whatever reads them; FOR UPDATE holds the rows of the tables until
# the end, so an adoption waits for it (or it for the adoption, and then finds the epoch
# changed).
_GROUP_STATEMENT = """
WITH held AS (
    SELECT t.table_id FROM wt_tables t
    JOIN unnest(%(ids)s::text[], %(epochs)s::int8[]) AS w(table_id, epoch)
      ON w.table_id = t.table_id AND w.epoch = t.epoch
    WHERE t.owner = %(me)s AND t.lease_until > clock_timestamp()
    ORDER BY t.table_id FOR UPDATE OF t),
written AS (
    INSERT INTO wt_records (table_id, n, data)
    SELECT r.table_id, r.n, r.data FROM unnest(%(t)s::text[], %(n)s::int8[], %(d)s::bytea[]) AS r(table_id, n, data)
    WHERE r.table_id IN (SELECT table_id FROM held)),
finished AS (
    """ + _MARK_FINISHED + """ AND t.table_id IN (SELECT table_id FROM held))
SELECT table_id FROM held
"""


@attrs.define(eq=False)
class _Commit:
    log: PgLog | None
    data: bytes
    done: trio.Event | None
    ended: str | None = None     # OVER or EXPIRED: mark the table finished (nobody adopts it) once written
    error: BaseException | None = None


@attrs.frozen
class _Outcome:
    written: dict                # table_id -> records written
    fenced: frozenset            # table_ids fenced out
    seconds: float


class PgWriter:
    """The log writer on PostgreSQL: LogWriter's interface (commit, append, release, run,
    close, summary) for PgLog handles. One group of commits is one transaction on the
    writer's own connection, in a worker thread; a commit returns once that transaction
    is committed (durable, with synchronous_commit on), or raises LeaseLost.

    Durability: ``always`` commits with synchronous_commit on (the WAL is flushed before
    COMMIT returns); ``batch`` and ``off`` with synchronous_commit off (PostgreSQL flushes
    within about 0.6 s; a crash of PostgreSQL itself may lose what it had not flushed).
    commit() waits for the transaction in every setting, so the fence holds in every one."""

    def __init__(self, store: Store, durability: str = "always"):
        if durability not in DURABILITIES:
            raise ValueError(f"durability must be one of {', '.join(DURABILITIES)}")
        self.store = store
        self.durability = durability
        self._send, self._recv = trio.open_memory_channel(QUEUE)
        self._conn = None               # the writer's connection (used in its thread only)
        self._closing = False
        self.groups = 0
        self.transactions = 0           # group transactions that wrote records (or were fenced out)
        self.records = 0
        self.bytes_written = 0
        self.fenced = 0                 # commits refused by the fence
        self.retries = 0
        self.commit_seconds = 0.0       # time in the group transactions (the group-commit latency)
        self.commit_max = 0.0
        self.unreachable_seconds = 0.0
        self.timings: Metrics | None = None     # the server's: each group commit, each failed attempt

    # ------------------------------------------------------------ the tables' side
    async def commit(self, log: PgLog, data: bytes) -> None:
        """Write ``data`` (whole .wlog frames) to ``log``; return once it is committed.
        LeaseLost if this node no longer holds the table's lease (nothing was written)."""
        if log.lost:
            raise LeaseLost(log.table_id)
        c = _Commit(log, data, done := trio.Event())
        await self._send.send(c)
        await done.wait()
        if c.error is not None:
            raise c.error

    async def append(self, log: PgLog, data: bytes) -> None:
        """Queue ``data`` with no wait for the store (records nobody is told depend on):
        written with the next group. Fenced out, it is dropped and the table's next commit
        raises LeaseLost."""
        if log.lost:
            return
        await self._send.send(_Commit(log, data, None))

    async def release(self, log: PgLog, ended: str | None = None) -> None:
        """Return once everything queued for ``log`` so far is committed; ``ended``: the
        table is done, its game OVER or EXPIRED waiting for players: nobody is to adopt it
        (its row is marked finished, and how it ended, in the same transaction). Never
        raises LeaseLost (nothing of its own to write)."""
        if ended not in (None, OVER, EXPIRED):
            raise ValueError(f"a table ends {OVER!r} or {EXPIRED!r}, not {ended!r}")
        c = _Commit(log, b"", done := trio.Event(), ended=ended)
        await self._send.send(c)
        await done.wait()

    def close(self) -> None:
        """No more commits: run() writes what is queued and returns."""
        self._closing = True
        self._send.close()

    def summary(self) -> str:
        return (f"{self.groups} groups ({self.transactions} PostgreSQL transactions wrote records), {self.records} records, "
                f"{self.bytes_written} bytes, {self.fenced} commits fenced out, {self.retries} retries; "
                + group_commit_phrase(*self.group_commit_ms()))

    def group_commit_ms(self) -> tuple[float, float, int]:
        """(mean, max, count) of the group transactions, in ms (bench/load.py prints them)."""
        mean = self.commit_seconds / self.transactions * 1000 if self.transactions else 0.0
        return mean, self.commit_max * 1000, self.transactions

    # ------------------------------------------------------------ the worker thread
    def _connection(self):
        if self._conn is None or self._conn.closed:
            self._conn = connect(self.store.dsn)
            if self.durability != "always":
                self._conn.execute("SET synchronous_commit = off")
        return self._conn

    def _drop_connection(self) -> None:
        if self._conn is not None:
            try:
                self._conn.close()
            except Exception:
                pass
            self._conn = None

    def _write_group(self, group: list[_Commit], retry: bool) -> _Outcome:
        """One transaction: lock and check the leases of the group's tables, write the
        records of those still held, mark the finished ones. A first attempt is one
        statement (``_write_at_once``); a retry (a former attempt may have committed) is a
        transaction that counts the rows there before it writes anything."""
        by_table: dict[str, list[_Commit]] = {}
        for c in group:
            if c.log is not None:
                by_table.setdefault(c.log.table_id, []).append(c)
        if not by_table:
            return _Outcome({}, frozenset(), 0.0)
        me = self.store.node_id
        conn = self._connection()
        if not retry:
            # one round trip (measured here, one commit at a time: median 1.3 to 1.8 ms
            # against 2.0 to 3.8 for the four statements below)
            return self._write_at_once(conn, by_table)
        written: dict[str, int] = {}
        with conn.transaction():
            ids = list(by_table)
            held = dict(conn.execute(
                "SELECT table_id, epoch FROM wt_tables WHERE table_id = ANY(%s) AND owner = %s "
                "AND lease_until > clock_timestamp() ORDER BY table_id FOR UPDATE", (ids, me)).fetchall())
            ok = [t for t in ids if held.get(t) == by_table[t][0].log.epoch]  # type: ignore[union-attr]  # by_table: commits with a log
            fenced = frozenset(ids) - set(ok)
            there: dict[str, int] = {}
            if ok:
                there = dict(conn.execute("SELECT table_id, max(n) + 1 FROM wt_records WHERE table_id = ANY(%s) "
                                          "GROUP BY table_id", (ok,)).fetchall())
            rows = []
            finish, ended = [], []
            for t in ok:
                commits = by_table[t]
                log_ = commits[0].log
                assert log_ is not None       # (by_table holds commits with a log)
                frames = [f for c in commits if c.data for f in split_frames(c.data)]
                count = there.get(t, 0)
                if count == log_.next_n + len(frames):
                    written[t] = len(frames)        # the former attempt committed them
                    frames = []
                elif count != log_.next_n:
                    raise StorageFailed(f"table {t}: the store holds {count} records where this node "
                                        f"wrote {log_.next_n} (and was writing {len(frames)} more)")
                for i, f in enumerate(frames):
                    rows.append((t, log_.next_n + i, f))
                written.setdefault(t, len(frames))
                how = _ended(commits)
                if how is not None:
                    finish.append(t)
                    ended.append(how)
            if rows:
                with conn.cursor() as cur:
                    with cur.copy("COPY wt_records (table_id, n, data) FROM STDIN (FORMAT BINARY)") as copy:
                        copy.set_types(["text", "int8", "bytea"])
                        for row in rows:
                            copy.write_row(row)
            if finish:
                conn.execute(_MARK_FINISHED, {"finish": finish, "ended": ended})
        return _Outcome(written, fenced, 0.0)

    def _write_at_once(self, conn, by_table: dict) -> _Outcome:
        """The group as ONE statement, committed as it ends (so one round trip to the store):
        lock and check the leases, insert the records of the tables still held, mark the
        finished ones (what ``_write_group`` does in four statements, for a first attempt)."""
        ids, epochs, finish, ended = [], [], [], []
        tids, ns, datas = [], [], []
        for t, commits in by_table.items():
            log_ = commits[0].log
            ids.append(t)
            epochs.append(log_.epoch)
            n = log_.next_n
            for c in commits:
                if c.data:
                    for f in split_frames(c.data):
                        tids.append(t)
                        ns.append(n)
                        datas.append(f)
                        n += 1
            how = _ended(commits)
            if how is not None:
                finish.append(t)
                ended.append(how)
        ok = {r[0] for r in conn.execute(_GROUP_STATEMENT, {
            "ids": ids, "epochs": epochs, "me": self.store.node_id, "t": tids, "n": ns, "d": datas,
            "finish": finish, "ended": ended}).fetchall()}
        written = {t: 0 for t in ok}
        for t in tids:
            if t in ok:
                written[t] += 1
        return _Outcome(written, frozenset(ids) - ok, 0.0)

    def _finish_thread(self) -> None:
        self._drop_connection()

    # ------------------------------------------------------------ the task
    async def run(self, task_status=trio.TASK_STATUS_IGNORED) -> None:
        """Commit groups until the channel is closed and drained. Between attempts on an
        unreachable store it waits (RETRY_FIRST doubling to RETRY_MAX) and says so; once
        closed it gives up after CLOSE_GIVE_UP seconds (StorageFailed: nothing of what is
        left was acknowledged)."""
        task_status.started()
        try:
            async with self._recv:
                while True:
                    try:
                        first = await self._recv.receive()
                    except trio.EndOfChannel:
                        break
                    group = fill_group(self._recv, [first])
                    outcome = await self._commit_group(group)
                    self._settle(group, outcome)
        finally:
            with trio.CancelScope(shield=True):
                await trio.to_thread.run_sync(self._finish_thread)

    async def _commit_group(self, group: list[_Commit]) -> _Outcome:
        """The group's transaction, retried while the store is unreachable."""
        retry = False
        delay = RETRY_FIRST
        down_since = None
        last_said = 0.0
        while True:
            t0 = time.perf_counter()
            try:
                with trio.CancelScope(shield=True):
                    outcome = await trio.to_thread.run_sync(self._write_group, group, retry)
            except StorageFailed:
                raise
            except Exception as e:
                if not _transient(e):
                    raise StorageFailed(f"the store refused the table records: {e}") from e
                await trio.to_thread.run_sync(self._drop_connection)
                now = trio.current_time()
                waiting = len(group) + self._recv.statistics().current_buffer_used
                if down_since is None:
                    down_since = last_said = now
                    log.warning("store unreachable (%s): %d commit(s) wait, nothing is acknowledged until it answers; "
                                "retrying (see that PostgreSQL runs and this node can reach it)", first_line(e), waiting)
                elif now - last_said >= UNREACHABLE_LOG_EVERY:
                    last_said = now
                    log.warning("store still unreachable after %.0f s (%s): %d commit(s) wait, none acknowledged",
                                now - down_since, first_line(e), waiting)
                if self._closing and now - down_since >= CLOSE_GIVE_UP:
                    raise StorageFailed(f"the store is unreachable ({first_line(e)}) and the server is stopping: "
                                        f"{waiting} commit(s) were not written, none of them acknowledged") from e
                self.retries += 1
                if self.timings is not None:
                    self.timings.store_error("write")
                retry = True
                await trio.sleep(delay)
                delay = min(delay * 2, RETRY_MAX)
                continue
            if down_since is not None:
                gone = trio.current_time() - down_since
                self.unreachable_seconds += gone
                log.warning("store reachable again after %.1f s; the waiting commits are written", gone)
            # the group-commit latency as LogWriter's: from the hand-over to the thread to its return
            return attrs.evolve(outcome, seconds=time.perf_counter() - t0)

    def _settle(self, group: list[_Commit], outcome: _Outcome) -> None:
        """After the transaction: number the next records, fence the lost, wake the waiting."""
        handles: dict[str, PgLog] = {}
        for c in group:
            if c.log is not None:
                handles[c.log.table_id] = c.log
        for t, k in outcome.written.items():
            handles[t].next_n += k
            self.records += k
        # a table fenced out with records of its own in the group lost them; one that only
        # waited for what it had queued (a release: a finished table forgotten long after its
        # lease passed) lost nothing, and is neither counted nor said to be lost
        refused = {c.log.table_id for c in group if c.data and c.log is not None and c.log.table_id in outcome.fenced}
        for t in refused:
            h = handles[t]
            if not h.lost:
                h.lost = True
                log.warning("table %s: lease lost (another node owns it, or it passed): its records are refused "
                            "and it steps down", t)
        if any(outcome.written.values()) or outcome.fenced:
            self.transactions += 1
            self.commit_seconds += outcome.seconds
            self.commit_max = max(self.commit_max, outcome.seconds)
            if self.timings is not None:
                self.timings.group_committed(outcome.seconds)
        self.groups += 1
        for c in group:
            if c.data and c.log is not None and c.log.table_id in refused:
                self.fenced += 1
                c.error = LeaseLost(c.log.table_id)
            elif c.data:
                self.bytes_written += len(c.data)
            if c.done is not None:
                c.done.set()


def _ended(commits: list[_Commit]) -> str | None:
    """How the table of ``commits`` ended, if one of them says (it is to be marked finished)."""
    return next((c.ended for c in commits if c.ended is not None), None)


def first_line(e: BaseException) -> str:
    """The first line of what an error says (psycopg's go on with hints on more lines)."""
    text = str(e).strip() or type(e).__name__
    return text.splitlines()[0]


def _is_a_store(store: PgStore, writer: PgWriter, log: PgLog) -> tuple[Store, LogSink[PgLog], TableLog]:
    """(For mypy: PgStore, PgWriter and PgLog satisfy server/interfaces.py.)"""
    return store, writer, log
