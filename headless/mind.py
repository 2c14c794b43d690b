"""A bot's decisions without any I/O: what it remembers, how long it waits, what it plays.

The networked bot (bots.py) and the offline arena (match.py) both decide through a Mind,
so the arena measures the very code that plays at real tables. A Mind sees only what its
own seat is sent (``watch`` each view as it arrives) and draws every random choice (reaction
times, overlooked plays, ties between plays that score alike) from its own seeded
generator: never from the seat it sits in (docs/PLAYING.md "Bot levels").

An expert's search is CPU-bound: a networked bot runs it off its event loop, as a
``Thought`` (a value: what the Mind decides from, its memory and generator copied) that
``think`` turns into the action and the generator's next state, in a worker thread or,
the server's bots, in another process (server/botseats.py): the same action as
``Mind.choose`` with the same generator, wherever it runs.
"""

from __future__ import annotations

import copy
import random
from types import ModuleType

import attrs

from . import levels


class Mind:
    """One bot's level, pace, generator and memory of what its seat has seen. At level
    ``expert`` a game's ``expert_candidates`` (a search: CPU-bound, run it off the event
    loop) ranks the plays; a game without one plays as ``hard``."""

    def __init__(self, level: str | None = None, *, rng: random.Random | None = None,
                 delay: float | None = None):
        self.level = levels.level_of(level)
        self.rng = rng or random.Random()
        self.delay = delay              # a fixed reaction time (--delay); None: the level's pace
        self.pace: levels.Pace | None = None    # the level's pace in this game, once seated
        self.memo: dict = {}            # what the game module's bot_watch keeps
        self.waits: list[float] = []    # every reaction time chosen, the last 1000

    def seated(self, plugin: ModuleType) -> None:
        """The game is known: take the level's pace for it (and forget any other game)."""
        self.pace = getattr(plugin, "BOT_PACE", levels.TURN_BASED)[self.level.name]
        self.memo.clear()

    def watch(self, plugin: ModuleType, view: dict, now: float) -> None:
        """A view this seat was sent (each update, in order): the game notes what it needs."""
        watch = getattr(plugin, "bot_watch", None)
        if watch is not None and view:
            watch(view, now, self.memo)

    def reaction_time(self) -> float:
        """How long to wait before the next action: the level's pace, or around --delay."""
        wait = (levels.fixed_time(self.delay, self.rng) if self.delay is not None
                else levels.reaction_time(self.pace or levels.TURN_BASED[self.level.name], self.rng))
        self.waits.append(wait)
        del self.waits[:-1000]
        return wait

    def searches(self, plugin: ModuleType, view: dict) -> bool:
        """Whether this decision is a search, to be run off the event loop (``thought``,
        ``think``): an expert's, where the game has one and says it searches in this view
        (``expert_searches``; not, say, when it is another seat's turn)."""
        if self.level.name != "expert" or not hasattr(plugin, "expert_candidates"):
            return False
        ask = getattr(plugin, "expert_searches", None)
        return ask is None or bool(ask(view))

    def thought(self, plugin: ModuleType, view: dict, now: float,
                refused: set | frozenset = frozenset()) -> Thought:
        """What ``choose`` decides from, as a value ``think`` takes anywhere: the memory
        and the generator's state copied (the event loop goes on updating them)."""
        return Thought(plugin.NAME, self.level.name, self.delay, self.pace, view, now, frozenset(refused),
                       copy.deepcopy(self.memo), self.rng.getstate())

    def choose(self, plugin: ModuleType, view: dict, now: float,
               refused: set | frozenset = frozenset(), memo: dict | None = None) -> dict | None:
        """The action to send now: the game's candidates (expert: its expert_candidates) (best first, ties drawn from this
        bot's generator) not refused since the table last changed, less those the game holds
        back now, picked at the bot's level. ``memo``: a copy of the memory to decide by
        (a search off the event loop must not read what the loop is updating)."""
        memo = self.memo if memo is None else memo
        search = getattr(plugin, "expert_candidates", None) if self.level.name == "expert" else None
        ranked = (search or plugin.candidates)(view, self.rng, memo)
        actions = [a for a in ranked if plugin.action_key(a) not in refused]
        hold = getattr(plugin, "bot_hold", None)
        if hold is not None:
            # a fixed --delay scales the game's holds (they are set for the level's median pace)
            scale = 1.0 if self.delay is None or self.pace is None else self.delay / self.pace.median
            actions = hold(actions, view, self.level.name, now, memo, scale)
        return levels.pick(actions, self.level, self.rng, getattr(plugin, "bot_miss", None))


@attrs.frozen
class Thought:
    """One decision of a Mind, to be made elsewhere (``think``): the game's name (a module
    does not go to another process: it is looked up there again), the Mind's level, delay
    and pace, the view, the time, the actions refused, a copy of its memory and its
    generator's state."""
    game: str
    level: str
    delay: float | None
    pace: levels.Pace | None
    view: dict
    now: float
    refused: frozenset
    memo: dict
    rng: tuple


def think(t: Thought) -> tuple[dict | None, tuple]:
    """``Mind.choose`` of the Mind ``t`` was taken from, in any thread or process: the
    action, and the generator's state after it (to set back on that Mind, so that it goes
    on as if it had chosen itself)."""
    from . import games
    plugin = games.plugin_for(t.game)
    mind = Mind(t.level, delay=t.delay)
    mind.pace = t.pace
    mind.rng.setstate(t.rng)
    return mind.choose(plugin, t.view, t.now, t.refused, t.memo), mind.rng.getstate()
