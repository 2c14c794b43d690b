"""Wild Shots (Piatnik, 2017): a trick-taking game where a revealed Snake Oil card
makes one symbol trump for each trick and chosen symbols cost penalty points per round.

Rules: /work/shared/rules/wild-shots.txt, settled by docs/DECISIONS.md "Wild Shots";
as implemented: docs/RULES.md "Wild Shots". The deck, the (reconstructed) symbol table,
the Snake Oil split and the round overview card live in wild_shots_data.py.

Flow of a table, every step a logged action or chance outcome:
    [chance "first_player"]  only if the setting first_player is -1 (docs/DECISIONS.md "Wild Shots")
    per round: chance "deal" (40) -> chance "snake_oil" (14) -> 10 tricks of "play"
The Snake Oil reveal needs no choice, so it is part of the transition that starts a
trick (after the Snake Oil shuffle, and after each trick but the round's last).
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import attrs

from ..codec import Registry, builder
from ..engine import (
    ChanceOutcome, ChanceRequest, Outcome, TableConfig, Timeout, check_permutation, merge_settings,
    rules_version,
)
from ..errors import IllegalAction
from ..states import build
from . import wild_shots_data as data

NAME = "wild-shots"
TITLE = "Wild Shots"
MIN_PLAYERS = 2   # docs/DECISIONS.md "Wild Shots": 2 to 4 players.
MAX_PLAYERS = 4
# the version a log's header names (protocol/engine.py). 2: turn_timer at most a day
# (86400 s), as Go Wild!'s and Run Wild's timers; a log of version 1 replays with the
# longer timer it was played with.
RULES_VERSION = 2
MAX_TURN_TIMER = 86400.0      # seconds, from rules version 2

N_CARDS = len(data.SUITS) * len(data.VALUES)   # 40
HAND = data.HAND_SIZE
TRICKS = data.TRICKS_PER_ROUND
ROUNDS = len(data.ROUND_OVERVIEW)               # "Wild Shots is played over 4 rounds."
N_OIL = data.SNAKE_OIL_CARDS

# Precomputed card tables: a card is a small int; suit and value are lookups.
SUIT: tuple[int, ...] = tuple(c // 10 for c in range(N_CARDS))
VALUE: tuple[int, ...] = tuple(c % 10 + 1 for c in range(N_CARDS))
LABELS: tuple[str, ...] = tuple(f"{data.SUITS[c // 10]} {c % 10 + 1}" for c in range(N_CARDS))
LABEL_TO_ID: dict[str, int] = {label: c for c, label in enumerate(LABELS)}
_SYMBOL_NO = {s: i for i, s in enumerate(data.SYMBOLS)}
_SYMBOL_NO[data.NO_SYMBOL] = -1
_SYMBOL_NAMES = data.SYMBOLS + (None,)   # index -1 -> None ("no symbol")


def _sym_name(s: int) -> str | None:
    return _SYMBOL_NAMES[s]


# ----------------------------------------------------------------------------- actions

ACTIONS = Registry("kind", "action")


@ACTIONS.register("play")
@attrs.frozen
class Play:
    """Play one card from your hand to the current trick (rulebook "Round Sequence")."""
    card: int = attrs.field(metadata={"min": 0, "max": N_CARDS - 1})


_PLAY = tuple(Play(c) for c in range(N_CARDS))  # shared instances for legal_actions


# ----------------------------------------------------------------------------- state

@attrs.frozen
class Rules:
    """The table's fixed facts, shared by every state of the table (never copied)."""
    seats: int
    symbols: tuple[int, ...]            # per card id: symbol number, -1 for none
    oil: tuple[int, ...]                # per Snake Oil card id: its symbol number
    hits: tuple[tuple[int, ...], ...]   # per round, per card id: penalty points of that card
    first_player: int                   # -1: chance; else the host's chosen seat
    rotate: bool                        # later rounds: rotate the starter instead of the active player
    turn_timer: float
    rounds: int = ROUNDS                # the game ends after this many (setting rounds; docs/RULES.md)


@attrs.frozen
class LastTrick:
    """The most recent complete trick, which everyone may see (rulebook "Trick")."""
    cards: tuple[int, ...]              # in order from its leader
    leader: int
    winner: int
    trump: int
    round: int                          # 1-based; (round, trick) is the trick's id (docs/DECISIONS.md "All games")
    trick: int                          # 1-based number of the trick in its round


@attrs.frozen
class Tally:
    """Scores so far; replaced only when a round is scored."""
    penalties: tuple[tuple[int, ...], ...]   # per scored round, per seat
    totals: tuple[int, ...]
    last_round: tuple[tuple[int, ...], ...]  # per seat, the cards won in the last scored round


class State(NamedTuple):
    """A whole table. Field order matters: the hot path (a card played) builds states
    positionally. Immutable like every state; a NamedTuple rather than an attrs class (as
    Run Wild's): one is built per card played, and attrs' frozen __init__ (a guarded
    setattr per field) costs 0.8 us against 0.1 us for ``states.build``, a sixth of a
    replayed play (bench/engine.py)."""
    rules: Rules
    phase: str                          # "choosing_first", "dealing", "playing", "over"
    round: int                          # 0-based index into ROUND_OVERVIEW
    starter: int                        # who started (starts) this round; -1 until chosen
    hands: tuple[tuple[int, ...], ...]  # () until this round's deal
    aside: tuple[int, ...]              # cards set aside unseen (2-3 players)
    oil: tuple[int, ...]                # Snake Oil pile (card ids), top first; () until shuffled
    trick_no: int                       # 0-based index of the trick being played
    leader: int                         # active player: who led (leads) the current trick
    turn: int                           # seat to play, -1 if nobody
    trump: int                          # symbol number of the current trick, -1 if none revealed
    trick: tuple[int, ...]              # cards played to the current trick, in order from the leader
    won: tuple[tuple[int, ...], ...]    # per seat: cards of the tricks won this round, trick after trick
    last: LastTrick | None
    tally: Tally


# ----------------------------------------------------------------------------- cards

def card_label(card_id: int) -> str:
    """Short name for the terminal client, e.g. "red 3" (symbols are per table: see view)."""
    return LABELS[card_id]


def card_info(card_id: int) -> dict:
    """Suit, value and the default (reconstructed) symbol of a card; a table that replaces
    the symbol table shows its own in view()["symbols"]."""
    return {
        "id": card_id,
        "suit": data.SUITS[SUIT[card_id]],
        "value": VALUE[card_id],
        "label": LABELS[card_id],
        "symbol": None if data.CARD_SYMBOLS[LABELS[card_id]] == data.NO_SYMBOL
        else data.CARD_SYMBOLS[LABELS[card_id]],
    }


# ----------------------------------------------------------------------------- settings

def default_settings() -> dict:
    return {
        "turn_timer": 60.0,       # shared convention; 0 = no timer (docs/DECISIONS.md "All games")
        "first_player": -1,       # docs/DECISIONS.md "Wild Shots": chance (-1) or the host's choice (a seat)
        "rotate_starter": False,  # docs/DECISIONS.md "Wild Shots": later rounds start with the active player (setting: rotate)
        "symbols": dict(data.CARD_SYMBOLS),   # docs/DECISIONS.md "Wild Shots": symbol table replaceable by a table option
        "snake_oil": dict(data.SNAKE_OIL),    # docs/DECISIONS.md "Wild Shots": Snake Oil split replaceable too
        "rounds": ROUNDS,         # docs/RULES.md "Wild Shots" Settings: the first 1..4 of the overview card
    }


def _check_timer(v: float) -> str | None:
    if not math.isfinite(v) or v < 0:
        return "must be 0 (no timer) or a positive number of seconds"
    return None


def _check_first(v: int) -> str | None:
    if v < -1 or v >= MAX_PLAYERS:
        return "must be -1 (chance) or the seat number (0, 1, ...) of the starting player"
    return None


def _check_rounds(v: int) -> str | None:
    if not 1 <= v <= ROUNDS:
        return f"must be 1 to {ROUNDS} (the rounds of the overview card, played in its order)"
    return None


def _check_symbols(v: dict) -> str | None:
    if len(v) != N_CARDS or set(v) != set(LABEL_TO_ID):
        missing = [label for label in LABELS if label not in v]
        extra = sorted(str(k) for k in v if k not in LABEL_TO_ID)
        detail = (f"missing {', '.join(missing[:5])}" if missing else f"unknown {', '.join(extra[:5])}")
        return f"must name each of the 40 cards ('black 1' .. 'blue 10') exactly once ({detail})"
    for label, s in v.items():
        if type(s) is not str or s not in _SYMBOL_NO:
            return (f"card {label!r} has symbol {s!r}; use one of "
                    f"{', '.join(data.SYMBOLS)} or {data.NO_SYMBOL!r}")
    return None


def _check_oil(v: dict) -> str | None:
    for s, k in v.items():
        if s not in data.SYMBOLS:
            return f"unknown symbol {s!r}; use {', '.join(data.SYMBOLS)}"
        if type(k) is not int or k < 0:
            return f"the count for {s!r} must be a whole number, 0 or more"
    if sum(v.values()) != N_OIL:
        return f"the counts must add up to {N_OIL} Snake Oil cards, not {sum(v.values())}"
    return None


_CHECKS = {"turn_timer": _check_timer, "first_player": _check_first,
           "symbols": _check_symbols, "snake_oil": _check_oil, "rounds": _check_rounds}


def _tables(card_symbols: dict, snake_oil: dict) -> tuple:
    """A table's symbol per card id, its Snake Oil cards (ids grouped by symbol) and, per
    round, per card, the penalty of a hit (rulebook "Components", overview card)."""
    symbols = tuple(_SYMBOL_NO[card_symbols[label]] for label in LABELS)
    oil: list[int] = []
    for i, name in enumerate(data.SYMBOLS):
        oil += [i] * snake_oil.get(name, 0)
    hits = tuple(
        tuple(0 if sym < 0 else rates.get(data.SYMBOLS[sym], 0) for sym in symbols)
        for rates in data.ROUND_OVERVIEW
    )
    return symbols, tuple(oil), hits


_DEFAULT_TABLES = _tables(data.CARD_SYMBOLS, data.SNAKE_OIL)


def new_table(config: TableConfig) -> State:
    """Validate seats and settings; the table then waits for its first chance outcome."""
    n = config.seats
    if type(n) is not int or not MIN_PLAYERS <= n <= MAX_PLAYERS:
        raise IllegalAction("bad_settings", f"Wild Shots is for {MIN_PLAYERS} to {MAX_PLAYERS} players, not {n}.")
    version = rules_version(config, RULES_VERSION)
    s = merge_settings(default_settings(), config.settings, _CHECKS)
    if version >= 2 and s["turn_timer"] > MAX_TURN_TIMER:
        raise IllegalAction("bad_settings", f"setting 'turn_timer': must be 0 (no timer) or a number of seconds up "
                                            f"to {MAX_TURN_TIMER:g}, not {s['turn_timer']!r}")
    if s["first_player"] >= n:
        raise IllegalAction("bad_settings", f"setting 'first_player': there is no seat {s['first_player']} "
                                            f"at a table of {n}; use -1 (chance) or 0..{n - 1}")
    if s["symbols"] == data.CARD_SYMBOLS and s["snake_oil"] == data.SNAKE_OIL:
        symbols, oil, hits = _DEFAULT_TABLES     # most tables (and every replay of one): made once
    else:
        symbols, oil, hits = _tables(s["symbols"], s["snake_oil"])
    rules = Rules(n, symbols, oil, hits, s["first_player"], s["rotate_starter"], float(s["turn_timer"]), s["rounds"])
    first = s["first_player"]
    empty = ((),) * n
    return State(
        rules=rules, phase="choosing_first" if first < 0 else "dealing", round=0, starter=first,
        hands=(), aside=(), oil=(), trick_no=0, leader=-1, turn=-1, trump=-1, trick=(), won=empty,
        last=None, tally=Tally(penalties=(), totals=(0,) * n, last_round=()),
    )


# ----------------------------------------------------------------------------- queries

def pending_chance(state: State) -> ChanceRequest | None:
    """First-player draw (size n: permutation[0] starts), then per round the deal (40) and
    the Snake Oil shuffle (14) (rulebook "Setup"; docs/DECISIONS.md "Wild Shots": "reshuffled each round")."""
    ph = state.phase
    if ph == "dealing":
        if not state.hands:
            return _DEAL
        return _request("snake_oil", len(state.rules.oil))
    if ph == "choosing_first":
        return _request("first_player", state.rules.seats)
    return None


_DEAL = ChanceRequest("deal", N_CARDS)
_REQUESTS: dict = {}     # (purpose, size) -> the ChanceRequest (immutable: one each, made once)


def _request(purpose: str, size: int) -> ChanceRequest:
    req = _REQUESTS.get((purpose, size))
    if req is None:
        req = ChanceRequest(purpose, size)
        if len(_REQUESTS) < 64:
            _REQUESTS[(purpose, size)] = req
    return req


def to_move(state: State) -> tuple[int, ...]:
    return (state.turn,) if state.phase == "playing" else ()


def _legal_cards(state: State, seat: int) -> list[int]:
    """Follow suit if you can, otherwise anything (rulebook "Follow Suit")."""
    hand = state.hands[seat]
    if state.trick:
        led = SUIT[state.trick[0]]
        follow = [c for c in hand if SUIT[c] == led]
        if follow:
            return follow
    return list(hand)


def legal_actions(state: State, seat: int | None) -> list:
    if state.phase != "playing" or seat != state.turn:
        return []
    return [_PLAY[c] for c in _legal_cards(state, seat)]


def auto_action(state: State) -> None:
    """No table action: the Snake Oil reveal is part of the transition that starts a trick."""
    return None


def timeout_action(state: State) -> Timeout | None:
    """On timeout the seat to move plays its lowest legal card (value, then id)."""
    if state.phase != "playing" or state.rules.turn_timer <= 0:
        return None
    card = min(_legal_cards(state, state.turn), key=lambda c: (VALUE[c], c))
    return Timeout(state.rules.turn_timer, state.turn, _PLAY[card])


def _winners(totals: tuple[int, ...]) -> tuple[int, ...]:
    """Fewest penalty points wins; ties shared (docs/DECISIONS.md "Wild Shots")."""
    best = min(totals)
    return tuple(i for i, t in enumerate(totals) if t == best)


def outcome(state: State) -> Outcome:
    """Scores are penalty points (lower is better); ``winners`` names who won."""
    over = state.phase == "over"
    totals = state.tally.totals
    return Outcome(over, totals, _winners(totals) if over else ())


def round_penalty(state: State, round_index: int, cards: tuple[int, ...] | list[int]) -> int:
    """Penalty points that ``cards`` in a player's tricks cost in round ``round_index``
    (0-based), by the overview card and this table's symbols (rulebook "Scoring")."""
    hits = state.rules.hits[round_index]
    return sum(hits[c] for c in cards)


# ----------------------------------------------------------------------------- apply

def apply(state: State, seat: int | None, action: Any) -> tuple[State, list[dict]]:
    """The next state and the public events, or IllegalAction (the state is unchanged)."""
    events: list = []
    if type(action) is Play:
        return _play(state, seat, action.card, events), events
    return _other(state, seat, action, events), events


def advance(state: State, seat: int | None, action: Any) -> State:
    """``apply(state, seat, action)[0]`` without building the events (replay drops them):
    the same state, the same IllegalAction (engine API, optional; protocol/engine.py)."""
    if type(action) is Play:
        return _play(state, seat, action.card, None)
    return _other(state, seat, action, None)


def _play_map(state: State, seat: int | None, action: dict) -> State | None:
    """``advance`` of a play as the log holds it, ``{"kind": "play", "card": c}``: only
    the maps Play's decoder takes (``card`` an int from 0 to 39, no other key), else None
    (replay then decodes it; RAW_ADVANCE, protocol/engine.py)."""
    card = action.get("card")
    if type(card) is int and 0 <= card < N_CARDS and len(action) == 2:
        return _play(state, seat, card, None)
    return None


RAW_ADVANCE = {"play": _play_map}


def _other(state: State, seat: int | None, action: Any, events: list | None) -> State:
    if type(action) is ChanceOutcome:
        if seat is not None:
            raise IllegalAction("not_a_table", "Shuffles come from the table, not from a player.")
        return _chance(state, action, events)
    raise IllegalAction("unknown_action", f"Wild Shots has no action {type(action).__name__!r}; "
                                          f"the only action is 'play' with a card.")


def _revealed(r: Rules, oil: tuple[int, ...], trick_no: int, leader: int, events: list | None) -> int:
    """Rulebook "Round Sequence": before each trick the active player reveals the top
    Snake Oil card; its symbol is trump for this trick. The trump ``leader`` reveals for
    trick ``trick_no`` (0-based), said in ``events`` (None: not said)."""
    trump = r.oil[oil[trick_no]]
    if events is not None:
        events.append({"event": "snake_oil_revealed", "seat": leader, "trick": trick_no + 1,
                       "symbol": data.SYMBOLS[trump]})
    return trump


def _chance(state: State, outcome: ChanceOutcome, events: list | None) -> State:
    check_permutation(outcome, pending_chance(state))
    p = tuple(outcome.permutation)
    # the state's fields, for the states built below (by position: see State)
    r, phase, rnd, starter, hands, aside, oil, trick_no, leader, turn, trump, trick, won, last, tally = state
    purpose = outcome.purpose
    if purpose == "first_player":
        # docs/DECISIONS.md "Wild Shots": the first round's starter is a logged chance outcome.
        s = p[0]
        if events is not None:
            events.append({"event": "starter_chosen", "seat": s})
        return build(State, (r, "dealing", rnd, s, hands, aside, oil, trick_no, leader, turn, trump, trick, won,
                             last, tally))
    if purpose == "deal":
        # Setup: 10 cards each; with 2 or 3 players the rest is set aside unseen.
        n = r.seats
        hands = tuple([tuple(sorted(p[i * HAND:(i + 1) * HAND])) for i in range(n)])
        aside = tuple(sorted(p[n * HAND:]))
        if events is not None:
            events.append({"event": "cards_dealt", "round": rnd + 1, "hand_sizes": [HAND] * n,
                           "set_aside": len(aside)})
        return build(State, (r, phase, rnd, starter, hands, aside, oil, trick_no, leader, turn, trump, trick, won,
                             last, tally))
    # "snake_oil": the face-down pile, top first; the round starts and the starter reveals.
    if events is not None:
        events.append({"event": "snake_oil_shuffled", "round": rnd + 1, "cards": len(p)})
    return build(State, (r, "playing", rnd, starter, hands, aside, p, 0, starter, starter,
                         _revealed(r, p, 0, starter, events), (), won, None, tally))


def _turn_name(seat: int) -> str:
    return f"seat {seat}"


def _play(state: State, seat: int | None, card: int, events: list | None) -> State:
    """One card played; the events go to ``events`` (None: none are built)."""
    r, phase, rnd, starter, hands, aside, oil, trick_no, leader, turn, trump, trick, won, last, tally = state
    if phase != "playing":
        if phase == "over":
            raise IllegalAction("game_over", "The game is over; no more cards can be played.")
        raise IllegalAction("waiting_for_shuffle",
                            "The cards are being shuffled and dealt; wait until the trick starts.")
    if seat is None:
        raise IllegalAction("not_a_seat", "Only a seated player can play a card.")
    if seat != turn:
        raise IllegalAction("not_your_turn", f"It is {_turn_name(turn)}'s turn to play a card; "
                                             f"wait for your turn.")
    hand = hands[seat]
    try:
        i = hand.index(card)
    except ValueError:
        if type(card) is not int or not 0 <= card < N_CARDS:
            raise IllegalAction("no_such_card", f"There is no card {card!r}; cards are numbered 0 to {N_CARDS - 1}.") \
                from None
        raise IllegalAction("card_not_in_hand", f"You do not hold the {LABELS[card]}; play a card from your hand.") \
            from None
    if trick:
        led = SUIT[trick[0]]
        # Rulebook "Follow Suit": play the led suit if you hold it.
        if SUIT[card] != led:
            for c in hand:
                if SUIT[c] == led:
                    raise IllegalAction(
                        "must_follow_suit",
                        f"You must follow suit: {data.SUITS[led]} was led and you hold the {LABELS[c]}; "
                        f"play a {data.SUITS[led]} card.")
    n = r.seats
    new_hands = list(hands)
    new_hands[seat] = hand[:i] + hand[i + 1:]
    hands = tuple(new_hands)
    trick += (card,)
    if len(trick) < n:
        nxt = seat + 1 if seat + 1 < n else 0     # clockwise = the next seat number
        if events is not None:
            # The card is face up now, so its symbol is public; "next" is who plays next
            # in this trick (None when the trick is complete: trick_won follows).
            events.append({"event": "card_played", "seat": seat, "card": card,
                           "symbol": _sym_name(r.symbols[card]), "next": nxt})
        # Hot path: built positionally (see State).
        return build(State, (r, "playing", rnd, starter, hands, aside, oil, trick_no, leader, nxt, trump, trick,
                             won, last, tally))
    if events is not None:
        events.append({"event": "card_played", "seat": seat, "card": card, "symbol": _sym_name(r.symbols[card]),
                       "next": None})
    return _finish_trick(state, hands, trick, events)


#: LastTrick(...) without attrs' frozen __init__ (codec.builder: the same value)
_last_trick = builder(LastTrick)


def _best(trick, trump: int, symbols: tuple) -> int:
    """The index in ``trick`` of the winning card (rulebook "Trump";
    docs/DECISIONS.md "Wild Shots", Winner): the highest card bearing the trump symbol in
    any suit, equal values going to the earlier card; if none, the highest card of the led
    suit."""
    best = -1
    best_v = 0
    i = 0
    for c in trick:
        if symbols[c] == trump and VALUE[c] > best_v:
            best, best_v = i, VALUE[c]
        i += 1
    if best < 0:
        led = SUIT[trick[0]]
        i = 0
        for c in trick:
            if SUIT[c] == led and VALUE[c] > best_v:
                best, best_v = i, VALUE[c]
            i += 1
    return best


def _finish_trick(state: State, hands, trick, events: list | None) -> State:
    r, _phase, rnd, starter, _hands, aside, oil, trick_no, leader, _turn, trump, _trick, won, _last, tally = state
    n = r.seats
    w = leader + _best(trick, trump, r.symbols)
    if w >= n:
        w -= n
    # Rulebook "Trick": the winner takes the cards face down and becomes the active player.
    new_won = list(won)
    new_won[w] = won[w] + trick
    won = tuple(new_won)
    last = _last_trick(trick, leader, w, trump, rnd + 1, trick_no + 1)
    if events is not None:
        card = trick[(w - leader) % n]
        # docs/DECISIONS.md "All games": every trick has an id; here (round, trick), as in Go Wild!.
        events.append({"event": "trick_won", "seat": w, "round": rnd + 1, "trick": trick_no + 1,
                       "trump": data.SYMBOLS[trump], "cards": _trick_cards(trick, leader, n),
                       "card": card, "symbol": _sym_name(r.symbols[card])})
    no = trick_no + 1
    if no < TRICKS:
        # the winner leads the next trick and reveals its trump: one State built, not two
        trump = r.oil[oil[no]] if events is None else _revealed(r, oil, no, w, events)   # (as _revealed)
        return build(State, (r, "playing", rnd, starter, hands, aside, oil, no, w, w, trump, (), won, last, tally))
    return _score_round(state, hands, won, last, events)


def _score_round(state: State, hands, won, last: LastTrick, events: list | None) -> State:
    """Rulebook "Scoring": each player's hits under this round's overview entry."""
    r = state.rules
    n = r.seats
    hits = r.hits[state.round]
    pen = tuple(sum(hits[c] for c in won[s]) for s in range(n))
    totals = tuple(a + b for a, b in zip(state.tally.totals, pen))
    tally = Tally(state.tally.penalties + (pen,), totals, won)
    if events is not None:
        events.append({"event": "round_scored", "round": state.round + 1,
                       "hits": dict(data.ROUND_OVERVIEW[state.round]),
                       "penalties": list(pen), "totals": list(totals),
                       # Once the round is scored nobody's tricks are secret any more (docs/DECISIONS.md "Wild Shots").
                       "won": [list(x) for x in won]})
    w = last.winner
    empty = ((),) * n
    if state.round + 1 >= r.rounds:
        # "End of the Game": after the 4th round (setting rounds), fewest penalty points wins (ties shared).
        if events is not None:
            events.append({"event": "game_over", "totals": list(totals), "winners": list(_winners(totals))})
        return build(State, (r, "over", state.round, state.starter, hands, state.aside, state.oil,
                             state.trick_no, w, -1, -1, (), empty, last, tally))
    if r.rotate:
        starter = (state.starter + 1) % n   # setting rotate_starter (docs/DECISIONS.md "Wild Shots": "setting: rotate")
    else:
        starter = w   # Round step 8 / docs/DECISIONS.md "Wild Shots": "each later round starts with the active player"
    # Round step 7: all cards, set-aside ones included, are gathered for a new deal.
    return build(State, (r, "dealing", state.round + 1, starter, (), (), (), 0, w, -1, -1, (), empty, last,
                         tally))


# ----------------------------------------------------------------------------- views

def _trick_cards(trick: tuple[int, ...], leader: int, n: int) -> list[dict]:
    return [{"seat": (leader + i) % n, "card": c} for i, c in enumerate(trick)]


def _split_tricks(cards: tuple[int, ...], n: int) -> list[list[int]]:
    return [list(cards[i:i + n]) for i in range(0, len(cards), n)]


def view(state: State, seat: int | None) -> dict:
    """What ``seat`` may know (rulebook "Trick"; docs/DECISIONS.md "Wild Shots", Visibility): its own hand
    and its own won tricks; everyone sees the current and the most recent trick, counts
    of hands and tricks, and every trick of a round once it is scored; nobody sees
    another hand, the set-aside cards or the Snake Oil order."""
    private = private_view(state, seat)     # checks the seat first
    out = public_view(state)
    out.update(private)
    return out


def private_view(state: State, seat: int | None) -> dict:
    """What only ``seat`` may know: its hand, the cards it may play now, its won tricks
    (a spectator: none of them, and no hand)."""
    n = state.rules.seats
    if seat is not None and not (type(seat) is int and 0 <= seat < n):
        raise ValueError(f"no seat {seat!r} at this table")
    if seat is None:
        return {"seat": None, "playable": [], "own_tricks": []}
    playing = state.phase == "playing"
    return {
        "seat": seat,
        "hand": list(state.hands[seat]) if state.hands else [],
        "playable": _legal_cards(state, seat) if playing and seat == state.turn else [],
        "own_tricks": _split_tricks(state.won[seat], n),
    }


def public_view(state: State) -> dict:
    """What every seat and spectator may know (the server encodes it once per update for
    all; engine API, optional)."""
    r = state.rules
    n = r.seats
    playing = state.phase == "playing"
    dealt = bool(state.hands)
    over = state.phase == "over"
    tally = state.tally
    players = []
    for s in range(n):
        players.append({
            "seat": s,
            "hand": len(state.hands[s]) if dealt else 0,
            "tricks": len(state.won[s]) // n,
            "penalties": [p[s] for p in tally.penalties],
            "total": tally.totals[s],
        })
    lt = state.last
    last = None
    if lt is not None:
        last = {"round": lt.round, "trick": lt.trick, "cards": _trick_cards(lt.cards, lt.leader, n),
                "leader": lt.leader, "winner": lt.winner, "trump": _sym_name(lt.trump)}
    last_round = None
    if tally.last_round:
        last_round = {"round": len(tally.penalties),
                      "tricks": [_split_tricks(x, n) for x in tally.last_round],
                      "penalties": list(tally.penalties[-1])}
    return {
        "game": NAME,
        "phase": state.phase,
        "turn": state.turn if playing else None,
        "round": state.round + 1,
        "rounds": r.rounds,
        "hits": dict(data.ROUND_OVERVIEW[state.round]),
        "starter": state.starter if state.starter >= 0 else None,
        "trick_number": state.trick_no + 1 if playing else None,
        "leader": state.leader if playing else None,
        "trump": _sym_name(state.trump) if playing else None,
        "led_suit": data.SUITS[SUIT[state.trick[0]]] if state.trick else None,
        "trick": _trick_cards(state.trick, state.leader, n),
        "last_trick": last,
        "last_round": last_round,
        "set_aside": len(state.aside),
        "snake_oil_left": len(state.oil) - state.trick_no - 1 if playing else None,
        # Revealed Snake Oil cards of this round, face up, so public (rulebook "Round Sequence").
        "snake_oil_revealed": [data.SYMBOLS[r.oil[x]] for x in state.oil[:state.trick_no + 1]] if playing else [],
        "players": players,
        "penalties": [list(p) for p in tally.penalties],
        "round_scores": [list(p) for p in tally.penalties],   # the same rows, by the name other games use
        "totals": list(tally.totals),
        "scores": list(tally.totals),
        "turn_timer": r.turn_timer,
        "winners": list(_winners(tally.totals)) if over else [],
        "symbols": [_sym_name(x) for x in r.symbols],
        "snake_oil": {name: r.oil.count(i) for i, name in enumerate(data.SYMBOLS)},
    }


def snapshot(state: State) -> dict:
    """The all-seeing state as plain data (state hash, ``replay --json``)."""
    r = state.rules
    rules = {"symbols": list(r.symbols), "snake_oil": list(r.oil), "first_player": r.first_player,
             "rotate_starter": r.rotate, "turn_timer": r.turn_timer}
    if r.rounds != ROUNDS:      # only then: the hashes of the logs of 4-round games stay as they were
        rules["rounds"] = r.rounds
    return {
        "game": NAME,
        "seats": r.seats,
        "rules": rules,
        "phase": state.phase,
        "round": state.round + 1,
        "starter": state.starter,
        "hands": [list(h) for h in state.hands],
        "set_aside": list(state.aside),
        "snake_oil_order": list(state.oil),
        "trick_number": state.trick_no + 1,
        "leader": state.leader,
        "turn": state.turn,
        "trump": state.trump,
        "trick": list(state.trick),
        "won": [list(w) for w in state.won],
        # The last trick's id (round, trick) follows from "round" and "trick_number", so it
        # is left out: the hashes of logs written before it was kept stay valid.
        "last_trick": None if state.last is None else {
            "cards": list(state.last.cards), "leader": state.last.leader,
            "winner": state.last.winner, "trump": state.last.trump},
        "penalties": [list(p) for p in state.tally.penalties],
        "totals": list(state.tally.totals),
        "last_round": [list(w) for w in state.tally.last_round],
    }


# ----------------------------------------------------------------------------- replay

from .wild_shots_run import replay_run  # noqa: E402,I001  (it uses this module's names)

REPLAY_RUN = replay_run
