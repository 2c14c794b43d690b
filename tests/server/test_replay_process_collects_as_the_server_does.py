"""The replay process runs Python's cyclic collector as the server does (server/collector.py):
no automatic young passes, which went over every kept timeline and made each answer cost
44 ms of CPU against 26 (server/replay_process.py)."""

from __future__ import annotations

import gc

import trio

from wildtable.server.replay_process import ReplayProcess


async def test_the_replay_process_makes_no_automatic_passes():
    proc = ReplayProcess()
    try:
        with trio.fail_after(30):
            assert await proc.serve(lambda: proc.call(gc.isenabled)) is False
    finally:
        proc.close()
