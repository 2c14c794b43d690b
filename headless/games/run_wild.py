"""Run Wild in the client: commands, completion, the table screen, event lines, and a bot.

Handles (what a player types and sees):
- a card is its short label: B6 (blue 6), G12, Y1, R9, P3 (purple 3); W is a wild, W=5
  a wild standing for 5; D3 a Draw-3. Labels are unique except W and D3: "W" names the
  first wild not already named in the same command. A bare number is a card id (41).
- a meld is m and its id: m3. Ids never change while the meld is on the table.
Wild values are worked out when they can be: in a set a wild stands for the set's
number; in a run it fills a gap first, then extends upwards (downwards from 12); added
to a run it extends the top end. W=5 always overrides.

The bot plays from its own view only (no hidden information): it readies, plays the
biggest meld it can (fewest wilds), adds cards that fit, takes and swaps table cards
when that completes a meld of its own, plays a Draw-3 at an opponent close to going
out, draws when stuck, and finally declares itself stuck. Its pace is a person's
(``BOT_PACE``, per level, headless/levels.py), and it does not bury people in Draw-3s:
none in a round's first seconds, none soon after another one (``DRAW3_HOLD``).
"""

from __future__ import annotations

import random
import re
from collections import defaultdict


from wildtable.protocol.games.run_wild import (
    COLOURS, DECK_SIZE, FIRST_DRAW3, FIRST_WILD, card_id, card_info, card_label,
)

from ..levels import REAL_TIME
from . import (CommandError, Ctx, action_key, command_of, first, round_words, seat_values, unique,
               winners_line, winners_text, with_flags, you_label)

NAME = "run-wild"
TITLE = "Run Wild"
BOT_PACE = REAL_TIME    # bots' reaction times per level (levels.py): a person's, seconds per action
#: Per level: no Draw-3 in the first seconds after Go!, nor this soon after any Draw-3
#: (seconds; a fixed --bot-delay scales them by delay / the level's median). A Draw-3 that
#: is a bot's last card (it ends the round, nobody draws) is never held.
DRAW3_HOLD = {"easy": (45.0, 20.0), "normal": (30.0, 15.0), "hard": (15.0, 8.0), "expert": (15.0, 8.0)}

COMMANDS = {
    "ready": "ready  - you are ready; the round starts (Go!) when everyone is",
    "meld": "meld CARD CARD CARD...  - play a set or run from your hand, e.g. meld B6 G6 W",
    "draw": "draw  - draw the top card of your own pile",
    "add": "add CARD to mN  - add a hand card to a meld, e.g. add B9 to m3 (add W=5 to m2)",
    "take": "take CARD from mN  - take a card from a meld to your hand, if what stays is still a meld",
    "swap": "swap MELDCARD for HANDCARD in mN  - the meld's card comes to your hand and yours takes its place, "
            "e.g. swap W for R9 in m3: m3's W is yours, your R9 goes into m3",
    "draw3": "draw3  - play a Draw-3: everyone else draws 3 (as your last card it ends the round)",
    "stuck": "stuck  - say you can do nothing more; when everyone is stuck the round ends",
}
ALIASES = {"d": "draw", "r": "ready", "m": "meld", "a": "add", "t": "take", "s": "swap", "d3": "draw3"}
HELP = """\
Cards are typed as shown: B6 is blue 6 (colours B G Y R P), W a wild, W=5 a wild as 5,
D3 a Draw-3. Melds are typed m1, m2, ... as shown on the table (in the full-screen
client, click a card or a meld to type it). Wild values are guessed when they can be
(a set's number; a run's gap or next number): write W=5 to choose. Anything the server
refuses is shown with its reason next to your command."""

_COLOUR_LETTERS = "BGYRP"
_STYLES = {
    "blue": "bold bright_blue", "green": "bold green", "yellow": "bold yellow",
    "red": "bold red", "purple": "bold magenta",
}
_WILD_STYLE = "bold reverse"
_DRAW3_STYLE = "bold underline reverse"
_FILLER = {"to", "from", "in", "for", "with", "into", "on", "onto", "of"}
_CARD_RE = re.compile(r"^([BGYRP])(\d{1,2})$")
_WILD_RE = re.compile(r"^W(?:[=:]?(\d{1,2}))?$")
_MELD_RE = re.compile(r"^M([0-9]{1,9})$")


# ------------------------------------------------------------------ cards

def is_wild(c: int) -> bool:
    return FIRST_WILD <= c < FIRST_DRAW3


def is_draw3(c: int) -> bool:
    return c >= FIRST_DRAW3


def number(c: int) -> int:
    return c % 12 + 1 if c < FIRST_WILD else 0


def colour(c: int) -> int:
    return c // 12 if c < FIRST_WILD else -1


def _sort_key(c: int):
    return (0, colour(c), number(c)) if c < FIRST_WILD else (1 if is_wild(c) else 2, c, 0)


def card_style(c: int) -> str:
    info = card_info(c)
    if info["kind"] == "number":
        return _STYLES[info["colour"]]
    return _WILD_STYLE if info["kind"] == "wild" else _DRAW3_STYLE


def meld_card_label(c: int, value: int) -> str:
    """A card as it lies in a meld: a wild shows what it stands for (W=5)."""
    return f"W={value}" if is_wild(c) else card_label(c)


def describe_meld(m: dict) -> str:
    """"set of 6s" / "red run 3-6" (the words the engine's messages use too)."""
    if m["kind"] == "set":
        return f"set of {m['values'][0]}s"
    col = next((COLOURS[colour(c)] for c in m["cards"] if c < FIRST_WILD), "wild")
    return f"{col} run {m['values'][0]}-{m['values'][-1]}"


def meld_line(m: dict) -> str:
    cards = " ".join(meld_card_label(c, v) for c, v in zip(m["cards"], m["values"]))
    return f"m{m['id']} {describe_meld(m)}: {cards}"


def hand_labels(hand) -> list[str]:
    return [card_label(c) for c in sorted(hand, key=_sort_key)]


# ------------------------------------------------------------------ commands

def _token(tok: str):
    """One typed card: ("number", id) | ("wild", value or None) | ("draw3", None) | ("id", id)."""
    t = tok.strip().upper()
    if t == "D3":
        return "draw3", None
    m = _WILD_RE.match(t)
    if m:
        v = int(m.group(1)) if m.group(1) else None
        if v is not None and not 1 <= v <= 12:
            raise CommandError(f"{tok}: a wild stands for a number from 1 to 12")
        return "wild", v
    m = _CARD_RE.match(t)
    if m and 1 <= int(m.group(2)) <= 12:
        return "number", card_id(m.group(1), int(m.group(2)))
    if t.isascii() and t.isdigit() and len(t) <= 3 and int(t) < DECK_SIZE:
        return "id", int(t)
    raise CommandError(f"{tok!r} is not a card: type a card as shown, e.g. B6 (blue 6), W (wild), "
                       f"W=5 (wild as 5), D3 (Draw-3)")


def _meld_id(tok: str) -> int | None:
    m = _MELD_RE.match(tok.strip().upper())
    return int(m.group(1)) if m else None


def _split(words: list[str]) -> tuple[list[str], list[int]]:
    """A command's arguments: card tokens (in order) and meld handles, fillers dropped."""
    cards, melds = [], []
    for w in words[1:]:
        if w.lower() in _FILLER:
            continue
        mid = _meld_id(w)
        if mid is not None:
            melds.append(mid)
        else:
            cards.append(w)
    return cards, melds


def _find_meld(view: dict, mid: int) -> dict | None:
    return next((m for m in view.get("melds", ()) if m["id"] == mid), None)


class _Hand:
    """Resolves typed cards against the hand: W and D3 pick the next one not yet named."""

    def __init__(self, view: dict):
        self.hand = list(view.get("hand") or ())
        self.used: set[int] = set()

    def pick(self, tok: str) -> tuple[int, int | None]:
        kind, v = _token(tok)
        if kind in ("number", "id"):
            if v in self.used:
                raise CommandError(f"{tok} is named twice")
            self.used.add(v)
            return v, None
        test = is_wild if kind == "wild" else is_draw3
        c = next((c for c in sorted(self.hand) if test(c) and c not in self.used), None)
        if c is None:
            what = "wild (W)" if kind == "wild" else "Draw-3 (D3)"
            more = " more" if any(test(x) for x in self.used) else ""
            raise CommandError(f"you hold no{more} {what}")
        self.used.add(c)
        return c, (v if kind == "wild" else None)


def _in_meld(view: dict, mid: int, tok: str) -> tuple[int, dict | None]:
    """A typed card that lies in meld ``mid``: W (or W=5) picks the meld's wild."""
    kind, v = _token(tok)
    meld = _find_meld(view, mid)
    if kind in ("number", "id"):
        return v, meld
    if kind == "draw3":
        raise CommandError("a Draw-3 is never in a meld")
    if meld is None:
        raise CommandError(f"there is no meld m{mid} on the table")
    for c, val in zip(meld["cards"], meld["values"]):
        if is_wild(c) and (v is None or val == v):
            return c, meld
    raise CommandError(f"m{mid} holds no wild" + (f" standing for {v}" if v is not None else ""))


def infer_values(items: list[tuple[int, int | None]]) -> list[int]:
    """Values parallel to the cards of a new meld ([] when there is no wild): a set's
    number for its wilds; in a run, gaps first, then upwards, then downwards."""
    if not any(is_wild(c) for c, _ in items):
        return []
    nums = [number(c) for c, _ in items if c < FIRST_WILD]
    fixed = [v for c, v in items if is_wild(c) and v is not None]
    unset = sum(1 for c, v in items if is_wild(c) and v is None)
    if unset and not nums and not fixed:
        raise CommandError("say which number each wild stands for, e.g. meld W=7 W=7 W=7")
    guess: list[int] = []
    known = nums + fixed
    if len(set(known)) == 1:
        guess = [known[0]] * unset                         # a set
    elif len({colour(c) for c, _ in items if c < FIRST_WILD}) <= 1:
        taken = set(known)                                 # a run
        lo, hi = min(taken), max(taken)
        spots = [v for v in range(lo, hi + 1) if v not in taken]
        spots += list(range(hi + 1, 13)) + list(range(lo - 1, 0, -1))
        guess = spots[:unset]
    guess += [known[0]] * (unset - len(guess))             # no sensible guess: the server says why
    it = iter(guess)
    return [number(c) if c < FIRST_WILD else (v if v is not None else next(it)) for c, v in items]


def _wild_value_for(meld: dict | None) -> int | None:
    """Where a wild added to ``meld`` goes: a set's number, a run's next number up (or down)."""
    if meld is None:
        return None
    vals = meld["values"]
    if meld["kind"] == "set":
        return vals[0]
    return vals[-1] + 1 if vals[-1] < 12 else vals[0] - 1


def _not_now(view: dict) -> str | None:
    """Why no card can be played in this phase, in the server's words (protocol/games/
    run_wild.py apply): checked before the hand, which between rounds is the next one's
    (issue #27: a late draw3 was refused as "you hold no Draw-3")."""
    phase, rnd = view.get("phase"), view.get("round", 1)
    if phase in (None, "playing"):
        return None
    if phase == "ready" and (view.get("round_scores") or rnd > 1):
        return f"round {rnd - 1} is over; round {rnd} starts at Go! once everyone is ready"
    if phase == "ready":
        return "no play before the round's Go!: type ready, and wait for it"
    if phase == "scored":
        return f"round {rnd} is over; wait for the next deal"
    if phase == "over":
        return "the game is over"
    return "the cards have not been dealt yet"


def parse(words: list[str], view: dict) -> dict:
    """A typed command (its words, the command word first) -> the action map."""
    cmd = command_of(words, ALIASES)
    cards, melds = _split(words)
    if cmd in ("draw", "ready", "stuck"):
        if len(words) > 1:
            raise CommandError(f"{cmd} takes nothing after it")
        return {"kind": cmd}
    if cmd in ("draw3", "meld", "add", "take", "swap") and (why := _not_now(view)):
        raise CommandError(why)     # the phase first: the hand may be the next round's already
    hand = _Hand(view)
    if cmd == "draw3":
        if melds or len(cards) > 1:
            raise CommandError("draw3 takes at most the card: draw3 D3")
        c, _ = hand.pick(cards[0] if cards else "D3")
        return {"kind": "draw3", "card": c}
    if cmd == "meld":
        if melds:
            raise CommandError("meld plays cards from your hand only; to add to a meld use add CARD to mN")
        if len(cards) < 3:
            raise CommandError("a set or run needs at least 3 cards, e.g. meld B6 G6 Y6")
        items = [hand.pick(t) for t in cards]
        if any(is_draw3(c) for c, _ in items):
            raise CommandError("a Draw-3 is never part of a set or run: play it with draw3")
        return {"kind": "meld", "cards": [c for c, _ in items], "values": infer_values(items)}
    if cmd in ("add", "take", "swap"):
        if len(melds) != 1:
            raise CommandError(f"name one meld by its handle, e.g. {COMMANDS[cmd].split('  - ')[0]}")
        mid = melds[0]
        if cmd == "add":
            if len(cards) != 1:
                raise CommandError("add one card: add CARD to mN")
            c, v = hand.pick(cards[0])
            if is_wild(c) and v is None:
                v = _wild_value_for(_find_meld(view, mid))
                if v is not None and not 1 <= v <= 12:
                    raise CommandError(f"m{mid} already runs from 1 to 12: a wild has no number left there")
            return {"kind": "add", "meld": mid, "card": c, "value": v if is_wild(c) else None}
        if cmd == "take":
            if len(cards) != 1:
                raise CommandError("take one card: take CARD from mN")
            c, _ = _in_meld(view, mid, cards[0])
            return {"kind": "take", "meld": mid, "card": c}
        if len(cards) != 2:
            raise CommandError("swap wants the meld's card, then yours: swap CARD for CARD in mN")
        out, meld = _in_meld(view, mid, cards[0])
        give, v = hand.pick(cards[1])
        if is_wild(give) and v is None and meld is not None and out in meld["cards"]:
            v = meld["values"][meld["cards"].index(out)]
        return {"kind": "swap", "meld": mid, "take": out, "give": give, "value": v if is_wild(give) else None}
    raise CommandError(f"unknown command {words[0]!r}: type help for the list")


def _hand_handles(view: dict, with_draw3: bool = False) -> list[str]:
    labels = (card_label(c) for c in sorted(view.get("hand") or (), key=_sort_key))
    return unique(lab for lab in labels if lab != "D3" or with_draw3)


def _meld_card_handles(view: dict, mid: int | None = None) -> list[str]:
    return unique(meld_card_label(c, v) for m in view.get("melds", ()) if mid is None or m["id"] == mid
                  for c, v in zip(m["cards"], m["values"]))


def _meld_handles(view: dict, holding: str | None = None) -> list[str]:
    out = []
    for m in view.get("melds", ()):
        if holding is None or holding.upper() in {meld_card_label(c, v).upper() for c, v in zip(m["cards"], m["values"])} \
                or (holding.upper() == "W" and any(is_wild(c) for c in m["cards"])):
            out.append(f"m{m['id']}")
    return out


def complete(words: list[str], view: dict) -> list[str]:
    """Candidates for the last word of ``words`` (the word being typed, maybe "")."""
    if len(words) < 2:
        return []
    cmd = command_of(words, ALIASES)
    done = [w for w in words[1:-1] if w.lower() not in _FILLER]
    named_melds = [w for w in done if _meld_id(w) is not None]
    if named_melds and cmd in ("add", "take", "swap"):
        done = [w for w in done if _meld_id(w) is None]    # the meld named first: add m3 W=5
        wanted = 2 if cmd == "swap" else 1
        if len(done) >= wanted:
            return []                                      # the command is whole
        return (_hand_handles(view) if cmd == "add" or done else
                _meld_card_handles(view, _meld_id(named_melds[0])))
    if cmd == "meld":
        named = [w.upper() for w in done]
        wilds_left = sum(1 for c in view.get("hand") or () if is_wild(c)) - sum(1 for w in named if _WILD_RE.match(w))
        return [h for h in _hand_handles(view) if (wilds_left > 0 if h == "W" else h not in named)]
    if cmd == "add":
        return _hand_handles(view) if not done else (["to"] if len(done) == 1 and words[-2].lower() != "to" else []) + _meld_handles(view)
    if cmd == "take":
        return _meld_card_handles(view) if not done else _meld_handles(view, done[0])
    if cmd == "swap":
        if not done:
            return _meld_card_handles(view)
        if len(done) == 1:
            return _hand_handles(view)
        return _meld_handles(view, done[0])
    if cmd == "draw3":
        return ["D3"] if not done else []
    return []


# ------------------------------------------------------------------ the table, as text

_PHASES = {
    "dealing": "waiting for players",
    "ready": "dealt - type ready to start",
    "playing": "playing",
    "scored": "round over",
    "over": "game over",
}


def _flags(p: dict, view: dict, ctx: Ctx) -> list[str]:
    out = []
    if not p.get("in_round", True):
        out.append("sits this round out")
    if view.get("phase") == "ready" and p.get("in_round", True):
        out.append("ready" if p.get("ready") else "not ready")
    if p.get("stuck"):
        out.append("STUCK")
    if view.get("out") == p["seat"]:
        out.append("OUT")
    if p["seat"] in ctx.offline:
        out.append("offline")
    return out


_ID_AFTER_LABEL = re.compile(r"\b((?:[BGYRP]\d{1,2})|W(?:=\d{1,2})?|D3) \(\d+\)")


def reason_text(reason: str) -> str:
    """A refusal's sentence with cards as the player types them: the server names a card
    with its id too ("B12 (11) is not in your hand"); the id is dropped ("B12 is not ...")."""
    return _ID_AFTER_LABEL.sub(r"\1", reason)


_SHORT_PHASES = {"dealing": "waiting for players", "ready": "dealt", "playing": "playing",
                 "scored": "round over", "over": "game over"}


def _header(view: dict, ctx: Ctx, short: bool = False) -> str:
    phase = view.get("phase", "?")
    dealer = view.get("dealer")
    words = (_SHORT_PHASES if short else _PHASES).get(phase, phase)
    head = f"Run Wild - {round_words(view.get('round', 1), view.get('rounds', 4))} - {words}"
    if dealer is not None:
        head += f" - dealer {ctx.seat_label(dealer)[:10]}"
    return head


def _result_lines(view: dict, ctx: Ctx) -> list[str]:
    out = []
    rounds = view.get("round_scores") or []
    if rounds and view.get("phase") in ("scored", "over"):
        last = rounds[-1]
        why = {"out": f"{ctx.name(view.get('out'))} went out", "all_stuck": "everyone was stuck",
               "idle_timeout": "nobody acted in time"}.get(view.get("ended_by"), view.get("ended_by") or "")
        out.append(f"round {len(rounds)} over ({why}): " + ", ".join(
            f"{ctx.seat_label(s)} {x}" for s, x in enumerate(last) if x is not None))
    if view.get("phase") == "over":
        winners = view.get("winners") or []
        out.append(winners_line(winners, ctx))
    return out


def render_text(view: dict, ctx: Ctx) -> list[str]:
    """The whole table in plain lines: header, players, melds, your hand."""
    lines = [_header(view, ctx)]
    totals = view.get("totals") or []
    for p in view.get("players", ()):
        s = p["seat"]
        who = you_label(ctx, s)
        row = f"  {who}: hand {p['hand']}, pile {p['pile']}, total {totals[s] if s < len(totals) else 0}"
        if p.get("draw3s"):
            row += f", Draw-3s played {len(p['draw3s'])}"
        flags = _flags(p, view, ctx)
        lines.append(with_flags(row, flags))
    melds = view.get("melds") or []
    lines.append(f"melds: {len(melds)}" if melds else "melds: none yet")
    lines += ["  " + meld_line(m) for m in melds]
    if "hand" in view:
        lines.append(f"your hand ({len(view['hand'])}): " + (" ".join(hand_labels(view["hand"])) or "empty")
                     + f" | pile {view.get('pile', 0)}")
    lines += _result_lines(view, ctx)
    return lines


def render_snapshot(snap: dict, ctx: Ctx) -> list[str]:
    """The all-seeing state (replay viewer): every hand and every pile in order."""
    view = {k: snap.get(k) for k in ("round", "dealer", "phase", "out", "ended_by", "winners", "round_scores", "totals")}
    view["rounds"] = (snap.get("settings") or {}).get("rounds", 4)
    lines = [_header(view, ctx) + " - all-seeing"]
    for s in range(snap.get("seats", 0)):
        hand = snap["hands"][s]
        flags = [x for x, on in (("stuck", snap["stuck"][s]), ("sits out", not snap["in_round"][s])) if on]
        lines.append(with_flags(f"  {ctx.seat_label(s)}: total {snap['totals'][s]}", flags))
        lines.append(f"    hand ({len(hand)}): " + (" ".join(hand_labels(hand)) or "empty"))
        pile = snap["piles"][s]
        lines.append(f"    pile ({len(pile)}, top first): " + (" ".join(card_label(c) for c in pile) or "empty"))
    lines.append("melds:" if snap.get("melds") else "melds: none")
    lines += ["  " + meld_line(m) for m in snap.get("melds", ())]
    lines += _result_lines(view, ctx)
    return lines


# ------------------------------------------------------------------ events

def _cards(cards, values=None) -> str:
    if values:
        return " ".join(meld_card_label(c, v) for c, v in zip(cards, values))
    return " ".join(card_label(c) for c in cards)


def _is(ctx: Ctx, seat) -> str:
    return f"{ctx.name(seat)} {'are' if seat == ctx.me else 'is'}"


def describe(ev: dict, ctx: Ctx) -> str | None:
    """One line for one public event ("bob played m3 (set of 6s): B6 G6 W=6")."""
    e = ev.get("event")
    s = ev.get("seat")
    who = ctx.name(s)
    if e == "dealer_chosen":
        return f"{ctx.name(s)} {'deal' if s == ctx.me else 'deals'} the first round (drawn by lot)"
    if e == "round_dealt":
        return f"round {ev['round']} dealt by {ctx.name(ev['dealer'])}; everyone types ready to start"
    if e == "player_ready":     # readied by the table's ready timer (setting ready_timeout): say so
        return f"{_is(ctx, s)} ready" + (" (readied by the table's timer)" if ev.get("timer") else "")
    if e == "round_started":
        return f"Go! round {ev.get('round', '')} has started".replace("  ", " ")
    if e == "meld_played":
        m = {"id": ev["meld"], "kind": ev.get("kind", "set"), "cards": ev["cards"], "values": ev["values"]}
        return f"{who} played m{ev['meld']} ({describe_meld(m)}): {_cards(ev['cards'], ev['values'])}"
    if e == "card_drawn":
        return f"{who} drew a card"
    if e == "card_added":
        return f"{who} added {meld_card_label(ev['card'], ev.get('value') or 0)} to m{ev['meld']}"
    if e == "card_taken":
        return f"{who} took {card_label(ev['card'])} from m{ev['meld']}"
    if e == "card_swapped":
        return (f"{who} swapped {meld_card_label(ev['gave'], ev.get('value') or 0)} into m{ev['meld']} "
                f"for {card_label(ev['took'])}")
    if e == "draw3_played":
        drawn = ev.get("drawn") or []
        got = ", ".join(f"{ctx.name(i)} {n}" for i, n in enumerate(drawn) if i != s)
        return f"{who} played Draw 3!" + (f" drawn: {got}" if any(drawn) else " as the last card")
    if e == "stuck_declared":
        return f"{_is(ctx, s)} stuck"
    if e == "stuck_cleared":
        return f"{_is(ctx, s)} no longer stuck"
    if e == "player_out":
        return f"{_is(ctx, s)} out!"
    if e == "round_ended":
        why = {"out": "someone went out", "all_stuck": "everyone was stuck",
               "idle_timeout": "nobody acted in time"}.get(ev.get("reason"), ev.get("reason"))
        scores = ", ".join(f"{ctx.seat_label(i)} {x}" for i, x in enumerate(ev.get("scores", ())) if x is not None)
        totals = seat_values(ev.get("totals", ()), ctx)
        return f"round {ev['round']} over ({why}): scores {scores}; totals {totals}"
    if e == "tie_break":
        return "tie for the lowest total: " + ", ".join(ctx.seat_label(x) for x in ev["seats"]) + " play another round"
    if e == "game_ended":
        w = ev.get("winners") or []
        scored = ev.get("totals") or []
        best = f" with the lowest total, {scored[w[0]]}" if w and w[0] < len(scored) else ""
        return "game over: " + winners_text(w, ctx) + best + (" each" if len(w) > 1 else "")
    from . import generic
    return generic.describe(ev, ctx)


def flash(ev: dict, ctx: Ctx) -> str | None:
    """The two calls players shout at a real table."""
    if ev.get("event") == "draw3_played":
        return f"Draw 3! ({ctx.name(ev.get('seat'))})"
    if ev.get("event") == "player_out":
        return f"Out! ({ctx.name(ev.get('seat'))})"
    return None


# ------------------------------------------------------------------ the bot

def _valid(cards: list[int], values: list[int], settings: dict) -> str | None:
    """The kind ("set"/"run") if the cards with these values are one meld, else None."""
    n = len(cards)
    if n < 3:
        return None
    if not any(c < FIRST_WILD for c in cards) and not settings.get("allow_all_wild_melds"):
        return None
    if any(c < FIRST_WILD and number(c) != v for c, v in zip(cards, values)):
        return None
    if len(set(values)) == 1:
        cap = settings.get("max_set_size") or 0
        return "set" if not cap or n <= cap else None
    if len({colour(c) for c in cards if c < FIRST_WILD}) > 1 or len(set(values)) != n:
        return None
    return "run" if max(values) - min(values) == n - 1 else None


def find_melds(hand, settings: dict) -> list[tuple[list[int], list[int]]]:
    """Melds formable from ``hand``, best first: most number cards, then fewest wilds."""
    wilds = sorted(c for c in hand if is_wild(c))
    w = len(wilds)
    cap = settings.get("max_set_size") or 0
    by_number: dict[int, list[int]] = defaultdict(list)
    by_colour: dict[int, dict[int, int]] = defaultdict(dict)
    for c in sorted(hand):
        if c < FIRST_WILD:
            by_number[number(c)].append(c)
            by_colour[colour(c)][number(c)] = c
    found: list[tuple[list[int], list[int]]] = []
    for n, ids in by_number.items():
        if len(ids) >= 3:
            cs = ids[:cap] if cap else ids
            found.append((cs, [n] * len(cs)))
        elif len(ids) + w >= 3:
            cs = ids + wilds[:3 - len(ids)]
            found.append((cs, [n] * 3))
    for have in by_colour.values():
        for lo in range(1, 11):
            for hi in range(lo + 2, 13):
                present = [v for v in range(lo, hi + 1) if v in have]
                missing = hi - lo + 1 - len(present)
                if not present or missing > w or lo not in have and hi not in have and missing:
                    continue
                it = iter(wilds)
                cs = [have[v] if v in have else next(it) for v in range(lo, hi + 1)]
                found.append((cs, list(range(lo, hi + 1))))
    good = [(cs, vs) for cs, vs in found if _valid(cs, vs, settings)]
    good.sort(key=lambda cv: (-sum(1 for c in cv[0] if c < FIRST_WILD), sum(1 for c in cv[0] if is_wild(c))))
    return good


def _fits(c: int, value: int, meld: dict, settings: dict) -> bool:
    cards = list(meld["cards"]) + [c]
    values = list(meld["values"]) + [value]
    order = sorted(range(len(cards)), key=lambda i: values[i])
    return _valid([cards[i] for i in order], [values[i] for i in order], settings) == meld["kind"]


def _could_complete(c: int, hand: list[int]) -> bool:
    """A quick filter: could ``c`` make a meld with two cards of ``hand``?"""
    wilds = sum(1 for x in hand if is_wild(x))
    if is_wild(c):
        return sum(1 for x in hand if not is_draw3(x)) >= 2
    same = sum(1 for x in hand if x < FIRST_WILD and number(x) == number(c))
    near = sum(1 for x in hand if x < FIRST_WILD and colour(x) == colour(c) and 0 < abs(number(x) - number(c)) <= 2)
    return same + wilds >= 2 or near + wilds >= 2


def _meld_action(cs: list[int], vs: list[int]) -> dict:
    return {"kind": "meld", "cards": list(cs), "values": list(vs) if any(is_wild(c) for c in cs) else []}


def _seat_to_play(view: dict) -> tuple[dict | None, list[dict]]:
    """This seat's entry when it may play now; else (None, what it may do instead: ready
    between rounds, or nothing)."""
    seat = view.get("seat")
    players = view.get("players") or []
    if seat is None or seat >= len(players):
        return None, []
    me = players[seat]
    if not me.get("in_round", True):
        return None, []
    phase = view.get("phase")
    if phase == "ready":
        return None, ([] if me.get("ready") else [{"kind": "ready"}])
    if phase != "playing":
        return None, []
    return me, []


def candidates(view: dict, rng: random.Random | None = None, memo: dict | None = None) -> list[dict]:
    """Actions worth trying now, best first (a bot sends the first one not refused). No
    choice here names a seat; where plays tie, the order of the hand's cards and the
    table's melds decides (``rng`` and ``memo`` unused: the view holds every meld)."""
    me, early = _seat_to_play(view)
    if me is None:
        return early
    seat, players = view["seat"], view["players"]
    settings = view.get("settings") or {}
    hand = list(view.get("hand") or ())
    melds = view.get("melds") or []
    pile = view.get("pile", 0)
    d3s = [c for c in hand if is_draw3(c)]
    wilds = [c for c in hand if is_wild(c)]
    numbers = [c for c in hand if c < FIRST_WILD]
    out: list[dict] = []
    if hand and len(d3s) == len(hand):
        out.append({"kind": "draw3", "card": d3s[0]})        # the last cards: Draw-3 ends the round
    out += [_meld_action(cs, vs) for cs, vs in find_melds(hand, settings)[:3]]
    for c in numbers:
        for m in melds:
            if _fits(c, number(c), m, settings):
                out.append({"kind": "add", "meld": m["id"], "card": c, "value": None})
    rivals = [p for p in players if p["seat"] != seat and p.get("in_round", True)]
    # any rival close to going out (a Draw-3 hits every rival alike: no seat is picked)
    if d3s and any(p["hand"] <= 3 and p["pile"] > 0 for p in rivals):
        out.append({"kind": "draw3", "card": d3s[0]})        # hurt the player closest to going out
    for m in melds:                                          # take a table card that completes a meld
        for k, c in enumerate(m["cards"]):
            rest_c = m["cards"][:k] + m["cards"][k + 1:]
            rest_v = m["values"][:k] + m["values"][k + 1:]
            if not _could_complete(c, hand) or _valid(list(rest_c), list(rest_v), settings) != m["kind"]:
                continue
            if any(c in cs for cs, _ in find_melds(hand + [c], settings)):
                out.append({"kind": "take", "meld": m["id"], "card": c})
    for m in melds:                                          # swap in a number card to win a wild
        colours = {colour(x) for x in m["cards"] if x < FIRST_WILD}
        for c, v in zip(m["cards"], m["values"]):
            if not is_wild(c):
                continue
            for g in numbers:
                if number(g) == v and (m["kind"] == "set" or colour(g) in colours):
                    after = [x for x in hand if x != g] + [c]
                    if any(c in cs for cs, _ in find_melds(after, settings)):
                        out.append({"kind": "swap", "meld": m["id"], "take": c, "give": g, "value": None})
    wild_adds = []
    for c in wilds[:1]:
        for m in melds:
            v = _wild_value_for(m)
            if v is not None and 1 <= v <= 12 and _fits(c, v, m, settings):
                wild_adds.append({"kind": "add", "meld": m["id"], "card": c, "value": v})
    if len(hand) <= 3:
        out += wild_adds
    if pile > 0:
        out.append({"kind": "draw"})
    if d3s:
        out.append({"kind": "draw3", "card": d3s[0]})
    out += wild_adds
    if not me.get("stuck"):
        out.append({"kind": "stuck"})
    seen, unique = set(), []
    for a in out:
        key = action_key(a)
        if key not in seen:
            seen.add(key)
            unique.append(a)
    return unique


def choose(view: dict) -> dict | None:
    return first(candidates(view))


def bot_watch(view: dict, now: float, memo: dict) -> None:
    """Called by a bot whenever its table changes: notes when this round's Go! came and
    when the last Draw-3 was played (``now`` is the bot's clock, seconds)."""
    if view.get("phase") != "playing":
        return
    played = sum(len(p.get("draw3s") or ()) for p in view.get("players") or ())
    if memo.get("round") != view.get("round"):
        memo.update(round=view.get("round"), go=now, draw3s=played, last_draw3=None)
    elif played != memo.get("draw3s"):
        memo.update(draw3s=played, last_draw3=now)


def bot_hold(actions: list[dict], view: dict, level: str, now: float, memo: dict,
             scale: float = 1.0) -> list[dict]:
    """``actions`` less the Draw-3s a bot at ``level`` holds back now (``DRAW3_HOLD``)."""
    bot_watch(view, now, memo)
    if view.get("phase") != "playing" or len(view.get("hand") or ()) <= 1:
        return actions
    after_go, gap = DRAW3_HOLD.get(level, DRAW3_HOLD["normal"])
    last = memo.get("last_draw3")
    held = now - memo["go"] < after_go * scale or (last is not None and now - last < gap * scale)
    return [a for a in actions if a.get("kind") != "draw3"] if held else actions


def bot_miss(action: dict, level) -> float:
    """The chance that a bot at ``level`` (levels.Level) overlooks ``action``: taking or
    swapping a table card is harder to see (``miss_table``); a draw or "ready" never is."""
    kind = action.get("kind")
    if kind in ("draw", "ready"):
        return 0.0
    return level.miss_table if kind in ("take", "swap") else level.miss


def quick_candidates(view: dict) -> list[dict]:
    """A cheap strategy, best first, for load generators and scripted test players: meld
    three of a number, else draw, else a Draw-3, else stuck (and ready between rounds).
    ``candidates`` thinks far harder (about a millisecond a decision); a thousand players
    thinking that hard would make the load generator, not the server, the bottleneck."""
    me, early = _seat_to_play(view)
    if me is None or me.get("stuck"):
        return early
    hand = view.get("hand") or ()
    by_number: dict[int, list[int]] = {}
    for c in hand:
        if c < FIRST_WILD:
            by_number.setdefault(number(c), []).append(c)
    out = [{"kind": "meld", "cards": cs[:3], "values": []} for n, cs in sorted(by_number.items()) if len(cs) >= 3]
    if view.get("pile", 0) > 0:
        out.append({"kind": "draw"})
    out += [{"kind": "draw3", "card": c} for c in hand if is_draw3(c)][:1]
    out.append({"kind": "stuck"})
    return out


def label_action(action: dict) -> str:
    """An action map as the command a player would have typed (bots' lines, the viewer)."""
    k = action.get("kind")
    if k == "meld":
        return "meld " + _cards(action["cards"], action.get("values") or None)
    if k == "add":
        return f"add {meld_card_label(action['card'], action.get('value') or 0)} to m{action['meld']}"
    if k == "take":
        return f"take {card_label(action['card'])} from m{action['meld']}"
    if k == "swap":
        return f"swap {card_label(action['take'])} for {meld_card_label(action['give'], action.get('value') or 0)} in m{action['meld']}"
    if k == "draw3":
        return "draw3"
    return str(k)
