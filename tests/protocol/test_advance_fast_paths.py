"""``advance`` (replay's step without events: protocol/games/run_wild_fast.py,
go_fish_wildcard_fast.py) gives exactly what ``apply`` gives: the same state, or the same
refusal, for every step of random games and for random actions, most of them illegal,
on the states those games pass through."""

from __future__ import annotations

import random

import pytest

from wildtable.protocol.engine import games, state_hash
from wildtable.protocol.errors import IllegalAction
from wildtable.protocol.games import go_fish_wildcard as gfw, run_wild as rw
from wildtable.selfplay import play

#: the games with a fast path here, the settings that keep their games short, and how
#: many random games (a few seconds in all)
CASES = {"run-wild": ({"rounds": 1}, 12), "go-fish-wildcard": ({}, 120)}


def outcome(fn, state, seat, action):
    """What a step gives: ("state", state) or ("refused", code, reason); an action whose
    fields are of the wrong type may raise another error, the same for both."""
    try:
        st = fn(state, seat, action)
    except IllegalAction as e:
        return ("refused", e.code, e.reason)
    except (TypeError, IndexError) as e:
        return ("refused", type(e).__name__, str(e))
    return ("state", st)


def random_actions(name: str, state, rng: random.Random) -> list:
    """Actions of the fast paths' kinds with fields near and beyond what is legal."""
    if name == "run-wild":
        ids = [m.id for m in state.melds] or [1]
        out = []
        for _ in range(6):
            meld = rng.choice(ids + [0, max(ids) + 1, -1, True])
            card = rng.choice([rng.randrange(rw.DECK_SIZE), rng.randrange(rw.FIRST_WILD, rw.DECK_SIZE),
                               -1, rw.DECK_SIZE, "5", 5.0])
            value = rng.choice([None, None, rng.randint(0, 13), True])
            give = rng.choice([rng.randrange(rw.DECK_SIZE), rng.randrange(rw.FIRST_WILD, rw.DECK_SIZE), "5"])
            out += [rw.Add(meld, card, value), rw.Take(meld, card), rw.Swap(meld, card, give, value)]
        held = rw.ids_of(state.hands[rng.randrange(len(state.hands))])
        for m in state.melds:
            # swaps that nearly fit: a held card of the same number, any colour, or a wild
            k = rng.randrange(len(m.cards))
            fits = [c for c in held if rw.NUMBER_OF[c] in (0, m.values[k])]
            if fits:
                out.append(rw.Swap(m.id, m.cards[k], rng.choice(fits), rng.choice([None, m.values[k]])))
        for _ in range(4):
            cards = tuple(rng.choice(held + [rng.randrange(rw.DECK_SIZE)]) for _ in range(rng.randint(2, 5)))
            values = rng.choice([(), tuple(rng.randint(0, 13) for _ in cards), (rng.randint(1, 12),)])
            out.append(rw.PlayMeld(cards, values))
        return out + [rw.Draw()]
    ranks = list(gfw.RANKS) + ["1", "Z", 7]
    out: list = [gfw.Ask(rng.choice([-1, 0, 1, 2, 3, 5, 6, True, "1"]), rng.choice(ranks)) for _ in range(8)]
    held = gfw.hand_ids(state.hands[state.turn]) if state.turn is not None else []
    for _ in range(6):
        pool = held + [rng.randrange(gfw.DECK_SIZE), -1, gfw.DECK_SIZE]
        out.append(gfw.Place(tuple(rng.choice(pool) for _ in range(rng.choice([3, 3, 3, 2, 4])))))
    return out + [gfw.EndTurn()]


@pytest.mark.parametrize("name", sorted(CASES))
def test_advance_gives_apply_state_for_every_step_of_random_games(name):
    g = games()[name]
    settings, n_games = CASES[name]
    rng = random.Random(25)
    fast_taken = [0, 0]

    def on_step(before, after, action, seat, req, events):
        got = g.advance(before, seat, action)
        assert got == after and state_hash(g, got) == state_hash(g, after), (name, seat, action)
        fast_taken[1] += 1
        fast_taken[0] += got is not after     # a state built by the fast path, not apply's own

    for _ in range(n_games):
        play(g, rng.randint(g.MIN_PLAYERS, g.MAX_PLAYERS), settings, rng=rng, on_step=on_step)
    # the fast paths carry most steps (else this test would not be testing them)
    assert fast_taken[0] > fast_taken[1] // 2, fast_taken


@pytest.mark.parametrize("name", sorted(CASES))
def test_advance_refuses_what_apply_refuses_with_the_same_reason(name):
    g = games()[name]
    settings, n_games = CASES[name]
    rng = random.Random(2025)
    seen = {"state": 0, "refused": 0}

    def on_step(before, after, action, seat, req, events):
        if rng.random() > 0.3:
            return
        seats = [None, -1, before[0] if name == "run-wild" else before.n, *range(g.MAX_PLAYERS)]
        for a in random_actions(name, before, rng):
            s = rng.choice(seats) if rng.random() < 0.3 else seat
            want = outcome(lambda st, se, ac: g.apply(st, se, ac)[0], before, s, a)
            got = outcome(g.advance, before, s, a)
            assert got == want, (name, s, a)
            if want[0] == "state":
                assert state_hash(g, got[1]) == state_hash(g, want[1])
            seen[want[0]] += 1

    for _ in range(max(2, n_games // 4)):
        play(g, rng.randint(g.MIN_PLAYERS, g.MAX_PLAYERS), settings, rng=rng, on_step=on_step)
    assert seen["state"] > 20 and seen["refused"] > 200, seen


def test_the_forced_sets_counted_with_bits_are_apply_s():
    """go_fish_wildcard_fast._forced: the forced sets of a hand, placed one after another
    as _end_turn places them (_any_set, then _forced_choice, until no set is left), and
    None when _any_set finds none; among them hands with 3 or 4 of a rank not wild (the
    natural set first) and hands whose sets need wilds."""
    from wildtable.protocol.games import go_fish_wildcard_fast as fast

    rng = random.Random(11)
    found = [0, 0]
    natural = 0
    for _ in range(20_000):
        k = rng.randint(1, 14)
        hand = gfw.hand_mask(rng.sample(range(gfw.DECK_SIZE), k))
        wild = rng.getrandbits(13) & rng.getrandbits(13) & rng.getrandbits(13)
        want, h, wl = [], hand, wild
        while gfw._any_set(h, wl):
            cards = gfw._forced_choice(h, wl)
            want.append(cards)
            h &= ~sum(1 << c for c in cards)
            for c in cards:
                wl |= 1 << gfw.RANK_OF[c]
        got = fast._forced(hand, wild)
        if not want:
            assert got is None, (hand, wild)
        else:
            assert got == (h, wl, want), (hand, wild)
            found[len(want) > 1] += 1
            natural += len({gfw.RANK_OF[c] for c in want[0]}) == 1 and not wild >> gfw.RANK_OF[want[0][0]] & 1
    assert found[0] > 2_000 and found[1] > 500 and 500 < natural < sum(found) - 500, (found, natural)


def test_the_run_s_byte_tables_tell_pairs_and_threes():
    """Go Fish Wildcard's run tests a hand for a pair or 3 of a rank by its bytes (two
    ranks' nibbles a byte: protocol/games/go_fish_wildcard_run.py): the same answer as
    counting each rank's cards, for every hand of up to 12 cards drawn here."""
    from wildtable.protocol.games import go_fish_wildcard_run as run

    rng = random.Random(8)
    width = len(run._NO_BYTES)
    for _ in range(20_000):
        hand = sum(1 << c for c in rng.sample(range(gfw.DECK_SIZE), rng.randint(0, 12)))
        counts = [(hand & gfw.RANK_MASK[r]).bit_count() for r in range(13)]
        assert (hand.to_bytes(width, "little").translate(run._PAIR_BYTES) != run._NO_BYTES) == (max(counts) >= 2)
        assert (hand.to_bytes(width, "little").translate(run._THREE_BYTES) != run._NO_BYTES) == (max(counts) >= 3)
