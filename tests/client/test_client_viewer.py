"""The replay viewer on a real log: a game played to the end on a real server (with a
rejected intent in it), stepped through forward and back in the Textual viewer, seen as
each seat and all-seeing, and printed by `wildtable replay LOG --plain`."""

from __future__ import annotations

import asyncio
import subprocess
import sys

import pytest
import trio
from textual.widgets import Static

from wildtable.headless.bots import Bot
from wildtable.headless.games import run_wild as rw
from wildtable.headless.net import connect
from wildtable.client.viewer import ALL, Timeline, ViewerApp
from wildtable.protocol import messages as m
from wildtable.protocol.logfmt import IntentRejected, read_log
from wildtable.protocol.replay import replay

from scripted import play_to_end
from serverkit import create, join, reply_to, running_server


async def _play_a_logged_game(data_dir):
    """ann joins, tries to draw before the game starts (refused and logged), then plays
    with the bot strategy against a bot until the game is over. Returns the log's path."""
    with trio.fail_after(60):
        async with running_server(data_dir) as (server, url):
            async with connect(url, "ann") as ann:
                table = await create(ann, "run-wild", 2, rounds=1)
                joined = await join(ann, table, 0)
                await ann.send(m.Intent(1, {"kind": "draw"}))
                assert isinstance(await reply_to(ann, 1), m.Rejected)
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(Bot(url, table, "bob", delay=0.0).run)
                    await play_to_end(ann, joined, choose=rw.choose, timeout=50)
            return server.tables[table].logfile.path


@pytest.fixture(scope="module")
def game_log(tmp_path_factory):
    return trio.run(_play_a_logged_game, tmp_path_factory.mktemp("viewer") / "data")


def state_text(app) -> str:
    return str(app.query_one("#state", Static).content)


def test_viewer_steps_forward_and_back_switches_views_and_jumps(game_log):
    contents = read_log(game_log.read_bytes())
    final = replay(contents)
    timeline = Timeline(contents)
    assert not any(s.problem for s in timeline.steps)
    rejected_at = next(i for i, s in enumerate(timeline.steps) if type(s.record) is IntentRejected)

    async def scenario():
        app = ViewerApp(timeline, game_log.name)
        async with app.run_test(size=(80, 24)) as pilot:
            top = app.query_one("#top", Static)
            assert "record 0/" in str(top.content) and "all-seeing" in str(top.content)
            # forward, one record at a time, to the first action after the deal
            texts = [state_text(app)]
            for _ in range(12):
                await pilot.press("right")
                texts.append(state_text(app))
            assert app.index == 12
            assert texts[0] != texts[-1]
            # and back again: every state is the one seen on the way forward
            for k in range(11, -1, -1):
                await pilot.press("left")
                assert app.index == k and state_text(app) == texts[k]
            # the rejected intent, with its reason, beside the state it was checked against
            await pilot.press("r")
            assert app.index == rejected_at
            detail = str(app.query_one("#detail", Static).content)
            assert "REJECTED after seq 0: ann: draw - not_started" in detail
            assert "reason: the game starts when every seat is taken" in detail
            # jump to a seq; see it as seat 1 (bob), then all-seeing again
            # (a seq the game has: a lucky deal can end a one-round game in under 20 seqs)
            target = min(20, final.seq)
            await pilot.press("g", *str(target), "enter")
            assert timeline.steps[app.index].seq == target
            await pilot.press("1")
            as_bob = state_text(app)
            assert "bob (you)" in as_bob and "your hand (" in as_bob and "pile (" not in as_bob
            assert "seat 1 (bob)" in str(top.content)
            await pilot.press("a")
            assert app.perspective == ALL and "pile (" in state_text(app)
            # the last record: the game over, as the fold of the log says
            await pilot.press("end")
            assert app.index == len(timeline) - 1
            last = state_text(app)
            assert "- game over -" in last and "winner: " + ("ann" if final.state.score.winners == (0,) else "bob") in last
            await pilot.press("q")

    asyncio.run(scenario())


def test_replay_plain_prints_records_and_states_as_a_seat(game_log):
    proc = subprocess.run([sys.executable, "-m", "wildtable", "replay", str(game_log), "--plain", "--seat", "0",
                           "--upto", "6"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("[   0] header: run-wild, table t")
    assert any("REJECTED after seq 0: ann: draw - not_started" in x for x in lines)
    assert any("reason: the game starts when every seat is taken" in x for x in lines)
    assert any(x.endswith("seq 1: chance (first_dealer): ann deals first, drawn by lot")
               or x.endswith("seq 1: chance (first_dealer): bob deals first, drawn by lot") for x in lines)
    assert any("seq 2: chance (deal): a shuffle of 72" in x for x in lines)
    assert any(x.startswith("       |   ann (you): hand 8") for x in lines)
    assert not any("seq 7:" in x for x in lines)
    whole = subprocess.run([sys.executable, "-m", "wildtable", "replay", str(game_log), "--plain"],
                           capture_output=True, text=True, timeout=60)
    assert whole.returncode == 0
    all_lines = whole.stdout.splitlines()
    headers = [x for x in all_lines if x.endswith("- all-seeing")]
    assert "- game over - " in headers[-1] and "- game over - " not in headers[-2]
    assert any(x.startswith("       | winner: ") for x in all_lines)
    bad = subprocess.run([sys.executable, "-m", "wildtable", "replay", str(game_log), "--plain", "--seat", "7"],
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "--seat wants 0..1" in bad.stderr
