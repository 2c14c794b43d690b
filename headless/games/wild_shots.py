"""Wild Shots in the client: the play command, completion, the table screen, event lines,
and a bot.

Handles (what a player types and sees):
- a card is its suit letter and value: K7 (black 7), R3 (red 3), G10 (green 10), B1
  (blue 1). "black 7" and "red3" work too, and so does a bare value (play 7) when you
  hold only one 7 you may play.
- symbols are words in the text screens (R3 star); the full-screen table marks them with
  one letter after the card (R3:s): r revolver, h hat, s star, p poster. The symbols are
  the table's own (a table may replace the printed-table reconstruction).

The bot plays from its own view only (its hand, the trick, its own tricks, the most
recent trick) and its memory of that view: every trick of the round as it was shown
(``bot_watch``), so a card played is never counted as still out. For each card it may play it estimates the chance that the card wins
the trick (none if it already loses; else that no later player beats it, following
suit or, void, with the trump symbol, judged from the unseen cards) times the penalty
points such a trick would hold, and weighs that against getting rid of the card (its
hit points, its value, its symbol). So it ducks under tricks holding hits, takes clean
tricks with high cards, dumps hit cards (then high cards) when void in the led suit,
and leads low cards.
"""

from __future__ import annotations

import random
import re


from wildtable.protocol.games import wild_shots_data as data
from wildtable.protocol.games.wild_shots import N_CARDS

from ..levels import TURN_BASED
from ..marks import WIN_MARKS, Marks
from . import action_key as action_key     # the plug-in's action_key (BotStrategy): the shared one
from . import (CommandError, Ctx, best_first, command_of, compact, first, seat_values,
               winners_line, winners_text, with_flags, you_label)

NAME = "wild-shots"
TITLE = "Wild Shots"
BOT_PACE = TURN_BASED     # bots' reaction times per level (levels.py): a human sees each card land

COMMANDS = {
    "play": "play CARD  - play a card from your hand to the trick, e.g. play R3 (red 3), play K7 (black 7)",
}
ALIASES = {"p": "play", "lead": "play", "l": "play"}
HELP = """\
Cards are typed as shown: a suit letter and the value - K black, R red, G green,
B blue: play R3 is the red 3, play K10 the black 10 (play red 3 works too, and
play 7 when only one 7 may be played). Follow the led suit if you can. The trump
symbol changes every trick (a Snake Oil card); avoid winning cards with this round's
hit symbols. On the table, R3:s is the red 3 with a star (r revolver, h hat, s star,
p poster); cards you may play now are bright, cards with the trump symbol reversed.
show prints the whole table as text."""

SUIT_LETTERS = "KRGB"                    # black, red, green, blue
MARKS = {"revolver": "r", "hat": "h", "star": "s", "poster": "p"}
_STYLES = ("bold bright_white", "bold red", "bold green", "bold bright_blue")
_HANDLE_RE = re.compile(r"^([KRGB])(\d{1,2})$")
_WORD_RE = re.compile(r"^(BLACK|RED|GREEN|BLUE)(\d{1,2})?$")
_FILLER = {"the", "card", "a"}


# ------------------------------------------------------------------ cards

def suit(c: int) -> int:
    return c // 10


def value(c: int) -> int:
    return c % 10 + 1


def handle(c: int) -> str:
    """R3, K10: what a player types and sees."""
    return f"{SUIT_LETTERS[suit(c)]}{value(c)}"


def card_id(letter_or_suit: str, v: int) -> int:
    s = letter_or_suit.upper()
    i = SUIT_LETTERS.index(s) if len(s) == 1 else [x.upper() for x in data.SUITS].index(s)
    return i * 10 + v - 1


def _sort_key(c: int):
    return (suit(c), value(c))


def symbols_of(view: dict) -> list:
    """The table's symbol per card id (None: no symbol); the default table if the view has none."""
    syms = view.get("symbols")
    if syms and len(syms) == N_CARDS:
        return list(syms)
    out = []
    for c in range(N_CARDS):
        s = data.CARD_SYMBOLS[f"{data.SUITS[suit(c)]} {value(c)}"]
        out.append(None if s == data.NO_SYMBOL else s)
    return out


def card_words(c: int, syms: list) -> str:
    """"R3 star" / "R2": a card and its symbol in words (text screens, events)."""
    s = syms[c] if syms else None
    return f"{handle(c)} {s}" if s else handle(c)


def hand_labels(hand) -> list[str]:
    return [handle(c) for c in sorted(hand, key=_sort_key)]


def view_hand_labels(view: dict) -> list[str]:
    """The hand for the line mode's hand line, each card with its symbol as `show` gives
    it, one word per card: "R3(star) R2 K7(poster)"."""
    syms = symbols_of(view)
    return [f"{handle(c)}({syms[c]})" if syms[c] else handle(c)
            for c in sorted(view.get("hand") or (), key=_sort_key)]


def hits_words(hits: dict) -> str:
    """{"star": 4, "poster": 5} -> "star 4, poster 5" (the symbols' order)."""
    return ", ".join(f"{s} {hits[s]}" for s in data.SYMBOLS if s in hits) or "none"


def penalty(cards, syms: list, hits: dict) -> int:
    return sum(hits.get(syms[c], 0) for c in cards if syms[c])


# ------------------------------------------------------------------ commands

def _token(words: list[str]) -> tuple[str, int]:
    """The typed card: ("card", id) or ("value", v)."""
    ws = [w for w in words if w.lower() not in _FILLER]
    if not ws:
        raise CommandError("play which card? e.g. play R3 (red 3)")
    text = "".join(ws).upper()
    m = _HANDLE_RE.match(text) or _WORD_RE.match(text)
    if m and m.group(2) is not None:
        v = int(m.group(2))
        if 1 <= v <= 10:
            return "card", card_id(m.group(1), v)
        raise CommandError(f"{' '.join(ws)}: values go from 1 to 10")
    if text.isascii() and text.isdigit() and len(text) <= 18 and len(ws) == 1:
        v = int(text)
        if 1 <= v <= 10:
            return "value", v
        raise CommandError(f"{text}: values go from 1 to 10")
    if len(ws) > 2 or len(ws) > 1 and not _WORD_RE.match(ws[0].upper()):
        raise CommandError("play one card at a time, e.g. play R3")
    raise CommandError(f"{' '.join(ws)!r} is not a card: type a suit letter and a value, e.g. R3 (red 3), "
                       f"K7 (black 7), G10, B1")


def _labels(cards) -> str:
    return " ".join(hand_labels(cards)) or "none"


def parse(words: list[str], view: dict) -> dict:
    """A typed command (its words, the command word first) -> the action map."""
    cmd = command_of(words, ALIASES)
    if cmd != "play":
        raise CommandError(f"unknown command {words[0]!r}; help lists the commands")
    kind, v = _token(words[1:])
    hand = list(view.get("hand") or ())
    playable = list(view.get("playable") or ())
    if kind == "value":
        mine = [c for c in hand if value(c) == v]
        may = [c for c in mine if c in playable] or mine
        if not mine:
            raise CommandError(f"you hold no {v}; your hand: {_labels(hand)}")
        if len(may) > 1:
            raise CommandError(f"which {v}? you hold {' and '.join(hand_labels(may))}: type one of them")
        return {"kind": "play", "card": may[0]}
    if hand and v not in hand:
        raise CommandError(f"you do not hold {handle(v)}; your hand: {_labels(hand)}")
    return {"kind": "play", "card": v}


def complete(words: list[str], view: dict) -> list[str]:
    """Candidates for the last word: the cards you may play now (else your hand)."""
    if len(words) != 2:
        return []
    cmd = command_of(words, ALIASES)
    if cmd != "play":
        return []
    return hand_labels(view.get("playable") or view.get("hand") or ())


# ------------------------------------------------------------------ the table, as text

def _turn_words(view: dict, ctx: Ctx) -> str:
    phase = view.get("phase")
    if phase == "over":
        return "game over"
    if phase != "playing":
        return "waiting for players" if not view.get("hand") and phase in ("choosing_first", "dealing") \
            else "dealing"
    turn = view.get("turn")
    if turn is None:
        return ""
    if turn == ctx.me:
        return "your turn"
    return f"{ctx.name(turn)} to play"


def _header(view: dict, ctx: Ctx) -> str:
    head = f"Wild Shots - round {view.get('round', 1)} of {view.get('rounds', 4)} (hits: {hits_words(view.get('hits') or {})})"
    if view.get("phase") == "playing":
        head += f" - trick {view.get('trick_number')} of {data.TRICKS_PER_ROUND} - trump: {view.get('trump')}"
    words = _turn_words(view, ctx)
    return head + (f" - {words}" if words else "")


def _player_flags(p: dict, view: dict, ctx: Ctx) -> list[str]:
    out = []
    s = p["seat"]
    if view.get("phase") == "playing":
        if view.get("turn") == s:
            out.append("to play")
        if view.get("leader") == s:
            out.append("leads")
    if s in ctx.offline:
        out.append("offline")
    if view.get("phase") == "over" and s in (view.get("winners") or ()):
        out.append("WINNER")
    return out


def _penalty_words(p: dict) -> str:
    rounds = p.get("penalties") or []
    if len(rounds) < 2:
        return f"penalties {p.get('total', 0)}"
    return f"penalties {' + '.join(map(str, rounds))} = {p.get('total', 0)}"


def _trick_words(entries, syms, ctx: Ctx) -> str:
    return ", ".join(f"{ctx.name(x['seat'])} {card_words(x['card'], syms)}" for x in entries)


def _result_lines(view: dict, ctx: Ctx) -> list[str]:
    out = []
    lr = view.get("last_round")
    if lr and (view.get("phase") != "playing" or view.get("trick_number") == 1 and not view.get("trick")):
        out.append(f"round {lr['round']} scored: " + seat_values(lr.get("penalties") or (), ctx))
    if view.get("phase") == "over":
        winners = view.get("winners") or []
        totals = view.get("totals") or []
        best = f" with {totals[winners[0]]} penalty points" if winners and winners[0] < len(totals) else ""
        out.append(winners_line(winners, ctx) + best)
    return out


def render_text(view: dict, ctx: Ctx) -> list[str]:
    """The whole table in plain lines: header, players, trick, last trick, your tricks, hand."""
    syms = symbols_of(view)
    hits = view.get("hits") or {}
    lines = [_header(view, ctx)]
    for p in view.get("players", ()):
        s = p["seat"]
        who = you_label(ctx, s)
        flags = _player_flags(p, view, ctx)
        lines.append(with_flags(f"  {who}: hand {p.get('hand', 0)}, tricks {p.get('tricks', 0)}, {_penalty_words(p)}",
                                flags))
    if view.get("phase") == "playing":
        lines.append(f"trump: {view.get('trump')} (Snake Oil: {view.get('snake_oil_left')} left; revealed "
                     f"this round: {' '.join(view.get('snake_oil_revealed') or ()) or 'none'})")
        trick = view.get("trick") or []
        if trick:
            lines.append(f"trick {view.get('trick_number')} ({view.get('led_suit')} led): "
                         + _trick_words(trick, syms, ctx))
        else:
            lines.append(f"trick {view.get('trick_number')}: {ctx.name(view.get('leader'))} "
                         f"{'lead' if view.get('leader') == ctx.me else 'leads'}")
    last = view.get("last_trick")
    if last:
        lines.append(f"last trick (trump {last.get('trump')}): {_trick_words(last['cards'], syms, ctx)}"
                     f" - won by {ctx.name(last['winner'])}")
    if ctx.me is not None and view.get("phase") == "playing":
        own = view.get("own_tricks") or []
        cards = [c for t in own for c in t]
        lines.append(f"your tricks ({len(own)}): "
                     + (" | ".join(", ".join(card_words(c, syms) for c in t) for t in own) or "none")
                     + f" - hits so far {penalty(cards, syms, hits)}")
    lines += _result_lines(view, ctx)
    if ctx.me is not None and "hand" in view:
        hand = sorted(view.get("hand") or (), key=_sort_key)
        lines.append(f"your hand ({len(hand)}): " + (", ".join(card_words(c, syms) for c in hand) or "empty"))
        if view.get("phase") == "playing" and view.get("turn") == ctx.me:
            lines.append("you may play: " + _labels(view.get("playable") or ()))
    return lines


def render_snapshot(snap: dict, ctx: Ctx) -> list[str]:
    """The all-seeing state (replay viewer): every hand, every trick, the set-aside cards
    and the Snake Oil pile in order."""
    rules = snap.get("rules") or {}
    syms = [None if x < 0 else data.SYMBOLS[x] for x in rules.get("symbols", ())] or symbols_of({})
    oil = rules.get("snake_oil") or []
    rnd = snap.get("round", 1)
    hits = data.ROUND_OVERVIEW[min(max(rnd, 1), len(data.ROUND_OVERVIEW)) - 1]
    phase = snap.get("phase")
    head = f"Wild Shots - round {rnd} of {rules.get('rounds', len(data.ROUND_OVERVIEW))} (hits: {hits_words(hits)}) - {phase}"
    if phase == "playing":
        trump = snap.get("trump", -1)
        head += (f" - trick {snap.get('trick_number')} - trump: {data.SYMBOLS[trump] if trump >= 0 else '?'}"
                 f" - {ctx.seat_label(snap.get('turn'))} to play")
    lines = [head + " - all-seeing"]
    hands = snap.get("hands") or []
    won = snap.get("won") or []
    what = "tricks won"
    scored = snap.get("penalties") or []
    if phase != "playing" and snap.get("last_round"):
        # Between rounds and at the end: the tricks of the round just scored.
        won, what = snap["last_round"], f"tricks won in round {len(scored)}"
        hits = data.ROUND_OVERVIEW[len(scored) - 1]
    totals = snap.get("totals") or []
    for s in range(snap.get("seats", 0)):
        hand = sorted(hands[s], key=_sort_key) if s < len(hands) else []
        mine = won[s] if s < len(won) else []
        lines.append(f"  {ctx.seat_label(s)}: total {totals[s] if s < len(totals) else 0}"
                     f", penalties by round {[p[s] for p in scored]}")
        lines.append("    hand: " + (", ".join(card_words(c, syms) for c in hand) or "empty"))
        lines.append(f"    {what} ({len(mine) // max(1, snap.get('seats', 1))}): "
                     + (" ".join(handle(c) for c in mine) or "none")
                     + f" - hits {penalty(mine, syms, hits)}")
    if snap.get("trick"):
        n = snap.get("seats", 1)
        lead = snap.get("leader", 0)
        lines.append("trick: " + ", ".join(f"{ctx.seat_label((lead + i) % n)} {card_words(c, syms)}"
                                           for i, c in enumerate(snap["trick"])))
    aside = snap.get("set_aside") or []
    if aside:
        lines.append(f"set aside ({len(aside)}): " + " ".join(hand_labels(aside)))
    order = snap.get("snake_oil_order") or []
    if order and oil:
        k = snap.get("trick_number", 1) if phase == "playing" else 0
        names = [data.SYMBOLS[oil[i]] for i in order]
        lines.append("Snake Oil, top first: " + " ".join(
            (f"[{x}]" if i < k else x) for i, x in enumerate(names)) + ("  ([ ] = revealed)" if k else ""))
    if phase == "over" and totals:
        best = min(totals)
        winners = [ctx.seat_label(s) for s, t in enumerate(totals) if t == best]
        lines.append(f"winner{'s' if len(winners) != 1 else ''}: {', '.join(winners)} with {best} penalty points")
    return lines


# ------------------------------------------------------------------ events

def _verb(ctx: Ctx, seat, verb: str) -> str:
    """"you lead" / "bob leads"."""
    return f"{ctx.name(seat)} {verb if seat == ctx.me else verb + 's'}"


def _next_words(ctx: Ctx, seat) -> str:
    return "your turn" if seat == ctx.me else f"{ctx.name(seat)} to play"


def _event_card(c: int, symbol) -> str:
    return f"{handle(c)} {symbol}" if symbol else handle(c)


def describe(ev: dict, ctx: Ctx) -> str | None:
    """One line for one public event ("bob played R8 hat; your turn")."""
    e = ev.get("event")
    s = ev.get("seat")
    if e == "starter_chosen":
        return f"{_verb(ctx, s, 'start')} the first round (drawn by chance)"
    if e == "cards_dealt":
        aside = ev.get("set_aside") or 0
        return f"round {ev.get('round')}: 10 cards dealt to each" + (f", {aside} set aside unseen" if aside else "")
    if e == "snake_oil_shuffled":
        return f"the {ev.get('cards', 14)} Snake Oil cards are shuffled"
    if e == "snake_oil_revealed":
        return (f"trick {ev.get('trick')}: {_verb(ctx, s, 'reveal')} {ev.get('symbol')}: "
                f"{ev.get('symbol')} is trump; {_verb(ctx, s, 'lead')}")
    if e == "card_played":
        line = f"{ctx.name(s)} played {_event_card(ev['card'], ev.get('symbol'))}"
        nxt = ev.get("next")
        return line + (f"; {_next_words(ctx, nxt)}" if nxt is not None else "")
    if e == "trick_won":
        line = f"{_verb(ctx, s, 'win')} trick {ev.get('trick')}"
        if "card" in ev:
            line += f" with {_event_card(ev['card'], ev.get('symbol'))}"
        line += f" (trump {ev.get('trump')})"
        cards = ev.get("cards") or []
        if cards:
            line += ": " + ", ".join(f"{ctx.name(x['seat'])} {handle(x['card'])}" for x in cards)
        return line
    if e == "round_scored":
        pens = seat_values(ev.get("penalties", ()), ctx)
        totals = seat_values(ev.get("totals", ()), ctx)
        return (f"round {ev.get('round')} scored (hits: {hits_words(ev.get('hits') or {})}): "
                f"penalties {pens}; totals {totals}")
    if e == "game_over":
        w = ev.get("winners") or []
        scored = ev.get("totals") or []
        pts = scored[w[0]] if w and w[0] < len(scored) else None
        best = "" if pts is None else f" with {pts} penalty point{'s' if pts != 1 else ''}" + (" each" if len(w) > 1 else "")
        return "game over: " + winners_text(w, ctx) + best
    from . import generic
    return generic.describe(ev, ctx)


def flash(ev: dict, ctx: Ctx) -> str | None:
    """The trump of each trick: it changes every time."""
    if ev.get("event") == "snake_oil_revealed":
        return f"Trump: {str(ev.get('symbol')).upper()}"
    if ev.get("event") == "round_scored":
        return f"Round {ev.get('round')} scored"
    return None


# ------------------------------------------------------------------ the bot

def _beats(c: int, best: int, led: int, syms: list, trump) -> bool:
    """Does card ``c``, played later, beat the trick's current winner ``best``?"""
    if syms[best] == trump:
        return syms[c] == trump and value(c) > value(best)
    if syms[c] == trump:
        return True
    return suit(c) == led and value(c) > value(best)


def _winner(cards: list[int], syms: list, trump) -> int:
    """Index of the winning card (rulebook "Trump"; equal trump values: the earlier card)."""
    best = 0
    for i in range(1, len(cards)):
        if _beats(cards[i], cards[best], suit(cards[0]), syms, trump):
            best = i
    return best


# Weights of the bot's cost (penalty points): how likely a card kept in hand is to be
# taken back later, and how much a high value or any symbol adds to that.
KEEP_PENALTY = 0.3
KEEP_VALUE = 0.25
KEEP_SYMBOL = 0.2
DUCK = 0.7          # a player who could beat a card does so this often


def _danger(c: int, syms: list, hits: dict) -> float:
    """How much holding ``c`` on may cost later: its penalty, its value, its symbol."""
    return KEEP_PENALTY * hits.get(syms[c], 0) + KEEP_VALUE * value(c) / 10 + (KEEP_SYMBOL if syms[c] else 0.0)


def _p_beaten(c: int, led: int, unknown: list[int], held: int, syms: list, trump) -> float:
    """The chance that one later player, holding ``held`` unseen cards, beats ``c``: with
    a card of the led suit that beats it, or, void in that suit, with a trump-symbol card."""
    n = len(unknown)
    if not n or held <= 0:
        return 0.0
    in_suit = [u for u in unknown if suit(u) == led]
    beat_in = sum(1 for u in in_suit if _beats(u, c, led, syms, trump))
    beat_off = sum(1 for u in unknown if suit(u) != led and _beats(u, c, led, syms, trump))
    p_follow_beat = 1.0 - (1.0 - beat_in / n) ** held
    p_void = (1.0 - len(in_suit) / n) ** held
    rest = n - len(in_suit)
    p_void_beat = p_void * (1.0 - (1.0 - beat_off / rest) ** held) if rest else 0.0
    return DUCK * min(1.0, p_follow_beat + p_void_beat)


def bot_watch(view: dict, now: float, memo: dict) -> None:
    """Called with each view this seat is sent, in order: remember every card played this
    round, trick after trick, as each is shown (the view keeps only the current and the
    last trick; a player at the table saw them all). The seat's own views only: nothing
    of another seat's, nor of the server's state."""
    rnd = view.get("round")
    if memo.get("ws_round") != rnd:
        memo.update(ws_round=rnd, ws_played=set(), ws_void=set(), ws_won={})
    played = memo["ws_played"]
    last = view.get("last_trick")
    if last and last.get("round") == rnd and isinstance(last.get("winner"), int):
        # who took which trick: shown to everyone as the last trick (penalties so far this round)
        memo.setdefault("ws_won", {})[last.get("trick")] = (last["winner"], [x["card"] for x in last.get("cards") or []])
    shown = [last.get("cards") or []] if last and last.get("round") == rnd else []
    shown.append(view.get("trick") or [])
    for cards in shown:
        played.update(x["card"] for x in cards)
        # a player who did not follow the led suit holds none of it (rulebook "Follow Suit")
        if cards:
            led = suit(cards[0]["card"])
            memo["ws_void"].update((x["seat"], led) for x in cards[1:] if suit(x["card"]) != led)


def unseen(view: dict, memo: dict | None = None) -> list[int]:
    """The cards this seat has not seen this round: neither in its hand, nor in a trick it
    saw played (``memo``, kept by ``bot_watch``), nor in its own won tricks."""
    seen = set(view.get("hand") or ()) | {x["card"] for x in view.get("trick") or ()}
    for t in view.get("own_tricks") or ():
        seen.update(t)
    last = view.get("last_trick")
    if last and last.get("round") == view.get("round"):
        seen.update(x["card"] for x in last["cards"])
    if memo and memo.get("ws_round") == view.get("round"):
        seen |= memo["ws_played"]
    return [c for c in range(N_CARDS) if c not in seen]


def _scores(view: dict, memo: dict | None = None) -> dict[int, float]:
    """Expected cost of each playable card (lower is better)."""
    syms = symbols_of(view)
    hits = view.get("hits") or {}
    trump = view.get("trump")
    trick = [x["card"] for x in view.get("trick") or ()]
    n = len(view.get("players") or ()) or 2
    unknown = unseen(view, memo)
    avg_pen = sum(hits.get(syms[c], 0) for c in unknown if syms[c]) / len(unknown) if unknown else 0.0
    seat = view.get("seat")
    players = view.get("players") or []
    later = [(seat + k) % n for k in range(1, n - len(trick))] if seat is not None else []
    out = {}
    for c in view.get("playable") or ():
        cards = trick + [c]
        if _winner(cards, syms, trump) != len(cards) - 1:
            p_win = 0.0
        else:
            p_win = 1.0
            for s in later:
                held = players[s].get("hand", 1) if s < len(players) else 1
                p_win *= 1.0 - _p_beaten(c, suit(cards[0]), unknown, held, syms, trump)
        cost_if_won = penalty(cards, syms, hits) + len(later) * avg_pen
        out[c] = p_win * cost_if_won - _danger(c, syms, hits)
    return out


def my_turn(view: dict) -> bool:
    """Whether this seat is to play a card now (what the bots' choices ask first)."""
    return view.get("phase") == "playing" and view.get("seat") is not None and view.get("turn") == view.get("seat")


def candidates(view: dict, rng: random.Random | None = None, memo: dict | None = None) -> list[dict]:
    """The cards it may play now, best first ([] when it is not this seat's turn); cards
    that score alike in an order drawn from ``rng``; ``memo`` holds the cards this seat saw
    played this round (``bot_watch``)."""
    if not my_turn(view):
        return []
    scores = _scores(view, memo)
    order = best_first(scores, lambda c: (scores[c], value(c)), rng)
    return [{"kind": "play", "card": c} for c in order]


def expert_searches(view: dict) -> bool:
    """Whether ``expert_candidates`` searches in this view: at this seat's turn, with a
    choice of cards (else it answers at once: [], or the one card)."""
    return my_turn(view) and len(view.get("playable") or ()) > 1


def expert_candidates(view: dict, rng: random.Random | None = None, memo: dict | None = None) -> list[dict]:
    """The ``expert`` level's cards, best first: a search over worlds sampled from this
    seat's view and memory (wild_shots_expert.py; about 240 playouts, CPU-bound)."""
    if not my_turn(view):
        return []
    from .wild_shots_expert import expert_candidates as search
    return search(view, memo, rng or random.Random(), unseen(view, memo))


def expert_marks() -> Marks:
    """The marks of ``replay --analyze`` (headless/appraise.py), in the unit of
    expert_values: the chance to win the game (wild_shots_expert.py weighs the totals)."""
    return WIN_MARKS


def expert_values(view: dict, rng: random.Random | None = None, memo: dict | None = None,
                  effort: int = 1) -> list[tuple[dict, float]]:
    """Each card this seat may play now with the expert's value of it (the same search as
    ``expert_candidates``): the chance to win the game once the round is scored, less a
    small weight on the round's points this seat takes over the others' mean (they break
    near ties; wild_shots_expert.expert_values); higher is better ([] when it is not this
    seat's turn); ``effort`` times the expert's playouts. ``replay --analyze`` and ``hint``
    read it (headless/appraise.py)."""
    if not my_turn(view):
        return []
    from .wild_shots_expert import PLAYOUTS, expert_values as search
    values = search(view, memo, rng or random.Random(), unseen(view, memo), PLAYOUTS * max(1, effort))
    return [({"kind": "play", "card": c}, -v) for c, v in values.items()]


def choose(view: dict) -> dict | None:
    return first(candidates(view))


def label_action(action: dict) -> str:
    """An action map as the command a player would have typed (bots' lines, the viewer)."""
    if action.get("kind") == "play" and isinstance(action.get("card"), int) and 0 <= action["card"] < N_CARDS:
        return f"play {handle(action['card'])}"
    return compact(action)
