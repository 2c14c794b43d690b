"""Wild Shots' ``replay_run``: a run of the log's plays folded on a working state (engine
API, optional: ``REPLAY_RUN``, protocol/engine.py).

Nearly every step of a game is a card played within a round. Here they are applied to
locals (the hands, the cards won and the trick in lists) and the State is built once,
where the run stops: at any record that is not such a play, a refused play included, and
at the play that ends a round. That record is left to replay's fold, which applies it
through ``RAW_ADVANCE`` / ``advance`` with every check and reason. So a run takes only
what ``_play_map`` takes and gives the state ``advance`` gives
(tests/protocol/test_replay_run.py). The rules are ``wild_shots``'s, cited there
(docs/RULES.md "Wild Shots").
"""

from __future__ import annotations

from ..codec import INT_MAX
from ..states import build
from .wild_shots import N_CARDS, SUIT, TRICKS, State, _best, _last_trick

_SUIT_OF = SUIT.__getitem__


def replay_run(state: State, records: tuple, i: int, limit: int) -> tuple[State, int, int, int]:
    """Fold ``records[i:]`` from ``state`` while each is a plain action record (its map)
    that this run applies whole; stop at the first that is not, or whose seq is over
    ``limit``. Returns (the state, the index of the record it stopped at, the seq of the
    last record applied, how many of them were chance records); the state given if none."""
    r, phase, rnd, starter, hands, aside, oil, trick_no, leader, turn, trump, trick, won, last, tally = state
    if phase != "playing":
        return state, i, 0, 0
    n = r.seats
    symbols = r.symbols
    h = list(hands)
    taken = list(won)
    cards = list(trick)
    led = SUIT[cards[0]] if cards else -1
    start = i
    end = len(records)
    bounded = limit <= INT_MAX      # replay up to a seq (replay_prefix, upto)
    while i < end:
        rec = records[i]
        if type(rec) is not dict:
            break
        seat = rec["seat"]
        # _play's checks: the seat to move, a card of the deck (what _play_map takes: an
        # int from 0 to 39, no other key), held, following suit if it can
        if type(seat) is not int or seat != turn or (bounded and rec["seq"] > limit):
            break
        a = rec["action"]
        card = a.get("card")
        if a.get("kind") != "play" or len(a) != 2 or type(card) is not int or not 0 <= card < N_CARDS:
            break
        hand = h[seat]
        try:
            k = hand.index(card)
        except ValueError:
            break
        last_card = len(cards) + 1 == n
        if cards:
            # Rulebook "Follow Suit": play the led suit if you hold it
            if SUIT[card] != led and led in map(_SUIT_OF, hand):
                break
            if last_card and trick_no + 1 >= TRICKS:
                break       # the round ends (_score_round): left to the fold
        else:
            led = SUIT[card]
        h[seat] = hand[:k] + hand[k + 1:]
        cards.append(card)
        i += 1
        if not last_card:
            turn = seat + 1 if seat + 1 < n else 0     # clockwise = the next seat number
            continue
        # _finish_trick: the winning card's seat takes the cards, leads the next trick and
        # reveals its trump
        w = leader + _best(cards, trump, symbols)
        if w >= n:
            w -= n
        t = tuple(cards)
        taken[w] = taken[w] + t
        last = _last_trick(t, leader, w, trump, rnd + 1, trick_no + 1)
        trick_no += 1
        trump = r.oil[oil[trick_no]]
        leader = turn = w
        cards = []
    if i == start:
        return state, i, 0, 0
    return (build(State, (r, "playing", rnd, starter, tuple(h), aside, oil, trick_no, leader, turn, trump,
                          tuple(cards), tuple(taken), last, tally)), i, records[i - 1]["seq"], 0)
