"""Replays of finished games for the web client: the HTTP answers behind its replay viewer.

The steps are computed here, by the games' own engines (a headless/timeline.Timeline of
the log, as in `wildtable replay`), never in the page: the page asks for one step at a
time and draws what it gets. Two plain HTTP GETs (docs/PROTOCOL.md, "Replays over HTTP"):

    /replays.json                       the finished games this server can replay
    /replay/TABLE.json?step=N&view=V    one step of one game (or ?seq=N: that seq's step)

Why HTTP and not the WebSocket: a replay needs no seat, no name and no connection state,
and the same two requests serve `wildtable replay LOG --web` (a local server with no
games). listener.py's HTTP handler is awaited in the connection's own task; the lookups
(which games may be served, where their logs are: a file's status, the store) are done
here, in worker threads, and the work (folding a log, a step's view, the JSON) in the
replay process, one request at a time (server/replay_process.py: not a thread of the
server, whose GIL it would hold from every table; bench/README.md, "Replays in a process
of their own"). A timeline is kept there once built (bounded by the bytes of its logs,
each under its log's identity), so each further step costs a few records folded from the
nearest kept state, a view and the JSON. At most REPLAY_WAITING requests wait for it (of
them REPLAY_PER_ADDRESS from one address),
and an answer not done within REPLAY_TIMEOUT is given up (the process with it): 503.

Only a finished game is ever served, whole: a table still being played keeps its log to
the server (its shuffles and every hand are in it), so a table id is looked up among the
finished tables the server still holds and the logs it moved to DATA_DIR/finished/ (on a
cluster's store, `serve --store`: the tables marked finished there, StoreGames, but not
those that expired waiting for players), and nothing else; and a log whose replay does
not end its game is refused. The id must be a table id (letters, digits, ``-``, ``_``),
so no request names a path outside that folder, and a log is read only from a descriptor
opened without following a link and checked to be a regular file (``open_regular``,
server/replay_fold.py), so nothing swapped in after a check is read.
"""

from __future__ import annotations

import logging
import math
import os
import re
import stat
import time
from pathlib import Path
from typing import Any, Callable
from urllib.parse import parse_qs

import attrs

from .logwriter import EXPIRED, OVER
from .metrics import count_store_error
from .oplog import Throttled
from .replay_fold import ReplayRefused, json_bytes, log_gone, not_found, open_regular, refuse_too_big
from .replay_process import Ask, FromFile, Given, ReplayProcess, listing_json, step_json
from .store_pg import StoreError, first_line

_said = Throttled(logging.getLogger("wildtable.server"))
LOG_SUFFIX = ".wlog"
TABLE_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
LIST_MAX = 100                      # finished games listed at most, the newest first
LIST_FOR = 2.0                      # seconds a listing is reused
HEAD_BYTES = 16 * 1024              # read of each listed log: its header and the seat claims in it


def still_playing(table_id: str) -> ReplayRefused:
    return ReplayRefused(403, f"table {table_id!r} is still being played: only a finished game can be "
                              "replayed (its log holds every hand)")




@attrs.frozen
class Found:
    """Where a finished game's log is: a file (StoreGames: the table id, its key in the
    store), and its stamp: the store's size and records, which its timeline is kept under
    (a file's size and mtime as looked at; the replay process keys a file's timeline by
    what it opens, server/replay_process.py); ``held``: the log of a table the server
    still holds."""
    path: Path | str
    stamp: tuple
    held: bool = False


@attrs.frozen
class Tables:
    """What the server holds, as the event loop saw it when the request came: its finished
    tables' logs (None: a finished table with no log to read), and the ids of the tables
    still being played."""
    held: dict
    playing: frozenset = frozenset()


def server_tables(server, held_as: Callable[[Any], Any]) -> Tables:
    """``server``'s tables as the event loop sees them now: each finished one held as
    ``held_as(table)`` (its log, or None if it has none), the rest playing."""
    held, playing = {}, []
    for t in list(server.tables.values()):
        if t.finished:
            held[t.id] = held_as(t)
        else:
            playing.append(t.id)
    return Tables(held, frozenset(playing))



class FinishedGames:
    """The server's finished games: those it still holds (listed in the lobby, watchable)
    and those whose logs it moved to DATA_DIR/finished/. ``tables()`` runs in the event
    loop (it reads the server's tables); the rest in a worker thread, but for the logs
    themselves: the replay process opens each (server/replay_process.py ``FromFile``)."""

    lobby = True                # the page's way back: the server's lobby
    finished_only = True        # a log that does not end its game is refused

    def __init__(self, server):
        self.server = server

    def tables(self) -> Tables:
        def log_path(t) -> Path | None:
            path = getattr(t.logfile, "path", None)
            return None if path is None else Path(path)
        return server_tables(self.server, log_path)

    def candidates(self, tables: Tables) -> list[tuple[str, Path, float]]:
        """(table id, log, when it was last written) of every finished game, newest first."""
        found = []
        for tid, path in tables.held.items():
            if path is None:
                continue
            try:
                found.append((tid, path, path.lstat().st_mtime))
            except OSError:
                continue
        try:
            with os.scandir(self.server.finished_dir) as it:
                for e in it:
                    tid = e.name[:-len(LOG_SUFFIX)]
                    if not e.name.endswith(LOG_SUFFIX) or not TABLE_ID.fullmatch(tid) or tid in tables.held:
                        continue
                    try:
                        st = e.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    if stat.S_ISREG(st.st_mode):
                        found.append((tid, Path(e.path), st.st_mtime))
        except OSError:
            pass            # no finished/ yet
        found.sort(key=lambda x: x[2], reverse=True)
        return found

    def find(self, table_id: str, tables: Tables) -> Found:
        """The log of finished game ``table_id``: a table the server holds finished, or
        finished/TABLE.wlog (a regular file: not a link to somewhere else). ``read`` checks
        again what it opens."""
        if table_id in tables.playing:
            raise still_playing(table_id)
        held = table_id in tables.held
        path = tables.held[table_id] if held else self.server.finished_dir / (table_id + LOG_SUFFIX)
        try:
            st = None if path is None else path.lstat()
        except OSError:
            st = None
        if st is None or not stat.S_ISREG(st.st_mode):
            raise log_gone(table_id) if held else not_found(table_id)
        return Found(path, (st.st_size, st.st_mtime_ns), held)

    def ref(self, found: Found):
        return FromFile(str(found.path), found.held)

    def head(self, path: Path) -> bytes:
        with open_regular(path) as (f, _):
            return f.read(HEAD_BYTES)


class StoreGames:
    """The finished games of a cluster's store (`serve --store`): every table marked
    finished in wt_tables, whichever node played it, read from its records (the .wlog
    bytes); never one marked finished because it expired waiting for players (wt_tables.ended:
    from files its log is in expired/, which is never read). ``tables()`` runs in the event
    loop; the rest in a worker thread, each a query."""

    lobby = True
    finished_only = True

    def __init__(self, server):
        self.server = server
        self.store = server.store

    def tables(self) -> Tables:
        return server_tables(self.server, lambda t: t.id)

    def _ask(self, fn, *args):
        try:
            return fn(*args)
        except StoreError as e:         # records missing: the log is damaged
            raise ReplayRefused(422, f"{e}") from None
        except Exception as e:
            # the player is told to try again; the operator is told why (server/oplog.py)
            count_store_error(self.server.metrics, "replays")
            _said.warning(f"store_unreadable:{type(e).__name__}", "the replay viewer cannot read the store (%s: "
                          "%s): answered 503; see that PostgreSQL runs and that this node can reach it (--store)",
                          type(e).__name__, first_line(e))
            raise ReplayRefused(503, "this server cannot read its store just now; try again in a moment "
                                     f"({type(e).__name__})") from None

    def candidates(self, tables: Tables) -> list[tuple[str, str, float]]:
        """(table id, table id, when it was marked finished: Unix time, 0 if the store does
        not know) of every finished game, the most recently finished first."""
        return [(tid, tid, when or 0.0) for tid, when in self._ask(self.store.finished_tables)]

    def find(self, table_id: str, tables: Tables) -> Found:
        if table_id in tables.playing:
            raise still_playing(table_id)
        size = self._ask(self.store.log_size, table_id)
        if size is None:
            raise not_found(table_id)
        status, nbytes, count = size
        if status == EXPIRED:
            raise not_found(table_id)           # no game: as from files, where it is in expired/
        if status != OVER:
            raise still_playing(table_id)       # whatever of its log is in the store yet
        if count == 0:
            raise ReplayRefused(422, f"table {table_id!r} is over, but the store holds none of its records: "
                                     "its log is damaged")
        return Found(table_id, (nbytes, count))

    def ref(self, found: Found):
        return Given(found.stamp)

    def read(self, table_id: str, found: Found) -> bytes:
        refuse_too_big(table_id, found.stamp[0], "`wildtable export` writes it to a file")
        return self._ask(self.store.load_records, table_id)

    def head(self, table_id: str) -> bytes:
        return self._ask(self.store.log_head, table_id, HEAD_BYTES)


ONE_LOG = ("given",)        # the stamp of OneLog's log: it is read once


class OneLog:
    """`wildtable replay LOG --web`: the one log given on the command line, read already."""

    lobby = False               # no games here: the viewer only
    finished_only = False       # the player's own file: shown as far as it goes, as the terminal viewer does

    def __init__(self, table_id: str, path: Path | str, data: bytes):
        self.table_id, self.path, self.data = table_id, path, data

    def tables(self) -> Tables:
        return Tables({})

    def candidates(self, tables: Tables) -> list[tuple[str, Path | str, float]]:
        return [(self.table_id, self.path, 0.0)]

    def find(self, table_id: str, tables: Tables) -> Found:
        if table_id != self.table_id:
            raise ReplayRefused(404, f"this viewer shows {self.table_id!r} only: {self.path}")
        return Found(self.path, ONE_LOG)

    def ref(self, found: Found):
        return Given(found.stamp)

    def read(self, table_id: str, found: Found) -> bytes:
        return self.data

    def head(self, path: Path) -> bytes:
        return self.data



class Replays:
    """The two answers, over a source of finished games (FinishedGames, StoreGames, OneLog):
    the lookups here (which games may be served, where their logs are), the work in the
    replay process (server/replay_process.py)."""

    def __init__(self, source, *, clock: Callable[[], float] = time.monotonic):
        self.source = source
        self.clock = clock
        self._listing: tuple[float, bytes] = (-math.inf, b"")
        self.process = ReplayProcess()

    @staticmethod
    def serves(path: str) -> bool:
        return path == "/replays.json" or (path.startswith("/replay/") and path.endswith(".json"))

    async def answer(self, path: str, query: str, address: str | None = None) -> tuple[int, bytes]:
        """(HTTP status, JSON body) for ``/replays.json`` or ``/replay/TABLE.json?...``:
        the answer, or ``{"error": sentence}``. ``address``: the asker's, as the listener's
        per-address caps key it (its share of the replay process's line)."""
        tables = self.source.tables()
        try:
            if path == "/replays.json":
                body = await self.process.serve(lambda: self._listing_json(tables), address)
            else:
                tid = path[len("/replay/"):-len(".json")]
                if not TABLE_ID.fullmatch(tid):
                    raise ReplayRefused(404, "a replay is /replay/TABLE.json, TABLE a table id "
                                             "(letters, digits, - and _)")
                q = parse_qs(query, keep_blank_values=True)
                body = await self.process.serve(lambda: self._step_json(tid, q, tables), address)
            return 200, body
        except ReplayRefused as e:
            return e.status, json_bytes({"error": e.message})

    def close(self) -> None:
        """The server stopped: the replay process ends."""
        self.process.close()

    async def prepare(self, tid: str) -> None:
        """Fold ``tid``'s log in the replay process now, however long it takes (`replay
        --web`, before it serves: its first step then never waits REPLAY_TIMEOUT for the
        fold of a long log); ReplayRefused if it does not replay."""
        found = self.source.find(tid, self.source.tables())
        ask = Ask(tid, self.source.ref(found), {}, self.source.lobby, self.source.finished_only)
        await self.process.call(step_json, ask, self.source.read(tid, found))

    async def _listing_json(self, tables: Tables) -> bytes:
        when, body = self._listing
        if self.clock() - when < LIST_FOR:
            return body
        found, omitted = await self.process.in_thread(self._heads, tables)
        body = await self.process.call(listing_json, found, omitted, self.source.lobby)
        self._listing = (self.clock(), body)
        return body

    def _heads(self, tables: Tables) -> tuple[list[tuple[str, bytes, bool, float]], int]:
        """In a worker thread: (table id, its log's first bytes, held, when written) of the
        newest finished games, and how many more there are."""
        found = self.source.candidates(tables)
        heads = []
        for tid, path, written in found[:LIST_MAX]:
            try:
                heads.append((tid, self.source.head(path), tid in tables.held, written))
            except OSError:
                continue
        return heads, max(0, len(found) - LIST_MAX)

    async def _step_json(self, tid: str, q: dict, tables: Tables) -> bytes:
        found = await self.process.in_thread(self.source.find, tid, tables)
        ask = Ask(tid, self.source.ref(found), q, self.source.lobby, self.source.finished_only)
        body = await self.process.call(step_json, ask)
        if body is None:        # no timeline of that log there: it gets the log's bytes
            data = await self.process.in_thread(self.source.read, tid, found)
            body = await self.process.call(step_json, ask, data)
        return body


