"""`kill PID` (SIGTERM), or the terminal closing (SIGHUP), ends the full-screen client as
Ctrl-C does: the terminal is left on its normal screen, with mouse tracking off and the
cursor shown. Found: both left the alternate screen, mouse tracking on and the cursor
hidden, so that the shell needed `reset`. Read from tmux's own view of the pane."""

from __future__ import annotations

import os
import signal
import subprocess
import time

import pytest

from tmuxkit import session


def _client_pid(tmux) -> int:
    """The wildtable process: the child of the pane's shell."""
    shell = int(tmux("display", "-p", "-t", "main", "#{pane_pid}").strip())
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        out = subprocess.run(["pgrep", "-P", str(shell)], capture_output=True, text=True).stdout.split()
        if out:
            return int(out[0])
        time.sleep(0.05)
    raise AssertionError("no client process under the pane's shell")


def _flags(tmux) -> dict[str, str]:
    names = ("alternate_on", "mouse_any_flag", "mouse_button_flag", "mouse_standard_flag", "mouse_all_flag",
             "cursor_flag")
    values = tmux("display", "-p", "-t", "main", " ".join("#{%s}" % n for n in names)).split()
    return dict(zip(names, values))


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_a_killed_client_leaves_the_terminal_as_it_found_it(sig):
    # a private server in the client's process, a bot at the table (the Trio side stops too)
    with session(f"wildtable-killed-{sig.name}", "play", "--game", "run-wild", "--bots", "1", "--name", "ann",
                 "--bot-delay", "5") as tmux:
        tmux.wait_for("Your hand", timeout=20)
        full = _flags(tmux)
        assert full["alternate_on"] == "1" and full["mouse_any_flag"] == "1", full     # what is to be undone
        os.kill(_client_pid(tmux), sig)
        tmux.wait_for(f"client exited with status {128 + sig}", timeout=15)
        after = _flags(tmux)
        assert after == {"alternate_on": "0", "mouse_any_flag": "0", "mouse_button_flag": "0",
                         "mouse_standard_flag": "0", "mouse_all_flag": "0", "cursor_flag": "1"}, after
