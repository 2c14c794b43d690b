"""The line mode through real subprocesses: a scripted player drives `wildtable play URL
--plain` over stdin/stdout and plays a whole Run Wild game against `wildtable bots`,
both talking to a real server on 127.0.0.1."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections import defaultdict

import pytest
import trio

from wildtable.headless.net import connect

from proc import LineReader
from serverkit import create, running_server

ENV = dict(os.environ, PYTHONUNBUFFERED="1")


@pytest.fixture(autouse=True)
def private_state(tmp_path):
    """Seat tokens the clients keep go to a temporary dir, not the user's home."""
    ENV["WILDTABLE_STATE_DIR"] = str(tmp_path / "state")


def pick_command(hand: list[str], pile: int, stuck: bool) -> str | None:
    """A simple player: three of a number, else draw, else Draw-3, else stuck."""
    by_number = defaultdict(list)
    for label in hand:
        if label[0] in "BGYRP":
            by_number[label[1:]].append(label)
    for cards in by_number.values():
        if len(cards) >= 3:
            return "meld " + " ".join(cards[:3])
    if pile > 0:
        return "draw"
    if "D3" in hand:
        return "draw3"
    return None if stuck else "stuck"


async def test_scripted_plain_player_plays_a_whole_game_against_bots(tmp_path):
    with trio.fail_after(80):
        async with running_server(tmp_path / "data") as (server, url):
            async with connect(url, "host") as conn:
                table = await create(conn, "run-wild", 3, rounds=1)
            async with trio.open_nursery() as nursery:
                player = await trio.lowlevel.open_process(
                    [sys.executable, "-m", "wildtable", "play", url, "--plain", "--table", table, "--name", "scripty"],
                    stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=ENV)
                bots = await trio.lowlevel.open_process(
                    [sys.executable, "-m", "wildtable", "bots", url, "--table", table, "--count", "2",
                     "--delay", "0.05", "--name", "rob"], stdout=subprocess.PIPE, env=ENV)
                bot_out = LineReader(bots.stdout)
                nursery.start_soon(bot_out.read_to_end)

                out = LineReader(player.stdout, timeout=15)

                async def send(text: str) -> None:
                    await player.stdin.send_all(text.encode() + b"\n")

                hand: list[str] = []
                pile, stuck, phase = 0, False, ""
                waiting: str | None = None       # a command sent and not answered yet
                syncing = False                  # accepted: wait for the hand line after it
                probed = False
                over = None
                await send("help")
                while True:
                    line = await out.next()
                    assert line is not None, "the client stopped early:\n" + out.tail()
                    tag, _, rest = line.partition(" ")
                    if tag == "hand":
                        cards, _, p = rest.rpartition("|")
                        hand, pile = cards.split(), int(p.split()[1])
                        syncing = False
                    elif tag == "phase":
                        phase, stuck = rest.split()[0], False
                    elif tag in ("ok", "rejected") and waiting is not None and rest.startswith(waiting):
                        if tag == "rejected" and waiting.startswith("take B1"):
                            assert rest == f"{waiting} :: no_such_meld: There is no meld 99 on the table."
                        if waiting == "stuck" and tag == "ok":
                            stuck = True
                        elif tag == "ok":
                            stuck = False
                        if tag == "rejected" and "not_in_round" in rest:
                            stuck = True
                        syncing = tag == "ok"        # the table after it comes next, as a hand line
                        waiting = None
                    elif tag == "over":
                        over = rest
                        break
                    if waiting is None and not syncing:
                        if phase == "ready":
                            waiting = "ready"
                            phase = "ready-sent"
                        elif phase == "playing" and not probed:
                            waiting, probed = "take B1 from m99", True
                        elif phase == "playing":
                            waiting = pick_command(hand, pile, stuck)
                        if waiting is not None:
                            await send(waiting)
                assert over.startswith("game over: ") and "scripty" in over
                await send("quit")
                rest = []
                while (line := await out.next()) is not None:
                    rest.append(line)
                assert rest[-1] == "info bye"
                assert await player.wait() == 0
                with trio.fail_after(20):
                    assert await bots.wait() == 0
            seen = "\n".join(out.seen)
            # the same words as the full-screen UI, the help and the events as one line each
            assert "help   meld CARD CARD CARD...  - play a set or run from your hand, e.g. meld B6 G6 W" in seen
            assert f"info joined table {table} (Run Wild) at seat" in seen
            assert "event Go! round 1 has started" in seen
            assert "\nok draw\nhand " in seen            # "ok" comes with the table after it
            assert "\nok stuck\nhand " in seen or "ok stuck" not in seen
            assert any(x.startswith("event rob") and "drew a card" in x for x in out.seen)
            bots_text = bot_out.text
            assert bots_text.count("game over") == 2 and "rob1: seat" in bots_text
            assert server.tables[table].finished


def test_unreachable_server_and_bad_options_fail_with_a_sentence(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]          # nothing listens here once closed
    url = f"ws://127.0.0.1:{port}"
    play = subprocess.run([sys.executable, "-m", "wildtable", "play", url, "--plain"], input="", capture_output=True,
                          text=True, timeout=60, env=ENV)
    assert play.returncode == 1
    assert play.stdout.startswith(f"error cannot connect to {url}: ")
    bots = subprocess.run([sys.executable, "-m", "wildtable", "bots", url, "--table", "t0"], capture_output=True,
                          text=True, timeout=60, env=ENV)
    assert bots.returncode == 1 and f"cannot connect to {url}" in bots.stderr
    clash = subprocess.run([sys.executable, "-m", "wildtable", "play", "--bots", "2", "--players", "2", "--plain"],
                           capture_output=True, text=True, timeout=60, env=ENV)
    assert clash.returncode == 2 and "--players 2 leaves no seat for you beside 2 bots" in clash.stderr
