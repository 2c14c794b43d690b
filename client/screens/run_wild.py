"""The full-screen table of run wild (rich Text, coloured): its game module
(headless/games/run_wild.py) holds the rest, with no UI."""

from __future__ import annotations

from rich.style import Style
from rich.text import Text

from wildtable.headless.games.run_wild import Ctx, _flags, _header, _result_lines, _sort_key, card_label, card_style, describe_meld, meld_card_label
from . import Sections, seat_cell


def _card_text(out: Text, c: int, label: str | None = None, click: str | None = None) -> None:
    label = label or card_label(c)
    meta = {"@click": f"app.insert_handle({click or label!r})"}
    out.append(label, Style.parse(card_style(c)) + Style(meta=meta))


def render_rich(view: dict, ctx: Ctx) -> Sections:
    top = Text()
    top.append(_header(view, ctx, short=True), "bold")
    totals = view.get("totals") or []
    for p in view.get("players", ()):
        s = p["seat"]
        top.append("\n")
        seat_cell(top, ctx, s)
        top.append(f" hand {p['hand']:>2} pile {p['pile']:>2} total {totals[s] if s < len(totals) else 0:>3}")
        if p.get("draw3s"):
            top.append(" D3x" + str(len(p["draw3s"])))
        flags = _flags(p, view, ctx)
        if flags:
            top.append("  " + " ".join(f.upper() if f in ("STUCK", "OUT") else f for f in flags),
                       "bold yellow" if "STUCK" in flags or "OUT" in flags else "dim")
    middle = Text()
    melds = view.get("melds") or []
    if not melds:
        middle.append("no melds on the table yet", "dim")
    for i, m in enumerate(melds):
        if i:
            middle.append("\n")
        handle = f"m{m['id']}"
        middle.append(f"{handle:>4}", Style(bold=True, meta={"@click": f"app.insert_handle({handle!r})"}))
        middle.append(f" {describe_meld(m):<16} ", "dim")
        for k, (c, v) in enumerate(zip(m["cards"], m["values"])):
            if k:
                middle.append(" ")
            _card_text(middle, c, meld_card_label(c, v))
    for line in _result_lines(view, ctx):
        middle.append("\n" + line, "bold")
    bottom = Text()
    if "hand" in view:
        bottom.append(f"Your hand ({len(view['hand'])}) - pile {view.get('pile', 0)}:", "bold")
        bottom.append("\n")
        cards = sorted(view["hand"], key=_sort_key)
        if not cards:
            bottom.append("empty", "dim")
        for k, c in enumerate(cards):
            if k:
                bottom.append(" ")
            _card_text(bottom, c)
        me = view["players"][ctx.me] if ctx.me is not None and ctx.me < len(view.get("players", ())) else {}
        if view.get("phase") == "ready" and me.get("in_round", True) and not me.get("ready"):
            bottom.append("\ntype ready to start the round", "bold yellow")
    else:
        bottom.append("watching: no hand", "dim")
    return Sections(top, middle, bottom)
