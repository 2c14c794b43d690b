"""Commands typed (or pasted) faster than the full-screen UI handles them stay apart: each
Enter sends the line typed before it, and what is typed after it starts the next command.
Found: the command box was emptied only once the app handled the first Enter, after the
next keys had joined the old line, so `show` twice quickly became one `showshow`
(refused) and a `show` was lost."""

from __future__ import annotations

import asyncio

from textual import events
from textual.widgets import RichLog

from wildtable.client.session import Launch
from wildtable.client.tui import PlayApp

from uikit import text_of, until


def test_two_commands_typed_ahead_are_two_commands():
    async def scenario():
        app = PlayApp(Launch(name="ann", bots=1, bot_delay=60, settings={"rounds": 1}))
        async with app.run_test(size=(80, 24)) as pilot:
            await until(pilot, "the table", lambda: "Your hand (8)" in text_of(app, "#board-bottom"))
            box = app.query_one("#cmd")
            # as a terminal sends them: all the keys before the app has handled the first Enter
            for key in ["z", "z", "1", "enter", "z", "z", "2", "enter"]:
                app.post_message(events.Key(key, "\r" if key == "enter" else key))
            log = app.query_one("#events", RichLog)
            told = lambda: "\n".join(line.text for line in log.lines)       # noqa: E731
            await until(pilot, "the refusals", lambda: "refused: zz2" in told() or "refused: zz1zz2" in told())
            assert "refused: zz1 - " in told() and "refused: zz2 - " in told(), told()
            assert box.value == ""
            await pilot.press("ctrl+q")
            await pilot.pause()

    asyncio.run(scenario())
