"""The full-screen UI's coloured tables (rich Text), one module per game, found by the
game's NAME; the rest of a game's plug-in (commands, text, events, bot) is UI-free in
headless/games/. rich and Textual are imported only under client/ (docs/ARCHITECTURE.md,
"Layers"); tests/test_layers.py checks it.

Each module exposes ``render_rich(view, ctx) -> Sections`` (``Screen``; mypy checks them).
"""

from __future__ import annotations

from importlib import import_module
from types import ModuleType
from typing import TYPE_CHECKING, Protocol

import attrs
from rich.text import Text

from wildtable.headless.games import Ctx

_MODULES = {"run-wild": "run_wild", "wild-shots": "wild_shots", "go-wild": "go_wild",
            "go-fish-wildcard": "go_fish_wildcard"}


@attrs.frozen
class Sections:
    """A table screen in three parts: ``top`` and ``bottom`` always visible, ``middle``
    scrolls when it does not fit (at 80x24 many melds do not)."""
    top: Text
    middle: Text
    bottom: Text


class Screen(Protocol):
    """A game's table for the full-screen UI."""

    def render_rich(self, view: dict, ctx: Ctx) -> Sections: ...


def seat_cell(out: Text, ctx: Ctx, seat: int) -> None:
    """A player row's name cell on the full screen: "> ann       " (bold) for the reader, else indented."""
    mine = seat == ctx.me
    out.append(("> " if mine else "  ") + f"{ctx.seat_label(seat)[:10]:<10}", "bold" if mine else "")


def screen_for(game: str | None) -> ModuleType:
    """The game's screen module, or the generic one for a game without one."""
    return import_module(f"{__name__}.{_MODULES.get(game or '', 'generic')}")


def render_rich(game: str | None, view: dict, ctx: Ctx) -> Sections:
    """The table of ``game`` for the full-screen UI."""
    return screen_for(game).render_rich(view, ctx)


if TYPE_CHECKING:
    from . import generic, go_fish_wildcard, go_wild, run_wild, wild_shots

    _SCREENS: tuple[Screen, ...] = (generic, run_wild, wild_shots, go_wild, go_fish_wildcard)
