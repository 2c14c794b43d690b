"""The ``expert`` level (issue 31; docs/PLAYING.md "Bot levels"): a search that sees only
its own seat, and thinks off the event loop.

- every world it samples agrees with its seat's view and memory: its own hand as it is,
  each other seat holding as many cards as the view says, no card it saw played or holds
  in another hand, no card of a suit a player showed void in, the revealed trumps;
- its search runs in a worker thread while the Trio loop keeps running (a player's
  keys are answered while expert bots think).
"""

from __future__ import annotations

import copy
import random
import threading

import pytest
import trio

from wildtable.headless import games
from wildtable.headless.bots import Bot
from wildtable.headless.games import go_wild_expert as gx, wild_shots as ws, wild_shots_expert as wx
from wildtable.headless.match import play_match
from wildtable.protocol.games import go_wild as gwg, wild_shots as wsg
from wildtable.protocol.games.wild_shots import N_CARDS, SUIT


@pytest.fixture
def quick_search(monkeypatch):
    """A small search budget: what is checked here (the worlds, the legal plays, what the
    search is given) does not depend on it, and the games end sooner."""
    for module in (wx, gx):
        monkeypatch.setattr(module, "PLAYOUTS", 24)
        monkeypatch.setattr(module, "MIN_WORLDS", 4)


def test_the_worlds_an_expert_samples_agree_with_what_its_seat_saw(quick_search):
    checked = 0

    def observe(state, seat, view, mind):
        nonlocal checked
        if state.phase != "playing" or mind.level.name != "expert":
            return
        unknown = ws.unseen(view, mind.memo)
        void = wx.voids(mind.memo)
        # the voids it infers are true of the real hands
        assert all(SUIT[c] != suit for who, suit in void for c in state.hands[who])
        # so are the points it saw each seat take this round (the tricks as each was won)
        _syms, pen = wx.symbols_and_penalties(view)
        assert wx.taken_so_far(view, mind.memo, pen) == [sum(pen[c] for c in w) for w in state.won]
        rng = random.Random(checked)
        for _ in range(20):
            world = wx.sample_world(view, unknown, void, rng)
            assert world[seat] == view["hand"]
            assert [len(h) for h in world] == [p["hand"] for p in view["players"]]
            dealt = [c for h in world for c in h]
            assert len(set(dealt)) == len(dealt)
            assert set(dealt) - set(view["hand"]) <= set(unknown)
            assert not any(SUIT[c] == suit for who, suit in void for c in world[who])
        checked += 1

    for i in range(2):
        play_match("wild-shots", ("expert", "hard", "expert", "hard"), 40 + i, 50 + i, observe=observe)
    assert checked >= 60
    # the unseen cards never include one the seat holds or saw: the world is built from them
    assert all(0 <= c < N_CARDS for c in range(N_CARDS))


async def test_an_experts_search_runs_in_a_worker_thread_while_the_loop_runs(monkeypatch):
    loop_thread = threading.current_thread()
    searching = threading.Event()
    release = threading.Event()
    seen: list = []
    real = wx.expert_candidates

    def search(view, memo, rng, unknown, playouts=None):
        seen.append(threading.current_thread())
        searching.set()
        assert release.wait(10), "the event loop never answered while the search ran"
        return real(view, memo, rng, unknown, playouts)

    monkeypatch.setattr(wx, "expert_candidates", search)
    views = []
    play_match("wild-shots", ("hard",) * 4, 3, 4,
               observe=lambda state, seat, view, mind: views.append(view) if state.phase == "playing" else None)
    view = next(v for v in views if len(v["playable"]) > 1)
    bot = Bot("ws://127.0.0.1:1", "t1", "b", level="expert", rng=random.Random(1))
    plugin = games.plugin_for("wild-shots")
    ticks = 0

    async def loop_work():
        nonlocal ticks
        while not searching.is_set():
            await trio.sleep(0)
        for _ in range(3):          # the loop turns while the search is blocked in its thread
            ticks += 1
            await trio.sleep(0)
        release.set()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(loop_work)
        action = await bot.decide(plugin, view)
    assert seen and seen[0] is not loop_thread
    assert ticks == 3
    assert action["kind"] == "play" and action["card"] in view["playable"]


def test_an_expert_ranks_legal_wild_shots_cards_from_its_view_and_memory_alone(quick_search):
    """Its ranking is a function of the view, the memory and its generator (nothing else
    is given: the same three give the same ranking), and every card is one it may play."""
    checked = 0

    def observe(state, seat, view, mind):
        nonlocal checked
        if state.phase != "playing" or mind.level.name != "expert" or len(view["playable"]) < 2:
            return
        ranked = ws.expert_candidates(view, random.Random(checked), copy.deepcopy(mind.memo))
        assert sorted(a["card"] for a in ranked) == sorted(view["playable"])
        assert all(wsg.Play(a["card"]) in wsg.legal_actions(state, seat) for a in ranked)
        assert ranked == ws.expert_candidates(view, random.Random(checked), copy.deepcopy(mind.memo))
        checked += 1

    play_match("wild-shots", ("expert", "hard", "hard", "hard"), 60, 61, observe=observe)
    assert checked >= 20


def _go_wild_decisions(observe_expert, games_played=2):
    """Go Wild! games with two experts, ``observe_expert(state, seat, view, mind)`` before each expert move."""
    def observe(state, seat, view, mind):
        if state.phase == "playing" and mind.level.name == "expert" and state.turn == seat:
            observe_expert(state, seat, view, mind)

    for i in range(games_played):
        play_match("go-wild", ("expert", "hard", "expert", "hard"), 70 + i, 80 + i, observe=observe)


def test_the_worlds_a_go_wild_expert_samples_agree_with_what_its_seat_saw(quick_search):
    checked = 0
    remembered = 0

    def observe(state, seat, view, mind):
        nonlocal checked, remembered
        unknown = gx.unseen(view, mind.memo)
        wild_only = gx.only_wild(view, mind.memo)
        # what it remembers is true of the real table: the cards it counts as discarded
        # are on the discard pile, and a seat it thinks holds wilds alone does
        piles = [c for _, cards in mind.memo.get("gw_piles") or () for c in cards]
        assert all(state.discard >> c & 1 for c in piles)
        remembered += len(piles)
        for s in wild_only:
            assert all(gwg.COLOUR_OF[c] == gwg.WILD for c in gwg.cards_of(state.hands[s]))
        # the cards it cannot place hold every other hand, and none of its own
        others = {c for s in range(len(state.hands)) if s != seat for c in gwg.cards_of(state.hands[s])}
        assert others <= set(unknown)
        assert not set(unknown) & set(view["hand"])
        rng = random.Random(checked)
        for _ in range(10):
            world = gx.sample_world(view, unknown, wild_only, rng)
            assert world[seat] == view["hand"]
            assert [len(h) for h in world] == [p["hand"] for p in view["players"]]
            dealt = [c for s, h in enumerate(world) if s != seat for c in h]
            assert len(set(dealt)) == len(dealt)
            assert set(dealt) <= set(unknown)
            assert not any(gwg.COLOUR_OF[c] != gwg.WILD for s in wild_only for c in world[s])
        # a seat known to hold wilds alone (a Wild One who sloughed) is dealt wilds alone
        other = (seat + 1) % len(state.hands)
        if sum(gwg.COLOUR_OF[c] == gwg.WILD for c in unknown) >= view["players"][other]["hand"]:
            world = gx.sample_world(view, unknown, {other}, rng)
            assert all(gwg.COLOUR_OF[c] == gwg.WILD for c in world[other])
            assert [len(h) for h in world] == [p["hand"] for p in view["players"]]
        checked += 1

    _go_wild_decisions(observe)
    assert checked >= 30
    assert remembered > 0


def test_a_go_wild_expert_ranks_legal_plays_from_its_view_and_memory_alone(quick_search):
    checked = 0

    def observe(state, seat, view, mind):
        nonlocal checked
        plugin = games.plugin_for("go-wild")
        ranked = plugin.expert_candidates(view, random.Random(checked), copy.deepcopy(mind.memo))
        assert ranked
        for a in ranked:
            state2, _ = gwg.apply(state, seat, gwg.ACTIONS.decode(a, "$"))   # refused: IllegalAction
            assert state2 is not state
        assert ranked == plugin.expert_candidates(view, random.Random(checked), copy.deepcopy(mind.memo))
        # the values the analysis and the hint read weigh the very same plays
        values = plugin.expert_values(view, random.Random(checked), copy.deepcopy(mind.memo))
        assert sorted(map(plugin.action_key, (a for a, _v in values))) == sorted(map(plugin.action_key, ranked))
        checked += 1

    _go_wild_decisions(observe, 1)
    assert checked >= 15


def test_go_wild_at_level_expert_searches():
    """``--level expert`` in Go Wild! runs its search (it used to play as hard)."""
    from wildtable.headless.mind import Mind

    views = []
    play_match("go-wild", ("hard",) * 4, 5, 6,
               observe=lambda state, seat, view, mind: views.append(view) if state.turn == seat else None)
    view = views[0]
    mind = Mind("expert", rng=random.Random(1))
    plugin = games.plugin_for("go-wild")
    mind.seated(plugin)
    calls = []
    real = gx.expert_candidates

    def search(*args, **kw):
        calls.append(1)
        return real(*args, **kw)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(gx, "expert_candidates", search)
        action = mind.choose(plugin, view, 0.0)
    assert calls and action is not None


def test_a_wild_shots_expert_counts_only_the_rounds_the_table_plays():
    """Setting rounds (docs/RULES.md "Wild Shots"): in the last round nothing is still to
    come, whatever rounds the overview card has after it."""
    view = wsg.view(wsg.new_table(wsg.TableConfig(wsg.NAME, 3, {"rounds": 1})), 0)
    assert view["round"] == 1 and wx._spread_after(view, 3) == 0
    assert wx._spread_after(wsg.view(wsg.new_table(wsg.TableConfig(wsg.NAME, 3, {})), 0), 3) > 0
