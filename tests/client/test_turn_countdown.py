"""The turn timer in the client: a countdown for the seat whose turn it is (from the
table's turn_timer setting in the view), and, when the server's timer moved for you,
"the timer played for you" rather than "you played ...": in a real terminal (tmux) and
in the line mode, against the bots of a private server."""

from __future__ import annotations

import os
import subprocess
import sys

import trio

import tmuxkit
from proc import LineReader, quit_plain


def test_full_screen_counts_down_and_says_the_timer_played_for_you():
    with tmuxkit.session("wildtable-countdown", "play", "--game", "wild-shots", "--bots", "1", "--name", "ann",
                         "--set", "turn_timer=3", "--bot-delay", "0.2", width=100, height=30) as tmux:
        tmux.wait_for("Wild Shots at t", timeout=20)
        tmux.wait_for("your turn: ", timeout=30)
        assert " s left" in tmux.screen()
        tmux.wait_for("the timer played for you (3 s passed): you played", timeout=30)
        tmuxkit.quit_client(tmux)


async def test_line_mode_announces_the_turn_and_the_timers_move():
    argv = [sys.executable, "-m", "wildtable", "play", "--game", "go-wild", "--bots", "1", "--plain", "--name", "ann",
            "--set", "turn_timer=2", "--bot-delay", "0.05"]
    with trio.fail_after(90):
        proc = await trio.lowlevel.open_process(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                                stderr=subprocess.DEVNULL, env=dict(os.environ, PYTHONUNBUFFERED="1"))
        out = LineReader(proc.stdout, timeout=40)
        try:
            await out.until(r"^turn you: 2 s, then the timer plays for you$")
            moved = await out.until(r"^event .*you (played|sloughed) .*$")
            assert moved.string.startswith("event the timer played for you (2 s passed): you "), moved.string
            await out.until(r"^turn bot1: 2 s, then the timer plays for bot1$")
            await quit_plain(proc, out)
        finally:
            if proc.returncode is None:
                proc.kill()
