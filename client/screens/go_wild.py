"""The full-screen table of go wild (rich Text, coloured): its game module
(headless/games/go_wild.py) holds the rest, with no UI."""

from __future__ import annotations

from rich.style import Style
from rich.text import Text

from wildtable.headless.games.go_wild import Ctx, NAMES, WILD, _STYLES, _flags, _header, _hint, _points, _result_lines, _trick_lines, groups
from . import Sections, seat_cell


def _cards_rich(out: Text, cards, click: bool = False) -> None:
    first = True
    for i, g in enumerate(groups(cards)):
        if not g:
            continue
        if not first:
            out.append(" + " if not click else "  ")
        first = False
        style = Style.parse(_STYLES[i])
        if click:
            style += Style(meta={"@click": f"app.insert_handle({NAMES[i]!r})"})
        out.append(f"{len(g)} {NAMES[i]}", style)


def _short_header(view: dict, ctx: Ctx) -> str:
    """The header for the full-screen table (the top bar already names the game)."""
    phase = view.get("phase", "?")
    if phase in ("choosing_leader", "dealing"):
        return _header(view, ctx).split(" - ", 1)[1].capitalize()
    pts = view.get("trick_points", 1)
    head = f"Round {view.get('round', 1)}, trick {view.get('trick_number', 1)}/3 ({pts} pt{'' if pts == 1 else 's'})"
    turn = view.get("turn")
    if phase == "reshuffling":
        return head + " - reshuffling"
    if phase == "over":
        return head + " - game over"
    if turn is not None:
        head += " - your turn" if turn == ctx.me else f" - to play: {ctx.seat_label(turn)[:10]}"
    return head


def _short_hint(view: dict, ctx: Ctx) -> str | None:
    if _hint(view, ctx) is None:
        return None
    g = groups(view.get("hand") or ())
    if view.get("wild_one") == ctx.me:
        if any(g[i] for i in range(WILD)):
            return "your turn: play N COLOUR + up to N wild"
        return "your turn: only wilds - slough N"
    return "your turn: play N COLOUR" + (" or slough N" if g[WILD] else "")


_RICH_FLAGS = {"WILD ONE": ("WILD ONE", "bold reverse magenta"), "to play": ("TO PLAY", "bold yellow"),
               "WINNER": ("WINNER", "bold reverse green"), "no cards: sits out": ("no cards", "dim")}


def render_rich(view: dict, ctx: Ctx) -> Sections:
    """The table in three parts, readable in 50 columns (80x24 with the events pane)."""
    top = Text()
    top.append(_short_header(view, ctx), "bold")
    for p in view.get("players", ()):
        s = p["seat"]
        top.append("\n")
        seat_cell(top, ctx, s)
        n, pts = p.get('hand', 0), p.get('score', 0)
        # "1 card ", "1 pt ": singular, padded to keep the columns (issue #27: "1 cards")
        top.append(f" {n:>2} {'card ' if n == 1 else 'cards'} {pts:>2} {'pt ' if pts == 1 else 'pts'}")
        for f in _flags(p, view, ctx):
            word, style = _RICH_FLAGS.get(f, (f, "dim"))
            top.append(" ")
            top.append(word, style)
    middle = Text()
    trick = view.get("trick") or []
    best = view.get("best")
    if view.get("phase") == "playing":
        middle.append(f"Trick {view.get('trick_number', 1)} - {_points(view.get('trick_points', 1))}", "bold")
        if not trick:
            middle.append("\n  nothing played yet", "dim")
        for pl in trick:
            middle.append(f"\n  {ctx.seat_label(pl['seat'])[:10]:<10} ")
            if pl.get("kind") == "slough":
                middle.append(f"sloughed {len(pl['cards'])} wild", "dim")
            else:
                _cards_rich(middle, pl["cards"])
                if pl.get("kind") == "mixed":
                    middle.append(f" (mixed, {len(pl['cards'])})", "dim")
            if best is not None and best.get("seat") == pl["seat"]:
                middle.append(" <- winning", "bold green")
    for line in _trick_lines(view, ctx)[len(trick) + 1 if view.get("phase") == "playing" else 0:]:
        middle.append(("\n" if middle.plain else "") + line, "dim")
    if view.get("phase") not in ("choosing_leader", "dealing"):
        middle.append(("\n" if middle.plain else "") + f"deck {view.get('deck_count', 0)}, discard pile "
                      f"{view.get('discard_count', 0)}; first to {view.get('target', 20)} wins", "dim")
    for line in _result_lines(view, ctx):
        middle.append("\n" + line, "bold")
    bottom = Text()
    if ctx.me is not None and view.get("seat") is not None:
        hand = view.get("hand") or []
        wild_one = view.get("wild_one") == ctx.me
        bottom.append(f"Your hand ({len(hand)})" + (" - you are the WILD ONE" if wild_one else "") + ":", "bold")
        bottom.append("\n")
        if hand:
            _cards_rich(bottom, hand, click=True)
        else:
            bottom.append("empty", "dim")
        hint = _short_hint(view, ctx)
        if hint:
            bottom.append("\n" + hint, "bold yellow")
    else:
        bottom.append("watching: no hand", "dim")
    return Sections(top, middle, bottom)
