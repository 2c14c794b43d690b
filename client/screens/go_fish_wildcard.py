"""The full-screen table of go fish wildcard (rich Text, coloured): its game module
(headless/games/go_fish_wildcard.py) holds the rest, with no UI."""

from __future__ import annotations

from rich.style import Style
from rich.text import Text

from wildtable.headless.games.go_fish_wildcard import Ctx, SUITS, _SUIT_STYLES, _WILD_STYLE, _asked_ranks, _header, _hint, _player_flags, ask_line, card_label, label, rank_of, set_order, wild_set
from . import Sections


def _card_text(out: Text, c: int, wild: set[int], click: bool = True) -> None:
    lab = label(c, wild)
    style = Style.parse(_WILD_STYLE if rank_of(c) in wild else _SUIT_STYLES[SUITS[c % 4]])
    if click:
        style += Style(meta={"@click": f"app.insert_handle({card_label(c)!r})"})
    out.append(lab, style)


def render_rich(view: dict, ctx: Ctx) -> Sections:
    wild = wild_set(view)
    top = Text()
    top.append(_header(view, ctx), "bold")
    wr = view.get("wild_ranks") or []
    top.append("\nwild: " + (" ".join(wr) if wr else "none yet"), "bold" if wr else "dim")
    for p in view.get("players") or ():
        s = p["seat"]
        mine = s == ctx.me
        top.append("\n")
        top.append("> " if view.get("turn") == s else "  ", "bold yellow")
        top.append(f"p{s} {ctx.seat_label(s)[:10]:<10}", "bold" if mine else "")
        top.append(f" hand {p['hand']:>2}  sets {len(p['sets']):>2}")
        asked = _asked_ranks(view, s)
        if asked:
            top.append("  asked " + " ".join(asked), "dim")
        flags = [f for f in _player_flags(view, p, ctx) if f != "to act"]
        if mine:
            flags.insert(0, "you")
        if flags:
            top.append("  " + ", ".join(flags), "bold yellow" if "WINNER" in flags else "dim")
    middle = Text()
    placed = False
    for p in view.get("players") or ():
        if not p["sets"]:
            continue
        if placed:
            middle.append("\n")
        placed = True
        middle.append(f"{ctx.seat_label(p['seat'])[:10]:>10} ", "bold")
        for k, st in enumerate(p["sets"]):
            if k:
                middle.append(" | ", "dim")
            for j, c in enumerate(set_order(st["cards"])):
                if j:
                    middle.append(" ")
                _card_text(middle, c, set(), click=False)
    if not placed:
        middle.append("no sets on the table yet", "dim")
    asks = view.get("asks") or []
    if asks:
        middle.append("\nasks, newest first:", "bold")
        for a in reversed(asks[-12:]):
            middle.append("\n  " + ask_line(a, ctx), "" if a["handed"] else "dim")
    bottom = Text()
    if ctx.me is not None and view.get("seat") is not None:
        hand = sorted(view.get("hand") or [])
        bottom.append(f"Your hand ({len(hand)}) - pile {view.get('pile', 0)}"
                      + (" - * marks a wild card" if any(rank_of(c) in wild for c in hand) else "") + ":", "bold")
        bottom.append("\n")
        if not hand:
            bottom.append("empty", "dim")
        for k, c in enumerate(hand):
            if k:
                bottom.append(" ")
            _card_text(bottom, c, wild)
        hint = _hint(view, ctx)
        if hint:
            bottom.append("\n" + hint, "bold yellow")
    else:
        bottom.append("watching: no hand", "dim")
    return Sections(top, middle, bottom)
