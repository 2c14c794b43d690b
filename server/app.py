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
import os
import re
import secrets
import time
from functools import partial
from pathlib import Path

import trio

from wildtable import __version__
from wildtable.protocol import messages as m
from wildtable.protocol.codec import MAX_SERVER_FRAME, packb
from wildtable.protocol.engine import game as find_game
from wildtable.protocol.errors import IllegalAction, LogError
from wildtable.protocol.logfmt import SeatClaimed, read_log
from wildtable.protocol.replay import replay

from . import wire
from .connection import CLOSE_TRY_LATER, HELLO_TIMEOUT, OUTBOX, OUTBOX_BYTES, Connection
from .logwriter import LogFile, LogWriter, StorageFailed, fsync_dir
from .table import Table, secure_permutation

log = logging.getLogger("wildtable.server")

LOG_SUFFIX = ".wlog"
FINISHED_DIR = "finished"     # where the logs of finished games go once the server forgets them
KEEP_FINISHED = 3600.0        # seconds a finished table stays listed and watchable
_TABLE_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
LIST_BUDGET = MAX_SERVER_FRAME // 2   # bytes of table entries in one list_tables answer at most
LIST_ENTRY_MAX = 4096                 # an entry's size is bounded (name, players, settings the game checked)


def _check_lobby_facts(path: Path, contents) -> list:
    """What replay does not check: the table id is the file's (a log copied under another
    name would be a second table with the same id). Returns the seat records, whose seats
    replay has checked (one out of range stopped the server or took over another seat)."""
    h = contents.header
    if h.table != path.stem:
        raise LogError("bad_record", f"the header names table {h.table!r}, but the file is {path.name!r}", offset=0)
    return [r for r in contents.records if type(r) is SeatClaimed]


class Server:
    def __init__(self, data_dir: str | Path, *, durability: str = "always", max_tables: int = 1000,
                 max_connections: int = 5000, rate_limit: float = 50.0, rate_burst: float = 100.0,
                 chance=None, outbox: int = OUTBOX, hello_timeout: float = HELLO_TIMEOUT,
                 keep_finished: float = KEEP_FINISHED, outbox_bytes: int = OUTBOX_BYTES,
                 max_handshakes: int = wire.MAX_HANDSHAKES, max_per_address: int = wire.MAX_PER_ADDRESS,
                 handshake_timeout: float = wire.HANDSHAKE_TIMEOUT, allow_origins=()):
        self.data_dir = Path(data_dir)
        self.finished_dir = self.data_dir / FINISHED_DIR
        self.keep_finished = keep_finished
        self.writer = LogWriter(durability)
        self.durability = durability
        self.max_tables = max_tables
        self.max_connections = max_connections
        self.rate_limit = rate_limit
        self.rate_burst = rate_burst
        self.outbox = outbox                    # frames waiting per connection before it counts as slow
        self.outbox_bytes = outbox_bytes        # bytes waiting (beyond one frame) before it counts as slow
        self.limits = wire.Limits(max_handshakes, max_per_address, handshake_timeout, tuple(allow_origins))
        self.hello_timeout = hello_timeout
        self.version = __version__
        self.tables: dict[str, Table] = {}
        self._creating = 0                      # tables being created (counted against max_tables)
        self.connections: set[Connection] = set()
        self.port: int | None = None
        self._nursery: trio.Nursery | None = None
        self._tables_nursery: trio.Nursery | None = None
        self._listen_scope = trio.CancelScope()
        self.refused_logs: dict[str, str] = {}
        self._moving: set[str] = set()          # forgotten tables whose logs are on their way to finished/
        # Where shuffles come from: the OS's secure source. Tests may pass a seeded
        # function (size -> permutation) to make deals reproducible; the CLI never does.
        self.chance = chance or secure_permutation

    # ---------------------------------------------------------------- lobby
    def _new_id(self) -> str:
        while True:
            tid = "t" + secrets.token_hex(4)
            if tid not in self.tables and not (self.data_dir / (tid + LOG_SUFFIX)).exists() \
                    and not (self.finished_dir / (tid + LOG_SUFFIX)).exists():
                return tid

    def table_list(self) -> m.TableList:
        """The answer to list_tables, within LIST_BUDGET bytes whatever the number of tables
        (a client refuses a frame over MAX_SERVER_FRAME, and finished tables are not capped
        by max_tables): waiting tables first, then those in play, then the most recently
        finished; what does not fit is counted in ``omitted``. Listed in creation order."""
        infos = [t.info() for t in self.tables.values()]
        if len(infos) * LIST_ENTRY_MAX <= LIST_BUDGET:
            return m.TableList(tuple(infos))
        rank = {"waiting": 0, "playing": 1, "over": 2}
        order = sorted(range(len(infos)), key=lambda i: (rank.get(infos[i]["status"], 2), -i))
        chosen, used = set(), 0
        for i in order:
            size = len(packb(infos[i]))
            if used + size > LIST_BUDGET:
                break
            chosen.add(i)
            used += size
        return m.TableList(tuple(x for i, x in enumerate(infos) if i in chosen), len(infos) - len(chosen))

    def no_table(self, table_id: str) -> str:
        """Why there is no table ``table_id`` here, for the `no_such_table` error."""
        if table_id in self._moving or (
                _TABLE_ID.fullmatch(table_id) and (self.finished_dir / (table_id + LOG_SUFFIX)).exists()):
            return (f"table {table_id!r} is over and no longer held by this server; its log is "
                    f"{FINISHED_DIR}/{table_id}{LOG_SUFFIX} in the server's data dir")
        return f"no table {table_id!r}; list_tables shows the open ones"

    async def create_table(self, game_name: str, seats: int, settings: dict, name: str = "") -> Table:
        game = find_game(game_name)
        if not game.MIN_PLAYERS <= seats <= game.MAX_PLAYERS:
            raise IllegalAction("bad_seats", f"{game.TITLE} takes {game.MIN_PLAYERS} to {game.MAX_PLAYERS} players, not {seats}")
        # tables still being created count too: the log file is made in a thread, and
        # creates arriving meanwhile must not all pass the cap
        open_tables = sum(1 for t in self.tables.values() if not t.finished) + self._creating
        if open_tables >= self.max_tables:
            raise IllegalAction("too_many_tables", f"this server holds at most {self.max_tables} open tables; join an existing one or try later")
        created = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
        self._creating += 1
        try:
            tid = self._new_id()
            table = await trio.to_thread.run_sync(
                lambda: Table.create(tid, game, seats, dict(settings), self.data_dir / (tid + LOG_SUFFIX), self.writer,
                                     created, name, **self._table_kw()))
            self._start_table(table)
        except OSError as e:
            # the disk's fault, not the client's: answer it (uncaught, it stopped the whole server)
            log.error("cannot create a table's log in %s: %s", self.data_dir, e)
            raise IllegalAction("storage_error", f"the server cannot write a new table's log ({e.strerror or e}); "
                                "try later or tell its operator") from None
        finally:
            self._creating -= 1
        log.info("table %s created: %s for %d", tid, game.NAME, seats)
        return table

    def _start_table(self, table: Table) -> None:
        self.tables[table.id] = table
        self._tables_nursery.start_soon(table.run)

    def _table_kw(self) -> dict:
        return dict(on_finished=self._finished, chance=self.chance, keep_finished=self.keep_finished,
                    on_evict=self._evict)

    def _finished(self, table: Table) -> None:
        o = table.game.outcome(table.state)
        log.info("table %s finished after %d records: scores %s, winners %s", table.id, table.seq, list(o.scores), list(o.winners))

    def _evict(self, table: Table) -> None:
        """A finished table nobody is at, held for keep_finished: forget it, and move its
        log out of the way of recovery (called by its arbiter as it ends)."""
        if self.tables.get(table.id) is table:
            del self.tables[table.id]
        for c in self.connections:
            if c.route is table:        # so that nothing keeps the forgotten table in memory
                c.route = None
        table.logfile.close()
        log.info("table %s forgotten (finished, nobody at it); its log goes to %s/", table.id, FINISHED_DIR)
        # until the move (in a thread) is done, no_table knows it from here, not from finished/
        self._moving.add(table.id)
        self._nursery.start_soon(self._move_out, table.id, table.logfile.path)

    async def _move_out(self, table_id: str, path: Path) -> None:
        try:
            await trio.to_thread.run_sync(self._archive, path)
        finally:
            self._moving.discard(table_id)

    def _archive(self, path: Path) -> bool:
        """Move a finished game's log into finished/, durably (the rename and both
        directories fsynced). Its contents are not touched. On failure it stays where it
        is (recovery archives it next time) and the reason is logged."""
        try:
            self.finished_dir.mkdir(exist_ok=True)
            target = self.finished_dir / path.name
            if os.path.lexists(target):
                # rename replaces silently: never destroy a log already archived there
                raise FileExistsError(errno.EEXIST, f"{FINISHED_DIR}/{path.name} exists already (left as it is)")
            os.rename(path, target)
            fsync_dir(self.finished_dir)
            fsync_dir(self.data_dir)
        except OSError as e:
            log.warning("%s: cannot move the finished game's log to %s/: %s", path, FINISHED_DIR, e.strerror or e)
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
        archived = 0
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
                seat_records = _check_lobby_facts(path, contents)
            except (LogError, IllegalAction) as e:
                self.refused_logs[path.name] = str(e)
                log.error("%s: refusing to load this table: %s", path, e)
                continue
            h = contents.header
            over = result.game.outcome(result.state).over
            finished_ago = 0.0
            if over:
                # how long ago it finished: its log was last written then
                finished_ago = max(0.0, time.time() - path.stat().st_mtime)
                if finished_ago >= self.keep_finished and self._archive(path):
                    archived += 1
                    continue
            # a finished game's log is left as it is (a torn tail too): nothing more is written to it
            logfile = LogFile(path) if over else LogFile.reopen(path, contents.good_length)
            table = Table(h.table, result.game, h.seats, dict(h.settings), result.state, logfile, self.writer,
                          seq=result.seq, seat_records=seat_records, finished_ago=finished_ago,
                          **self._table_kw())
            tables.append(table)
        if archived:
            log.info("moved the logs of %d game(s) finished over %g s ago to %s/", archived, self.keep_finished, FINISHED_DIR)
        return tables

    # ---------------------------------------------------------------- connections
    async def _on_peer(self, peer: wire.Peer) -> None:
        if len(self.connections) >= self.max_connections:
            try:
                await peer.send(m.encode(m.Error("server_full", f"this server holds at most {self.max_connections} connections; try later")))
            except wire.ConnectionClosed:
                return      # it left already
            await peer.close(CLOSE_TRY_LATER, "server full")
            return
        conn = Connection(self, peer)
        self.connections.add(conn)
        try:
            await conn.run()
        finally:
            self.connections.discard(conn)

    # ---------------------------------------------------------------- lifetime
    async def run(self, host: str = "127.0.0.1", port: int = 8765, *, task_status=trio.TASK_STATUS_IGNORED) -> None:
        """Serve until cancelled or ``shutdown()``; ``task_status.started`` gets the port."""
        self.data_dir.mkdir(parents=True, exist_ok=True)
        recovered = await trio.to_thread.run_sync(self.recover)
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
                            self.port = await conns.start(partial(wire.serve, limits=self.limits), self._on_peer, host, port)
                            log.info("serving on ws://%s:%d (data dir %s, durability %s)", host, self.port,
                                     self.data_dir, self.durability)
                            task_status.started(self.port)
                            await trio.sleep_forever()
                    # shutdown: stop the arbiters, then drain the log writer
                    for t in self.tables.values():
                        t.inbox_send.close()
            finally:
                self.writer.close()
        for t in self.tables.values():
            t.logfile.close()
        log.info("log writer: %s", self.writer.summary())
        log.info("stopped; all logs flushed and fsynced")

    async def _write_logs(self, task_status=trio.TASK_STATUS_IGNORED) -> None:
        """The log writer; if the logs cannot be written the server stops (nothing more
        can be made durable, so nothing more may be acknowledged), telling its clients why."""
        try:
            await self.writer.run(task_status=task_status)
        except StorageFailed as e:
            log.error("%s: stopping the server (every acknowledged action is in the logs)", e)
            await self._goodbye(f"server stopping: {e}", 1011, "server cannot write its logs", seconds=1)
            raise

    async def shutdown(self, reason: str = "server shutting down") -> None:
        """Stop accepting, tell every client, close them, let run() flush and return."""
        log.info("shutting down: %s", reason)
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
