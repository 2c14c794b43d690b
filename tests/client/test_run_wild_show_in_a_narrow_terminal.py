"""The full-screen Run Wild table in a terminal narrower than 64 columns (private server
in the process, headless): the events pane steps aside there, and `show` used to write
the table into that hidden pane, so the player saw nothing at all. Now it opens the
table as text in a window (Esc closes it); in a wide terminal it still goes to the events."""

from __future__ import annotations

import asyncio

from textual.widgets import RichLog

from wildtable.client.session import Launch
from wildtable.client.tui import HelpScreen, PlayApp

from uikit import screen_text, text_of, until


def test_show_in_a_narrow_terminal_opens_the_table_in_a_window():
    async def scenario():
        # the bot waits long enough that nothing moves while the screen is read
        app = PlayApp(Launch(name="ann", bots=1, bot_delay=30, settings={"rounds": 1}))
        async with app.run_test(size=(40, 12)) as pilot:
            await until(pilot, "the deal", lambda: "Your hand (8)" in text_of(app, "#board-bottom"), 8)
            assert not app.query_one("#events", RichLog).display
            await pilot.press(*"show", "enter")
            await until(pilot, "the table window", lambda: isinstance(app.screen, HelpScreen), 5)
            await pilot.pause(0.1)
            screen = screen_text(app)
            assert "The table - Esc closes" in screen and "Run Wild - round 1" in screen, screen
            await pilot.press("end")                # the window scrolls to the rest of the table
            await pilot.pause(0.1)
            assert "your hand (8)" in screen_text(app), screen_text(app)
            await pilot.press("escape")
            await until(pilot, "the table again", lambda: not isinstance(app.screen, HelpScreen), 5)
            # wide: the lines go to the events pane, no window
            await pilot.resize_terminal(100, 30)
            await pilot.pause(0.1)
            await pilot.press(*"show", "enter")
            log = app.query_one("#events", RichLog)
            await until(pilot, "the table in the events",
                        lambda: any("your hand (8)" in line.text for line in log.lines), 5)
            assert not isinstance(app.screen, HelpScreen)
            await pilot.press("ctrl+q")

    asyncio.run(asyncio.wait_for(scenario(), 30))
