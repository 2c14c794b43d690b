"""Run Wild's ``advance``: ``apply``'s state without its events, for replay (engine API,
optional; protocol/engine.py).

The plays replay meets most (adding a card to a meld, taking one, drawing: eight actions
in ten) are applied here in one pass each, every check of ``apply`` and its handler made,
one State built, no event. Whatever a fast path does not cover (another action, a play
that ends the round, a meld not where its id says) and every refusal go to ``apply``, so
a refusal is always ``apply``'s, with its reason. The rules are ``run_wild``'s, cited
there (docs/RULES.md "Run Wild"); tests/protocol/test_advance.py holds this to ``apply``.
"""

from __future__ import annotations

import bisect
from typing import Any

from ..states import build
from .run_wild import (
    COLOUR_OF, DECK_SIZE, FIRST_DRAW3, FIRST_WILD, NUMBER_OF, Add, Draw, State, TableMeld, Take, _NUMBER_MASK,
    apply,
)


def advance(state: State, seat: int | None, action: Any) -> State:
    """The state ``apply(state, seat, action)`` returns (or its IllegalAction)."""
    fast = _FAST.get(type(action))
    # apply's checks for every play: a seat of the table, the round under way, in it
    if (fast is not None and type(seat) is int and 0 <= seat < state.seats and state.phase == "playing"
            and state.deal.in_round[seat]):
        st = fast(state, seat, action)
        if st is not None:
            return st
    return apply(state, seat, action)[0]


def _meld_at(melds: tuple[TableMeld, ...], meld_id: Any) -> int:
    """The index of meld ``meld_id`` where ``_find_meld`` looks first, or -1."""
    if not melds or type(meld_id) is not int:
        return -1
    i = meld_id - melds[0].id
    return i if 0 <= i < len(melds) and melds[i].id == meld_id else -1


def _add(state: State, seat: int, a: Add) -> State | None:
    """``_add`` (a hand card into a meld), short of going out."""
    melds = state.melds
    c = a.card
    value = a.value
    i = _meld_at(melds, a.meld)
    if i < 0 or type(c) is not int or not 0 <= c < FIRST_DRAW3:     # _meldable: no Draw-3
        return None
    bit = 1 << c
    hand = state.hands[seat]
    if not hand & bit:
        return None
    # _value: a number card stands for itself, a wild for its declared 1..12
    if c < FIRST_WILD:
        v = NUMBER_OF[c]
        if value is not None and value != v:
            return None
    elif type(value) is int and 1 <= value <= 12:
        v = value
    else:
        return None
    mid, kind, cards, vals, history = melds[i]
    if kind == "set":
        cap = state.rules.max_set_size
        if v != vals[0] or (cap and len(cards) >= cap):
            return None
        k = bisect.bisect(cards, c)     # a set's cards sit in id order
        cs, vs = cards[:k] + (c,) + cards[k:], vals + (v,)
    else:
        nums = history & _NUMBER_MASK   # _run_colour
        if c < FIRST_WILD and nums and COLOUR_OF[(nums & -nums).bit_length() - 1] != COLOUR_OF[c]:
            return None
        if v == vals[0] - 1:
            cs, vs = (c,) + cards, (v,) + vals
        elif v == vals[-1] + 1:
            cs, vs = cards + (c,), vals + (v,)
        else:
            return None
    hand &= ~bit
    if not hand:
        return None                     # out: the round ends (_after_play)
    return _with_meld(state, seat, hand, i, build(TableMeld, (mid, kind, cs, vs, history | bit)))


def _take(state: State, seat: int, a: Take) -> State | None:
    """``_take`` (a card from a meld to the hand)."""
    melds = state.melds
    c = a.card
    i = _meld_at(melds, a.meld)
    if i < 0 or type(c) is not int or not 0 <= c < DECK_SIZE:
        return None
    mid, kind, cards, vals, history = melds[i]
    if c not in cards:
        return None
    k = cards.index(c)
    size = len(cards)
    # what stays is 3+ cards, a run is not split, a number card stays unless all-wild is on
    if size <= 3 or (kind == "run" and 0 < k < size - 1):
        return None
    rest = cards[:k] + cards[k + 1:]
    if c < FIRST_WILD and not state.rules.allow_all_wild_melds and min(rest) >= FIRST_WILD:
        return None
    meld = build(TableMeld, (mid, kind, rest, vals[:k] + vals[k + 1:], history))
    return _with_meld(state, seat, state.hands[seat] | 1 << c, i, meld)


def _with_meld(state: State, seat: int, hand: int, i: int, meld: TableMeld) -> State:
    """``_with_hand`` for a play that changed meld ``i``: the seat holds ``hand``, its stuck
    flag is cleared (docs/DECISIONS.md "Run Wild": "cleared by their next action")."""
    (seats, rules, deal, phase, hands, pos, melds, next_meld, draw3s, stuck, ready, score) = state
    ms = list(melds)
    ms[i] = meld
    hs = list(hands)
    hs[seat] = hand
    if stuck[seat]:
        stuck = stuck[:seat] + (False,) + stuck[seat + 1:]
    return build(State, (seats, rules, deal, phase, tuple(hs), pos, tuple(ms), next_meld, draw3s, stuck, ready,
                         score))


def _draw(state: State, seat: int, a: Draw) -> State | None:
    """``_draw`` (the top card of the seat's own pile)."""
    (seats, rules, deal, phase, hands, pos, melds, next_meld, draw3s, stuck, ready, score) = state
    p = pos[seat]
    pile = deal.piles[seat]
    if p >= len(pile):
        return None
    ps = list(pos)
    ps[seat] = p + 1
    hs = list(hands)
    hs[seat] |= 1 << pile[p]
    if stuck[seat]:
        stuck = stuck[:seat] + (False,) + stuck[seat + 1:]
    return build(State, (seats, rules, deal, phase, tuple(hs), tuple(ps), melds, next_meld, draw3s, stuck, ready,
                         score))


_FAST: dict[type, Any] = {Add: _add, Take: _take, Draw: _draw}
