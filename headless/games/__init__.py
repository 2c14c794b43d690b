"""Per-game plug-ins of the client, without a UI: one module per game, found by the game's NAME.

The client itself (lobby, connection, reconnects, line mode, full-screen UI, bots,
replay viewer) knows no game. Everything game-specific lives in one module here, which
exposes:

    NAME: str                         the engine's NAME ("run-wild")
    TITLE: str
    BOT_PACE: dict                    its bots' reaction times per level (levels.REAL_TIME or TURN_BASED)
    COMMANDS: dict[str, str]          command word -> "usage - what it does" (help, completion)
    ALIASES: dict[str, str]           short words -> command words (optional)
    HELP: str                         a few lines on handles (how cards and melds are typed)
    hand_labels(hand) -> list[str]    the hand as handles (the line mode's "hand:" line; optional)
    view_hand_labels(view) -> list[str]   the same from the whole view, where it needs more than
                                      the hand (Go Fish Wildcard stars its wild cards; optional)
    parse(words, view) -> dict        a command's words (the command word first) -> the action
                                      map sent in an intent; raises CommandError with a sentence
    complete(words, view) -> list     candidates for the last word of ``words`` (may be "")
    render_text(view, ctx) -> list    the table as plain-text lines (line mode, screen readers)
                                      (the full-screen UI's coloured table is client/screens/, by NAME:
                                      rich and Textual stay in client/, docs/ARCHITECTURE.md)
    describe(event, ctx) -> str|None  one line for one public event
    flash(event, ctx) -> str|None     a word to flash on screen ("Draw 3!", "Out!")
    render_snapshot(snapshot, ctx) -> list   the all-seeing state as text (replay viewer)
    candidates(view, rng, memo) -> list   bots: actions worth trying now, best first (may be []);
                                      plays that score alike come in an order drawn from ``rng``
                                      (the bot's own seeded draw: never seat or list order,
                                      docs/PLAYING.md "Bot levels"); ``memo`` is what the bot's
                                      seat has seen (``bot_watch``); both may be None (hints, tests)
    choose(view) -> dict|None         bots: the best action now
    action_key(action) -> str         bots: a stable key (a refused action is not retried at once)
    label_action(action) -> str       an action as the command a player would type (bots, viewer)
    bot_watch(view, now, memo)        bots, optional: note what the seat saw as the table changed
                                      (Run Wild: Go!, Draw-3s; Wild Shots: each trick as it is shown)
    bot_hold(actions, view, level, now, memo, scale) -> list   bots, optional: ``actions`` less
                                      those held back now (Run Wild: Draw-3s early in a round)
    bot_miss(action, level) -> float  bots, optional: the chance that a bot at this level
                                      (levels.Level) overlooks the action (default level.miss)
    expert_candidates(view, rng, memo) -> list   bots, optional: the ``expert`` level's
                                      actions, best first, from a search (CPU-bound: a bot
                                      runs it off its event loop, headless/mind.py)
    expert_searches(view) -> bool     bots, optional: whether expert_candidates searches in
                                      this view (False: it answers at once, and a bot
                                      decides on its own loop; without it: always searches)

``complete`` may return every candidate: the caller keeps those starting with what is
typed. ``candidates``/``action_key``/``label_action`` together make a game playable by
bots (``has_bot``); without them the game still plays by hand.

``GamePlugin`` and ``BotStrategy`` below state the same as typing.Protocols; mypy checks
every module here against them (``_PLUGINS`` at the end).

A game without a module here is played through ``generic``: its view shows as readable
text and ``act {"kind": ...}`` sends a raw action. Adding a game's commands and bot is one
new module plus one line in ``_MODULES``; its coloured screen, one module in client/screens/.
"""

from __future__ import annotations

import json
import random
from importlib import import_module
from types import ModuleType
from typing import TYPE_CHECKING, Any, Callable, Iterable, Protocol, TypeVar

import attrs

_MODULES = ("run_wild", "wild_shots", "go_wild", "go_fish_wildcard")


class CommandError(Exception):
    """A command the client could not turn into an action; the message says why."""


@attrs.frozen
class Ctx:
    """What a renderer needs besides the view: who sits where, and who "you" are."""
    names: tuple[str, ...] = ()
    me: int | None = None
    offline: frozenset = frozenset()     # seats whose player is not connected now

    def name(self, seat: int | None) -> str:
        if seat is None:
            return "the table"
        if seat == self.me:
            return "you"
        if 0 <= seat < len(self.names) and self.names[seat]:
            return self.names[seat]
        return f"seat {seat}"

    def seat_label(self, seat: int) -> str:
        """A seat's name without the "you" substitution, e.g. for score tables."""
        if 0 <= seat < len(self.names) and self.names[seat]:
            return self.names[seat]
        return f"seat {seat}"


class GamePlugin(Protocol):
    """What the client needs of a game's module (the module's doc above says what each
    does); the optional names (ALIASES, hand_labels, bot_watch, ...) are looked up with
    getattr."""

    NAME: str
    TITLE: str
    BOT_PACE: dict
    COMMANDS: dict[str, str]
    HELP: str

    def parse(self, words: list[str], view: dict) -> dict: ...
    def complete(self, words: list[str], view: dict) -> list: ...
    def render_text(self, view: dict, ctx: Ctx) -> list[str]: ...
    def render_snapshot(self, snapshot: dict, ctx: Ctx) -> list[str]: ...
    def describe(self, event: dict, ctx: Ctx) -> str | None: ...
    def flash(self, event: dict, ctx: Ctx) -> str | None: ...


class BotStrategy(GamePlugin, Protocol):
    """A game module that bots can play (``has_bot``)."""

    def candidates(self, view: dict, rng: random.Random | None = None, memo: dict | None = None) -> list: ...
    def choose(self, view: dict) -> dict | None: ...
    def action_key(self, action: dict) -> str: ...
    def label_action(self, action: dict) -> str: ...


def ctx_from(players, me: int | None) -> Ctx:
    """A Ctx from the server's ``players`` list ({seat, name, connected})."""
    names: list[str] = []
    offline = set()
    for p in players or ():
        seat = p.get("seat", len(names))
        while len(names) <= seat:
            names.append("")
        names[seat] = p.get("name") or ""
        if p.get("name") and not p.get("connected", True):
            offline.add(seat)
    return Ctx(tuple(names), me, frozenset(offline))


def is_number(text: str) -> bool:
    """Plain digits, as typed for a seat, a count or a table's number: ASCII only (``"²".isdigit()``
    is true, yet int() refuses it) and short enough for int() (it refuses over 4300 digits)."""
    return text.isascii() and text.isdigit() and len(text) <= 18


def action_key(action: dict) -> str:
    """A stable key of an action map (bots remember refused actions by it); every game
    module exports this one."""
    return json.dumps(action, sort_keys=True)


T = TypeVar("T")


def best_first(items: Iterable[T], key: Callable[[T], Any], rng: random.Random | None) -> list[T]:
    """``items`` by ``key``, lowest first; items whose keys tie come in an order drawn from
    ``rng``, the bot's own seeded generator, so that no seat and no list position is
    favoured (docs/PLAYING.md "Bot levels"). Without ``rng`` (hints, tests) ties keep
    their order."""
    items = list(items)
    draws = [rng.random() for _ in items] if rng is not None else list(range(len(items)))
    order = sorted(range(len(items)), key=lambda i: (key(items[i]), draws[i]))
    return [items[i] for i in order]


def first(candidates: list[dict]) -> dict | None:
    """The best of a game's ``candidates`` (they come best first), or None."""
    return candidates[0] if candidates else None


def compact(value) -> str:
    """A map as compact JSON (``{"kind":"draw"}``): an action no game word fits, raw."""
    return json.dumps(value, separators=(",", ":"))


def unique(items) -> list:
    """The items in the order first seen, each once (completion candidates)."""
    return list(dict.fromkeys(items))


def command_of(words: list[str], aliases: dict[str, str]) -> str:
    """The command word of a command's words (the first), lower-cased, through a game's ALIASES."""
    word = words[0].lower()
    return aliases.get(word, word)


def seat_values(values, ctx: Ctx) -> str:
    """One number per seat, in seat order: "ann 3, bob 0" (scores, totals, penalties)."""
    return ", ".join(f"{ctx.seat_label(i)} {x}" for i, x in enumerate(values))


def winners_text(winners, ctx: Ctx) -> str:
    """"ann wins" / "ann and bob win"."""
    return " and ".join(ctx.seat_label(x) for x in winners) + (" wins" if len(winners) == 1 else " win")


def winners_line(winners, ctx: Ctx) -> str:
    """"winner: ann" / "winners: ann, bob" (the end of a text table)."""
    return "winner" + ("s" if len(winners) != 1 else "") + ": " + ", ".join(ctx.seat_label(w) for w in winners)


def you_label(ctx: Ctx, seat: int) -> str:
    """A seat's name in a player row: "ann", or "ann (you)" for the reader's own seat."""
    return ctx.seat_label(seat) + (" (you)" if seat == ctx.me else "")


def round_words(rnd: int, rounds: int | None) -> str:
    """"round 3 of 4"; past the last round, a Run Wild tie-break round says so (docs/RULES.md,
    Run Wild: tied leaders play more rounds), never "round 5 of 4"."""
    if rounds is None:
        return f"round {rnd}"
    if rnd > rounds:
        extra = rnd - rounds
        return f"tie-break round{f' {extra}' if extra > 1 else ''} (after {rounds} round{'s' if rounds != 1 else ''})"
    return f"round {rnd} of {rounds}"


def with_flags(row: str, flags: list[str]) -> str:
    """A player row with its flags after a dash: "ann: 3 cards - to play, offline"."""
    return row + (" - " + ", ".join(flags) if flags else "")


def _load() -> dict[str, ModuleType]:
    out = {}
    for name in _MODULES:
        mod = import_module(f"{__name__}.{name}")
        out[mod.NAME] = mod
    return out


PLUGINS: dict[str, ModuleType] = _load()


def plugin_for(game: str | None) -> ModuleType:
    """The game's module, or the generic fallback for a game without one."""
    from . import generic
    if game is None:
        return generic
    return PLUGINS.get(game, generic)


def has_bot(game: str | None) -> bool:
    """Whether bots can play this game (its module has a strategy)."""
    mod = PLUGINS.get(game)
    return all(hasattr(mod, f) for f in ("candidates", "action_key", "label_action"))


if TYPE_CHECKING:
    from . import generic, go_fish_wildcard, go_wild, run_wild, wild_shots

    # mypy checks each module against the interfaces above
    _PLUGINS: tuple[GamePlugin, ...] = (generic,)
    _BOTS: tuple[BotStrategy, ...] = (run_wild, wild_shots, go_wild, go_fish_wildcard)
