"""A SIGHUP or SIGTERM ends the full-screen client even when the graceful way hangs
(client/termsignals.py GRACE): a SIGHUP usually means the terminal is gone, and Textual's
shutdown once blocked for good writing to it, leaving a client running half an hour
after its tmux was killed. Here the app's stop never returns; the process must still end,
with 128 + the signal's number as a shell reports it (the client runs under sh here)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

HANGS = """
import asyncio, os, signal, sys
from wildtable.client.termsignals import quit_on_signals

class App:
    async def stop_trio(self, timeout):
        await asyncio.Event().wait()        # never returns: the terminal is gone
    def exit(self, return_code):
        sys.exit(return_code)

async def main():
    quit_on_signals(App(), asyncio.get_running_loop())
    print("ready", os.getpid(), flush=True)
    await asyncio.Event().wait()

asyncio.run(main())
"""


@pytest.mark.parametrize("sig", [signal.SIGHUP, signal.SIGTERM], ids=["SIGHUP", "SIGTERM"])
def test_the_process_ends_when_the_graceful_stop_hangs(sig):
    # under a shell, as a player runs it: the shell's status is what a player sees
    proc = subprocess.Popen(["sh", "-c", '"$0" -c "$1"; exit $?', sys.executable, HANGS],
                            stdout=subprocess.PIPE, text=True)
    pid = None
    try:
        word, pid = proc.stdout.readline().split()
        assert word == "ready"
        os.kill(int(pid), sig)
        # a condition with a timeout: the watchdog's GRACE (5 s) and then some
        assert proc.wait(timeout=60) == 128 + sig
    finally:
        if pid is not None:
            try:
                os.kill(int(pid), signal.SIGKILL)      # the client itself, if it is still there
            except ProcessLookupError:
                pass
        if proc.poll() is None:
            proc.kill()
            proc.wait()
