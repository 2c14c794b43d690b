"""Go Wild!'s ``expert`` bot: determinized Monte-Carlo from its own seat's view and memory.

As Wild Shots' (wild_shots_expert.py): it samples worlds that agree with all its seat has
seen (its hand; each player's hand size; every card played since the discard pile was
last shuffled into the deck, ``watch``; a Wild One who sloughed holds only wilds until
the refill, docs/RULES.md "Valid plays"), plays each sensible play in each world and on
to the round's end with the hard bot's rules (go_wild.py ``choose``, here on colour
counts) for every seat, and picks the play with the best mean chance to win the game.
The same worlds serve every candidate, so their luck does not drown the comparison.

Cards of one colour are alike, so a hand in a playout is six counts (five colours, then
the wilds) and a play is (colour, colour cards, wilds); colour -1 is a slough.

The budget is a number of playouts, not a time: the same generator gives the same move
on any machine. Pure and CPU-bound: a networked bot runs it off its event loop (a worker
thread; the server's bots, its search processes: headless/bots.py).
"""

from __future__ import annotations

import math
import random

from wildtable.protocol.games.go_wild import COLOUR_OF, DECK_SIZE, HAND_SIZE, WILD

from . import best_first

PLAYOUTS = 240          # per move, spread over the candidate plays (at least MIN_WORLDS each)
MIN_WORLDS = 10
ROUNDS = 2               # a playout runs to the end of the next round
SPREAD = 3.0            # points: how far ahead a lead counts as a better chance (win_chance)
TIE_WEIGHT = 0.002      # the round's points (own less the others' mean) break near ties
Play = tuple            # (colour or -1 for a slough, colour cards, wilds)


# ------------------------------------------------------------------ memory

def bot_watch(view: dict, now: float, memo: dict) -> None:
    """The plug-in's hook (go_wild.py): each view this seat is sent, in order. The
    ``expert`` remembers the cards played (``watch``); the other levels play from the view."""
    watch(view, memo)


def watch(view: dict, memo: dict) -> None:
    """Called with each view this seat is sent, in order: remember the cards of every
    trick played (they lie face up on the discard pile until it is shuffled into the
    deck: then only the latest tricks, as many cards as ``discard_count`` says), and a
    Wild One who sloughed (so holds no colour card) until this round's refill."""
    piles = memo.setdefault("gw_piles", [])
    last = view.get("last_trick")
    if last:
        key = (last.get("round"), last.get("trick"))
        if all(k != key for k, _ in piles):
            piles.append((key, [c for p in last.get("plays") or () for c in p.get("cards") or ()]))
    size = view.get("discard_count")
    if isinstance(size, int):
        while piles and sum(len(c) for _, c in piles) > size:
            piles.pop(0)        # shuffled into the deck: no longer known to be out of play
    rnd = view.get("round")
    only = memo.setdefault("gw_only_wild", {})
    for p in view.get("trick") or ():
        cards = p.get("cards") or ()
        if cards and p.get("seat") == view.get("wild_one") and all(COLOUR_OF[c] == WILD for c in cards
                                                                    if 0 <= c < DECK_SIZE):
            only[p["seat"]] = rnd
    for s in [s for s, r in only.items() if r != rnd]:
        del only[s]


def unseen(view: dict, memo: dict | None) -> list[int]:
    """The cards this seat cannot place: not in its hand, not in the trick on the table,
    not on the discard pile as it remembers it. Others' hands and the deck are these."""
    seen = set(view.get("hand") or ())
    for p in view.get("trick") or ():
        seen.update(p.get("cards") or ())
    for _, cards in (memo or {}).get("gw_piles") or ():
        seen.update(cards)
    return [c for c in range(DECK_SIZE) if c not in seen]


def only_wild(view: dict, memo: dict | None) -> set[int]:
    """Seats known to hold wilds alone (a Wild One who sloughed this round)."""
    only = (memo or {}).get("gw_only_wild") or {}
    return {s for s, r in only.items() if r == view.get("round")}


def sample_world(view: dict, unknown: list[int], wild_only: set[int], rng: random.Random) -> list[list[int]]:
    """Every seat's hand in one world: this seat's as it is; each other seat dealt as many
    cards as it holds from the cards this seat cannot place (a seat known to hold wilds
    alone: wilds only, while there are any)."""
    seat = view["seat"]
    pool = list(unknown)
    rng.shuffle(pool)
    wilds = [c for c in pool if COLOUR_OF[c] == WILD]
    hands: list[list[int]] = [[] for _ in view["players"]]
    taken: set[int] = set()
    for p in view["players"]:
        s = p["seat"]
        if s != seat and s in wild_only:
            hands[s] = wilds[:p["hand"]]
            wilds = wilds[p["hand"]:]
            taken.update(hands[s])
    rest = [c for c in pool if c not in taken]
    for p in view["players"]:
        s = p["seat"]
        if s == seat:
            hands[s] = list(view.get("hand") or ())
        elif s not in wild_only or len(hands[s]) < p["hand"]:
            k = p["hand"] - len(hands[s])
            hands[s] = hands[s] + rest[:k]
            rest = rest[k:]
    return hands


def counts(cards: list[int]) -> list[int]:
    out = [0] * (WILD + 1)
    for c in cards:
        out[COLOUR_OF[c]] += 1
    return out


# ------------------------------------------------------------------ the playout policy

def _max_size(h: list[int], col: int, wild_one: bool) -> int:
    n = h[col]
    return n + (min(n, h[WILD]) if wild_one and n else 0)


def _cheapest(size: int, h: list[int], wild_one: bool, avoid: int, tie: list[int]) -> Play | None:
    """A set of exactly ``size`` from the colour that spends the least (go_wild._cheapest)."""
    best = None
    for col in range(WILD):
        n = h[col]
        if not n:
            continue
        k = min(n, size)
        need = size - k
        if need and (not wild_one or need > min(k, h[WILD])):
            continue
        key = (need, col == avoid, n, tie[col])
        if best is None or key < best[0]:
            best = (key, (col, k, need))
    return None if best is None else best[1]


def _dump(h: list[int], wild_one: bool, top: int, tie: list[int]) -> Play:
    """The play that gives away the least (go_wild._dump)."""
    colours = [c for c in range(WILD) if h[c]]
    if h[WILD] and (not wild_one or not colours):
        return (-1, 0, h[WILD])
    pool = [c for c in colours if c != top] or colours
    col = min(pool, key=lambda c: (h[c], tie[c]))
    return (col, h[col] if h[col] <= 2 else 1, 0)


def policy(h: list[int], wild_one: bool, need: int, rest: list[int], trick_no: int, tie: list[int]) -> Play:
    """The hard bot's play (go_wild.choose) from colour counts ``h``: ``need`` the size
    that would win the trick now, ``rest`` the hand sizes of those still to play."""
    colours = [c for c in range(WILD) if h[c]]
    if not colours:
        return (-1, 0, h[WILD])
    top = max(colours, key=lambda c: (_max_size(h, c, wild_one), h[c], -tie[c]))
    biggest = _max_size(h, top, wild_one)
    if biggest < need:
        return _dump(h, wild_one, top, tie)
    if not rest:
        return _cheapest(need, h, wild_one, top, tie) or _dump(h, wild_one, top, tie)
    sure = max([need] + rest)
    if sure <= biggest:
        return _cheapest(sure, h, wild_one, top, tie) or _dump(h, wild_one, top, tie)
    if trick_no >= 3:
        return _cheapest(biggest, h, wild_one, -1, tie) or _dump(h, wild_one, top, tie)
    second = max((h[c] for c in colours if c != top), default=0)
    threshold = 3 if len(rest) < 3 else 4
    if second >= max(need, threshold):
        return _cheapest(second, h, False, top, tie) or _dump(h, wild_one, top, tie)
    if trick_no == 1 and h[WILD] >= 2 and biggest >= max(need, threshold + 1):
        return _cheapest(biggest, h, wild_one, -1, tie) or _dump(h, wild_one, top, tie)
    return _dump(h, wild_one, top, tie)


def _still_to_play(hands: list[list[int]], after: int, done: set[int]) -> list[int]:
    """The seats after ``after`` in this trick, clockwise, that hold cards and have not played."""
    n = len(hands)
    return [s for s in ((after + i) % n for i in range(1, n)) if s not in done and sum(hands[s]) > 0]


def playout(hands: list[list[int]], view: dict, first: Play, ties: list[list[int]],
            deck: list[int], rng: random.Random, rounds: int = ROUNDS) -> tuple[list[int], int, bool]:
    """Points each seat scores from here to the end of ``rounds`` rounds (this one and
    the next: what a play keeps in hand counts there) or of the game, ``first`` played
    now by this seat and every other play by the hard bot's rules; the Wild One then;
    whether the game ended. At a refill each hand takes cards from ``deck`` (colours,
    drawn from the end), then from the cards played here. ``hands`` and ``deck`` are consumed."""
    n = len(hands)
    played = [0] * (WILD + 1)
    seat = view["seat"]
    scores = list(view.get("scores") or [0] * n)
    target = view.get("target") or 20
    gained = [0] * n
    wild_one = view.get("wild_one")
    wild_one = wild_one if isinstance(wild_one, int) else -1
    trick_no = view.get("trick_number") or 1
    best_seat, best_size = -1, 0
    if view.get("best"):
        best_seat, best_size = view["best"]["seat"], view["best"]["size"]
    done = {p["seat"] for p in view.get("trick") or ()}
    leader = view.get("leader")
    leader = leader if isinstance(leader, int) else seat
    turn, play = seat, first
    while True:
        col, k, w = play
        h = hands[turn]
        if col >= 0:
            h[col] -= k
            played[col] += k
        h[WILD] -= w
        played[WILD] += w
        size = k + w if col >= 0 else 0
        if size > best_size:
            best_seat, best_size = turn, size
        done.add(turn)
        rest = _still_to_play(hands, turn, done)
        if not rest:                                # the trick is over
            if best_seat >= 0:
                gained[best_seat] += trick_no
                if scores[best_seat] + gained[best_seat] >= target:
                    return gained, wild_one, True
                if trick_no == 1:
                    wild_one = best_seat
                leader = best_seat
            trick_no += 1
            if trick_no > 3:
                rounds -= 1
                if rounds <= 0:
                    return gained, wild_one, False
                _refill(hands, deck, played, rng)
                trick_no = 1
            holders = [s for s in ((leader + i) % n for i in range(n)) if sum(hands[s])]
            if not holders:
                return gained, wild_one, False
            turn = holders[0]
            leader = turn
            best_seat, best_size, done = -1, 0, set()
        else:
            turn = rest[0]
        rest = _still_to_play(hands, turn, done)
        play = policy(hands[turn], turn == wild_one, best_size + 1, [sum(hands[s]) for s in rest],
                      trick_no, ties[turn])


def _refill(hands: list[list[int]], deck: list[int], played: list[int], rng: random.Random) -> None:
    """Every hand back to HAND_SIZE cards from the deck (then from the cards played)."""
    for h in hands:
        for _ in range(HAND_SIZE - sum(h)):
            if not deck:
                deck.extend(c for c in range(WILD + 1) for _ in range(played[c]))
                rng.shuffle(deck)
                played[:] = [0] * (WILD + 1)
                if not deck:
                    return
            h[deck.pop()] += 1


def win_chance(final: list[int], seat: int, target: int, over: bool) -> float:
    """This seat's chance to win from the points after the playout: 1 or 0 once someone
    reached the target; else a share that grows by a factor e for each SPREAD points of
    lead (of the points each seat still needs)."""
    if over:
        return 1.0 if final[seat] >= target else 0.0
    top = max(final)
    weights = [math.exp((f - top) / SPREAD) for f in final]
    return weights[seat] / sum(weights)


# ------------------------------------------------------------------ the search

def plays(view: dict) -> list[Play]:
    """The sensible plays of this seat now, up to colour: from each colour one card, two,
    the smallest set that wins the trick now, a set nobody after can beat, all of it (and
    for the Wild One with as many wilds as it may add); a slough of every wild; the hard
    bot's own choice among them."""
    seat = view["seat"]
    h = counts(view.get("hand") or [])
    wild_one = view.get("wild_one") == seat
    colours = [c for c in range(WILD) if h[c]]
    best = view.get("best")
    need = (best.get("size", 0) if best else 0) + 1
    players = view.get("players") or []
    n = len(players)
    rest = [players[(seat + i) % n] for i in range(1, n)]
    rest_sizes = [p["hand"] for p in rest if p.get("hand") and not p.get("played")]
    sure = max([need] + rest_sizes)
    out: list[Play] = []
    for col in colours:
        top = _max_size(h, col, wild_one)
        for size in (1, 2, need, sure, h[col], top):
            if 1 <= size <= top:
                k = min(h[col], size)
                out.append((col, k, size - k))
    if h[WILD] and (not wild_one or not colours):
        out.append((-1, 0, h[WILD]))
    hard = policy(h, wild_one, need, rest_sizes, view.get("trick_number") or 1, list(range(WILD)))
    return [p for p in dict.fromkeys(out) if p != hard] + [hard]


def action(view: dict, play: Play) -> dict:
    """The play as an action: the lowest ids of its colour and of the wilds, as the engine names them."""
    col, k, w = play
    hand = sorted(view.get("hand") or ())
    cards = [c for c in hand if COLOUR_OF[c] == col][:k] if col >= 0 else []
    cards += [c for c in hand if COLOUR_OF[c] == WILD][:w]
    return {"kind": "play", "cards": cards}


def expert_candidates(view: dict, memo: dict | None, rng: random.Random, unknown: list[int],
                      playouts: int | None = None) -> list[dict]:
    """The plays this seat may make, best first by their mean over sampled worlds
    (``playouts`` in all, default PLAYOUTS; ``expert_values``); the hard bot's choice
    first among equals."""
    total = expert_values(view, memo, rng, unknown, playouts)
    options = list(total)
    if not options:
        return []
    hard = options[-1]          # plays(): the hard bot's choice comes last
    order = best_first(options, lambda p: (total[p], p != hard, p[1] + p[2]), rng)
    return [action(view, p) for p in order]


def expert_values(view: dict, memo: dict | None, rng: random.Random, unknown: list[int],
                  playouts: int | None = None) -> dict[Play, float]:
    """Each sensible play (``plays``, the hard bot's choice last) and its mean over the
    sampled worlds, lower is better: less the chance to win the game after the next
    round (``win_chance``), plus TIE_WEIGHT times the points (the others' mean less
    own), which break near ties. ``action`` turns a play into the action to send."""
    playouts = PLAYOUTS if playouts is None else playouts
    seat = view["seat"]
    options = plays(view)
    if len(options) <= 1:
        return {p: 0.0 for p in options}
    n = len(view["players"])
    scores = list(view.get("scores") or [0] * n)
    target = view.get("target") or 20
    wild_only = only_wild(view, memo)
    worlds = max(MIN_WORLDS, playouts // len(options))
    total = {p: 0.0 for p in options}
    for _ in range(worlds):
        world = sample_world(view, unknown, wild_only, rng)
        dealt = {c for h in world for c in h}
        deck = [COLOUR_OF[c] for c in unknown if c not in dealt]
        rng.shuffle(deck)
        hands = [counts(h) for h in world]
        ties = [rng.sample(range(WILD), WILD) for _ in range(n)]
        for p in options:
            gained, _wild_one, over = playout([list(h) for h in hands], view, p, ties, list(deck), rng)
            final = [s + g for s, g in zip(scores, gained)]
            total[p] += (TIE_WEIGHT * ((sum(gained) - gained[seat]) / (n - 1) - gained[seat])
                         - win_chance(final, seat, target, over))
    return {p: t / worlds for p, t in total.items()}


# ------------------------------------------------------------------ the plug-in's entry points (go_wild.py)

def my_turn(view: dict) -> bool:
    """Whether it is this seat's turn to play (go_wild.expert_searches: the search runs
    then; at any other time ``plugin_expert_candidates`` answers [] at once)."""
    return (view.get("seat") is not None and view.get("phase") == "playing"
            and view.get("turn") == view.get("seat") and bool(view.get("hand")))


def plugin_expert_candidates(view: dict, rng: random.Random | None = None, memo: dict | None = None) -> list[dict]:
    """go_wild.expert_candidates: the ``expert`` level's plays, best first ([] when it is
    not this seat's turn): about PLAYOUTS playouts, CPU-bound (mind.py runs it off the loop)."""
    if not my_turn(view):
        return []
    return expert_candidates(view, memo, rng or random.Random(), unseen(view, memo))


def plugin_expert_values(view: dict, rng: random.Random | None = None, memo: dict | None = None,
                         effort: int = 1) -> list[tuple[dict, float]]:
    """go_wild.expert_values: each play the expert weighs now with its value, higher is
    better (the chance to win after the next round, ``expert_values``); ``effort`` times
    the expert's playouts; [] when it is not this seat's turn."""
    if not my_turn(view):
        return []
    values = expert_values(view, memo, rng or random.Random(), unseen(view, memo), PLAYOUTS * max(1, effort))
    return [(action(view, p), -v) for p, v in values.items()]
