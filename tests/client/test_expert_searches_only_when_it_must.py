"""An expert bot's decision goes off its event loop (a worker thread; the server's bots:
its search processes) only when it is a search: at the seat's turn with a choice to
make. At any other time the game's ``expert_searches`` says so, and ``expert_candidates``
answers at once without searching, so the bot decides on its own loop: the server's 24
bots do not queue a round trip to the search processes for every other seat's move
(headless/mind.py ``Mind.searches``)."""

from __future__ import annotations

import random

import pytest

from wildtable.headless import games
from wildtable.headless.games import go_wild_expert as gx, wild_shots_expert as wx
from wildtable.headless.match import play_match
from wildtable.headless.mind import Mind

SEARCH = {"wild-shots": wx, "go-wild": gx}


@pytest.mark.parametrize("game", ["wild-shots", "go-wild"])
def test_an_expert_searches_off_its_loop_only_where_the_game_says_it_searches(game, monkeypatch):
    plugin = games.plugin_for(game)
    views: list[tuple[dict, dict]] = []
    play_match(game, ("expert", "hard", "hard", "hard"), 21, 22,
               observe=lambda state, seat, view, mind: views.append((view, dict(mind.memo)))
               if mind.level.name == "expert" else None)
    # and each as it was when another seat was to play (the arena asks a seat at its turn)
    views += [(dict(v, turn=(v["seat"] + 1) % 4), memo) for v, memo in views if v.get("turn") == v["seat"]]
    searching = [v for v, _ in views if plugin.expert_searches(v)]
    assert searching and len(searching) < len(views)       # both kinds of moment came

    def no_search(*args, **kw):
        raise AssertionError("searched where expert_searches said it does not")

    monkeypatch.setattr(SEARCH[game], "expert_values", no_search)
    mind = Mind("expert", rng=random.Random(1))
    mind.seated(plugin)
    for view, memo in views:
        assert mind.searches(plugin, view) == plugin.expert_searches(view)
        if not plugin.expert_searches(view):
            plugin.expert_candidates(view, random.Random(2), memo)      # answered without a search
    assert not Mind("hard").searches(plugin, searching[0])              # only an expert searches
