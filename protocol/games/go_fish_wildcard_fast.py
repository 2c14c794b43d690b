"""Go Fish Wildcard's ``advance``: ``apply``'s state without its events, for replay (engine
API, optional; protocol/engine.py).

An ask is nearly nine actions in ten; ``_ask_fast`` applies the ask and all it makes
happen (the forced sets, the empty-hand draw, the next turn or last ask) in one pass,
every check of ``apply`` made, one State built, no event. What it does not cover (the pile
running out in the play phase, a turn that starts empty) and every other action and
every refusal go to ``apply``, so a refusal is always ``apply``'s, with its reason. The
rules are ``go_fish_wildcard``'s, cited there (docs/RULES.md "Go Fish Wildcard");
tests/protocol/test_advance.py holds this to ``apply``.
"""

from __future__ import annotations

from ..states import build
from .go_fish_wildcard import (
    EMPTY_DRAW, RANK_INDEX, RANK_MASK, RANK_OF, SET_SIZE, Ask, State, _any_set, _forced_choice, apply,
)


def advance(state: State, seat: int | None, action: object) -> State:
    """``apply``'s state without its events, for replay (engine API, optional). The common
    ask (nearly nine actions in ten) takes ``_ask_fast``; every other action, and every
    ask it does not cover, is ``apply``'s, so each refusal is ``apply``'s too."""
    if type(action) is Ask:
        st = _ask_fast(state, seat, action)
        if st is not None:
            return st
    return apply(state, seat, action)[0]


def _ask_fast(state: State, seat: int | None, a: Ask) -> State | None:
    """``apply(state, seat, a)[0]`` for a legal ask after which the asker may place the set
    that earns another ask, or the turn ends (forced sets, the empty-hand draw) and passes
    to the next seat due one, short of the pile running out in the play phase: the rules of
    ``_ask``, ``_end_turn``, ``_begin_turn`` and ``_next_last_ask`` (docs/RULES.md "Go Fish
    Wildcard"; every check of ``apply`` and ``_ask``) in one pass, one State built. None for
    anything else (a refusal included): ``apply`` then plays it, or says why not.
    tests/protocol/test_advance.py holds it to ``apply``."""
    (n, dealer, turn_timer, phase, hands, pile, wild, sets, scores, turn, step, bonus, last_order, drawer,
     history) = state
    rank = a.rank
    target = a.target
    if (type(seat) is not int or seat != turn or step == "bonus" or type(rank) is not str
            or type(target) is not int or target == seat or not 0 <= target < n):
        return None
    play = phase == "play"
    if not play and phase != "last_asks":
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
        history = history + ((seat, target, r, taken.bit_count(), 0),)
    elif pile:
        # "go fish": the top card of the pile
        c = pile[0]
        pile = pile[1:]
        mine |= 1 << c
        if RANK_OF[c] == r:
            reached = 1 << c
        history = history + ((seat, target, r, 0, 1),)
    else:
        history = history + ((seat, target, r, 0, 0),)
    if play and not pile:
        return None         # the last card was drawn: the last asks begin (_start_last_asks)
    if play and reached and not wild >> r & 1 and (mine & rm).bit_count() >= SET_SIZE:
        # _bonus_open: the asked-for card can go into a set with no wilds
        h[seat] = mine
        return build(State, (n, dealer, turn_timer, phase, tuple(h), pile, wild, sets, scores, turn, "bonus",
                             reached, last_order, drawer, history))
    # _end_turn: the forced sets
    if _any_set(mine, wild):
        sc = list(scores)
        while _any_set(mine, wild):
            cards = _forced_choice(mine, wild)
            mine &= ~((1 << cards[0]) | (1 << cards[1]) | (1 << cards[2]))
            sets = sets + ((seat, cards),)
            wild |= (1 << RANK_OF[cards[0]]) | (1 << RANK_OF[cards[1]]) | (1 << RANK_OF[cards[2]])
            sc[seat] += 1
        scores = tuple(sc)
    if play:
        if not mine:
            # the empty-hand draw: 2, or what is left
            got = pile[:EMPTY_DRAW]
            pile = pile[len(got):]
            for c in got:
                mine |= 1 << c
            if not pile:
                return None     # the last card was drawn: the last asks begin
        h[seat] = mine
        nxt = (seat + 1) % n
        if not h[nxt]:
            return None         # the next turn starts empty (_begin_turn draws)
        return build(State, (n, dealer, turn_timer, phase, tuple(h), pile, wild, sets, scores, nxt, "ask", 0,
                             last_order, drawer, history))
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
