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
from wildtable.protocol import messages as m

from serverkit import create, join

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


async def seat_three_experts(conn) -> str:
    """A Wild Shots table where ``conn`` sits at seat 0 (never playing) and the server
    seats 3 expert bots (delay 0), seat 1 to play first; its id."""
    table = await create(conn, "wild-shots", 4, first_player=1)
    await join(conn, table, 0)
    await conn.send(m.SeatBots(table, 3, "expert", 0))
    seated = await conn.receive_until(lambda x: isinstance(x, (m.BotsSeated, m.Error)))
    assert isinstance(seated, m.BotsSeated), seated
    return table


async def until_played_by(conn, seats: set[int]) -> None:
    """Read ``conn``'s updates until each of ``seats`` has played a card."""
    played: set[int] = set()
    while not seats <= played:
        got = await conn.receive_until(lambda x: isinstance(x, m.Update))
        played |= {e.get("seat") for e in got.events if e.get("event") == "card_played"}


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
