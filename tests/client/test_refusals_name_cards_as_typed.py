"""Refusals and help name cards as the player types them: the server's "B12 (11) is not
a Draw-3 card" shows as "B12 is not a Draw-3 card" (no card id), and `help swap` says
which of the two cards is yours."""

from __future__ import annotations

import os
import subprocess
import sys

import trio

from proc import LineReader, quit_plain


async def test_a_refusal_names_the_card_without_its_id_and_help_swap_says_which_card_is_yours():
    argv = [sys.executable, "-m", "wildtable", "play", "--game", "run-wild", "--bots", "1", "--plain", "--name", "ann",
            "--bot-delay", "0.5"]
    with trio.fail_after(60):
        proc = await trio.lowlevel.open_process(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                                stderr=subprocess.DEVNULL, env=dict(os.environ, PYTHONUNBUFFERED="1"))
        try:
            out = LineReader(proc.stdout, timeout=30)
            await out.until(r"^hand ")
            await proc.stdin.send_all(b"ready\n")
            await out.until(r"^event Go! ")
            await proc.stdin.send_all(b"help swap\n")
            swap = (await out.until(r"^help swap .*$")).string
            assert swap == ("help swap MELDCARD for HANDCARD in mN  - the meld's card comes to your hand and yours "
                            "takes its place, e.g. swap W for R9 in m3: m3's W is yours, your R9 goes into m3"), swap
            await proc.stdin.send_all(b'act {"kind": "draw3", "card": 11}\n')
            refused = (await out.until(r"^rejected act .*$")).string
            assert "B12 " in refused and "(11)" not in refused, refused
            await quit_plain(proc, out)
        finally:
            if proc.returncode is None:
                proc.kill()
