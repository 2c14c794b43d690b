"""The replay viewer's work on one log, all that its process (server/replay_process.py)
needs of it: the log opened safely (``open_regular``: no link or FIFO swapped in is read),
folded into a timeline (``ReplayLog``), a step of it looked up and made into JSON, and the
refusals it may raise (``ReplayRefused``: an HTTP status and the sentence saying why).

A module of its own so that the imports point one way, each at the top of its module:
server/replays.py (the server's lookups) imports server/replay_process.py (the process and
the server's handle on it), and both import this; the process loads none of the server's
lookups (its store, its metrics) to do its work (docs/ARCHITECTURE.md).
"""

from __future__ import annotations

import bisect
import errno
import json
import os
import re
import stat
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from wildtable.protocol.errors import IllegalAction, LogError
from wildtable.protocol.logfmt import (
    ActionAccepted, ChanceRecorded, IntentRejected, SeatClaimed, StateHashed, read_log, read_prefix,
)

MAX_LOG_BYTES = 8 * 1024 * 1024     # a log this size is ~130,000 records; a whole Run Wild game is ~100 kB
KEEP_EVERY = 32                     # the timeline keeps the state after every 32nd record
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


def log_gone(table_id: str) -> ReplayRefused:
    """A finished table the server still holds whose log is not where the server wrote it."""
    return ReplayRefused(410, f"table {table_id!r} is over, but its log is no longer where this server wrote it "
                              "(moved or removed outside the server), so it cannot be replayed here; the lobby "
                              "still shows how it ended")


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
                                     f"not {shortened(value)!r}") from None

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


def shortened(value: Any) -> str:
    """What an error quotes of a value a client sent: its first 30 characters."""
    return str(value)[:30]


def query_int(q: dict, name: str) -> int | None:
    """The query's last ``name`` as an int (None if absent); 400 if it is not a whole number."""
    values = q.get(name)
    if not values:
        return None
    v = values[-1].strip()
    if not (v.isascii() and (v.isdigit() or (v[:1] == "-" and v[1:].isdigit())) and len(v) <= 18):
        raise ReplayRefused(400, f"{name} wants a whole number, not {shortened(v)!r}")
    return int(v)


def names_in_head(data: bytes) -> tuple[str, int, list[str]] | None:
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


def json_bytes(value: Any) -> bytes:
    """``value`` as compact UTF-8 JSON (bytes as hex, tuples and sets as lists)."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False,
                      default=lambda x: x.hex() if isinstance(x, (bytes, bytearray)) else list(x)
                      if isinstance(x, (tuple, set, frozenset)) else repr(x)).encode()
