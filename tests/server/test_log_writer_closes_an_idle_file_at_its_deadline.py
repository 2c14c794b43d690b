"""The log writer closes a file left idle, and fsyncs a batch (durability batch), at the
deadline it waits for, whatever the float sum of that deadline rounds to
(server/logwriter.py ``_close_idle``, ``_run``). Found by a test on trio's mock clock
(tests/server/test_game_timers_at_their_defaults.py) that hung under load: the writer's
deadline, last_write + idle, rounded down (0.7 + 0.1 is 0.7999999999999999), where
``now - last_write < idle`` still said "not yet"; it woke at once, again and again, and
the mock clock, which moves only when every task waits, never moved. On the real clock
the same spin lasted until the clock passed the sum."""

from __future__ import annotations

import threading
from typing import Callable

import trio
import trio.testing

from wildtable.server.logwriter import BATCH_FSYNC, LogFile, LogWriter


def when_done(tmp_path, start: float, writer: LogWriter, done: Callable[[LogFile], bool]) -> float | None:
    """``writer`` run on trio's mock clock jumped to ``start``; one record committed to a
    new log at once; trio's time once ``done(log)`` holds, or None if it never did: the
    old code spins, and a spinning task never lets the mock clock reach any deadline, so
    a real-time guard (10 s) ends the run and the test fails rather than hangs."""
    seen: dict = {}

    async def main():
        trio.lowlevel.current_clock().jump(start)
        log = LogFile.create(tmp_path / "t.wlog", b"h\n")
        token = trio.lowlevel.current_trio_token()
        async with trio.open_nursery() as nursery:
            guard = threading.Timer(10, lambda: token.run_sync_soon(nursery.cancel_scope.cancel))
            guard.start()
            try:
                await nursery.start(writer.run)
                await writer.commit(log, b"r\n")
                assert log.last_write == start
                while not done(log):
                    await trio.sleep(0.01)
                seen["at"] = trio.current_time()
                writer.close()
            finally:
                guard.cancel()

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
    assert (tmp_path / "t.wlog").read_bytes() == b"h\nr\n"
    return seen.get("at")


def test_a_file_idle_since_a_time_whose_deadline_rounds_down_is_closed_then(tmp_path):
    last_write, idle = 0.7, 0.1
    assert last_write + idle - last_write < idle        # the sum rounds down
    closed = when_done(tmp_path, last_write, LogWriter(idle=idle, run_sync=_inline), lambda log: log.fd < 0)
    assert closed is not None, "the idle file was never closed (the writer spun at its deadline)"
    assert last_write + idle <= closed <= last_write + idle + 0.02, closed


def test_a_batch_whose_fsync_is_due_at_a_sum_that_rounds_down_is_fsynced_then(tmp_path):
    """durability batch: what was written is fsynced BATCH_FSYNC (0.5 s) after the last
    sync; from 0.9 that sum is 1.4 rounded down, where ``now - last_sync >= 0.5`` said no."""
    start = 0.9
    assert start + BATCH_FSYNC - start < BATCH_FSYNC
    writer = LogWriter("batch", run_sync=_inline)
    synced = when_done(tmp_path, start, writer, lambda log: writer.fsyncs > 0)
    assert synced is not None, "the batch was never fsynced (the writer spun at its deadline)"
    assert start + BATCH_FSYNC <= synced <= start + BATCH_FSYNC + 0.02, synced


async def _inline(fn, *args):
    await trio.lowlevel.checkpoint()
    return fn(*args)
