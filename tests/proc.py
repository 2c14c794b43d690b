"""Helpers for tests that run `wildtable` as a real subprocess and read what it prints."""

from __future__ import annotations

import re

import trio

_DEFAULT = object()


class LineReader:
    """The lines a subprocess writes to a pipe (a trio receive stream), as they come.

    Tests drive `wildtable play --plain` by its stdout and wait for `wildtable serve` to
    say where it listens on its stderr; one reader gives them all the same deadlines and
    the same failures: a wait that runs out, or a stream that ends before the line
    looked for, fails with the last lines read rather than a bare TooSlowError.

    ``timeout`` is the default deadline of one wait, in seconds (None: no deadline of
    its own). ``seen`` holds every complete line read so far, without its newline.
    """

    def __init__(self, stream, timeout: float | None = 15, errors: str = "strict"):
        self.stream, self.timeout, self.errors = stream, timeout, errors
        self.buf = b""
        self.seen: list[str] = []

    @property
    def text(self) -> str:
        """Everything read so far, as written (a last unfinished line too)."""
        return "".join(line + "\n" for line in self.seen) + self.buf.decode(errors=self.errors)

    def tail(self, n: int = 30) -> str:
        """The last ``n`` lines read, for a failure message."""
        return "\n".join(self.seen[-n:])

    async def _line(self) -> str | None:
        while b"\n" not in self.buf:
            chunk = await self.stream.receive_some(65536)
            if not chunk:
                return None
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        self.seen.append(line.decode(errors=self.errors))
        return self.seen[-1]

    def _deadline(self, timeout) -> float:
        timeout = self.timeout if timeout is _DEFAULT else timeout
        return float("inf") if timeout is None else timeout

    async def next(self, timeout: float | None = _DEFAULT) -> str | None:
        """The next line, or None once the stream has ended."""
        limit = self._deadline(timeout)
        with trio.move_on_after(limit):
            return await self._line()
        raise AssertionError(f"no line for {limit:g} s; the last ones:\n" + self.tail(40))

    async def until(self, pattern: str, timeout: float | None = _DEFAULT) -> re.Match:
        """Read up to the first line ``pattern`` (a regex) is found in; its match."""
        limit = self._deadline(timeout)
        with trio.move_on_after(limit):
            while (line := await self._line()) is not None:
                if hit := re.search(pattern, line):
                    return hit
            raise AssertionError(f"the stream ended before a line matching {pattern!r}:\n" + self.text)
        raise AssertionError(f"no line matching {pattern!r} for {limit:g} s; the last ones:\n" + self.tail(40))

    async def read_to_end(self) -> str:
        """Read until the stream ends, with no deadline (so a pipe never fills up); all of it."""
        while await self._line() is not None:
            pass
        return self.text


async def quit_plain(proc, out: LineReader) -> None:
    """Type `quit` to a `wildtable play --plain` subprocess: it says bye and exits 0 (it
    is killed if it does not)."""
    try:
        await proc.stdin.send_all(b"quit\n")
        await out.until(r"^info bye$")
        assert await proc.wait() == 0
    finally:
        if proc.returncode is None:
            proc.kill()
