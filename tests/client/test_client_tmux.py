"""`wildtable play --game run-wild --bots 3` in a real terminal (tmux, 80x24, NO_COLOR):
the table shows, typed commands work, Ctrl+Q quits with status 0. (How soon it shows is
no test's business: a loaded machine took 8.6 s once; the wait is for the table, with a
timeout that only says it never came.)"""

from __future__ import annotations

import os
import shlex
import sys

from tmuxkit import ROOT, TMUX, Tmux


def test_play_alone_in_tmux_shows_the_table_and_takes_commands():
    assert os.path.exists(TMUX), "tmux is required for this test: apt-get install tmux (CI installs it)"
    tmux = Tmux(f"wildtable-test-{os.getpid()}")
    cmd = " ".join(shlex.quote(x) for x in [
        "env", "TERM=xterm-256color", "NO_COLOR=1", "LANG=C.UTF-8",
        sys.executable, "-m", "wildtable", "play", "--game", "run-wild", "--bots", "3", "--name", "ann",
        "--bot-delay", "0.5"])
    # the shell says how the client exited, and keeps the pane for us to read it
    shell = f"{cmd}; echo \"client exited with status $?\"; sleep 30"
    tmux("new-session", "-d", "-s", "main", "-x", "80", "-y", "24", "-c", str(ROOT), shell)
    try:
        tmux.wait_for("Your hand (8)", timeout=60)
        screen = tmux.screen()
        for seen in ("Run Wild at t", "> ann", "bot1", "bot2", "bot3", "type ready to start"):
            assert seen in screen, (seen, screen)
        assert max(len(line) for line in screen.splitlines()) <= 80
        tmux.type("ready")
        tmux.wait_for("- playing - dealer")
        tmux.type("draw")
        tmux.wait_for("ok: draw")
        tmux.type("take B1 from m99")
        tmux.wait_for("refused: take B1 from m99 - no_such_meld")
        tmux("send-keys", "-t", "main", "C-q")
        tmux.wait_for("client exited with status 0", timeout=8)
    finally:
        tmux.kill()
