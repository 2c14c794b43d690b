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
nearest kept state, a view and the JSON. At most REPLAY_WAITING requests wait for it,
and an answer not done within REPLAY_TIMEOUT is given up (the process with it): 503.

Only a finished game is ever served, whole: a table still being played keeps its log to
the server (its shuffles and every hand are in it), so a table id is looked up among the
finished tables the server still holds and the logs it moved to DATA_DIR/finished/ (on a
cluster's store, `serve --store`: the tables marked finished there, StoreGames, but not
those that expired waiting for players), and nothing else; and a log whose replay does
not end its game is refused. The id must be a table id (letters, digits, ``-``, ``_``),
so no request names a path outside that folder, and a log is read only from a descriptor
opened without following a link and checked to be a regular file (``open_regular``), so
nothing swapped in after a check is read.
"""

from __future__ import annotations

import bisect
import errno
import json
import logging
import math
import os
import re
import stat
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable
from urllib.parse import parse_qs

import attrs

from wildtable.protocol.errors import IllegalAction, LogError
from wildtable.protocol.logfmt import (
    ActionAccepted, ChanceRecorded, IntentRejected, SeatClaimed, StateHashed, read_log, read_prefix,
)

from .logwriter import EXPIRED, OVER
from .metrics import count_store_error
from .oplog import Throttled
from .store_pg import StoreError, first_line

_said = Throttled(logging.getLogger("wildtable.server"))
LOG_SUFFIX = ".wlog"
TABLE_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
MAX_LOG_BYTES = 8 * 1024 * 1024     # a log this size is ~130,000 records; a whole Run Wild game is ~100 kB
CACHE_BYTES = 16 * 1024 * 1024      # logs whose timelines are kept, in bytes of log (a timeline is ~1.4x)
KEEP_EVERY = 32                     # the timeline keeps the state after every 32nd record
LIST_MAX = 100                      # finished games listed at most, the newest first
LIST_FOR = 2.0                      # seconds a listing is reused
HEAD_BYTES = 16 * 1024              # read of each listed log: its header and the seat claims in it
AROUND = 8                          # records listed either side of the current one


class ReplayRefused(Exception):
    """An HTTP status and the sentence saying why."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status
        self.message = message

    def __reduce__(self):               # raised in the replay process, raised again in the server's
        return ReplayRefused, (self.status, self.message)


def not_found(table_id: str) -> ReplayRefused:
    return ReplayRefused(404, f"no finished game {table_id!r} on this server; /replays.json lists them")


def still_playing(table_id: str) -> ReplayRefused:
    return ReplayRefused(403, f"table {table_id!r} is still being played: only a finished game can be "
                              "replayed (its log holds every hand)")


def log_gone(table_id: str) -> ReplayRefused:
    """A finished table the server still holds whose log is not where the server wrote it."""
    return ReplayRefused(410, f"table {table_id!r} is over, but its log is no longer where this server wrote it "
                              "(moved or removed outside the server), so it cannot be replayed here; the lobby "
                              "still shows how it ended")


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


def refuse_too_big(table_id: str, size: int, instead: str) -> None:
    """413 for a log of ``size`` bytes, over MAX_LOG_BYTES; ``instead`` says how to read it."""
    if size > MAX_LOG_BYTES:
        raise ReplayRefused(413, f"the log of {table_id!r} is {size} bytes, over the {MAX_LOG_BYTES} "
                                 f"this server replays; {instead}")


class NotRegular(OSError):
    """What is there is not a regular file of its own: a symbolic link, a FIFO, a directory..."""


@contextmanager
def open_regular(path: Path):
    """``path`` open for reading, with its ``os.stat_result``, if it is a regular file:
    opened with O_NOFOLLOW, so a symbolic link there is never followed (not even one swapped
    in after a check by name), and O_NONBLOCK, so opening a FIFO cannot hang the thread;
    then what was opened is checked on its descriptor (fstat). NotRegular if it is not a
    regular file, OSError if it cannot be opened."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise NotRegular(errno.ELOOP, "a symbolic link (not followed)", str(path)) from None
        raise
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise NotRegular(errno.EINVAL, "not a regular file", str(path))
        yield f, st


@contextmanager
def open_log(table_id: str, path: Path | str, held: bool):
    """``open_regular(path)``, or the refusal: what is there is not a regular file (a link, a
    FIFO) or is gone: 410 for the log of a table the server holds (``held``), else 404."""
    try:
        with open_regular(Path(path)) as (f, st):
            yield f, st
    except NotRegular:
        raise log_gone(table_id) if held else not_found(table_id) from None
    except OSError as e:
        raise ReplayRefused(404, f"the log of {table_id!r} cannot be read: {e.strerror or e}") from None


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
        from .replay_process import FromFile
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
        from .replay_process import Given
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
        from .replay_process import Given
        return Given(found.stamp)

    def read(self, table_id: str, found: Found) -> bytes:
        return self.data

    def head(self, path: Path) -> bytes:
        return self.data


class ReplayLog:
    """One finished game's timeline and what the viewer looks up in it."""

    def __init__(self, table_id: str, data: bytes, *, finished_only: bool = True):
        from wildtable.headless.timeline import Timeline     # (the games' words: loaded when first used)
        try:
            # the player's own file (replay --web) is shown up to any damage, as the terminal
            # viewer does (docs/LOG-FORMAT.md 5); a server's finished game must read whole
            contents = read_log(data) if finished_only else read_prefix(data)
            self.timeline = Timeline(contents, keep_every=KEEP_EVERY)
        except (LogError, IllegalAction) as e:
            raise ReplayRefused(422, f"the log of {table_id!r} cannot be replayed: {e}") from None
        tl = self.timeline
        self.table_id = table_id
        self.size = len(data)
        self.torn = contents.torn
        self.damage = contents.damage
        self.filters: dict = {}             # (filter, view) -> its steps (server/replay_find.py)
        if finished_only and not tl.game.outcome(tl.step(len(tl) - 1).state).over:
            raise ReplayRefused(409, f"the log of {table_id!r} does not end its game: only a finished game can be "
                                     "replayed (if it has just ended, its last records may still be on their way "
                                     "to the disk: try again in a moment)")
        self.rejected: list[int] = []
        self.mismatched: list[int] = []
        self.hashes = 0
        self.seqs: list[int] = []           # seq of each action or chance step, ascending
        self.seq_steps: list[int] = []      # ... and its step
        for i, s in enumerate(tl.steps):
            t = type(s.record)
            if t is IntentRejected:
                self.rejected.append(i)
            elif t is StateHashed:
                self.hashes += 1
                if s.problem:
                    self.mismatched.append(i)
            elif t is ActionAccepted or t is ChanceRecorded:
                self.seqs.append(s.seq)
                self.seq_steps.append(i)

    def step_of_seq(self, seq: int) -> int:
        """The step of the record with this seq, or of the last one before it."""
        k = bisect.bisect_right(self.seqs, seq)
        return self.seq_steps[k - 1] if k else 0

    def perspective(self, value: str | None) -> Any:
        from wildtable.headless.timeline import parse_perspective
        try:
            return parse_perspective(value or None, self.timeline.header.seats)
        except ValueError:
            seats = self.timeline.header.seats
            raise ReplayRefused(400, f"view wants all, spectator or a seat 0..{seats - 1}, "
                                     f"not {_short(value)!r}") from None

    def answer(self, step: int, perspective: Any, lobby: bool) -> dict:
        from wildtable.headless.timeline import ALL, SPECTATOR
        tl = self.timeline
        last = len(tl) - 1
        i = max(0, min(step, last))
        s = tl.step(i)
        h = tl.header
        g = tl.game
        if perspective == ALL:
            state = {"board": g.view(s.state, None), "hands": [g.view(s.state, seat) for seat in range(h.seats)],
                     "piles": pile_lines(tl.state_lines(i, ALL))}
        else:
            state = {"view": g.view(s.state, None if perspective == SPECTATOR else perspective)}
        before = bisect.bisect_left(self.rejected, i)
        after = bisect.bisect_right(self.rejected, i)
        return {
            "table": self.table_id, "game": g.NAME, "title": g.TITLE, "seats": h.seats, "settings": h.settings,
            "players": list(s.names), "step": i, "steps": len(tl), "seq": s.seq, "last_seq": tl.steps[-1].seq,
            "view_as": perspective, "lobby": lobby,
            "record": self._record(i, perspective),
            "around": [self._line(k2, perspective) for k2 in range(max(0, i - AROUND), min(last, i + AROUND) + 1)],
            "prev_rejected": self.rejected[before - 1] if before else None,
            "next_rejected": self.rejected[after] if after < len(self.rejected) else None,
            "hashes": {"checked": self.hashes, "mismatched": len(self.mismatched),
                       "first_mismatch": self.mismatched[0] if self.mismatched else None},
            "torn": None if self.torn is None else {"dropped": self.torn.dropped, "offset": self.torn.offset},
            "damage": None if self.damage is None else {"code": self.damage.code, "message": str(self.damage),
                                                        "seq": self.damage.seq, "offset": self.damage.offset},
            "state": state,
            "text": tl.state_lines(i, perspective),
        }

    def _kind(self, i: int) -> str:
        return _KINDS.get(type(self.timeline.steps[i].record), "other")

    def _line(self, i: int, perspective: Any) -> dict:
        s = self.timeline.steps[i]
        kind = self._kind(i)
        out = {"step": i, "kind": kind, "line": self.timeline.record_line(i, perspective)}
        if kind == "hash":
            out["hash"] = "mismatch" if s.problem else "ok"
        if s.problem:
            out["problem"] = s.problem
        return out

    def _record(self, i: int, perspective: Any) -> dict:
        from wildtable.headless.timeline import raw
        tl = self.timeline
        r = tl.steps[i].record
        out = self._line(i, perspective)
        out["detail"] = tl.detail_lines(i, perspective)
        if type(r) is IntentRejected:
            hidden = tl.hidden_from(r, perspective)
            out.update(seat=r.seat, after=r.after, code=r.code, hidden=hidden,
                       what=None if hidden else tl.action_text(r.action), action=None if hidden else raw(r.action),
                       reason=None if hidden else r.reason)
        return out


_KINDS = {type(None): "header", ActionAccepted: "action", ChanceRecorded: "chance", IntentRejected: "rejected",
          SeatClaimed: "seat", StateHashed: "hash"}


#: the lines of the all-seeing text (the terminal viewer's) that show cards no view shows:
#: every pile, deck, discard pile and set-aside in order (docs/PLAYING.md, Replays)
_PILE_LINE = re.compile(r"^\s*(pile|deck|discard pile|set aside|Snake Oil)\b")


def pile_lines(text: list[str]) -> list[str]:
    """The all-seeing text's pile lines, each named by the seat whose it is where it is a
    seat's (Run Wild: "ann: pile (16, top first): W P5 ..."), as the web viewer shows them
    beside the hands: the seats' views, which it draws, show a pile's count only."""
    out, seat = [], None
    for line in text:
        if line.startswith("  ") and not line.startswith("    "):
            seat = line.strip().split(":")[0]
        if _PILE_LINE.match(line):
            out.append(f"{seat}: {line.strip()}" if line.startswith("    ") and seat else line.strip())
    return out


def _short(value: Any) -> str:
    return str(value)[:30]


def _query_int(q: dict, name: str) -> int | None:
    values = q.get(name)
    if not values:
        return None
    v = values[-1].strip()
    if not (v.isascii() and (v.isdigit() or (v[:1] == "-" and v[1:].isdigit())) and len(v) <= 18):
        raise ReplayRefused(400, f"{name} wants a whole number, not {_short(v)!r}")
    return int(v)


def _names_in_head(data: bytes) -> tuple[str, int, list[str]] | None:
    """(game, seats, who sat where) from the first bytes of a log; None if they do not read."""
    try:
        contents = read_log(data)
    except LogError:
        return None
    names = [""] * contents.header.seats
    for r in contents.records:
        if type(r) is SeatClaimed and 0 <= r.seat < len(names) and r.token_hash:
            names[r.seat] = r.name
    return contents.header.game, contents.header.seats, names


class Replays:
    """The two answers, over a source of finished games (FinishedGames, StoreGames, OneLog):
    the lookups here (which games may be served, where their logs are), the work in the
    replay process (server/replay_process.py)."""

    def __init__(self, source, *, clock: Callable[[], float] = time.monotonic):
        from .replay_process import ReplayProcess
        self.source = source
        self.clock = clock
        self._listing: tuple[float, bytes] = (-math.inf, b"")
        self.process = ReplayProcess()

    @staticmethod
    def serves(path: str) -> bool:
        return path == "/replays.json" or (path.startswith("/replay/") and path.endswith(".json"))

    async def answer(self, path: str, query: str) -> tuple[int, bytes]:
        """(HTTP status, JSON body) for ``/replays.json`` or ``/replay/TABLE.json?...``:
        the answer, or ``{"error": sentence}``."""
        tables = self.source.tables()
        try:
            if path == "/replays.json":
                body = await self.process.serve(lambda: self._listing_json(tables))
            else:
                tid = path[len("/replay/"):-len(".json")]
                if not TABLE_ID.fullmatch(tid):
                    raise ReplayRefused(404, "a replay is /replay/TABLE.json, TABLE a table id "
                                             "(letters, digits, - and _)")
                q = parse_qs(query, keep_blank_values=True)
                body = await self.process.serve(lambda: self._step_json(tid, q, tables))
            return 200, body
        except ReplayRefused as e:
            return e.status, _json({"error": e.message})

    def close(self) -> None:
        """The server stopped: the replay process ends."""
        self.process.close()

    async def prepare(self, tid: str) -> None:
        """Fold ``tid``'s log in the replay process now, however long it takes (`replay
        --web`, before it serves: its first step then never waits REPLAY_TIMEOUT for the
        fold of a long log); ReplayRefused if it does not replay."""
        from .replay_process import Ask, step_json
        found = self.source.find(tid, self.source.tables())
        ask = Ask(tid, self.source.ref(found), {}, self.source.lobby, self.source.finished_only)
        await self.process.call(step_json, ask, self.source.read(tid, found))

    async def _listing_json(self, tables: Tables) -> bytes:
        from .replay_process import listing_json
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
        from .replay_process import Ask, step_json
        found = await self.process.in_thread(self.source.find, tid, tables)
        ask = Ask(tid, self.source.ref(found), q, self.source.lobby, self.source.finished_only)
        body = await self.process.call(step_json, ask)
        if body is None:        # no timeline of that log there: it gets the log's bytes
            data = await self.process.in_thread(self.source.read, tid, found)
            body = await self.process.call(step_json, ask, data)
        return body


def _json(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False,
                      default=lambda x: x.hex() if isinstance(x, (bytes, bytearray)) else list(x)
                      if isinstance(x, (tuple, set, frozenset)) else repr(x)).encode()
