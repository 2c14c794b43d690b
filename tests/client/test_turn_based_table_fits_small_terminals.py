"""The full-screen table of the turn-based games (private server in the process, headless):

- in a small terminal (40x12) the hand stays on screen: the events pane steps aside below
  64 columns and the hand is kept at the bottom of the table, the players' rows giving way;
- the usage hint under the command line is shown for a command's short words too
  (`p 3 ` in Go Wild!, `a ` in Go Fish Wildcard), not only for the full word.
"""

from __future__ import annotations

import asyncio

import pytest
from textual.widgets import RichLog

from wildtable.client.session import Launch
from wildtable.client.tui import PlayApp

from uikit import screen_text, text_of, until


def _app(game: str, **settings) -> PlayApp:
    # the bots wait long enough that nothing moves while the screen is read
    return PlayApp(Launch(name="ann", game=game, bots=1, bot_delay=30, settings={"turn_timer": 0, **settings}))


@pytest.mark.parametrize("game, settings, hand", [
    ("go-wild", {"first_player": 0}, "Your hand (12)"),
    ("wild-shots", {"first_player": 0}, "Your hand ("),
    ("go-fish-wildcard", {"dealer": 1}, "Your hand (4)"),
])
def test_the_hand_stays_on_screen_in_a_small_terminal(game, settings, hand):
    async def scenario():
        app = _app(game, **settings)
        async with app.run_test(size=(40, 12)) as pilot:
            await until(pilot, "the hand", lambda: hand in text_of(app, "#board-bottom"), 8)
            await pilot.pause(0.1)
            screen = screen_text(app)
            assert hand in screen, screen
            assert not app.query_one("#events", RichLog).display
            await pilot.resize_terminal(100, 30)
            await pilot.pause(0.1)
            assert app.query_one("#events", RichLog).display          # back when there is room
            assert hand in screen_text(app)
            assert text_of(app, "#top").rstrip().endswith("F1 help  ^Q quit")   # drawn for the new width
            await pilot.press("ctrl+q")

    asyncio.run(asyncio.wait_for(scenario(), 30))


@pytest.mark.parametrize("game, settings, typed, usage", [
    ("go-wild", {"first_player": 0}, "p 3 ", "play N COLOUR [N wild]"),
    ("go-wild", {"first_player": 0}, "s ", "slough [N]"),
    ("wild-shots", {"first_player": 0}, "l ", "play CARD"),
    ("go-fish-wildcard", {"dealer": 1}, "a ", "ask PLAYER RANK"),
    ("go-fish-wildcard", {"dealer": 1}, "set ", "place CARD CARD CARD"),
])
def test_the_usage_hint_follows_short_command_words(game, settings, typed, usage):
    async def scenario():
        app = _app(game, **settings)
        async with app.run_test(size=(100, 30)) as pilot:
            await until(pilot, "the hand", lambda: "Your hand" in text_of(app, "#board-bottom"), 8)
            await pilot.press(*typed)
            await until(pilot, "the usage hint", lambda: text_of(app, "#hints").startswith(usage), 3)
            await pilot.press("ctrl+q")

    asyncio.run(asyncio.wait_for(scenario(), 30))
