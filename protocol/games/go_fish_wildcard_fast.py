"""Go Fish Wildcard's ``advance``: ``apply``'s state without its events, for replay (engine
API, optional; protocol/engine.py).

An ask, a placed set or the end of a turn is applied with all it makes happen (the forced
sets, the empty-hand draw, the next turn, a turn that starts empty, the pile running out
and the last asks it begins, the end of the game) in one pass, every check of ``apply``
made, one State built, no event; the forced sets are picked with bit counts
(``_forced``, ``_wild_choice``). The deal and every refusal go to ``apply``, so a
refusal is always ``apply``'s, with its reason. The rules are
``go_fish_wildcard``'s, cited there (docs/RULES.md "Go Fish Wildcard");
tests/protocol/test_advance_fast_paths.py holds this to ``apply``.
"""

from __future__ import annotations

from itertools import chain

import attrs

from ..cards import ids_of, int_items
from ..codec import packer
from ..engine import ChanceOutcome
from ..states import build
from .go_fish_wildcard import (
    ASK_ENTRY, DECK_SIZE, EMPTY_DRAW, HAND_SIZE, MAX_PLAYERS, NAME, RANK_INDEX, RANKS, RANK_MASK, RANK_OF, SET_SIZE, WILD_CARDS, Ask,
    EndTurn, Place, State,
    _M1, _M3, _M4, _M5, _M6, _reach, _shape, apply,
)


def advance(state: State, seat: int | None, action: object) -> State:
    """The state ``apply(state, seat, action)`` returns (or its IllegalAction)."""
    t = type(action)
    st = None
    # apply's checks for every player action: the table dealt, not over, the seat's turn
    if type(seat) is int and seat == state.turn and state.phase != "deal" and state.phase != "over":
        if t is Ask:
            st = _ask(state, seat, action.target, action.rank)  # type: ignore[attr-defined]  # (t is Ask)
        elif t is Place:
            st = _place(state, seat, action.cards)  # type: ignore[attr-defined]  # (t is Place)
        elif t is EndTurn and state.step != "ask":  # _end_action: "must_ask"
            st = _turn_over(state, seat, list(state.hands), state.pile, state.wild, state.sets, state.scores,
                            state.history, _forced(state.hands[seat], state.wild))
    elif t is ChanceOutcome and seat is None and state.phase == "deal":
        purpose = action.purpose  # type: ignore[attr-defined]  # (t is ChanceOutcome)
        perm = action.permutation  # type: ignore[attr-defined]  # (t is ChanceOutcome)
        if state.dealer is not None:
            if purpose == "deal":
                st = _deal(state, perm)
        elif purpose == "dealer" and len(perm) == state.n and set(perm) == _SEATS[state.n]:
            # the dealer drawn by lot: a permutation of the seats, its first item deals
            # (apply: check_permutation, then the dealer)
            st = build(State, (state.n, perm[0], *state[2:]))
    return st if st is not None else apply(state, seat, action)[0]


#: _SEATS[n]: the seats of a table of n, as a set (a dealer's permutation holds each once)
_SEATS = {n: frozenset(range(n)) for n in range(MAX_PLAYERS + 1)}


_BITS = tuple(1 << c for c in range(DECK_SIZE))
_RANK_BIT = tuple(1 << (c >> 2) for c in range(DECK_SIZE))     # a card's rank, as a bit of a wild mask


def _deal(state: State, perm: tuple) -> State | None:
    """``_deal``: 4 cards each, one at a time from the dealer's left (seat ``first + j``
    gets the cards at j, j + n, ...), the rest is the pile, and the dealer's left starts
    (``_begin_turn``: every hand holds cards); None (``apply`` says why) for a permutation
    that ``check_permutation`` refuses."""
    (n, dealer, turn_timer, phase, hands, pile, wild, sets, scores, turn, step, bonus, last_order, drawer,
     history) = state
    if len(perm) != DECK_SIZE or set(perm) != _ALL_CARDS:
        return None
    first = dealer + 1 if dealer + 1 < n else 0
    dealt = HAND_SIZE * n
    bit = _BITS.__getitem__
    h = [0] * n
    for j in range(n):
        h[(first + j) % n] = sum(map(bit, perm[j:dealt:n]))
    return build(State, (n, dealer, turn_timer, "play", tuple(h), tuple(perm[dealt:]), wild, sets, scores, first,
                         "ask", 0, last_order, drawer, history))


_ALL_CARDS = frozenset(range(DECK_SIZE))

def _ask_map(state: State, seat: int | None, action: dict) -> State | None:
    """``advance`` of an ask as the log holds it, ``{"kind": "ask", "target": t, "rank":
    r}``: only the maps Ask's decoder takes (``target`` an int from 0 to 5, ``rank`` a
    str of at most 2 characters, no other key), else None (replay then decodes it;
    RAW_ADVANCE, protocol/engine.py); None too where ``_ask`` leaves it to ``apply``."""
    target = action.get("target")
    rank = action.get("rank")
    if (type(target) is int and 0 <= target <= _MAX_TARGET and type(rank) is str and len(rank) <= _MAX_RANK
            and len(action) == 3 and type(seat) is int and seat == state.turn and state.phase != "deal"
            and state.phase != "over"):
        return _ask(state, seat, target, rank)
    return None


def _place_map(state: State, seat: int | None, action: dict) -> State | None:
    """``advance`` of a set placed as the log holds it, ``{"kind": "place", "cards":
    [...]}``: only the maps Place's decoder takes (``cards`` a list of at most 52 card
    ids, no other key), else None (as ``_ask_map``)."""
    cards = int_items(action.get("cards"), DECK_SIZE, 0, DECK_SIZE - 1)
    if (cards is not None and len(action) == 2 and type(seat) is int and seat == state.turn
            and state.phase != "deal" and state.phase != "over"):
        return _place(state, seat, cards)
    return None


_MAX_TARGET = attrs.fields(Ask).target.metadata["max"]
_MAX_RANK = attrs.fields(Ask).rank.metadata["max_len"]
RAW_ADVANCE = {"ask": _ask_map, "place": _place_map}


def _ask(state: State, seat: int, target: int, rank: str) -> State | None:
    """``_ask``: after it, the asker may place the set that earns another ask (step
    "bonus"), or the turn ends (``_turn_over``)."""
    (n, dealer, turn_timer, phase, hands, pile, wild, sets, scores, turn, step, bonus, last_order, drawer,
     history) = state
    if (step == "bonus" or type(rank) is not str or type(target) is not int or target == seat
            or not 0 <= target < n):
        return None
    r = RANK_INDEX.get(rank)
    if r is None:
        return None
    rm = RANK_MASK[r]
    mine = hands[seat]
    if not mine & rm:
        return None
    h = list(hands)
    theirs = hands[target]
    taken = theirs & rm
    reached = 0
    if taken:
        # "They hand over all cards of that rank"
        h[target] = theirs ^ taken
        mine |= taken
        reached = taken
        history = history + (ASK_ENTRY[seat][target][r][taken.bit_count()],)
    elif pile:
        # "go fish": the top card of the pile
        c = pile[0]
        pile = pile[1:]
        mine |= 1 << c
        if RANK_OF[c] == r:
            reached = 1 << c
        history = history + (ASK_ENTRY[seat][target][r][5],)
    else:
        history = history + (ASK_ENTRY[seat][target][r][0],)
    h[seat] = mine
    if phase == "play" and pile:
        if reached and not wild >> r & 1 and (mine & rm).bit_count() >= SET_SIZE:
            # _bonus_open: the asked-for card can go into a set with no wilds
            return build(State, (n, dealer, turn_timer, phase, tuple(h), pile, wild, sets, scores, turn, "bonus",
                                 reached, last_order, drawer, history))
        forced = _forced(mine, wild)
        nxt = seat + 1 if seat + 1 < n else 0
        if forced is None and h[nxt]:
            # the turn ends as most do (_turn_over's first case, inline): no forced set, a
            # card still in hand, the next seat holds cards
            return build(State, (n, dealer, turn_timer, phase, tuple(h), pile, wild, sets, scores, nxt, "ask", 0,
                                 last_order, drawer, history))
    else:
        forced = _forced(mine, wild)
    return _turn_over(state, seat, h, pile, wild, sets, scores, history, forced)


def _place(state: State, seat: int, cards: tuple) -> State | None:
    """``_place_action``: a set from the hand; then another ask earned, the turn on, or
    over (``_turn_over``)."""
    (n, dealer, turn_timer, phase, hands, pile, wild, sets, scores, turn, step, bonus, last_order, drawer,
     history) = state
    if type(cards) is not tuple or len(cards) != SET_SIZE:
        return None
    x, y, z = cards
    hand = hands[seat]
    if (type(x) is not int or type(y) is not int or type(z) is not int or x == y or y == z or x == z
            or not (0 <= x < DECK_SIZE and 0 <= y < DECK_SIZE and 0 <= z < DECK_SIZE)
            or not (hand >> x & 1 and hand >> y & 1 and hand >> z & 1)):
        return None
    ok, _, nw = _shape(cards, wild)
    if not ok:
        return None
    cards = tuple(sorted(cards))
    earned = step == "bonus" and nw == 0 and (bonus >> x & 1 or bonus >> y & 1 or bonus >> z & 1)
    # _place: the cards leave the hand, their ranks turn wild, the seat scores a set
    hand &= ~((1 << x) | (1 << y) | (1 << z))
    h = list(hands)
    h[seat] = hand
    sets = sets + ((seat, cards),)
    wild |= (1 << RANK_OF[x]) | (1 << RANK_OF[y]) | (1 << RANK_OF[z])
    sc = list(scores)
    sc[seat] += 1
    scores = tuple(sc)
    if hand:
        if earned:
            step, bonus = "again", 0
        elif step == "bonus":
            b = bonus & hand        # _bonus_open
            r = RANK_OF[(b & -b).bit_length() - 1] if b else 0
            if not b or wild >> r & 1 or (hand & RANK_MASK[r]).bit_count() < SET_SIZE:
                return _turn_over(state, seat, h, pile, wild, sets, scores, history, _forced(hand, wild))
        return build(State, (n, dealer, turn_timer, phase, tuple(h), pile, wild, sets, scores, turn, step, bonus,
                             last_order, drawer, history))
    return _turn_over(state, seat, h, pile, wild, sets, scores, history, _forced(hand, wild))


def _turn_over(state: State, seat: int, h: list, pile: tuple, wild: int, sets: tuple, scores: tuple,
               history: tuple, forced: tuple | None) -> State:
    """``_end_turn`` for ``seat``, whose hand is ``h[seat]``, with the table as given: the
    forced sets (``forced``: ``_forced(h[seat], wild)``), the empty-hand draw, then ``_begin_turn`` of the next seat (who draws 2
    if they start empty, and whose turn ends at once if that was the last card) or, once
    the pile is out, ``_start_last_asks``; in the last asks, ``_next_last_ask``."""
    (n, dealer, turn_timer, phase, _, _, _, _, _, _, _, _, last_order, drawer, _) = state
    mine = h[seat]
    if forced is not None:
        mine, wild, placed = forced
        sets, scores = _scored(seat, placed, sets, scores)
    if phase == "play":
        if not mine and pile:
            # the empty-hand draw: 2, or what is left
            got = pile[:EMPTY_DRAW]
            pile = pile[len(got):]
            for c in got:
                mine |= 1 << c
        h[seat] = mine
        if pile:
            nxt = seat + 1 if seat + 1 < n else 0
            if h[nxt]:
                return build(State, (n, dealer, turn_timer, phase, tuple(h), pile, wild, sets, scores, nxt, "ask", 0,
                                     last_order, drawer, history))
            # _begin_turn: the next seat starts empty and draws 2 (or what is left)
            got = pile[:EMPTY_DRAW]
            pile = pile[len(got):]
            mine = 0
            for c in got:
                mine |= 1 << c
            if pile:
                h[nxt] = mine
                return build(State, (n, dealer, turn_timer, phase, tuple(h), pile, wild, sets, scores, nxt, "ask", 0,
                                     last_order, drawer, history))
            # that was the last card: the turn ends at once (_end_turn: forced sets; no
            # card left to draw)
            seat = nxt
            forced = _forced(mine, wild)
            if forced is not None:
                mine, wild, placed = forced
                sets, scores = _scored(seat, placed, sets, scores)
            h[seat] = mine
        # _start_last_asks: the pile is out; every seat from the drawer's left to the
        # drawer gets one last ask
        phase = "last_asks"
        drawer = seat
        last_order = tuple([(seat + i) % n for i in range(1, n + 1)])
    else:
        h[seat] = mine
    # _next_last_ask: the next seat due a last ask that holds cards; else the game is over
    while last_order:
        s = last_order[0]
        last_order = last_order[1:]
        if h[s]:
            return build(State, (n, dealer, turn_timer, phase, tuple(h), pile, wild, sets, scores, s, "ask", 0,
                                 last_order, drawer, history))
    return build(State, (n, dealer, turn_timer, "over", tuple(h), pile, wild, sets, scores, None, "", 0,
                         (), drawer, history))


def _scored(seat: int, placed: list, sets: tuple, scores: tuple) -> tuple[tuple, tuple]:
    """The sets and scores after ``seat``'s forced sets ``placed`` (``_place``)."""
    sc = list(scores)
    sc[seat] += len(placed)
    return sets + tuple([(seat, c) for c in placed]), tuple(sc)


def _forced(mine: int, wild: int) -> tuple | None:
    """``_end_turn``'s forced sets (docs/RULES.md "Go Fish Wildcard": every set you can
    still form is placed for you): None when the hand can make none (most turns), else
    (the hand after, the wild mask after, the sets placed in order). Each round is
    ``_any_set``'s test, then ``_forced_choice``'s pick: three of a rank held 3 or 4
    times that is not wild (the three lowest of the lowest), else ``_wild_choice``'s; the ranks'
    counts taken once a round (tests/protocol/test_advance_fast_paths.py)."""
    placed = None
    wc = WILD_CARDS[wild]
    while True:
        wm = mine & wc
        nat = mine ^ wm
        last = False            # no set can be left after this one (no second round)
        if nat:
            t = nat - ((nat >> 1) & _M5)
            t = (t & _M3) + ((t >> 2) & _M3)              # every nibble: its rank's count
            big = (t + _M1) & _M4                         # bit 2 of a rank held 3 or 4 times
            if big:
                # the three lowest cards of the lowest such rank (_forced_choice's first choice)
                m = nat & RANK_MASK[((big & -big).bit_length() - 1) >> 2]
            else:
                # _any_set: 3 wilds, 2 and any card, or 1 and a pair
                w = wm.bit_count()
                if w < 2:
                    if not w or not t & _M6:
                        break
                    # 1 wild: a pair and the wild, the lowest pair (its cards are below
                    # every higher pair's, so its set's sorted ids compare lowest); no wild
                    # is left after it, nor a rank of 3
                    twos = (t >> 1) & _M1
                    m = wm | (nat & RANK_MASK[((twos & -twos).bit_length() - 1) >> 2])
                    last = True
                else:
                    m = _wild_choice(wm, nat, t, w)
        else:
            w = wm.bit_count()
            if w < SET_SIZE:
                break
            # wilds alone: the three lowest (_wild_choice's only choice); another set if 3 more
            m = wm
            last = w < 2 * SET_SIZE
        # the three lowest cards of ``m``, placed: they leave the hand, their ranks turn wild
        a = m & -m
        m ^= a
        b = m & -m
        c = (m ^ b) & -(m ^ b)
        x = a.bit_length() - 1
        y = b.bit_length() - 1
        z = c.bit_length() - 1
        mine ^= a | b | c
        wild |= _RANK_BIT[x] | _RANK_BIT[y] | _RANK_BIT[z]
        if placed is None:
            placed = [(x, y, z)]
        else:
            placed.append((x, y, z))
        if last:
            break
        wc = WILD_CARDS[wild]
    return None if placed is None else (mine, wild, placed)


#: _REACH[pairs][singles][wilds] = _reach(pairs, singles, wilds), for every hand (13 ranks, 52 cards)
_REACH = tuple(tuple(tuple(_reach(p, s, w) for w in range(DECK_SIZE + 1)) for s in range(14)) for p in range(14))


def _wild_choice(wm: int, nat: int, t: int, w: int) -> int:
    """``_forced_choice`` for a hand that can make a set but holds no rank of 3 or 4 that
    is not wild: ``wm`` its ``w`` wild cards, ``nat`` the rest (0 to 2 of a rank), ``t``
    their count per rank (a nibble each). The same reading of the rule, counted with
    bits: the most sets first (``_reach``), then the lowest card ids, among the 3 lowest
    wilds, a pair with the lowest wild (or one of it with the 2 lowest: the other turns
    wild, so the same count; of the two, the one with the lower third card), a single
    with the 2 lowest wilds. Gives the set's three cards as bits."""
    ones = t & _M1                                    # bit 0 of a rank held once
    twos = (t >> 1) & _M1                             # bit 0 of a rank held twice
    pairs = twos.bit_count()
    singles = ones.bit_count()
    by_pairs = _REACH[pairs]
    total = by_pairs[singles][w]
    lo = wm & -wm
    x = lo.bit_length() - 1                           # the lowest wild
    rest = wm ^ lo
    y = (rest & -rest).bit_length() - 1 if w >= 2 else DECK_SIZE   # the second (none: past every card)
    best = None
    if w >= SET_SIZE and by_pairs[singles][w - SET_SIZE] == total - 1:
        rest ^= rest & -rest
        best = (x, y, (rest & -rest).bit_length() - 1)
    if twos and _REACH[pairs - 1][singles][w - 1] == total - 1:
        m = twos
        while m:
            low = m & -m
            m ^= low
            r = nat & (low * 0xF)                     # the pair's two cards
            a = r & -r
            b = (r ^ a).bit_length() - 1
            a = a.bit_length() - 1
            c = b if b < y else y                     # b > a, y > x: sorted (a, x, c)
            if a < x:
                cand = (a, x, c) if x < c else (a, c, x) if a < c else (c, a, x)
            else:
                cand = (x, a, c) if a < c else (x, c, a) if x < c else (c, x, a)
            if best is None or cand < best:
                best = cand
    if ones and w >= 2 and by_pairs[singles - 1][w - 2] == total - 1:
        m = ones
        while m:
            low = m & -m
            m ^= low
            a = (nat & (low * 0xF)).bit_length() - 1  # the single card
            cand = (a, x, y) if a < x else (x, a, y) if a < y else (x, y, a)
            if best is None or cand < best:
                best = cand
    return (1 << best[0]) | (1 << best[1]) | (1 << best[2])     # (a set exists: one of the three kinds is best)


# ---------------------------------------------------------------------------- state hash

_packed_entry: dict = {}            # id(an ASK_ENTRY object) -> its map as snapshot packs it
_ENTRY_IDS: frozenset[int] = frozenset(id(e) for by_target in ASK_ENTRY for by_rank in by_target for es in by_rank for e in es)
_packed_asks: dict = {}             # another ask (history entry) -> its map as snapshot packs it
_MAX_PACKED_ASKS = 4096             # more than the asks a table can make differ (seats x targets x ranks x counts)
_wild_ranks: dict = {}              # a wild-rank mask -> snapshot's "wild_ranks" (at most 8,192)
#: _SET_HEAD[i][s]: the packed map of set ``i`` placed by seat ``s`` up to its cards' three
#: items ({"id": i, "seat": s, "cards": [...]}, every int a positive fixint: one byte)
_SET_HEAD = tuple(tuple(b"\x83\xa2id" + bytes((i,)) + b"\xa4seat" + bytes((s,)) + b"\xa5cards\x93"
                        for s in range(MAX_PLAYERS)) for i in range(DECK_SIZE // SET_SIZE))


def _array(n: int) -> bytes:
    """msgpack's header of an array of ``n`` items."""
    return bytes((0x90 | n,)) if n < 16 else b"\xdc" + n.to_bytes(2, "big") if n < 0x10000 else b"\xdd" + n.to_bytes(4, "big")


def packed_snapshot(state: State) -> bytes:
    """``packb(snapshot(state))``, byte for byte (state hash; engine API, optional), built
    without snapshot's maps: its keys and values (in snapshot's order) packed as the items
    of two arrays, whose items are the bytes of a map of them after the map's header; each
    set's map from a table of its head (its id and seat) and its three cards' bytes; each
    ask's map (the closing hash of a game covers every ask made) packed once per process,
    not once per hash. tests/protocol/test_packed_snapshot.py holds it to
    ``packb(snapshot(state))``."""
    (n, dealer, turn_timer, phase, hands, pile, wild, sets, scores, turn, step, bonus, last_order, drawer,
     history) = state
    pack = packer().pack
    ranks = _wild_ranks.get(wild)
    if ranks is None:
        ranks = [RANKS[r] for r in range(13) if wild >> r & 1]
        if len(_wild_ranks) < 8192:
            _wild_ranks[wild] = ranks
    # each ask's packed map: by the object for the engine's own (ASK_ENTRY's, as every ask
    # the engine records is), found for all at once; else (a state made elsewhere, or an
    # entry not packed yet) one at a time (_pack_asks)
    try:
        asks = b"".join(map(_packed_entry.__getitem__, map(id, history)))
    except KeyError:
        got = list(map(_packed_entry.get, map(id, history)))
        _pack_asks(history, got, pack)
        asks = b"".join(got)
    # each set's map: a set the engine placed holds an int seat and three card ids (ints of
    # 0 to 51); any other (a bool where a seat or card goes: equal to 1 or 0, packed
    # otherwise) packs as snapshot packs it
    if len(sets) <= len(_SET_HEAD):
        heads = _SET_HEAD
        made: list | None = []
        for i, (s, c) in enumerate(sets):
            x, y, z = c
            if (s.__class__ is not int or x.__class__ is not int or y.__class__ is not int or z.__class__ is not int
                    or not 0 <= s < MAX_PLAYERS):
                made = None
                break
            made.append(heads[i][s])
            made.append(bytes(c))
        packed_sets = b"".join(made) if made is not None else None
    else:
        packed_sets = None
    if packed_sets is None:
        packed_sets = pack([{"id": i, "seat": s, "cards": list(c)} for i, (s, c) in enumerate(sets)])[len(_array(len(sets))):]
    # the keys and values before "sets" (19 items: a 3-byte array header) and after it,
    # to "asks" (9 items: 1 byte)
    head = pack(("game", NAME, "phase", phase, "seats", n, "dealer", dealer, "turn_timer", turn_timer,
                 "turn", turn, "step", step, "hands", [ids_of(h) if h else [] for h in hands], "pile", pile,
                 "wild_ranks", ranks, "sets"))
    tail = pack(("scores", scores, "bonus", ids_of(bonus) if bonus else [], "last_asks", last_order, "drawer", drawer,
                 "asks"))
    return b"".join((b"\xde\x00\x10", head[3:], _array(len(sets)), packed_sets, tail[1:], _array(len(history)), asks))


def packed_state(state: State) -> bytes:
    """The compact form of a state (engine API, optional: the hash records of a log of
    format 3 digest it, ``engine.log_hash``; docs/LOG-FORMAT.md, 3): msgpack of the game's
    name and every field of the State in order, the hands and the bonus as their masks, the
    pile and the asks as bytes (an ask's five items, seat, target, rank, cards handed over
    and fished, a byte each: any of those not a byte, in a state made elsewhere, leaves
    them a list), the sets as (seat, cards) arrays. tests/protocol/test_log_format_3.py
    holds every field to it."""
    (n, dealer, turn_timer, phase, hands, pile, wild, sets, scores, turn, step, bonus, last_order, drawer,
     history) = state
    try:
        asks: bytes | tuple = bytes(chain.from_iterable(history))
    except (TypeError, ValueError):
        asks = history
    try:
        dealt: bytes | tuple = bytes(pile)
    except (TypeError, ValueError):
        dealt = pile
    return packer().pack((NAME, n, dealer, turn_timer, phase, hands, dealt, wild, sets, scores, turn, step, bonus,
                          last_order, drawer, asks))


def _pack_asks(history: tuple, got: list, pack) -> None:
    """Fill in ``got[j]`` where it is None: the packed map of ``history[j]``, as _asks
    makes it."""
    cache = _packed_asks
    for j, p in enumerate(got):
        if p is not None:
            continue
        ask = history[j]
        s, t, r, k, d = ask
        if id(ask) in _ENTRY_IDS:
            # ASK_ENTRY's own object (kept for good there: its id is never another's)
            p = _packed_entry[id(ask)] = pack({"seat": s, "target": t, "rank": RANKS[r], "handed": k, "drew": d})
        else:
            p = cache.get(ask)
            # a bool equals 1 or 0 as a key, but packs otherwise: the seats (an Ask built in
            # process, not decoded, may hold one) are looked up only as ints; the rank and
            # counts are the engine's own ints
            if p is None or type(s) is not int or type(t) is not int:
                p = pack({"seat": s, "target": t, "rank": RANKS[r], "handed": k, "drew": d})   # as _asks
                if len(cache) < _MAX_PACKED_ASKS and type(s) is int and type(t) is int:
                    cache[ask] = p
        got[j] = p
