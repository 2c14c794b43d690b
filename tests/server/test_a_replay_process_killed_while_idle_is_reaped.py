"""A replay process killed while idle (by the OOM killer, by an operator's `kill`) is reaped
at once, not left a zombie until the next replay request or the server's stop; the next
request starts a new one (server/replay_process.py, docs/OPERATING.md)."""

from __future__ import annotations

import os
import signal

import trio

from waitkit import wait_until
from wildtable.server.replay_process import ReplayProcess


def _reaped(pid: int) -> bool:
    """Whether child ``pid`` has ended and been reaped: ``waitid`` with WNOWAIT looks
    without reaping it (None: it runs; a status: a zombie, not reaped yet)."""
    try:
        os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:
        return True
    return False


async def test_a_replay_process_killed_while_idle_is_reaped_with_no_request():
    proc = ReplayProcess()
    try:
        with trio.fail_after(60):
            assert await proc.serve(lambda: proc.call(os.getpid)) == proc.pid
        first = proc.pid
        assert first not in (None, os.getpid()) and not _reaped(first)

        os.kill(first, signal.SIGKILL)
        await wait_until(lambda: _reaped(first), what="the replay process killed while idle reaped", timeout=15)
        assert proc.pid is None

        with trio.fail_after(60):
            assert await proc.serve(lambda: proc.call(os.getpid)) == proc.pid
        assert proc.pid not in (None, first, os.getpid())
    finally:
        proc.close()
