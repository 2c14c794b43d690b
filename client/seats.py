"""Seat tokens kept between runs of the client, so that quitting (or a closed terminal)
does not lose a seat: `join TABLE` (or `--table TABLE`) on the same server later takes
the seat back with its token instead of asking for a new one.

The file holds secrets (a token resumes a seat), so it is private to the user (0600).
Where: $WILDTABLE_STATE_DIR, else $XDG_STATE_HOME/wildtable, else ~/.local/state/wildtable.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

MAX_SEATS = 200     # remembered seats at most (the oldest are forgotten)


def default_path() -> Path:
    base = os.environ.get("WILDTABLE_STATE_DIR")
    if base:
        return Path(base) / "seats.json"
    xdg = os.environ.get("XDG_STATE_HOME")
    root = Path(xdg) if xdg else Path.home() / ".local" / "state"
    return root / "wildtable" / "seats.json"


class SeatBook:
    """url -> table -> {"seat", "token"}; every change is written at once."""

    def __init__(self, path: Path | None = None):
        self.path = path or default_path()

    def _load(self) -> list[dict]:
        try:
            data = json.loads(self.path.read_text())
        except (OSError, ValueError):
            return []
        return [x for x in data if isinstance(x, dict)] if isinstance(data, list) else []

    def _save(self, entries: list[dict]) -> None:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_suffix(".tmp")
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w") as f:
                json.dump(entries[-MAX_SEATS:], f)
            os.replace(tmp, self.path)
        except OSError:
            pass        # a seat book we cannot write only costs the convenience

    def find(self, url: str, table: str) -> tuple[int, str] | None:
        for e in self._load():
            if e.get("url") == url and e.get("table") == table:
                return int(e["seat"]), str(e["token"])
        return None

    def remember(self, url: str, table: str, seat: int, token: str) -> None:
        entries = [e for e in self._load() if not (e.get("url") == url and e.get("table") == table)]
        entries.append({"url": url, "table": table, "seat": seat, "token": token})
        self._save(entries)

    def forget(self, url: str, table: str) -> None:
        entries = self._load()
        kept = [e for e in entries if not (e.get("url") == url and e.get("table") == table)]
        if len(kept) != len(entries):
            self._save(kept)
