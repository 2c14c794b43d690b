"""The web replay viewer's all-seeing view shows the pile cards as the terminal viewer
does (issue #27: it showed the seats' views, a pile's count only): every game's answer
carries the terminal's pile lines, each named by its seat where it is a seat's."""

from __future__ import annotations

import pytest

from wildtable.headless.timeline import ALL, SPECTATOR
from wildtable.server.replay_fold import ReplayLog

from logs import selfplay_log

GAMES = {"run-wild": ({"rounds": 1}, "seat 0: pile ("), "go-wild": ({"target": 10}, "deck ("),
         "wild-shots": ({}, "Snake Oil, top first"), "go-fish-wildcard": ({}, "pile (")}


@pytest.mark.parametrize("game", sorted(GAMES))
def test_the_all_seeing_answer_has_every_pile_in_order(game):
    settings, want = GAMES[game]
    log = ReplayLog("t1", selfplay_log(game, seats=3, seed=2, settings=settings), finished_only=False)
    step = 12
    piles = log.answer(step, ALL, False)["state"]["piles"]
    text = log.timeline.state_lines(step, ALL)
    assert any(x.startswith(want) for x in piles), piles
    for line in piles:          # each is the terminal viewer's line, cards and all
        assert any(t.strip() == line.split(": ", 1)[-1] or t.strip() == line for t in text), line
    # a seat's or a spectator's view shows no pile's cards
    assert "piles" not in log.answer(step, 0, False)["state"]
    assert "piles" not in log.answer(step, SPECTATOR, False)["state"]
