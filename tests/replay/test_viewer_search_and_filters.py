"""The replay viewer finds things (issue #27): / searches forward, ? back, n repeats the
search the same way and N the other, a search not found says so; f filters by seat, by
kind, refused only (the arrows then step through what passes), and an empty f clears it;
a damaged log's viewer says so."""

from __future__ import annotations

import asyncio

from textual.widgets import Static

from wildtable.headless.timeline import Timeline
from wildtable.client.viewer import ViewerApp
from wildtable.protocol.logfmt import ChanceRecorded, IntentRejected, read_log, read_prefix

from logs import selfplay_log

DATA = selfplay_log(seats=3, seed=7, settings={"rounds": 3}, refused=3)
TIMELINE = Timeline(read_log(DATA))
CHANCES = [i for i, s in enumerate(TIMELINE.steps) if type(s.record) is ChanceRecorded]
REFUSED = [i for i, s in enumerate(TIMELINE.steps) if type(s.record) is IntentRejected]


def _text(app, widget: str) -> str:
    return str(app.query_one(widget, Static).content)


def _drive(scenario, timeline=TIMELINE, **kw):
    async def run():
        app = ViewerApp(timeline, "game.wlog", **kw)
        async with app.run_test(size=(100, 30)) as pilot:
            await scenario(app, pilot)
            await pilot.press("q")
    asyncio.run(run())


def test_search_forward_back_and_again():
    async def scenario(app, pilot):
        await pilot.press("slash", *"shuffle of", "enter")
        assert app.index == CHANCES[1], (app.index, CHANCES)          # CHANCES[0] draws the first dealer
        await pilot.press("n")
        assert app.index == CHANCES[2]
        await pilot.press("N")
        assert app.index == CHANCES[1]
        await pilot.press("end")
        await pilot.press("question_mark", *"SHUFFLE", "enter")
        assert app.index == CHANCES[-1]
        await pilot.press("n")                      # n goes the way of the last search: back
        assert app.index == CHANCES[-2]
        await pilot.press("slash", *"no such words", "enter")
        assert app.index == CHANCES[-2] and "'no such words' is not found after" in _text(app, "#note")
    _drive(scenario)


def test_filters_by_refused_seat_and_kind_and_clearing():
    async def scenario(app, pilot):
        await pilot.press("f", *"refused", "enter")
        assert app.index == REFUSED[0] and app.shown == REFUSED
        assert "filter: refused only (3)" in _text(app, "#top")
        await pilot.press("right")
        assert app.index == REFUSED[1]
        await pilot.press("right", "right")
        assert app.index == REFUSED[2] and "this is the last record the filter shows" in _text(app, "#note")
        seat = TIMELINE.steps[REFUSED[1]].record.seat
        await pilot.press("f", *f"seat {seat}", "enter")
        assert all(getattr(TIMELINE.steps[i].record, "seat", None) == seat for i in app.shown)
        assert "filter: seat" in _text(app, "#top")
        await pilot.press("f", *"kind chance", "enter")
        assert app.shown == CHANCES
        await pilot.press("home", "right")
        assert app.index == CHANCES[1]
        await pilot.press("f", *"seat 9", "enter")
        assert "seat wants 0..2" in _text(app, "#note") and app.shown == CHANCES
        await pilot.press("f", "enter")
        assert app.filter.empty and len(app.shown) == len(TIMELINE) and "filter" not in _text(app, "#top")
    _drive(scenario)


def test_a_damaged_logs_viewer_says_where_it_ends():
    bad = bytearray(DATA)
    bad[read_log(DATA).offsets[100] + 9] ^= 0xFF
    contents = read_prefix(bytes(bad))
    timeline = Timeline(contents)

    async def scenario(app, pilot):
        assert "DAMAGED" in _text(app, "#top") and "byte offset" in _text(app, "#note")
        await pilot.press("end")
        assert app.index == 100
    _drive(scenario, timeline, damage=f"DAMAGED: {contents.damage}")
