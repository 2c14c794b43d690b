"""`hint` in the line mode: the expert's choice for your own seat, a move the server
accepts (docs/PLAYING.md "Hints and analysis")."""

from __future__ import annotations

import os
import subprocess
import sys

import trio

from proc import LineReader


async def test_hint_in_plain_names_a_legal_move_and_the_server_takes_it(tmp_path):
    env = dict(os.environ, PYTHONUNBUFFERED="1", WILDTABLE_STATE_DIR=str(tmp_path / "state"))
    with trio.fail_after(60):
        player = await trio.lowlevel.open_process(
            [sys.executable, "-m", "wildtable", "play", "--bots", "3", "--game", "wild-shots", "--bot-delay", "0.05",
             "--plain"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
        try:
            out = LineReader(player.stdout, timeout=30)

            async def send(text: str) -> None:
                await player.stdin.send_all(text.encode() + b"\n")

            await out.until(r"^turn you: ")
            hand = [x for x in out.seen if x.startswith("hand ")][-1].split()[1:]
            await send("hint")
            line = (await out.until(r"^hint (.*)$")).group(1)
            move, _, why = line.partition(" - ")
            assert why.startswith("the expert's choice, worth "), line
            word, card = move.split()
            assert word == "play" and card in [c.split("(")[0] for c in hand], (move, hand)
            await send(move)
            await out.until(rf"^ok {move}$")
            await send("quit")
            await out.until(r"^info bye$")
            assert await player.wait() == 0
        finally:
            if player.returncode is None:
                player.kill()
                await player.wait()
