"""Go Fish Wildcard: ask for ranks, fish, and place sets of three whose ranks turn wild.

Source: /work/shared/rules/go-fish-wildcard.txt, read through docs/DECISIONS.md "Go Fish Wildcard",
which wins where the two differ. The rules as implemented, every setting
and every reading that had to be chosen are in docs/RULES.md, section "Go Fish Wildcard".

Cards are the standard 52-card deck (docs/DECISIONS.md "Go Fish Wildcard": "Standard 52-card deck"), id 0..51,
rank ``RANKS[id // 4]``, suit ``SUITS[id % 4]``. Wildness belongs to a rank, not to a
card: a rank turns wild the moment a card of it is placed in a set (rulebook: "All
cards face up on the table are wild cards"), so the state keeps one 13-bit mask.
A hand is a set of card ids kept as an int with bit ``id`` set (``hand_mask`` /
``hand_ids``): the four cards of a rank are one nibble, so "do you have any 7s?",
handing them over and "can this hand make a set?" are a few integer operations,
which keeps replay fast. Views and snapshots list the ids.

A turn moves through three steps (``State.step``):

- ``"ask"``: the player must ask (the first ask of a turn, and the one last ask of the
  endgame, are not optional); they may place sets first.
- ``"bonus"``: the asked-for card reached them and a set of three with no wilds can be
  made with it; they may place sets (such a set earns another ask) or end the turn.
- ``"again"``: another ask was earned; they may ask, place sets or end the turn.

Everything else (turn-start draws, forced sets, the empty-hand draw, skipped turns,
the last-ask round, scoring) happens inside ``apply`` as the rules make it happen.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import attrs

from ..codec import Registry
from ..engine import (
    ChanceOutcome, ChanceRequest, Outcome, TableConfig, Timeout, check_permutation, merge_settings,
    rules_version,
)
from ..errors import IllegalAction
from ..states import build, evolve, fields
from ..cards import ids_of

NAME = "go-fish-wildcard"
TITLE = "Go Fish Wildcard"
MIN_PLAYERS = 2   # docs/DECISIONS.md "Go Fish Wildcard": "2 to 6 players"
MAX_PLAYERS = 6
#: 2: the dealer is drawn by lot unless the host chose one (setting dealer, default -1);
#: version 1 (a log without "rules" in its header) had seat 0 deal by default.
#: 3: turn_timer at most a day (86400 s), as Go Wild!'s and Run Wild's timers; a log of
#: version 2 or 1 replays with the longer timer it was played with.
RULES_VERSION = 3
MAX_TURN_TIMER = 86400.0      # seconds, from rules version 3

RANKS = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
SUITS = ("C", "D", "H", "S")
SUIT_NAMES = ("clubs", "diamonds", "hearts", "spades")
DECK_SIZE = 52
HAND_SIZE = 4      # rulebook Setup: "Deal each player 4 cards"
SET_SIZE = 3       # docs/DECISIONS.md "Go Fish Wildcard": "A set is exactly 3 cards"
EMPTY_DRAW = 2     # rulebook Turns: "take 2 cards from the draw pile"

# Card tables, computed once: the hot paths only index tuples.
RANK_OF = tuple(c // 4 for c in range(DECK_SIZE))
RANK_INDEX: dict[str, int] = {r: i for i, r in enumerate(RANKS)}
LABELS = tuple(RANKS[c // 4] + SUITS[c % 4] for c in range(DECK_SIZE))
_INFO = tuple(
    {"id": c, "rank": RANKS[c // 4], "suit": SUITS[c % 4], "suit_name": SUIT_NAMES[c % 4], "label": LABELS[c]}
    for c in range(DECK_SIZE)
)
_DEAL = ChanceRequest("deal", DECK_SIZE)
RANK_MASK: tuple[int, ...] = tuple(0xF << (4 * r) for r in range(13))   # the bits of a rank's four cards
_M1 = int("1" * 13, 16)                                # bit 0 of every nibble
_M3, _M4, _M5, _M6 = 3 * _M1, 4 * _M1, 5 * _M1, 6 * _M1
# WILD_CARDS[m]: the card bits of every rank in the wild-rank mask m.
_wc = [0] * (1 << 13)
for _m in range(1, 1 << 13):
    _low = _m & -_m
    _wc[_m] = _wc[_m ^ _low] | RANK_MASK[_low.bit_length() - 1]
WILD_CARDS = tuple(_wc)
del _wc, _m, _low
#: ASK_ENTRY[seat][target][rank][code]: the history entry of an ask, (seat, target, rank,
#: cards handed over, cards fished), code the cards handed over (0 to 4) or 5 for one
#: fished. Each made once: every ask the engine records is one of these objects, so the
#: state hash finds its packed map by the object (go_fish_wildcard_fast.packed_snapshot).
ASK_ENTRY: tuple = tuple(tuple(tuple(tuple((s, t, r, k, 0) for k in range(5)) + ((s, t, r, 0, 1),) for r in range(13))
                        for t in range(MAX_PLAYERS)) for s in range(MAX_PLAYERS))


def ask_entry(seat: int, target: int, r: int, handed: int, drew: int) -> tuple:
    """The history entry of an ask (``handed`` 0 to 4, or ``drew`` 1): ASK_ENTRY's object
    where there is one (int seats of a table), else a new tuple of the same items."""
    if type(seat) is int and type(target) is int and 0 <= seat < MAX_PLAYERS and 0 <= target < MAX_PLAYERS:
        return ASK_ENTRY[seat][target][r][5 if drew else handed]
    return (seat, target, r, handed, drew)


def hand_mask(ids) -> int:
    """Card ids -> the hand's bit set."""
    m = 0
    for c in ids:
        m |= 1 << c
    return m


hand_ids = ids_of      # the card ids in a bit mask, ascending (protocol/cards.py)


def card_info(card_id: int) -> dict:
    """Plain facts about one card, for clients (wildness depends on the table, see the view)."""
    return dict(_INFO[card_id])


def card_label(card_id: int) -> str:
    """Short text for the terminal client: rank then suit letter, e.g. ``10H``, ``QS``."""
    return LABELS[card_id]


def _name(c: int) -> str:
    return LABELS[c] if 0 <= c < DECK_SIZE else f"card {c}"


# ---------------------------------------------------------------------------- actions

ACTIONS = Registry("kind", "action")


@ACTIONS.register("ask")
@attrs.frozen
class Ask:
    """Ask seat ``target`` for every card of ``rank`` (a name from RANKS: "A", "2".."10", "J", "Q", "K")."""
    target: int = attrs.field(metadata={"min": 0, "max": MAX_PLAYERS - 1})
    rank: str = attrs.field(metadata={"max_len": 2})


@ACTIONS.register("place")
@attrs.frozen
class Place:
    """Place three cards from your hand face up as a set."""
    cards: tuple[int, ...] = attrs.field(metadata={"max_items": DECK_SIZE, "item_min": 0, "item_max": DECK_SIZE - 1})


@ACTIONS.register("end_turn")
@attrs.frozen
class EndTurn:
    """Stop after an ask: decline placing for another ask, or decline the ask you earned."""


# ---------------------------------------------------------------------------- state

class State(NamedTuple):
    """A whole table. Immutable like every state; a NamedTuple rather than an attrs class
    (as Run Wild's): one is built per action (``_W.freeze``), and attrs' frozen __init__ (a
    guarded setattr per field) costs 1.0 us against 0.1 us for ``states.build``."""
    n: int
    dealer: int | None    # None until drawn by lot (chance "dealer")
    turn_timer: float
    phase: str            # "deal", "play", "last_asks", "over"
    hands: tuple          # per seat, the hand as a bit set of card ids (see hand_ids)
    pile: tuple           # draw pile, top card first
    wild: int             # bit r set: rank r is wild
    sets: tuple           # (seat, (a, b, c)) in the order placed; the index is the set id
    scores: tuple         # sets placed per seat
    turn: int | None      # the seat to act; None while dealing or when over
    step: str             # "ask", "bonus", "again"; "" when nobody is to act
    bonus: int            # step "bonus": bit set of the asked-for cards that reached the player
    last_order: tuple     # phase "last_asks": seats still due a last ask after the current one
    drawer: int | None    # who drew the last card of the pile
    history: tuple        # asks: (seat, target, rank, cards handed over, cards fished)


class _W:
    """A mutable working copy for one ``apply``; frozen into a new State once at the end."""
    __slots__ = fields(State)

    def __init__(self, s: State):
        # one unpacking of the State tuple, in field order (both list every field in it)
        (self.n, self.dealer, self.turn_timer, self.phase, hands, self.pile, self.wild, self.sets, self.scores,
         self.turn, self.step, self.bonus, self.last_order, self.drawer, self.history) = s
        self.hands = list(hands)

    def freeze(self) -> State:
        return build(State, (self.n, self.dealer, self.turn_timer, self.phase, tuple(self.hands), self.pile,
                                  self.wild, self.sets, self.scores, self.turn, self.step, self.bonus,
                                  self.last_order, self.drawer, self.history))


# ---------------------------------------------------------------------------- settings, table

def default_settings() -> dict:
    # docs/DECISIONS.md "Go Fish Wildcard": "The dealer: a logged chance outcome, or the host's choice (setting)".
    return {"dealer": -1, "turn_timer": 60.0}


_CHECKS = {
    "dealer": lambda v: None if v >= -1 else "must be -1 (drawn by lot) or a seat number",
    "turn_timer": lambda v: None if v >= 0 and math.isfinite(v) else "must be 0 (off) or a number of seconds",
}


def new_table(config: TableConfig) -> State:
    """A table waiting for its deal; settings checked (IllegalAction "bad_settings")."""
    n = config.seats
    if type(n) is not int or not MIN_PLAYERS <= n <= MAX_PLAYERS:
        raise IllegalAction("bad_settings", f"{TITLE} is for {MIN_PLAYERS} to {MAX_PLAYERS} players, not {n}.")
    version = rules_version(config, RULES_VERSION)
    defaults = default_settings()
    if version == 1:
        defaults["dealer"] = 0       # rules version 1: seat 0 dealt unless the host chose
    s = merge_settings(defaults, config.settings, _CHECKS)
    if version >= 3 and s["turn_timer"] > MAX_TURN_TIMER:
        raise IllegalAction("bad_settings", f"setting 'turn_timer': must be 0 (off) or a number of seconds up to "
                                            f"{MAX_TURN_TIMER:g}, not {s['turn_timer']!r}.")
    if s["dealer"] >= n or (version == 1 and s["dealer"] < 0):
        raise IllegalAction("bad_settings", f"setting 'dealer': seat {s['dealer']} does not exist at a table "
                                            f"of {n}; choose 0 to {n - 1}, or -1 to draw the dealer by lot.")
    dealer = s["dealer"] if s["dealer"] >= 0 else None
    return State(n, dealer, float(s["turn_timer"]), "deal", (0,) * n, (), 0, (), (0,) * n, None, "", 0, (),
                 None, ())


def pending_chance(state: State) -> ChanceRequest | None:
    """The dealer drawn by lot (a permutation of the seats: its first item deals), unless
    the host chose one; then the shuffle before the deal (the pile is never reshuffled)."""
    if state.phase != "deal":
        return None
    return _DEAL if state.dealer is not None else ChanceRequest("dealer", state.n)


def auto_action(state: State) -> None:
    """No table action is ever due: play starts once the cards are dealt."""
    return None


def to_move(state: State) -> tuple[int, ...]:
    return () if state.turn is None else (state.turn,)


def outcome(state: State) -> Outcome:
    """Most sets wins; ties are shared (rulebook Scoring, docs/DECISIONS.md "Go Fish Wildcard": "ties shared")."""
    if state.phase != "over":
        return Outcome(False, state.scores)
    return Outcome(True, state.scores, _winners(state.scores))


def _winners(scores: tuple) -> tuple[int, ...]:
    best = max(scores)
    return tuple(i for i, s in enumerate(scores) if s == best)


# ---------------------------------------------------------------------------- sets

def _shape(cards, wild: int) -> tuple[bool, int, int]:
    """(valid, natural rank or -1, wild cards used) for three cards under the ``wild`` mask.

    docs/DECISIONS.md "Go Fish Wildcard": "A set is exactly 3 cards: cards of one rank plus any wilds, or 3 wilds."
    A card of a wild rank always counts as a wild.
    """
    nat = -1
    nw = 0
    for c in cards:
        r = RANK_OF[c]
        if wild >> r & 1:
            nw += 1
        elif nat < 0:
            nat = r
        elif nat != r:
            return False, -1, 0
    return True, nat, nw


def _reach(pairs: int, singles: int, w: int) -> int:
    """How many sets a hand with no rank of 3+ can still make from ``pairs`` and ``singles``
    of non-wild ranks and ``w`` wild cards.

    Placing a set that holds rank r turns the rest of r in hand wild, so a rank costs
    3 - (its count) wilds however it is used: a pair 1, a single 2, a set of 3 wilds 3.
    Every set is worth the same, so taking the cheapest first gives the most sets.
    """
    x = pairs if pairs < w else w
    w -= x
    y = w // 2
    if singles < y:
        y = singles
    return x + y + (w - 2 * y) // 3


def _groups(nat: int) -> list:
    """The cards of a bit set by rank, lowest rank first: a list of id lists."""
    out = []
    while nat:
        rm = RANK_MASK[((nat & -nat).bit_length() - 1) >> 2]
        out.append(hand_ids(nat & rm))
        nat &= ~rm
    return out


def _set_options(hand: int, wild: int) -> list:
    """One possible set per shape (a rank and how many of its cards, or 3 wilds), lowest ids."""
    wc = WILD_CARDS[wild]
    wl = hand_ids(hand & wc)
    out = []
    for ids in _groups(hand & ~wc):
        for k in range(min(len(ids), SET_SIZE), 0, -1):
            need = SET_SIZE - k
            if need <= len(wl):
                out.append(Place(tuple(sorted(ids[:k] + wl[:need]))))
    if len(wl) >= SET_SIZE:
        out.append(Place(tuple(wl[:SET_SIZE])))
    return out


def _any_set(hand: int, wild: int) -> bool:
    """Can ``hand`` make any set? True when some rank's count plus the wilds reaches 3.

    Counted for all 13 ranks at once: each nibble of the non-wild cards is turned into
    its own pop count (the classic SWAR bit count), then tested against 3 - wilds.
    """
    wc = WILD_CARDS[wild]
    w = (hand & wc).bit_count()
    if w >= SET_SIZE:
        return True
    nat = hand & ~wc
    if w == 2:
        return nat != 0
    t = nat - ((nat >> 1) & _M5)
    t = (t & _M3) + ((t >> 2) & _M3)          # every nibble now holds its rank's count
    if w == 1:
        return t & _M6 != 0                   # a count of 2 or more
    return (t & (t >> 1) & _M1) | (t & _M4) != 0   # a count of 3 or 4


def _forced_choice(hand: int, wild: int) -> tuple | None:
    """The next set forced on a hand, or None when no set can be made.

    docs/DECISIONS.md "Go Fish Wildcard": "every set you can still form is placed for you (most sets first, then
    no-wild sets first, then lowest card ids)". Read as: the forced placements together
    make as many sets as the hand can yield; sets without wilds go first; otherwise the
    next set is, among those that still allow that many, the one whose card ids (sorted)
    compare lowest.
    """
    wc = WILD_CARDS[wild]
    groups = _groups(hand & ~wc)
    for ids in groups:
        if len(ids) >= SET_SIZE:
            # A rank of 3 or 4 costs no wilds (a 4th card comes back as a wild), so
            # placing it first never lowers how many sets the hand makes.
            return tuple(ids[:SET_SIZE])
    wl = hand_ids(hand & wc)
    w = len(wl)
    pairs = sum(1 for g in groups if len(g) == 2)
    singles = len(groups) - pairs
    total = _reach(pairs, singles, w)
    if total == 0:
        return None
    # A pair used with 1 wild, or one of it with 2 wilds, leaves the same counts behind
    # (the other card turns wild), so each kind of set either keeps the most sets or not.
    pair_ok = w >= 1 and _reach(pairs - 1, singles, w - 1) == total - 1
    single_ok = w >= 2 and _reach(pairs, singles - 1, w - 2) == total - 1
    best = tuple(wl[:SET_SIZE]) if w >= SET_SIZE and _reach(pairs, singles, w - SET_SIZE) == total - 1 else None
    for ids in groups:
        if len(ids) == 2:
            if not pair_ok:
                continue
            cands = [tuple(sorted((ids[0], ids[1], wl[0])))]
            if w >= 2:
                cands.append(tuple(sorted((ids[0], wl[0], wl[1]))))
        elif single_ok:
            cands = [tuple(sorted((ids[0], wl[0], wl[1])))]
        else:
            continue
        for c in cands:
            if best is None or c < best:
                best = c
    return best


# ---------------------------------------------------------------------------- turn machinery

def _draw(w: _W, seat: int, k: int, reason: str, ev: list) -> tuple:
    """Take up to ``k`` cards off the top of the pile into ``seat``'s hand ("or what is left")."""
    pile = w.pile
    got = pile[:k]
    if not got:
        return got
    w.pile = pile[len(got):]
    h = w.hands[seat]
    for c in got:
        h |= 1 << c
    w.hands[seat] = h
    ev.append({"event": "cards_drawn", "seat": seat, "count": len(got), "reason": reason, "pile": len(w.pile)})
    return got


def _place(w: _W, seat: int, cards: tuple, forced: bool, ev: list) -> None:
    """Put a (checked) set on the table; every rank in it turns wild.

    Rulebook Wild Cards: "Whenever a card is placed as part of a set of 3, that card type
    immediately becomes wild"; docs/DECISIONS.md "Go Fish Wildcard": "Placing a set of a rank makes every card of
    that rank wild for the rest of the game."
    """
    wild = w.wild
    _, nat, nw = _shape(cards, wild)
    w.hands[seat] &= ~((1 << cards[0]) | (1 << cards[1]) | (1 << cards[2]))
    sid = len(w.sets)
    w.sets = w.sets + ((seat, cards),)
    add = 0
    for c in cards:
        add |= 1 << RANK_OF[c]
    new = add & ~wild
    w.wild = wild | add
    sc = list(w.scores)
    sc[seat] += 1
    w.scores = tuple(sc)
    ev.append({"event": "set_placed", "seat": seat, "set": sid, "cards": list(cards),
               "rank": RANKS[nat] if nat >= 0 else None, "wilds": nw, "forced": forced,
               "new_wild": [RANKS[r] for r in range(13) if new >> r & 1]})


def _end_turn(w: _W, seat: int, ev: list) -> None:
    """Close ``seat``'s turn: forced sets, the empty-hand draw, then whoever plays next."""
    # docs/DECISIONS.md "Go Fish Wildcard": "Forced sets: whenever your turn ends, every set you can still form is placed for you".
    while _any_set(w.hands[seat], w.wild):
        _place(w, seat, _forced_choice(w.hands[seat], w.wild), True, ev)
    # Rulebook Turns: "If you have no cards in hand at any point during or at the end of your
    # turn take 2 cards from the draw pile"; docs/DECISIONS.md "Go Fish Wildcard": "draw 2 (or what is left)".
    if w.phase == "play" and not w.hands[seat]:
        _draw(w, seat, EMPTY_DRAW, "empty_hand", ev)
    ev.append({"event": "turn_ended", "seat": seat})
    w.step = ""
    w.bonus = 0
    if w.phase == "play":
        # The pile is never empty when a turn of the play phase begins, so an empty pile
        # now means this seat drew the last card during this turn.
        # docs/DECISIONS.md "Go Fish Wildcard": "when the last card is drawn, that turn ends, then every player ... gets one last ask".
        if not w.pile:
            _start_last_asks(w, seat, ev)
        else:
            _begin_turn(w, (seat + 1) % w.n, ev)
    else:
        _next_last_ask(w, ev)


def _begin_turn(w: _W, seat: int, ev: list) -> None:
    """A play-phase turn; "left" is the next seat up (rulebook: "then moving clockwise")."""
    w.turn = seat
    w.step = "ask"
    w.bonus = 0
    ev.append({"event": "turn_started", "seat": seat, "last_ask": False})
    if not w.hands[seat]:
        # docs/DECISIONS.md "Go Fish Wildcard": "Starting a turn empty: draw 2, then play on."
        _draw(w, seat, EMPTY_DRAW, "turn_start_empty", ev)
        if not w.pile:
            # docs/DECISIONS.md "Go Fish Wildcard": "when the last card is drawn, that turn ends".
            _end_turn(w, seat, ev)


def _start_last_asks(w: _W, drawer: int, ev: list) -> None:
    """docs/DECISIONS.md "Go Fish Wildcard": "every player, starting left of the drawer and ending with the drawer, gets one last ask"."""
    w.phase = "last_asks"
    w.drawer = drawer
    order = tuple((drawer + i) % w.n for i in range(1, w.n + 1))
    ev.append({"event": "last_asks_began", "drawer": drawer, "order": list(order)})
    w.last_order = order
    _next_last_ask(w, ev)


def _next_last_ask(w: _W, ev: list) -> None:
    """Hand the last ask to the next seat due one; at the end of the round, score the game."""
    order = w.last_order
    while order:
        s = order[0]
        order = order[1:]
        if w.hands[s]:
            w.last_order = order
            w.turn = s
            w.step = "ask"
            w.bonus = 0
            ev.append({"event": "turn_started", "seat": s, "last_ask": True})
            return
        # docs/DECISIONS.md "Go Fish Wildcard": "Empty hand and empty pile: your turn is skipped."
        ev.append({"event": "turn_skipped", "seat": s, "reason": "empty_hand"})
    w.last_order = ()
    w.phase = "over"
    w.turn = None
    w.step = ""
    w.bonus = 0
    ev.append({"event": "game_over", "scores": list(w.scores), "winners": list(_winners(w.scores))})


def _bonus_open(w: _W, seat: int) -> bool:
    """Can an asked-for card that reached ``seat`` still go into a set with no wilds?

    docs/DECISIONS.md "Go Fish Wildcard": "You ask again only if the card you asked for reached you (from the player
    or the pile) and you place it at once in a set with no wilds."
    """
    b = w.bonus & w.hands[seat]
    if not b:
        return False
    r = RANK_OF[(b & -b).bit_length() - 1]
    if w.wild >> r & 1:
        return False
    return (w.hands[seat] & RANK_MASK[r]).bit_count() >= SET_SIZE


# ---------------------------------------------------------------------------- apply

def apply(state: State, seat: int | None, action) -> tuple[State, list]:
    """Apply one action (or the deal) and everything the rules then make happen."""
    if type(action) is ChanceOutcome:
        if seat is not None:
            raise IllegalAction("table_only", "Only the table shuffles and deals; a player cannot send a shuffle.")
        check_permutation(action, pending_chance(state))
        if action.purpose == "dealer":
            # docs/DECISIONS.md "Go Fish Wildcard": "The dealer: a logged chance outcome": permutation[0] deals.
            d = action.permutation[0]
            return evolve(state, dealer=d), [{"event": "dealer_chosen", "seat": d}]
        return _deal(state, action.permutation)
    phase = state.phase
    if phase == "deal":
        raise IllegalAction("not_dealt", "The cards have not been dealt yet; wait for the deal.")
    if phase == "over":
        raise IllegalAction("game_over", "The game is over; nothing more can be asked or placed.")
    if seat != state.turn:
        raise IllegalAction("not_your_turn", f"It is seat {state.turn}'s turn; wait for yours "
                                             "(sets, too, may only be placed on your own turn).")
    t = type(action)
    if t is Ask:
        return _ask(state, seat, action)
    if t is Place:
        return _place_action(state, seat, action)
    if t is EndTurn:
        return _end_action(state, seat)
    raise IllegalAction("unknown_action", f"{TITLE} has no action {type(action).__name__}; "
                                          "use ask, place or end_turn.")


def _deal(state: State, perm: tuple) -> tuple[State, list]:
    """Deal 4 each, one at a time from the dealer's left; the rest is the pile; the dealer's left starts."""
    n = state.n
    first = (state.dealer + 1) % n
    hands = [0] * n
    for i in range(HAND_SIZE * n):
        hands[(first + i) % n] |= 1 << perm[i]
    w = _W(state)
    w.hands = hands
    w.pile = tuple(perm[HAND_SIZE * n:])
    w.phase = "play"
    ev = [{"event": "cards_dealt", "dealer": state.dealer, "each": HAND_SIZE, "pile": len(w.pile)}]
    _begin_turn(w, first, ev)
    return w.freeze(), ev


def _ask(state: State, seat: int, a: Ask) -> tuple[State, list]:
    if state.step == "bonus":
        raise IllegalAction("no_extra_ask", "You have not earned another ask: place the card you asked for in a "
                                            "set of three without wilds, or end your turn.")
    r = RANK_INDEX.get(a.rank)
    if r is None:
        raise IllegalAction("bad_rank", f"There is no rank {a.rank!r}; ask for one of {', '.join(RANKS)}.")
    target = a.target
    if target == seat or not 0 <= target < state.n:
        raise IllegalAction("bad_target", f"Ask another player: a seat from 0 to {state.n - 1} other than your own.")
    mine = state.hands[seat]
    # docs/DECISIONS.md "Go Fish Wildcard": "ask one other player for a rank that you hold a card of" - the card's own
    # rank, wild or not; a wild card does not let you ask for another rank.
    rm = RANK_MASK[r]
    if not mine & rm:
        raise IllegalAction("rank_not_held", f"You hold no {RANKS[r]}; you may only ask for a rank you hold a card of.")
    w = _W(state)
    theirs = state.hands[target]
    taken = theirs & rm
    handed = taken.bit_count()
    ev = [{"event": "asked", "seat": seat, "target": target, "rank": RANKS[r], "handed": handed}]
    if taken:
        # docs/DECISIONS.md "Go Fish Wildcard": "They hand over all cards of that rank (rank and count are public)".
        w.hands[target] = theirs ^ taken
        w.hands[seat] = mine | taken
        reached = taken
        drew = 0
    else:
        # docs/DECISIONS.md "Go Fish Wildcard": "or say "go fish" and you draw one (its face is yours alone)".
        got = _draw(w, seat, 1, "go_fish", ev)
        drew = len(got)
        reached = 1 << got[0] if got and RANK_OF[got[0]] == r else 0
    w.history = state.history + (ask_entry(seat, target, r, handed, drew),)
    if w.phase == "last_asks" or not w.pile:
        # docs/DECISIONS.md "Go Fish Wildcard": "one last ask plus forced sets"; "when the last card is drawn, that turn ends".
        _end_turn(w, seat, ev)
    else:
        w.bonus = reached
        if reached and _bonus_open(w, seat):
            w.step = "bonus"
        else:
            _end_turn(w, seat, ev)
    return w.freeze(), ev


def _place_action(state: State, seat: int, a: Place) -> tuple[State, list]:
    cards = a.cards
    if len(cards) != SET_SIZE or len(set(cards)) != SET_SIZE:
        raise IllegalAction("bad_set", "A set is exactly 3 different cards from your hand.")
    hand = state.hands[seat]
    missing = [c for c in cards if not (0 <= c < DECK_SIZE and hand >> c & 1)]
    if missing:
        raise IllegalAction("not_in_hand", f"You do not hold {', '.join(_name(c) for c in missing)}; "
                                           "a set is placed from your own hand.")
    ok, _, nw = _shape(cards, state.wild)
    if not ok:
        raise IllegalAction("not_a_set", "Those cards are not a set: a set is cards of one rank plus wilds, "
                                         "or 3 wilds.")
    cards = tuple(sorted(cards))
    # docs/DECISIONS.md "Go Fish Wildcard": "You ask again only if the card you asked for reached you ... and you place
    # it at once in a set with no wilds."
    earned = state.step == "bonus" and nw == 0 and any(state.bonus >> c & 1 for c in cards)
    w = _W(state)
    ev: list = []
    _place(w, seat, cards, False, ev)
    if not w.hands[seat]:
        # docs/DECISIONS.md "Go Fish Wildcard": "Empty hand: during your turn, draw 2 (or what is left); if you ran out
        # during the turn, it then ends." (_end_turn draws the 2.)
        _end_turn(w, seat, ev)
    elif earned:
        w.step = "again"
        w.bonus = 0
        ev.append({"event": "extra_ask_earned", "seat": seat})
    elif w.step == "bonus" and not _bonus_open(w, seat):
        # The chance of another ask is gone, so the turn ends as after any other ask.
        _end_turn(w, seat, ev)
    return w.freeze(), ev


def _end_action(state: State, seat: int) -> tuple[State, list]:
    if state.step == "ask":
        raise IllegalAction("must_ask", "Ask another player for a rank you hold before you end your turn.")
    w = _W(state)
    ev: list = []
    _end_turn(w, seat, ev)
    return w.freeze(), ev


# ---------------------------------------------------------------------------- bots, timers

def legal_actions(state: State, seat: int | None) -> list:
    """Every ask, one set per shape (lowest ids) and end_turn where allowed."""
    if state.turn is None or seat != state.turn:
        return []
    hand = state.hands[seat]
    acts: list = []
    if state.step != "bonus":
        ranks = [r for r in range(13) if hand & RANK_MASK[r]]
        for t in range(state.n):
            if t != seat:
                acts.extend(Ask(t, RANKS[r]) for r in ranks)
    acts.extend(_set_options(hand, state.wild))
    if state.step != "ask":
        acts.append(EndTurn())
    return acts


def _default_action(state: State):
    """The timer's move: in "bonus" place the set that earns another ask; otherwise ask the
    next seat clockwise that holds cards for the rank of your lowest card."""
    seat = state.turn
    hand = hand_ids(state.hands[seat])
    if state.step == "bonus":
        b = min(hand_ids(state.bonus & state.hands[seat]))
        r = RANK_OF[b]
        others = [c for c in hand if RANK_OF[c] == r and c != b][:SET_SIZE - 1]
        return Place(tuple(sorted([b] + others)))
    n = state.n
    target = (seat + 1) % n
    for i in range(1, n):
        t = (seat + i) % n
        if state.hands[t]:
            target = t
            break
    return Ask(target, RANKS[RANK_OF[hand[0]]])


def timeout_action(state: State) -> Timeout | None:
    """Setting ``turn_timer`` (0 = off): after that many seconds the seat to move plays the default."""
    if state.turn is None or state.turn_timer <= 0:
        return None
    return Timeout(state.turn_timer, state.turn, _default_action(state))


# ---------------------------------------------------------------------------- views

def _sets_by_seat(state: State) -> list:
    per: list[list[dict]] = [[] for _ in range(state.n)]
    for sid, (s, cards) in enumerate(state.sets):
        per[s].append({"id": sid, "cards": list(cards)})
    return per


def _asks(state: State) -> list:
    return [{"seat": s, "target": t, "rank": RANKS[r], "handed": k, "drew": d} for s, t, r, k, d in state.history]


def view(state: State, seat: int | None) -> dict:
    """What ``seat`` may know: its own hand, and the public table (docs/DECISIONS.md "Go Fish Wildcard": rank and count
    of each ask are public; a fished card is the drawer's alone until it is set)."""
    out = public_view(state)
    out.update(private_view(state, seat))
    return out


def private_view(state: State, seat: int | None) -> dict:
    """What only ``seat`` may know: its hand, and the fished card while it is its turn (a
    spectator's view has no hand)."""
    if seat is None or not 0 <= seat < state.n:
        return {"seat": seat, "bonus": []}
    return {"seat": seat, "hand": hand_ids(state.hands[seat]),
            "bonus": hand_ids(state.bonus) if seat == state.turn else []}


def private_key(state: State, seat: int | None) -> tuple:
    """All that ``private_view(state, seat)`` reads (the server encodes a seat's private
    part again only when its key changed; engine API, optional)."""
    if seat is None or not 0 <= seat < state.n:
        return (seat,)
    return (seat, state.hands[seat], state.bonus if seat == state.turn else None)


def public_view(state: State) -> dict:
    """The public table, the same for every seat and spectator (the server encodes it once
    per update for all; engine API, optional)."""
    per = _sets_by_seat(state)
    over = state.phase == "over"
    return {
        "game": NAME,
        "phase": state.phase,
        "turn": state.turn,
        "step": state.step,
        "dealer": state.dealer,
        "players": [{"seat": i, "hand": state.hands[i].bit_count(), "score": state.scores[i], "sets": per[i]}
                    for i in range(state.n)],
        "scores": list(state.scores),
        "winners": list(_winners(state.scores)) if over else None,
        "wild_ranks": [RANKS[r] for r in range(13) if state.wild >> r & 1],
        "pile": len(state.pile),
        "asks": _asks(state),
        "last_asks": list(state.last_order),
        "drawer": state.drawer,
        "turn_timer": state.turn_timer,
    }


def snapshot(state: State) -> dict:
    """The all-seeing state as plain data (state hash, ``replay --json``)."""
    snap = snapshot_head(state)
    snap["asks"] = _asks(state)
    return snap


def snapshot_head(state: State) -> dict:
    """``snapshot`` but its last key, ``asks`` (``packed_snapshot`` packs those from a cache)."""
    return {
        "game": NAME,
        "phase": state.phase,
        "seats": state.n,
        "dealer": state.dealer,
        "turn_timer": state.turn_timer,
        "turn": state.turn,
        "step": state.step,
        "hands": [hand_ids(h) for h in state.hands],
        "pile": list(state.pile),
        "wild_ranks": [RANKS[r] for r in range(13) if state.wild >> r & 1],
        "sets": [{"id": i, "seat": s, "cards": list(c)} for i, (s, c) in enumerate(state.sets)],
        "scores": list(state.scores),
        "bonus": hand_ids(state.bonus),
        "last_asks": list(state.last_order),
        "drawer": state.drawer,
    }


# ---------------------------------------------------------------------------- replay

from .go_fish_wildcard_fast import (  # noqa: E402,I001  (they use this module's names)
    RAW_ADVANCE as RAW_ADVANCE, advance as advance, packed_snapshot as packed_snapshot, packed_state as packed_state,
)
from .go_fish_wildcard_run import replay_run  # noqa: E402,I001

REPLAY_RUN = replay_run
REPLAY_RUN_TYPED = True     # a run takes the chance records too: the dealer drawn by lot, the deal
