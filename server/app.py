"""The server: lobby, tables, recovery, and the lifetimes of all its tasks.

    listener --> Connection (reader) --requests--> Table arbiter --records--> LogWriter
                     ^                                  |        (group commit, fsync)
                     +--- Connection (writer) <-backlog-+  per connection, bounded
                          (a frame goes straight to the socket when it is free)
"""

from __future__ import annotations

import datetime
import errno
import logging
import math
import os
import re
import secrets
import socket
import stat
from functools import partial
from pathlib import Path
from typing import Any

import attrs
import trio

from wildtable import __version__
from wildtable.protocol import messages as m
from wildtable.protocol.codec import MAX_SERVER_FRAME, packb
from wildtable.protocol.engine import game as find_game
from wildtable.protocol.errors import IllegalAction, LogError
from wildtable.protocol.logfmt import SeatClaimed, read_log
from wildtable.protocol.replay import replay

from . import wire
from .botseats import BotHost
from .cluster import Cluster
from .connection import CLOSE_TRY_LATER, HELLO_TIMEOUT, OUTBOX, OUTBOX_BYTES, SEND_TIMEOUT, Connection, peer_kernel_delay
from .datadir import DataDirLock, unusable
from . import diskfull
from .forwarded import Address, TrustedProxies
from .framebudget import MAX_FRAGMENTS
from .health import PROBE_EVERY, Health, probe_data_dir
from .interfaces import LogSink, Store
from .logwriter import EXPIRED, LOG_MODE, MAX_OPEN_LOGS, OVER, ROOM_ERRNOS, LogFile, LogWriter, StorageFailed, fsync_dir
from .metrics import Metrics
from .opsport import OpsPort
from .sdnotify import notify
from .store_pg import LEASE_SECONDS, PgLog, PgStore, PgWriter, StoreError, first_line, id_taken, redact
from .table import RefusalBudget, Table, secure_permutation
from .web import WebFiles
from .world import RealWorld, World

log = logging.getLogger("wildtable.server")
_NO_PROXIES = TrustedProxies()     # no proxy is trusted unless --trusted-proxy names it

LOG_SUFFIX = ".wlog"
FINISHED_DIR = "finished"     # where the logs of finished games go once the server forgets them
EXPIRED_DIR = "expired"       # where the logs of waiting tables that expired go
KEEP_FINISHED = 3600.0        # seconds a finished table stays listed and watchable
WAITING_EXPIRY = 600.0        # seconds a table waiting for players may have nobody at it
MAX_WAITING_PER_ADDRESS = 4   # tables waiting for players that one address may have created (0: no cap)
DATA_DIR_MODE = 0o700         # the logs hold every shuffle: nobody else may read them
ID_ATTEMPTS = 5               # table ids drawn for one create on a store whose nodes took the earlier ones
LIST_REFRESH = 1.0            # seconds a list_tables answer may be reused when only seqs changed
_TABLE_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
LIST_BUDGET = MAX_SERVER_FRAME // 2   # bytes of table entries in one list_tables answer at most
LIST_ENTRY_MAX = 4096                 # an entry's size is bounded (name, players, settings the game checked)


def peer_address(conn) -> str | None:
    """The IP address a connection comes from (None for none)."""
    peer = getattr(conn, "peer", None)
    if peer is None:
        return None
    return getattr(peer, "host", None) or peer.remote.rsplit(":", 1)[0]


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


def _waiting(seq: int, seats: int, seat_records: list) -> bool:
    """Whether a table read from its log still waits for players (as Table.started)."""
    if seq > 0:
        return False
    held = {}
    for r in seat_records:
        held[r.seat] = bool(r.token_hash)
    return sum(held.values()) < seats


def _check_lobby_facts(table_id: str, where: str, contents) -> list:
    """What replay does not check: the table id is the file's (a log copied under another
    name would be a second table with the same id) or the store's row's. Returns the seat
    records, whose seats replay has checked (one out of range stopped the server or took
    over another seat)."""
    h = contents.header
    if h.table != table_id:
        raise LogError("bad_record", f"the header names table {h.table!r}, but it is {where}", offset=0)
    return [r for r in contents.records if type(r) is SeatClaimed]


class Server:
    def __init__(self, data_dir: str | Path, *, durability: str = "always", max_tables: int = 1000,
                 max_connections: int = 5000, rate_limit: float = 50.0, rate_burst: float = 100.0,
                 chance=None, outbox: int = OUTBOX, hello_timeout: float = HELLO_TIMEOUT,
                 send_timeout: float = SEND_TIMEOUT,
                 keep_finished: float = KEEP_FINISHED, waiting_expiry: float = WAITING_EXPIRY,
                 max_waiting_per_address: int = MAX_WAITING_PER_ADDRESS, max_open_logs: int = MAX_OPEN_LOGS,
                 list_refresh: float = LIST_REFRESH, outbox_bytes: int = OUTBOX_BYTES,
                 max_handshakes: int = wire.MAX_HANDSHAKES, max_per_address: int = wire.MAX_PER_ADDRESS,
                 handshake_timeout: float = wire.HANDSHAKE_TIMEOUT, allow_origins=(),
                 trusted_proxies: TrustedProxies = _NO_PROXIES, proxy_protocol: bool = False,
                 store: str | Store | None = None, node_id: str | None = None, lease_seconds: float = LEASE_SECONDS,
                 public_url: str | None = None, table_ids=None, metrics_host: str = "127.0.0.1",
                 metrics_port: int | None = None, kernel_delay=None, max_fragments: int = MAX_FRAGMENTS,
                 world: World | None = None, store_sink: LogSink[Any] | None = None):
        # the network, disk, wall clock and worker threads it runs in (server/world.py):
        # the real ones, or the simulator's
        self.world: World = world or RealWorld()
        self.data_dir = Path(data_dir)
        # what an operator asks of it (docs/OPERATING.md): counters (server/metrics.py),
        # readiness (server/health.py), both on the ops port if metrics_port is given
        self.metrics = Metrics()
        self.health = Health()
        self.metrics_host, self.metrics_port = metrics_host, metrics_port
        self.ops: OpsPort | None = None         # the ops port's listener (server/opsport.py), if any
        self.ops_port: int | None = None        # its port, once it listens
        self.finished_dir = self.data_dir / FINISHED_DIR
        self.expired_dir = self.data_dir / EXPIRED_DIR
        self.keep_finished = keep_finished
        self.waiting_expiry = waiting_expiry
        self.max_waiting_per_address = max_waiting_per_address
        self.max_open_logs = max_open_logs
        # where the tables' logs go: files in the data dir (the default), or a PostgreSQL
        # store that nodes share (server/store_pg.py), this node known there by node_id
        # (None: its URL, once it listens). A Store object instead of a DSN is a store of
        # another world's (the simulator's, server/world.py) with its log sink, store_sink
        self.store: Store | None
        self.writer: LogSink[Any]
        if isinstance(store, str) and store:
            pg = PgStore(store, node_id or "", lease_seconds=lease_seconds)
            self.store, self.writer = pg, PgWriter(pg, durability)
        elif store is not None and not isinstance(store, str):
            if store_sink is None:
                raise ValueError("a Store object needs its store_sink (the log sink that writes to it)")
            self.store, self.writer = store, store_sink
        else:
            self.store = None
            self.writer = LogWriter(durability, max_open=max_open_logs, disk=self.world.disk,
                                    run_sync=self.world.run_sync)
        if isinstance(self.writer, (PgWriter, LogWriter)):     # (a store_sink of another world may keep none)
            self.writer.timings = self.metrics
        if isinstance(self.writer, LogWriter):
            self.writer.on_pause = self._disk_paused
        self.refusals = RefusalBudget()         # refused intents logged per connection
        # list_tables: the answer encoded once, until a table's lobby facts change (or,
        # for seqs alone, list_refresh seconds pass)
        self.list_refresh = list_refresh
        self._list_frame: bytes | None = None
        self._list_built: tuple[float, int | None] = (-math.inf, None)    # (when, for which LIST_BUDGET)
        self.list_builds = 0
        self._creating_by: dict[str, int] = {}  # tables being created, per address
        self.durability = durability
        self.max_tables = max_tables
        self.max_connections = max_connections
        self.rate_limit = rate_limit
        self.rate_burst = rate_burst
        self.outbox = outbox                    # frames waiting per connection before it counts as slow
        self.outbox_bytes = outbox_bytes        # bytes waiting (beyond one frame) before it counts as slow
        self.max_fragments = max_fragments      # frames one client message may come in
        self.limits = wire.Limits(max_handshakes, max_per_address, handshake_timeout, tuple(allow_origins),
                                  trusted=trusted_proxies, proxy_protocol=proxy_protocol)
        self.hello_timeout = hello_timeout
        self.send_timeout = send_timeout        # seconds a peer may take no byte of what waits for it
        self.version = __version__
        self.tables: dict[str, Table] = {}
        self._creating = 0                      # tables being created (counted against max_tables)
        self.connections: set[Connection] = set()
        self.port: int | None = None
        self._nursery: trio.Nursery | None = None
        self._tables_nursery: trio.Nursery | None = None
        self._listen_scope = trio.CancelScope()
        self.refused_logs: dict[str, str] = {}
        self._adopting: set[str] = set()        # tables being adopted from the store now
        self._moving: dict[str, str] = {}       # forgotten tables whose logs are on their way: id -> finished/expired
        # Where shuffles come from: the OS's secure source. Tests may pass a seeded
        # function (size -> permutation) to make deals reproducible; the CLI never does.
        self.chance = chance or secure_permutation
        # fair order's kernel bound: half the kernel's round trip of a peer's TCP connection
        # (server/fairorder.py); a test or bench behind a delaying proxy adds the proxy's delay
        self.kernel_delay = kernel_delay or peer_kernel_delay
        # a new table id to try: "t" + 8 random hex digits (tests pass a fixed sequence to
        # make two nodes draw the same one)
        self.table_ids = table_ids or (lambda: "t" + secrets.token_hex(4))
        self.bots = BotHost(self, self.data_dir)    # the bots players seat with seat_bots
        # on a store, this node is one of a cluster's (server/cluster.py): heartbeat, lobby
        # across nodes, placement, redirects, adoption of tables whose lease passed
        self.cluster = Cluster(self, public_url) if self.store is not None else None
        if self.cluster is not None:
            self.bots.book.on_change = self.cluster.bots_changed
            self.limits = attrs.evolve(self.limits, peer_origins=self.cluster.peer_origins)

    # ---------------------------------------------------------------- lobby
    def _new_id(self) -> str:
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
        if self._list_frame is not None and budget == LIST_BUDGET and trio.current_time() - when < self.list_refresh:
            return self._list_frame
        if self.cluster is not None:
            entries = self.cluster.lobby_entries()      # the other nodes' tables too
        else:
            entries = [t.list_entry() for t in self.tables.values()]
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
            return (f"table {table_id!r} expired: nobody was at it for {self.waiting_expiry:g} s while it waited "
                    f"for players (its log is {EXPIRED_DIR}/{table_id}{LOG_SUFFIX} in the server's data dir); "
                    "create a new table, or list_tables shows the open ones")
        return f"no table {table_id!r}; list_tables shows the open ones"

    async def create_table(self, game_name: str, seats: int, settings: dict, name: str = "", *,
                           owner=None) -> Table:
        """A new table; ``owner`` is the Connection asking (its address may have created
        at most ``max_waiting_per_address`` tables still waiting for players)."""
        game = find_game(game_name)
        if not game.MIN_PLAYERS <= seats <= game.MAX_PLAYERS:
            raise IllegalAction("bad_seats", f"{game.TITLE} takes {game.MIN_PLAYERS} to {game.MAX_PLAYERS} players, not {seats}")
        address = peer_address(owner)
        cap = self.max_waiting_per_address
        if address is not None and cap:
            mine = [t.id for t in self.tables.values() if t.owner == address and not t.started and not t.finished]
            if len(mine) + self._creating_by.get(address, 0) >= cap:
                shown = ", ".join(mine[:5]) + (", ..." if len(mine) > 5 else "")
                expiry = (f" (a waiting table nobody is at closes after {self.waiting_expiry:g} s)"
                          if math.isfinite(self.waiting_expiry) else "")
                raise IllegalAction("too_many_waiting_tables",
                                    f"your address already has {len(mine)} table(s) waiting for players ({shown}), the most "
                                    f"this server allows; join one of them or wait until one fills up{expiry}")
        # tables still being created count too: the log file is made in a thread, and
        # creates arriving meanwhile must not all pass the cap
        open_tables = sum(1 for t in self.tables.values() if not t.finished) + self._creating
        if open_tables >= self.max_tables:
            raise IllegalAction("too_many_tables", f"this server holds at most {self.max_tables} open tables; join an existing one or try later")
        created = datetime.datetime.fromtimestamp(self.world.wall(), datetime.timezone.utc).isoformat(timespec="seconds")
        self._creating += 1
        if address is not None:
            self._creating_by[address] = self._creating_by.get(address, 0) + 1
        try:
            tid = self._new_id()
            if self.store is not None:
                table = await self._create_in_store(tid, game, seats, settings, created, name, address)
            else:
                table = await self.world.run_sync(
                    lambda: Table.create(tid, game, seats, dict(settings), partial(LogFile.create, self.data_dir / (tid + LOG_SUFFIX)),
                                         self.writer, created, name, owner=address, **self._table_kw()))
            self._start_table(table)
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
            self._creating -= 1
            if address is not None:
                n = self._creating_by.pop(address) - 1
                if n:
                    self._creating_by[address] = n
        log.info("table %s created: %s for %d", table.id, game.NAME, seats)
        return table

    async def _create_in_store(self, tid: str, game, seats: int, settings: dict, created: str, name: str,
                               address: str | None) -> Table:
        """A new table whose log is in the store (its row and header, owned by this node)."""
        store = self.store
        assert store is not None
        def create() -> Table:
            return Table.create(tid, game, seats, dict(settings), partial(store.create_table_row, tid, game.NAME),
                                self.writer, created, name, owner=address, **self._table_kw())
        for attempt in range(ID_ATTEMPTS):
            try:
                return await store.call(create)
            except IllegalAction:
                raise
            except Exception as e:
                if id_taken(e) and attempt + 1 < ID_ATTEMPTS:
                    # ids are drawn per node: another node of the cluster made this one first
                    log.info("table id %s is taken in the store (another node made it); drawing another", tid)
                    tid = self._new_id()
                    continue
                self.metrics.store_error("create_table")
                log.error("cannot create table %s in the store: %s (see that PostgreSQL runs and that this node's "
                          "role may write to its database)", tid, e)
                raise IllegalAction("storage_error", "the server cannot write a new table to its store; try later or "
                                    "tell its operator") from None
        raise AssertionError("unreachable: the last attempt returns or raises")

    @property
    def nursery(self) -> trio.Nursery:
        """The server's own nursery (open while run() runs)."""
        assert self._nursery is not None, "Server.run is not running"
        return self._nursery

    def _start_table(self, table: Table) -> None:
        self.tables[table.id] = table
        self._lobby_changed()
        assert self._tables_nursery is not None     # (tables start once run() opened it)
        self._tables_nursery.start_soon(table.run)

    def _table_kw(self) -> dict:
        return dict(metrics=self.metrics, on_finished=self._finished, chance=self.chance, keep_finished=self.keep_finished,
                    on_evict=self._evict, waiting_expiry=self.waiting_expiry, refusals=self.refusals,
                    on_lobby=self._lobby_changed, on_lease_lost=self._lease_lost)

    def _finished(self, table: Table) -> None:
        o = table.game.outcome(table.state)
        log.info("table %s finished after %d records: scores %s, winners %s", table.id, table.seq, list(o.scores), list(o.winners))

    def _evict(self, table: Table) -> None:
        """A table nobody is at: finished and held for keep_finished, or waiting for
        players for waiting_expiry. Forget it, and move its log out of the way of recovery
        (to finished/ or expired/), called by its arbiter as it ends, its log file closed."""
        if self.tables.get(table.id) is table:
            del self.tables[table.id]
        self._lobby_changed()
        for c in self.connections:
            if c.route is table:        # so that nothing keeps the forgotten table in memory
                c.route = None
        where = FINISHED_DIR if table.finished else EXPIRED_DIR
        if self.store is not None:
            # its records stay in the store; marked finished there (and how it ended: the
            # replay viewer lists no table that expired), so no node adopts it
            log.info("table %s forgotten (%s, nobody at it)", table.id,
                     "finished" if table.finished else "waiting for players")
            self._moving[table.id] = where
            self.nursery.start_soon(self._retire, table)
            return
        log.info("table %s forgotten (%s, nobody at it); its log goes to %s/", table.id,
                 "finished" if table.finished else "waiting for players", where)
        # until the move (in a thread) is done, no_table knows it from here, not from the dir
        self._moving[table.id] = where
        self.nursery.start_soon(self._move_out, table.id, table.logfile.path, where)

    async def _retire(self, table: Table) -> None:
        try:
            await self.writer.release(table.logfile, OVER if table.finished else EXPIRED)
        finally:
            self._moving.pop(table.id, None)

    def _disk_paused(self, paused: bool) -> None:
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
        self._lobby_changed()
        self.metrics.leases_lost += 1
        if self.cluster is not None:
            self.cluster.stepped_down(table)    # its bots here stop first: the adopter runs them
        for c in self.connections:
            if c.route is table:
                c.route = None
        audience = [s.conn for s in table.seats if s.conn is not None] + list(table.spectators)
        log.warning("table %s: this node lost its lease (another node owns it now, or it passed): stepped down, "
                    "%d connection(s) told to connect again", table.id, len(audience))
        data = m.encode(m.Goodbye(f"table {table.id} moved to another server of this cluster; connect again"))
        for c in audience:
            c.detach(table)
            c.send_bytes(data)
            c.close_soon(1012, "table moved")

    async def _move_out(self, table_id: str, path: Path, where: str) -> None:
        try:
            await self.world.run_sync(self._archive, path, where)
        finally:
            self._moving.pop(table_id, None)

    def _archive(self, path: Path, where: str = FINISHED_DIR) -> bool:
        """Move a table's log into finished/ (a finished game) or expired/ (a table that
        expired waiting for players), durably (the rename and both directories fsynced).
        Its contents are not touched. On failure it stays where it is (recovery archives it
        next time) and the reason is logged."""
        folder = self.data_dir / where
        try:
            folder.mkdir(mode=DATA_DIR_MODE, exist_ok=True)
            target = folder / path.name
            if os.path.lexists(target):
                # rename replaces silently: never destroy a log already archived there
                raise FileExistsError(errno.EEXIST, f"{where}/{path.name} exists already (left as it is)")
            os.rename(path, target)
            fsync_dir(folder)
            fsync_dir(self.data_dir)
        except OSError as e:
            log.warning("%s: cannot move the table's log to %s/: %s; it stays where it is, and the next start moves it "
                        "(mend the data dir's permissions or free space)", path, where, e.strerror or e)
            return False
        return True

    # ---------------------------------------------------------------- recovery
    def recover(self) -> list[Table]:
        """Rebuild every table in the data dir from its log: an unfinished one to play on,
        a finished one read-only (its log is not opened for writing; it answers spectate,
        rejoin and list_tables, and does not count against max_tables) until keep_finished
        has passed since it finished; one that finished longer ago has its log moved to
        finished/, which recovery does not read, so start-up does not grow with history."""
        tables = []
        archived = expired = 0
        widened = []
        for path in sorted(self.data_dir.glob("*" + LOG_SUFFIX)):
            try:
                data = path.read_bytes()
            except OSError as e:
                # a directory or an unreadable file with the suffix: refuse it, not the server
                # (uncaught, it stopped `serve` with "cannot listen on ...")
                self.refused_logs[path.name] = f"cannot read the file: {e.strerror or e}"
                log.error("%s: refusing to load this table: cannot read the file: %s", path, e.strerror or e)
                continue
            try:
                contents = read_log(data)
                if contents.torn is not None:
                    log.warning("%s: torn tail of %d bytes at offset %d cut (an unacknowledged write)", path,
                                contents.torn.dropped, contents.torn.offset)
                result = replay(contents)
                seat_records = _check_lobby_facts(path.stem, f"the file {path.name!r}", contents)
            except (LogError, IllegalAction) as e:
                self.refused_logs[path.name] = str(e)
                log.error("%s: refusing to load this table: %s (the file is left as it is; `wildtable replay FILE "
                          "--verify` says what is wrong; move it out of the data dir once dealt with)", path, e)
                continue
            h = contents.header
            over = result.game.outcome(result.state).over
            st = path.stat()
            # how long ago it finished, or since anyone was at a table waiting for players
            # (the server stamps those at shutdown): its log was last written then
            age = max(0.0, self.world.wall() - st.st_mtime)
            finished_ago = empty_for = 0.0
            if over:
                finished_ago = age
                if finished_ago >= self.keep_finished and self._archive(path):
                    archived += 1
                    continue
            elif _waiting(result.seq, h.seats, seat_records):
                empty_for = age
                if empty_for >= self.waiting_expiry and self._archive(path, EXPIRED_DIR):
                    expired += 1
                    continue
            if st.st_mode & 0o077:
                widened.append(path.name)
                try:
                    os.chmod(path, LOG_MODE)
                except OSError as e:
                    log.warning("%s: cannot make the log readable by its owner only: %s (chmod 600 it: it holds every "
                                "shuffle)", path, e.strerror or e)
            # a finished game's log is left as it is (a torn tail too): nothing more is written to it
            logfile = LogFile(path) if over else LogFile.reopen(path, contents.good_length)
            table = Table(h.table, result.game, h.seats, dict(h.settings), result.state, logfile, self.writer,
                          seq=result.seq, seat_records=seat_records, finished_ago=finished_ago,
                          empty_for=empty_for, **self._table_kw())
            tables.append(table)
        if archived:
            log.info("moved the logs of %d game(s) finished over %g s ago to %s/", archived, self.keep_finished, FINISHED_DIR)
        if expired:
            log.info("moved the logs of %d table(s) that waited for players with nobody at them for over %g s to %s/",
                     expired, self.waiting_expiry, EXPIRED_DIR)
        if widened:
            log.warning("%d log(s) could be read by other users (%s%s); made readable by the owner only (0600): "
                        "they hold every shuffle", len(widened), ", ".join(widened[:5]), ", ..." if len(widened) > 5 else "")
        return tables

    # ---------------------------------------------------------------- the store
    def _table_from_store(self, handle, finished_ago: float = 0.0) -> Table | None:
        """(In a worker thread.) A table of the store, rebuilt as recovery rebuilds one from
        its file: its records read and replayed by the protocol. None if its log is refused
        (logged, kept in refused_logs, not tried again): nothing in it is cut, torn tail or
        not, and records missing in the middle are refused, never cut."""
        tid = handle.table_id
        assert self.store is not None
        try:
            data = self.store.load_records(tid)
        except StoreError as e:
            self.refused_logs[tid] = str(e)
            log.error("table %s in the store: refusing to load it: %s", tid, e)
            return None
        try:
            contents = read_log(data)
            if contents.torn is not None:
                raise LogError("bad_frame", f"its last record in the store is cut ({contents.torn.dropped} bytes "
                               "of a frame)", offset=contents.torn.offset)
            result = replay(contents)
            seat_records = _check_lobby_facts(tid, f"the store's table {tid!r}", contents)
        except (LogError, IllegalAction) as e:
            self.refused_logs[tid] = str(e)
            log.error("table %s in the store: refusing to load it: %s", tid, e)
            return None
        h = contents.header
        return Table(tid, result.game, h.seats, dict(h.settings), result.state, handle, self.writer,
                     seq=result.seq, seat_records=seat_records, finished_ago=finished_ago, **self._table_kw())

    def _finished_from_store(self) -> list[Table]:
        """(In a worker thread, at start.) This node's tables whose game ended under
        keep_finished ago, held again read-only, as recovery holds a finished log from files
        (listed, watchable and rejoinable until keep_finished has passed since they ended);
        never one that expired waiting for players (the store says which: finished_here), nor
        one marked finished before the store kept that whose game is not over."""
        tables = []
        assert self.store is not None
        for tid, epoch, records, ago in self.store.finished_here(self.keep_finished):
            table = self._table_from_store(PgLog(tid, epoch, records), finished_ago=ago)
            if table is not None and table.finished:
                tables.append(table)
        return tables

    async def adopt_table(self, table_id: str) -> Table | None:
        """Serve a table of the store from now on: take its lease (a new epoch, so that its
        former owner can never write to it again) if it is this node's own, ownerless or
        its lease has passed, and rebuild it from its records. The table, or None if its
        lease cannot be taken now or its log is refused."""
        if table_id in self.tables:
            return self.tables[table_id]
        if table_id in self.refused_logs or table_id in self._adopting:
            return None
        self._adopting.add(table_id)
        store = self.store
        assert store is not None
        try:
            def load():
                handle = store.adopt(table_id)
                return None if handle is None else self._table_from_store(handle)
            table = await store.call(load)
            if table is None:
                return None
            self._start_table(table)
        finally:
            self._adopting.discard(table_id)
        self.metrics.adoptions += 1
        log.info("table %s adopted from the store (epoch %d, %d records, seq %d%s)", table.id, table.logfile.epoch,
                 table.logfile.next_n, table.seq, ", game over" if table.finished else "")
        if table.finished:
            # over already (its last owner stopped before marking it): nobody adopts it again
            self.nursery.start_soon(self.writer.release, table.logfile, OVER)
        return table

    async def _open_store(self) -> None:
        """Once this node joined the cluster (which gave it its id): its own finished tables
        that ended under keep_finished ago, read-only (as recovery loads them from files),
        and every table of the store it may take at start (its own after a restart,
        ownerless or expired ones), up to max_tables."""
        assert self.store is not None and self.cluster is not None
        try:
            finished = await self.store.call(self._finished_from_store)
            for table in finished:
                self._start_table(table)
            if finished:
                log.info("loaded %d finished table(s) read-only", len(finished))
            ids = await self.store.call(self.store.adoptable, self.max_tables)
            adopted = []
            for tid in ids:
                if not self.cluster.room():
                    break
                table = await self.adopt_table(tid)
                if table is not None:
                    adopted.append(tid)
        except StoreError:
            raise
        except Exception as e:
            raise StoreError(f"cannot read the tables of the store {redact(self.store.dsn)}: {e}") from e
        if adopted:
            log.info("took %d table(s) from the store: %s", len(adopted), ", ".join(adopted))

    async def _keep_leases(self) -> None:
        """Renew this node's leases every third of their length; a table whose lease was
        not renewed (another node adopted it, or it passed: the store was out of reach, the
        node paused) steps down. Renewals the store does not answer are logged and tried
        again: the fence refuses any write after the lease anyway."""
        assert self.store is not None
        period = self.store.lease_seconds / 3
        failing_since = said = None
        while True:
            await trio.sleep(period)
            running = [(t, t.logfile.epoch) for t in self.tables.values() if not t.finished]
            try:
                held = await self.store.call(self.store.renew)
            except Exception as e:
                self.metrics.lease_renewal_failures += 1
                self.metrics.store_error("lease_renewal")
                self.health.set_problem("store", f"the store does not answer ({first_line(e)})",
                                        "see that PostgreSQL runs and this node can reach it (--store)")
                now = trio.current_time()
                if failing_since is None:
                    failing_since = now
                if said is None or now - said >= 10:
                    said = now
                    log.warning("cannot renew this node's leases in the store (%s) for %.0f s; trying again every "
                                "%.1f s (once a lease passes, its table steps down; see that PostgreSQL runs and this node can reach "
                                "it)", first_line(e),
                                now - failing_since, period)
                continue
            self.metrics.lease_renewals += 1
            self.health.set_problem("store", None, "")
            if failing_since is not None:
                log.warning("leases renewed again after %.1f s", trio.current_time() - failing_since)
                failing_since = said = None
            for t, epoch in running:
                if held.get(t.id) != epoch and not t.finished:
                    t.lose_lease()

    # ---------------------------------------------------------------- connections
    async def attach(self, sock: socket.socket, who: Address) -> None:
        """Serve a connection the server makes to itself (its bots, server/botseats.py):
        ``sock`` is one end of a socketpair. A player's WebSocket and rules, but no slot of
        the public listener (docs/ARCHITECTURE.md, "Bots the server runs")."""
        await wire.serve_socket(sock, self._on_peer, limits=self.limits, who=who)

    async def _on_peer(self, peer: wire.Peer) -> None:
        if len(self.connections) >= self.max_connections:
            try:
                await peer.send(m.encode(m.Error("server_full", f"this server holds at most {self.max_connections} connections; try later")))
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
                if self.metrics_port is not None:
                    self.ops = OpsPort(self)
                    self.ops_port = await ops.start(self.ops.run, self.metrics_host, self.metrics_port)
                ops.start_soon(probe_data_dir, self.health, self.data_dir, PROBE_EVERY, self.world.run_sync)
                await self._serve(host, port, task_status)
                ops.cancel_scope.cancel()
        finally:
            self._dir_lock.release()

    async def _serve(self, host: str, port: int, task_status) -> None:
        if self.store is not None:
            try:
                await self.store.call(self.store.ensure_schema)
            except Exception as e:
                raise StoreError(f"cannot use the store {redact(self.store.dsn)}: {first_line(e)} "
                                 "(is PostgreSQL running there, and may this user create tables?)") from e
            recovered = []          # tables come from the store once this node's URL is known
        else:
            recovered = await self.world.run_sync(self.recover)
        async with trio.open_nursery() as outer:
            self._nursery = outer
            await outer.start(self._write_logs)
            try:
                async with trio.open_nursery() as tables_nursery:
                    self._tables_nursery = tables_nursery
                    for t in recovered:
                        self._start_table(t)
                    playing = [t for t in recovered if not t.finished]
                    finished = [t for t in recovered if t.finished]
                    if playing:
                        log.info("recovered %d unfinished table(s): %s", len(playing), ", ".join(t.id for t in playing))
                    if finished:
                        log.info("loaded %d finished table(s) read-only", len(finished))
                    with self._listen_scope:
                        async with trio.open_nursery() as conns:
                            self.port = await conns.start(partial(self.world.listen, limits=self.limits,
                                                                  http=WebFiles.for_server(self)),
                                                          self._on_peer, host, port)
                            if self.cluster is not None:        # (there is one with a store)
                                await self.cluster.join_cluster(host, self.port)
                                await self._open_store()
                                conns.start_soon(self._keep_leases)
                                await conns.start(self.cluster.run)
                            log.info("serving on ws://%s:%d (%s, durability %s)", host, self.port,
                                     f"store {redact(self.store.dsn)}, node {self.store.node_id}, data dir {self.data_dir}"
                                     if self.store is not None else f"data dir {self.data_dir}", self.durability)
                            # said once it serves: a start that fails says its one sentence alone
                            log.info("at most %d connections and %d log files open at once", self.max_connections,
                                     self.max_open_logs)
                            self._dir_lock.note(f"ws://{host}:{self.port}")
                            await conns.start(self.bots.run, host, self.port)
                            if self.cluster is not None:
                                await self.cluster.resume_all_bots()    # from the store, table by table
                            else:
                                self.bots.resume()
                            self.health.serving()
                            notify("READY=1", f"STATUS=serving on ws://{host}:{self.port}")     # under systemd
                            task_status.started(self.port)
                            await trio.sleep_forever()
                    # shutdown: stop the arbiters, then drain the log writer
                    for t in self.tables.values():
                        t.inbox_send.close()
            finally:
                self.writer.close()
        # (the log writer closed every log file as it ended)
        if self.store is not None:
            await self._leave_store()
        else:
            self._stamp_waiting()
        log.info("log writer: %s", self.writer.summary())
        if self.refusals.unlogged:
            log.info("refused intents: %d logged, %d only counted (over %d at once and %g a second per connection)",
                     self.refusals.logged, self.refusals.unlogged, self.refusals.burst, self.refusals.rate)
        log.info("stopped; all logs flushed and fsynced")

    async def _leave_store(self) -> None:
        """Every commit is written: give up this node's leases, so that another node may
        take its tables at once instead of after the lease (or this one, restarted)."""
        assert self.store is not None and self.cluster is not None
        with trio.move_on_after(5):
            try:
                released = await self.store.call(self.store.release_leases)
            except Exception as e:
                log.warning("could not give up this node's leases in the store (%s): other nodes take its tables "
                            "once they pass", e)
            else:
                if released:
                    log.info("gave up the leases of %d table(s) in the store", released)
        await self.cluster.leave()
        await trio.to_thread.run_sync(self.store.close)

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

    def _stamp_waiting(self) -> None:
        """At shutdown, a table still waiting for players gets its log's mtime set to when
        the last person left it (the shutdown itself, if someone was there), so that the
        next start counts its expiry from then."""
        wall, now = self.world.wall(), trio.current_time()
        for t in self.tables.values():
            if t.started or t.finished:
                continue
            since = t.empty_since()
            when = wall - max(0.0, now - since) if since is not None else wall
            try:
                os.utime(t.logfile.path, (when, when))
            except OSError:
                pass            # gone or not ours: recovery counts from its last write

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
        with trio.move_on_after(seconds):
            while self.connections:
                await trio.sleep(0.02)
