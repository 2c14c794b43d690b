"""Expert bots' searches in the server's processes (server/botseats.py, server/cpu_pool.py):
seat views to decide from, and stand-ins for ``headless.mind.think`` that the search
processes import from here (this folder is on their path: a spawned process takes its
parent's). A stand-in is set with ``monkeypatch.setattr(mind, "think", ...)``; what it is
told comes through the environment, which the processes inherit when the pool starts."""

from __future__ import annotations

import copy
import os
import time
from pathlib import Path

from wildtable.headless import mind
from wildtable.headless.match import play_match

DIR = "WILDTABLE_TEST_THINK_DIR"    # where the stand-ins leave and look for their marks


def expert_views(game: str = "wild-shots", count: int = 2) -> list[tuple[dict, dict]]:
    """``count`` (view, memory) pairs of an expert's seat at its turn with a choice to make,
    from an arena game (headless/match.py)."""
    out: list[tuple[dict, dict]] = []

    def observe(state, seat, view, m):
        if (state.phase == "playing" and m.level.name == "expert" and state.turn == seat
                and len(view.get("playable") or view.get("hand") or ()) > 1 and len(out) < count):
            out.append((copy.deepcopy(view), copy.deepcopy(m.memo)))

    play_match(game, ("expert", "hard", "hard", "hard"), 11, 12, observe=observe)
    assert len(out) == count
    return out


def _mark(name: str) -> Path:
    return Path(os.environ[DIR]) / name


def die_once(thought: mind.Thought):
    """The first search ends its process (as if killed); every later one is the real one."""
    if not _mark("died").exists():
        _mark("died").touch()
        os._exit(1)
    return mind.think(thought)


def held(thought: mind.Thought):
    """A search that says it began, then goes on until it is told to end."""
    _mark("began").touch()
    while not _mark("end").exists():
        time.sleep(0.01)
    return mind.think(thought)
