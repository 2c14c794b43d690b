"""The data dir's small JSON files (bots.json, owners.json): read whole, and written whole
to a file beside them that a rename puts in place, so the next start finds the old file
or the new one, never part of one. 0600, as the logs: they hold seat tokens and IP
addresses."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

MODE = 0o600


def read_json(path: Path) -> Any:
    """The file's value; None if there is no such file or it is not JSON."""
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def replace_json(path: Path, value: Any, *, durable: bool = False) -> None:
    """Write ``value`` to ``path`` as above (``durable``: fsynced before the rename, for a
    caller off the event loop). OSError if it cannot; the file beside it is then removed."""
    tmp = path.with_name(path.name + ".tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, MODE)
        with os.fdopen(fd, "w") as f:
            json.dump(value, f)
            if durable:
                f.flush()
                os.fsync(f.fileno())
        os.replace(tmp, path)
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
