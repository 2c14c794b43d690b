"""The full-screen table of wild shots (rich Text, coloured): its game module
(headless/games/wild_shots.py) holds the rest, with no UI."""

from __future__ import annotations

from rich.style import Style
from rich.text import Text

from wildtable.headless.games.wild_shots import Ctx, MARKS, _STYLES, _player_flags, _result_lines, _sort_key, _turn_words, data, handle, hits_words, penalty, suit, symbols_of
from . import Sections, seat_cell


def _card_text(out: Text, c: int, syms: list, view: dict, *, dim: bool = False) -> None:
    mark = MARKS.get(syms[c]) if syms[c] else None
    label = handle(c) + (f":{mark}" if mark else "")
    style = Style.parse(_STYLES[suit(c)])
    if view.get("phase") == "playing" and syms[c] and syms[c] == view.get("trump"):
        style += Style(reverse=True)
    if syms[c] in (view.get("hits") or {}):
        style += Style(underline=True)
    if dim:
        style += Style(dim=True, bold=False)
    out.append(label, style + Style(meta={"@click": f"app.insert_handle({handle(c)!r})"}))


def _cards_text(out: Text, entries, syms, view, ctx: Ctx) -> None:
    for k, x in enumerate(entries):
        if k:
            out.append("  ")
        out.append(f"{ctx.name(x['seat'])[:8]} ", "dim")
        _card_text(out, x["card"], syms, view)


def render_rich(view: dict, ctx: Ctx) -> Sections:
    syms = symbols_of(view)
    hits = view.get("hits") or {}
    phase = view.get("phase")
    # Every line fits the table pane at 80 columns (about 49 wide beside the events pane):
    # the round's hits go on a line of their own, a player's flags are one word or two.
    top = Text()
    top.append(f"Wild Shots - round {view.get('round', 1)} of {view.get('rounds', 4)}", "bold")
    words = _turn_words(view, ctx)
    if words:
        if words.endswith(" to play"):
            words = f"{ctx.name(view.get('turn'))[:12]} to play"
        top.append(f" - {words.upper() if words == 'your turn' else words}",
                   "bold yellow" if words == "your turn" else "")
    top.append(f"\nhits: {hits_words(hits)}")
    for p in view.get("players", ()):
        s = p["seat"]
        top.append("\n")
        seat_cell(top, ctx, s)
        top.append(f" hand {p.get('hand', 0):>2} tricks {p.get('tricks', 0):>2} penalty {p.get('total', 0)}")
        flags = _player_flags(p, view, ctx)
        if "to play" in flags and "leads" in flags:
            flags = ["to lead"] + [f for f in flags if f not in ("to play", "leads")]
        if flags:
            top.append(" " + " ".join(f.upper() if f in ("to play", "to lead") else f for f in flags),
                       "bold yellow" if {"to play", "to lead", "WINNER"} & set(flags) else "dim")
    middle = Text()
    if phase == "playing":
        middle.append("TRUMP: ", "bold")
        trump = view.get("trump")
        middle.append(f" {str(trump).upper()} ({MARKS.get(trump, '?')}) ", "bold reverse")
        middle.append(f"   Snake Oil left {view.get('snake_oil_left')}", "dim")
        middle.append(f"\nTrick {view.get('trick_number')} of {data.TRICKS_PER_ROUND}: ", "bold")
        trick = view.get("trick") or []
        if trick:
            middle.append(f"({view.get('led_suit')} led)  ", "dim")
            _cards_text(middle, trick, syms, view, ctx)
        else:
            middle.append(f"{ctx.name(view.get('leader'))} {'lead' if view.get('leader') == ctx.me else 'leads'}",
                          "dim")
    last = view.get("last_trick")
    if last:
        if middle.plain:
            middle.append("\n")
        middle.append("Last trick: ", "bold")
        _cards_text(middle, last["cards"], syms, {**view, "trump": last.get("trump"), "phase": "playing"}, ctx)
        middle.append(f"  won by {ctx.name(last['winner'])} (trump {last.get('trump')})", "dim")
    if ctx.me is not None and phase == "playing":
        own = view.get("own_tricks") or []
        middle.append("\nYour tricks: ", "bold")
        if not own:
            middle.append("none", "dim")
        for i, t in enumerate(own):
            if i:
                middle.append(" | ", "dim")
            for k, c in enumerate(t):
                if k:
                    middle.append(" ")
                _card_text(middle, c, syms, view)
        middle.append(f"  hits so far {penalty([c for t in own for c in t], syms, hits)}", "bold")
    for line in _result_lines(view, ctx):
        if middle.plain:
            middle.append("\n")
        middle.append(line, "bold")
    if not middle.plain:
        middle.append("waiting for every seat to be taken", "dim")
    middle.append("\nsymbols: r revolver, h hat, s star, p poster\nreversed = trump, underlined = hit", "dim")
    bottom = Text()
    if ctx.me is not None and "hand" in view:
        hand = sorted(view.get("hand") or (), key=_sort_key)
        playable = set(view.get("playable") or ())
        my_turn = phase == "playing" and view.get("turn") == ctx.me
        bottom.append(f"Your hand ({len(hand)})", "bold")
        bottom.append(" - your turn: play a bright card" if my_turn else "", "bold yellow")
        bottom.append("\n")
        if not hand:
            bottom.append("empty", "dim")
        for k, c in enumerate(hand):
            if k:
                bottom.append(" ")
            _card_text(bottom, c, syms, view, dim=my_turn and c not in playable)
    else:
        bottom.append("watching: no hand", "dim")
    return Sections(top, middle, bottom)
