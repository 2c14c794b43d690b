"""The end of a game in the line mode: the game-over line comes once (not once from the
game's event and again from the server's game_over), the bots that leave a finished game
"left" (they did not "lose the connection": nobody waits for them), and the table says
"game over" in the same words in every game."""

from __future__ import annotations

import os
import subprocess
import sys

import trio

from proc import LineReader, quit_plain


async def test_game_over_is_said_once_and_bots_leave():
    argv = [sys.executable, "-m", "wildtable", "play", "--game", "go-wild", "--bots", "1", "--plain", "--name", "ann",
            "--set", "target=1", "--set", "turn_timer=0.5", "--bot-delay", "0.05"]
    with trio.fail_after(90):
        proc = await trio.lowlevel.open_process(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                                stderr=subprocess.DEVNULL, env=dict(os.environ, PYTHONUNBUFFERED="1"))
        try:
            out = LineReader(proc.stdout, timeout=60)
            over = (await out.until(r"^over (.*)$"))[1]
            # the scores once; no log named: a private server's is deleted when the player quits
            assert over.startswith("game over: ") and over.count("(scores ann ") == 1 and "log" not in over, over
            await out.until(r"^info bot1 left$")
            await proc.stdin.send_all(b"show\n")
            head = (await out.until(r"^show (Go Wild!.*)$"))[1]
            assert head.endswith(" - game over"), head
            await quit_plain(proc, out)
        finally:
            if proc.returncode is None:
                proc.kill()
    said = [x for x in out.seen if "game over" in x.lower() and not x.startswith("show ")]
    assert said == [f"over {over}"], said
    assert not any("lost the connection" in x for x in out.seen), out.text
