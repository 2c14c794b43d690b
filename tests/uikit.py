"""Helpers for tests of the full-screen UI (Textual's headless ``run_test``)."""

from __future__ import annotations

import asyncio
import io
from typing import Callable

from rich.console import Console
from textual.widgets import Static


def screen_text(app) -> str:
    """What the terminal shows now, as plain text (no colour)."""
    width, height = app.size
    console = Console(width=width, height=height, file=io.StringIO(), record=True, color_system=None,
                      legacy_windows=False)
    console.print(app.screen._compositor.render_update(full=True, screen_stack=app._background_screens))
    return console.export_text()


def text_of(app, selector: str) -> str:
    """The text of one Static widget."""
    return str(app.query_one(selector, Static).content)


async def until(pilot, what: str, pred: Callable[[], bool], timeout: float = 10.0) -> None:
    """Let the app run (no key pressed) until ``pred()``; fail naming ``what`` and showing the screen."""
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not pred():
        if loop.time() > end:
            raise AssertionError(f"timed out waiting for {what}; the screen shows:\n{screen_text(pilot.app)}")
        await pilot.pause(0.02)
