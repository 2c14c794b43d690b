"""Run Wild: the real-time rummy where nobody waits for a turn.

Rules: the Run Wild rulebook, read through docs/DECISIONS.md "Run Wild", which wins where
they differ; docs/RULES.md, section "Run Wild", lists every rule as implemented here.
Quotes in comments are from those two texts ("Rulebook:" / docs/DECISIONS.md "Run Wild":).

The round is a pure state machine: the server puts simultaneous actions in one order,
and each one is applied atomically against the state the previous one left. Cards are
small ints (see ``card_info``); a hand is an int bitmask of card ids, so membership,
adding and removing are single integer operations (replay speed); a draw pile is the
tuple of cards dealt to that seat (top first) plus a position, so a draw copies nothing.
"""

from __future__ import annotations

import bisect
from typing import Any, Callable, NamedTuple

import attrs

from ..codec import Registry
from ..engine import (
    ChanceOutcome, ChanceRequest, Outcome, TableConfig, Timeout, check_permutation, merge_settings,
    rules_version,
)
from ..errors import IllegalAction
from ..states import build, evolve
from ..cards import ids_of

NAME = "run-wild"
TITLE = "Run Wild"
MIN_PLAYERS = 2   # docs/DECISIONS.md "Run Wild": "2 to 4 players."
MAX_PLAYERS = 4
#: 2: the first dealer is drawn by lot (setting first_dealer) and a Draw-3 clears the stuck
#: flag of every player it makes draw. A version 1 log (seat 0 deals first, a Draw-3 leaves
#: stuck players stuck) replays by the version 1 rules (see Rules.version).
RULES_VERSION = 2

# ------------------------------------------------------------------ cards
# Rulebook, "What's in the Box": 60 number cards 1-12 in five colours, 9 wilds, 3 Draw-3s.

COLOURS = ("blue", "green", "yellow", "red", "purple")
_COLOUR_LETTERS = "BGYRP"
DECK_SIZE = 72
FIRST_WILD = 60      # ids 60..68
FIRST_DRAW3 = 69     # ids 69..71

_NUMBER_MASK = (1 << FIRST_WILD) - 1
_WILD_MASK = ((1 << 9) - 1) << FIRST_WILD
_DRAW3_MASK = 0b111 << FIRST_DRAW3

#: colour index (0..4) of each card id; -1 for wilds and Draw-3s
COLOUR_OF = tuple(c // 12 if c < FIRST_WILD else -1 for c in range(DECK_SIZE))
#: printed number (1..12) of each card id; 0 for wilds and Draw-3s
NUMBER_OF = tuple(c % 12 + 1 if c < FIRST_WILD else 0 for c in range(DECK_SIZE))
_LABELS = tuple(
    f"{_COLOUR_LETTERS[c // 12]}{c % 12 + 1}" if c < FIRST_WILD else ("W" if c < FIRST_DRAW3 else "D3")
    for c in range(DECK_SIZE)
)
_INFO = tuple(
    {"id": c, "kind": "number", "colour": COLOURS[c // 12], "number": c % 12 + 1} if c < FIRST_WILD
    else {"id": c, "kind": "wild" if c < FIRST_DRAW3 else "draw3"}
    for c in range(DECK_SIZE)
)


def card_id(colour: str | int, number: int) -> int:
    """The id of a number card, from its colour (name, letter or index) and number."""
    if isinstance(colour, str):
        colour = COLOURS.index(colour) if len(colour) > 1 else _COLOUR_LETTERS.index(colour.upper())
    return colour * 12 + number - 1


def card_info(card: int) -> dict:
    """What is printed on a card, as plain data: {"id", "kind", "colour"?, "number"?}."""
    return dict(_INFO[card])


def card_label(card: int) -> str:
    """The short label the client shows: "B6", "W" (wild), "D3" (Draw-3)."""
    return _LABELS[card]


_bits = ids_of      # the card ids in a bit mask, ascending (protocol/cards.py)


def hand_points(hand: int) -> int:
    """Rulebook, scoring: number cards 5 points each, wilds and Draw-3s 10 each."""
    return 5 * (hand & _NUMBER_MASK).bit_count() + 10 * (hand & ~_NUMBER_MASK).bit_count()


# ------------------------------------------------------------------ actions

ACTIONS = Registry("kind", "action")
_card = {"min": 0, "max": DECK_SIZE - 1}


@ACTIONS.register("ready")
@attrs.frozen
class Ready:
    """The seat is ready for the round's start (after the deal, before "Go!")."""


@ACTIONS.register("go")
@attrs.frozen
class Go:
    """Table action: the dealer's "Go!" once every seat in the round is ready."""


@ACTIONS.register("meld")
@attrs.frozen
class PlayMeld:
    """Play a new set or run from hand. ``values`` runs parallel to ``cards`` (a wild's
    declared number, a number card's own number); it may be empty when there is no wild."""
    cards: tuple[int, ...] = attrs.field(metadata={"max_items": DECK_SIZE, "item_min": 0, "item_max": DECK_SIZE - 1})
    values: tuple[int, ...] = attrs.field(default=(), metadata={"max_items": DECK_SIZE})


@ACTIONS.register("draw")
@attrs.frozen
class Draw:
    """Draw the top card of your own pile to your hand."""


@ACTIONS.register("add")
@attrs.frozen
class Add:
    """Add a hand card to any meld; ``value`` is a wild's declared number (None otherwise)."""
    meld: int = attrs.field(metadata={"min": 0})
    card: int = attrs.field(metadata=_card)
    value: int | None = None


@ACTIONS.register("take")
@attrs.frozen
class Take:
    """Take a card from any meld to your hand."""
    meld: int = attrs.field(metadata={"min": 0})
    card: int = attrs.field(metadata=_card)


@ACTIONS.register("swap")
@attrs.frozen
class Swap:
    """Replace meld card ``take`` with hand card ``give`` (which must stand for the same
    card); ``take`` goes to your hand. ``value`` is ``give``'s declared number if it is a wild."""
    meld: int = attrs.field(metadata={"min": 0})
    take: int = attrs.field(metadata=_card)
    give: int = attrs.field(metadata=_card)
    value: int | None = None


@ACTIONS.register("draw3")
@attrs.frozen
class PlayDraw3:
    """Play a Draw-3 face up: every other player in the round draws 3 from their pile."""
    card: int = attrs.field(metadata=_card)


@ACTIONS.register("stuck")
@attrs.frozen
class Stuck:
    """Declare that you are stuck (cleared by your next action)."""


@ACTIONS.register("idle_timeout")
@attrs.frozen
class IdleTimeout:
    """Table action: no action was accepted for the idle timeout; the round ends."""


@ACTIONS.register("ready_timeout")
@attrs.frozen
class ReadyTimeout:
    """Table action: nobody got ready for the ready timeout after the deal (a seat that
    left, or is silent); every seat in the round not yet ready is readied."""


# ------------------------------------------------------------------ settings

#: the default cap, in ms, of the delay the server makes up for (setting fair_ms)
FAIR_MS = 100

_DEFAULTS = {
    "rounds": 4,                    # Rulebook: "after four rounds"
    "idle_timeout": 120.0,          # docs/DECISIONS.md "Run Wild": "a timeout (setting, default 120 s)"
    # docs/DECISIONS.md "All games": what happens for a seat that left "is a setting (wait, or
    # ... after a turn timer)": seconds without an action after the deal before the
    # table readies every seat not yet ready; 0 = wait for them
    "ready_timeout": 60.0,
    "allow_all_wild_melds": False,  # docs/DECISIONS.md "Run Wild": "A meld needs at least one number card (setting ... default off)"
    "max_set_size": 0,              # docs/DECISIONS.md "Run Wild": "No size cap on sets (setting)"; 0 = no cap
    "hand_size": 8,                 # Rulebook: "Each player draws eight cards"
    # docs/DECISIONS.md "Run Wild": "Who deals the first round: a logged chance outcome, or the host's choice
    # (setting)": -1 = drawn by lot (chance "first_dealer"), else that seat
    "first_dealer": -1,
    # docs/DECISIONS.md "Run Wild": "in the order players acted: arrival order corrected for each player's
    # measured network delay, up to a cap (table setting; 0 = plain arrival order)". The
    # server's ordering, not a rule of play: it changes no state (not in as_dict, so
    # state hashes are as before). Default: bench/README.md, "Fair order".
    "fair_ms": FAIR_MS,
}
_CHECKS = {
    "rounds": lambda v: None if 1 <= v <= 100 else "must be 1 to 100",
    "idle_timeout": lambda v: None if 1 <= v <= 86400 else "must be 1 to 86400 seconds",
    "ready_timeout": lambda v: None if 0 <= v <= 86400 else "must be 0 (wait) or seconds up to 86400",
    "max_set_size": lambda v: None if v == 0 or 3 <= v <= 14 else "must be 0 (no cap) or 3 to 14",
    # 18 = the smallest pile (72 cards among 4 players)
    "hand_size": lambda v: None if 1 <= v <= 18 else "must be 1 to 18",
    "first_dealer": lambda v: None if v >= -1 else "must be -1 (drawn by lot) or a seat number",
    "fair_ms": lambda v: None if 0 <= v <= 1000 else "must be 0 (arrival order) to 1000 ms",
}
#: rules version 1 had no first_dealer setting: seat 0 dealt first
_DEFAULTS_V1 = {k: v for k, v in _DEFAULTS.items() if k != "first_dealer"}


def default_settings() -> dict:
    return dict(_DEFAULTS)


@attrs.frozen
class Rules:
    """The table's settings, checked once at table creation."""
    rounds: int
    idle_timeout: float
    # not in as_dict (snapshots, so state hashes, are as before: a timer never changes how
    # a log replays); views show it beside the other settings
    ready_timeout: float = attrs.field(converter=float)
    allow_all_wild_melds: bool
    max_set_size: int
    hand_size: int
    first_dealer: int = -1          # -1: drawn by lot (chance "first_dealer"); else the host's choice
    fair_ms: int = FAIR_MS          # the cap of the delay the server makes up for (server/table.py)
    version: int = RULES_VERSION    # the rules version played (a log's header.rules)

    def as_dict(self) -> dict:
        d = {"rounds": self.rounds, "idle_timeout": self.idle_timeout,
             "allow_all_wild_melds": self.allow_all_wild_melds,
             "max_set_size": self.max_set_size, "hand_size": self.hand_size}
        if self.version >= 2:       # as before for a version 1 table: its snapshots hash as they did
            d["first_dealer"] = self.first_dealer
        return d


def _rules(settings: dict, version: int = RULES_VERSION) -> Rules:
    """Checked settings (IllegalAction "bad_settings" on an unknown name, type or range)."""
    if version == 1:
        merged = merge_settings(_DEFAULTS_V1, settings, _CHECKS)
        merged["first_dealer"] = 0
    else:
        merged = merge_settings(_DEFAULTS, settings, _CHECKS)
    merged["idle_timeout"] = float(merged["idle_timeout"])
    return Rules(**merged, version=version)


# ------------------------------------------------------------------ state

class TableMeld(NamedTuple):
    """A set or run on the table. ``cards`` are in position order (runs by number),
    ``values`` parallel to them (what each card stands for). ``history`` is a bitmask of
    every card ever placed in this meld, so a take that lost a race can name the conflict
    and a run keeps its colour when only wilds are left in it (``_run_colour``).
    An immutable NamedTuple rather than an attrs class: it is rebuilt by nearly every
    action, and a tuple is built three times faster (replay speed, bench/engine.py)."""
    id: int
    kind: str
    cards: tuple[int, ...]
    values: tuple[int, ...]
    history: int


@attrs.frozen
class Deal:
    """One round's deal: who is in it, in deal order (left of the dealer first), and each
    seat's pile as dealt, top first (empty for a seat sitting out)."""
    round: int
    dealer: int
    order: tuple[int, ...]
    in_round: tuple[bool, ...]
    piles: tuple[tuple[int, ...], ...]


@attrs.frozen
class Scores:
    """Scoring so far. ``rounds`` holds one tuple per finished round (None for a seat that
    sat the round out); ``next_seats`` are the seats of the next round (tie-breaks)."""
    rounds: tuple[tuple[int | None, ...], ...]
    totals: tuple[int, ...]
    out: int | None
    ended_by: str | None
    winners: tuple[int, ...]
    next_seats: tuple[int, ...]


class State(NamedTuple):
    """A whole Run Wild table. ``hands`` are bitmasks of card ids; ``pos[s]`` is how many
    cards of ``deal.piles[s]`` have left the pile. Immutable, like every state: a
    NamedTuple rather than an attrs class because one is built per action, and attrs'
    frozen __init__ (one guarded setattr per field) costs 1.1 us against 0.4 us here,
    about a tenth of a replayed action (bench/engine.py)."""
    seats: int
    rules: Rules
    deal: Deal
    phase: str              # "dealing", "ready", "playing", "scored", "over"
    hands: tuple[int, ...]
    pos: tuple[int, ...]
    melds: tuple[TableMeld, ...]
    next_meld: int
    draw3s: tuple[tuple[int, ...], ...]
    stuck: tuple[bool, ...]
    ready: tuple[bool, ...]
    score: Scores

    @classmethod
    def arranged(cls, seats: int, hands: dict | list, piles: dict | list | None = None,
                 melds: list | None = None, *, settings: dict | None = None, phase: str = "playing",
                 round: int = 1, dealer: int = 0, in_round: tuple[int, ...] | None = None,
                 draw3s: dict | None = None, stuck: tuple[int, ...] = (),
                 totals: tuple[int, ...] | None = None) -> State:
        """A table laid out by hand, for scenarios (tests, tutorials, the rulebook's examples).

        Cards are ids or labels: "B6" (blue 6), "W" (the next unused wild), "D3" (the next
        unused Draw-3). ``hands``/``piles``/``draw3s`` map a seat to its cards (piles top
        first); ``melds`` is a list of melds, each a list of cards where a wild is given as
        ``("W", value)``; they get ids 1, 2, ... Cards named nowhere are out of play, so an
        arranged state need not hold all 72 cards. ``in_round`` lists the seats playing the
        round (default: all); ``totals`` the scores of the rounds before this one.
        """
        used: set[int] = set()

        def cid(label: Any) -> int:
            if isinstance(label, int):
                c = label
            elif label in ("W", "D3"):
                first, last = (FIRST_WILD, FIRST_DRAW3) if label == "W" else (FIRST_DRAW3, DECK_SIZE)
                c = next(x for x in range(first, last) if x not in used)
            else:
                c = card_id(label[0], int(label[1:]))
            if c in used:
                raise ValueError(f"card {card_label(c)} ({c}) is named twice")
            used.add(c)
            return c

        def per_seat(spec: dict | list | None) -> list[list[int]]:
            spec = spec or {}
            items = spec.items() if isinstance(spec, dict) else enumerate(spec)
            out: list[list[int]] = [[] for _ in range(seats)]
            for s, cards in items:
                out[s] = [cid(x) for x in cards]
            return out

        rules = _rules(settings or {})
        hand_lists = per_seat(hands)
        pile_lists = per_seat(piles)
        d3_lists = per_seat(draw3s)
        table = []
        for i, spec in enumerate(melds or (), start=1):
            cards, values = [], []
            for item in spec:
                label, value = item if isinstance(item, tuple) else (item, None)
                c = cid(label)
                cards.append(c)
                values.append(value if value is not None else NUMBER_OF[c])
            kind, cs, vs, problem = _shape(tuple(cards), tuple(values), rules)
            if problem:
                raise ValueError(f"meld {i} is not valid: {problem}")
            table.append(TableMeld(i, kind, cs, vs, _mask(cs)))
        playing = tuple(range(seats)) if in_round is None else tuple(sorted(in_round))
        flags = tuple(s in playing for s in range(seats))
        order = _deal_order(seats, dealer, playing)
        return cls(
            seats, rules,
            Deal(round, dealer, order, flags, tuple(tuple(p) for p in pile_lists)),
            phase, tuple(_mask(h) for h in hand_lists), (0,) * seats, tuple(table), len(table) + 1,
            tuple(tuple(d) for d in d3_lists), tuple(s in stuck for s in range(seats)),
            tuple(phase == "playing" and flags[s] for s in range(seats)),
            Scores((), tuple(totals or (0,) * seats), None, None, (), playing),
        )


def _mask(cards: Any) -> int:
    m = 0
    for c in cards:
        m |= 1 << c
    return m


def _deal_order(seats: int, dealer: int, playing: tuple[int, ...]) -> tuple[int, ...]:
    """Seats in the round, clockwise from the dealer's left (the dealer last)."""
    return tuple(s for s in ((dealer + k) % seats for k in range(1, seats + 1)) if s in playing)


def new_table(config: TableConfig) -> State:
    """A table waiting for round 1's dealer to be drawn by lot (chance "first_dealer"), or,
    when the host chose one (setting first_dealer), for round 1's shuffle. Rulebook:
    "Choose a player to be the first dealer"; docs/DECISIONS.md "Run Wild": "Who deals the first round: a
    logged chance outcome, or the host's choice (setting)". Rules version 1: seat 0."""
    if config.game != NAME:
        raise IllegalAction("bad_settings", f"This engine plays {NAME!r}, not {config.game!r}.")
    n = config.seats
    if type(n) is not int or not MIN_PLAYERS <= n <= MAX_PLAYERS:
        raise IllegalAction("bad_settings", f"Run Wild is for {MIN_PLAYERS} to {MAX_PLAYERS} players, not {n}.")
    rules = _rules(dict(config.settings), rules_version(config, RULES_VERSION))
    dealer = rules.first_dealer
    if dealer >= n:
        raise IllegalAction("bad_settings", f"setting 'first_dealer': there is no seat {dealer} at a table of {n}; "
                                            f"use -1 (drawn by lot) or 0..{n - 1}.")
    everyone = tuple(range(n))
    return State(
        n, rules, Deal(1, dealer, _deal_order(n, dealer, everyone), (True,) * n, ((),) * n),
        "dealing", (0,) * n, (0,) * n, (), 1, ((),) * n, (False,) * n, (False,) * n,
        Scores((), (0,) * n, None, None, (), everyone),
    )


# ------------------------------------------------------------------ melds

def _shape(cards: tuple[int, ...], values: tuple[int, ...], rules: Rules):
    """Is this one valid set or run? Returns (kind, cards, values, None) with the cards in
    position order, or (None, None, None, reason)."""
    n = len(cards)
    if n < 3:
        # Rulebook: "A set is three or more cards ...", "A run is three or more cards ..."
        return None, None, None, "a set or run needs at least 3 cards"
    colours = {COLOUR_OF[c] for c in cards if c < FIRST_WILD}
    if not colours and not rules.allow_all_wild_melds:
        # docs/DECISIONS.md "Run Wild": "A meld needs at least one number card (setting: allow all-wild melds, default off)."
        return None, None, None, "a meld needs at least one number card (all-wild melds are off at this table)"
    if values.count(values[0]) == n:
        # docs/DECISIONS.md "Run Wild": "Set: 3+ cards of one number"; "No size cap on sets (setting)."
        cap = rules.max_set_size
        if cap and n > cap:
            return None, None, None, f"a set holds at most {cap} cards at this table"
        kind = "set"
    else:
        # docs/DECISIONS.md "Run Wild": "Run: 3+ cards of one colour in consecutive numbers 1..12, no wrap from 12 to 1."
        if len(colours) > 1:
            return None, None, None, "cards of different numbers form a run only if they are all one colour"
        ordered = sorted(values)
        if len(set(ordered)) != n:
            return None, None, None, "a run cannot hold the same number twice, and a set holds one number only"
        if ordered[-1] - ordered[0] != n - 1:
            if 1 in ordered and 12 in ordered:
                return None, None, None, "a run counts from 1 up to 12 and does not wrap from 12 to 1"
            return None, None, None, "a run needs consecutive numbers with no gap"
        kind = "run"
    # by value, then card id: a set's cards sit in id order (numbers, then wilds)
    vs, cs = zip(*sorted(zip(values, cards)))
    return kind, cs, vs, None


def _describe(meld: TableMeld) -> str:
    """A meld as a player would name it: "meld 3 (set of 9s)", "meld 2 (blue run 6-9)"."""
    if meld.kind == "set":
        return f"meld {meld.id} (set of {meld.values[0]}s)"
    k = _run_colour(meld)
    colour = COLOURS[k] if k >= 0 else "wild"
    return f"meld {meld.id} ({colour} run {meld.values[0]}-{meld.values[-1]})"


def _find_meld(state: State, meld_id: int) -> tuple[int, TableMeld]:
    melds = state.melds
    if melds and type(meld_id) is int:
        # Ids are handed out in order (``next_meld``) and a meld stays on the table until
        # the next deal clears them all, so meld ``id`` usually sits at index id - first id;
        # the id found there is checked, and the scan below covers any other layout.
        i = meld_id - melds[0].id
        if 0 <= i < len(melds) and melds[i].id == meld_id:
            return i, melds[i]
    for i, m in enumerate(melds):
        if m.id == meld_id:
            return i, m
    raise IllegalAction("no_such_meld", f"There is no meld {meld_id} on the table.")


def _check_card(card: int) -> int:
    if type(card) is not int or not 0 <= card < DECK_SIZE:
        raise IllegalAction("no_such_card", f"There is no card {card!r}: card ids are 0 to {DECK_SIZE - 1}.")
    return 1 << card


def _meldable(card: int, hand: int) -> int:
    """The bit of a hand card that may go into a meld; refuses Draw-3s and cards not held."""
    bit = _check_card(card)
    if card >= FIRST_DRAW3:
        # Rulebook: "Draw-3 Cards are not played in sets or runs."
        raise IllegalAction("draw3_not_meldable", "A Draw-3 is never part of a set or run: play it with draw3.")
    if not hand & bit:
        raise IllegalAction("not_in_hand", f"{card_label(card)} ({card}) is not in your hand.")
    return bit


def _value(card: int, value: int | None) -> int:
    """What a placed card stands for. docs/DECISIONS.md "Run Wild": "A wild stands for one number card,
    declared when it is placed"; a number card stands for itself."""
    if card < FIRST_WILD:
        if value is not None and value != NUMBER_OF[card]:
            raise IllegalAction("bad_value", f"{card_label(card)} is a {NUMBER_OF[card]}; give its own number or no value.")
        return NUMBER_OF[card]
    if value is None:
        raise IllegalAction("wild_value_missing", "Say which number the wild stands for (1 to 12).")
    if type(value) is not int or not 1 <= value <= 12:
        raise IllegalAction("bad_value", f"A wild stands for a number from 1 to 12, not {value!r}.")
    return value


def _where(state: State, card: int) -> str:
    """Where a card is now, in public terms (only for cards that left a meld in public)."""
    bit = 1 << card
    for m in state.melds:
        if bit & _mask(m.cards):
            return f"it is now in meld {m.id}"
    for s, h in enumerate(state.hands):
        if h & bit:
            return f"seat {s} has it in hand"
    return "it has left the meld"


def _gone(state: State, meld: TableMeld, card: int, seat: int) -> IllegalAction:
    """A card named in a meld that is not there (any more)."""
    if meld.history >> card & 1:
        # docs/DECISIONS.md "Run Wild": "two players taking the same card - the first to act wins (see the order
        # above), the second is rejected with a reason that names the conflict."
        where = "you took it already" if state.hands[seat] >> card & 1 else _where(state, card)
        return IllegalAction("card_taken", f"{card_label(card)} ({card}) is no longer in {_describe(meld)}: "
                                           f"another action got there first ({where}).")
    return IllegalAction("not_in_meld", f"{card_label(card)} ({card}) is not in {_describe(meld)}.")


# ------------------------------------------------------------------ apply

def pending_chance(state: State) -> ChanceRequest | None:
    """Round 1's dealer, drawn by lot unless the host chose one: a permutation of the seats,
    whose first item deals. Then the next round's shuffle: before round 1, and after every
    round but the last. The permutation is the deck order: position i holds card id
    permutation[i]."""
    if state.phase == "dealing":
        if state.deal.dealer < 0:
            return ChanceRequest("first_dealer", state.seats)
        return ChanceRequest("deal", DECK_SIZE)
    if state.phase == "scored":
        return ChanceRequest("deal", DECK_SIZE)
    return None


def _deal(state: State, outcome: ChanceOutcome) -> tuple[State, list]:
    check_permutation(outcome, pending_chance(state))
    n = state.seats
    if outcome.purpose == "first_dealer":
        # docs/DECISIONS.md "Run Wild": "Who deals the first round: a logged chance outcome": permutation[0].
        dealer = outcome.permutation[0]
        deal = state.deal
        st = evolve(state, deal=Deal(1, dealer, _deal_order(n, dealer, deal.order), deal.in_round, deal.piles))
        return st, [{"event": "dealer_chosen", "seat": dealer, "round": 1}]
    playing = state.score.next_seats
    if state.phase == "dealing":
        rnd, dealer = 1, state.deal.dealer
    else:
        # Rulebook: "The role of dealer rotates clockwise after each round." In a tie-break
        # round the deal passes to the next seat clockwise that plays it.
        rnd = state.deal.round + 1
        dealer = next(s for s in ((state.deal.dealer + k) % n for k in range(1, n + 1)) if s in playing)
    order = _deal_order(n, dealer, playing)
    # Rulebook: "The dealer shuffles the cards and deals out the entire deck. Each player,
    # including the dealer, will have the same number of cards." Dealt one at a time,
    # starting left of the dealer; docs/DECISIONS.md "Run Wild": "36, 24 or 18 cards each".
    k = len(order)
    piles: list[tuple[int, ...]] = [()] * n
    for i, s in enumerate(order):
        piles[s] = tuple(outcome.permutation[i::k])
    # Rulebook: "Each player draws eight cards from his or her draw pile to form a hand."
    h = state.rules.hand_size
    hands = tuple(_mask(p[:h]) for p in piles)
    pos = tuple(min(h, len(p)) for p in piles)
    in_round = tuple(s in playing for s in range(n))
    st = State(n, state.rules, Deal(rnd, dealer, order, in_round, tuple(piles)), "ready", hands, pos,
               (), state.next_meld, ((),) * n, (False,) * n, (False,) * n,
               attrs.evolve(state.score, out=None, ended_by=None))
    return st, [{"event": "round_dealt", "round": rnd, "dealer": dealer, "seats": list(order)}]


def _end_round(st: State, reason: str, out: int | None, events: list) -> tuple[State, list]:
    """docs/DECISIONS.md "Run Wild": "Cards left in draw piles score nothing; hand cards score 5 (number),
    10 (wild), 10 (Draw-3)." Then the next round, a tie-break, or the end of the game."""
    deal = st.deal
    sc = st.score
    n = st.seats
    if out is not None:
        events.append({"event": "player_out", "seat": out})
    scores = tuple(hand_points(st.hands[s]) if deal.in_round[s] else None for s in range(n))
    totals = tuple(sc.totals[s] + (scores[s] or 0) for s in range(n))
    events.append({"event": "round_ended", "round": deal.round, "reason": reason,
                   "scores": list(scores), "totals": list(totals)})
    phase, nxt = "scored", tuple(range(n))
    winners: tuple[int, ...] = ()
    if deal.round >= st.rules.rounds:
        # Rulebook: "The player with the lowest number of points after four rounds wins";
        # docs/DECISIONS.md "Run Wild": "players tied for lowest play further rounds among themselves until one wins."
        low = min(totals[s] for s in deal.order)
        tied = tuple(s for s in range(n) if deal.in_round[s] and totals[s] == low)
        if len(tied) == 1:
            phase, winners = "over", tied
            events.append({"event": "game_ended", "totals": list(totals), "winners": list(winners)})
        else:
            nxt = tied
            events.append({"event": "tie_break", "seats": list(tied)})
    score = Scores(sc.rounds + (scores,), totals, out, reason, winners, nxt)
    return evolve(st, phase=phase, score=score), events


def _with_hand(state: State, seat: int, hand: int, events: list, melds: tuple[TableMeld, ...],
               next_meld: int | None = None) -> State:
    """The state after ``seat``'s action left it holding ``hand`` and the table ``melds``;
    the action also clears the seat's stuck flag (docs/DECISIONS.md "Run Wild": "cleared by their next action").
    Built directly (not evolve; a list set and back, as in _replace_meld): this is the
    hot path of replay."""
    hands = list(state.hands)
    hands[seat] = hand
    stuck = state.stuck
    if stuck[seat]:
        stuck = stuck[:seat] + (False,) + stuck[seat + 1:]
        events.append({"event": "stuck_cleared", "seat": seat})
    return build(State, (
        state.seats, state.rules, state.deal, state.phase, tuple(hands),
        state.pos, melds, state.next_meld if next_meld is None else next_meld, state.draw3s, stuck,
        state.ready, state.score,
    ))


def _after_play(st: State, seat: int, events: list) -> tuple[State, list]:
    """docs/DECISIONS.md "Run Wild": "Out: the moment any action leaves the actor's hand empty, the round ends"."""
    if st.hands[seat] == 0:
        return _end_round(st, "out", seat, events)
    return st, events


def _draw(state: State, seat: int, action: Draw) -> tuple[State, list]:
    # Rulebook: "Each player may draw cards freely from his or her own draw pile".
    p = state.pos[seat]
    pile = state.deal.piles[seat]
    if p >= len(pile):
        raise IllegalAction("pile_empty", "Your draw pile is empty: play from your hand, take from a meld, "
                                          "or declare that you are stuck.")
    pos = list(state.pos)
    pos[seat] = p + 1
    hands = list(state.hands)
    hands[seat] |= 1 << pile[p]
    events = [{"event": "card_drawn", "seat": seat}]
    stuck = state.stuck
    if stuck[seat]:
        stuck = stuck[:seat] + (False,) + stuck[seat + 1:]
        events.append({"event": "stuck_cleared", "seat": seat})
    return build(State, (
        state.seats, state.rules, state.deal, state.phase, tuple(hands), tuple(pos),
        state.melds, state.next_meld, state.draw3s, stuck, state.ready, state.score,
    )), events


def _meld(state: State, seat: int, action: PlayMeld) -> tuple[State, list]:
    # docs/DECISIONS.md "Run Wild": "play a new set or run from hand".
    hand = state.hands[seat]
    cards = action.cards
    mask = 0
    for c in cards:
        bit = _meldable(c, hand)
        if mask & bit:
            raise IllegalAction("duplicate_card", f"{card_label(c)} ({c}) is named twice.")
        mask |= bit
    if action.values:
        if len(action.values) != len(cards):
            raise IllegalAction("bad_value", "Give one value per card, in the same order (or none when there is no wild).")
        values = tuple(_value(c, v) for c, v in zip(cards, action.values))
    else:
        if mask & _WILD_MASK:
            raise IllegalAction("wild_value_missing", "Say which number each wild stands for: give one value per card.")
        values = tuple(NUMBER_OF[c] for c in cards)
    kind, cs, vs, problem = _shape(cards, values, state.rules)
    if problem:
        raise IllegalAction("not_a_meld", f"Those cards are not a set or run: {problem}.")
    mid = state.next_meld
    events = [{"event": "meld_played", "seat": seat, "meld": mid, "kind": kind, "cards": list(cs), "values": list(vs)}]
    new = build(TableMeld, (mid, kind, cs, vs, mask))
    st = _with_hand(state, seat, hand & ~mask, events, state.melds + (new,), mid + 1)
    return _after_play(st, seat, events)


def _replace_meld(melds: tuple[TableMeld, ...], i: int, meld: TableMeld) -> tuple[TableMeld, ...]:
    # a list copy, one item set, back to a tuple: half the time of melds[:i] + (meld,) + melds[i + 1:]
    out = list(melds)
    out[i] = meld
    return tuple(out)


def _run_colour(meld: TableMeld) -> int:
    """A run's colour index: that of every number card ever placed in it, so a run keeps
    its colour after its last number card leaves (allow_all_wild_melds): its wilds still
    stand for cards of that colour (docs/DECISIONS.md "Run Wild": "Run: 3+ cards of one colour"; a wild
    "keeps that value while it stays in the meld"). -1 for a run no number card has been
    in yet, which any colour may join."""
    nums = meld.history & _NUMBER_MASK
    return COLOUR_OF[(nums & -nums).bit_length() - 1] if nums else -1


def _add(state: State, seat: int, action: Add) -> tuple[State, list]:
    # Rulebook: "Additional Number Cards or Wild Cards may be added to a set or run that is
    # already on the table. These cards are placed in the appropriate position".
    i, meld = _find_meld(state, action.meld)
    hand = state.hands[seat]
    c = action.card
    bit = _meldable(c, hand)
    v = _value(c, action.value)
    cards, vals = meld.cards, meld.values
    if meld.kind == "set":
        # docs/DECISIONS.md "Run Wild": "Set: 3+ cards of one number"; "No size cap on sets (setting)."
        if v != vals[0]:
            raise _misfit(c, v, meld, f"a set of {vals[0]}s takes only {vals[0]}s")
        cap = state.rules.max_set_size
        if cap and len(cards) >= cap:
            raise _misfit(c, v, meld, f"a set holds at most {cap} cards at this table")
        k = bisect.bisect(cards, c)     # a set's cards sit in id order (numbers, then wilds)
        cs, vs = cards[:k] + (c,) + cards[k:], vals + (v,)
    else:
        # docs/DECISIONS.md "Run Wild": "Run: 3+ cards of one colour in consecutive numbers 1..12, no wrap".
        colour = _run_colour(meld)
        if c < FIRST_WILD and 0 <= colour != COLOUR_OF[c]:
            raise _misfit(c, v, meld, f"the run is {COLOURS[colour]}")
        lo, hi = vals[0], vals[-1]
        if v == lo - 1:
            cs, vs = (c,) + cards, (v,) + vals
        elif v == hi + 1:
            cs, vs = cards + (c,), vals + (v,)
        else:
            ends = " or ".join(str(x) for x in (lo - 1, hi + 1) if 1 <= x <= 12) or "nothing more"
            raise _misfit(c, v, meld, f"a run grows only at its ends and takes {ends}; it does not wrap from 12 to 1")
    events = [{"event": "card_added", "seat": seat, "meld": meld.id, "card": c, "value": v}]
    new = build(TableMeld, (meld.id, meld.kind, cs, vs, meld.history | bit))
    st = _with_hand(state, seat, hand & ~bit, events, _replace_meld(state.melds, i, new))
    return _after_play(st, seat, events)


def _misfit(card: int, value: int, meld: TableMeld, why: str) -> IllegalAction:
    return IllegalAction("does_not_fit", f"{card_label(card)} as a {value} does not fit {_describe(meld)}: {why}.")


def _take(state: State, seat: int, action: Take) -> tuple[State, list]:
    # Rulebook: "players may take cards from previously played sets and runs, but only if
    # the remaining cards still form a complete set or run." docs/DECISIONS.md "Run Wild": "Take: allowed only
    # if what stays is still one valid meld of 3+ cards with the same wild values (a run
    # cannot be split)." The values are kept, so a wild that stays keeps its number.
    i, meld = _find_meld(state, action.meld)
    c = action.card
    _check_card(c)
    cards = meld.cards
    if c not in cards:
        raise _gone(state, meld, c, seat)
    k = cards.index(c)
    size = len(cards)
    rest = cards[:k] + cards[k + 1:]
    why = None
    if size <= 3:
        why = "a set or run needs at least 3 cards"
    elif meld.kind == "run" and 0 < k < size - 1:
        why = f"a run cannot be split; only its end cards ({card_label(cards[0])}, {card_label(cards[-1])}) can be taken"
    elif c < FIRST_WILD and not state.rules.allow_all_wild_melds and min(rest) >= FIRST_WILD:
        why = "a meld needs at least one number card (all-wild melds are off at this table)"
    if why:
        left = " ".join(card_label(x) for x in rest)
        raise IllegalAction("would_break_meld", f"Taking {card_label(c)} from {_describe(meld)} would leave "
                                                f"{left}, which is not a whole set or run: {why}.")
    events = [{"event": "card_taken", "seat": seat, "meld": meld.id, "card": c}]
    new = build(TableMeld, (meld.id, meld.kind, rest, meld.values[:k] + meld.values[k + 1:], meld.history))
    st = _with_hand(state, seat, state.hands[seat] | 1 << c, events, _replace_meld(state.melds, i, new))
    return st, events


def _swap(state: State, seat: int, action: Swap) -> tuple[State, list]:
    # Rulebook: "A player may also replace a card from a previously played set or run with
    # another card from his or her hand that would complete that set or run." docs/DECISIONS.md "Run Wild":
    # "the incoming card must stand for the same card the outgoing one stood for (a wild,
    # or a number card that fits that spot)"; "the replaced card goes to your hand".
    i, meld = _find_meld(state, action.meld)
    out_c = action.take
    _check_card(out_c)
    cards = meld.cards
    if out_c not in cards:
        raise _gone(state, meld, out_c, seat)
    hand = state.hands[seat]
    g = action.give
    bit = _meldable(g, hand)
    v = _value(g, action.value)
    k = cards.index(out_c)
    want = meld.values[k]
    if v != want:
        raise IllegalAction("swap_mismatch", f"{card_label(out_c)} in {_describe(meld)} stands for a {want}; "
                                             f"the card you give must stand for a {want} too.")
    if g < FIRST_WILD:
        # In a run every card, wilds included, is of the run's colour.
        colour = _run_colour(meld) if meld.kind == "run" else -1
        if 0 <= colour != COLOUR_OF[g]:
            raise IllegalAction("swap_mismatch", f"{card_label(g)} cannot stand in for {card_label(out_c)} in "
                                                 f"{_describe(meld)}: only the {COLOURS[colour]} {want} or a wild fits there.")
    elif out_c < FIRST_WILD and not state.rules.allow_all_wild_melds and \
            all(x >= FIRST_WILD for j, x in enumerate(cards) if j != k):
        raise IllegalAction("swap_mismatch", f"A wild cannot replace {card_label(out_c)} in {_describe(meld)}: "
                                             "a meld needs at least one number card (all-wild melds are off at this table).")
    cs = cards[:k] + (g,) + cards[k + 1:]
    if meld.kind == "set":
        cs = tuple(sorted(cs))          # a set's cards sit in id order
    events = [{"event": "card_swapped", "seat": seat, "meld": meld.id, "took": out_c, "gave": g, "value": v}]
    new = build(TableMeld, (meld.id, meld.kind, cs, meld.values, meld.history | bit))
    st = _with_hand(state, seat, (hand & ~bit) | 1 << out_c, events, _replace_meld(state.melds, i, new))
    return st, events


def _draw3(state: State, seat: int, action: PlayDraw3) -> tuple[State, list]:
    # Rulebook: "When playing a Draw-3 Card, the player ... places the card face-up next to
    # his or her draw pile. Each player, except the person who played the Draw-3 Card, must
    # immediately draw three cards ... If fewer than three cards remain ..., all remaining
    # cards must be drawn."
    c = action.card
    bit = _check_card(c)
    if c < FIRST_DRAW3:
        raise IllegalAction("not_a_draw3", f"{card_label(c)} ({c}) is not a Draw-3 card.")
    hand = state.hands[seat]
    if not hand & bit:
        raise IllegalAction("not_in_hand", f"{card_label(c)} ({c}) is not in your hand.")
    hand &= ~bit
    n = state.seats
    d3 = state.draw3s
    draw3s = d3[:seat] + (d3[seat] + (c,),) + d3[seat + 1:]
    drawn = [0] * n
    hands = list(state.hands)
    pos = state.pos
    if hand:
        # "If a player plays a Draw-3 Card as his or her last card, the round ends
        # immediately, and the other players are not required to draw" - so only here.
        moved = list(pos)
        piles = state.deal.piles
        for s in state.deal.order:
            if s != seat:
                p = moved[s]
                got = piles[s][p:p + 3]
                hands[s] |= _mask(got)
                moved[s] = p + len(got)
                drawn[s] = len(got)
        pos = tuple(moved)
    events = [{"event": "draw3_played", "seat": seat, "card": c, "drawn": drawn}]
    stuck = state.stuck
    if hand and state.rules.version >= 2 and True in stuck:
        # docs/DECISIONS.md "Run Wild": a stuck declaration is cleared "by drawing cards through someone's
        # Draw-3: new cards may be playable". A player whose pile was empty drew nothing
        # and stays stuck. (Rules version 1 left every stuck player stuck.)
        cleared = [s for s in state.deal.order if s != seat and stuck[s] and drawn[s]]
        if cleared:
            stuck = tuple(False if s in cleared else x for s, x in enumerate(stuck))
            events += [{"event": "stuck_cleared", "seat": s} for s in cleared]
    st = _with_hand(evolve(state, hands=tuple(hands), pos=pos, draw3s=draw3s, stuck=stuck), seat, hand, events,
                    state.melds)
    return _after_play(st, seat, events)


def _stuck(state: State, seat: int, action: Stuck) -> tuple[State, list]:
    # docs/DECISIONS.md "Run Wild": "a player may declare "stuck" (cleared by their next action); when all are
    # stuck ... the round ends and is scored as if someone went out."
    if state.stuck[seat]:
        raise IllegalAction("already_stuck", "You have already declared that you are stuck.")
    stuck = state.stuck[:seat] + (True,) + state.stuck[seat + 1:]
    st = evolve(state, stuck=stuck)
    events = [{"event": "stuck_declared", "seat": seat}]
    if all(stuck[s] for s in state.deal.order):
        return _end_round(st, "all_stuck", None, events)
    return st, events


_PLAY: dict[type, Callable[[State, int, Any], tuple[State, list]]] = {Draw: _draw, PlayMeld: _meld, Add: _add, Take: _take, Swap: _swap, PlayDraw3: _draw3, Stuck: _stuck}


def _phase_refusal(state: State) -> IllegalAction:
    """Why nothing but the expected step can happen in this phase."""
    ph = state.phase
    if ph == "over":
        return IllegalAction("game_over", "The game is over.")
    if ph == "scored":
        who = f"seat {state.score.out} went out" if state.score.out is not None else \
            {"all_stuck": "every player was stuck", "idle_timeout": "nobody acted in time"}.get(state.score.ended_by, "")
        return IllegalAction("round_over", f"Round {state.deal.round} is over ({who}); wait for the next deal.")
    if ph == "dealing":
        return IllegalAction("not_started", "The cards have not been dealt yet.")
    if ph == "ready":
        return IllegalAction("not_started", "The round has not started: wait for \"Go!\".")
    return IllegalAction("already_started", "The round has already started.")


def apply(state: State, seat: int | None, action: Any) -> tuple[State, list]:
    """One action, atomically, against the current state (docs/DECISIONS.md "Run Wild": "each applied
    atomically in the order the server receives them"). Refusals raise IllegalAction and
    leave the state as it was."""
    kind = type(action)
    handler = _PLAY.get(kind)
    if handler is not None:
        if type(seat) is not int or not 0 <= seat < state.seats:
            raise IllegalAction("not_your_seat", "Only a player at a seat of this table can do that.")
        if state.phase != "playing":
            if state.phase == "ready":
                if state.score.rounds:
                    # docs/DECISIONS.md "Run Wild": "every action that arrives later is rejected as "round over"".
                    # The next round is dealt at once, so until its "Go!" a play is a late one.
                    r = state.deal.round
                    raise IllegalAction("round_over", f"Round {r - 1} is over; round {r} starts at \"Go!\" "
                                                      "once everyone is ready.")
                if state.deal.in_round[seat]:
                    raise IllegalAction("not_started", "No play before the round's \"Go!\": wait for it.")
                raise IllegalAction("not_in_round", "You sit this tie-break round out.")
            raise _phase_refusal(state)
        if not state.deal.in_round[seat]:
            raise IllegalAction("not_in_round", "You sit this tie-break round out: only the tied players play it.")
        return handler(state, seat, action)
    if kind is Ready:
        if type(seat) is not int or not 0 <= seat < state.seats:
            raise IllegalAction("not_your_seat", "Only a player at a seat of this table can be ready.")
        if state.phase == "ready":
            if not state.deal.in_round[seat]:
                raise IllegalAction("not_in_round", "You sit this tie-break round out: only the tied players play it.")
            if state.ready[seat]:
                raise IllegalAction("already_ready", "You are already ready; the round starts when everyone is.")
            ready = state.ready[:seat] + (True,) + state.ready[seat + 1:]
            return evolve(state, ready=ready), [{"event": "player_ready", "seat": seat}]
        if state.phase == "playing":
            raise IllegalAction("already_ready", "The round has already started.")
        raise _phase_refusal(state)
    if kind is ChanceOutcome:
        if seat is not None:
            raise IllegalAction("not_your_seat", "Only the table shuffles and draws the dealer.")
        return _deal(state, action)
    if kind is Go:
        # Rulebook: "The dealer begins the round by saying "Go!"" - here the table says it
        # once every seat in the round is ready.
        if seat is not None:
            raise IllegalAction("not_your_seat", "Only the table says \"Go!\".")
        if state.phase != "ready":
            raise _phase_refusal(state)
        waiting = [s for s in state.deal.order if not state.ready[s]]
        if waiting:
            raise IllegalAction("not_ready", f"Not everyone is ready yet (waiting for seat(s) {', '.join(map(str, waiting))}).")
        st = evolve(state, phase="playing")
        return st, [{"event": "round_started", "round": state.deal.round}]
    if kind is IdleTimeout:
        # docs/DECISIONS.md "Run Wild": "when no action is accepted for a timeout (setting, default 120 s), the
        # round ends and is scored as if someone went out. The timeout is a logged action."
        if seat is not None:
            raise IllegalAction("not_your_seat", "Only the table's timer ends an idle round.")
        if state.phase != "playing":
            raise _phase_refusal(state)
        return _end_round(state, "idle_timeout", None, [])
    if kind is ReadyTimeout:
        # A seat that left (or never answers) must not hold the table between rounds:
        # after the ready timeout the table readies it, and "Go!" follows. Logged, like
        # every timer's move, so replay needs no clock.
        if seat is not None:
            raise IllegalAction("not_your_seat", "Only the table's timer readies the seats.")
        if state.phase != "ready":
            raise _phase_refusal(state)
        waiting = sorted(s for s in state.deal.order if not state.ready[s])
        if not waiting:
            raise IllegalAction("already_ready", "Every seat in the round is ready already.")
        ready = tuple(r or s in waiting for s, r in enumerate(state.ready))
        return evolve(state, ready=ready), [{"event": "player_ready", "seat": s, "timer": True} for s in waiting]
    raise IllegalAction("unknown_action", f"Run Wild has no action {type(action).__name__!r}.")


# ------------------------------------------------------------------ what seats see

def auto_action(state: State) -> Go | None:
    """"Go!" is due once every seat in the round is ready."""
    if state.phase == "ready" and all(state.ready[s] for s in state.deal.order):
        return Go()
    return None


def timeout_action(state: State) -> Timeout | None:
    """During play, the idle timeout ends the round; after the deal, the ready timeout
    (setting ready_timeout, 0 = none) readies every seat not yet ready."""
    if state.phase == "playing":
        return Timeout(state.rules.idle_timeout, None, IdleTimeout())
    if state.phase == "ready" and state.rules.ready_timeout > 0:
        return Timeout(state.rules.ready_timeout, None, ReadyTimeout())
    return None


def to_move(state: State) -> tuple[int, ...]:
    """Everyone in the round while playing (there are no turns); un-ready seats before Go."""
    if state.phase == "playing":
        return tuple(sorted(state.deal.order))
    if state.phase == "ready":
        return tuple(s for s in sorted(state.deal.order) if not state.ready[s])
    return ()


def outcome(state: State) -> Outcome:
    return Outcome(state.phase == "over", state.score.totals, state.score.winners)


def _meld_data(m: TableMeld) -> dict:
    return {"id": m.id, "kind": m.kind, "cards": list(m.cards), "values": list(m.values)}


def _player_data(state: State, s: int) -> dict:
    deal = state.deal
    return {"seat": s, "hand": state.hands[s].bit_count(), "pile": len(deal.piles[s]) - state.pos[s],
            "draw3s": list(state.draw3s[s]), "stuck": state.stuck[s], "ready": state.ready[s],
            "in_round": deal.in_round[s]}


def _score_data(sc: Scores) -> dict:
    return {"round_scores": [list(r) for r in sc.rounds], "totals": list(sc.totals), "out": sc.out,
            "ended_by": sc.ended_by, "winners": list(sc.winners)}


def public_view(state: State) -> dict:
    """What every seat and spectator may know: every count, the melds, the face-up
    Draw-3s, the scores. ``view`` is this plus ``private_view``; the server encodes this
    part once per update and adds each seat's private part (engine API, optional)."""
    deal = state.deal
    sc = state.score
    return {
        "game": NAME, "round": deal.round, "rounds": state.rules.rounds,
        "dealer": deal.dealer if deal.dealer >= 0 else None,        # None: not drawn yet
        "phase": state.phase,
        "players": [_player_data(state, s) for s in range(state.seats)],
        "melds": [_meld_data(m) for m in state.melds],
        **_score_data(sc),
        "settings": {**state.rules.as_dict(), "ready_timeout": state.rules.ready_timeout},
    }


def public_view_from(state: State, before: State, before_view: dict) -> dict:
    """``public_view(state)``, built from ``before_view`` (``public_view(before)``): every
    part of the state that is the same object as in ``before`` keeps ``before_view``'s
    value for it (the same object), so an update builds only what changed and the
    server's diff skips the rest by identity (engine API, optional; issue #25). The
    values are shared between views, so no one may change them."""
    if state is before:
        return before_view
    if state.rules is not before.rules or state.seats != before.seats or state.deal is not before.deal:
        return public_view(state)
    out = dict(before_view)
    out["phase"] = state.phase
    melds, old_melds = state.melds, before.melds
    if melds is not old_melds:
        # a meld that is the same object keeps its map (melds are replaced, never changed)
        old_maps, n = before_view["melds"], len(old_melds)
        out["melds"] = [old_maps[i] if i < n and old_melds[i] is md else _meld_data(md) for i, md in enumerate(melds)]
    if (state.hands is not before.hands or state.pos is not before.pos or state.draw3s is not before.draw3s
            or state.stuck is not before.stuck or state.ready is not before.ready):
        out["players"] = [
            old if (state.hands[s] == before.hands[s] and state.pos[s] == before.pos[s]
                    and state.draw3s[s] == before.draw3s[s] and state.stuck[s] == before.stuck[s]
                    and state.ready[s] == before.ready[s]) else _player_data(state, s)
            for s, old in enumerate(before_view["players"])]
    if state.score is not before.score:
        out.update(_score_data(state.score))
    return out


def private_view(state: State, seat: int | None) -> dict:
    """What only ``seat`` may know: its hand and its pile's size (None: a spectator)."""
    if seat is None:
        return {"seat": None}
    if type(seat) is not int or not 0 <= seat < state.seats:
        raise IllegalAction("not_your_seat", f"There is no seat {seat!r} at this table.")
    return {"seat": seat, "hand": _bits(state.hands[seat]), "pile": len(state.deal.piles[seat]) - state.pos[seat]}


def private_key(state: State, seat: int | None) -> tuple:
    """All that ``private_view(state, seat)`` reads: equal keys, equal private views (the
    server encodes a seat's private part again only when its key changed; engine API,
    optional)."""
    if seat is None or type(seat) is not int or not 0 <= seat < state.seats:
        return (seat,)          # (private_view checks the seat)
    return (seat, state.hands[seat], len(state.deal.piles[seat]) - state.pos[seat])


def view(state: State, seat: int | None) -> dict:
    """What ``seat`` may know (None: a spectator): its own hand and pile size, every count,
    the melds and face-up Draw-3s. Never another hand or any pile's cards or order."""
    private = private_view(state, seat)     # checks the seat first
    out = public_view(state)
    out.update(private)
    return out


def snapshot(state: State) -> dict:
    """The all-seeing state as plain data (state hash, ``replay --json``)."""
    deal = state.deal
    sc = state.score
    return {
        "game": NAME, "seats": state.seats, "settings": state.rules.as_dict(), "phase": state.phase,
        "round": deal.round, "dealer": deal.dealer if deal.dealer >= 0 else None, "order": list(deal.order),
        "in_round": list(deal.in_round),
        "hands": [_bits(h) for h in state.hands],
        "piles": [list(deal.piles[s][state.pos[s]:]) for s in range(state.seats)],
        "melds": [dict(_meld_data(m), history=_bits(m.history)) for m in state.melds],
        "next_meld": state.next_meld,
        "draw3s": [list(d) for d in state.draw3s],
        "stuck": list(state.stuck), "ready": list(state.ready),
        "round_scores": [list(r) for r in sc.rounds], "totals": list(sc.totals),
        "out": sc.out, "ended_by": sc.ended_by, "winners": list(sc.winners),
        "next_seats": list(sc.next_seats),
    }


# ------------------------------------------------------------------ bots

_MAX_MELDS, _MAX_ADDS, _MAX_SWAPS, _MAX_TAKES = 6, 8, 3, 3
#: bitmask of the five number cards showing ``n`` (index 0 unused)
_NUMBER_SETS = (0,) + tuple(sum(1 << (col * 12 + n - 1) for col in range(5)) for n in range(1, 13))


def _meld_candidates(hand: int, rules: Rules) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    """Sets of one number and runs of one colour formable from ``hand``, wilds filling in
    (longest first). Built valid by construction: one number or one colour, numbers 1..12
    without gaps, at least one number card, no set over the cap."""
    wilds = _bits(hand & _WILD_MASK)
    w = len(wilds)
    found = []
    cap = rules.max_set_size or DECK_SIZE
    if hand & _NUMBER_MASK:
        for n in range(1, 13):
            m = hand & _NUMBER_SETS[n]
            if m:
                k = m.bit_count()
                if k >= 3:
                    cs = tuple(_bits(m)[:cap])
                    found.append((cs, (n,) * len(cs)))
                elif k + w >= 3:
                    cs = tuple(_bits(m)) + tuple(wilds[:3 - k])
                    found.append((cs, (n,) * 3))
        for col in range(5):
            row = hand >> (col * 12) & 0xFFF     # bit v-1 set: this colour's v is in hand
            if not row or (not w and not row & row >> 1 & row >> 2):
                continue
            base = col * 12 - 1
            for start in range(1, 13):
                if not row >> (start - 1) & 1 or (start > 1 and row >> (start - 2) & 1):
                    continue    # runs start at the lowest card of a stretch
                cards, values, used, v = [], [], 0, start
                while v <= 12:
                    if row >> (v - 1) & 1:
                        cards.append(base + v)
                    elif used < w:
                        cards.append(wilds[used])
                        used += 1
                    else:
                        break
                    values.append(v)
                    v += 1
                while len(cards) > 3 and cards[-1] >= FIRST_WILD:
                    cards.pop()
                    values.pop()
                    used -= 1
                lo = start
                while len(cards) < 3 and used < w and lo > 1:
                    lo -= 1
                    cards.insert(0, wilds[used])
                    values.insert(0, lo)
                    used += 1
                if len(cards) >= 3:
                    found.append((tuple(cards), tuple(values)))
    if rules.allow_all_wild_melds and w >= 3:
        found.append((tuple(wilds[:3]), (12, 12, 12)))
    found.sort(key=lambda cv: -len(cv[0]))
    return found[:_MAX_MELDS]


def legal_actions(state: State, seat: int) -> list:
    """A bounded, useful sample of actions ``seat`` may take now; apply accepts each one.

    Draw while the pile lasts; "stuck" only once the pile is empty; takes only for a seat
    that is not stuck, so random play settles: a stuck seat is offered only what shrinks
    its hand (or swaps), and the round ends when every seat is stuck.
    """
    if type(seat) is not int or not 0 <= seat < state.seats or not state.deal.in_round[seat]:
        return []
    if state.phase == "ready":
        return [] if state.ready[seat] else [Ready()]
    if state.phase != "playing":
        return []
    rules = state.rules
    hand = state.hands[seat]
    stuck = state.stuck[seat]
    acts: list = []
    if state.pos[seat] < len(state.deal.piles[seat]):
        acts.append(Draw())
    elif not stuck:
        acts.append(Stuck())
    d3 = hand & _DRAW3_MASK
    if d3:
        acts.append(PlayDraw3((d3 & -d3).bit_length() - 1))
    for cs, vs in _meld_candidates(hand, rules):
        acts.append(PlayMeld(cs, vs if max(cs) >= FIRST_WILD else ()))
    wm = hand & _WILD_MASK
    wild = (wm & -wm).bit_length() - 1 if wm else -1
    cap = rules.max_set_size
    all_wild_ok = rules.allow_all_wild_melds
    adds: list = []
    swaps: list = []
    takes: list = []
    # Built to satisfy _shape directly (checking each with _shape costs more than the rest
    # of a step); the playout tests apply every action offered to prove it.
    for m in state.melds:
        cards, vals, size, mid = m.cards, m.values, len(m.cards), m.id
        colour = -1             # the run's colour; -1 for a set or an all-wild run
        if m.kind == "set":
            n = vals[0]
            if not cap or size < cap:
                fit = hand & _NUMBER_SETS[n]
                if fit:
                    adds += [Add(mid, c, None) for c in _bits(fit)]
                if wild >= 0:
                    adds.append(Add(mid, wild, n))
        else:
            lo, hi = vals[0], vals[-1]
            colour = _run_colour(m)
            ends = (lo - 1 if lo > 1 else 0, hi + 1 if hi < 12 else 0)
            for v in ends:
                if v:
                    fit = hand & _NUMBER_SETS[v] if colour < 0 else hand & 1 << (colour * 12 + v - 1)
                    if fit:
                        adds.append(Add(mid, (fit & -fit).bit_length() - 1, None))
            if wild >= 0 and (ends[0] or ends[1]):
                adds.append(Add(mid, wild, ends[1] or ends[0]))
        if len(swaps) < _MAX_SWAPS:
            for k, c in enumerate(cards):
                if c >= FIRST_WILD:
                    v = vals[k]
                    fit = hand & _NUMBER_SETS[v] if colour < 0 else hand & 1 << (colour * 12 + v - 1)
                    if fit:
                        swaps.append(Swap(mid, c, (fit & -fit).bit_length() - 1, None))
                        break
        if not stuck and size > 3 and len(takes) < _MAX_TAKES:
            if m.kind == "set":
                # cards sit by id, so wilds come last; if the last card is a number card,
                # all are, and a number card stays
                takes.append(Take(mid, cards[-1]))
            else:
                real = sum(1 for c in cards if c < FIRST_WILD)
                for k in (0, size - 1):
                    if cards[k] >= FIRST_WILD or real > 1 or all_wild_ok:
                        takes.append(Take(mid, cards[k]))
                        break
    acts += adds[:_MAX_ADDS]
    acts += swaps[:_MAX_SWAPS]
    acts += takes
    return acts


# ------------------------------------------------------------------ replay

from .run_wild_fast import (  # noqa: E402  (they use this module's names)
    RAW_ADVANCE as RAW_ADVANCE, advance as advance, packed_snapshot as packed_snapshot,
)
from .run_wild_run import replay_run  # noqa: E402,I001  (it uses this module's names)

REPLAY_RUN = replay_run
REPLAY_RUN_TYPED = True     # a run takes the deals' chance records and the table's typed "Go!"
