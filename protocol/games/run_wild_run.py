"""Run Wild's ``replay_run``: a run of the log's records folded on a working state (engine
API, optional: ``REPLAY_RUN``, protocol/engine.py).

Adding a card to a meld, taking one, drawing, a new meld, a swap, a Draw-3 and a
declaration of being stuck are nearly every step; between them, a round's end (a play
that empties a hand, or the last seat stuck), the next deal (round 1's dealer drawn by lot
before it), each seat's "ready" and the table's "Go!". Here they are applied to locals
(the hands, the piles' positions, the melds, the stuck and ready flags in lists) and the
State is built once, where the run stops: at any record that is not such a step, a
refused one included (a timer's action, a hash record). A game's log is then one run
from its first record to each hash record. The record a run stops at is left to replay's
fold, which applies it through ``RAW_ADVANCE`` / ``advance`` / ``apply`` with every check
and reason. So a run takes only what ``run_wild_fast``'s map steps and the decoders take,
makes their checks and ``check_permutation``'s, and gives the state ``advance`` gives
(tests/protocol/test_replay_run.py). The rules are ``run_wild``'s, cited there
(docs/RULES.md "Run Wild")."""

from __future__ import annotations

import bisect
from typing import Any

import attrs

from ..cards import int_items
from ..codec import INT_MAX, INT_MIN
from ..logfmt import ActionAccepted, ChanceRecorded
from ..states import build
from .run_wild import (
    COLOUR_OF, DECK_SIZE, FIRST_DRAW3, FIRST_WILD, NUMBER_OF, Deal, Scores, State, TableMeld, _NUMBER_MASK,
    _deal_order, _mask, _shape, hand_points,
)
from .run_wild_fast import _value

_BIT = tuple(1 << c for c in range(DECK_SIZE)).__getitem__


def replay_run(state: State, records: tuple, i: int, limit: int) -> tuple[State, int, int, int]:
    """Fold ``records[i:]`` from ``state`` while each is a record this run applies whole
    (a plain action record, its map; between rounds a chance record or the table's typed
    "Go!"); stop at the first that is not, or whose seq is over ``limit``. Returns (the state, the index of the record it stopped at, the seq of the
    last record applied, how many of them were chance records); the state given if none."""
    (seats, rules, deal, phase, hands, pos, melds, next_meld, draw3s, stuck, ready, score) = state
    if phase == "over":
        return state, i, 0, 0
    in_round = deal.in_round
    piles = deal.piles
    hs = list(hands)
    ps = list(pos)
    ms: list = list(melds)     # TableMelds, and plain tuples for those the run changed
    st = list(stuck)
    rd = list(ready)
    d3 = None                   # draw3s as a list, once one is played
    order = deal.order
    version = rules.version
    chances = 0
    start = i
    end = len(records)
    bounded = limit <= INT_MAX      # replay up to a seq (replay_prefix, upto)
    while True:
        if phase != "playing":
            # between rounds: the deal (and round 1's dealer), each seat ready, "Go!"
            if i >= end or not _between(records[i], phase, seats, deal, rd, limit):
                break
            rec = records[i]
            if type(rec) is ChanceRecorded:
                chances += 1
                if rec.purpose == "first_dealer":
                    # docs/DECISIONS.md "Run Wild": "Who deals the first round: a logged chance
                    # outcome": permutation[0]
                    dealer = rec.permutation[0]
                    deal = Deal(1, dealer, _deal_order(seats, dealer, deal.order), deal.in_round, deal.piles)
                else:
                    # _deal: the deck dealt out one at a time from the dealer's left, eight of
                    # each pile to the hand (docs/RULES.md "Run Wild")
                    playing = score.next_seats
                    if phase == "dealing":
                        rnd, dealer = 1, deal.dealer
                    else:
                        rnd = deal.round + 1
                        dealer = next(s for s in ((deal.dealer + k) % seats for k in range(1, seats + 1))
                                      if s in playing)
                    order = _deal_order(seats, dealer, playing)
                    perm = rec.permutation
                    k = len(order)
                    dealt: list = [()] * seats
                    for j, s in enumerate(order):
                        dealt[s] = tuple(perm[j::k])
                    h = rules.hand_size
                    hs = [_mask(p[:h]) for p in dealt]
                    ps = [min(h, len(p)) for p in dealt]
                    in_round = tuple(s in playing for s in range(seats))
                    piles = tuple(dealt)
                    deal = Deal(rnd, dealer, order, in_round, piles)
                    phase = "ready"
                    ms = []
                    d3 = None
                    draw3s = ((),) * seats
                    st = [False] * seats
                    rd = [False] * seats
                    score = attrs.evolve(score, out=None, ended_by=None)
            elif (rec["action"] if type(rec) is dict else rec.action)["kind"] == "ready":
                rd[rec["seat"] if type(rec) is dict else rec.seat] = True
            else:
                phase = "playing"               # "Go!"
            i += 1
            continue
        ended = None                # why a play ended the round (and who went out)
        out = None
        while i < end:
            rec = records[i]
            if type(rec) is not dict:
                break
            seat = rec["seat"]
            # advance's checks for every play: a seat of the table, in the round (under way)
            if type(seat) is not int or not 0 <= seat < seats or not in_round[seat] or (bounded and rec["seq"] > limit):
                break
            a = rec["action"]
            kind = a.get("kind")
            if kind == "add":
                # _add_map: an int meld from 0, a card id, an int value or None or none, no other key
                meld_id = a.get("meld")
                c = a.get("card")
                value = a.get("value")
                na = len(a)
                if not (type(meld_id) is int and type(c) is int and 0 <= meld_id <= INT_MAX and 0 <= c < FIRST_DRAW3
                        and (na == 3 or (na == 4 and "value" in a
                                         and (value is None or (type(value) is int and INT_MIN <= value <= INT_MAX))))
                        and ms):
                    break
                # _add: a hand card into the meld where _find_meld looks first, short of going out
                j = meld_id - ms[0][0]
                if not 0 <= j < len(ms):
                    break
                bit = 1 << c
                hand = hs[seat]
                if not hand & bit:
                    break
                if c < FIRST_WILD:
                    v = NUMBER_OF[c]
                    if value is not None and value != v:
                        break
                elif type(value) is int and 1 <= value <= 12:
                    v = value
                else:
                    break
                mid, mk, cards, vals, history = ms[j]
                if mid != meld_id:
                    break
                if mk == "set":
                    cap = rules.max_set_size
                    if v != vals[0] or (cap and len(cards) >= cap):
                        break
                    k = bisect.bisect(cards, c)     # a set's cards sit in id order
                    cs, vs = cards[:k] + (c,) + cards[k:], vals + (v,)
                else:
                    nums = history & _NUMBER_MASK   # _run_colour
                    if c < FIRST_WILD and nums and COLOUR_OF[(nums & -nums).bit_length() - 1] != COLOUR_OF[c]:
                        break
                    if v == vals[0] - 1:
                        cs, vs = (c,) + cards, (v,) + vals
                    elif v == vals[-1] + 1:
                        cs, vs = cards + (c,), vals + (v,)
                    else:
                        break
                hand &= ~bit
                ms[j] = (mid, mk, cs, vs, history | bit)
                hs[seat] = hand
                if not hand:
                    # out: the round ends (_after_play, _with_hand clearing the seat's stuck flag)
                    st[seat] = False
                    ended, out = "out", seat
                    i += 1
                    break
            elif kind == "take":
                # _take_map: an int meld from 0, a card id, no other key
                meld_id = a.get("meld")
                c = a.get("card")
                if not (type(meld_id) is int and type(c) is int and 0 <= meld_id <= INT_MAX and 0 <= c < DECK_SIZE
                        and len(a) == 3 and ms):
                    break
                # _take: a card from a meld to the hand
                j = meld_id - ms[0][0]
                if not 0 <= j < len(ms):
                    break
                mid, mk, cards, vals, history = ms[j]
                if mid != meld_id or c not in cards:
                    break
                k = cards.index(c)
                size = len(cards)
                # what stays is 3+ cards, a run is not split, a number card stays unless all-wild is on
                if size <= 3 or (mk == "run" and 0 < k < size - 1):
                    break
                rest = cards[:k] + cards[k + 1:]
                if c < FIRST_WILD and not rules.allow_all_wild_melds and min(rest) >= FIRST_WILD:
                    break
                ms[j] = (mid, mk, rest, vals[:k] + vals[k + 1:], history)
                hs[seat] |= 1 << c
            elif kind == "draw":
                # _draw: the top card of the seat's own pile
                p = ps[seat]
                pile = piles[seat]
                if len(a) != 1 or p >= len(pile):
                    break
                ps[seat] = p + 1
                hs[seat] |= 1 << pile[p]
            elif kind == "meld":
                # _meld_map: card ids and (or not) int values, each a list of at most 72, no other key
                cards = int_items(a.get("cards"), DECK_SIZE, 0, DECK_SIZE - 1)
                na = len(a)
                if na == 2:
                    given: tuple | None = ()
                elif na == 3 and "values" in a:
                    given = int_items(a["values"], DECK_SIZE, INT_MIN, INT_MAX)
                else:
                    break
                if cards is None or given is None or (given and len(given) != len(cards)):
                    break
                # _meld: a new set or run from the hand, short of going out
                hand = hs[seat]
                mask = 0
                for c in cards:
                    # _meldable, each card once
                    if not c < FIRST_DRAW3 or not hand >> c & 1 or mask >> c & 1:
                        mask = -1
                        break
                    mask |= 1 << c
                if mask < 0:
                    break
                if given:
                    values = tuple([_value(c, v) for c, v in zip(cards, given)])
                    if -1 in values:
                        break
                elif mask >> FIRST_WILD:
                    break                           # a wild with no value
                else:
                    values = tuple([NUMBER_OF[c] for c in cards])
                mk, cs, vs, problem = _shape(cards, values, rules)
                if problem:
                    break
                hand &= ~mask
                hs[seat] = hand
                ms.append((next_meld, mk, cs, vs, mask))
                next_meld += 1
                if not hand:
                    # out: the round ends (_after_play, _with_hand clearing the seat's stuck flag)
                    st[seat] = False
                    ended, out = "out", seat
                    i += 1
                    break
            elif kind == "swap":
                # _swap_map: an int meld from 0, card ids take and give, an int value or None or
                # none, no other key
                meld_id = a.get("meld")
                out_c = a.get("take")
                g = a.get("give")
                value = a.get("value")
                na = len(a)
                if not (type(meld_id) is int and type(out_c) is int and type(g) is int and 0 <= meld_id <= INT_MAX
                        and 0 <= out_c < DECK_SIZE and 0 <= g < FIRST_DRAW3
                        and (na == 4 or (na == 5 and "value" in a
                                         and (value is None or (type(value) is int and INT_MIN <= value <= INT_MAX))))
                        and ms):
                    break
                # _swap: a hand card for the meld card it stands in for
                j = meld_id - ms[0][0]
                if not 0 <= j < len(ms):
                    break
                mid, mk, cards, vals, history = ms[j]
                hand = hs[seat]
                bit = 1 << g
                if mid != meld_id or out_c not in cards or not hand & bit:
                    break
                k = cards.index(out_c)
                if _value(g, value) != vals[k]:
                    break
                if g < FIRST_WILD:
                    # in a run every card, wilds included, is of the run's colour
                    nums = history & _NUMBER_MASK
                    if mk == "run" and nums and COLOUR_OF[(nums & -nums).bit_length() - 1] != COLOUR_OF[g]:
                        break
                elif out_c < FIRST_WILD and not rules.allow_all_wild_melds and \
                        all(x >= FIRST_WILD for jj, x in enumerate(cards) if jj != k):
                    break
                cs = cards[:k] + (g,) + cards[k + 1:]
                if mk == "set":
                    cs = tuple(sorted(cs))          # a set's cards sit in id order
                ms[j] = (mid, mk, cs, vals, history | bit)
                hs[seat] = (hand & ~bit) | 1 << out_c
            elif kind == "draw3":
                # a Draw-3 (a card id, no other key) from the hand, short of going out: every
                # other seat of the round draws 3 (or what its pile holds); with rules version
                # 2, a stuck seat that drew is stuck no more
                c = a.get("card")
                if len(a) != 2 or type(c) is not int or not FIRST_DRAW3 <= c < DECK_SIZE:
                    break
                bit = 1 << c
                hand = hs[seat]
                if not hand & bit:
                    break
                hand &= ~bit
                if d3 is None:
                    d3 = list(draw3s)
                d3[seat] = d3[seat] + (c,)
                hs[seat] = hand
                if not hand:
                    # out: the round ends (_after_play: the others draw nothing; _with_hand clearing the seat's stuck flag)
                    st[seat] = False
                    ended, out = "out", seat
                    i += 1
                    break
                clear = version >= 2 and True in st
                for s in order:
                    if s != seat:
                        p = ps[s]
                        got = piles[s][p:p + 3]
                        if got:
                            hs[s] |= sum(map(_BIT, got))
                            ps[s] = p + len(got)
                            if clear and st[s]:
                                st[s] = False
                hs[seat] = hand
            elif kind == "stuck":
                # _stuck: once, and not the last of the round to be stuck (the round ends)
                if len(a) != 1 or st[seat]:
                    break
                st[seat] = True
                for s in order:
                    if not st[s]:
                        break
                else:
                    ended = "all_stuck"         # every seat stuck: the round ends (_stuck)
                    i += 1
                    break
                i += 1
                continue
            else:
                break
            if st[seat]:
                st[seat] = False        # _with_hand: cleared by their next action
            i += 1
        if ended is None:
            break
        # _end_round: docs/DECISIONS.md "Run Wild": "Cards left in draw piles score nothing;
        # hand cards score 5 (number), 10 (wild), 10 (Draw-3)." Then the next round, a
        # tie-break, or the end of the game
        round_scores = tuple(hand_points(hs[s]) if in_round[s] else None for s in range(seats))
        totals = tuple(score.totals[s] + (round_scores[s] or 0) for s in range(seats))
        phase, nxt = "scored", tuple(range(seats))
        winners: tuple[int, ...] = ()
        if deal.round >= rules.rounds:
            # the lowest total wins; players tied for it play further rounds among themselves
            low = min(totals[s] for s in order)
            tied = tuple(s for s in range(seats) if in_round[s] and totals[s] == low)
            if len(tied) == 1:
                phase, winners = "over", tied
            else:
                nxt = tied
        score = Scores(score.rounds + (round_scores,), totals, out, ended, winners, nxt)
    if i == start:
        return state, i, 0, 0
    last = records[i - 1]
    # the melds the run changed or made are plain tuples: TableMelds again
    ms = [m if type(m) is TableMeld else build(TableMeld, m) for m in ms]
    return (build(State, (seats, rules, deal, phase, tuple(hs), tuple(ps), tuple(ms), next_meld,
                          draw3s if d3 is None else tuple(d3), tuple(st),
                          tuple(rd), score)), i, last["seq"] if type(last) is dict else last.seq, chances)


def _between(rec: Any, phase: str, seats: int, deal: Deal, ready: list, limit: int) -> bool:
    """Whether the run takes ``rec`` between two rounds, as ``apply`` would: the chance
    outcome the table waits for (check_permutation's checks), a seat's "ready" or the
    table's "Go!" (as their decoders take them: the kind alone)."""
    t = type(rec)
    if t is ChanceRecorded:
        if rec.seq > limit:
            return False
        if phase == "dealing" and deal.dealer < 0:
            want, size = "first_dealer", seats
        elif phase == "dealing" or phase == "scored":
            want, size = "deal", DECK_SIZE
        else:
            return False
        perm = rec.permutation
        return rec.purpose == want and len(perm) == size and set(perm) == set(range(size))
    if t is dict:
        seq, seat, a = rec["seq"], rec["seat"], rec["action"]
    elif t is ActionAccepted:
        seq, seat, a = rec.seq, rec.seat, rec.action
    else:
        return False
    if phase != "ready" or seq > limit or len(a) != 1:
        return False
    kind = a.get("kind")
    if kind == "ready":
        return type(seat) is int and 0 <= seat < seats and deal.in_round[seat] and not ready[seat]
    # "Go!" once every seat of the round is ready
    return kind == "go" and seat is None and all(ready[s] for s in deal.order)
