"""A small file system that really fills (tmpfs mounted by the test), for the full-disk
tests (docs/ARCHITECTURE.md "Disk full"). Mounting needs root (CI runs as root, see
.ci/run); elsewhere the tests that need one are skipped, saying why."""

from __future__ import annotations

import errno
import os
import subprocess
from contextlib import contextmanager
from pathlib import Path

import pytest


@contextmanager
def small_filesystem(where: Path, size: int = 4 << 20):
    """A tmpfs of ``size`` bytes mounted at ``where`` (made if need be), unmounted after."""
    where.mkdir(parents=True, exist_ok=True)
    got = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs", str(where)],
                         capture_output=True, text=True)
    if got.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here (needs root): {got.stderr.strip()}")
    try:
        yield where
    finally:
        if subprocess.run(["umount", str(where)], capture_output=True).returncode != 0:
            subprocess.run(["umount", "-l", str(where)], capture_output=True)


def fill(where: Path, leave: int = 0) -> Path:
    """Fill the file system of ``where`` with a filler file until nothing is left, then give
    back ``leave`` bytes (rounded to whole pages by the file system); delete it to make room."""
    filler = where / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        block = b"\0" * (1 << 16)
        while True:
            try:
                n = os.write(fd, block)
            except OSError as e:
                if e.errno != errno.ENOSPC:
                    raise
                break
            if n < len(block):
                block = block[:max(1, len(block) - n)]
        if leave:
            os.ftruncate(fd, max(0, os.fstat(fd).st_size - leave))
    finally:
        os.close(fd)
    return filler


def free_bytes(where: Path) -> int:
    st = os.statvfs(where)
    return st.f_bavail * st.f_frsize
