"""Go Wild!, Wild Shots and Go Fish Wildcard, each played to the end against a bot by
clicking in one browser page: whose turn it is and the turn timer's countdown are shown,
and the player's actions are buttons."""

from __future__ import annotations

import re
import time

import pytest

from webkit import DESKTOP

WAIT_TURN = """() => { const at = window.wildtable.at;
    return at.over !== null || (at.view.turn === at.seat && window.wildtable.intents.size === 0); }"""


def go_wild_move(p) -> None:
    view = p.state()["view"]
    hand = view["hand"]
    groups = [[c for c in hand if min(c // 18, 5) == k] for k in range(6)]
    best = max(range(5), key=lambda k: len(groups[k]))
    k = best if groups[best] else 5
    p.page.click(f'[data-key="all-{k}"]')
    p.click_and_wait('[data-action="play"]')


def wild_shots_move(p) -> None:
    p.click_and_wait('.hand [data-playable="true"]')


def go_fish_move(p) -> None:
    view = p.state()["view"]
    if view["step"] == "bonus":
        p.click_and_wait('[data-action="end_turn"]')
    else:
        p.click_and_wait('[data-action="ask"]')


GAMES = {
    "go-wild": (go_wild_move, {"target": 4}),
    # two rounds (setting rounds): a new deal between them and the end; four took 18 s
    "wild-shots": (wild_shots_move, {"rounds": 2}),
    "go-fish-wildcard": (go_fish_move, {}),
}


@pytest.mark.parametrize("game", sorted(GAMES))
def test_a_turn_based_game_against_a_bot_played_by_clicking(players, web_server, game):
    move, settings = GAMES[game]
    p = players(game, viewport=DESKTOP).open()
    p.enter("ann")
    table = p.create(game, 2, turn_timer=30, **settings)
    web_server.bots(table, 1, delay=0.02)
    page = p.page
    end = time.monotonic() + 40
    moves = 0
    countdown_seen = False
    while True:
        page.wait_for_function(WAIT_TURN, timeout=15_000)
        st = p.state()
        if st["over"] is not None:
            break
        assert time.monotonic() < end, f"{game} did not end in time after {moves} moves"
        if not countdown_seen:
            assert page.inner_text("#turn").startswith("Your turn")
            assert re.fullmatch(r"\d+ s", page.inner_text("#countdown")), page.inner_text("#turn")
            countdown_seen = True
        move(p)
        moves += 1
        r = p.state()["refusal"]
        assert r is None, r
    page.wait_for_selector("#over")
    assert "Game over" in page.inner_text("#over")
    assert p.state()["view"]["winners"]
    assert moves > 0

    # the words a player reads (issue #26): no internal phase or field names, events
    # numbered in the table's order (not 1-12 again), round scores by name
    words = page.inner_text("#table")
    assert not re.search(r"\b[a-z]+_[a-z_]+\b", words), words
    assert not re.search(r"\bseat \d", page.inner_text("#status")), page.inner_text("#status")
    total = page.evaluate("() => window.wildtable.at.eventsCut + window.wildtable.at.events.length")
    assert page.evaluate("() => document.querySelector('#events li').value") == total > 12
    if game == "wild-shots":
        assert re.search(r"penalties (you|ann) \d+, bot0 \d+", page.inner_text("#events")), page.inner_text("#events")
    # a finished game offers no Rejoin in the lobby: watch it, or its replay
    page.click("#leave")
    row = f'tr[data-table="{table}"]'
    page.wait_for_selector(f'{row}[data-status="over"] [data-action="replay"]', timeout=10_000)
    assert page.locator(f'{row} [data-action="rejoin"]').count() == 0
    assert "finished" in page.inner_text(row)
