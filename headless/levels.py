"""Bot levels: how quickly a bot reacts and how well it plays (pure: no clock, no I/O).

Three levels, ``easy``, ``normal`` (the default) and ``hard``. Each differs in:

- **reaction time**: before each action a bot waits a time drawn from a log-normal
  distribution above a floor, as people's reaction times are: never quicker than the
  floor, half the time quicker than the median, now and then much slower (up to a cap).
  ``t = floor + (median - floor) * exp(sigma * Z)``, Z standard normal, capped at ``cap``.
  Each game's client module says its paces (``BOT_PACE``): Run Wild, where nobody waits
  for a turn, uses ``REAL_TIME``; the turn-based games ``TURN_BASED``.
- **strategy**: a game's ``candidates`` come best first (plays that score alike in an
  order drawn from the bot's own generator, never by seat); a bot overlooks each play it
  could make with the chance ``miss`` (easy misses many, normal a few, hard none: it
  plays the best it finds), as a person who did not see it. A game may say that some
  plays are harder to see (``bot_miss``): in Run Wild, taking or swapping a card of a
  meld on the table (``miss_table``): easy never does, normal seldom, hard always does
  when it helps. Run Wild's bots also hold their Draw-3s back at a round's start.

``--bot-delay``/``--delay`` replace the reaction time with a fixed one (each wait
0.75 to 1.25 times it); the level's strategy stays.

| level  | Run Wild floor / median / cap | turn-based floor / median / cap | misses | Run Wild table plays missed |
|--------|-------------------------------|---------------------------------|--------|-----------------------------|
| easy   | 2.5 / 5.0 / 15 s              | 1.5 / 3.0 / 8 s                 | 40%    | all                         |
| normal | 2.0 / 3.5 / 10 s              | 1.0 / 2.0 / 6 s                 | 20%    | 95%                         |
| hard   | 1.2 / 2.2 / 6 s               | 0.6 / 1.2 / 4 s                 | 0%     | none                        |

The numbers come from bench/bots_pace.py (a scripted player acting every 2 to 3 s
against three Run Wild bots): see bench/README.md for the win rates they give.
"""

from __future__ import annotations

import math
import random
from typing import Callable, Sequence

import attrs

LEVELS = ("easy", "normal", "hard", "expert")
DEFAULT_LEVEL = "normal"


@attrs.frozen
class Pace:
    """A reaction-time distribution (seconds): log-normal above ``floor`` with this ``median``."""
    floor: float
    median: float
    cap: float
    sigma: float = 0.5


@attrs.frozen
class Level:
    """What a level changes besides the pace: the chance to overlook each play, and each
    play a game counts as harder to see (Run Wild: taking or swapping a table card)."""
    name: str
    miss: float
    miss_table: float


LEVEL = {
    "easy": Level("easy", 0.40, 1.0),
    "normal": Level("normal", 0.20, 0.95),
    "hard": Level("hard", 0.0, 0.0),
    # the turn-based games' search (a game's expert_candidates; mind.py); elsewhere as hard
    "expert": Level("expert", 0.0, 0.0),
}

#: Run Wild: a person sees what to play and types it (``meld B6 G6 W``) in a few seconds.
REAL_TIME = {
    "easy": Pace(2.5, 5.0, 15.0),
    "normal": Pace(2.0, 3.5, 10.0),
    "hard": Pace(1.2, 2.2, 6.0),
    "expert": Pace(1.2, 2.2, 6.0),      # Run Wild has no expert search: it plays as hard
}

#: The turn-based games: a person looks at the trick and chooses a card.
TURN_BASED = {
    "easy": Pace(1.5, 3.0, 8.0),
    "normal": Pace(1.0, 2.0, 6.0),
    "hard": Pace(0.6, 1.2, 4.0),
    "expert": Pace(0.6, 1.2, 4.0),
}


def level_problem(name: str | None) -> str | None:
    """Why ``name`` is not a bot level (a sentence), or None (None stands for the default)."""
    if name is None or name in LEVELS:
        return None
    return f"there is no bot level {str(name)[:40]!r}; choose easy, normal (the default), hard or expert"


def level_of(name: str | None) -> Level:
    """The Level called ``name`` (None: the default)."""
    return LEVEL[name or DEFAULT_LEVEL]


def reaction_time(pace: Pace, rng: random.Random) -> float:
    """One reaction time drawn from ``pace`` (seconds): at least the floor, at most the cap."""
    t = pace.floor + (pace.median - pace.floor) * math.exp(pace.sigma * rng.gauss(0.0, 1.0))
    return min(t, pace.cap)


def fixed_time(delay: float, rng: random.Random) -> float:
    """A reaction time around a fixed delay (``--bot-delay``): 0.75 to 1.25 times it."""
    return delay * rng.uniform(0.75, 1.25)


def pick(candidates: Sequence[dict], level: Level, rng: random.Random,
         miss: Callable[[dict, Level], float] | None = None) -> dict | None:
    """The action a bot at ``level`` plays from ``candidates`` (best first): each is
    overlooked with the chance ``miss(action, level)`` (default ``level.miss``; a game's
    ``bot_miss``), except the last one, unless the chance is 1 (never seen at this level);
    None if there are none."""
    for i, action in enumerate(candidates):
        chance = level.miss if miss is None else miss(action, level)
        if chance >= 1:
            continue
        if i == len(candidates) - 1 or chance <= 0 or rng.random() >= chance:
            return action
    return None
