"""``advance(state, seat, action)``, the engines' ``apply`` without events (replay drops
them: protocol/engine.py), is a second path through the rules: it must give the very same
state, and refuse the very same actions with the same IllegalAction. Checked over many
random games of every game that has it, at every step, and for plays made up near each
state: the seat to move with cards it holds and does not hold, other seats, duplicates,
mixed sets, nothing, and chance outcomes from a seat or for the wrong purpose."""

from __future__ import annotations

import random

import pytest

from wildtable.protocol.cards import ids_of
from wildtable.protocol.engine import ChanceOutcome
from wildtable.protocol.errors import IllegalAction
from wildtable.protocol.games import go_wild, wild_shots
from wildtable.selfplay import play

GAMES = [go_wild, wild_shots]


def _made_up(g, state, rng: random.Random, seats: int) -> list[tuple]:
    """(seat, action) pairs near ``state``: some legal, most refused."""
    out = []
    turn = state.turn if state.turn is not None and state.turn >= 0 else 0
    for _ in range(6):
        seat = rng.choice([None, turn, turn, turn, rng.randrange(seats)])
        if g is go_wild:
            held = ids_of(state.hands[turn])
            k = rng.choice([0, 1, 2, 3, 4])
            cards = rng.sample(held, min(k, len(held)))
            if rng.random() < 0.5:
                cards.append(rng.randrange(go_wild.DECK_SIZE))   # held or not, any colour
            if cards and rng.random() < 0.1:
                cards.append(cards[0])                            # named twice
            action = go_wild.Play(tuple(cards))
        else:
            hand = state.hands[turn] if state.hands else ()
            card = rng.choice(hand) if hand and rng.random() < 0.7 else rng.randrange(wild_shots.N_CARDS)
            action = wild_shots.Play(card)
        if rng.random() < 0.08:
            action = ChanceOutcome(rng.choice(["deal", "reshuffle", "snake_oil", "first_player"]),
                                   tuple(range(rng.choice([2, 14, 40, 108]))))
        out.append((seat, action))
    return out


def _result(fn, state, seat, action):
    try:
        return "state", fn(state, seat, action)
    except IllegalAction as e:
        return "refused", (e.code, e.reason)


@pytest.mark.parametrize("g", GAMES, ids=lambda g: g.NAME)
def test_advance_gives_the_state_and_the_refusals_of_apply(g):
    rng = random.Random(25)
    counts = {"steps": 0, "state": 0, "refused": 0}
    for i in range(60):
        seats = rng.randint(g.MIN_PLAYERS, g.MAX_PLAYERS)
        settings: dict = {"first_player": 0} if i % 3 == 1 else {}
        if g is go_wild and i % 4 == 2:
            settings["target"] = 40         # longer games: more reshuffles
        if g is wild_shots and i % 4 == 3:
            settings["rotate_starter"] = True

        def on_step(before, after, action, seat, request, events):
            assert g.advance(before, seat, action) == after
            counts["steps"] += 1
            for s2, a2 in _made_up(g, before, rng, seats):
                kind, value = _result(g.advance, before, s2, a2)
                expected = _result(lambda st, s, a: g.apply(st, s, a)[0], before, s2, a2)
                assert (kind, value) == expected, (s2, a2)
                counts[kind] += 1

        play(g, seats, settings, rng=rng, on_step=on_step)
    # the made-up actions reached both outcomes, many times
    assert counts["steps"] > 3000 and counts["state"] > 1000 and counts["refused"] > 5000, counts
