"""The PostgreSQL store (`wildtable serve --store postgresql://...`): tables kept in a
database that several nodes share, their records written by a log writer with the same
interface as the files' (server/logwriter.py).

Schema (created with CREATE TABLE IF NOT EXISTS at start, ``PgStore.ensure_schema``):

    wt_nodes   one row a node: its public URL, heartbeat, load and capacity
    wt_tables  one row a table: its game, its owner node, the owner's lease (epoch and
               lease_until), whether it is finished, since when and how it ended (its game
               over, or expired: waiting for players, or given up in play), its lobby
               entry and its bots
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

One job a module: this one holds the store's errors, its connections, a table's handle
(PgLog) and the group-commit writer (PgWriter); server/store_calls.py what a node asks the
store besides (PgStore); server/store_sql.py the schema and the SQL they share.
"""

from __future__ import annotations

import logging
import struct
import time
from typing import TYPE_CHECKING, Any

import attrs
import trio

from wildtable.protocol.logfmt import FRAME_HEADER

from .interfaces import LogSink, Store, TableLog
from .groupcommit import QUEUE, fill_group, group_commit_phrase, hand_over, next_commit
from .logwriter import DURABILITIES, EXPIRED, OVER, StorageFailed
from .metrics import Metrics
from .oplog import about
from .own_thread import RunSync, own_thread
from .store_sql import GROUP_STATEMENT, MARK_FINISHED

if TYPE_CHECKING:       # server/store_calls.py's names, still known as store_pg.* (__getattr__ below)
    from .store_calls import LobbyRow as LobbyRow
    from .store_calls import NodeRow as NodeRow
    from .store_calls import PgStore as PgStore

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


class StoreError(Exception):
    """The store cannot be used: not installed, refusing this node's login or privileges
    at start, or holding something that is not what we wrote. The sentence says what and
    what to do."""


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


def login_refused(e: BaseException) -> bool:
    """The store refused this node's login: a role, password or database to mend, which
    waiting does not. libpq keeps no SQLSTATE for a connection that failed, so a refusal
    at connect says it by its connection (psycopg's public ``pgconn``): PostgreSQL asked
    for a password and none was given (``needs_password``) or the one given did not let
    it in (``used_password``). A refusal before any password (no such role under trust
    auth, no pg_hba.conf entry) says nothing a program can tell from the database
    starting up, so it is waited out like one, its reason in the log
    (docs/ARCHITECTURE.md, "Store away at start")."""
    psycopg = psycopg_module()
    if not isinstance(e, psycopg.Error):
        return False
    if (e.sqlstate or "").startswith("28"):
        return True         # invalid authorization (SQLSTATE class 28), where there is one
    return e.pgconn is not None and bool(e.pgconn.needs_password or e.pgconn.used_password)


def waitable(e: BaseException) -> bool:
    """An error at start that waiting may mend: the store unreachable (the connection
    refused or lost, a timeout: what the writer retries, ``_transient``), not a login it
    refuses (``login_refused``) nor anything else (a privilege missing, a config error)."""
    return _transient(e) and not login_refused(e)


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
    creator: str | None = None  # the address that made the table (None: unknown), as the store keeps it

    @property
    def name(self) -> str:
        """What game_over calls the log: the file `wildtable export` writes by default."""
        return f"{self.table_id}.wlog"


# ---------------------------------------------------------------- the writer


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
    writer's own connection, in a thread of its own (server/own_thread.py); a commit returns once that transaction
    is committed (durable, with synchronous_commit on), or raises LeaseLost.

    Durability: ``always`` commits with synchronous_commit on (the WAL is flushed before
    COMMIT returns); ``batch`` and ``off`` with synchronous_commit off (PostgreSQL flushes
    within about 0.6 s; a crash of PostgreSQL itself may lose what it had not flushed).
    commit() waits for the transaction in every setting, so the fence holds in every one."""

    paused = False          # LogWriter's full-disk pause: the store has none (it waits, see run)
    failed: StorageFailed | None = None

    def __init__(self, store: Store, durability: str = "always"):
        if durability not in DURABILITIES:
            raise ValueError(f"durability must be one of {', '.join(DURABILITIES)}")
        self.store = store
        self.durability = durability
        self._send, self._recv = trio.open_memory_channel(QUEUE)
        self._conn = None               # the writer's connection (used in its thread only)
        self._run_sync: RunSync = trio.to_thread.run_sync    # its own thread's, while run() runs
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
        if not await hand_over(self._send, c):
            return
        await done.wait()
        if c.error is not None:
            raise c.error

    async def append(self, log: PgLog, data: bytes) -> None:
        """Queue ``data`` with no wait for the store (records nobody is told depend on):
        written with the next group. Fenced out, it is dropped and the table's next commit
        raises LeaseLost."""
        if log.lost:
            return
        await hand_over(self._send, _Commit(log, data, None))

    async def release(self, log: PgLog, ended: str | None = None) -> None:
        """Return once everything queued for ``log`` so far is committed; ``ended``: the
        table is done, its game OVER or EXPIRED waiting for players: nobody is to adopt it
        (its row is marked finished, and how it ended, in the same transaction). Never
        raises LeaseLost (nothing of its own to write)."""
        if ended not in (None, OVER, EXPIRED):
            raise ValueError(f"a table ends {OVER!r} or {EXPIRED!r}, not {ended!r}")
        c = _Commit(log, b"", done := trio.Event(), ended=ended)
        if await hand_over(self._send, c):
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
                conn.execute(MARK_FINISHED, {"finish": finish, "ended": ended})
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
        ok = {r[0] for r in conn.execute(GROUP_STATEMENT, {
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
        left was acknowledged). Its transactions run in a thread of its own for the whole
        run (server/own_thread.py), the one that holds its connection."""
        async with own_thread("wildtable-store") as self._run_sync:
            await self._run(task_status)

    async def _run(self, task_status) -> None:
        task_status.started()
        try:
            async with self._recv:
                while True:
                    try:
                        first = await next_commit(self._recv)
                    except trio.EndOfChannel:
                        break
                    group = fill_group(self._recv, [first])
                    outcome = await self._commit_group(group)
                    self._settle(group, outcome)
        except StorageFailed as e:
            self.failed = e          # tables answer storage_error until the stop (server/table.py)
            raise
        finally:
            with trio.CancelScope(shield=True):
                await self._run_sync(self._finish_thread)

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
                    outcome = await self._run_sync(self._write_group, group, retry)    # beside the Trio thread
            except StorageFailed:
                raise
            except Exception as e:
                if not _transient(e):
                    raise StorageFailed(f"the store refused the table records: {e}") from e
                await self._run_sync(self._drop_connection)
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
                            "and it steps down", t, extra=about(table=t))
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


# PgStore, NodeRow and LobbyRow moved to server/store_calls.py, which imports this module;
# their callers (server/storage.py, cli/offline.py, the tests, bench/) still import them from
# here: imported when first asked for, so there is no import cycle.
_CALLS_NAMES = frozenset({"PgStore", "NodeRow", "LobbyRow"})


def __getattr__(name: str) -> Any:
    if name in _CALLS_NAMES:
        from . import store_calls
        return getattr(store_calls, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
