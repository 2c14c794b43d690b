"""One server per data dir: the lock a server holds on the dir it uses.

Two servers on one data dir both recovered its tables, gave out the same seats and wrote
the same logs, interleaved: the next start refused the table (`expected seq 3, found 1`)
and it was lost. So a server holds an exclusive ``flock`` on ``DATA_DIR/server.lock``
for its whole life. The OS drops the lock when the process ends, however it ends, so a
crashed server's lock goes with it: nothing stale to clean up. The file itself stays (it
is never removed: removing a lock file races with the next server opening it); it holds
the holder's pid and address, for the sentence a second server, or ``wildtable replay``
of a log in the dir, prints.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path
import time

try:
    import fcntl
except ImportError:         # not a Unix: no lock (wildtable serves from Unix hosts)
    fcntl = None  # type: ignore[assignment]  # (the lock is skipped where None)

LOCK_NAME = "server.lock"
LOCK_MODE = 0o600
# `holder()` (replay) takes a shared lock for an instant to see whether a server holds
# the exclusive one; a server that starts in that instant tries again for this long
# before it says the dir is in use.
ACQUIRE_PATIENCE = 0.5


class DataDirError(Exception):
    """The data dir cannot be used; str() is the sentence saying why."""


class DataDirInUse(DataDirError):
    """Another live server holds the data dir."""


def _describe(fd: int) -> str:
    """What the holder wrote in the lock file ("pid 12, serving on ws://..."), or ""."""
    try:
        text = os.pread(fd, 200, 0).decode("utf-8", "replace").strip()
    except OSError:
        return ""
    return text.splitlines()[0] if text else ""


def unusable(data_dir: Path, e: OSError) -> DataDirError:
    """The sentence for a data dir that cannot be created, entered or locked."""
    if data_dir.exists() and not data_dir.is_dir():
        return DataDirError(f"--data-dir {data_dir} is a file, not a directory: give a directory "
                            "(it is created if it does not exist)")
    if e.errno == errno.ENOTDIR:
        part = next((p for p in reversed(data_dir.parents) if p.exists() and not p.is_dir()), None)
        if part is not None:
            return DataDirError(f"--data-dir {data_dir} cannot be made: {part} is a file, not a directory")
    return DataDirError(f"--data-dir {data_dir} cannot be used: {e.strerror or e}")


class DataDirLock:
    """The exclusive lock on a data dir, held until ``release()`` (or the process's end)."""

    def __init__(self, fd: int | None):
        self.fd = fd

    @classmethod
    def acquire(cls, data_dir: Path) -> "DataDirLock":
        """Lock ``data_dir`` (which exists) for this process: DataDirInUse if a live
        server holds it, DataDirError if the lock file cannot be made."""
        if fcntl is None:
            return cls(None)
        path = Path(data_dir) / LOCK_NAME
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, LOCK_MODE)
        except OSError as e:
            raise unusable(Path(data_dir), e) from None
        try:
            deadline = time.monotonic() + ACQUIRE_PATIENCE
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() >= deadline:
                        who = _describe(fd)
                        raise DataDirInUse(f"data dir {data_dir} is in use by another server"
                                           f"{f' ({who})' if who else ''}: stop that one first, or give this "
                                           "one another --data-dir") from None
                    time.sleep(0.02)
            lock = cls(fd)
            lock.note("")
            return lock
        except BaseException:
            os.close(fd)
            raise

    def note(self, url: str) -> None:
        """Write who holds the lock (and, once it listens, where) into the lock file."""
        if self.fd is None:
            return
        text = f"pid {os.getpid()}" + (f", serving on {url}" if url else "") + "\n"
        try:
            os.ftruncate(self.fd, 0)
            os.pwrite(self.fd, text.encode(), 0)
        except OSError:
            pass            # only the sentence of a second server is poorer for it

    def release(self) -> None:
        if self.fd is not None:
            fd, self.fd = self.fd, None
            try:
                os.ftruncate(fd, 0)
            except OSError:
                pass
            os.close(fd)        # the lock goes with the descriptor


def holder(data_dir: Path) -> str | None:
    """If a live server holds ``data_dir``'s lock: what it wrote there ("pid 12, serving
    on ws://...", or "" if nothing yet); None if no server holds it."""
    if fcntl is None:
        return None
    try:
        fd = os.open(Path(data_dir) / LOCK_NAME, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None         # no lock file: no server ever used this dir
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return _describe(fd)
        except OSError:
            return None
        return None         # free (closing the descriptor gives the shared lock back)
    finally:
        os.close(fd)
