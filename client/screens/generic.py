"""The full-screen table of generic (rich Text, coloured): its game module
(headless/games/generic.py) holds the rest, with no UI."""

from __future__ import annotations

from rich.text import Text

from wildtable.headless.games.generic import Ctx, render_text
from . import Sections


def render_rich(view: dict, ctx: Ctx) -> Sections:
    lines = render_text(view, ctx)
    return Sections(Text(lines[0], style="bold"), Text("\n".join(lines[1:])),
                    Text('act {"kind": ...} sends an action; help lists the commands', style="dim"))
