"""Run Wild's ``advance``: ``apply``'s state without its events, for replay (engine API,
optional; protocol/engine.py).

The plays (adding a card to a meld, taking one, drawing, a new meld, a swap: nine actions
in ten) are applied here in one pass each, every check of ``apply`` and its handler made,
one State built, no event. Whatever a fast path does not cover (another action, a play
that ends the round, a meld not where its id says) and every refusal go to ``apply``, so
a refusal is always ``apply``'s, with its reason. The rules are ``run_wild``'s, cited
there (docs/RULES.md "Run Wild"); tests/protocol/test_advance_fast_paths.py holds this to
``apply``.
"""

from __future__ import annotations

import bisect
from typing import Any

from ..cards import ids_of, int_items
from ..codec import INT_MAX, INT_MIN, packer
from ..states import build
from .run_wild import (
    COLOUR_OF, DECK_SIZE, FIRST_DRAW3, FIRST_WILD, NUMBER_OF, NAME, Add, Draw, PlayMeld, State, Swap, TableMeld,
    Take, _NUMBER_MASK, _shape, apply, snapshot,
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


def _add(state: State, seat: int, meld_id: Any, c: Any, value: Any) -> State | None:
    """``_add`` (a hand card into a meld), short of going out; the state unpacked once."""
    (seats, rules, deal, phase, hands, pos, melds, next_meld, draw3s, stuck, ready, score) = state
    # _meld_at: where _find_meld looks first; _meldable: no Draw-3
    if not melds or type(meld_id) is not int or type(c) is not int or not 0 <= c < FIRST_DRAW3:
        return None
    i = meld_id - melds[0][0]
    if not 0 <= i < len(melds):
        return None
    bit = 1 << c
    hand = hands[seat]
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
    if mid != meld_id:
        return None
    if kind == "set":
        cap = rules.max_set_size
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
    ms = list(melds)
    ms[i] = build(TableMeld, (mid, kind, cs, vs, history | bit))
    hs = list(hands)
    hs[seat] = hand
    if stuck[seat]:
        stuck = stuck[:seat] + (False,) + stuck[seat + 1:]   # _with_hand: cleared by their next action
    return build(State, (seats, rules, deal, phase, tuple(hs), pos, tuple(ms), next_meld, draw3s, stuck, ready,
                         score))


def _take(state: State, seat: int, meld_id: Any, c: Any) -> State | None:
    """``_take`` (a card from a meld to the hand), the state unpacked once."""
    (seats, rules, deal, phase, hands, pos, melds, next_meld, draw3s, stuck, ready, score) = state
    # _meld_at: where _find_meld looks first
    if not melds or type(meld_id) is not int or type(c) is not int or not 0 <= c < DECK_SIZE:
        return None
    i = meld_id - melds[0][0]
    if not 0 <= i < len(melds):
        return None
    mid, kind, cards, vals, history = melds[i]
    if mid != meld_id or c not in cards:
        return None
    k = cards.index(c)
    size = len(cards)
    # what stays is 3+ cards, a run is not split, a number card stays unless all-wild is on
    if size <= 3 or (kind == "run" and 0 < k < size - 1):
        return None
    rest = cards[:k] + cards[k + 1:]
    if c < FIRST_WILD and not rules.allow_all_wild_melds and min(rest) >= FIRST_WILD:
        return None
    ms = list(melds)
    ms[i] = build(TableMeld, (mid, kind, rest, vals[:k] + vals[k + 1:], history))
    hs = list(hands)
    hs[seat] |= 1 << c
    if stuck[seat]:
        stuck = stuck[:seat] + (False,) + stuck[seat + 1:]   # _with_hand: cleared by their next action
    return build(State, (seats, rules, deal, phase, tuple(hs), pos, tuple(ms), next_meld, draw3s, stuck, ready,
                         score))


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


def _value(card: int, value: Any) -> int:
    """``_value``: what a placed card stands for, or -1 where ``_value`` refuses."""
    if card < FIRST_WILD:
        v = NUMBER_OF[card]
        return v if value is None or value == v else -1
    return value if type(value) is int and 1 <= value <= 12 else -1


def _meld(state: State, seat: int, cards: Any, given: Any) -> State | None:
    """``_meld`` (a new set or run from the hand), short of going out."""
    if type(cards) is not tuple or type(given) is not tuple or (given and len(given) != len(cards)):
        return None
    hand = state.hands[seat]
    mask = 0
    for c in cards:
        # _meldable, each card once
        if type(c) is not int or not 0 <= c < FIRST_DRAW3 or not hand >> c & 1 or mask >> c & 1:
            return None
        mask |= 1 << c
    if given:
        values = tuple(_value(c, v) for c, v in zip(cards, given))
        if -1 in values:
            return None
    elif mask >> FIRST_WILD:
        return None                     # a wild with no value
    else:
        values = tuple(NUMBER_OF[c] for c in cards)
    kind, cs, vs, problem = _shape(cards, values, state.rules)
    hand &= ~mask
    if problem or not hand:
        return None
    (seats, rules, deal, phase, hands, pos, melds, next_meld, draw3s, stuck, ready, score) = state
    hs = list(hands)
    hs[seat] = hand
    if stuck[seat]:
        stuck = stuck[:seat] + (False,) + stuck[seat + 1:]
    new = build(TableMeld, (next_meld, kind, cs, vs, mask))
    return build(State, (seats, rules, deal, phase, tuple(hs), pos, melds + (new,), next_meld + 1, draw3s, stuck,
                         ready, score))


def _swap(state: State, seat: int, meld_id: Any, out_c: Any, g: Any, value: Any) -> State | None:
    """``_swap`` (a hand card for the meld card it stands in for)."""
    i = _meld_at(state.melds, meld_id)
    if (i < 0 or type(out_c) is not int or not 0 <= out_c < DECK_SIZE or type(g) is not int
            or not 0 <= g < FIRST_DRAW3):
        return None
    mid, kind, cards, vals, history = state.melds[i]
    hand = state.hands[seat]
    bit = 1 << g
    if out_c not in cards or not hand & bit:
        return None
    v = _value(g, value)
    k = cards.index(out_c)
    if v != vals[k]:
        return None
    if g < FIRST_WILD:
        # in a run every card, wilds included, is of the run's colour
        nums = history & _NUMBER_MASK
        if kind == "run" and nums and COLOUR_OF[(nums & -nums).bit_length() - 1] != COLOUR_OF[g]:
            return None
    elif out_c < FIRST_WILD and not state.rules.allow_all_wild_melds and \
            all(x >= FIRST_WILD for j, x in enumerate(cards) if j != k):
        return None
    cs = cards[:k] + (g,) + cards[k + 1:]
    if kind == "set":
        cs = tuple(sorted(cs))          # a set's cards sit in id order
    meld = build(TableMeld, (mid, kind, cs, vals, history | bit))
    return _with_meld(state, seat, (hand & ~bit) | 1 << out_c, i, meld)


_FAST: dict[type, Any] = {
    Add: lambda state, seat, a: _add(state, seat, a.meld, a.card, a.value),
    Take: lambda state, seat, a: _take(state, seat, a.meld, a.card),
    Draw: _draw,
    PlayMeld: lambda state, seat, a: _meld(state, seat, a.cards, a.values),
    Swap: lambda state, seat, a: _swap(state, seat, a.meld, a.take, a.give, a.value),
}


def _in_play(state: State, seat: Any) -> bool:
    """``advance``'s checks for every play: a seat of the table, the round under way, in it."""
    return type(seat) is int and 0 <= seat < state.seats and state.phase == "playing" and state.deal.in_round[seat]


def _add_map(state: State, seat: int | None, action: dict) -> State | None:
    """``advance`` of an add as the log holds it, ``{"kind": "add", "meld": m, "card": c}``
    and a ``value`` or not: only the maps Add's decoder takes (``meld`` an int from 0,
    ``card`` a card id (0 to 71), ``value`` an int or None, no other key), else None (replay
    then decodes it; RAW_ADVANCE, protocol/engine.py); None too where ``_add`` leaves it
    to ``apply``."""
    meld = action.get("meld")
    card = action.get("card")
    value = action.get("value")
    n = len(action)
    if (type(meld) is int and type(card) is int and 0 <= meld <= INT_MAX and 0 <= card < DECK_SIZE
            and (n == 3 or (n == 4 and "value" in action
                            and (value is None or (type(value) is int and INT_MIN <= value <= INT_MAX))))
            and _in_play(state, seat)):
        return _add(state, seat, meld, card, value)     # (_in_play: seat is an int)
    return None


def _take_map(state: State, seat: int | None, action: dict) -> State | None:
    """``advance`` of a take as the log holds it, ``{"kind": "take", "meld": m, "card":
    c}``: only the maps Take's decoder takes (``meld`` an int from 0, ``card`` a card id,
    no other key), else None (as ``_add_map``)."""
    meld = action.get("meld")
    card = action.get("card")
    if (type(meld) is int and type(card) is int and 0 <= meld <= INT_MAX and 0 <= card < DECK_SIZE
            and len(action) == 3 and _in_play(state, seat)):
        return _take(state, seat, meld, card)           # (_in_play: seat is an int)
    return None


def _meld_map(state: State, seat: int | None, action: dict) -> State | None:
    """``advance`` of a new meld as the log holds it, ``{"kind": "meld", "cards": [...]}``
    and ``values`` or not: only the maps PlayMeld's decoder takes (``cards`` card ids,
    ``values`` ints, each a list of at most 72, no other key), else None (as
    ``_add_map``)."""
    cards = int_items(action.get("cards"), DECK_SIZE, 0, DECK_SIZE - 1)
    n = len(action)
    if n == 2:
        values: tuple | None = ()
    elif n == 3 and "values" in action:
        values = int_items(action["values"], DECK_SIZE, INT_MIN, INT_MAX)
    else:
        return None
    if cards is None or values is None or not _in_play(state, seat):
        return None
    return _meld(state, seat, cards, values)             # (_in_play: seat is an int)


def _swap_map(state: State, seat: int | None, action: dict) -> State | None:
    """``advance`` of a swap as the log holds it, ``{"kind": "swap", "meld": m, "take": c,
    "give": d}`` and a ``value`` or not: only the maps Swap's decoder takes (``meld`` an
    int from 0, ``take`` and ``give`` card ids, ``value`` an int or None, no other key),
    else None (as ``_add_map``)."""
    meld = action.get("meld")
    take = action.get("take")
    give = action.get("give")
    value = action.get("value")
    n = len(action)
    if (type(meld) is int and type(take) is int and type(give) is int and 0 <= meld <= INT_MAX
            and 0 <= take < DECK_SIZE and 0 <= give < DECK_SIZE
            and (n == 4 or (n == 5 and "value" in action
                            and (value is None or (type(value) is int and INT_MIN <= value <= INT_MAX))))
            and _in_play(state, seat)):
        return _swap(state, seat, meld, take, give, value)   # (_in_play: seat is an int)
    return None


RAW_ADVANCE = {"add": _add_map, "take": _take_map, "meld": _meld_map, "swap": _swap_map}


def packed_snapshot(state: State) -> bytes:
    """``packb(snapshot(state))``, byte for byte (the state hash of replay's hash records;
    engine API, optional), without snapshot's maps and lists: its keys and values, in
    snapshot's order, packed as the items of one array (tuples pack as lists do), which
    are the bytes of the map of them after the map's header; each meld's map the same way.
    tests/protocol/test_packed_snapshot_run_wild.py holds it to ``packb(snapshot(state))``."""
    (seats, rules, deal, phase, hands, pos, melds, next_meld, draw3s, stuck, ready, score) = state
    pack = packer().pack
    piles = deal.piles
    dealer = deal.dealer
    # snapshot's 21 keys and values: the 10 before "melds" packed as an array of 20 items
    # (header dc 00 14), the 10 after it the same way: their map's bytes after the header
    head = pack(("game", NAME, "seats", seats, "settings", rules.as_dict(), "phase", phase,
                 "round", deal.round, "dealer", dealer if dealer >= 0 else None, "order", deal.order,
                 "in_round", deal.in_round, "hands", [ids_of(h) for h in hands],
                 "piles", [piles[s][pos[s]:] for s in range(seats)]))
    # each meld's map {"id", "kind", "cards", "values", "history"}: its keys and values an
    # array of 10 (9a), whose first item is "id" (a2 69 64), made a map of 5 (85)
    body = pack([("id", m[0], "kind", m[1], "cards", m[2], "values", m[3], "history", ids_of(m[4]))
                 for m in melds])
    if melds:
        if body.count(_MELD_AS_ARRAY) != len(melds):
            return packer().pack(snapshot(state))      # the same bytes elsewhere too
        body = body.replace(_MELD_AS_ARRAY, _MELD_AS_MAP)
    parts = [b"\xde\x00\x15", head[3:], b"\xa5melds", body]
    append = parts.append
    tail = pack(("next_meld", next_meld, "draw3s", draw3s, "stuck", stuck, "ready", ready,
                 "round_scores", score.rounds, "totals", score.totals, "out", score.out, "ended_by", score.ended_by,
                 "winners", score.winners, "next_seats", score.next_seats))
    append(tail[3:])
    return b"".join(parts)


_MELD_AS_ARRAY = b"\x9a\xa2id"     # a meld's keys and values packed as an array of 10
_MELD_AS_MAP = b"\x85\xa2id"       # its map of 5


def _array(n: int) -> bytes:
    """msgpack's header of an array of ``n`` items."""
    return bytes((0x90 | n,)) if n < 16 else b"\xdc" + n.to_bytes(2, "big") if n < 0x10000 else \
        b"\xdd" + n.to_bytes(4, "big")
