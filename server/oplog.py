"""Logs an operator can read: `serve --log-format json` (one JSON object a line), and
warnings said once per kind in a while, however often their cause repeats
(docs/OPERATING.md, "Logs")."""

from __future__ import annotations

import datetime
import json
import logging
import re
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
    ``event``; ``table`` and ``peer`` where the line names them (``named_args``); any other
    field the record was given (``extra=``);
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
        for key, value in named_args(record).items():
            d.setdefault(key, value)
        if record.exc_info:
            d["exception"] = self.formatException(record.exc_info)
        return json.dumps(d, ensure_ascii=False, separators=(",", ":"))


def _event(record: logging.LogRecord) -> str:
    """A record given no event: its message template, the same for every occurrence (so
    records of one kind can be counted and grepped by it), shortened."""
    text = str(record.msg)
    return text if len(text) <= 80 else text[:77] + "..."


_PLACEHOLDER = re.compile(r"%%|%[-#0 +]*\d*(?:\.\d+)?[sdifgrxo]")


def named_args(record: logging.LogRecord) -> dict[str, str]:
    """``table`` and ``peer`` read off a record's own words: the argument of "table %s" and
    the one after "from " (refused a connection from %s) or "closing " (closing %s ...)."""
    out: dict[str, str] = {}
    if not isinstance(record.msg, str) or not isinstance(record.args, tuple):
        return out
    i = 0
    for hit in _PLACEHOLDER.finditer(record.msg):
        if hit.group() == "%%":
            continue
        if i >= len(record.args):
            break
        before = record.msg[:hit.start()]
        if before.endswith("table ") and "table" not in out:
            out["table"] = str(record.args[i])
        elif before.endswith(("from ", "consumer ")) or before == "closing ":
            out.setdefault("peer", str(record.args[i]))
        i += 1
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
