"""The ``expert`` level (issue 31; docs/PLAYING.md "Bot levels"): a search that sees only
its own seat, and thinks off the event loop.

- every world it samples agrees with its seat's view and memory: its own hand as it is,
  each other seat holding as many cards as the view says, no card it saw played or holds
  in another hand, no card of a suit a player showed void in, the revealed trumps;
- its search runs in a worker thread while the Trio loop keeps running (a player's
  keys are answered while expert bots think).
"""

from __future__ import annotations

import random
import threading

import trio

from wildtable.headless import games
from wildtable.headless.bots import Bot
from wildtable.headless.games import wild_shots as ws, wild_shots_expert as wx
from wildtable.headless.match import play_match
from wildtable.protocol.games.wild_shots import N_CARDS, SUIT


def test_the_worlds_an_expert_samples_agree_with_what_its_seat_saw():
    checked = 0

    def observe(state, seat, view, mind):
        nonlocal checked
        if state.phase != "playing" or mind.level.name != "expert":
            return
        unknown = ws.unseen(view, mind.memo)
        void = wx.voids(mind.memo)
        # the voids it infers are true of the real hands
        assert all(SUIT[c] != suit for who, suit in void for c in state.hands[who])
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
