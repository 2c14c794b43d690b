"""A real terminal for tests of the full-screen programs: one private tmux server (its own
socket), one pane of a chosen size, read back as text."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

TMUX = "/usr/bin/tmux"
ROOT = Path(__file__).resolve().parents[1]


class Tmux:
    """One private tmux server (its own socket), one pane ("main")."""

    def __init__(self, name: str):
        self.base = [TMUX, "-L", name, "-f", "/dev/null"]
        # its socket in a directory of its own (TMUX_TMPDIR), taken away by ``kill``: tmux
        # leaves a killed server's socket file, which piled up in /tmp/tmux-UID, one per
        # test and run
        self.dir = tempfile.mkdtemp(prefix="wildtable-tmux-")
        self.env = {**os.environ, "TMUX_TMPDIR": self.dir}

    def __call__(self, *args: str) -> str:
        return subprocess.run(self.base + list(args), capture_output=True, text=True, timeout=10, check=True,
                              env=self.env).stdout

    def screen(self) -> str:
        return self("capture-pane", "-p", "-t", "main")

    def wait_for(self, what: str, timeout: float = 10.0) -> float:
        """Seconds until ``what`` is on screen; fails with the screen if it never is."""
        start = time.monotonic()
        while what not in (screen := self.screen()):
            if time.monotonic() - start > timeout:
                raise AssertionError(f"{what!r} not on screen after {timeout} s:\n{screen}")
            time.sleep(0.05)
        return time.monotonic() - start

    def wait_gone(self, what: str, timeout: float = 10.0) -> None:
        """Until ``what`` is no longer on screen; fails with the screen if it stays."""
        start = time.monotonic()
        while what in (screen := self.screen()):
            if time.monotonic() - start > timeout:
                raise AssertionError(f"{what!r} still on screen after {timeout} s:\n{screen}")
            time.sleep(0.05)

    def type(self, text: str) -> None:
        self("send-keys", "-t", "main", "-l", text)
        self("send-keys", "-t", "main", "Enter")

    def keys(self, *keys: str) -> None:
        """Keys by tmux's names ("C-q", "PPage", "Escape") or as literal text ("r")."""
        self("send-keys", "-t", "main", *keys)

    def kill(self) -> None:
        """End the tmux server, and take its socket's directory away."""
        try:
            subprocess.run(self.base + ["kill-server"], capture_output=True, timeout=10, env=self.env)
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)


def wildtable_shell(*argv: str, width: int = 80, height: int = 24, tag: str = "client",
                    cwd: Path = ROOT) -> tuple[str, list]:
    """The shell line that runs `python -m wildtable ARGV` (no colour, the pane's size) and then says how it
    exited ("client exited with status N"), keeping the pane open to read it; and the
    tmux new-session arguments for a pane of that size."""
    cmd = " ".join(shlex.quote(x) for x in [
        # no COLUMNS/LINES from the test's environment (pytest sets them): the pane's size counts
        "env", "-u", "COLUMNS", "-u", "LINES", "TERM=xterm-256color", "NO_COLOR=1", "LANG=C.UTF-8",
        sys.executable, "-m", "wildtable", *argv])
    shell = f"{cmd}; echo \"{tag} exited with status $?\"; sleep 60"
    return shell, ["new-session", "-d", "-s", "main", "-x", str(width), "-y", str(height), "-c", str(cwd), shell]


def start(name: str, *argv: str, width: int = 80, height: int = 24, cwd: Path = ROOT) -> Tmux:
    """A private tmux whose pane runs `wildtable ARGV` in ``cwd``; the caller kills it (``kill``)."""
    assert os.path.exists(TMUX), "tmux is required for this test: apt-get install tmux (CI installs it)"
    tmux = Tmux(f"{name}-{os.getpid()}")
    _, args = wildtable_shell(*argv, width=width, height=height, cwd=cwd)
    tmux(*args)
    return tmux


@contextmanager
def session(name: str, *argv: str, width: int = 80, height: int = 24, cwd: Path = ROOT):
    """``start`` as a with-block: the tmux server is killed at its end, whatever happened."""
    tmux = start(name, *argv, width=width, height=height, cwd=cwd)
    try:
        yield tmux
    finally:
        tmux.kill()


def quit_client(tmux: Tmux) -> None:
    """Ctrl+Q, and the client says it exited with status 0."""
    tmux.keys("C-q")
    tmux.wait_for("client exited with status 0", timeout=15)
