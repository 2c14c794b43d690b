"""``packed_snapshot`` (Go Fish Wildcard's state hash at less cost:
protocol/games/go_fish_wildcard_fast.py) is ``packb(snapshot(state))`` byte for byte, for
every state random games pass through, and for asks that hold a bool where a seat goes
(equal to 1 or 0 as a key, packed otherwise)."""

from __future__ import annotations

import random

from wildtable.protocol.codec import packb
from wildtable.protocol.engine import ChanceOutcome, TableConfig, state_hash
from wildtable.protocol.games import go_fish_wildcard as gfw
from wildtable.selfplay import play


def test_packed_snapshot_is_the_packed_snapshot_of_every_state():
    rng = random.Random(7)
    states = 0
    for _ in range(30):
        seen = []
        play(gfw, rng.randint(gfw.MIN_PLAYERS, gfw.MAX_PLAYERS), {}, rng=rng,
             on_step=lambda before, after, *_: seen.append(after))
        for st in seen:
            assert gfw.packed_snapshot(st) == packb(gfw.snapshot(st))
        states += len(seen)
    assert states > 1000
    # the lengths where msgpack's array header changes: 15/16 asks, 65,535/65,536
    for n in (15, 16, 65_535, 65_536):
        long = seen[-1]._replace(history=(seen[-1].history * (n // len(seen[-1].history) + 1))[:n])
        assert gfw.packed_snapshot(long) == packb(gfw.snapshot(long))


def test_a_bool_seat_in_an_ask_packs_as_a_bool():
    st = gfw.new_table(TableConfig(gfw.NAME, 3))
    st = gfw.apply(st, None, ChanceOutcome("dealer", (0, 1, 2)))[0]
    st = gfw.apply(st, None, ChanceOutcome("deal", tuple(range(gfw.DECK_SIZE))))[0]
    as_int = st._replace(history=((1, 0, 4, 0, 1), (0, 1, 4, 2, 0)))
    as_bool = st._replace(history=((True, False, 4, 0, 1), (False, True, 4, 2, 0)))
    # the int asks first: they are cached, and must not stand in for the bool ones
    assert gfw.packed_snapshot(as_int) == packb(gfw.snapshot(as_int))
    assert gfw.packed_snapshot(as_bool) == packb(gfw.snapshot(as_bool))
    assert state_hash(gfw, as_int) != state_hash(gfw, as_bool)


def test_every_ask_the_engine_records_is_its_ask_entry():
    """``packed_snapshot`` finds an ask's packed map by the object: every ask that apply,
    advance and replay's runs record is ASK_ENTRY's own (an equal new tuple would be
    packed again, one ask at a time); and a state whose asks are equal copies packs the
    same bytes."""
    from wildtable.protocol.logfmt import encode_record, read_log
    from wildtable.protocol.replay import fold, initial_state

    def entries_of(state):
        return [a is gfw.ASK_ENTRY[a[0]][a[1]][a[2]][5 if a[4] else a[3]] for a in state.history]

    rng = random.Random(3)
    asks = 0
    for _ in range(12):
        seen = []
        p = play(gfw, rng.randint(gfw.MIN_PLAYERS, gfw.MAX_PLAYERS), {}, rng=rng,
                 on_step=lambda before, after, action, seat, *_: seen.append((before, after, action, seat)))
        for before, after, action, seat in seen:
            assert all(entries_of(after))                                       # apply
            assert all(entries_of(gfw.advance(before, seat, action)))           # advance
        contents = read_log(encode_record(p.header) + b"".join(encode_record(r) for r in p.records))
        _, start = initial_state(contents.header)
        final = fold(gfw, start, contents.decoded).state                       # runs
        assert final == seen[-1][1] and all(entries_of(final))
        copied = final._replace(history=tuple(tuple(list(a)) for a in final.history))
        assert not any(entries_of(copied))
        assert gfw.packed_snapshot(copied) == gfw.packed_snapshot(final) == packb(gfw.snapshot(final))
        asks += len(final.history)
    assert asks > 300


def test_a_bool_in_a_set_packs_as_a_bool():
    """A set's map is packed from a table of its head and its cards' bytes, for the int
    seats and card ids the engine places; a bool where a seat or a card goes (equal to 1
    or 0, packed otherwise) packs as snapshot packs it."""
    st = gfw.new_table(TableConfig(gfw.NAME, 3))
    st = gfw.apply(st, None, ChanceOutcome("dealer", (0, 1, 2)))[0]
    st = gfw.apply(st, None, ChanceOutcome("deal", tuple(range(gfw.DECK_SIZE))))[0]
    for sets in (((1, (0, 1, 2)), (0, (4, 5, 6))), ((True, (0, 1, 2)), (0, (4, 5, 6))),
                 ((1, (0, 1, 2)), (0, (True, 5, 6))), ((2, (48, 49, 51)),) * 17, ((2, (48, 49, 51)),) * 18):
        made = st._replace(sets=sets)
        assert gfw.packed_snapshot(made) == packb(gfw.snapshot(made))
