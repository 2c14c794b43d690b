"""A `wildtable serve` the test kits start (adversarial_kit.start_serve, so every cluster
node of clusterkit too) ends when the process of the test that started it dies, even by
SIGKILL, which runs no clean-up: a killed test run leaves no server running, orphaned
(tests/die_with_parent.py)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import trio

from wildtable.headless.net import connect

from proc import LineReader

TESTS = Path(__file__).resolve().parent.parent

# a test's process, in short: it starts a server with the kit, says which, and waits
THROWAWAY = """
import sys
import trio
sys.path.insert(0, {tests!r})
from adversarial_kit import start_serve

async def main():
    async with trio.open_nursery() as nursery:
        sp = await start_serve(nursery, {data!r}, "--durability", "off")
        print(sp.proc.pid, sp.url, flush=True)
        await trio.sleep_forever()

trio.run(main)
"""


async def test_a_serve_the_kit_started_ends_when_its_test_process_is_killed(tmp_path):
    script = tmp_path / "throwaway.py"
    script.write_text(THROWAWAY.format(tests=str(TESTS), data=str(tmp_path / "data")))
    runner = await trio.lowlevel.open_process([sys.executable, str(script)], stdout=subprocess.PIPE)
    serve = None
    try:
        pid, url = (await LineReader(runner.stdout).next(timeout=30)).split()
        serve = os.pidfd_open(int(pid))         # its parent is alive: this is the server
        async with connect(url) as probe:
            assert (await probe.hello("probe")).version
        runner.kill()
        await runner.wait()
        with trio.move_on_after(10) as waiting:
            await trio.lowlevel.wait_readable(serve)        # a pidfd is readable once its process ended
        assert not waiting.cancelled_caught, f"the server {pid} still runs 10 s after the process that started it was killed"
    finally:
        if runner.returncode is None:
            runner.kill()
            await runner.wait()
        if serve is not None:
            try:
                signal.pidfd_send_signal(serve, signal.SIGKILL)     # not left running by a failure
            except ProcessLookupError:
                pass
            trio.lowlevel.notify_closing(serve)
            os.close(serve)
