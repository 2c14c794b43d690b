"""Seat tokens kept between runs of the client, so that quitting (or a closed terminal)
does not lose a seat: `join TABLE` (or `--table TABLE`) on the same server later takes
the seat back with its token instead of asking for a new one.

A token belongs to one player: it is kept under the server, the table *and the name*
the player plays as, and only a client playing under that name ever uses it. Two
players on one machine (one OS user, one state dir) therefore keep their seats apart:
`join` by bob never resumes ann's seat, and when a seat changes hands the old holder's
entry is dropped. Several clients may write the file at once: every change reads,
edits and replaces it under an exclusive lock (``seats.lock`` beside it).

The file holds secrets (a token resumes a seat), so it is private to the user (0600).
Where: $WILDTABLE_STATE_DIR, else $XDG_STATE_HOME/wildtable, else ~/.local/state/wildtable.
"""

from __future__ import annotations

import json
import os
from contextlib import contextmanager
from pathlib import Path
from typing import Protocol

try:
    import fcntl
except ImportError:         # not on Windows: the lock is then only this process's
    fcntl = None  # type: ignore[assignment]  # (the lock is skipped where None)

MAX_SEATS = 200     # remembered seats at most (the oldest are forgotten)
STATE_DIR_ENV = "WILDTABLE_STATE_DIR"


def default_path() -> Path:
    base = os.environ.get(STATE_DIR_ENV)
    if base:
        return Path(base) / "seats.json"
    xdg = os.environ.get("XDG_STATE_HOME")
    root = Path(xdg) if xdg else Path.home() / ".local" / "state"
    return root / "wildtable" / "seats.json"


class SeatTokens(Protocol):
    """A seat book: where a ClientCore keeps the token of each seat it takes, under the
    server's URL, the table and the player's name, and finds it again to take the seat
    back. SeatBook (a file per OS user) and the server's BotBook (server/botseats.py)."""

    def find(self, url: str, table: str, name: str) -> tuple[int, str] | None: ...
    def remember(self, url: str, table: str, name: str, seat: int, token: str) -> None: ...
    def forget(self, url: str, table: str, name: str | None = None) -> None: ...


class SeatBook:
    """Entries {"url", "table", "name", "seat", "token"}: one per player and table;
    every change is written at once."""

    def __init__(self, path: Path | None = None):
        self.path = path or default_path()

    def _load(self) -> list[dict]:
        try:
            data = json.loads(self.path.read_text())
        except (OSError, ValueError):
            return []
        if not isinstance(data, list):
            return []
        # entries of the old format (no name) cannot say whose they were: not used
        return [x for x in data if isinstance(x, dict) and isinstance(x.get("name"), str)]

    @contextmanager
    def _locked(self):
        """An exclusive lock for a read-edit-write of the file (None if it cannot be had:
        then the change is made without it)."""
        fd = None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path.with_suffix(".lock"), os.O_RDWR | os.O_CREAT, 0o600)
            if fcntl is not None:
                fcntl.flock(fd, fcntl.LOCK_EX)
        except OSError:
            pass
        try:
            yield
        finally:
            if fd is not None:
                os.close(fd)        # closing releases the lock

    def _save(self, entries: list[dict]) -> None:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_name(f"{self.path.name}.{os.getpid()}.tmp")
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w") as f:
                json.dump(entries[-MAX_SEATS:], f)
            os.replace(tmp, self.path)
        except OSError:
            pass        # a seat book we cannot write only costs the convenience

    def find(self, url: str, table: str, name: str) -> tuple[int, str] | None:
        """The seat and token ``name`` kept at this table, or None."""
        for e in self._load():
            if e.get("url") == url and e.get("table") == table and e.get("name") == name:
                try:
                    return int(e["seat"]), str(e["token"])
                except (KeyError, TypeError, ValueError):
                    return None
        return None

    def remember(self, url: str, table: str, name: str, seat: int, token: str) -> None:
        """``name`` holds ``seat`` at this table now: its entry replaces the player's
        earlier one, and any other player's entry for that seat (it changed hands)."""
        with self._locked():
            entries = [e for e in self._load()
                       if not (e.get("url") == url and e.get("table") == table
                               and (e.get("name") == name or e.get("seat") == seat))]
            entries.append({"url": url, "table": table, "name": name, "seat": seat, "token": token})
            self._save(entries)

    def forget(self, url: str, table: str, name: str | None = None) -> None:
        """Drop ``name``'s entry at this table (every player's with None: the game is over)."""
        with self._locked():
            entries = self._load()
            kept = [e for e in entries if not (e.get("url") == url and e.get("table") == table
                                               and (name is None or e.get("name") == name))]
            if len(kept) != len(entries):
                self._save(kept)
