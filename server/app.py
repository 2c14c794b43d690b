"""The server: lobby, tables, and the lifetimes of all its tasks.

    listener --> Connection (reader) --requests--> Table arbiter --records--> LogWriter
                     ^                                  |        (group commit, fsync)
                     +--- Connection (writer) <-backlog-+  per connection, bounded
                          (a frame goes straight to the socket when it is free)

Its settings are one ServerConfig (server/config.py); where the tables' logs live, files
in the data dir or a store a cluster shares, is decided once (server/storage.py), and
the two kinds are server/local_tables.py and server/store_tables.py.
"""

from __future__ import annotations

import datetime
import logging
import math
import os
import re
import secrets
import socket
import stat
from functools import partial
from typing import Any, Callable

import trio

from wildtable import __version__
from wildtable.protocol import messages as m
from wildtable.protocol.codec import MAX_SERVER_FRAME, packb
from wildtable.protocol.engine import game as find_game
from wildtable.protocol.errors import IllegalAction

from . import wire
from .botseats import BotHost
from .cluster import Cluster
from .config import ServerConfig
from .connection import CLOSE_TRY_LATER, Connection, peer_kernel_delay
from .datadir import DataDirLock, unusable
from . import diskfull
from .forwarded import Address, AddressCounts, peer_address
from .health import PROBE_EVERY, Health, probe_data_dir
from .interfaces import LogSink, Store
from .local_tables import DATA_DIR_MODE, EXPIRED_DIR, FINISHED_DIR, LOG_SUFFIX
from .logwriter import ROOM_ERRNOS, StorageFailed
from .metrics import Metrics
from .open_tables import OpenTables
from .opsport import OpsPort
from .prober import Prober
from .timers import Timers
from .sdnotify import notify
from .storage import TableStorage, choose_storage
from .table import RefusalBudget, Table, secure_permutation
from .web import WebFiles
from .world import RealWorld, World
from .oplog import about

log = logging.getLogger("wildtable.server")

_TABLE_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
LIST_BUDGET = MAX_SERVER_FRAME // 2   # bytes of table entries in one list_tables answer at most
LIST_ENTRY_MAX = 4096                 # an entry's size is bounded (name, players, settings the game checked)


def _array_header(n: int) -> bytes:
    if n < 16:
        return bytes((0x90 | n,))
    return b"\xdc" + n.to_bytes(2, "big") if n < 1 << 16 else b"\xdd" + n.to_bytes(4, "big")


def table_list_frame(entries: list[bytes], omitted: int) -> bytes:
    """``encode(TableList(tables, omitted))`` from the tables' entries encoded already
    (the same bytes: a msgpack array is its header followed by its items)."""
    parts = [packb("type"), packb(m.TableList.TAG)]  # type: ignore[attr-defined]  # TAG: set by @msg
    if entries:
        parts += [packb("tables"), _array_header(len(entries)), *entries]
    if omitted:
        parts += [packb("omitted"), packb(omitted)]
    return bytes((0x80 | 1 + bool(entries) + bool(omitted),)) + b"".join(parts)


class Server:
    def __init__(self, config: ServerConfig, *, world: World | None = None, store: Store | None = None,
                 store_sink: LogSink[Any] | None = None, chance=None, kernel_delay=None, table_ids=None):
        """``config``: every setting (server/config.py). The rest is what it runs on: the
        network, disk, wall clock and worker threads (``world``, server/world.py: the real
        ones, or the simulator's); a Store object of another world's with its log sink
        (``store``, ``store_sink``: the simulator's), instead of the DSN config.store;
        where shuffles come from (``chance``: size -> permutation; the OS's secure source,
        or a seeded function in tests to make deals reproducible; the CLI never passes one);
        fair order's kernel bound (``kernel_delay``: half the kernel's round trip of a
        peer's TCP connection, server/fairorder.py; a test behind a delaying proxy adds the
        proxy's delay); new table ids (``table_ids``: "t" + 8 random hex digits; tests pass a
        fixed sequence to make two nodes draw the same one)."""
        self.config = config
        self.world: World = world or RealWorld()
        self.data_dir = config.data_dir
        # what an operator asks of it (docs/OPERATING.md): counters (server/metrics.py),
        # readiness (server/health.py), both on the ops port if config.metrics_port is given
        self.metrics = Metrics()
        self.health = Health()
        self.ops: OpsPort | None = None         # the ops port's listener (server/opsport.py), if any
        self.ops_port: int | None = None        # its port, once it listens
        self.finished_dir = self.data_dir / FINISHED_DIR
        self.expired_dir = self.data_dir / EXPIRED_DIR
        self.refusals = RefusalBudget()         # refused intents logged per connection
        # list_tables: the answer encoded once, until a table's lobby facts change (or,
        # for seqs alone, config.list_refresh seconds pass)
        self._list_frame: bytes | None = None
        self._list_built: tuple[float, int | None] = (-math.inf, None)    # (when, for which LIST_BUDGET)
        self.list_builds = 0
        self.limits = config.limits()
        self.version = __version__
        self.tables: dict[str, Table] = {}
        self.open_tables: OpenTables[Table] = OpenTables()     # the counts create_table checks (server/open_tables.py)
        self._creating = AddressCounts()        # tables being created (counted against max_tables), by address
        self.connections: set[Connection] = set()
        self.port: int | None = None
        self._nursery: trio.Nursery | None = None
        self._tables_nursery: trio.Nursery | None = None
        self._listen_scope = trio.CancelScope()
        self.refused_logs: dict[str, str] = {}
        self._moving: dict[str, str] = {}       # forgotten tables whose logs are on their way: id -> finished/expired
        self.chance = chance or secure_permutation
        self.kernel_delay = kernel_delay or peer_kernel_delay
        self.table_ids = table_ids or (lambda: "t" + secrets.token_hex(4))
        self.bots = BotHost(self, self.data_dir)    # the bots players seat with seat_bots
        self.prober = Prober(waits=self.world.clock)    # fair order's pings of every seated connection (server/prober.py)
        self.timers = Timers(waits=self.world.clock)    # the tables' far deadlines (server/timers.py)
        # called once the server has stopped: what its parts started (the hints' processes)
        self.closers: list[Callable[[], None]] = []
        # where the tables' logs live: files in the data dir, or a store whose nodes make a
        # cluster (server/cluster.py); decided here, once
        self.storage: TableStorage = choose_storage(self, store, store_sink)
        self.store: Store | None = self.storage.store
        self.writer: LogSink[Any] = self.storage.writer
        self.cluster: Cluster | None = self.storage.cluster

    # ---------------------------------------------------------------- lobby
    def new_id(self) -> str:
        while True:
            tid = self.table_ids()
            if tid not in self.tables and not any((d / (tid + LOG_SUFFIX)).exists()
                                                  for d in (self.data_dir, self.finished_dir, self.expired_dir)):
                return tid

    def table_list(self) -> m.TableList:
        """The answer to list_tables (see ``table_list_frame``), as a message."""
        return m.decode(self.table_list_frame())

    def table_list_frame(self) -> bytes:
        """The answer to list_tables, encoded, within LIST_BUDGET bytes whatever the number
        of tables (a client refuses a frame over MAX_SERVER_FRAME, and finished tables are
        not capped by max_tables): waiting tables first, then those in play, then the most
        recently finished; what does not fit is counted in ``omitted``. Listed in creation
        order. Built once per change: a table's entry is encoded again only when what it
        shows changed, and the answer is reused until a table is created or forgotten or a
        lobby fact changes (a seat taken, released, connected or dropped, a spectator come
        or gone, a game started or over); seqs alone make it at most ``list_refresh``
        seconds old. So a flood of list_tables costs no work per request beyond the send."""
        when, budget = self._list_built
        if self._list_frame is not None and budget == LIST_BUDGET and trio.current_time() - when < self.config.list_refresh:
            return self._list_frame
        entries = self.storage.lobby_entries()
        if len(entries) * LIST_ENTRY_MAX <= LIST_BUDGET or sum(len(e) for _, e in entries) <= LIST_BUDGET:
            chosen = [e for _, e in entries]
        else:
            order = sorted(range(len(entries)), key=lambda i: (entries[i][0], -i))
            keep, used = set(), 0
            for i in order:
                size = len(entries[i][1])
                if used + size > LIST_BUDGET:
                    break
                keep.add(i)
                used += size
            chosen = [e for i, (_, e) in enumerate(entries) if i in keep]
        self._list_frame = table_list_frame(chosen, len(entries) - len(chosen))
        self._list_built = (trio.current_time(), LIST_BUDGET)
        self.list_builds += 1
        return self._list_frame

    def _lobby_changed(self, table: Table | None = None) -> None:
        """What list_tables shows changed: the next one is built again."""
        self._list_frame = None

    def no_table(self, table_id: str) -> str:
        """Why there is no table ``table_id`` here, for the `no_such_table` error."""
        gone = self._moving.get(table_id)
        if gone is None and _TABLE_ID.fullmatch(table_id):
            if (self.finished_dir / (table_id + LOG_SUFFIX)).exists():
                gone = FINISHED_DIR
            elif (self.expired_dir / (table_id + LOG_SUFFIX)).exists():
                gone = EXPIRED_DIR
        if gone == FINISHED_DIR:
            return (f"table {table_id!r} is over and no longer held by this server; its replay is at "
                    f"/replay/{table_id}.json on this server, and its log is {FINISHED_DIR}/{table_id}{LOG_SUFFIX} "
                    "in the server's data dir")
        if gone == EXPIRED_DIR:
            cfg = self.config
            spans = " or ".join(f"for {s:g} s {when}" for s, when in ((cfg.waiting_expiry, "while it waited for players"),
                                                                      (cfg.abandoned_expiry, "while its game was in play"))
                                if math.isfinite(s)) or "for longer than this server keeps such a table"
            return (f"table {table_id!r} expired: nobody was at it {spans} (its log is {EXPIRED_DIR}/{table_id}"
                    f"{LOG_SUFFIX} in the server's data dir); create a new table, or list_tables shows the open ones")
        return f"no table {table_id!r}; list_tables shows the open ones"

    async def create_table(self, game_name: str, seats: int, settings: dict, name: str = "", *,
                           owner=None) -> Table:
        """A new table; ``owner`` is the Connection asking (its address may have created
        at most ``max_waiting_per_address`` tables still waiting for players)."""
        game = find_game(game_name)
        if not game.MIN_PLAYERS <= seats <= game.MAX_PLAYERS:
            raise IllegalAction("bad_seats", f"{game.TITLE} takes {game.MIN_PLAYERS} to {game.MAX_PLAYERS} players, not {seats}")
        address = peer_address(owner)
        cap = self.config.max_waiting_per_address
        if address is not None and cap:
            mine = [t.id for t in self.open_tables.owned_by(address) if t.counts_against_owner]
            if len(mine) + self._creating.of(address) >= cap:
                raise IllegalAction("too_many_waiting_tables", self._too_many_waiting(mine))
        # tables still being created count too: the log file is made in a thread, and
        # creates arriving meanwhile must not all pass the cap
        open_tables = len(self.open_tables) + self._creating.total
        if open_tables >= self.config.max_tables:
            raise IllegalAction("too_many_tables", f"this server holds at most {self.config.max_tables} open tables; join an existing one or try later")
        created = datetime.datetime.fromtimestamp(self.world.wall(), datetime.timezone.utc).isoformat(timespec="seconds")
        self._creating.take(address)
        try:
            tid = self.new_id()
            table = await self.storage.create(tid, game, seats, settings, created, name, address)
            self.start_table(table)
            self.metrics.tables_created += 1
        except OSError as e:
            # the disk's fault, not the client's: answer it (uncaught, it stopped the whole server)
            if e.errno in ROOM_ERRNOS:
                if not self.writer.paused:      # else the writer said it already (once, not per request)
                    log.warning("cannot create a table's log in %s: %s", self.data_dir, e.strerror or e)
                raise IllegalAction(diskfull.PAUSED, "the server's disk is full: it cannot make a new table now "
                                    "(tables in play resume by themselves once there is room); try again later") from None
            log.error("cannot create a table's log in %s: %s (make room on its disk or mend the data dir; /readyz "
                      "says when it can be written again)", self.data_dir, e)
            raise IllegalAction("storage_error", f"the server cannot write a new table's log ({e.strerror or e}); "
                                "try later or tell its operator") from None
        finally:
            self._creating.give(address)
        log.info("table %s created: %s for %d", table.id, game.NAME, seats, extra=about(table=table.id))
        return table

    def _too_many_waiting(self, mine: list[str]) -> str:
        """The sentence of `too_many_waiting_tables`: which tables hold the address's
        places, and when they close."""
        shown = ", ".join(mine[:5]) + (", ..." if len(mine) > 5 else "")
        cfg = self.config
        closes = [f"{what} closes after {s:g} s" for what, s in
                  (("a waiting table nobody is at", cfg.waiting_expiry), ("a game nobody is at", cfg.abandoned_expiry))
                  if math.isfinite(s)]
        return (f"your address already has {len(mine)} table(s) waiting for players or left in play with nobody at "
                f"them ({shown}), the most this server allows; join or rejoin one of them, or wait until one fills "
                f"up" + (f" ({'; '.join(closes)})" if closes else ""))

    @property
    def nursery(self) -> trio.Nursery:
        """The server's own nursery (open while run() runs)."""
        assert self._nursery is not None, "Server.run is not running"
        return self._nursery

    def start_table(self, table: Table) -> None:
        table.clock = self.world.clock
        table.timers = self.timers
        self.tables[table.id] = table
        self.open_tables.started(table)
        self._lobby_changed()
        assert self._tables_nursery is not None     # (tables start once run() opened it)
        self._tables_nursery.start_soon(table.run)

    def table_kw(self) -> dict:
        """What every Table is made with besides its own facts: the settings it reads and
        the server's hooks."""
        return dict(metrics=self.metrics, on_finished=self._finished, chance=self.chance,
                    keep_finished=self.config.keep_finished, on_evict=self._evict,
                    waiting_expiry=self.config.waiting_expiry, abandoned_expiry=self.config.abandoned_expiry,
                    refusals=self.refusals,
                    on_lobby=self._lobby_changed, on_lease_lost=self._lease_lost)

    def _finished(self, table: Table) -> None:
        self.open_tables.finished(table)
        o = table.game.outcome(table.state)
        log.info("table %s finished after %d records: scores %s, winners %s", table.id, table.seq, list(o.scores), list(o.winners), extra=about(table=table.id))

    def _evict(self, table: Table) -> None:
        """A table nobody is at: finished and held for keep_finished, waiting for players
        for waiting_expiry, or in play for abandoned_expiry. Forget it, and move its log out
        of the way of recovery (to finished/ or expired/), called by its arbiter as it
        ends, its log file closed."""
        if self.tables.get(table.id) is table:
            del self.tables[table.id]
        self.open_tables.forgotten(table)
        self._lobby_changed()
        where = FINISHED_DIR if table.finished else EXPIRED_DIR
        # until its log is moved or marked (in a thread), no_table knows it from here
        self._moving[table.id] = where
        self.storage.forget(table, where)

    def disk_paused(self, paused: bool) -> None:
        """The log writer's disk filled (True) or has room again (False): every table's
        people are told, its timers stop or go on (docs/ARCHITECTURE.md "Disk full")."""
        for t in list(self.tables.values()):
            if paused:
                t.storage_paused()
            else:
                t.storage_resumed()

    def _lease_lost(self, table: Table) -> None:
        """The table's lease is lost (server/store_pg.py): its arbiter has stopped; forget
        the table and close its connections, telling them to connect again (where the
        cluster serves it now). Nothing it did not commit was acknowledged."""
        if self.tables.get(table.id) is table:
            del self.tables[table.id]
        self.open_tables.forgotten(table)
        self._lobby_changed()
        self.metrics.leases_lost += 1
        if self.cluster is not None:
            self.cluster.stepped_down(table)    # its bots here stop first: the adopter runs them
        audience = [s.conn for s in table.seats if s.conn is not None] + list(table.spectators)
        log.warning("table %s: this node lost its lease (another node owns it now, or it passed): stepped down, "
                    "%d connection(s) told to connect again", table.id, len(audience), extra=about(table=table.id))
        data = m.encode(m.Goodbye(f"table {table.id} moved to another server of this cluster; connect again"))
        for c in audience:
            c.detach(table)
            c.send_bytes(data)
            c.close_soon(1012, "table moved")

    # ---------------------------------------------------------------- connections
    async def attach(self, sock: socket.socket, who: Address) -> None:
        """Serve a connection the server makes to itself (its bots, server/botseats.py):
        ``sock`` is one end of a socketpair. A player's WebSocket and rules, but no slot of
        the public listener (docs/ARCHITECTURE.md, "Bots the server runs")."""
        await wire.serve_socket(sock, self._on_peer, limits=self.limits, who=who)

    async def _on_peer(self, peer: wire.Peer) -> None:
        if len(self.connections) >= self.config.max_connections:
            try:
                await peer.send(m.encode(m.Error("server_full", f"this server holds at most {self.config.max_connections} "
                                                 "connections; try later")))
            except wire.ConnectionClosed:
                return      # it left already
            await peer.close(CLOSE_TRY_LATER, "server full")
            self.metrics.closed(CLOSE_TRY_LATER)
            return
        conn = Connection(self, peer)
        self.connections.add(conn)
        self.metrics.connections_opened += 1
        try:
            await conn.run()
        finally:
            self.connections.discard(conn)
            self.metrics.closed(conn.close_code)

    # ---------------------------------------------------------------- lifetime
    async def run(self, host: str = "127.0.0.1", port: int = 8765, *, task_status=trio.TASK_STATUS_IGNORED) -> None:
        """Serve until cancelled or ``shutdown()``; ``task_status.started`` gets the port.
        The data dir is locked as long (server/datadir.py): DataDirInUse if another
        server holds it, DataDirError if it cannot be made or used."""
        try:
            self.prepare_data_dir()
        except OSError as e:
            raise unusable(self.data_dir, e) from None
        self._dir_lock = DataDirLock.acquire(self.data_dir)
        try:
            async with trio.open_nursery() as ops:
                if self.config.metrics_port is not None:
                    self.ops = OpsPort(self)
                    self.ops_port = await ops.start(self.ops.run, self.config.metrics_host, self.config.metrics_port)
                ops.start_soon(probe_data_dir, self.health, self.data_dir, PROBE_EVERY, self.world.run_sync,
                               self.world.clock.sleep, self.world.disk)
                await self._serve(host, port, task_status)
                ops.cancel_scope.cancel()
        finally:
            self._dir_lock.release()

    async def _serve(self, host: str, port: int, task_status) -> None:
        recovered = await self.storage.open()      # the data dir's tables (a store's come once it listens)
        async with trio.open_nursery() as outer:
            self._nursery = outer
            await outer.start(self._write_logs)
            try:
                async with trio.open_nursery() as tables_nursery:
                    self._tables_nursery = tables_nursery
                    tables_nursery.start_soon(self.timers.run)     # stopped once the arbiters are told to stop
                    for t in recovered:
                        self.start_table(t)
                    playing = [t for t in recovered if not t.finished]
                    finished = [t for t in recovered if t.finished]
                    if playing:
                        log.info("recovered %d unfinished table(s): %s", len(playing), ", ".join(t.id for t in playing))
                    if finished:
                        log.info("loaded %d finished table(s) read-only", len(finished))
                    with self._listen_scope:
                        async with trio.open_nursery() as conns:
                            conns.start_soon(self.prober.run)       # ends with the connections
                            self.port = await conns.start(partial(self.world.listen, limits=self.limits,
                                                                  http=WebFiles.for_server(self)),
                                                          self._on_peer, host, port)
                            await self.storage.serving(host, self.port, conns)
                            log.info("serving on ws://%s:%d (%s, durability %s)", host, self.port,
                                     self.storage.describe(), self.config.durability)
                            # said once it serves: a start that fails says its one sentence alone
                            log.info("at most %d connections and %d log files open at once",
                                     self.config.max_connections, self.config.max_open_logs)
                            self._dir_lock.note(f"ws://{host}:{self.port}")
                            await conns.start(self.bots.run, host, self.port)
                            await self.storage.resume_bots()
                            self.health.serving()
                            notify("READY=1", f"STATUS=serving on ws://{host}:{self.port}")     # under systemd
                            task_status.started(self.port)
                            await trio.sleep_forever()
                    # shutdown: stop the arbiters, then drain the log writer
                    for t in self.tables.values():
                        t.inbox_send.close()
                    self.timers.stop()
            finally:
                self.writer.close()
                for close in self.closers:
                    close()
        # (the log writer closed every log file as it ended)
        await self.storage.close()      # a store's leases given up; waiting tables' logs stamped
        log.info("log writer: %s", self.writer.summary())
        if self.refusals.unlogged:
            log.info("refused intents: %d logged, %d only counted (over %d at once and %g a second per connection)",
                     self.refusals.logged, self.refusals.unlogged, self.refusals.burst, self.refusals.rate)
        log.info("stopped; all logs flushed and fsynced")

    def prepare_data_dir(self) -> None:
        """Create the data dir readable by its owner only (0700): the logs in it hold every
        shuffle. One that exists with group or other permission bits is narrowed to 0700,
        with a warning (or only the warning, where that is not allowed)."""
        self.data_dir.mkdir(mode=DATA_DIR_MODE, parents=True, exist_ok=True)
        mode = stat.S_IMODE(self.data_dir.stat().st_mode)
        if mode & 0o077:
            try:
                os.chmod(self.data_dir, mode & ~0o077)
                log.warning("data dir %s was open to other users (mode %04o); narrowed to %04o: its logs hold every "
                            "shuffle", self.data_dir, mode, mode & ~0o077)
            except OSError as e:
                log.warning("data dir %s is open to other users (mode %04o) and cannot be narrowed (%s): its logs "
                            "hold every shuffle; make it 0700", self.data_dir, mode, e.strerror or e)

    async def _write_logs(self, task_status=trio.TASK_STATUS_IGNORED) -> None:
        """The log writer; if the logs cannot be written the server stops (nothing more
        can be made durable, so nothing more may be acknowledged), telling its clients why."""
        try:
            await self.writer.run(task_status=task_status)
        except StorageFailed as e:
            self.health.writer = f"{e}: the server stops"
            log.error("%s: stopping the server (every acknowledged action is in the logs)", e)
            await self._goodbye(f"server stopping: {e}", 1011, "server cannot write its logs", seconds=1)
            raise

    async def shutdown(self, reason: str = "server shutting down") -> None:
        """Stop accepting, tell every client, close them, let run() flush and return."""
        log.info("shutting down: %s", reason)
        self.health.draining(reason)
        notify("STOPPING=1", f"STATUS={reason}")
        self.bots.stop()
        await self._goodbye(reason, 1001, "server shutting down", seconds=3)
        self._listen_scope.cancel()

    async def _goodbye(self, reason: str, code: int, close_reason: str, *, seconds: float) -> None:
        """Tell every client why with a `goodbye`, close each with ``code``, and wait (at
        most ``seconds``) until they are gone."""
        data = m.encode(m.Goodbye(reason))
        for c in list(self.connections):
            c.send_bytes(data)
            c.close_soon(code, close_reason)
        with self.world.clock.move_on_after(seconds):
            while self.connections:
                await self.world.clock.sleep(0.02)
