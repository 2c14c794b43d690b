"""A hint's search runs in a process of its own, and the server's hint processes end
when it stops (server/hints.py says why: a search in a thread of the server held the GIL
from every table; bench/README.md, "Hints in processes of their own")."""

from __future__ import annotations

import os
import signal
import time

import pytest
import trio
import trio.testing

from wildtable.server import hints
from wildtable.server.cpu_pool import CpuPool

from serverkit import running_server


async def _gone(pid: int) -> None:
    """Wait until process ``pid`` has ended and been reaped."""
    while os.path.exists(f"/proc/{pid}"):
        await trio.sleep(0.05)


async def test_a_search_runs_in_another_process_which_ends_with_the_pool():
    pool = hints.Hints(CpuPool())
    with trio.fail_after(30):
        pid = await pool.run(os.getpid)
        assert pid != os.getpid()
        assert await pool.run(os.getppid) == os.getpid()    # a child of the server's process
        pool.pool.close()
        await _gone(pid)


async def test_the_servers_hint_processes_end_when_it_stops(tmp_path):
    with trio.fail_after(30):
        async with running_server(tmp_path / "data") as (server, url):
            pid = await hints.hints_of(server).run(os.getpid)
            assert pid != os.getpid() and os.path.exists(f"/proc/{pid}")
        await _gone(pid)


async def test_a_hint_process_that_dies_costs_one_answer_not_the_hints():
    pool = hints.Hints(CpuPool())
    with trio.fail_after(30):
        pid = await pool.run(os.getpid)
        os.kill(pid, signal.SIGKILL)
        await _gone(pid)                    # reaped by the pool, which saw it die
        with pytest.raises(hints.IllegalAction) as refused:
            await pool.run(os.getpid)       # the broken pool: refused once
        assert refused.value.code == "busy" and "ask again" in refused.value.reason
        again = await pool.run(os.getpid)   # a new pool
        assert again not in (pid, os.getpid())
        pool.pool.close()
        await _gone(again)


async def test_a_search_given_up_while_it_waits_for_a_process_is_never_run(tmp_path):
    """A hint cut off (its 5 s over) while both processes are busy leaves nothing queued
    in the pool: the search is submitted only once a process is free for it."""
    pool = hints.Hints(CpuPool())
    never = tmp_path / "never"
    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            for _ in range(hints.HINT_SEARCHES):         # every process busy for a while
                nursery.start_soon(pool.run, time.sleep, 0.5)
            await trio.testing.wait_all_tasks_blocked()
            with trio.move_on_after(0.1) as waited:
                await pool.run(os.mkdir, never)         # waits for a process, then is given up
            assert waited.cancelled_caught
        for _ in range(2):                              # what the pool had queued has run by now
            await pool.run(os.getpid)
        pool.pool.close()
    assert not never.exists()
