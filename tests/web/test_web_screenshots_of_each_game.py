"""The screenshots of docs/PLAYING.md ("In a browser"): each game's table, mid-game against
a bot, at the desktop and the phone size, taken by the suite. With WILDTABLE_DOC_SHOTS=DIR
they are written to DIR (`WILDTABLE_DOC_SHOTS=docs/img .venv/bin/pytest
tests/web/test_web_screenshots_of_each_game.py` refreshes the committed ones); otherwise
to the test's tmp_path, so a run of the suite never changes the checkout. Either way each
is checked: a PNG of the viewport's width, of some size (a blank or broken page is a few
kB), taken while the felt, the shared cards and a hand of faces are on screen."""

from __future__ import annotations

import os
import struct
import time
from pathlib import Path

import pytest

from wildtable.headless.games.run_wild import find_melds

from webkit import DESKTOP, PHONE

WAIT_TURN = """() => { const at = window.wildtable.at;
    return at.over !== null || (at.view.turn === at.seat && window.wildtable.intents.size === 0); }"""
SETTLED = "() => window.wildtable.intents.size === 0 && document.getAnimations().length === 0"


def go_wild_move(p, warmed_up: bool) -> None:
    """Our largest colour set; once warmed up, one card of our smallest colour, a lead the
    bot beats with any pair (the rulebook: the largest set wins), so that the bot leads the
    next trick and our turn shows it. (Always our largest set, we won trick after trick,
    led every one, never saw a trick with a card in it, and a CI run reached the target.)"""
    hand = p.state()["view"]["hand"]
    groups = [[c for c in hand if min(c // 18, 5) == k] for k in range(6)]
    colours = [k for k in range(5) if groups[k]]
    if not colours:
        p.page.click('[data-key="all-5"]')          # wilds only: slough them
    elif warmed_up:
        smallest = min(colours, key=lambda k: len(groups[k]))
        p.page.click(f'.hand [data-card="{groups[smallest][0]}"]')
    else:
        p.page.click(f'[data-key="all-{max(colours, key=lambda k: len(groups[k]))}"]')
    p.click_and_wait('[data-action="play"]')


def wild_shots_move(p, warmed_up: bool) -> None:
    """A playable card; once warmed up, the lowest (a card's value is its id % 10 + 1, and
    the highest of the led suit or trump wins): the bot takes the trick and leads the next,
    which our turn then shows (as Go Wild!'s move, above)."""
    if not warmed_up:
        p.click_and_wait('.hand [data-playable="true"]')
        return
    cards = [int(c) for c in p.page.eval_on_selector_all(
        '.hand [data-playable="true"]', "(els) => els.map((e) => e.dataset.card)")]
    p.click_and_wait(f'.hand [data-card="{min(cards, key=lambda c: (c % 10, c))}"]')


def go_fish_move(p, warmed_up: bool) -> None:
    step = p.state()["view"]["step"]
    p.click_and_wait('[data-action="end_turn"]' if step == "bonus" else '[data-action="ask"]')


def turn_based(move, moves: int, ready):
    """Play ``moves`` turns, then on to our next turn that ``ready(view)`` likes (a trick
    with a card in it): a table as it looks mid-game."""
    def play(p) -> None:
        page = p.page
        done, end = 0, time.monotonic() + 20
        while time.monotonic() < end:
            page.wait_for_function(WAIT_TURN, timeout=15_000)
            st = p.state()
            assert st["over"] is None, "the game ended before its picture"
            if done >= moves and ready(st["view"]):
                return
            move(p, done >= moves)
            done += 1
        raise AssertionError("no mid-game table in time")
    return play


def run_wild(p) -> None:
    """Ready, then melds and draws until the table holds two melds or more."""
    page = p.page
    page.wait_for_function("() => window.wildtable.at.view.phase === 'ready'", timeout=10_000)
    p.click_and_wait('[data-action="ready"]')
    page.wait_for_function("() => window.wildtable.at.view.phase === 'playing'", timeout=10_000)
    end = time.monotonic() + 20
    while len(p.state()["view"].get("melds") or []) < 2:
        assert time.monotonic() < end, "no melds in time"
        view = p.state()["view"]
        hand = view.get("hand") or []
        found = find_melds([c for c in hand if c < 69], view["settings"])
        if found and len(found[0][0]) < len(hand):      # a meld that leaves a card: not out yet
            page.keyboard.press("Escape")
            for c in found[0][0]:
                p.try_click(f'.hand [data-card="{c}"]')
            p.try_click('[data-action="meld"]', then_wait=True)
        elif not p.try_click('[data-action="draw"]', then_wait=True):
            page.wait_for_function(f"() => window.wildtable.at.view.seq !== {p.state()['seq']}", timeout=5_000)
    page.keyboard.press("Escape")
    # two cards selected, as a player about to meld
    for c in sorted(p.state()["view"]["hand"])[:2]:
        p.try_click(f'.hand [data-card="{c}"]')


GAMES = {
    "run-wild": ({"rounds": 1, "hand_size": 7}, None, run_wild),      # against webkit.passive_player
    # the largest target: no game ends before its picture
    "go-wild": ({"target": 1000, "turn_timer": 0}, 0.02, turn_based(go_wild_move, 3, lambda v: bool(v.get("trick")))),
    "wild-shots": ({"turn_timer": 0}, 0.02, turn_based(wild_shots_move, 2, lambda v: bool(v.get("trick")))),
    "go-fish-wildcard": ({"turn_timer": 0}, 0.02, turn_based(go_fish_move, 6, lambda v: v.get("step") == "ask")),
}


def png_size(path: Path) -> tuple[int, int]:
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is no PNG"
    return struct.unpack(">II", head[16:24])


@pytest.mark.parametrize("game", sorted(GAMES))
def test_a_picture_of_each_game_on_a_desktop_and_a_phone(players, web_server, tmp_path, game):
    settings, delay, play = GAMES[game]
    where = Path(os.environ.get("WILDTABLE_DOC_SHOTS") or tmp_path)
    where.mkdir(parents=True, exist_ok=True)
    p = players(game, viewport=DESKTOP).open()
    p.enter("ann")
    table = p.create(game, 2, **settings)
    if game == "run-wild":
        # an opponent that never goes out: a bot did, once, before the picture (a loaded
        # CI run: the hand empty, the round over)
        web_server.passive(table, 1)
    else:
        web_server.bots(table, 1, delay=delay)
    play(p)
    page = p.page
    for size, viewport in (("desktop", DESKTOP), ("phone", PHONE)):
        page.set_viewport_size(viewport)
        page.evaluate("() => window.scrollTo(0, 0)")
        page.wait_for_function(SETTLED, timeout=5_000)
        assert page.locator(".felt .players > li").count() == 2
        assert page.locator(".hand .card").count() >= 1
        assert page.locator(".felt .mid .card").count() >= 1 or game == "go-fish-wildcard"
        path = where / f"{game}-{size}.png"
        # two frames painted at the new size before the picture (one taken sooner once
        # showed the phone's hand cut off half-way)
        page.evaluate("() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))")
        page.screenshot(path=str(path), full_page=True)
        width, height = png_size(path)
        assert width == viewport["width"] and height >= viewport["height"] // 2, (width, height)
        assert path.stat().st_size > 30_000, f"{path}: {path.stat().st_size} bytes, a blank page?"
