"""Logs an operator can read: `serve --log-format json` (one JSON object a line), and
warnings said once per kind in a while, however often their cause repeats
(docs/OPERATING.md, "Logs")."""

from __future__ import annotations

import datetime
import json
import logging
import threading
import time

LOG_FORMATS = ("text", "json")
TEXT_FORMAT = "%(asctime)s %(levelname)s %(message)s"
# the fields a record of ours may carry (logging's ``extra=``); each becomes a JSON key
FIELDS = ("event", "table", "peer")
MAX_KINDS = 100         # kinds a Throttled remembers (a new one past that counts as "other")
_STANDARD = set(vars(logging.LogRecord("", 0, "", 0, "", (), None))) | {"message", "asctime"}


class JsonFormatter(logging.Formatter):
    """One object a line: ``time`` (UTC, ISO 8601), ``level``, ``logger``, ``message``;
    ``event``; ``table`` and ``peer`` where the record is about one (``about``, given as
    ``extra=``); any other field the record was given (``extra=``);
    ``exception`` with the traceback, if any. Never more than one line: JSON escapes the
    newlines of a message or a traceback."""

    def format(self, record: logging.LogRecord) -> str:
        d: dict[str, object] = {
            "time": datetime.datetime.fromtimestamp(record.created, datetime.timezone.utc)
            .isoformat(timespec="milliseconds").replace("+00:00", "Z"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        for key, value in vars(record).items():
            if key not in _STANDARD and not key.startswith("_"):
                d[key] = value if isinstance(value, (str, int, float, bool, type(None))) else str(value)
        d.setdefault("event", _event(record))
        if record.exc_info:
            d["exception"] = self.formatException(record.exc_info)
        return json.dumps(d, ensure_ascii=False, separators=(",", ":"))


def _event(record: logging.LogRecord) -> str:
    """A record given no event: its message template, the same for every occurrence (so
    records of one kind can be counted and grepped by it), shortened."""
    text = str(record.msg)
    return text if len(text) <= 80 else text[:77] + "..."


def about(*, table: object = None, peer: object = None) -> dict[str, str]:
    """A record's ``extra=`` fields: the table and the peer it is about, as the code knows
    them (never read back out of the message's words), each a JSON key of its line."""
    out: dict[str, str] = {}
    if table is not None:
        out["table"] = str(table)
    if peer is not None:
        out["peer"] = str(peer)
    return out


def configure(log_format: str, quiet: bool) -> None:
    """The root logger on stderr, in ``log_format`` (text or json)."""
    import sys

    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter() if log_format == "json" else logging.Formatter(TEXT_FORMAT))
    root = logging.getLogger()
    for h in list(root.handlers):
        root.removeHandler(h)
    root.addHandler(handler)
    root.setLevel(logging.WARNING if quiet else logging.INFO)


class Throttled:
    """A warning said at most once per ``every`` seconds per kind; how many were not said
    meanwhile is told with the next one. Safe from worker threads (a lock)."""

    def __init__(self, logger: logging.Logger, every: float = 60.0, clock=time.monotonic):
        self.logger, self.every, self.clock = logger, every, clock
        self._lock = threading.Lock()
        self._last: dict[str, tuple[float, int]] = {}     # kind -> (when said, not said since)

    def warning(self, kind: str, msg: str, *args) -> bool:
        """Log ``msg % args`` unless ``kind`` was said under ``every`` seconds ago; True if said."""
        now = self.clock()
        with self._lock:
            if kind not in self._last and len(self._last) >= MAX_KINDS:
                kind = "other"
            said, quiet = self._last.get(kind, (-float("inf"), 0))
            if now - said < self.every:
                self._last[kind] = (said, quiet + 1)
                return False
            self._last[kind] = (now, 0)
        if quiet:
            msg += f" ({quiet} more like it in the last {self.every:g} s not logged)"
        self.logger.warning(msg, *args, extra={"event": kind})
        return True
