"""Run Wild's ``packed_snapshot`` (its state hash at less cost:
protocol/games/run_wild_fast.py) is ``packb(snapshot(state))`` byte for byte: for every
state random games pass through, under each rules version, with 0 to 17 melds, and where
the bytes it turns from an array's into a map's header also stand elsewhere in the state
(then it packs the snapshot itself)."""

from __future__ import annotations

import random

from wildtable.protocol.codec import packb
from wildtable.protocol.engine import state_hash
from wildtable.protocol.games import run_wild
from wildtable.selfplay import play


def _states(game, games: int, seed: int, settings: dict | None = None) -> list:
    rng = random.Random(seed)
    seen: list = []
    for _ in range(games):
        play(game, rng.randint(game.MIN_PLAYERS, game.MAX_PLAYERS), settings or {}, rng=rng,
             on_step=lambda before, after, *_: seen.append(after))
    return seen


def test_packed_snapshot_is_the_packed_snapshot_of_every_state():
    seen = _states(run_wild, 6, 11)
    assert len(seen) > 3000
    for st in seen:
        assert run_wild.packed_snapshot(st) == packb(run_wild.snapshot(st))


def test_run_wild_rules_version_1_and_other_settings():
    seen = _states(run_wild, 3, 5, {"max_set_size": 4, "first_dealer": 1, "allow_all_wild_melds": True})
    # a version 1 table's settings hash without first_dealer (Rules.as_dict)
    v1 = run_wild._rules({}, 1)
    seen += [st._replace(rules=v1) for st in seen[::7]]
    for st in seen:
        assert run_wild.packed_snapshot(st) == packb(run_wild.snapshot(st))


def test_many_melds_and_the_array_headers():
    st = max(_states(run_wild, 2, 3), key=lambda s: len(s.melds))
    m = st.melds[0]
    for n in (0, 1, 15, 16, 17):
        many = st._replace(melds=tuple(m._replace(id=i + 1) for i in range(n)))
        assert run_wild.packed_snapshot(many) == packb(run_wild.snapshot(many))


def test_the_header_bytes_elsewhere_in_the_state():
    # a meld holding 154 then "id" packs cc 9a a2 69 64: a meld map's array header, again
    st = max(_states(run_wild, 2, 3), key=lambda s: len(s.melds))
    odd = st._replace(melds=(st.melds[0]._replace(cards=(154, "id")),) + st.melds[1:])
    assert run_wild.packed_snapshot(odd) == packb(run_wild.snapshot(odd))
    assert state_hash(run_wild, odd) != state_hash(run_wild, st)
