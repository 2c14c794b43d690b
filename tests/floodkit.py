"""The flood kit: one connection that sends frames as fast as its socket takes them
(pings, fragments, both), against a real `wildtable serve` process with its default caps,
while hostilekit's steady player (two players at a table of their own, measured from a
process of their own) must not notice. For the tests of docs/PROTOCOL.md, "Connection
lifetime" 5 and 6: every frame costs budget, and what we owe waits under our caps."""

from __future__ import annotations

import time
from contextlib import asynccontextmanager

import trio

from hostilekit import OP_CLOSE, Frame, Gone, Raw, serve_process, steady_player_process

ATTACKER = "127.0.0.3"      # another address than the steady player's: no per-address cap is shared
CHUNK = 65536               # the flood is written this many bytes at a time


@asynccontextmanager
async def attacked(data_dir, *flags):
    """`wildtable serve` (``flags``) with the steady player at a table of its own for the
    whole attack; yield the server (hostilekit.serve_process)."""
    async with serve_process(data_dir, *flags) as srv, steady_player_process(srv.url):
        yield srv


def chunk_of(frames: bytes, size: int = CHUNK) -> bytes:
    """``frames`` (whole frames) repeated to about ``size`` bytes."""
    return frames * max(1, size // len(frames))


async def write_flat_out(raw: Raw, data: bytes, *, stop: trio.Event | None = None, rate: float = 0.0) -> int:
    """Write ``data`` again and again as fast as the socket takes it (or ``rate`` times a
    second on average, by the clock: a late wake-up sends what is due at once), until the
    server ends the connection or ``stop`` is set; the bytes written."""
    sent = 0
    t0 = trio.current_time()
    while stop is None or not stop.is_set():
        due = 1 if not rate else int((trio.current_time() - t0) * rate) - sent // len(data)
        if due > 0 and not await raw.send(data * due):
            break
        sent += len(data) * max(due, 0)
        if rate:
            await trio.sleep(1 / rate)
    return sent


async def flood_until_close(raw: Raw, first: bytes, data: bytes | None, within: float
                            ) -> tuple[Frame | None, float, int]:
    """Send ``first``, then ``data`` flat out (if any), reading what the server sends (pongs,
    answers) until its close frame or the end of the connection, at most ``within`` s.
    (the close frame or None, seconds from the first byte to it, frames before it)."""
    stop = trio.Event()
    seen: list[Frame] = []
    close: list[Frame] = []
    t0 = time.perf_counter()

    async def read() -> None:
        try:
            while True:
                f = await raw.read_frame()
                if f.opcode == OP_CLOSE:
                    close.append(f)
                    return
                seen.append(f)
        except Gone:
            return

    with trio.move_on_after(within):
        async with trio.open_nursery() as n:
            async def write() -> None:
                if await raw.send(first) and data:
                    await write_flat_out(raw, data, stop=stop)
            n.start_soon(write)
            await read()
            stop.set()
            n.cancel_scope.cancel()
    return (close[0] if close else None), time.perf_counter() - t0, len(seen)


def rss(pid: int) -> int:
    """A process's resident set, bytes (Linux)."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise AssertionError(f"no VmRSS for process {pid}")


class PeakRss:
    """The largest resident set of a process, sampled every 10 ms while ``watch`` runs."""

    def __init__(self, pid: int):
        self.pid = pid
        self.before = self.peak = rss(pid)

    async def watch(self) -> None:
        while True:
            self.peak = max(self.peak, rss(self.pid))
            await trio.sleep(0.01)

    @property
    def growth(self) -> int:
        return self.peak - self.before


async def logged(srv, text: str, within: float = 5) -> None:
    """Wait until the server's log says ``text`` (a test counts the lines once the server
    has stopped: one close, one line)."""
    with trio.fail_after(within):
        while text not in srv.log:
            await trio.sleep(0.05)
