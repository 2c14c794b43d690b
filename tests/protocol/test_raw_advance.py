"""``RAW_ADVANCE`` (an action's map as the log holds it, straight to ``advance``'s state:
protocol/engine.py; replay folds with it) is a third path through the decoder and the
rules: for a map the game's decoder takes, it gives the state ``advance`` gives to the
decoded action, or the same refusal, or None (replay then decodes the map); for a map
the decoder refuses, always None, so a log with a malformed action still fails with the
decoder's reason. Checked at the steps of random games with the map logged there and
maps made from it: each field of every other type (bool, float, str, None, list), out
of range, missing, an unknown key, bad list items, other seats."""

from __future__ import annotations

import random

import pytest

from wildtable.protocol.codec import unpackb
from wildtable.protocol.engine import games, state_hash
from wildtable.protocol.errors import IllegalAction, ProtocolError
from wildtable.selfplay import play

RAW = sorted(name for name, g in games().items() if getattr(g, "RAW_ADVANCE", None))
#: settings that keep a game short, and how many random games (a few seconds in all)
CASES = {"run-wild": ({"rounds": 1}, 10), "go-fish-wildcard": ({}, 40), "go-wild": ({}, 20), "wild-shots": ({}, 20)}
ODD = [True, False, 1.0, "1", "10H", None, [], [1], -1, 2**53, 2**53 + 1, 10**30]


def test_the_games_with_raw_steps_are_checked_here():
    assert RAW and set(RAW) <= set(CASES), RAW


def _maps(m: dict, rng: random.Random) -> list[dict]:
    """``m`` and maps made from it, most of them malformed."""
    out = [m, {**m, "extra": 1}]
    for key, value in m.items():
        if key == "kind":
            continue
        out.append({k: v for k, v in m.items() if k != key})
        for odd in rng.sample(ODD, 5):
            out.append({**m, key: odd})
        if type(value) is int:
            out += [{**m, key: value + 1}, {**m, key: value - 1}, {**m, key: -value - 1}]
        if type(value) is list:
            for bad in (True, 1.0, -1, 108, 200, None, "3"):
                out.append({**m, key: value + [bad]})
            out.append({**m, key: value[:1]})
            out.append({**m, key: tuple(value)})
            out.append({**m, key: value * 60})
    for key in ("value", "values", "card", "cards", "target", "rank", "meld"):
        if key not in m:
            out.append({**m, key: rng.choice([1, None, [1], "A"])})
    return out


def _decoded(g, state, seat, m):
    try:
        action = g.ACTIONS.decode(m, "$.action")
    except ProtocolError:
        return ("bad_map",)
    try:
        return ("state", g.advance(state, seat, action))
    except IllegalAction as e:
        return ("refused", e.code, e.reason)


def _raw(g, state, seat, m):
    step = g.RAW_ADVANCE.get(m.get("kind"))
    if step is None:
        return None
    try:
        st = step(state, seat, m)
    except IllegalAction as e:
        return ("refused", e.code, e.reason)
    return None if st is None else ("state", st)


@pytest.mark.parametrize("name", RAW)
def test_a_raw_step_is_the_decoded_step_or_none(name):
    g = games()[name]
    settings, n_games = CASES[name]
    rng = random.Random(31)
    seen = {"raw_state": 0, "raw_refused": 0, "none": 0, "bad_map": 0}

    def on_step(before, after, action, seat, request, events):
        if seat is None or rng.random() > 0.25:
            return
        logged = unpackb(g.ACTIONS.encode(action))
        if logged.get("kind") not in g.RAW_ADVANCE:
            return
        # the logged map itself: the raw step takes it (or leaves it to the decoder)
        got = _raw(g, before, seat, logged)
        assert got is None or (got[0] == "state" and got[1] == after), (logged, got)
        for m in _maps(logged, rng):
            s = seat if rng.random() < 0.8 else rng.choice([None, -1, 0, 1, 2, 7, True])
            want = _decoded(g, before, s, m)
            got = _raw(g, before, s, m)
            if want[0] == "bad_map":
                seen["bad_map"] += 1
                assert got is None, (m, got)
            elif got is None:
                seen["none"] += 1
            else:
                assert got == want, (s, m, got, want)
                if got[0] == "state":
                    assert state_hash(g, got[1]) == state_hash(g, want[1]), (s, m)
                seen["raw_" + got[0]] += 1

    for _ in range(n_games):
        play(g, rng.randint(g.MIN_PLAYERS, g.MAX_PLAYERS), settings, rng=rng, on_step=on_step)
    # every outcome reached, many times
    assert seen["raw_state"] > 100 and seen["bad_map"] > 1000 and seen["raw_refused"] + seen["none"] > 100, seen
