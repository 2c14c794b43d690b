"""The expert's value of each move a seat may make, from that seat's view and memory alone:
what `wildtable replay LOG --analyze` marks decisions by and what `hint` shows
(docs/PLAYING.md "Hints and analysis").

Why a module of its own: the analysis, the terminal's hint and the server's hint all ask
the one question "what is each move worth to this seat now?", and each game answers it
in its own module. A game plugs in by giving its module (headless/games/<game>.py) an
``expert_values(view, rng, memo, effort) -> [(action, value), ...]`` (``Valuer`` below):
every move it judges, higher is better, in the game's points as its expert counts them,
computed from ``view`` (the seat's view as the wire carried it) and ``memo`` (what
``bot_watch`` kept of the seat's earlier views) and nothing else; ``effort`` times the
expert's own budget (the analysis spends more than a bot, for steadier values). Wild Shots has one; Go Wild! joins
as soon as its module has one.

A game without it: the hint shows its ``hard`` level's choice, without a value, and says
so; the analysis refuses it, naming why (a ranking is not a value: nothing to measure a
loss by). Run Wild is played in real time, not turn by turn: it has no expert and no
analysis (the hint there is hard's choice too).
"""

from __future__ import annotations

import random
from types import ModuleType
from typing import Protocol, cast

import attrs

from wildtable.protocol.codec import packb, to_data, unpackb

from . import games
from .marks import WIN_MARKS, Marks


class Valuer(Protocol):
    """A game's ``expert_values``: each move it judges with its value to the seat (higher
    is better), from the seat's own view and memory only."""

    def __call__(self, view: dict, rng: random.Random | None = None,
                 memo: dict | None = None, effort: int = 1) -> list[tuple[dict, float]]: ...


@attrs.frozen
class Move:
    """One move, as the player would type it, and its value (None: the expert did not value it)."""
    action: dict
    label: str
    value: float | None


@attrs.frozen
class Advice:
    """What the expert (or, without one, the hard level) would play now: best first."""
    moves: tuple[Move, ...]
    by: str                     # "expert", or "hard" where the game has no expert

    @property
    def best(self) -> Move | None:
        return self.moves[0] if self.moves else None


def marks_for(game: str | None) -> Marks:
    """The game's marks (its module's ``expert_marks()``), else WIN_MARKS."""
    plugin = games.PLUGINS.get(game) if game is not None else None
    fn = getattr(plugin, "expert_marks", None)
    return fn() if fn is not None else WIN_MARKS


#: the games played in real time: no expert, no analysis (docs/PLAYING.md "Hints and analysis")
REAL_TIME = frozenset({"run-wild"})


def valuer_for(game: str | None) -> Valuer | None:
    """The game's expert valuation, or None if it has none."""
    plugin = games.PLUGINS.get(game) if game is not None else None
    if plugin is None or game in REAL_TIME:
        return None
    fn = getattr(plugin, "expert_values", None)
    return cast(Valuer, fn) if fn is not None else None


def no_analysis(game: ModuleType) -> str | None:
    """Why this game's moves cannot be analysed (a sentence), or None when they can."""
    if game.NAME in REAL_TIME:
        valued = sorted(p.TITLE for name, p in games.PLUGINS.items() if valuer_for(name) is not None)
        return (f"{game.TITLE} is played in real time, not turn by turn: it has no expert, and --analyze "
                f"judges only the turn-based games whose expert values moves ({', '.join(valued)})")
    if valuer_for(game.NAME) is None:
        return (f"{game.TITLE} has no expert that values moves yet (its expert level plays as hard, which "
                "ranks moves without a value): --analyze has nothing to measure a move's cost by")
    return None


def wire(view: dict) -> dict:
    """A view as a client holds it: packed and unpacked as the wire carries it."""
    return unpackb(packb(to_data(view)))


def label(plugin: ModuleType, action: dict) -> str:
    fn = getattr(plugin, "label_action", None)
    return fn(action) if fn is not None else games.compact(action)


def appraise(game: str, view: dict, memo: dict | None, rng: random.Random, effort: int = 1) -> Advice:
    """The moves of this seat now, best first, valued by the game's expert; without one,
    hard's candidates (no values). Pure and CPU-bound (a search): the clients run it in a
    worker thread, the server in its search processes, off their event loops."""
    plugin = games.plugin_for(game)
    valuer = valuer_for(game)
    if valuer is not None:
        valued = valuer(view, rng, memo, effort)
        order = games.best_first(valued, lambda x: -x[1], rng)
        return Advice(tuple(Move(a, label(plugin, a), v) for a, v in order), "expert")
    if not games.has_bot(game):
        return Advice((), "hard")
    ranked = plugin.candidates(view, rng, memo)
    return Advice(tuple(Move(a, label(plugin, a), None) for a in ranked), "hard")


def hint_text(game: str | None, advice: Advice) -> str:
    """The hint as one line for the player: the move as it is typed first, then whose
    choice it is (``play R7 - the expert's choice, worth +2.73; next play R3 +1.78``)."""
    best = advice.best
    if best is None:
        return "no hint: you have no move to make now"
    if advice.by == "expert":
        others = [m for m in advice.moves[1:3] if m.value is not None]
        more = "; next " + ", ".join(f"{m.label} {m.value:+.2f}" for m in others) if others else ""
        return f"{best.label} - the expert's choice, worth {best.value:+.2f}{more}"
    title = getattr(games.plugin_for(game), "TITLE", game)
    why = "is played in real time: no expert" if game in REAL_TIME else "has no expert that values moves"
    return f"{best.label} - hard's choice ({title} {why})"
