"""Run Wild's ``public_view_from`` (issue #25): the public view built from the last one is
``public_view`` of the state, of the same types all the way down, after every step of
random games at every table size, chained as the server chains it (each view built from
the one before); it shares with the view before it every part the step did not change (the
server's diff then skips them by identity), and building later views never changes an
earlier one (the values are shared, so none may be written)."""

from __future__ import annotations

import copy
import random

from wildtable.protocol.codec import packb
from wildtable.protocol.games import run_wild as rw
from wildtable.selfplay import play


def _states(seats: int, seed: int) -> list:
    out: list = []
    play(rw, seats, {}, rng=random.Random(seed), on_step=lambda before, after, *_: out.append(after))
    return out


def test_each_view_built_from_the_last_is_the_public_view():
    steps = shared_melds = 0
    for seats in range(rw.MIN_PLAYERS, rw.MAX_PLAYERS + 1):
        for seed in range(3):
            states = _states(seats, seed)
            view = rw.public_view(states[0])
            kept = [(states[0], view, copy.deepcopy(view))]
            for before, state in zip(states, states[1:]):
                view = rw.public_view_from(state, before, view)
                # packb tells 1 from True and a list from a tuple's packing order
                assert packb(view) == packb(rw.public_view(state)), (seats, seed)
                if state.melds is before.melds and state.deal is before.deal:
                    assert view["melds"] is kept[-1][1]["melds"]
                    shared_melds += 1
                kept.append((state, view, copy.deepcopy(view)))
                steps += 1
            for state, built, frozen in kept:
                assert built == frozen == rw.public_view(state)
    assert steps > 2000 and shared_melds > 500


def test_a_view_from_an_unrelated_state_is_still_right():
    a, b = _states(4, 11), _states(3, 12)
    for x, y in [(a[5], b[40]), (b[40], a[5]), (a[3], a[-1]), (a[-1], a[3])]:
        assert packb(rw.public_view_from(y, x, rw.public_view(x))) == packb(rw.public_view(y))
