"""Tables kept as log files in the data dir (no --store): recovery at start, a new table's
file, moving a forgotten table's log to finished/ or expired/, the unfinished tables'
stamps at shutdown and their makers (owners.json) kept (docs/ARCHITECTURE.md,
"Recovery"). One of the two places the tables' logs live (server/storage.py chooses); the
other is server/store_tables.py."""

from __future__ import annotations

import errno
import logging
import os
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import trio

from wildtable.protocol.errors import IllegalAction, LogError
from wildtable.protocol.logfmt import SeatClaimed, read_log
from wildtable.protocol.replay import replay

from .interfaces import LogSink
from .jsonfile import read_json, replace_json
from .logwriter import LOG_MODE, LogFile, LogWriter, fsync_dir
from .table import Table
from .oplog import about

if TYPE_CHECKING:
    from .app import Server

log = logging.getLogger("wildtable.server")

LOG_SUFFIX = ".wlog"
FINISHED_DIR = "finished"     # where the logs of finished games go once the server forgets them
EXPIRED_DIR = "expired"       # where the logs of waiting tables that expired go
DATA_DIR_MODE = 0o700         # the logs hold every shuffle: nobody else may read them
# who made each table not finished (the address --max-waiting-per-address counts it
# against), written at shutdown and read at start: the logs never hold an address (they
# are replayed and shared), so without it a restart made every such table nobody's
OWNERS_FILE = "owners.json"
# while serving it is written again (in a worker thread) at most this often, when tables
# were made or forgotten since: after a crash it is at most that stale
OWNERS_EVERY = 10.0


def waiting(seq: int, seats: int, seat_records: list) -> bool:
    """Whether a table read from its log still waits for players (as Table.started)."""
    if seq > 0:
        return False
    held = {}
    for r in seat_records:
        held[r.seat] = bool(r.token_hash)
    return sum(held.values()) < seats


def ended_as(table) -> str:
    """How a forgotten table ended, for the log line that says it."""
    return "finished" if table.finished else ("given up in play" if table.started else "waiting for players")


def check_lobby_facts(table_id: str, where: str, contents) -> list:
    """What replay does not check: the table id is the file's (a log copied under another
    name would be a second table with the same id) or the store's row's. Returns the seat
    records, whose seats replay has checked (one out of range stopped the server or took
    over another seat)."""
    h = contents.header
    if h.table != table_id:
        raise LogError("bad_record", f"the header names table {h.table!r}, but it is {where}", offset=0)
    return [r for r in contents.records if type(r) is SeatClaimed]


class LocalTables:
    """The tables' logs as files in ``server.data_dir``, written by a LogWriter."""

    store = None
    cluster = None

    def __init__(self, server: Server):
        self.server = server
        self._owners_changed = False        # a table made or forgotten since owners.json was written
        self._owners_warned = False         # its last write failed, and the log said so
        config = server.config
        self.data_dir = server.data_dir
        writer = LogWriter(config.durability, max_open=config.max_open_logs, disk=server.world.disk,
                           thread=server.world.own_thread, clock=server.world.clock)
        writer.timings = server.metrics
        writer.on_pause = server.disk_paused
        self.writer: LogSink[Any] = writer

    def describe(self) -> str:
        return f"data dir {self.data_dir}"

    async def open(self) -> list[Table]:
        """Before the port opens: every table of the data dir, from its log."""
        return await self.server.world.run_sync(self.recover)

    async def serving(self, host: str, port: int, nursery: trio.Nursery) -> None:
        """Once listening: owners.json kept up to date (a node of a cluster joins it here)."""
        nursery.start_soon(self._keep_owners)

    async def _keep_owners(self) -> None:
        """Every OWNERS_EVERY seconds, owners.json written again if tables were made or
        forgotten since (in a worker thread: the write and its fsync)."""
        world = self.server.world
        while True:
            await world.clock.sleep(OWNERS_EVERY)
            if self._owners_changed:
                self._owners_changed = False
                await world.run_sync(self._write_owners, self.server.open_tables.owners())

    async def resume_bots(self) -> None:
        self.server.bots.resume()

    async def adopt_table(self, table_id: str) -> Table | None:
        return None         # files are this server's alone: nothing to adopt

    def adopting(self, table_id: str) -> bool:
        return False

    def lobby_entries(self) -> list[tuple[int, bytes]]:
        return [t.list_entry() for t in self.server.tables.values()]

    async def create(self, tid: str, game, seats: int, settings: dict, created: str, name: str,
                     address: str | None) -> Table:
        """A new table with its log file (made in a worker thread)."""
        server = self.server
        table = await server.world.run_sync(
            lambda: Table.create(tid, game, seats, dict(settings), partial(LogFile.create, self.data_dir / (tid + LOG_SUFFIX)),
                                 self.writer, created, name, owner=address, **server.table_kw()))
        if address is not None:
            self._owners_changed = True
        return table

    def forget(self, table: Table, where: str) -> None:
        """Move a forgotten table's log out of the way of recovery (to ``where``)."""
        log.info("table %s forgotten (%s, nobody at it); its log goes to %s/", table.id, ended_as(table), where,
                 extra=about(table=table.id))
        if table.owner is not None:
            self._owners_changed = True
        self.server.nursery.start_soon(self._move_out, table.id, table.logfile.path, where)

    async def close(self) -> None:
        """The log writer is done: stamp the tables not finished, and keep who made them."""
        self._stamp_unfinished()
        self._write_owners(self.server.open_tables.owners())

    def _write_owners(self, owners: dict[str, str]) -> None:
        """DATA_DIR/owners.json: {table id: the address that made it} of the tables not
        finished (0600, as the logs: addresses are personal data), written whole and
        fsynced, then put in place; at shutdown, and while serving (_keep_owners). The
        next start counts each against its address again (after a crash: as of the last
        write, at most OWNERS_EVERY seconds before; a table made since counts against
        nobody). A failed write is said once, until one succeeds."""
        path = self.data_dir / OWNERS_FILE
        try:
            replace_json(path, owners, durable=True)
        except OSError as e:
            if not self._owners_warned:
                self._owners_warned = True
                log.warning("cannot write %s (%s): after a restart the tables not finished may count against no "
                            "address's --max-waiting-per-address (tried again as tables come and go)", path,
                            e.strerror or e)
            return
        self._owners_warned = False

    def _owners(self) -> dict[str, str]:
        """owners.json as last written ({} if there is none or it is not such a map)."""
        data = read_json(self.data_dir / OWNERS_FILE)
        if not isinstance(data, dict):
            return {}
        return {k: v for k, v in data.items() if isinstance(k, str) and isinstance(v, str)}

    def _stamp_unfinished(self) -> None:
        """At shutdown, a table still waiting for players or in play gets its log's mtime
        set to when the last person left it (the shutdown itself, if someone was there),
        so that the next start counts its expiry from then."""
        wall, now = self.server.world.wall(), trio.current_time()
        for t in self.server.tables.values():
            if t.finished:
                continue
            since = t.empty_since()
            when = wall - max(0.0, now - since) if since is not None else wall
            try:
                self.server.world.disk.stamp(t.logfile.path, when)
            except OSError:
                pass            # gone or not ours: recovery counts from its last write

    async def _move_out(self, table_id: str, path: Path, where: str) -> None:
        try:
            await self.server.world.run_sync(self.archive, path, where)
        finally:
            self.server._moving.pop(table_id, None)

    def archive(self, path: Path, where: str = FINISHED_DIR) -> bool:
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

    def recover(self) -> list[Table]:
        """Rebuild every table in the data dir from its log: an unfinished one to play on,
        a finished one read-only (its log is not opened for writing; it answers spectate,
        rejoin and list_tables, and does not count against max_tables) until keep_finished
        has passed since it finished; one that finished longer ago has its log moved to
        finished/, which recovery does not read, so start-up does not grow with history."""
        server, config = self.server, self.server.config
        owners = self._owners()
        tables = []
        archived = expired = 0
        widened = []
        for path in sorted(self.data_dir.glob("*" + LOG_SUFFIX)):
            try:
                data = path.read_bytes()
            except OSError as e:
                # a directory or an unreadable file with the suffix: refuse it, not the server
                # (uncaught, it stopped `serve` with "cannot listen on ...")
                server.refused_logs[path.name] = f"cannot read the file: {e.strerror or e}"
                log.error("%s: refusing to load this table: cannot read the file: %s", path, e.strerror or e)
                continue
            try:
                contents = read_log(data)
                if contents.torn is not None:
                    log.warning("%s: torn tail of %d bytes at offset %d cut (an unacknowledged write)", path,
                                contents.torn.dropped, contents.torn.offset)
                result = replay(contents)
                seat_records = check_lobby_facts(path.stem, f"the file {path.name!r}", contents)
            except (LogError, IllegalAction) as e:
                server.refused_logs[path.name] = str(e)
                log.error("%s: refusing to load this table: %s (the file is left as it is; `wildtable replay FILE "
                          "--verify` says what is wrong; move it out of the data dir once dealt with)", path, e)
                continue
            h = contents.header
            over = result.game.outcome(result.state).over
            st = path.stat()
            # how long ago it finished, or since anyone was at a table not finished (the
            # server stamps those at shutdown): its log was last written then
            age = max(0.0, server.world.wall() - server.world.disk.mtime(path))
            finished_ago = empty_for = 0.0
            if over:
                finished_ago = age
                if finished_ago >= config.keep_finished and self.archive(path):
                    archived += 1
                    continue
            else:
                empty_for = age
                expiry = config.waiting_expiry if waiting(result.seq, h.seats, seat_records) else config.abandoned_expiry
                if empty_for >= expiry and self.archive(path, EXPIRED_DIR):
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
                          empty_for=empty_for, log_format=h.format, owner=None if over else owners.get(h.table),
                          **server.table_kw())
            tables.append(table)
        if archived:
            log.info("moved the logs of %d game(s) finished over %g s ago to %s/", archived, config.keep_finished,
                     FINISHED_DIR)
        if expired:
            log.info("moved the logs of %d table(s) nobody was at for over %g s while they waited for players, or %g s "
                     "in play, to %s/", expired, config.waiting_expiry, config.abandoned_expiry, EXPIRED_DIR)
        if widened:
            log.warning("%d log(s) could be read by other users (%s%s); made readable by the owner only (0600): "
                        "they hold every shuffle", len(widened), ", ".join(widened[:5]), ", ..." if len(widened) > 5 else "")
        return tables
