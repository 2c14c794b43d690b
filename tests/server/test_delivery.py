"""Each seat's private part of an update is encoded again only when it changed (issue #25,
server/delivery.py), and the frames stay byte-identical to encoding each view whole."""

from __future__ import annotations

import random

import pytest

from wildtable.protocol.engine import games
from wildtable.protocol.messages import SharedUpdate, Update, encode
from wildtable.selfplay import play
from wildtable.server.delivery import PrivateParts

SEATS = 4


def _steps(game, n: int) -> list:
    out: list = []
    rng = random.Random(7)
    while len(out) < n:
        play(game, SEATS, {}, rng=rng, on_step=lambda before, after, action, seat, req, events:
             out.append((after, tuple(events))))
    return out


@pytest.mark.parametrize("name", ["run-wild", "go-wild", "go-fish-wildcard", "wild-shots"])
def test_frames_equal_whole_views_and_unchanged_seats_are_not_encoded_again(name):
    game = games()[name]
    assert SEATS in range(game.MIN_PLAYERS, game.MAX_PLAYERS + 1)
    parts = PrivateParts(game)
    steps = _steps(game, 600)
    for seq, (state, events) in enumerate(steps, 1):
        shared = SharedUpdate(seq, events, game.public_view(state))
        for seat in (*range(SEATS), None):
            frame = shared.frame_encoded(parts.part(state, seat))
            assert frame == encode(Update(seq, events, game.view(state, seat))), (seq, seat)
    asked = len(steps) * (SEATS + 1)
    if hasattr(game, "private_key"):
        # equal keys, equal private views, over every step (not only one after another)
        seen: dict = {}
        for state, _ in steps:
            for seat in (*range(SEATS), None):
                private = game.private_view(state, seat)
                assert seen.setdefault(game.private_key(state, seat), private) == private
        # one seat acts at a time: most private parts are the last one again
        assert parts.built < asked / 2, (parts.built, asked)
    else:                       # (Wild Shots: what a seat may play changes with every card)
        assert parts.built == asked



def test_a_game_without_private_key_builds_every_part():
    game = games()["run-wild"]

    class NoKey:                # the engine's functions, but not private_key
        private_view = staticmethod(game.private_view)
    parts = PrivateParts(NoKey)         # type: ignore[arg-type]
    steps = _steps(game, 50)
    for seq, (state, events) in enumerate(steps, 1):
        shared = SharedUpdate(seq, events, game.public_view(state))
        for seat in range(SEATS):
            assert shared.frame_encoded(parts.part(state, seat)) == encode(Update(seq, events, game.view(state, seat)))
    assert parts.built == len(steps) * SEATS
