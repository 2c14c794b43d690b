"""Small modules with one job (issue #23; docs/ARCHITECTURE.md, "Module sizes"): no Python
module outside the games' engines (protocol/games/) is over 600 lines. The modules still
over are listed below, each by name; the list can only shrink: a module not listed that
grows over the limit fails, and so does a listed one that is now under it (take it off
the list), so the list always tells the truth."""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LIMIT = 600
# the games' engines: a game's rules in one place, however long they are
EXEMPT = ("protocol/games/",)
# never the project's own modules: virtualenvs, caches, build output
SKIPPED_DIRS = {"__pycache__", "node_modules", "build", "dist"}

# Modules over LIMIT today, to be split by job (issue #23) and then taken off. Never add
# one: split the module instead (server/wire.py and server/store_pg.py show how).
STILL_OVER = {
    "headless/games/run_wild.py",           # a game's client plug-in and its bot
    "headless/games/go_fish_wildcard.py",   # a game's client plug-in and its bot
    "bench/loadgen.py",                     # the load generator's clients
    "tests/protocol/test_run_wild.py",      # an engine's tests, one file a game
    "tests/protocol/test_go_wild.py",       # an engine's tests, one file a game
    "tests/protocol/test_go_fish_wildcard.py",  # an engine's tests, one file a game
    "tests/protocol/test_codec.py",         # the codec's tests
}


def _modules() -> dict[str, int]:
    """Every .py file of the repository (not under a dot folder, a build folder or
    *.egg-info), by path from the root: its number of lines."""
    sizes = {}
    for folder, dirs, files in os.walk(ROOT):
        dirs[:] = [d for d in dirs if not (d.startswith(".") or d in SKIPPED_DIRS or d.endswith(".egg-info"))]
        for file in files:
            if not file.endswith(".py"):
                continue
            path = Path(folder, file)
            name = path.relative_to(ROOT).as_posix()
            if name.startswith(EXEMPT):
                continue
            with path.open("rb") as f:
                sizes[name] = sum(1 for _ in f)
    return sizes


def test_no_module_outside_the_engines_is_over_the_limit():
    sizes = _modules()
    assert "server/wire.py" in sizes and "server/table.py" in sizes      # the walk found the code
    over = sorted(f"{name} ({n} lines)" for name, n in sizes.items() if n > LIMIT and name not in STILL_OVER)
    assert not over, (f"modules over {LIMIT} lines: {', '.join(over)}; split each by job into modules with one "
                      "job (docs/ARCHITECTURE.md, \"Module sizes\"), do not add it to STILL_OVER")


def test_the_list_of_modules_still_over_is_true():
    sizes = _modules()
    gone = sorted(name for name in STILL_OVER if name not in sizes)
    assert not gone, f"STILL_OVER names modules that do not exist: {', '.join(gone)}; take them off"
    under = sorted(f"{name} ({sizes[name]} lines)" for name in STILL_OVER if sizes[name] <= LIMIT)
    assert not under, f"now at most {LIMIT} lines: {', '.join(under)}; take them off STILL_OVER (tests/test_module_sizes.py)"
