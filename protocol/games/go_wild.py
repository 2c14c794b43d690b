"""Go Wild! (Wizards of the Coast): trick-taking with colour sets and one Wild One.

Rules: /work/shared/rules/go-wild.txt, settled by docs/DECISIONS.md "Go Wild!"; the rules as
implemented, with every chosen reading, are in docs/RULES.md "Go Wild!".

Cards are small ints: ids 0..89 are the five colours, 18 each (colour = COLOURS[id // 18]),
ids 90..107 the 18 wilds. The Wild One marker is not a card: it is ``State.wild_one``.
Hands and the discard pile are bit masks (bit ``id`` set = card held), so checking and
removing a play is a few integer operations; the deck is a tuple, top card first.

One action, ``play {cards}``; everything else (scoring a trick, passing the Wild One,
starting the next trick, refilling hands) happens inside the ``apply`` of the play that
completes a trick. Chance enters three ways: who leads first ("first_player", unless the
host chose a seat), the first shuffle ("deal") and each reshuffle of the discard pile
("reshuffle").
"""

from __future__ import annotations

from itertools import chain
from typing import Any, NamedTuple

import attrs

from ..codec import Registry
from ..engine import (
    ChanceOutcome, ChanceRequest, Outcome, TableConfig, Timeout, check_permutation, merge_settings,
    rules_version,
)
from ..errors import IllegalAction
from ..states import build
from ..cards import ids_of, int_items

NAME = "go-wild"
TITLE = "Go Wild!"
MIN_PLAYERS = 2
MAX_PLAYERS = 6
RULES_VERSION = 1   # the version a log's header names (protocol/engine.py)

# Rulebook "Components": 18 each of red, yellow, orange, blue, green, and 18 wild cards.
COLOURS = ("red", "yellow", "orange", "blue", "green")
PER_COLOUR = 18
FIRST_WILD = len(COLOURS) * PER_COLOUR          # 90
DECK_SIZE = FIRST_WILD + PER_COLOUR             # 108
WILD = len(COLOURS)                             # the colour index of a wild card

# Precomputed card tables.
COLOUR_OF = tuple(min(c // PER_COLOUR, WILD) for c in range(DECK_SIZE))
BIT = {c: 1 << c for c in range(DECK_SIZE)}     # a dict, so a bad id is a KeyError, not a wrap-around
_BIT_OF = BIT.__getitem__
_DECK_IDS = frozenset(BIT)                      # every card id (a deal's permutation: each once)
ALL_MASK = (1 << DECK_SIZE) - 1
COLOUR_MASK = (1 << FIRST_WILD) - 1
WILD_MASK = ALL_MASK ^ COLOUR_MASK
BLOCK = tuple(((1 << PER_COLOUR) - 1) << (PER_COLOUR * i) for i in range(WILD + 1))

HAND_SIZE = 12          # Rulebook "Setup": deal twelve; after trick 3, "back to twelve cards".
TRICKS_PER_ROUND = 3    # Rulebook "Overview": a round is three tricks, worth 1, 2 and 3 points.

# Phases.
CHOOSING_LEADER = "choosing_leader"   # waiting for the "first_player" chance outcome
DEALING = "dealing"                   # waiting for the first shuffle
PLAYING = "playing"
RESHUFFLING = "reshuffling"           # a refill ran the deck dry: waiting for the reshuffle
OVER = "over"

# Kinds of play (trick entries in the view, and the "cards_played" event).
SET, MIXED, SLOUGH = "set", "mixed", "slough"

ACTIONS = Registry("kind", "action")


@ACTIONS.register("play")
@attrs.frozen
class Play:
    """Play cards from your hand to the trick: a colour set, a Wild One's mixed set or a slough."""
    cards: tuple[int, ...] = attrs.field(
        metadata={"max_items": DECK_SIZE, "item_min": 0, "item_max": DECK_SIZE - 1})


@attrs.frozen
class Rules:
    """The table's fixed facts: seat count and settings (never change during a game)."""
    seats: int
    target: int
    turn_timer: float
    first_player: int


class State(NamedTuple):
    """A whole table. Immutable like every state; a NamedTuple rather than an attrs class
    (as Run Wild's): one is built per play, and attrs' frozen __init__ (a guarded setattr
    for each of the 17 fields) costs 1.1 us against 0.1 us for ``states.build``, about
    a fifth of a replayed play (bench/engine.py)."""
    rules: Rules
    phase: str
    hands: tuple          # per seat, a bit mask of the cards held
    deck: tuple           # face down card ids; index 0 is the top card
    discard: int          # bit mask of the discard pile (face-up cards from finished tricks)
    trick: tuple          # plays so far this trick: (seat, cards, kind), in play order
    best: int | None      # seat of the trick's largest set so far (None: none yet)
    best_size: int
    leader: int | None    # who leads the current trick (None until chosen)
    turn: int | None      # seat to play (None when waiting for chance, or over)
    wild_one: int | None  # None: nobody (the game's first trick, until a first trick is won)
    round: int            # 1-based; 0 before the first deal
    trick_no: int         # 1..3 within the round
    scores: tuple
    winners: tuple
    deal_next: int        # seat to receive the next refill card (kept across a reshuffle)
    last_trick: tuple     # () or (plays, winner or None, trick number, points, round)


# ----------------------------------------------------------------------------- cards

def card_info(card_id: int) -> dict:
    """Plain facts about one card, for clients."""
    col = COLOUR_OF[card_id]
    return {"id": card_id, "colour": "wild" if col == WILD else COLOURS[col], "wild": col == WILD}


def card_label(card_id: int) -> str:
    """A short name for the terminal client: the colour (all cards of a colour are alike)."""
    col = COLOUR_OF[card_id]
    return "wild" if col == WILD else COLOURS[col]


cards_of = ids_of      # the card ids in a bit mask, ascending (protocol/cards.py)


def mask_of(cards) -> int:
    m = 0
    for c in cards:
        m |= BIT[c]
    return m


def _name(card_id: Any) -> str:
    """A card in a sentence, safe for ids outside the deck."""
    if type(card_id) is int and 0 <= card_id < DECK_SIZE:
        return f"card {card_id} ({card_label(card_id)})"
    return f"card {card_id!r}"


# ----------------------------------------------------------------------------- table

def default_settings() -> dict:
    return {"target": 20, "turn_timer": 60.0, "first_player": -1}


_CHECKS = {
    "target": lambda v: None if 1 <= v <= 1000 else "must be from 1 to 1000 points",
    "turn_timer": lambda v: None if 0 <= v <= 86400 else "must be 0 (off) or a number of seconds up to 86400",
    "first_player": lambda v: None if v >= -1 else "must be -1 (chance) or a seat number",
}


def new_table(config: TableConfig) -> State:
    """A table waiting for its first chance outcome; seats and settings are checked here."""
    n = config.seats
    if type(n) is not int or not MIN_PLAYERS <= n <= MAX_PLAYERS:
        raise IllegalAction("bad_settings", f"{TITLE} is for {MIN_PLAYERS} to {MAX_PLAYERS} players, not {n}.")
    rules_version(config, RULES_VERSION)
    s = merge_settings(default_settings(), dict(config.settings), _CHECKS)
    if s["first_player"] >= n:
        raise IllegalAction("bad_settings", f"setting 'first_player': there is no seat {s['first_player']} at a "
                                            f"{n}-seat table; use -1 (chance) or 0..{n - 1}.")
    rules = Rules(n, s["target"], float(s["turn_timer"]), s["first_player"])
    # docs/DECISIONS.md "Go Wild!": "Who leads the first trick: a logged chance outcome, or the
    # host's choice" (setting first_player: -1 = chance, else that seat).
    chosen = s["first_player"] >= 0
    return State(
        rules=rules, phase=DEALING if chosen else CHOOSING_LEADER, hands=(0,) * n, deck=(), discard=0,
        trick=(), best=None, best_size=0, leader=s["first_player"] if chosen else None, turn=None,
        wild_one=None, round=0, trick_no=1, scores=(0,) * n, winners=(), deal_next=0, last_trick=(),
    )


def pending_chance(state: State) -> ChanceRequest | None:
    ph = state.phase
    if ph == CHOOSING_LEADER:
        return ChanceRequest("first_player", state.rules.seats)
    if ph == DEALING:
        return ChanceRequest("deal", DECK_SIZE)
    if ph == RESHUFFLING:
        return ChanceRequest("reshuffle", state.discard.bit_count())
    return None


def to_move(state: State) -> tuple[int, ...]:
    t = state.turn
    return () if t is None else (t,)


def auto_action(state: State) -> None:
    """Go Wild! needs no table action: tricks, rounds and refills resolve inside ``apply``."""
    return None


def outcome(state: State) -> Outcome:
    return Outcome(state.phase == OVER, state.scores, state.winners)


# ----------------------------------------------------------------------------- apply

def apply(state: State, seat: int | None, action: Any) -> tuple[State, list]:
    """The next state and the public events, or IllegalAction (the state is unchanged)."""
    events: list = []
    if type(action) is Play:
        return _play(state, seat, action.cards, events), events
    return _other(state, seat, action, events), events


def advance(state: State, seat: int | None, action: Any) -> State:
    """``apply(state, seat, action)[0]`` without building the events (replay drops them):
    the same state, the same IllegalAction (engine API, optional; protocol/engine.py)."""
    if type(action) is Play:
        return _play(state, seat, action.cards, None)
    return _other(state, seat, action, None)


_MAX_PLAYED = attrs.fields(Play).cards.metadata["max_items"]


def _play_map(state: State, seat: int | None, action: dict) -> State | None:
    """``advance`` of a play as the log holds it, ``{"kind": "play", "cards": [...]}``:
    only the maps Play's decoder takes (``cards`` a list of at most 108 ints from 0 to
    107, no other key), else None (replay then decodes it; RAW_ADVANCE,
    protocol/engine.py)."""
    cards = int_items(action.get("cards"), _MAX_PLAYED, 0, DECK_SIZE - 1)
    if cards is None or len(action) != 2:
        return None
    return _play(state, seat, cards, None)


RAW_ADVANCE = {"play": _play_map}


def _other(state: State, seat: int | None, action: Any, events: list | None) -> State:
    if type(action) is ChanceOutcome:
        if seat is not None:
            raise IllegalAction("chance_from_seat", "Only the table shuffles and deals; a player cannot send a "
                                                    "chance outcome.")
        check_permutation(action, pending_chance(state))
        return _chance(state, action, events)
    raise IllegalAction("unknown_action", f"{TITLE} has one action, play; {type(action).__name__} is not one.")


def _checked(cards: tuple, hand: int) -> int:
    """The mask of the cards named, or IllegalAction: none named, not a card, named twice,
    or (in that order, as the rules give the errors) not held."""
    if not cards:
        raise IllegalAction("no_cards", "Play at least one card: a set of one colour, or wild cards to slough.")
    m = 0
    for c in cards:
        try:
            b = BIT[c]
        except (KeyError, TypeError):
            raise IllegalAction("not_in_hand", f"You do not hold {_name(c)}; play cards from your hand.") from None
        if m & b:
            raise IllegalAction("duplicate_card", f"You named {_name(c)} more than once; name each card once.")
        m |= b
    return m


#: per card id: the colour cards of the other colours (0 for a wild)
_OTHER_COLOURS = tuple(0 if COLOUR_OF[c] == WILD else COLOUR_MASK & ~BLOCK[COLOUR_OF[c]] for c in range(DECK_SIZE))


def _play(state: State, seat: int | None, cards: tuple, events: list | None) -> State:
    """One play; the events go to ``events`` (None: none are built)."""
    (rules, phase, hands, deck, discard, trick, best, best_size, leader, turn, wild_one, rnd, trick_no,
     scores, winners, deal_next, last_trick) = state
    if phase != PLAYING:
        if phase == OVER:
            raise IllegalAction("game_over", "The game is over; no more cards can be played.")
        raise IllegalAction("waiting_for_deal", "The cards are being shuffled and dealt; wait until it is your "
                                                "turn to play.")
    if seat != turn:
        if seat is None:
            raise IllegalAction("not_your_turn", f"A play must come from a seat; it is seat {turn}'s turn.")
        raise IllegalAction("not_your_turn", f"It is seat {turn}'s turn to play, not yours (seat {seat}).")
    hand = hands[seat]
    k = len(cards)
    # The cards named: real cards, each once. Bits of distinct cards add up to a mask of k
    # bits; a card named twice carries into another bit, so the mask has fewer.
    try:
        m = sum(map(_BIT_OF, cards))
    except (KeyError, TypeError):
        m = 0
    if m.bit_count() != k or not k:
        m = _checked(cards, hand)
    if m & hand != m:
        missing = next(c for c in cards if not BIT[c] & hand)
        raise IllegalAction("not_in_hand", f"You do not hold {_name(missing)}; play cards from your hand.")
    # Rulebook "Valid Sets of Cards": "one or more cards ... that match in color" (the
    # lowest card names the colour: wilds have the highest ids).
    colour_cards = m & COLOUR_MASK
    if colour_cards & _OTHER_COLOURS[(m & -m).bit_length() - 1]:
        colour = COLOUR_OF[(colour_cards & -colour_cards).bit_length() - 1]
        other = colour_cards & ~BLOCK[colour]
        col2 = COLOUR_OF[(other & -other).bit_length() - 1]
        raise IllegalAction("mixed_colours", f"A set must be one colour; you played {COLOURS[colour]} and "
                                             f"{COLOURS[col2]}. Play cards of one colour only.")
    wilds = (m >> FIRST_WILD).bit_count()
    if not wilds:
        kind = SET
        size = k
    elif not colour_cards:
        # Rulebook: "If you are not the Wild One, you can slough ... one or more wild cards";
        # docs/DECISIONS.md "Go Wild!": "A Wild One who holds no colour card may slough too."
        if seat == wild_one and hand & COLOUR_MASK:
            raise IllegalAction("wild_one_cannot_slough", "As the Wild One you may slough wild cards only when you "
                                                          "hold no colour card; play them with a colour set instead.")
        kind = SLOUGH
        size = 0   # docs/DECISIONS.md "Go Wild!": "sloughs count 0" - they never win a trick.
    else:
        # Rulebook: only the Wild One may add wilds to a colour set, and "there may not be
        # more wild cards than color cards".
        if seat != wild_one:
            raise IllegalAction("not_wild_one", "Only the Wild One may mix wild cards with colour cards. Play the "
                                                "colour cards alone, or slough the wilds on their own.")
        if wilds > k - wilds:
            raise IllegalAction("too_many_wilds", f"The Wild One may add no more wild cards than colour cards: "
                                                  f"{k - wilds} colour card(s) allow at most {k - wilds} wild(s), "
                                                  f"not {wilds}.")
        kind = MIXED
        size = k   # Rulebook: wilds "increase the size of the set as if they were cards of the same color".
    new_hands = list(hands)
    new_hands[seat] = hand ^ m
    hands = tuple(new_hands)
    trick = trick + ((seat, cards, kind),)
    # docs/DECISIONS.md "Go Wild!": the largest set wins; "ties go to the earliest player", so only a
    # strictly larger set takes over.
    if size > best_size:
        best, best_size = seat, size
    # docs/DECISIONS.md "Go Wild!": "Each player holding cards plays exactly once per trick, clockwise from
    # the lead"; a player with no cards sits out. Seats between this one and the leader have
    # not played yet, so their hands are as they were when the trick began.
    n = len(hands)
    nxt = seat + 1 if seat + 1 < n else 0
    while nxt != leader:
        if hands[nxt]:
            if events is not None:
                # "next": who plays next in this trick (None: this play ends it), so a
                # line-mode client can say "your turn" from the events alone.
                events.append({"event": "cards_played", "seat": seat, "cards": list(cards), "kind": kind,
                               "size": size, "next": nxt})
            # The hot path (most plays): positional construction, much faster than evolve.
            return build(State, (rules, PLAYING, hands, deck, discard, trick, best, best_size, leader, nxt,
                                 wild_one, rnd, trick_no, scores, winners, deal_next, last_trick))
        nxt = nxt + 1 if nxt + 1 < n else 0
    if events is not None:
        events.append({"event": "cards_played", "seat": seat, "cards": list(cards), "kind": kind, "size": size,
                       "next": None})
    return _end_trick(state, hands, trick, best, best_size, events)


def _next_with_cards(hands: tuple, seat: int) -> int | None:
    """``seat`` if it holds cards, else the next seat clockwise that does (None: nobody)."""
    n = len(hands)
    for i in range(n):
        s = (seat + i) % n
        if hands[s]:
            return s
    return None


def _end_trick(state: State, hands: tuple, trick: tuple, best: int | None, best_size: int,
               events: list | None) -> State:
    """Score the finished trick, pass the Wild One, then start the next trick or round."""
    (rules, _phase, _hands, deck, discard, _trick, _best, _size, leader, _turn, wild_one, rnd, no,
     scores, winners, deal_next, _last) = state
    points = no   # docs/DECISIONS.md "Go Wild!": "A round is 3 tricks worth 1, 2, 3 points."
    # Rulebook "What is a Trick": at its end all cards played go to the discard pile. (A
    # card is played once, so the sum of the trick's card bits is their union.)
    discard |= sum(map(_BIT_OF, chain.from_iterable([p[1] for p in trick])))
    last = (trick, best, no, points, rnd)
    if best is None:
        # docs/DECISIONS.md "Go Wild!": "If every play was a slough, nobody scores, the Wild One stays, and
        # the same player leads again."
        if events is not None:
            events.append({"event": "trick_sloughed", "round": rnd, "trick": no, "points": points})
        next_leader = leader
    else:
        new_scores = list(scores)
        score = new_scores[best] = scores[best] + points
        scores = tuple(new_scores)
        if events is not None:
            events.append({"event": "trick_won", "seat": best, "round": rnd, "trick": no,
                           "points": points, "size": best_size, "score": score})
        # docs/DECISIONS.md "Go Wild!": "The game ends the moment a player reaches 20 points, even mid-round."
        if score >= rules.target:
            if events is not None:
                events.append({"event": "game_over", "winners": [best], "scores": list(scores)})
            return build(State, (rules, OVER, hands, deck, discard, (), None, 0, leader, None, wild_one, rnd,
                                 no, scores, (best,), deal_next, last))
        # Rulebook "Round Details": the first trick's winner is the Wild One from the next
        # trick on, "until another player wins the first trick in a future round".
        if no == 1 and best != wild_one:
            if events is not None:
                events.append({"event": "wild_one_passed", "seat": best, "previous": wild_one})
            wild_one = best
        next_leader = best   # Rulebook "Who Plays First?": the previous trick's winner leads.
    if no < TRICKS_PER_ROUND:
        # docs/DECISIONS.md "Go Wild!": "If the trick's winner has no cards, the next player clockwise who has
        # cards leads" (read the same way for the leader of an all-slough trick).
        lead = next_leader if hands[next_leader] else _next_with_cards(hands, next_leader)
        if lead is not None:
            if events is not None:
                events.append({"event": "trick_started", "round": rnd, "trick": no + 1, "points": no + 1,
                               "leader": lead})
            return build(State, (rules, PLAYING, hands, deck, discard, (), None, 0, lead, lead,
                                 wild_one, rnd, no + 1, scores, winners, deal_next, last))
        # Chosen reading (docs/RULES.md "Go Wild!", "nobody holds a card"): the round's remaining
        # tricks are not played, nobody scores them, and the round ends here.
        if events is not None:
            events.append({"event": "tricks_skipped", "round": rnd, "from_trick": no + 1})
    if events is not None:
        events.append({"event": "round_ended", "round": rnd, "scores": list(scores)})
    # Rulebook: after the third trick every hand is brought back to twelve; docs/DECISIONS.md "Go Wild!":
    # "dealt clockwise from the next leader".
    return _refill(build(State, (rules, PLAYING, hands, deck, discard, (), None, 0, next_leader, None,
                                 wild_one, rnd, no, scores, winners, next_leader, last)), events)


#: _CLOCKWISE[n][seat]: the seats of an n-seat table clockwise from ``seat``
_CLOCKWISE = {n: tuple(tuple((s + i) % n for i in range(n)) for s in range(n))
              for n in range(MIN_PLAYERS, MAX_PLAYERS + 1)}


def _refill(state: State, events: list | None) -> State:
    """Deal one card at a time clockwise from ``deal_next`` to every seat below twelve cards,
    then start the next round. If the deck runs dry first, stop and ask for a reshuffle."""
    (rules, _phase, hands, deck, discard, trick, best, best_size, leader, _turn, wild_one, rnd, trick_no,
     scores, winners, deal_next, last_trick) = state
    need = [HAND_SIZE - h.bit_count() for h in hands]
    order = _CLOCKWISE[len(hands)][deal_next]
    # Dealing one card at a time round the table is pass 0 (every seat short of twelve),
    # pass 1 (every seat short by two or more), ...; the passes between two shortfalls that
    # some seat has go to the same seats in the same order: listed a stretch at a time.
    recipients: list = []
    low = 0
    for level in sorted(set(need)):
        if level > low:
            recipients += [s for s in order if need[s] >= level] * (level - low)
            low = level
    new_hands = list(hands)
    for s, c in zip(recipients, deck):
        new_hands[s] |= _BIT_OF(c)
    top = min(len(recipients), len(deck))
    if top and events is not None:
        dealt = [0] * len(hands)
        for s in recipients[:top]:
            dealt[s] += 1
        events.append({"event": "cards_dealt", "counts": dealt})
    if top < len(recipients):
        # Rulebook: "If the deck runs out, shuffle the cards in the discard pile to make a new
        # deck" - a logged chance outcome (docs/DECISIONS.md "Go Wild!"). The discard pile always suffices:
        # hands never pass twelve, so at most 12 * 6 = 72 of the 108 cards are ever in hands.
        if events is not None:
            events.append({"event": "deck_ran_out", "discard": discard.bit_count()})
        return build(State, (rules, RESHUFFLING, tuple(new_hands), (), discard, trick, best, best_size, leader,
                             None, wild_one, rnd, trick_no, scores, winners, recipients[top], last_trick))
    lead = leader   # the next leader, where this refill started
    rnd += 1
    if events is not None:
        events.append({"event": "round_started", "round": rnd, "leader": lead, "wild_one": wild_one})
        events.append({"event": "trick_started", "round": rnd, "trick": 1, "points": 1, "leader": lead})
    return build(State, (rules, PLAYING, tuple(new_hands), deck[top:], discard, (), None, 0, lead, lead,
                         wild_one, rnd, 1, scores, winners, lead, last_trick))


def _chance(state: State, outcome: ChanceOutcome, events: list | None) -> State:
    perm = outcome.permutation
    purpose = outcome.purpose
    # the state's fields, for the states built below (by position: see State)
    (rules, phase, hands, deck, discard, trick, best, best_size, leader, turn, wild_one, rnd, trick_no,
     scores, winners, deal_next, last_trick) = state
    if purpose == "first_player":
        # docs/DECISIONS.md "Go Wild!": who leads the first trick is a logged chance outcome: permutation[0].
        lead = perm[0]
        if events is not None:
            events.append({"event": "leader_chosen", "seat": lead})
        return build(State, (rules, DEALING, hands, deck, discard, trick, best, best_size, lead, turn, wild_one,
                             rnd, trick_no, scores, winners, deal_next, last_trick))
    if purpose == "deal":
        # Rulebook "Setup": shuffle, deal twelve each (one at a time, clockwise from the first
        # leader), the rest is the deck.
        if events is not None:
            events.append({"event": "deck_shuffled", "cards": DECK_SIZE})
        deck, deal_next = tuple(perm), leader
    else:
        # "reshuffle": the discard pile (listed lowest id first), shuffled, becomes the new
        # deck; the interrupted refill goes on from the seat it stopped at.
        pile = cards_of(discard)
        if events is not None:
            events.append({"event": "discards_shuffled", "cards": len(pile)})
        deck, discard = tuple(map(pile.__getitem__, perm)), 0
    return _refill(build(State, (rules, phase, hands, deck, discard, trick, best, best_size, leader, turn, wild_one,
                                 rnd, trick_no, scores, winners, deal_next, last_trick)), events)


# ----------------------------------------------------------------------------- bots, timers

def legal_actions(state: State, seat: int) -> list[Play]:
    """Every legal play up to card identity (cards of one colour are alike, so the lowest
    ids stand for any): each colour set size, each mixed set for the Wild One, each slough."""
    if state.phase != PLAYING or seat != state.turn:
        return []
    hand = state.hands[seat]
    wilds = cards_of(hand & WILD_MASK)
    is_wild_one = seat == state.wild_one
    out = []
    for col in range(WILD):
        cs = cards_of(hand & BLOCK[col])
        for size in range(1, len(cs) + 1):
            out.append(Play(tuple(cs[:size])))
            if is_wild_one:
                for w in range(1, min(size, len(wilds)) + 1):
                    out.append(Play(tuple(cs[:size] + wilds[:w])))
    if wilds and (not is_wild_one or not hand & COLOUR_MASK):
        for w in range(1, len(wilds) + 1):
            out.append(Play(tuple(wilds[:w])))
    return out


def default_play(state: State, seat: int) -> Play:
    """The timer's play: the lowest colour card alone, or a one-wild slough when no colour
    card is held (always legal, and gives away as little as possible)."""
    hand = state.hands[seat]
    return Play(((hand & -hand).bit_length() - 1,))


def timeout_action(state: State) -> Timeout | None:
    t = state.turn
    secs = state.rules.turn_timer
    if t is None or secs <= 0:
        return None
    return Timeout(secs, t, default_play(state, t))


# ----------------------------------------------------------------------------- views

def _plays(trick: tuple) -> list[dict]:
    return [{"seat": s, "cards": list(cs), "kind": k} for s, cs, k in trick]


def _last(lt: tuple) -> dict | None:
    if not lt:
        return None
    return {"plays": _plays(lt[0]), "winner": lt[1], "trick": lt[2], "points": lt[3], "round": lt[4]}


def view(state: State, seat: int | None) -> dict:
    """What ``seat`` may know: its own hand, every count, and the face-up cards."""
    out = public_view(state)
    out.update(private_view(state, seat))
    return out


def private_view(state: State, seat: int | None) -> dict:
    """What only ``seat`` may know: its hand (None: a spectator, who has none)."""
    if seat is None:
        return {"seat": None}
    return {"seat": seat, "hand": cards_of(state.hands[seat])}


def private_key(state: State, seat: int | None) -> tuple:
    """All that ``private_view(state, seat)`` reads (the server encodes a seat's private
    part again only when its key changed; engine API, optional)."""
    return (seat,) if seat is None else (seat, state.hands[seat])


def public_view(state: State) -> dict:
    """What every seat and spectator may know: every count and the face-up cards (the
    server encodes it once per update for all; engine API, optional)."""
    r = state.rules
    hands = state.hands
    counts = [h.bit_count() for h in hands]
    played = {s for s, _c, _k in state.trick}
    return {
        "game": NAME,
        "phase": state.phase,
        "turn": state.turn,
        "players": [{"seat": i, "hand": counts[i], "score": state.scores[i], "wild_one": state.wild_one == i,
                     "leader": state.leader == i, "played": i in played} for i in range(r.seats)],
        "scores": list(state.scores),
        "winners": list(state.winners),
        "target": r.target,
        "turn_timer": r.turn_timer,     # seconds before the server plays for the seat to move (0: off)
        "round": state.round,
        "trick_number": state.trick_no,
        "trick_points": state.trick_no,
        "leader": state.leader,
        "wild_one": state.wild_one,
        "trick": _plays(state.trick),
        "best": None if state.best is None else {"seat": state.best, "size": state.best_size},
        "last_trick": _last(state.last_trick),
        "deck_count": len(state.deck),
        "discard_count": state.discard.bit_count(),
        "hand_counts": counts,
    }


def snapshot(state: State) -> dict:
    """The all-seeing state as plain data (state hash, ``replay --json``)."""
    r = state.rules
    return {
        "game": NAME,
        "seats": r.seats,
        "settings": {"target": r.target, "turn_timer": r.turn_timer, "first_player": r.first_player},
        "phase": state.phase,
        "hands": [cards_of(h) for h in state.hands],
        "deck": list(state.deck),
        "discard": cards_of(state.discard),
        "trick": _plays(state.trick),
        "best": state.best,
        "best_size": state.best_size,
        "leader": state.leader,
        "turn": state.turn,
        "wild_one": state.wild_one,
        "round": state.round,
        "trick_number": state.trick_no,
        "scores": list(state.scores),
        "winners": list(state.winners),
        "deal_next": state.deal_next,
        "last_trick": _last(state.last_trick),
    }


# ----------------------------------------------------------------------------- replay

from .go_wild_run import replay_run  # noqa: E402,I001  (it uses this module's names)

REPLAY_RUN = replay_run
REPLAY_RUN_TYPED = True     # a run takes the chance records too: the first leader, the deal
