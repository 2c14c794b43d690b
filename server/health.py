"""Liveness and readiness, for a load balancer, systemd or an operator (docs/OPERATING.md).

- ``GET /healthz``: 200 while the process serves HTTP at all.
- ``GET /readyz``: 200 ``{"ready": true, "state": "serving"}`` while it accepts play; 503
  ``{"ready": false, "state": ..., "reason": ...}`` while it starts, drains (after SIGTERM),
  cannot write in its data dir (a full disk, a data dir gone or read-only), its log writer
  failed, or its store does not answer (a node of a cluster).

Both answer from values kept here: a request never touches the disk or the store, so a
stranger on the game port can make them cost no more than a 404. The data dir is probed
by ``probe_data_dir`` (a small file written, fsynced and removed every PROBE_EVERY
seconds, in a worker thread); the store by the lease renewals the node makes anyway.
"""

from __future__ import annotations

import enum
import errno
import json
import logging
from pathlib import Path
from typing import Any, Awaitable, Callable

import attrs
import trio

from .world import Disk, OsDisk

log = logging.getLogger("wildtable.server")

PATHS = ("/healthz", "/readyz")
PROBE_EVERY = 2.0               # seconds between two probes of the data dir
PROBE_NAME = ".wildtable-probe"  # written and removed there (recovery reads only *.wlog)
PROBE_BYTES = 4096              # one block: on a full disk its write fails (ENOSPC)


MENDED = {"disk": "the data dir can be written again", "store": "the store answers again",
          "writer": "the log writer works again"}


class Phase(str, enum.Enum):
    """Where the server is in its life; its value is what /readyz says (``state``)."""
    STARTING = "starting"
    SERVING = "serving"
    DRAINING = "draining"


@attrs.frozen
class Readiness:
    ready: bool
    state: Phase
    reason: str = ""            # why not ready, in words an operator can act on

    def body(self) -> bytes:
        d: dict = {"ready": self.ready, "state": self.state.value}
        if self.reason:
            d["reason"] = self.reason
        return json.dumps(d, separators=(",", ":")).encode() + b"\n"


def decide(state: Phase, drain: str, disk: str | None, writer: str | None, store: str | None,
           waiting: str | None = None) -> Readiness:
    """Readiness from what is known: the server's phase (and why it drains, what it waits
    for as it starts) and each problem (None: none). The phase speaks first: a draining
    server is not ready whatever the disk says."""
    if state is Phase.STARTING:
        return Readiness(False, state, f"starting: {waiting or 'recovering tables (or joining the cluster)'}")
    if state is Phase.DRAINING:
        return Readiness(False, state, f"draining ({drain}): the server is stopping; send new players elsewhere")
    for problem in (writer, disk, store):
        if problem:
            return Readiness(False, state, problem)
    return Readiness(True, state)


class Health:
    """The server's readiness, set by the server as it goes (one instance per Server)."""

    def __init__(self):
        self.state = Phase.STARTING
        self.disk: str | None = None        # the data dir cannot be written: why
        self.writer: str | None = None      # the log writer failed: why (the server stops)
        self.store: str | None = None       # the store does not answer: why
        self.waiting_for: str | None = None  # starting: what it waits for (a store away: server/storewait.py)
        self.drain_reason = ""

    def readiness(self) -> Readiness:
        return decide(self.state, self.drain_reason, self.disk, self.writer, self.store, self.waiting_for)

    def serving(self) -> None:
        if self.state is Phase.STARTING:
            self.state = Phase.SERVING

    def draining(self, why: str) -> None:
        if self.state is not Phase.DRAINING:
            self.state, self.drain_reason = Phase.DRAINING, why

    def set_problem(self, what: str, why: str | None, fix: str) -> None:
        """``what`` (disk, writer, store) has a problem ``why`` (None: mended); said once
        each way in the log, with what to do (``fix``)."""
        before = getattr(self, what)
        setattr(self, what, why)
        if why and not before:
            log.warning("not ready (/readyz answers 503): %s; %s", why, fix)
        elif before and not why:
            log.warning("ready again (/readyz answers 200): %s", MENDED[what])

    def answer(self, path: str) -> tuple[int, bytes]:
        """(status, JSON body) for /healthz or /readyz."""
        if path == "/healthz":
            return 200, b'{"alive":true}\n'
        r = self.readiness()
        return (200 if r.ready else 503), r.body()


def data_dir_problem(data_dir: Path, disk: Disk | None = None) -> str | None:
    """(In a worker thread.) None if a small file can be written, fsynced and removed in
    the data dir, on ``disk`` (the server's world's: the simulator's is one that fills and
    dies; by default the OS's); else why not, as a sentence."""
    path = data_dir / PROBE_NAME
    try:
        (disk or OsDisk()).probe(path, PROBE_BYTES)
    except OSError as e:
        try:
            path.unlink(missing_ok=True)
        except OSError:
            pass
        if e.errno in (errno.ENOSPC, errno.EDQUOT):
            return f"the disk of the data dir {data_dir} is full ({e.strerror})"
        return f"cannot write in the data dir {data_dir}: {e.strerror or e}"
    return None


async def probe_data_dir(health: Health, data_dir: Path, every: float = PROBE_EVERY,
                         run_sync: Callable[..., Awaitable[Any]] | None = None,
                         sleep: Callable[[float], Awaitable[None]] = trio.sleep, disk: Disk | None = None) -> None:
    """Probe the data dir every ``every`` seconds, until cancelled. ``run_sync``: where the
    blocking probe runs (the server's world: a worker thread, or inline in the simulator,
    whose clock must not jump while a thread works); ``sleep``: how it waits (the world's
    clock); ``disk``: what it writes to (the world's)."""
    run = run_sync or trio.to_thread.run_sync
    while True:
        problem = await run(data_dir_problem, data_dir, disk)
        health.set_problem("disk", problem, "make room on its disk, or mend the data dir (it must exist and be "
                           "writable by this user); tables whose logs cannot be written stop the server")
        await sleep(every)
