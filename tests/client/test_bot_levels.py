"""Bot levels (issue 15, item 3): `--level easy|normal|hard` on `play` and `bots`, and
`bots N [LEVEL]` in the client. A level sets the bots' reaction times (a person's:
log-normal above a floor) and how often they overlook a play; Run Wild bots hold their
Draw-3s back at the start of a round. The distributions are checked by sampling the pure
function; at a real table, the waits an easy bot chose (never a timed assertion)."""

from __future__ import annotations

import os
import random
import re
import statistics
import subprocess
import sys
from pathlib import Path

import pytest
import trio
from trio.testing import MockClock

from wildtable.cli import build_parser
from wildtable.headless import levels
from wildtable.headless.bots import Bot
from wildtable.headless.core import ClientCore, Notice
from wildtable.headless.games import run_wild as rw_client
from wildtable.headless.net import connect
from wildtable.client.session import Launch
from wildtable.protocol import messages as m
from wildtable.protocol.games.run_wild import card_id

from serverkit import create, join, running_server

WILDTABLE = [sys.executable, "-m", "wildtable"]
ENV = dict(os.environ, PYTHONUNBUFFERED="1")
DOCS = Path(__file__).resolve().parents[2] / "docs" / "PLAYING.md"

# What docs/PLAYING.md and headless/levels.py promise: (floor, median, cap) in seconds.
DOCUMENTED = {
    ("run-wild", "easy"): (2.5, 5.0, 15.0),
    ("run-wild", "normal"): (2.0, 3.5, 10.0),
    ("run-wild", "hard"): (1.2, 2.2, 6.0),
    ("turn-based", "easy"): (1.5, 3.0, 8.0),
    ("turn-based", "normal"): (1.0, 2.0, 6.0),
    ("turn-based", "hard"): (0.6, 1.2, 4.0),
    ("run-wild", "expert"): (1.2, 2.2, 6.0),
    ("turn-based", "expert"): (0.6, 1.2, 4.0),
}


# ------------------------------------------------------------------ parsing

@pytest.mark.parametrize("level", ["easy", "normal", "hard", "expert"])
def test_each_level_parses_on_play_and_bots(level):
    args = build_parser().parse_args(["play", "--bots", "3", "--level", level])
    launch = Launch.from_args(args)
    assert launch.level == level and launch.problem() is None
    args = build_parser().parse_args(["bots", "ws://127.0.0.1:1", "--table", "t1", "--level", level])
    assert args.level == level
    assert levels.level_of(level).name == level


def test_the_default_level_is_normal():
    launch = Launch.from_args(build_parser().parse_args(["play", "--bots", "3"]))
    assert launch.level is None and launch.problem() is None
    assert levels.level_of(launch.level).name == levels.DEFAULT_LEVEL == "normal"


@pytest.mark.parametrize("argv, prefix", [
    (["play", "--bots", "3", "--level", "nightmare", "--plain"], "wildtable play: --level: "),
    (["bots", "ws://127.0.0.1:1", "--table", "t1", "--level", "nightmare"], "wildtable bots: --level: "),
])
def test_an_unknown_level_is_refused_with_a_sentence_and_exit_2(argv, prefix):
    done = subprocess.run(WILDTABLE + argv, capture_output=True, text=True, timeout=60, env=ENV,
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 2, done
    assert done.stderr == (prefix + "there is no bot level 'nightmare'; choose easy, normal (the default), "
                           "hard or expert\n")
    assert "Traceback" not in done.stderr and done.stdout == ""


# ------------------------------------------------------------------ reaction times

@pytest.mark.parametrize("kind, level", sorted(DOCUMENTED))
def test_reaction_times_have_the_documented_floor_median_and_cap(kind, level):
    pace = (levels.REAL_TIME if kind == "run-wild" else levels.TURN_BASED)[level]
    floor, median, cap = DOCUMENTED[kind, level]
    rng = random.Random(15)
    times = sorted(levels.reaction_time(pace, rng) for _ in range(20_000))
    assert times[0] >= floor and times[-1] <= cap
    assert abs(statistics.median(times) - median) < 0.03 * median
    # a person's spread, not a constant: a tenth quicker than halfway to the floor, a tenth far slower
    assert times[len(times) // 10] < median - 0.2 * (median - floor)
    assert times[len(times) * 9 // 10] > median + 0.5 * (median - floor)


def test_each_game_module_uses_its_kind_of_pace():
    from wildtable.headless import games
    assert games.plugin_for("run-wild").BOT_PACE is levels.REAL_TIME
    for game in ("go-wild", "wild-shots", "go-fish-wildcard"):
        assert games.plugin_for(game).BOT_PACE is levels.TURN_BASED


def test_the_docs_table_states_each_levels_floor_and_median():
    text = DOCS.read_text()
    for level in levels.LEVELS:
        row = re.search(rf"^\| `{level}`[^\n]*$", text, re.M)
        assert row, f"docs/PLAYING.md has no row for {level}"
        cells = [c.strip() for c in row.group(0).strip("|").split("|")]
        rw, tb = DOCUMENTED["run-wild", level], DOCUMENTED["turn-based", level]
        assert cells[1] == f"{rw[0]:g} s / {rw[1]:g} s", cells
        assert cells[2] == f"{tb[0]:g} s / {tb[1]:g} s", cells


async def test_a_fixed_delay_replaces_the_levels_pace():
    bot = Bot("ws://127.0.0.1:1", "t1", "b", delay=0.2, level="easy")
    waits = [bot.reaction_time() for _ in range(200)]
    assert min(waits) >= 0.15 and max(waits) <= 0.25
    assert bot.waits == waits


# ------------------------------------------------------------------ strategy

def _run_wild_view(hand, pile=5, round_=1, players=2, draw3s=()):
    return {
        "game": "run-wild", "phase": "playing", "round": round_, "rounds": 4, "seat": 0,
        "hand": list(hand), "pile": pile, "melds": [], "settings": {},
        "players": [{"seat": s, "hand": 8, "pile": 10, "draw3s": list(draw3s) if s == 1 else [],
                     "stuck": False, "ready": True, "in_round": True} for s in range(players)],
    }


async def test_easy_overlooks_plays_hard_plays_the_best_it_finds():
    meld = [card_id("blue", 5), card_id("green", 5), card_id("red", 5)]
    view = _run_wild_view(meld + [card_id("yellow", 9)])
    chosen = {}
    for level in levels.LEVELS:
        bot = Bot("ws://127.0.0.1:1", "t1", "b", level=level, rng=random.Random(3))
        picks = [bot.choose(rw_client, view)["kind"] for _ in range(400)]
        assert set(picks) <= {"meld", "draw"}      # a missed meld means a draw: never "stuck" with a pile
        chosen[level] = picks.count("meld") / len(picks)
    assert chosen["hard"] == 1.0
    assert 0.5 < chosen["easy"] < 0.7 and 0.72 < chosen["normal"] < 0.88


async def test_a_ready_or_a_draw_is_never_overlooked_and_easy_never_takes_from_the_table():
    rng = random.Random(1)
    easy, normal, hard = (levels.level_of(x) for x in ("easy", "normal", "hard"))
    take = {"kind": "take", "meld": 1, "card": 3}
    seen = {"easy": 0, "normal": 0, "hard": 0}
    for _ in range(1000):
        assert levels.pick([{"kind": "ready"}], easy, rng, rw_client.bot_miss) == {"kind": "ready"}
        assert levels.pick([{"kind": "add"}, {"kind": "draw"}, {"kind": "stuck"}], easy, rng,
                           rw_client.bot_miss)["kind"] in ("add", "draw")
        assert levels.pick([take], easy, rng, rw_client.bot_miss) is None
        for level in (easy, normal, hard):
            seen[level.name] += levels.pick([take, {"kind": "draw"}], level, rng, rw_client.bot_miss) == take
    assert seen["easy"] == 0 and 20 < seen["normal"] < 90 and seen["hard"] == 1000


def test_run_wild_bots_hold_draw3s_at_the_start_of_a_round_and_after_another():
    d3, b1 = 69, card_id("blue", 1)
    actions = [{"kind": "draw3", "card": d3}, {"kind": "draw"}]
    after_go, gap = rw_client.DRAW3_HOLD["normal"]
    memo: dict = {}
    view = _run_wild_view([d3, b1], pile=3)
    rw_client.bot_watch(view, 100.0, memo)                  # Go! seen at 100
    held = rw_client.bot_hold(actions, view, "normal", 100.0 + after_go - 1, memo)
    assert held == [{"kind": "draw"}]
    assert rw_client.bot_hold(actions, view, "normal", 100.0 + after_go + 1, memo) == actions
    # someone plays a Draw-3: the next waits `gap` seconds
    later = _run_wild_view([d3, b1], pile=3, draw3s=[70])
    t = 100.0 + after_go + 5
    rw_client.bot_watch(later, t, memo)
    assert rw_client.bot_hold(actions, later, "normal", t + gap - 1, memo) == [{"kind": "draw"}]
    assert rw_client.bot_hold(actions, later, "normal", t + gap + 1, memo) == actions
    # a new round starts the hold again; a last card is never held; --delay 0 holds nothing
    round2 = _run_wild_view([d3, b1], pile=3, round_=2)
    rw_client.bot_watch(round2, 500.0, memo)
    assert rw_client.bot_hold(actions, round2, "normal", 501.0, memo) == [{"kind": "draw"}]
    last = _run_wild_view([d3], pile=0, round_=2)
    assert rw_client.bot_hold(actions, last, "normal", 501.0, memo) == actions
    assert rw_client.bot_hold(actions, round2, "normal", 501.0, memo, scale=0.0) == actions
    # the levels hold for different times: easy longest
    assert rw_client.DRAW3_HOLD["easy"][0] > after_go > rw_client.DRAW3_HOLD["hard"][0]


# ------------------------------------------------------------------ at a real table

@pytest.fixture
def quick_clock():
    """Trio's clock running 10 times faster than the wall clock: an easy bot's seconds of
    thought pass quickly, and the test still reads every time on trio's clock."""
    return MockClock(rate=10)


async def test_an_easy_bot_at_a_real_table_never_acts_before_its_floor(tmp_path, quick_clock):
    floor = levels.REAL_TIME["easy"].floor
    with trio.fail_after(300):      # trio's clock: 30 s of wall-clock time
        async with running_server(tmp_path / "data") as (server, url):
            async with connect(url, "ann") as ann, trio.open_nursery() as nursery:
                table = await create(ann, "run-wild", 2, rounds=1)
                await join(ann, table, 0)
                bot = Bot(url, table, "easy1", level="easy", verbose=False, rng=random.Random(5))
                nursery.start_soon(bot.run)
                await ann.receive_until(lambda x: isinstance(x, m.Update) and
                                        any(e.get("event") == "round_dealt" for e in x.events), timeout=100)
                dealt_at = trio.current_time()
                await ann.send(m.Intent(1, {"kind": "ready"}))
                times = {}
                plays = []
                while len(plays) < 3 and "end" not in times:
                    msg = await ann.receive_until(lambda x: isinstance(x, m.Update), timeout=100)
                    played = False
                    for e in msg.events:
                        if e.get("event") == "player_ready" and e.get("seat") == 1:
                            times["bot_ready"] = trio.current_time()
                        elif e.get("event") == "round_started":
                            times["go"] = trio.current_time()
                        elif e.get("event") == "round_ended":
                            times["end"] = trio.current_time()
                        elif e.get("seat") == 1 and "go" in times:
                            played = True
                    if played:
                        # one play an update, however many of its events name the bot (a
                        # CI run counted one play twice: 4 plays to the bot's 3 waits after ready)
                        plays.append(trio.current_time())
                nursery.cancel_scope.cancel()
    # the waits the bot chose (ready, then each play): each at least the floor, each its own
    assert len(plays) >= 2 and len(bot.waits) >= 1 + len(plays)
    assert min(bot.waits) >= floor and len(set(bot.waits)) == len(bot.waits)
    # and what the table saw: nothing from the bot sooner than the floor after what it
    # answered (less 0.25 s of this clock, 25 ms of wall-clock time: the two clients hear
    # of one update at slightly different moments)
    slack = 0.25
    assert times["bot_ready"] - dealt_at >= floor - slack
    assert plays[0] - times["go"] >= floor - slack
    assert all(b - a >= floor - slack for a, b in zip(plays, plays[1:]))


async def test_bots_n_level_in_the_client(tmp_path):
    seen: list[Notice] = []
    changed = trio.Event()

    def notice(n: Notice) -> None:
        nonlocal changed
        seen.append(n)
        changed.set()

    async def wait(pred):
        nonlocal changed
        with trio.fail_after(10):
            while True:
                for n in seen:
                    if pred(n):
                        seen.remove(n)
                        return n
                changed = trio.Event()
                await changed.wait()

    async with running_server(tmp_path / "data") as (server, url):
        async with trio.open_nursery() as nursery:
            core = ClientCore(url, "ann", notice, bot_delay=0.05, bot_level="hard")
            await nursery.start(core.run)
            await core.command("create run-wild 3")
            await wait(lambda n: n.kind == "info" and "joined table" in n.text)
            await core.command("bots 1 nightmare")
            n = await wait(lambda n: n.kind == "rejected" and n.text == "bots 1 nightmare")
            assert n.reason == "there is no bot level 'nightmare'; choose easy, normal (the default), hard or expert"
            await core.command("bots 1 easy 2")
            n = await wait(lambda n: n.kind == "rejected" and n.text == "bots 1 easy 2")
            assert "bots 2 easy" in n.reason
            await core.command("bots 1 EASY")
            # the line that says so names the level ("seating 1 bot(s) (easy)", or once seated
            # by the server "seated 1 bot(s) (easy): bot1 (seat 1); ...")
            await wait(lambda n: n.kind == "info" and "1 bot(s) (easy)" in n.text)
            await wait(lambda n: n.kind == "info" and "took seat" in n.text)
            await core.command("bots 1")             # the client's --level (here hard)
            await wait(lambda n: n.kind == "info" and "1 bot(s) (hard)" in n.text)
            await wait(lambda n: n.kind == "event" and "round 1 dealt" in n.text)
            assert sorted(p["name"] for p in core.mirror.players[1:]) == ["bot1", "bot2"]
            nursery.cancel_scope.cancel()
