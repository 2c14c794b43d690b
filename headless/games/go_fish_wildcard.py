"""Go Fish Wildcard in the client: commands, completion, the table screen, event lines, and a bot.

Handles (what a player types and sees):
- a card is its label, rank then suit: 7H, 10S, QD, AC (suits C D H S). In the hand a
  wild card is marked with a star (JD*); the star may be typed or left out.
- a rank is its name, alone or plural: 7, 7s, 10, J, jacks, Q, K, A, aces. In a place
  command a rank names the lowest card of that rank in your hand not named yet, and W
  names such a wild card: "place K K W".
- a player is p and the seat number, as shown on the table: p2 (a bare 2 works too).

The rules are in docs/RULES.md ("Go Fish Wildcard"). The client knows only its own view:
its hand, the counts of the others, the sets on the table (their ranks are wild), and
the public ask history (who asked whom for what, and how many cards changed hands).

The bot plays from that view only. It remembers the ask history: a player who asked for
a rank held it (and got more if the ask succeeded); a player who was asked for a rank
has none of it left (until they draw again). It asks the player most likely to hold a
rank it needs, preferring ranks it holds two of and that are not wild (a natural set of
three earns another ask), places the set that earns that ask, and otherwise lets the
rules place its sets at the end of its turn (holding them keeps more ranks to ask for).
"""

from __future__ import annotations

import random
import re

from wildtable.protocol.games.go_fish_wildcard import DECK_SIZE, RANKS, SUITS, card_label

from ..levels import TURN_BASED
from . import action_key as action_key     # the plug-in's action_key (BotStrategy): the shared one
from . import (CommandError, Ctx, best_first, command_of, first, unique,
               winners_text, with_flags)

NAME = "go-fish-wildcard"
TITLE = "Go Fish Wildcard"
BOT_PACE = TURN_BASED     # bots' reaction times per level (levels.py): a turn-based game reads better at a human pace

COMMANDS = {
    "ask": "ask PLAYER RANK  - ask a player for every card of a rank you hold, e.g. ask p2 for 7s",
    "place": "place CARD CARD CARD  - put a set of three on the table, e.g. place KC KD JS or place K K W; "
             "place alone picks a set for you",
    "end": "end  - end your turn (after an ask, instead of placing for another ask or asking again)",
}
ALIASES = {"a": "ask", "p": "place", "set": "place", "pass": "end", "done": "end", "stop": "end",
           "end_turn": "end", "e": "end"}
HELP = """\
Cards are typed as shown: 7H, 10S, QD, AC (a star marks a wild card: JD*). A rank is
7, 7s, 10, J, jacks, A...; players are p0, p1, ... as on the table (or just the number).
Ask a player for a rank you hold: ask p2 for 7s. If a card of that rank reaches you and
makes three of a kind without wilds, place it (place 7 7 7) to ask again, or end.
In place, a rank picks your lowest card of it and W picks a wild: place K K W.
Sets you can still make are placed for you when your turn ends. In the full-screen
client, click a card to type it."""

_FILLER = {"for", "from", "any", "some", "the", "a", "an", "of", "to", "seat", "player", "please", "and"}
_CARD_RE = re.compile(r"^(A|[2-9]|10|T|J|Q|K)([CDHS])$")
_PLAYER_RE = re.compile(r"^P([0-9])$")
_RANK_WORDS = {
    "ACE": 0, "ACES": 0, "TWO": 1, "TWOS": 1, "THREE": 2, "THREES": 2, "FOUR": 3, "FOURS": 3, "FIVE": 4,
    "FIVES": 4, "SIX": 5, "SIXES": 5, "SEVEN": 6, "SEVENS": 6, "EIGHT": 7, "EIGHTS": 7, "NINE": 8, "NINES": 8,
    "TEN": 9, "TENS": 9, "T": 9, "JACK": 10, "JACKS": 10, "QUEEN": 11, "QUEENS": 11, "KING": 12, "KINGS": 12,
}
for _i, _r in enumerate(RANKS):
    _RANK_WORDS[_r] = _i
    _RANK_WORDS[_r + "S"] = _i          # 7s, Js, As (also a card label: in ask it names the rank)
del _i, _r
_PLURAL = {"A": "aces", "J": "jacks", "Q": "queens", "K": "kings"}
_SUIT_STYLES = {"C": "bold", "D": "bold red", "H": "bold red", "S": "bold"}
_WILD_STYLE = "bold reverse"


# ------------------------------------------------------------------ cards

def rank_of(c: int) -> int:
    return c // 4


def plural(rank: str) -> str:
    """"7s", "10s", "jacks", "aces"."""
    return _PLURAL.get(rank, rank + "s")


def wild_set(view: dict) -> set[int]:
    """The wild ranks of the view, as rank indices."""
    return {RANKS.index(r) for r in view.get("wild_ranks") or () if r in RANKS}


def label(c: int, wild: set[int] | None = None) -> str:
    """A card's label, starred when its rank is wild: 7H, JD*."""
    return card_label(c) + ("*" if wild and rank_of(c) in wild else "")


def hand_labels(hand, wild: set[int] | None = None) -> list[str]:
    """The hand as labels, by rank then suit."""
    return [label(c, wild) for c in sorted(hand)]


def view_hand_labels(view: dict) -> list[str]:
    """The line mode's hand line: the hand as the table shows it, wild cards starred."""
    return hand_labels(view["hand"], wild_set(view))


def is_set(cards, wild: set[int]) -> bool:
    """Three different cards whose non-wild cards are all of one rank."""
    if len(cards) != 3 or len(set(cards)) != 3:
        return False
    return len({rank_of(c) for c in cards if rank_of(c) not in wild}) <= 1


def possible_sets(hand, wild: set[int]) -> list[tuple[int, ...]]:
    """One set per shape (a rank with as many of its own cards as can go in, or three
    wilds), lowest ids; sets without wilds first, then those using fewest wilds."""
    wl = sorted(c for c in hand if rank_of(c) in wild)
    by_rank: dict[int, list[int]] = {}
    for c in sorted(hand):
        if rank_of(c) not in wild:
            by_rank.setdefault(rank_of(c), []).append(c)
    out = []
    for _, ids in sorted(by_rank.items()):
        k = min(len(ids), 3)
        if k + len(wl) >= 3:
            out.append((3 - k, tuple(sorted(ids[:k] + wl[:3 - k]))))
    if len(wl) >= 3:
        out.append((3, tuple(wl[:3])))
    out.sort(key=lambda x: (x[0], x[1]))
    return [cs for _, cs in out]


def bonus_set(view: dict) -> tuple[int, ...] | None:
    """In step "bonus": the set of three without wilds that holds a card that just reached
    you (placing it earns another ask), or None."""
    if view.get("step") != "bonus":
        return None
    hand = sorted(view.get("hand") or ())
    got = sorted(c for c in view.get("bonus") or () if c in hand)
    wild = wild_set(view)
    if not got or rank_of(got[0]) in wild:
        return None
    r = rank_of(got[0])
    others = [c for c in hand if rank_of(c) == r and c != got[0]][:2]
    return tuple(sorted([got[0]] + others)) if len(others) == 2 else None


def suggested_set(view: dict) -> tuple[int, ...] | None:
    """What "place" alone places: the set that earns another ask, else the first of
    possible_sets (no wilds first)."""
    best = bonus_set(view)
    if best is not None:
        return best
    sets = possible_sets(view.get("hand") or (), wild_set(view))
    return sets[0] if sets else None


# ------------------------------------------------------------------ commands

def _rank_token(tok: str) -> int | None:
    t = tok.strip().upper().rstrip("*")
    if t in _RANK_WORDS:
        return _RANK_WORDS[t]
    m = _CARD_RE.match(t)
    if m:
        return _RANK_WORDS[m.group(1)]
    return None


def _player_token(tok: str, seats: int) -> int | None:
    t = tok.strip().upper()
    m = _PLAYER_RE.match(t)
    if m:
        return int(m.group(1))
    if t.isascii() and t.isdigit() and len(t) <= 3 and int(t) < max(seats, 1):
        return int(t)
    return None


def _seats(view: dict) -> int:
    return len(view.get("players") or ())


def _words(words: list[str]) -> list[str]:
    return [w for w in words[1:] if w.lower() not in _FILLER]


def _parse_ask(args: list[str], view: dict) -> dict:
    seats = _seats(view)
    me = view.get("seat")
    example = "e.g. ask p1 for 7s"
    if not args:
        raise CommandError(f"ask whom for what? {example}")
    if len(args) > 2:
        raise CommandError(f"ask one player for one rank, {example}")
    target = rank = None
    if len(args) == 2:
        a, b = args
        if _player_token(a, seats) is not None and _rank_token(b) is not None:
            target, rank = _player_token(a, seats), _rank_token(b)
        elif _rank_token(a) is not None and _player_token(b, seats) is not None:
            rank, target = _rank_token(a), _player_token(b, seats)
        elif _player_token(a, seats) is None and _player_token(b, seats) is None:
            raise CommandError(f"no player {a!r} or {b!r}: players are p0..p{max(seats - 1, 0)}, {example}")
        else:
            bad = b if _player_token(a, seats) is not None else a
            raise CommandError(f"{bad!r} is not a rank: ranks are A 2 3 4 5 6 7 8 9 10 J Q K, {example}")
    else:
        rank = _rank_token(args[0])
        if rank is None and _player_token(args[0], seats) is not None:
            raise CommandError(f"ask {args[0]} for what? name a rank you hold, e.g. ask {args[0]} for 7s")
        if rank is None:
            raise CommandError(f"{args[0]!r} is not a rank: ranks are A 2 3 4 5 6 7 8 9 10 J Q K, {example}")
        others = [p["seat"] for p in view.get("players") or () if p["seat"] != me]
        if len(others) != 1:
            raise CommandError(f"ask whom? name the player too, {example}")
        target = others[0]
    if target == me:
        raise CommandError("ask another player, not yourself")
    if target >= seats:
        raise CommandError(f"there is no player p{target}: players are p0..p{seats - 1}")
    hand = view.get("hand") or ()
    if hand and not any(rank_of(c) == rank for c in hand):
        raise CommandError(f"you hold no {RANKS[rank]}: ask for a rank you hold a card of")
    return {"kind": "ask", "target": target, "rank": RANKS[rank]}


def _card_token(tok: str):
    """("card", id) | ("rank", r) | ("wild", None)."""
    t = tok.strip().upper()
    if t.startswith("#") and t[1:].isascii() and t[1:].isdigit() and len(t) <= 4 and int(t[1:]) < DECK_SIZE:
        return "card", int(t[1:])
    t = t.rstrip("*")
    if t in ("W", "WILD", ""):
        return "wild", None
    m = _CARD_RE.match(t)
    if m:
        rank = "10" if m.group(1) == "T" else m.group(1)
        return "card", RANKS.index(rank) * 4 + SUITS.index(m.group(2))
    r = _RANK_WORDS.get(t)
    if r is not None:
        return "rank", r
    raise CommandError(f"{tok!r} is not a card: type a card as shown (7H, 10S, QD), a rank (7, K) or W for a wild")


def _parse_place(args: list[str], view: dict) -> dict:
    hand = sorted(view.get("hand") or ())
    wild = wild_set(view)
    if not args:
        best = suggested_set(view)
        if best is None:
            raise CommandError("you cannot make a set of three now (a set is cards of one rank plus wilds, or 3 wilds)")
        return {"kind": "place", "cards": list(best)}
    if len(args) != 3:
        raise CommandError("a set is exactly three cards, e.g. place KC KD JS (or place alone)")
    picked: list[int] = []
    # Exact cards first, so "place 7 7H 7" never takes the 7H for a bare 7.
    kinds = [_card_token(a) for a in args]
    exact = {v for k, v in kinds if k == "card"}
    for a, (kind, v) in zip(args, kinds):
        if kind == "card":
            if v in picked:
                raise CommandError(f"{a} is named twice")
            if v not in hand:
                raise CommandError(f"you do not hold {card_label(v)}")
            picked.append(v)
            continue
        if kind == "rank":
            pool = [c for c in hand if rank_of(c) == v]
            what = f"{RANKS[v]}"
        else:
            pool = [c for c in hand if rank_of(c) in wild]
            what = "wild card (W)"
        c = next((c for c in pool if c not in picked and c not in exact), None)
        if c is None:
            more = " more" if any(x in picked for x in pool) else ""
            raise CommandError(f"you hold no{more} {what}")
        picked.append(c)
    return {"kind": "place", "cards": picked}


def parse(words: list[str], view: dict) -> dict:
    """A typed command (its words, the command word first) -> the action map."""
    cmd = command_of(words, ALIASES)
    args = _words(words)
    if cmd == "ask":
        return _parse_ask(args, view)
    if cmd == "place":
        return _parse_place(args, view)
    if cmd == "end":
        if args:
            raise CommandError("end takes nothing after it")
        return {"kind": "end_turn"}
    raise CommandError(f"unknown command {words[0]!r}: type help for the list")


def _player_handles(view: dict) -> list[str]:
    me = view.get("seat")
    return [f"p{p['seat']}" for p in view.get("players") or () if p["seat"] != me]


def _held_ranks(view: dict) -> list[str]:
    return unique(RANKS[rank_of(c)] for c in sorted(view.get("hand") or ()))


def complete(words: list[str], view: dict) -> list[str]:
    """Candidates for the last word of ``words`` (the word being typed, maybe "")."""
    if len(words) < 2:
        return []
    cmd = command_of(words, ALIASES)
    done = [w for w in words[1:-1] if w.lower() not in _FILLER]
    seats = _seats(view)
    if cmd == "ask":
        if not done:
            return _player_handles(view) + _held_ranks(view)
        if len(done) == 1:
            if _player_token(done[0], seats) is not None:
                return _held_ranks(view)
            return _player_handles(view)
        return []
    if cmd == "place":
        if len(done) >= 3:
            return []
        hand = sorted(view.get("hand") or ())
        wild = wild_set(view)
        picked: list[int] = []
        try:
            for w in done:
                kind, v = _card_token(w)
                pool = [v] if kind == "card" else [c for c in hand if c not in picked and
                                                   (rank_of(c) == v if kind == "rank" else rank_of(c) in wild)]
                if pool:
                    picked.append(pool[0])
        except CommandError:
            return []
        out = []
        for c in hand:
            if c in picked:
                continue
            rest = [x for x in hand if x not in picked and x != c]
            trial = picked + [c]
            # keep only cards that can still end in a set with what is left
            if any(is_set(trial + extra, wild) for extra in _fill(rest, 3 - len(trial))):
                out.append(label(c, wild))
        return out
    return []


def _fill(rest: list[int], k: int):
    if k == 0:
        yield []
        return
    for i, c in enumerate(rest):
        for more in _fill(rest[i + 1:], k - 1):
            yield [c] + more


# ------------------------------------------------------------------ the table, as text

def _turn_words(view: dict, ctx: Ctx) -> str:
    phase = view.get("phase")
    if phase == "deal":
        return "waiting for players"
    if phase == "over":
        w = view.get("winners") or []
        return "game over: " + winners_text(w, ctx)
    turn = view.get("turn")
    if turn is None:
        return ""
    step = view.get("step") or "ask"
    last = phase == "last_asks"
    if turn == ctx.me:
        what = {"ask": "your last ask" if last else "your turn: ask",
                "bonus": "your turn: place for another ask, or end",
                "again": "your turn: ask again, or end"}.get(step, "your turn")
        return what
    who = ctx.seat_label(turn)
    if last:
        return f"{who}'s last ask"
    return f"{who}'s turn" + (" (placing for another ask)" if step == "bonus" else
                              " (asking again)" if step == "again" else "")


def _header(view: dict, ctx: Ctx) -> str:
    head = f"{TITLE} - {_turn_words(view, ctx)}"
    if view.get("phase") in ("play", "last_asks"):
        head += f" - pile {view.get('pile', 0)}"
    if view.get("phase") == "last_asks":
        head += " - LAST ASKS"
    return head


def _asked_ranks(view: dict, seat: int, k: int = 3) -> list[str]:
    """The last ``k`` distinct ranks ``seat`` asked for, newest first (what a good player remembers)."""
    out: list[str] = []
    for a in reversed(view.get("asks") or ()):
        if a["seat"] == seat and a["rank"] not in out:
            out.append(a["rank"])
            if len(out) == k:
                break
    return out


def set_order(cards, rank: str | None = None) -> list[int]:
    """A set's cards as people lay them out: its own rank first (the most common one when
    not told), then the wilds: KC KD JS."""
    cards = list(cards)
    if rank is not None and rank in RANKS:
        r = RANKS.index(rank)
        return sorted(cards, key=lambda c: (rank_of(c) != r, c))
    count = {rank_of(c): sum(1 for x in cards if rank_of(x) == rank_of(c)) for c in cards}
    return sorted(cards, key=lambda c: (-count[rank_of(c)], c))


def _set_text(cards, rank: str | None = None) -> str:
    return " ".join(card_label(c) for c in set_order(cards, rank))


def ask_line(a: dict, ctx: Ctx) -> str:
    """One entry of the ask history."""
    who, whom = ctx.name(a["seat"]), ctx.name(a["target"])
    got = f"got {a['handed']}" if a["handed"] else ("go fish" if a.get("drew") else "go fish, pile empty")
    return f"{who} asked {whom} for {plural(a['rank'])}: {got}"


def _player_flags(view: dict, p: dict, ctx: Ctx) -> list[str]:
    out = []
    s = p["seat"]
    if view.get("turn") == s:
        out.append("to act")
    elif s in (view.get("last_asks") or ()):
        out.append("last ask due")
    if view.get("drawer") == s:
        out.append("drew the last card")
    if view.get("dealer") == s:
        out.append("dealer")
    if s in ctx.offline:
        out.append("offline")
    if view.get("phase") == "over" and s in (view.get("winners") or ()):
        out.append("WINNER")
    return out


def render_text(view: dict, ctx: Ctx) -> list[str]:
    """The whole table in plain lines: header, players, sets, asks, your hand."""
    wild = wild_set(view)
    lines = [_header(view, ctx)]
    lines.append("wild ranks: " + (" ".join(view.get("wild_ranks") or ()) or "none yet"))
    for p in view.get("players") or ():
        s = p["seat"]
        who = f"p{s} {ctx.seat_label(s)}" + (" (you)" if s == ctx.me else "")
        row = f"  {who}: hand {p['hand']}, sets {len(p['sets'])}"
        asked = _asked_ranks(view, s)
        if asked:
            row += ", asked for " + " ".join(asked)
        flags = _player_flags(view, p, ctx)
        lines.append(with_flags(row, flags))
    placed = [(p["seat"], st) for p in view.get("players") or () for st in p["sets"]]
    lines.append(f"sets on the table: {len(placed)}" if placed else "sets on the table: none yet")
    for p in view.get("players") or ():
        if p["sets"]:
            lines.append(f"  {ctx.seat_label(p['seat'])}: " + " | ".join(_set_text(st["cards"]) for st in p["sets"]))
    asks = view.get("asks") or []
    if asks:
        shown = asks[-8:]
        lines.append(f"asks: {len(asks)}" + (f" (the last {len(shown)}, newest last)" if len(shown) < len(asks) else
                                             " (newest last)"))
        lines += ["  " + ask_line(a, ctx) for a in shown]
    else:
        lines.append("asks: none yet")
    if ctx.me is not None and view.get("seat") is not None:
        hand = view.get("hand") or []
        lines.append(f"your hand ({len(hand)}): " + (" ".join(hand_labels(hand, wild)) or "empty")
                     + f" | pile {view.get('pile', 0)}")
        hint = _hint(view, ctx)
        if hint:
            lines.append(hint)
    return lines


def _hint(view: dict, ctx: Ctx) -> str:
    """What the player can type now."""
    if view.get("turn") != ctx.me or ctx.me is None:
        return ""
    step = view.get("step")
    others = _player_handles(view)
    ranks = _held_ranks(view)
    example = f"ask {others[0]} for {plural(ranks[-1])}" if others and ranks else "ask PLAYER RANK"
    if step == "bonus":
        best = bonus_set(view)
        cards = " ".join(card_label(c) for c in best) if best else "the set"
        return f"place {cards} to ask again, or end"
    if step == "again":
        return f"ask again (e.g. {example}), place, or end"
    return f"e.g. {example} (a rank you hold)"


def render_snapshot(snap: dict, ctx: Ctx) -> list[str]:
    """The all-seeing state (replay viewer): every hand and the pile in order."""
    wild = {RANKS.index(r) for r in snap.get("wild_ranks") or ()}
    view = {"phase": snap.get("phase"), "turn": snap.get("turn"), "step": snap.get("step"),
            "pile": len(snap.get("pile") or ()), "winners": None}
    if snap.get("phase") == "over":
        scores = snap.get("scores") or [0]
        view["winners"] = [i for i, x in enumerate(scores) if x == max(scores)]
    lines = [_header(view, Ctx(ctx.names, None)) + " - all-seeing"]
    lines.append("wild ranks: " + (" ".join(snap.get("wild_ranks") or ()) or "none yet"))
    sets_by: dict[int, list] = {}
    for st in snap.get("sets") or ():
        sets_by.setdefault(st["seat"], []).append(st["cards"])
    for s in range(snap.get("seats", 0)):
        hand = snap["hands"][s]
        mark = " - to act" if snap.get("turn") == s else ""
        lines.append(f"  p{s} {ctx.seat_label(s)}: sets {snap['scores'][s]}{mark}")
        lines.append(f"    hand ({len(hand)}): " + (" ".join(hand_labels(hand, wild)) or "empty"))
        if sets_by.get(s):
            lines.append("    sets: " + " | ".join(_set_text(cs) for cs in sets_by[s]))
    pile = snap.get("pile") or []
    lines.append(f"pile ({len(pile)}, top first): " + (" ".join(card_label(c) for c in pile) or "empty"))
    if snap.get("bonus"):
        lines.append("reached the asker (may earn another ask): " + " ".join(card_label(c) for c in snap["bonus"]))
    if snap.get("last_asks"):
        lines.append("last asks still due: " + ", ".join(ctx.seat_label(s) for s in snap["last_asks"]))
    lines.append(f"asks so far: {len(snap.get('asks') or ())}")
    return lines


# ------------------------------------------------------------------ events

def describe(ev: dict, ctx: Ctx) -> str | None:
    """One line for one public event ("bob asked you for 7s: you handed over 2")."""
    e = ev.get("event")
    s = ev.get("seat")
    who = ctx.name(s)
    if e == "dealer_chosen":
        return f"{who} {'deal' if s == ctx.me else 'deals'} (drawn by lot)"
    if e == "cards_dealt":
        return f"{ctx.name(ev['dealer'])} dealt {ev['each']} cards each; {ev['pile']} in the pile"
    if e == "turn_started":
        if ev.get("last_ask"):
            return "your last ask: ask once more" if s == ctx.me else f"{who}'s last ask"
        return "your turn: ask a player for a rank you hold" if s == ctx.me else f"{who}'s turn"
    if e == "asked":
        rank, k, t = plural(ev["rank"]), ev["handed"], ev["target"]
        line = f"{who} asked {ctx.name(t)} for {rank}: "
        if not k:
            return line + "go fish!"
        if t == ctx.me:
            return line + f"you handed over {k}"
        return line + f"got {k}"
    if e == "cards_drawn":
        n = ev["count"]
        cards = "a card" if n == 1 else f"{n} cards"
        why = {"go_fish": "", "empty_hand": " (ran out of cards)",
               "turn_start_empty": " (no cards at the start of the turn)"}.get(ev.get("reason"), "")
        return f"{who} drew {cards}{why}; pile {ev['pile']}"
    if e == "set_placed":
        cards = _set_text(ev["cards"], ev.get("rank"))
        what = "three wilds" if ev.get("rank") is None else plural(ev["rank"])
        w = ev.get("wilds", 0)
        if ev.get("rank") is not None:
            what += " with 1 wild" if w == 1 else f" with {w} wilds" if w else ", no wilds"
        verb = "had to place" if ev.get("forced") else "placed"
        line = f"{who} {verb} a set: {cards} ({what})"
        new = ev.get("new_wild") or []
        if new:
            line += "; " + " and ".join(plural(r) for r in new) + " are now wild"
        return line
    if e == "extra_ask_earned":
        return "you earned another ask: ask again, or end" if s == ctx.me else f"{who} earned another ask"
    if e == "turn_ended":
        return None
    if e == "turn_skipped":
        return f"{who} {'have' if s == ctx.me else 'has'} no cards and the pile is empty: turn skipped"
    if e == "last_asks_began":
        order = ", ".join(ctx.name(x) for x in ev.get("order") or ())
        return f"the pile is empty ({ctx.name(ev['drawer'])} drew the last card): one last ask each: {order}"
    if e == "game_over":
        scores = ev.get("scores") or []
        w = ev.get("winners") or []
        best = scores[w[0]] if w and w[0] < len(scores) else 0
        each = " each" if len(w) > 1 else ""
        # every seat's sets come once, in the "over" line after it (client/core.py)
        return "game over: " + winners_text(w, ctx) + f" with {best} set{'s' if best != 1 else ''}{each}"
    from . import generic
    return generic.describe(ev, ctx)


def flash(ev: dict, ctx: Ctx) -> str | None:
    """What a real table calls out: "Go fish!" (to you or from you), a rank turning wild, the last asks."""
    e = ev.get("event")
    if e == "asked" and not ev.get("handed") and ctx.me is not None and ctx.me in (ev.get("seat"), ev.get("target")):
        return "Go fish!"
    if e == "set_placed" and ev.get("new_wild"):
        return " ".join(plural(r).capitalize() for r in ev["new_wild"]) + " wild!"
    if e == "last_asks_began":
        return "Last asks!"
    return None


# ------------------------------------------------------------------ the bot

def _memory(view: dict) -> dict:
    """What the public ask history says about each other player's hand, rank by rank:
    (seat, rank index) -> ("has", at least n) | ("none", cards fished since)."""
    facts: dict = {}
    for a in view.get("asks") or ():
        s, t, r, k, d = a["seat"], a["target"], RANKS.index(a["rank"]), a["handed"], a.get("drew", 0)
        facts[(s, r)] = ("has", 1 + k)          # they held the rank, and now hold what was handed too
        facts[(t, r)] = ("none", 0)             # the target handed over every card of it (or had none)
        if d:
            for key, (kind, n) in list(facts.items()):
                if key[0] == s and kind == "none":
                    facts[key] = ("none", n + d)
    return facts


def _ask_scores(view: dict, rng: random.Random | None = None) -> list[tuple[float, dict]]:
    """Every ask worth making, best first. The same rank asked of two players often
    scores the same: ``rng`` orders such ties (asking the lowest seat would make the
    bots favour the later seats: issue 31)."""
    seat = view["seat"]
    hand = list(view.get("hand") or ())
    wild = wild_set(view)
    players = view.get("players") or []
    mine = [0] * 13
    for c in hand:
        mine[rank_of(c)] += 1
    on_table = [0] * 13
    placed_by: dict[tuple[int, int], int] = {}
    for p in players:
        for st in p["sets"]:
            for c in st["cards"]:
                on_table[rank_of(c)] += 1
                placed_by[(p["seat"], rank_of(c))] = placed_by.get((p["seat"], rank_of(c)), 0) + 1
    unseen = [4 - mine[r] - on_table[r] for r in range(13)]
    total_unseen = max(1, sum(unseen))
    facts = _memory(view)
    last = view.get("phase") == "last_asks"
    pile = view.get("pile", 0)
    out = []
    for r in range(13):
        if not mine[r]:
            continue
        natural = r not in wild
        share = unseen[r] / total_unseen
        for p in players:
            t = p["seat"]
            if t == seat:
                continue
            if p["hand"] == 0 or unseen[r] == 0:
                prob, expect = 0.0, 0
            else:
                kind, n = facts.get((t, r), ("unknown", 0))
                if kind == "has":
                    n -= placed_by.get((t, r), 0)       # what they set since is gone from their hand
                if kind == "has" and n > 0:
                    prob, expect = 0.95, min(n, unseen[r])
                elif kind == "none":
                    prob, expect = 1 - (1 - share) ** n, 1
                else:
                    prob, expect = 1 - (1 - share) ** p["hand"], 1
            if natural:
                gain = 3.0 if mine[r] + expect >= 3 else 1.0 + 0.5 * mine[r]
            else:
                gain = 1.2
            fish = 0.0
            if not last and pile:
                fish = share * (2.5 if natural and mine[r] >= 2 else 0.6)
            score = prob * gain + (1 - prob) * fish + 0.01 * p["hand"] + 0.001 * r
            out.append((score, {"kind": "ask", "target": t, "rank": RANKS[r]}))
    return best_first(out, lambda x: -x[0], rng)


def candidates(view: dict, rng: random.Random | None = None, memo: dict | None = None) -> list[dict]:
    """Actions worth trying now, best first (a bot sends the first one not refused);
    ties in an order drawn from ``rng``. (The public ask history in the view is all the
    memory this bot needs: ``memo`` is unused.)"""
    seat = view.get("seat")
    if seat is None or view.get("turn") != seat or view.get("phase") not in ("play", "last_asks"):
        return []
    step = view.get("step")
    out: list[dict] = []
    if step == "bonus":
        best = bonus_set(view)
        if best is not None:
            out.append({"kind": "place", "cards": list(best)})
        out.append({"kind": "end_turn"})
        return out
    out += [a for _, a in _ask_scores(view, rng)]
    if step == "again":
        out.append({"kind": "end_turn"})
    if not out:
        # No rank to ask for (an empty hand cannot happen on your turn, but be safe): place.
        out += [{"kind": "place", "cards": list(cs)} for cs in possible_sets(view.get("hand") or (), wild_set(view))]
    return out


def choose(view: dict) -> dict | None:
    return first(candidates(view))


def label_action(action: dict) -> str:
    """An action map as the command a player would have typed (bots' lines, the viewer)."""
    k = action.get("kind")
    if k == "ask":
        return f"ask p{action['target']} for {plural(action['rank'])}"
    if k == "place":
        return "place " + " ".join(card_label(c) for c in action["cards"])
    if k == "end_turn":
        return "end"
    return str(k)
