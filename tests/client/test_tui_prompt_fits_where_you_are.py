"""The full-screen client's command line says what can be typed where (issue #27: at a
table it still offered the lobby's `help, list, create, join...`)."""

from __future__ import annotations

import asyncio

from wildtable.client.session import Launch
from wildtable.client.tui import LOBBY_PROMPT, TABLE_PROMPT, CommandInput, PlayApp

from uikit import text_of, until


def test_the_prompt_at_a_table_is_the_tables():
    async def scenario():
        app = PlayApp(Launch(name="ann", bots=1, bot_delay=0.5, settings={"rounds": 1}))
        async with app.run_test(size=(80, 24)) as pilot:
            cmd = app.query_one("#cmd", CommandInput)
            await until(pilot, "the table", lambda: "Your hand (8)" in text_of(app, "#board-bottom"))
            assert cmd.placeholder == TABLE_PROMPT and "leave" in TABLE_PROMPT
            assert LOBBY_PROMPT != TABLE_PROMPT
            await pilot.press("ctrl+q")
            await pilot.pause()
    asyncio.run(scenario())
