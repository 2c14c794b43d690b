"""The end of a game names its winners as the players they are, not seat numbers:
`wildtable bots` (its last line per bot), `wildtable replay --verify` and `--json`."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import trio

from wildtable.headless.net import connect

from serverkit import create, running_server

WILDTABLE = [sys.executable, "-m", "wildtable"]


async def test_bots_verify_and_json_name_the_winners(tmp_path):
    with trio.fail_after(90):
        async with running_server(tmp_path / "data") as (server, url):
            async with connect(url, "host") as conn:
                table = await create(conn, "go-wild", 2, target=1, turn_timer=0)
            bots = await trio.run_process(WILDTABLE + ["bots", url, "--table", table, "--count", "2", "--delay", "0.01",
                                                       "--name", "rob"], capture_stdout=True, capture_stderr=True,
                                          env=dict(os.environ))
            log = server.tables[table].logfile.path
            winners = list(server.tables[table].game.outcome(server.tables[table].state).winners)
    out = bots.stdout.decode()
    assert bots.returncode == 0, out + bots.stderr.decode()
    names = {0: "", 1: ""}
    for line in out.splitlines():
        if ": seat " in line:
            bot, _, rest = line.partition(": seat ")
            names[int(rest.split()[0])] = bot
    won = " and ".join(names[w] for w in winners)
    finals = [x for x in out.splitlines() if "game over" in x]
    assert len(finals) == 2
    for line in finals:
        assert line.endswith(f"; {won} {'wins' if len(winners) == 1 else 'win'}"), line
        assert f"scores {names[0]} " in line and f", {names[1]} " in line
    verify = subprocess.run(WILDTABLE + ["replay", str(log), "--verify"], capture_output=True, text=True, timeout=60)
    assert verify.returncode == 0, verify.stderr
    want = ", ".join(f"{names[w]} (seat {w})" for w in winners)
    assert f"winners: {want}\n" in verify.stdout, verify.stdout
    assert f"players: {names[0]} (seat 0), {names[1]} (seat 1)" in verify.stdout
    js = subprocess.run(WILDTABLE + ["replay", str(log), "--json"], capture_output=True, text=True, timeout=60)
    data = json.loads(js.stdout)
    assert data["winner_names"] == [names[w] for w in winners]
    assert data["players"] == [names[0], names[1]]
    assert data["outcome"]["winners"] == winners
