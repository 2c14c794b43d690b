"""Go Wild! in the client: commands, completion, the table screen, event lines, and a bot.

Handles (what a player types and sees):
- cards of one colour are alike, so a play names colours and counts, never single cards:
  ``play 3 orange``, ``play 4 blue 4 wild`` (the Wild One's mixed set), ``play blue``
  (one card), ``play all green``. Colours may be words or letters (r y o b g w), counts
  may be glued on (``3b``, ``b3``) or spelt by repeating the letter (``bbb``); ``+``,
  ``and`` and ``with`` are ignored, so ``play 4b + 4w`` works too. ``#41`` names card id
  41 (rarely needed: the client picks the lowest ids of a colour, as the engine does).
- ``slough [N]`` throws away N wild cards (all of them without N).
The hand is shown the same way: ``2 red 3 yellow 4 blue 2 wild``.

The bot plays from its own view only (no hidden information). A play of size at least
the hand count of every player still to play in the trick cannot be beaten (ties go to
the earlier player), so it takes such a sure win at the lowest cost; the last to play
wins with the smallest set that does it. Otherwise it saves its largest colour for the
third trick (worth 3): in tricks 1 and 2 it contests only with its second-best colour
and only with a set of three or more (in trick 1 also with its best, when becoming or
staying the Wild One pays off with wilds in hand); in trick 3 it plays its largest set.
When it does not contest it gives away as little as it can: not being the Wild One, it
sloughs its wilds (useless to it, and they make room for colour cards at the refill);
otherwise its smallest colour group (one card of it if the group is larger than two).
"""

from __future__ import annotations

import random
import re


from wildtable.protocol.games.go_wild import COLOURS, DECK_SIZE, PER_COLOUR, WILD

from ..levels import TURN_BASED
from . import go_wild_expert
from . import (CommandError, Ctx, action_key, command_of, compact, seat_values, winners_text, with_flags,
               you_label)

NAME = "go-wild"
TITLE = "Go Wild!"
BOT_PACE = TURN_BASED     # bots' reaction times per level (levels.py): people like to see who played what

COMMANDS = {
    "play": "play N COLOUR [N wild]  - play a set of one colour, e.g. play 3 orange; "
            "the Wild One may add wilds: play 4 blue 4 wild",
    "slough": "slough [N]  - throw away N wild cards (all your wilds without N); never wins a trick",
}
ALIASES = {"p": "play", "s": "slough", "sl": "slough"}
HELP = """\
It is a trick game: on your turn play one set. A set is cards of one colour, typed as a
count and a colour: play 3 orange (or play 3o, play ooo; colours r y o b g, w = wild).
The largest set wins the trick (ties: whoever played first); tricks 1, 2, 3 of a round
are worth 1, 2, 3 points, and the winner of a round's first trick is the Wild One.
Only the Wild One may add wilds to a colour set, no more wilds than colour cards:
play 2 blue 2 wild. Anyone else may slough wilds (slough 2): they never win.
The first to the table's target wins (20 points unless the table set another).
In the full-screen client, click a colour in your hand to type it."""

NAMES = COLOURS + ("wild",)
_LETTERS = "ryobgw"
_STYLES = ("bold red", "bold yellow", "bold dark_orange", "bold bright_blue", "bold green", "bold reverse")
_FILLER = {"+", "and", "with", "&", "plus", ","}
_COUNT_RE = re.compile(r"^([0-9]{1,18}|all)$")
_GLUED_RE = re.compile(r"^([0-9]{1,18})([a-z]+)$|^([a-z]+?)([0-9]{1,18})$")
_ID_RE = re.compile(r"^#([0-9]{1,9})$")


# ------------------------------------------------------------------ cards

def colour_of(card: int) -> int:
    """0..4 for red..green, 5 (WILD) for a wild card."""
    return min(card // PER_COLOUR, WILD)


def groups(cards) -> list[list[int]]:
    """Card ids by colour index (wild last), lowest id first."""
    out: list[list[int]] = [[] for _ in NAMES]
    for c in sorted(cards):
        out[colour_of(c)].append(c)
    return out


def cards_text(cards) -> str:
    """"3 orange" / "4 blue + 4 wild" / "2 wild"; colour cards first."""
    parts = [f"{len(g)} {NAMES[i]}" for i, g in enumerate(groups(cards)) if g]
    return " + ".join(parts) if parts else "nothing"


def hand_labels(hand) -> list[str]:
    """The hand as count-and-colour words ("2 red", "3 yellow", "2 wild"): what play takes."""
    return [f"{len(g)} {NAMES[i]}" for i, g in enumerate(groups(hand)) if g]


def _hand_line(hand) -> str:
    return " ".join(hand_labels(hand)) or "empty"


# ------------------------------------------------------------------ commands

def _colour_word(tok: str) -> int | None:
    t = tok.lower()
    if t in NAMES:
        return NAMES.index(t)
    if t.endswith("s") and t[:-1] in NAMES:
        return NAMES.index(t[:-1])
    if len(t) == 1 and t in _LETTERS:
        return _LETTERS.index(t)
    return None


def _not_colour(tok: str) -> CommandError:
    return CommandError(f"{tok!r} is not a colour: type a count and a colour, e.g. play 3 orange, "
                        f"play 2 blue 2 wild (colours: red yellow orange blue green, or r y o b g; w = wild)")


def _tokens(words: list[str]) -> list[str]:
    text = " ".join(words).replace("+", " + ").replace(",", " , ")
    return [t for t in text.split() if t.lower() not in _FILLER]


def _groups_typed(words: list[str]) -> tuple[dict[int, int | str], list[int]]:
    """Typed words -> ({colour: count or "all"}, [explicit card ids])."""
    want: dict[int, int | str] = {}
    ids: list[int] = []
    pending: int | str | None = None
    pending_tok = ""

    def add(col: int, n: int | str) -> None:
        old = want.get(col, 0)
        if n == "all" or old == "all":
            want[col] = "all"
        else:
            want[col] = int(old) + int(n)

    for tok in _tokens(words):
        low = tok.lower()
        m = _ID_RE.match(low)
        if m:
            if pending is not None:
                raise CommandError(f"{pending_tok} what? a count goes before a colour, e.g. play 3 orange")
            c = int(m.group(1))
            if c >= DECK_SIZE:
                raise CommandError(f"{tok}: card ids go from 0 to {DECK_SIZE - 1}")
            ids.append(c)
            continue
        if _COUNT_RE.match(low):
            if pending is not None:
                raise CommandError(f"{pending_tok} {tok}: one count per colour, e.g. play 3 orange")
            pending = low if low == "all" else int(low)
            pending_tok = tok
            if pending == 0:
                raise CommandError("a count of 0 plays nothing: name at least one card")
            continue
        col = _colour_word(low)
        n: int | str | None = None
        if col is None:
            g = _GLUED_RE.match(low)
            if g:
                num, word = (g.group(1), g.group(2)) if g.group(1) else (g.group(4), g.group(3))
                col = _colour_word(word)
                n = int(num)
                if col is not None and n == 0:
                    raise CommandError("a count of 0 plays nothing: name at least one card")
            elif len(low) > 1 and len(set(low)) == 1 and low[0] in _LETTERS:
                col, n = _LETTERS.index(low[0]), len(low)        # "bbb" = 3 blue
        if col is None:
            raise _not_colour(tok)
        if n is not None and pending is not None:
            raise CommandError(f"{pending_tok} {tok}: one count per colour, e.g. play 3 orange")
        add(col, n if n is not None else (pending if pending is not None else 1))
        pending = None
    if pending is not None:
        raise CommandError(f"{pending_tok} what? say the colour too, e.g. play {pending_tok} blue")
    return want, ids


def _pick(view: dict, want: dict[int, int | str], ids: list[int], slough: bool = False) -> list[int]:
    """The card ids for a typed play: explicit ids, then the lowest ids of each colour."""
    hand = set(view.get("hand") or ())
    out: list[int] = []
    for c in ids:
        if c not in hand:
            raise CommandError(f"you do not hold card #{c} ({NAMES[colour_of(c)]})")
        if c in out:
            raise CommandError(f"#{c} is named twice")
        out.append(c)
    by = groups(c for c in hand if c not in out)
    for col in sorted(want):
        n = want[col]
        have = by[col]
        if not have:
            raise CommandError(f"you hold no {NAMES[col]} card" + (" to slough" if slough else "")
                               + (f"; your hand: {_hand_line(hand)}" if hand else ""))
        k = len(have) if n == "all" else int(n)
        if k > len(have):
            raise CommandError(f"you hold {len(have)} {NAMES[col]}, not {k}")
        out.extend(have[:k])
    return out


def parse(words: list[str], view: dict) -> dict:
    """A typed command (its words, the command word first) -> the action map."""
    cmd = command_of(words, ALIASES)
    args = words[1:]
    if cmd == "play":
        want, ids = _groups_typed(args)
        if not want and not ids:
            raise CommandError("play what? a count and a colour, e.g. play 3 orange (your hand: "
                               f"{_hand_line(view.get('hand') or ())})")
        return {"kind": "play", "cards": _pick(view, want, ids)}
    if cmd == "slough":
        toks = _tokens(args)
        if not toks:
            want, ids = {WILD: "all"}, []
        elif len(toks) == 1 and _COUNT_RE.match(toks[0].lower()):          # "slough 2" = 2 wilds
            n = toks[0].lower()
            if n == "0":
                raise CommandError("a count of 0 plays nothing: slough at least one wild")
            want, ids = {WILD: n if n == "all" else int(n)}, []
        else:
            want, ids = _groups_typed(args)
        if ids or set(want) - {WILD}:
            raise CommandError("only wild cards can be sloughed, e.g. slough 2; to play colour cards use play")
        return {"kind": "play", "cards": _pick(view, want, [], slough=True)}
    raise CommandError(f"unknown command {words[0]!r}; help lists the commands")


def _held_words(view: dict, at_least: int = 1, wild: bool = True) -> list[str]:
    g = groups(view.get("hand") or ())
    order = sorted(range(len(NAMES)), key=lambda i: (-len(g[i]), i))
    return [NAMES[i] for i in order if len(g[i]) >= at_least and (wild or i != WILD)]


def complete(words: list[str], view: dict) -> list[str]:
    """Candidates for the last word of ``words`` (the word being typed, maybe "")."""
    if len(words) < 2:
        return []
    cmd = command_of(words, ALIASES)
    done = [w for w in words[1:-1] if w.lower() not in _FILLER]
    prev = done[-1].lower() if done else ""
    wilds = len(groups(view.get("hand") or ())[WILD])
    if cmd == "play":
        if _COUNT_RE.match(prev) and prev != "all":
            return _held_words(view, int(prev))
        if prev == "all":
            return _held_words(view)
        named = {c for w in done if (c := _colour_word(w)) is not None}
        return [w for w in _held_words(view) if NAMES.index(w) not in named] + ["all"]
    if cmd == "slough":
        if done:
            return ["wild"] if _COUNT_RE.match(prev) else []
        return ["all"] + [str(i) for i in range(1, wilds + 1)] if wilds else []
    return []


# ------------------------------------------------------------------ the table, as text

def _header(view: dict, ctx: Ctx) -> str:
    phase = view.get("phase", "?")
    head = "Go Wild!"
    if phase in ("choosing_leader", "dealing"):
        waiting = any(not n for n in ctx.names) if ctx.names else view.get("round", 0) == 0
        return head + (" - waiting for players to join" if waiting else " - dealing")
    head += f" - round {view.get('round', 1)}, trick {view.get('trick_number', 1)} of 3 " \
            f"({_points(view.get('trick_points', 1))})"
    head += f" - first to {view.get('target', 20)}"
    if phase == "reshuffling":
        return head + " - reshuffling the discard pile"
    if phase == "over":
        return head + " - game over"
    turn = view.get("turn")
    if turn is not None:
        head += " - your turn" if turn == ctx.me else f" - to play: {ctx.seat_label(turn)}"
    return head


def _points(n: int) -> str:
    return f"{n} point" + ("" if n == 1 else "s")


def _flags(p: dict, view: dict, ctx: Ctx) -> list[str]:
    s = p["seat"]
    out = []
    if p.get("wild_one"):
        out.append("WILD ONE")
    if view.get("turn") == s and view.get("phase") == "playing":
        out.append("to play")
    if p.get("leader") and view.get("phase") == "playing":
        out.append("leads")
    if p.get("played"):
        out.append("played")
    elif view.get("phase") == "playing" and not p.get("hand"):
        out.append("no cards: sits out")
    if s in ctx.offline:
        out.append("offline")
    if s in (view.get("winners") or ()):
        out.append("WINNER")
    return out


def _play_text(play: dict) -> str:
    cards = play.get("cards") or []
    kind = play.get("kind")
    if kind == "slough":
        return f"sloughed {len(cards)} wild"
    if kind == "mixed":
        return f"{cards_text(cards)} (mixed set of {len(cards)})"
    return cards_text(cards)


def _trick_lines(view: dict, ctx: Ctx) -> list[str]:
    out = []
    trick = view.get("trick") or []
    best = view.get("best")
    if view.get("phase") == "playing":
        out.append(f"trick {view.get('trick_number', 1)} ({_points(view.get('trick_points', 1))}):"
                   + ("" if trick else " nothing played yet"))
        for pl in trick:
            win = best is not None and best.get("seat") == pl["seat"]
            out.append(f"  {ctx.seat_label(pl['seat'])}: {_play_text(pl)}" + ("  <- winning" if win else ""))
    last = view.get("last_trick")
    if last:
        plays = "; ".join(f"{ctx.seat_label(pl['seat'])} {_play_text(pl)}" for pl in last.get("plays", ()))
        if last.get("winner") is None:
            what = f"all sloughs, nobody scored ({plays})"
        else:
            what = f"won by {ctx.seat_label(last['winner'])} for {_points(last.get('points', 0))} ({plays})"
        out.append(f"last trick (round {last.get('round')}, trick {last.get('trick')}): {what}")
    return out


def _result_lines(view: dict, ctx: Ctx) -> list[str]:
    if view.get("phase") != "over":
        return []
    winners = view.get("winners") or []
    scores = view.get("scores") or []
    return ["game over: " + " and ".join(f"{ctx.seat_label(w)} wins with {scores[w]}" for w in winners
                                         if w < len(scores))]


def _hint(view: dict, ctx: Ctx) -> str | None:
    if view.get("phase") != "playing" or ctx.me is None or view.get("turn") != ctx.me:
        return None
    wild_one = view.get("wild_one") == ctx.me
    g = groups(view.get("hand") or ())
    if wild_one:
        if any(g[i] for i in range(WILD)):
            return "your turn: play N COLOUR, and as the Wild One add up to N wilds (play 3 blue 3 wild)"
        return "your turn: you hold only wilds - slough N"
    return "your turn: play N COLOUR" + (" or slough N (your wilds cannot win)" if g[WILD] else "")


def render_text(view: dict, ctx: Ctx) -> list[str]:
    """The whole table in plain lines: header, players, the trick, the last trick, your hand."""
    lines = [_header(view, ctx)]
    for p in view.get("players", ()):
        s = p["seat"]
        who = you_label(ctx, s)
        flags = _flags(p, view, ctx)
        n = p.get('hand', 0)
        lines.append(with_flags(f"  {who}: {n} card{'s' if n != 1 else ''}, score {p.get('score', 0)}", flags))
    lines += _trick_lines(view, ctx)
    if view.get("phase") not in ("choosing_leader", "dealing"):
        lines.append(f"deck {view.get('deck_count', 0)}, discard pile {view.get('discard_count', 0)}")
    if ctx.me is not None and view.get("seat") is not None:
        hand = view.get("hand") or []
        lines.append(f"your hand ({len(hand)}): {_hand_line(hand)}")
        hint = _hint(view, ctx)
        if hint:
            lines.append(hint)
    lines += _result_lines(view, ctx)
    return lines


def render_snapshot(snap: dict, ctx: Ctx) -> list[str]:
    """The all-seeing state (replay viewer): every hand, the deck's top and the discards."""
    seats = snap.get("seats", 0)
    hands = snap.get("hands") or [[] for _ in range(seats)]
    trick_names = {pl["seat"] for pl in snap.get("trick") or ()}
    view = {
        "phase": snap.get("phase"), "turn": snap.get("turn"), "round": snap.get("round"),
        "trick_number": snap.get("trick_number"), "trick_points": snap.get("trick_number"),
        "target": (snap.get("settings") or {}).get("target", 20), "wild_one": snap.get("wild_one"),
        "trick": snap.get("trick") or [], "last_trick": snap.get("last_trick"),
        "best": None if snap.get("best") is None else {"seat": snap["best"], "size": snap.get("best_size")},
        "scores": snap.get("scores") or [], "winners": snap.get("winners") or [],
        "players": [{"seat": s, "hand": len(hands[s]), "score": (snap.get("scores") or [0] * seats)[s],
                     "wild_one": snap.get("wild_one") == s, "leader": snap.get("leader") == s,
                     "played": s in trick_names} for s in range(seats)],
    }
    lines = [_header(view, ctx) + " - all-seeing"]
    for p in view["players"]:
        s = p["seat"]
        flags = _flags(p, view, ctx)
        lines.append(with_flags(f"  {ctx.seat_label(s)}: score {p['score']}", flags))
        lines.append(f"    hand ({len(hands[s])}): {_hand_line(hands[s])}")
    lines += _trick_lines(view, ctx)
    deck = snap.get("deck") or []
    top = ", ".join(NAMES[colour_of(c)] for c in deck[:12])
    lines.append(f"deck ({len(deck)}, top first): " + (top + (", ..." if len(deck) > 12 else "") if deck else "empty"))
    lines.append(f"discard pile ({len(snap.get('discard') or [])}): {_hand_line(snap.get('discard') or [])}")
    lines += _result_lines(view, ctx)
    return lines


# ------------------------------------------------------------------ events

def describe(ev: dict, ctx: Ctx) -> str | None:
    """One line for one public event ("bob played 4 blue + 4 wild (mixed set of 8)")."""
    e = ev.get("event")
    s = ev.get("seat")
    who = ctx.name(s)
    if e == "leader_chosen":
        return f"{who} {'lead' if s == ctx.me else 'leads'} the first trick (drawn by lot)"
    if e == "deck_shuffled":
        return f"the deck of {ev.get('cards', DECK_SIZE)} cards is shuffled"
    if e == "cards_dealt":
        counts = ev.get("counts") or []
        if counts and all(c == 12 for c in counts):
            return "12 cards dealt to everyone"
        got = ", ".join(f"{ctx.name(i)} {n}" for i, n in enumerate(counts) if n)
        return "refill to 12: " + (got or "nobody needed cards")
    if e == "cards_played":
        cards = ev.get("cards") or []
        if ev.get("kind") == "slough":
            line = f"{who} sloughed {len(cards)} wild"
        else:
            line = f"{who} played {cards_text(cards)}"
            line += f" (mixed set of {ev.get('size', len(cards))})" if ev.get("kind") == "mixed" else ""
        nxt = ev.get("next")
        return line + ("" if nxt is None else "; your turn" if nxt == ctx.me else f"; {ctx.name(nxt)} to play")
    if e == "trick_won":
        return (f"{who} {'win' if s == ctx.me else 'wins'} trick {ev.get('trick')} with a set of {ev.get('size')}: "
                f"+{ev.get('points')} (score {ev.get('score')})")
    if e == "trick_sloughed":
        return f"trick {ev.get('trick')}: everyone sloughed - nobody scores, the same player leads again"
    if e == "wild_one_passed":
        return f"{who} {'are' if s == ctx.me else 'is'} now the Wild One" + \
            (f" (was {ctx.name(ev['previous'])})" if ev.get("previous") is not None else "")
    if e == "trick_started":
        lead = ev.get("leader")
        return (f"trick {ev.get('trick')} ({_points(ev.get('points', 1))}): "
                + ("you lead - your turn" if lead == ctx.me else f"{ctx.name(lead)} leads"))
    if e == "tricks_skipped":
        return f"nobody holds a card: the rest of round {ev.get('round')} is not played"
    if e == "round_ended":
        return f"round {ev.get('round')} over; scores: {seat_values(ev.get('scores') or (), ctx)}"
    if e == "deck_ran_out":
        return f"the deck ran out: the discard pile ({ev.get('discard')} cards) is shuffled into a new deck"
    if e == "discards_shuffled":
        return f"the discard pile ({ev.get('cards')} cards) is the new deck"
    if e == "round_started":
        w = ev.get("wild_one")
        return (f"round {ev.get('round')}: {ctx.name(ev.get('leader'))} "
                f"{'lead' if ev.get('leader') == ctx.me else 'leads'}; Wild One: "
                + (ctx.name(w) if w is not None else "nobody yet"))
    if e == "game_over":
        winners = ev.get("winners") or []
        scores = ev.get("scores") or []
        # the winner and their score; the "over" line after it adds every seat's (client/core.py)
        best = scores[winners[0]] if winners and winners[0] < len(scores) else 0
        return "game over: " + winners_text(winners, ctx) + f" with {best}" + (" each" if len(winners) > 1 else "")
    from . import generic
    return generic.describe(ev, ctx)


def flash(ev: dict, ctx: Ctx) -> str | None:
    """The moments players call out: a new Wild One, a wild mixed set, the end."""
    e = ev.get("event")
    if e == "wild_one_passed":
        return "You are the Wild One!" if ev.get("seat") == ctx.me else f"{ctx.name(ev.get('seat'))} is the Wild One!"
    if e == "cards_played" and ev.get("kind") == "mixed":
        return f"Go Wild! ({ctx.name(ev.get('seat'))}: {len(ev.get('cards') or [])} cards)"
    if e == "game_over":
        return "Game over!"
    return None


# ------------------------------------------------------------------ the bot

def _make(col: int, k: int, w: int, g: list[list[int]]) -> dict:
    return {"kind": "play", "cards": g[col][:k] + g[WILD][:w]}


def _cheapest(size: int, g: list[list[int]], wild_one: bool, avoid: int | None = None,
              tie: list | None = None) -> dict | None:
    """A set of exactly ``size`` that spends the least: from the colour with the fewest cards
    that reaches it without wilds, else with the fewest wilds; ``avoid`` (the best colour)
    last; colours alike by ``tie`` (the bot's draw per colour)."""
    tie = tie or list(range(WILD))
    w = len(g[WILD])
    best = None
    for col in range(WILD):
        n = len(g[col])
        if not n:
            continue
        k = min(n, size)
        need = size - k
        if need and (not wild_one or need > min(k, w)):
            continue
        key = (need, col == avoid, n, tie[col])
        if best is None or key < best[0]:
            best = (key, col, k, need)
    return None if best is None else _make(best[1], best[2], best[3], g)


def _max_size(col: int, g: list[list[int]], wild_one: bool) -> int:
    n = len(g[col])
    return n + (min(n, len(g[WILD])) if wild_one and n else 0)


def _dump(g: list[list[int]], wild_one: bool, top: int | None, tie: list) -> dict:
    """The play that gives away the least (colours alike by ``tie``)."""
    colours = [c for c in range(WILD) if g[c]]
    if g[WILD] and (not wild_one or not colours):
        return {"kind": "play", "cards": list(g[WILD])}           # slough every wild
    pool = [c for c in colours if c != top] or colours
    col = min(pool, key=lambda c: (len(g[c]), tie[c]))
    return {"kind": "play", "cards": g[col][:len(g[col])] if len(g[col]) <= 2 else g[col][:1]}


def choose(view: dict, rng: random.Random | None = None) -> dict | None:
    """The bot's play now, or None when it is not this seat's turn. Colours that serve
    alike are told apart by a draw from ``rng`` (the bot's own; without it, colour order)."""
    seat = view.get("seat")
    if seat is None or view.get("phase") != "playing" or view.get("turn") != seat:
        return None
    hand = view.get("hand") or []
    if not hand:
        return None
    g = groups(hand)
    wild_one = view.get("wild_one") == seat
    colours = [c for c in range(WILD) if g[c]]
    trick_no = view.get("trick_number", 1)
    best = view.get("best")
    need = (best.get("size", 0) if best else 0) + 1
    players = view.get("players") or []
    n = len(players)
    # Who still plays in this trick after this seat (clockwise, holding cards, not played yet).
    rest = [players[(seat + i) % n] for i in range(1, n)]
    rest = [p for p in rest if p.get("hand") and not p.get("played")]
    sure = max([need] + [p["hand"] for p in rest])          # nobody after can beat this size
    tie = [rng.random() for _ in range(WILD)] if rng is not None else list(range(WILD))
    top = max(colours, key=lambda c: (_max_size(c, g, wild_one), len(g[c]), -tie[c])) if colours else None
    biggest = _max_size(top, g, wild_one) if top is not None else 0
    if biggest < need:
        return _dump(g, wild_one, top, tie)
    if not rest:                                               # last to play: the smallest win
        return _cheapest(need, g, wild_one, avoid=top, tie=tie)
    if sure <= biggest:                                        # a win nobody can take away
        return _cheapest(sure, g, wild_one, avoid=top, tie=tie)
    if trick_no >= 3:                                          # worth the most: the largest set
        size = biggest
        return _cheapest(size, g, wild_one, tie=tie)
    # Tricks 1 and 2: keep the best colour for trick 3; contest with the second-best.
    second = max((_max_size(c, g, False) for c in colours if c != top), default=0)
    threshold = 3 if len(rest) < 3 else 4
    if second >= max(need, threshold):
        return _cheapest(second, g, False, avoid=top, tie=tie)
    # Trick 1 decides the Wild One: worth the best colour when wilds wait in hand.
    if trick_no == 1 and len(g[WILD]) >= 2 and biggest >= max(need, threshold + 1):
        return _cheapest(biggest, g, wild_one, tie=tie)
    return _dump(g, wild_one, top, tie)


def _lowest(view: dict) -> dict | None:
    hand = view.get("hand") or []
    return {"kind": "play", "cards": [min(hand)]} if hand else None


def candidates(view: dict, rng: random.Random | None = None, memo: dict | None = None) -> list[dict]:
    """Actions worth trying now, best first: the bot's choice, then the timer's default
    (the lowest card alone, always legal). Empty when it is not this seat's turn. (The
    view holds all this bot uses: the trick's best set and the hand counts; ``memo`` is
    unused.)"""
    first = choose(view, rng)
    if first is None:
        return []
    out = [first]
    low = _lowest(view)
    if low is not None and action_key(low) != action_key(first):
        out.append(low)
    return out


# the expert level: its memory (bot_watch), its search and its values (go_wild_expert.py)
bot_watch = go_wild_expert.bot_watch
expert_candidates = go_wild_expert.plugin_expert_candidates
expert_searches = go_wild_expert.my_turn
expert_values = go_wild_expert.plugin_expert_values


def label_action(action: dict) -> str:
    """An action map as the command a player would have typed (bots' lines, the viewer)."""
    if action.get("kind") != "play":
        return compact(action)
    cards = [c for c in action.get("cards") or [] if isinstance(c, int) and 0 <= c < DECK_SIZE]
    g = groups(cards)
    if cards and len(cards) == len(g[WILD]):
        return f"slough {len(cards)}"
    return "play " + " ".join(f"{len(x)} {NAMES[i]}" for i, x in enumerate(g) if x)
