"""The cyclic collector's schedule in `wildtable serve` (server/collector.py, issue #25):
no young passes in play; a full pass once the heap has grown, bounded in objects and
bytes; and what fair order keeps per update and per event is nothing it tracks."""

from __future__ import annotations

import gc

import trio
import trio.testing

from wildtable.server import collector
from wildtable.server.collector import MIN_BYTES, MIN_OBJECTS, Baseline, due
from wildtable.server.fairorder import WRITES_KEPT, Touched, WriteTimes


def test_a_full_pass_waits_for_the_heap_to_grow_by_what_was_alive():
    small = Baseline(live=10_000, rss=50 << 20)
    assert not due(MIN_OBJECTS, 50 << 20, small)           # a small server: the floor holds
    assert due(MIN_OBJECTS + 1, 50 << 20, small)
    big = Baseline(live=3 * MIN_OBJECTS, rss=50 << 20)
    assert not due(2 * MIN_OBJECTS, 50 << 20, big)         # allocated less than is alive
    assert due(3 * MIN_OBJECTS + 1, 50 << 20, big)


def test_a_full_pass_when_the_resident_set_grew_whatever_the_count():
    # cycles holding buffers (bytes are not counted as objects) are bounded in bytes too
    base = Baseline(live=10_000, rss=50 << 20)
    assert not due(0, (50 << 20) + MIN_BYTES, base)
    assert due(0, (50 << 20) + MIN_BYTES + 1, base)
    large = Baseline(live=10_000, rss=2 * MIN_BYTES)
    assert not due(0, 3 * MIN_BYTES, large)                # grew by half: not yet
    assert due(0, 4 * MIN_BYTES + 1, large)                # doubled
    assert not due(0, None, base) and not due(0, 10 * MIN_BYTES, Baseline(0, None))  # no RSS known


def test_the_loop_collects_when_due_and_then_measures_from_the_new_baseline():
    counts = iter([10, MIN_OBJECTS + 1, 5, MIN_OBJECTS + 1, 2 * MIN_OBJECTS + 1])
    passes: list[int] = []

    def collect():
        passes.append(len(passes))
        return Baseline(live=2 * MIN_OBJECTS, rss=None), 0, 0.0

    async def main():
        with trio.move_on_after(5.5):       # five looks, a second apart (the mock clock)
            await collector.run(Baseline(0, None), trio.sleep, count=lambda: next(counts), rss=lambda: None,
                                collect=collect)
    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
    # the second look: over the floor; the fourth: over the floor but not over the 2M alive
    # after the first pass; the fifth: over that
    assert passes == [0, 1]


def test_start_turns_the_automatic_passes_off_and_freezes_what_is_alive():
    was = gc.isenabled()
    try:
        base = collector.start()
        assert not gc.isenabled()
        assert gc.get_freeze_count() > 0
        assert base.live == 0
    finally:
        gc.unfreeze()
        if was:
            gc.enable()


def _tracked(*containers) -> list:
    return [x for c in containers for x in c if gc.is_tracked(x)]


def test_write_times_keep_no_object_the_collector_tracks():
    """A (seq, at) pair per seat per update, kept for WRITES_KEPT updates, was most of the
    young generation at 4,000 players: every pass walked them all."""
    w = WriteTimes()
    for seq in range(1000, 1000 + 2 * WRITES_KEPT):
        w.wrote(seq, seq / 10)
    assert w.seen_at(1000 + 2 * WRITES_KEPT - 3, 1e9) == (1000 + 2 * WRITES_KEPT - 3) / 10
    assert _tracked(*(getattr(w, name) for name in WriteTimes.__slots__)) == []


def test_touched_names_are_not_objects_the_collector_tracks():
    t = Touched()
    t.changed(4, [{"event": "meld_played", "meld": 2, "cards": [4, 16, 28, 40]}])
    t.changed(6, [{"event": "card_added", "meld": 2, "card": 41}])
    assert t.last({"kind": "take", "meld": 2, "card": 41}) == 6
    assert t.last({"kind": "add", "meld": 2, "card": 5}) == 4
    assert t.last({"kind": "take", "meld": 2, "card": 1 << 40}) is None      # no engine names it
    assert t.last({"kind": "take", "meld": -1, "card": 4}) is None
    assert _tracked(t._since.keys()) == []
