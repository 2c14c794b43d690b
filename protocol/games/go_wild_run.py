"""Go Wild!'s ``replay_run``: a run of the log's records folded on a working state (engine
API, optional: ``REPLAY_RUN``, protocol/engine.py).

Nearly every step of a game is a play. Here the plays, and the chance outcomes a game
waits for (the first leader, the deal, a reshuffle within a refill), are applied to locals
(the hands, the trick and the scores in lists) and the State is built once, where the
run stops: at any record that is not such a step, a refused one included, and after the
play that ends the game. A game's log is then one run from its first record to its
closing hash. The record a run stops at is left to replay's fold, which applies it
through ``RAW_ADVANCE`` / ``advance`` with every check and reason. So a run takes only
what ``_play_map`` and ``check_permutation`` take and gives the state ``advance`` gives
(tests/protocol/test_replay_run.py). The rules are ``go_wild``'s, cited there
(docs/RULES.md "Go Wild!")."""

from __future__ import annotations

from ..codec import INT_MAX
from ..logfmt import ChanceRecorded
from ..states import build
from .go_wild import (
    CHOOSING_LEADER, COLOUR_MASK, DEALING, DECK_SIZE, FIRST_WILD, HAND_SIZE, MIXED, OVER, PLAYING,
    RESHUFFLING, SET, SLOUGH, TRICKS_PER_ROUND, State, _BIT_OF, _CLOCKWISE, _DECK_IDS, _OTHER_COLOURS, cards_of,
)


def replay_run(state: State, records: tuple, i: int, limit: int) -> tuple[State, int, int, int]:
    """Fold ``records[i:]`` from ``state`` while each is a plain action record (its map) or
    a chance record that this run applies whole; stop at the first that is not, or whose
    seq is over ``limit``. Returns (the state, the index of the record it stopped at, the seq of the
    last record applied, how many of them were chance records); the state given if none."""
    (rules, phase, hands, deck, discard, trick, best, best_size, leader, turn, wild_one, rnd, trick_no,
     scores, winners, deal_next, last_trick) = state
    # the chance outcome the table waits for (None: a play): the first leader, the deal,
    # a reshuffle within a refill
    if phase not in _WAITS:
        return state, i, 0, 0                   # the game is over
    wait = _WAITS[phase]
    chances = 0
    h = list(hands)
    n = len(h)
    sc = list(scores)
    target = rules.target
    # the trick's plays (seat, cards, kind), their cards as the log's lists (tuples only in
    # the State built at the end: of the tricks a run folds, only the last is kept)
    plays = list(trick)
    last_plays = None           # the last trick ended in the run: its plays, the rest of it
    top = 0                     # the deck is deck[top:]
    over = False
    # the cards of the trick so far (played once each: the sum of their bits is their union)
    in_trick = 0
    for p in plays:
        in_trick |= sum(map(_BIT_OF, p[1]))
    start = i
    end = len(records)
    bounded = limit <= INT_MAX      # replay up to a seq (replay_prefix, upto)
    while i < end:
        rec = records[i]
        if wait is not None:
            # _chance: check_permutation's checks (any other record, or a refusal, left to
            # the fold)
            if type(rec) is not ChanceRecorded or rec.purpose != wait or (bounded and rec.seq > limit):
                break
            perm = rec.permutation
            if wait == "first_player":
                # docs/DECISIONS.md "Go Wild!": who leads the first trick: permutation[0]
                if len(perm) != n or set(perm) != set(range(n)):
                    break
                leader = perm[0]
                wait = "deal"
                chances += 1
                i += 1
                continue
            if wait == "deal":
                # shuffled, twelve each dealt one at a time clockwise from the first leader
                if len(perm) != DECK_SIZE or set(perm) != _DECK_IDS:
                    break
                deck = tuple(perm)
                deal_next = leader
            else:
                # "reshuffle": the discard pile (lowest id first), shuffled, is the new deck,
                # and the refill goes on from the seat it stopped at
                size = discard.bit_count()
                if len(perm) != size or set(perm) != set(range(size)):
                    break
                deck = tuple(map(cards_of(discard).__getitem__, perm))
                discard = 0
            # _refill
            top, short = _deal_round(h, deal_next, deck, 0)
            if short >= 0:
                deal_next = short
                wait = "reshuffle"
            else:
                wait = None
                rnd += 1
                turn = deal_next = leader
                trick_no = 1
            chances += 1
            i += 1
            continue
        if type(rec) is not dict:
            break
        seat = rec["seat"]
        # _play's checks: the seat to move; what _play_map takes (a list of at most 108
        # card ids, no other key); at least one card, each once, held; one colour; wilds
        # only as the rules allow them
        if type(seat) is not int or seat != turn or (bounded and rec["seq"] > limit):
            break
        a = rec["action"]
        cards = a.get("cards")
        if a.get("kind") != "play" or len(a) != 2 or type(cards) is not list:
            break
        k = len(cards)
        hand = h[seat]
        if k == 1:
            # one card (nearly half the plays): a set of one, or a wild sloughed
            c = cards[0]
            if type(c) is not int or not 0 <= c < DECK_SIZE:
                break
            m = 1 << c
            if not hand & m:
                break
            if c < FIRST_WILD:
                kind = SET
                size = 1
            elif seat == wild_one and hand & COLOUR_MASK:
                break
            else:
                kind = SLOUGH
                size = 0
        else:
            if k == 2:
                c, d = cards
                if (type(c) is not int or type(d) is not int or not 0 <= c < DECK_SIZE or not 0 <= d < DECK_SIZE
                        or c == d):
                    break
                m = (1 << c) | (1 << d)
            else:
                if not 0 < k <= DECK_SIZE:
                    break
                ok = True
                for c in cards:
                    if type(c) is not int or not 0 <= c < DECK_SIZE:
                        ok = False
                        break
                if not ok:
                    break
                m = sum(map(_BIT_OF, cards))
                if m.bit_count() != k:
                    break
            if m & hand != m:
                break
            colour_cards = m & COLOUR_MASK
            if colour_cards & _OTHER_COLOURS[(m & -m).bit_length() - 1]:
                break
            wilds = (m >> FIRST_WILD).bit_count()
            if not wilds:
                kind = SET
                size = k
            elif not colour_cards:
                if seat == wild_one and hand & COLOUR_MASK:
                    break
                kind = SLOUGH
                size = 0
            else:
                if seat != wild_one or wilds > k - wilds:
                    break
                kind = MIXED
                size = k
        # the next seat clockwise that holds cards, before the leader; none: the trick ends
        nxt = seat + 1 if seat + 1 < n else 0
        while nxt != leader:
            if h[nxt]:
                break
            nxt = nxt + 1 if nxt + 1 < n else 0
        else:
            nxt = -1
        if nxt >= 0:
            h[seat] = hand ^ m
            plays.append((seat, cards, kind))
            in_trick |= m
            if size > best_size:
                best, best_size = seat, size
            turn = nxt
            i += 1
            continue
        # _end_trick: the trick is scored and the next one starts, or the round ends and
        # the hands are refilled; unless the game ends, or the deck runs out in the refill
        # (left to the fold)
        no = trick_no
        b = seat if size > best_size else best
        if b is not None and sc[b] + no >= target:
            # docs/DECISIONS.md "Go Wild!": "The game ends the moment a player reaches 20
            # points, even mid-round"
            h[seat] = hand ^ m
            plays.append((seat, cards, kind))
            discard |= in_trick | m
            last_plays = plays
            last_trick = (b, no, no, rnd)
            sc[b] += no
            winners = (b,)
            plays = []
            best, best_size = None, 0
            turn = None
            over = True
            i += 1
            break
        hand ^= m
        next_leader = b if b is not None else leader
        lead = next_leader
        if no < TRICKS_PER_ROUND and not (hand if lead == seat else h[lead]):
            # the next seat clockwise that holds cards leads (none: the round ends)
            s = lead + 1 if lead + 1 < n else 0
            while s != lead:
                if hand if s == seat else h[s]:
                    break
                s = s + 1 if s + 1 < n else 0
            else:
                s = -1
            lead = s
        if no >= TRICKS_PER_ROUND or lead < 0:
            # _refill: one card at a time clockwise from the next leader to every seat
            # below twelve; if the deck runs out, the discard pile (this trick's cards in it)
            # is reshuffled (the next record: its chance outcome) and the refill goes on
            h[seat] = hand
            top, short = _deal_round(h, next_leader, deck, top)
            if short >= 0:
                wait = "reshuffle"
                lead = next_leader
                deal_next = short
                turn = None
                rnd_next = rnd
                no_next = no
            else:
                rnd_next = rnd + 1
                lead = next_leader
                deal_next = lead
                no_next = 1
        else:
            h[seat] = hand
            rnd_next = rnd
            no_next = no + 1
        plays.append((seat, cards, kind))
        discard |= in_trick | m
        last_plays = plays
        last_trick = (b, no, no, rnd)
        if b is not None:
            sc[b] += no
            if no == 1 and b != wild_one:
                wild_one = b
        plays = []
        in_trick = 0
        best, best_size = None, 0
        leader = lead
        if wait is None:
            turn = lead
        trick_no = no_next
        rnd = rnd_next
        i += 1
    if i == start:
        return state, i, 0, 0
    last = records[i - 1]
    if last_plays is not None:
        last_trick = (tuple([(s, tuple(cs), k) for s, cs, k in last_plays]),) + last_trick
    return (build(State, (rules, OVER if over else _PHASES[wait], tuple(h), deck[top:] if top else deck, discard,
                          tuple([(s, tuple(cs), k) for s, cs, k in plays]), best, best_size, leader, turn, wild_one, rnd, trick_no, tuple(sc), winners,
                          deal_next, last_trick)),
            i, last["seq"] if type(last) is dict else last.seq, chances)


#: phase -> the chance outcome the table waits for (None: a play), in every phase but the game's end
_WAITS: dict[str, str | None] = {PLAYING: None, RESHUFFLING: "reshuffle", DEALING: "deal",
                                 CHOOSING_LEADER: "first_player"}
_PHASES: dict[str | None, str] = {wait: phase for phase, wait in _WAITS.items()}


def _deal_round(h: list, first: int, deck: tuple, top: int) -> tuple[int, int]:
    """``_refill``'s deal into the hands ``h``, from ``deck[top:]``: one card at a time
    clockwise from ``first`` to every seat below twelve, pass after pass. Returns the new
    ``top`` and, if the deck runs out first, the seat due the next card (else -1)."""
    need = [HAND_SIZE - x.bit_count() for x in h]
    if sum(need) > len(deck) - top:
        recipients = _recipients(h, first)
        for s, c in zip(recipients, deck[top:]):
            h[s] |= _BIT_OF(c)
        return len(deck), recipients[len(deck) - top]
    order = _CLOCKWISE[len(h)][first]
    # pass p: a card to each seat (clockwise) still short after p cards
    for p in range(max(need)):
        for s in order:
            if need[s] > p:
                h[s] |= 1 << deck[top]
                top += 1
    return top, -1


def _recipients(hands: list, first: int) -> list:
    """``_refill``'s deal: who gets each card, one at a time clockwise from ``first`` to
    every seat below twelve (the passes between two shortfalls that some seat has go to
    the same seats in the same order: listed a stretch at a time)."""
    need = [HAND_SIZE - x.bit_count() for x in hands]
    order = _CLOCKWISE[len(hands)][first]
    recipients: list = []
    low = 0
    for level in sorted(set(need)):
        if level > low:
            recipients += [s for s in order if need[s] >= level] * (level - low)
            low = level
    return recipients

