"""Wild Shots' ``expert`` bot: determinized Monte-Carlo from its own seat's view and memory.

It samples worlds that agree with all its seat has seen (its hand; every card played this
round, ``bot_watch``; each player's hand size; the suits a player showed void in; the
Snake Oil cards revealed so far), plays each card it may play in each world and on to the
round's end with a quick policy for every seat, and picks the card with the best mean
chance to win the game once the round is scored (``win_chance``: the totals, the points
each seat took so far this round, the spread of the rounds to come), the round's points
breaking near ties. The same worlds serve every candidate card, so the comparison is not
drowned by their luck.

The budget is a number of playouts (``PLAYOUTS``), not a time: the same generator gives
the same move on any machine (the arena's games do not depend on --workers). It is pure
and CPU-bound: a networked bot runs it off its event loop (headless/bots.py: a worker
thread; the server's bots, its search processes).
"""

from __future__ import annotations

import math
import random

from wildtable.protocol.games import wild_shots_data as data
from wildtable.protocol.games.wild_shots import N_CARDS, TRICKS

from . import best_first

PLAYOUTS = 240          # per move, spread over the candidate cards (at least MIN_WORLDS each)
MIN_WORLDS = 12
_SYM = {name: i for i, name in enumerate(data.SYMBOLS)}
SUIT = tuple(c // 10 for c in range(N_CARDS))
VALUE = tuple(c % 10 + 1 for c in range(N_CARDS))


def voids(memo: dict | None) -> set[tuple[int, int]]:
    """(seat, suit) pairs: that seat did not follow that suit this round, so holds none."""
    return set(memo.get("ws_void") or ()) if memo else set()


def sample_world(view: dict, unknown: list[int], void: set, rng: random.Random) -> list[list[int]]:
    """Every seat's hand in one world: this seat's as it is; the others dealt from the
    cards it has not seen, each as many as it holds, none of a suit it showed void in
    (dealt at random, then each misplaced card swapped with one of a seat, or of the
    cards set aside, that may hold it, until none is misplaced: the real deal shows such
    a world exists). What is left over is set aside."""
    seat = view["seat"]
    players = view["players"]
    pool = list(unknown)
    rng.shuffle(pool)
    hands: list[list[int]] = [[] for _ in players]
    banned: list[set] = [set() for _ in players] + [set()]       # the last: the cards set aside
    for who, suit in void:
        if 0 <= who < len(players) and who != seat:
            banned[who].add(suit)
    at = 0
    for p in players:
        s = p["seat"]
        if s != seat:
            hands[s] = pool[at:at + p["hand"]]
            at += p["hand"]
    hands[seat] = list(view.get("hand") or ())
    places = [h if s != seat else [] for s, h in enumerate(hands)] + [pool[at:]]
    for _ in range(20 + 8 * len(pool)):
        bad = [(a, i) for a, h in enumerate(places) for i, c in enumerate(h) if SUIT[c] in banned[a]]
        if not bad:
            break
        a, i = bad[rng.randrange(len(bad))]
        c = places[a][i]
        swaps = [(b, k) for b, h in enumerate(places) if b != a and SUIT[c] not in banned[b]
                 for k, d in enumerate(h) if SUIT[d] not in banned[a]]
        if not swaps:       # no direct swap: move it anyway; the card it displaces moves on next
            swaps = [(b, k) for b, h in enumerate(places) if b != a and SUIT[c] not in banned[b]
                     for k in range(len(h))]
        if not swaps:
            break
        b, k = swaps[rng.randrange(len(swaps))]
        places[a][i], places[b][k] = places[b][k], c
    for s in range(len(players)):
        if s != seat:
            hands[s] = places[s]
    return hands


def _future_trumps(view: dict, rng: random.Random) -> list[int]:
    """The trump symbols of the tricks after this one: the Snake Oil cards not yet revealed, shuffled."""
    left = dict(view.get("snake_oil") or {})
    for name in view.get("snake_oil_revealed") or ():
        left[name] = left.get(name, 0) - 1
    pile = [_SYM[name] for name, k in left.items() if name in _SYM for _ in range(max(k, 0))]
    rng.shuffle(pile)
    return pile


def _beats(c: int, best: int, led: int, syms: list[int], trump: int) -> bool:
    """Does ``c``, played later, take the trick from ``best`` (rulebook "Trump", as the
    engine: a trump-symbol card beats any other, the higher of two, equal values to the
    earlier; else the higher card of the led suit)?"""
    if syms[c] == trump:
        return syms[best] != trump or VALUE[c] > VALUE[best]
    return syms[best] != trump and SUIT[c] == led and VALUE[c] > VALUE[best]


def _quick(hand: list[int], best: int, led: int, syms: list[int], trump: int, pen: list[int],
           last: bool) -> int:
    """The playout policy: lead low (``best`` -1), no trump-symbol card; following, duck
    under the winner with the highest card that does, else (the trick is lost anyway) the
    highest when last, the lowest otherwise; void, shed the costliest card that does not
    take the trick (a trump-symbol card would win it back)."""
    if best < 0:
        return min(hand, key=lambda c: (pen[c], syms[c] == trump, VALUE[c]))
    follow = [c for c in hand if SUIT[c] == led]
    if not follow:
        safe = [c for c in hand if not _beats(c, best, led, syms, trump)]
        if safe:
            return max(safe, key=lambda c: (pen[c], VALUE[c]))
        return min(hand, key=lambda c: (pen[c], VALUE[c]))
    under = [c for c in follow if not _beats(c, best, led, syms, trump)]
    if under:
        return max(under, key=VALUE.__getitem__)
    return max(follow, key=VALUE.__getitem__) if last else min(follow, key=VALUE.__getitem__)


def playout(hands: list[list[int]], trick: list[int], turn: int, trick_no: int, trump: int,
            trumps: list[int], syms: list[int], pen: list[int], first: int) -> list[int]:
    """Penalty points each seat takes from here to the round's end, ``first`` played now
    by ``turn`` and every other card by the quick policy. ``hands`` is consumed."""
    n = len(hands)
    taken = [0] * n
    leader = (turn - len(trick)) % n
    led, best, winner, points = -1, -1, -1, 0
    for k, c in enumerate(trick):             # the trick so far: who leads it now
        if k == 0:
            led, best, winner = SUIT[c], c, leader
        elif _beats(c, best, led, syms, trump):
            best, winner = c, (leader + k) % n
        points += pen[c]
    played = len(trick)
    nxt = 0                                   # the next trick's trump is trumps[nxt]
    card = first
    while True:
        hands[turn].remove(card)
        if best < 0:
            led, best, winner = SUIT[card], card, turn
        elif _beats(card, best, led, syms, trump):
            best, winner = card, turn
        points += pen[card]
        played += 1
        turn = (turn + 1) % n
        if played == n:
            taken[winner] += points
            trick_no += 1
            if trick_no >= TRICKS or not hands[winner]:
                return taken
            trump = trumps[nxt] if nxt < len(trumps) else -1
            nxt += 1
            turn, led, best, points, played = winner, -1, -1, 0, 0
        card = _quick(hands[turn], best, led, syms, trump, pen, played == n - 1)


def symbols_and_penalties(view: dict) -> tuple[list[int], list[int]]:
    """Per card: its symbol's number (-1: none) and what taking it costs this round."""
    names = view.get("symbols") or []
    syms = [_SYM.get(x, -1) if x else -1 for x in names] if len(names) == N_CARDS else [-1] * N_CARDS
    hits = view.get("hits") or {}
    return syms, [hits.get(names[c], 0) if syms[c] >= 0 else 0 for c in range(N_CARDS)]


ROUND_SD = 0.6     # one seat's penalty points in a round: standard deviation / mean (a rough fit)
TIE_WEIGHT = 0.003  # the round's points (own less the others' mean) break ties between win chances


def _round_totals(names: list, n: int) -> list[float]:
    """Each round's penalty points in all (its hit symbols on this table's cards)."""
    return [float(sum(hits.get(x, 0) for x in names if x)) for hits in data.ROUND_OVERVIEW]


def _spread_after(view: dict, n: int) -> float:
    """The spread (standard deviation) of the difference between two seats' points in the
    rounds after this one: how much the game may still turn."""
    names = view.get("symbols") or []
    rnd = view.get("round") or 1
    last = view.get("rounds") or len(data.ROUND_OVERVIEW)      # setting rounds: fewer to come
    var = sum((ROUND_SD * t / n) ** 2 for t in _round_totals(names, n)[rnd:last])
    return math.sqrt(2 * var)


def taken_so_far(view: dict, memo: dict | None, pen: list[int]) -> list[int]:
    """Each seat's penalty points from the tricks of this round already taken: its own
    (``own_tricks``) and the others' as this seat saw each trick won (``bot_watch``)."""
    taken = [0] * len(view["players"])
    seat = view["seat"]
    if memo and memo.get("ws_round") == view.get("round"):
        for who, cards in (memo.get("ws_won") or {}).values():
            if 0 <= who < len(taken) and who != seat:
                taken[who] += sum(pen[c] for c in cards)
    taken[seat] = sum(pen[c] for t in view.get("own_tricks") or () for c in t)
    return taken


def win_chance(final: list[float], seat: int, spread: float) -> float:
    """This seat's chance to win from the seats' points so far (lowest wins; a shared win
    counts 1/k), each other seat's lead or deficit blurred by ``spread`` points still to come."""
    me = final[seat]
    if spread <= 0:
        low = min(final)
        return 1.0 / final.count(low) if me == low else 0.0
    p = 1.0
    for j, f in enumerate(final):
        if j != seat:
            p *= 0.5 * (1.0 + math.erf((f - me) / (spread * math.sqrt(2))))
    return p


def expert_candidates(view: dict, memo: dict | None, rng: random.Random, unknown: list[int],
                      playouts: int | None = None) -> list[dict]:
    """The cards this seat may play, best first by their mean over sampled worlds
    (``playouts`` in all, default PLAYOUTS; ``expert_values``)."""
    playable = list(view.get("playable") or ())
    if len(playable) <= 1:
        return [{"kind": "play", "card": c} for c in playable]
    total = expert_values(view, memo, rng, unknown, playouts)
    order = best_first(playable, lambda c: (total[c], VALUE[c]), rng)
    return [{"kind": "play", "card": c} for c in order]


def expert_values(view: dict, memo: dict | None, rng: random.Random, unknown: list[int],
                  playouts: int | None = None) -> dict[int, float]:
    """Each card this seat may play and its mean over the sampled worlds, lower is better:
    less the chance to win the game once the round is scored (totals, the points taken so
    far, the spread of the rounds to come), plus TIE_WEIGHT times the round's points (own
    less the others' mean), which break near ties."""
    playouts = PLAYOUTS if playouts is None else playouts
    seat = view["seat"]
    playable = list(view.get("playable") or ())
    if not playable:
        return {}
    syms, pen = symbols_and_penalties(view)
    trick = [x["card"] for x in view.get("trick") or ()]
    trump = _SYM.get(view.get("trump") or "", -1)
    trick_no = (view.get("trick_number") or 1) - 1
    void = voids(memo)
    n = len(view["players"])
    totals = list(view.get("totals") or [0] * n)
    base = [t + k for t, k in zip(totals, taken_so_far(view, memo, pen))]
    spread = _spread_after(view, n)
    worlds = max(MIN_WORLDS, playouts // len(playable))
    total = {c: 0.0 for c in playable}
    for _ in range(worlds):
        hands = sample_world(view, unknown, void, rng)
        trumps = _future_trumps(view, rng)
        for c in playable:
            taken = playout([list(h) for h in hands], trick, seat, trick_no, trump, trumps, syms, pen, c)
            final = [b + k for b, k in zip(base, taken)]
            total[c] += (TIE_WEIGHT * (taken[seat] - (sum(taken) - taken[seat]) / (n - 1))
                         - win_chance(final, seat, spread))
    return {c: t / worlds for c, t in total.items()}
