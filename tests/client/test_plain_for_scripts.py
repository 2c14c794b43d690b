"""`wildtable play --plain` as scripts use it: a `ready` piped as the very first line is
taken (the client reads commands once its bots sit at the table, and says so), Wild Shots'
`hand` line carries each card's symbol as `show` does, and `--table` of a table that does
not exist ends the client with a sentence and a non-zero status."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import trio

from proc import LineReader, quit_plain
from serverkit import running_server

PLAY = [sys.executable, "-m", "wildtable", "play"]


async def _plain(argv: list[str], first: bytes):
    proc = await trio.lowlevel.open_process(PLAY + argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                            stderr=subprocess.DEVNULL, env=dict(os.environ, PYTHONUNBUFFERED="1"))
    await proc.stdin.send_all(first)        # written before the client has read anything
    return proc, LineReader(proc.stdout, timeout=30)


async def test_a_ready_piped_on_the_first_line_is_taken():
    with trio.fail_after(60):
        proc, out = await _plain(["--game", "run-wild", "--bots", "3", "--plain", "--name", "scripty"], b"ready\n")
        await out.until(r"^info every seat is taken: the game starts$")
        answer = await out.until(r"^(ok|rejected) ready")
        assert answer.string == "ok ready", out.text
        await out.until(r"^event Go! round 1 has started")
        await quit_plain(proc, out)


async def test_wild_shots_hand_line_carries_the_symbols_as_show_does():
    with trio.fail_after(60):
        proc, out = await _plain(["--game", "wild-shots", "--bots", "1", "--plain", "--set", "turn_timer=0",
                                  "--bot-delay", "30"], b"")
        hand = (await out.until(r"^hand (.*)$"))[1].split()
        await proc.stdin.send_all(b"show\n")
        shown = (await out.until(r"^show your hand \(\d+\): (.*)$"))[1].split(", ")
        # "R3 star" in show is "R3(star)" in the hand line: one word per card, the same cards
        assert [re.sub(r"^(\w+) (\w+)$", r"\1(\2)", c) for c in shown] == hand
        assert any("(" in c for c in hand), hand
        await quit_plain(proc, out)


async def test_plain_table_that_does_not_exist_exits_non_zero(tmp_path):
    with trio.fail_after(60):
        async with running_server(tmp_path / "data") as (server, url):
            proc = await trio.run_process(PLAY + [url, "--plain", "--table", "tnosuch", "--name", "ann"], stdin=b"",
                                          capture_stdout=True, capture_stderr=True, check=False, env=dict(os.environ))
    lines = proc.stdout.decode().splitlines()
    assert proc.returncode == 1, lines
    assert "error no_such_table: no table 'tnosuch'; list shows the open ones" in lines
    assert lines[-1] == "info bye"


async def test_a_reader_that_goes_away_ends_the_client_quietly():
    """`wildtable play --plain ... | head -2`: once the reader of its lines has gone, the
    client ends with status 0 and no traceback (it used to print a BrokenPipeError's) at
    its next line, as any program in a pipe learns of it. The script then asks for one
    (``show``): had the client written all it had before the reader went (the deal, the
    first turn its own), it would wait for its player, quietly, for as long as the turn
    lasts (a loaded CI run: 60 s and no end)."""
    with trio.fail_after(60):
        proc = await trio.lowlevel.open_process(PLAY + ["--game", "go-wild", "--bots", "1", "--plain"],
                                                stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                                stderr=subprocess.PIPE, env=dict(os.environ, PYTHONUNBUFFERED="1"))
        out = LineReader(proc.stdout)
        await out.until(r"^conn connected")
        await proc.stdout.aclose()              # as `head -1` does once it has its line
        try:
            await proc.stdin.send_all(b"show\n")
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass                                # it had more to say already, and has ended
        err = LineReader(proc.stderr, timeout=None, errors="replace")
        said = await err.read_to_end()
        assert await proc.wait() == 0, said
        assert "Traceback" not in said and "BrokenPipe" not in said, said
        await proc.stdin.aclose()
