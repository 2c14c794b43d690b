"""A game's ``advance`` of a chance outcome (a deal, a shuffle, a draw by lot) is the state
``apply`` gives, and a permutation ``apply`` refuses (too short, an item twice, too long,
for another purpose) is refused with the same code and reason: replay folds chance
records with ``advance`` (Go Fish Wildcard deals in it without ``apply``)."""

from __future__ import annotations

import pytest

from wildtable.protocol.engine import ChanceOutcome, TableConfig, games, state_hash
from wildtable.protocol.errors import IllegalAction

ADVANCE = sorted(name for name, g in games().items() if getattr(g, "advance", None))


def _outcome(f, state, action):
    try:
        return ("state", f(state, None, action))
    except IllegalAction as e:
        return ("refused", e.code, e.reason)


@pytest.mark.parametrize("name", ADVANCE)
def test_a_chance_outcome_is_advanced_as_applied(name):
    g = games()[name]
    assert ADVANCE
    for seats in (g.MIN_PLAYERS, g.MAX_PLAYERS):
        state = g.new_table(TableConfig(g.NAME, seats))
        chances = 0
        while (req := g.pending_chance(state)) is not None and chances < 4:
            good = tuple(reversed(range(req.size)))
            bad = [good[:-1], good[:-1] + (good[0],), good + (req.size,), (), tuple(range(-1, req.size - 1))]
            for perm in bad:
                want = _outcome(lambda s, seat, a: g.apply(s, seat, a)[0], state, ChanceOutcome(req.purpose, perm))
                assert want[0] == "refused"
                assert _outcome(g.advance, state, ChanceOutcome(req.purpose, perm)) == want, (req, perm)
            other = ChanceOutcome(req.purpose + "x", good)
            assert _outcome(g.advance, state, other) == \
                _outcome(lambda s, seat, a: g.apply(s, seat, a)[0], state, other)
            after = g.apply(state, None, ChanceOutcome(req.purpose, good))[0]
            fast = g.advance(state, None, ChanceOutcome(req.purpose, good))
            assert fast == after and state_hash(g, fast) == state_hash(g, after)
            state = after
            chances += 1
        assert chances >= 1
