"""Helpers for tests of the full-screen UI (Textual's headless ``run_test``)."""

from __future__ import annotations

import asyncio
import io
import queue
import threading
from contextlib import contextmanager
from typing import Any, Awaitable, Callable

import trio
from rich.console import Console
from textual.widgets import Static

from serverkit import running_server


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


@contextmanager
def server_in_thread(config, setup: Callable[[Any, str], Awaitable[Any]], **runs_on):
    """A real server (serverkit.running_server: ``config`` a ServerConfig or a data dir) on
    127.0.0.1 in a Trio run of its own on another thread (the UI's
    asyncio loop keeps this one), for as long as the with-block lasts. ``await setup(server,
    url)`` runs there first (to open tables, seat players: its connections stay open);
    yield (url, what setup returned)."""
    got: queue.Queue = queue.Queue()

    async def main() -> None:
        stop = trio.Event()
        with trio.fail_after(120):
            async with running_server(config, **runs_on) as (server, url):
                got.put((trio.lowlevel.current_trio_token(), stop, url, await setup(server, url)))
                await stop.wait()

    def run() -> None:
        try:
            trio.run(main)
        except BaseException as e:          # reaches the test through the queue
            got.put(e)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    first = got.get(timeout=30)
    if isinstance(first, BaseException):
        raise first
    token, stop, url, value = first
    try:
        yield url, value
    finally:
        try:
            trio.from_thread.run_sync(stop.set, trio_token=token)
        except trio.RunFinishedError:
            pass                            # it failed meanwhile: its error is in the queue
        thread.join(15)
        assert not thread.is_alive(), "the server thread did not stop"
    if not got.empty():
        raise got.get()
