"""The four games, one module each, all with the engine API of ``protocol/engine.py``."""

from importlib import import_module
from types import ModuleType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..engine import Engine
    from . import go_fish_wildcard, go_wild, run_wild, wild_shots

    # mypy checks each game module against the engine interface (protocol/engine.py)
    _ENGINES: tuple[Engine, ...] = (run_wild, go_wild, wild_shots, go_fish_wildcard)

_MODULES = ("run_wild", "go_wild", "wild_shots", "go_fish_wildcard")

REGISTRY: dict[str, ModuleType] = {}
for _name in _MODULES:
    try:
        _m = import_module(f"{__name__}.{_name}")
    except ModuleNotFoundError as _e:  # a game not built yet in this checkout
        if _e.name != f"{__name__}.{_name}":
            raise
        continue
    REGISTRY[_m.NAME] = _m
