"""Messages speak the player's words: the server's "list_tables" is the `list` a player
types; `join 99` with two tables listed says there is no table 99 and what there is;
the replay viewer answers keys it cannot act on (`r` with no rejected intent, `g abc`,
seat 7 at a 2-seat table) with a line saying why, in a real terminal (tmux)."""

from __future__ import annotations

import os
import subprocess
import sys

import trio

from wildtable.headless.net import connect

from proc import LineReader
from serverkit import create, running_server
import tmuxkit


async def test_join_a_number_past_the_list_and_a_missing_table_in_the_players_words(tmp_path):
    with trio.fail_after(60):
        async with running_server(tmp_path / "data") as (server, url):
            async with connect(url, "host") as conn:
                for _ in range(2):
                    await create(conn, "go-wild", 3)
                player = await trio.lowlevel.open_process(
                    [sys.executable, "-m", "wildtable", "play", url, "--plain", "--name", "ann"],
                    stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=dict(os.environ, PYTHONUNBUFFERED="1"))
                try:
                    out = LineReader(player.stdout, timeout=20)
                    await out.until(r"^table 2 ")
                    await player.stdin.send_all(b"join 99\njoin tnosuch\nquit\n")
                    assert (await out.until(r"^rejected join 99 :: .*$")).string == (
                        "rejected join 99 :: bad_command: there is no table 99: the list has 2 tables (1 to 2), "
                        "or give a table's id; list shows them")
                    missing = (await out.until(r"^error .*tnosuch.*$")).string
                    assert missing == "error no_such_table: no table 'tnosuch'; list shows the open ones", missing
                    await out.until(r"^info bye")
                    assert await player.wait() == 0
                    assert "list_tables" not in out.text
                finally:
                    if player.returncode is None:
                        player.kill()


def test_the_viewer_says_why_a_key_does_nothing(tmp_path):
    log = tmp_path / "game.wlog"
    made = subprocess.run([sys.executable, "-m", "wildtable", "selfplay", "go-wild", "--players", "2", "--seed", "4",
                           "--log", str(log)], capture_output=True, text=True, timeout=60)
    assert made.returncode == 0, made.stderr
    with tmuxkit.session("wildtable-viewer-keys", "replay", log.name, cwd=tmp_path) as tmux:
        tmux.wait_for("record 0/")
        tmux.keys("r")
        tmux.wait_for("this log has no rejected intents: r has nothing to jump to")
        tmux.keys("g")
        tmux.wait_for("seq to jump to")         # the prompt is up: what is typed goes there
        tmux.type("abc")
        tmux.wait_for("g wants a seq, a number from 0 to")
        tmux.wait_for("not 'abc'")
        tmux.keys("7")
        tmux.wait_for("there is no seat 7: this table has 2 seats, 0 to 1")
        tmux.keys("1")
        tmux.wait_for("view: seat 1")
        assert "there is no seat 7" not in tmux.screen()        # the line goes once a key works
        tmux.keys("q")
        tmux.wait_for("client exited with status 0")
