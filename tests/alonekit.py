"""Which tests seat the steady player (tests/steadykit.py), and so must run ``alone`` under pytest -n
(tests/conftest.py): those that name it, or call a function of tests/ that does, at any
depth (floodkit.attacked, a module's own helper, a fixture of the module).

Found by reading the names each function's code uses (``co_names``, its inner functions'
too): an attribute named like the player counts as well as a global, so ``kit.under_attack``
is found as ``under_attack`` is. What this misses (a call through a variable, a fixture
of another file) the player itself catches when it is seated: it fails a test that is not
``alone`` (steadykit.steady_player, ALONE_ENV), so a new attack test cannot forget it."""

from __future__ import annotations

import inspect
import types
from pathlib import Path

STEADY_PLAYER = frozenset({"steady_player", "steady_player_process", "under_attack"})     # steadykit's, and hostilekit's under_attack
ALONE_ENV = "WILDTABLE_TEST_ALONE"      # "1" while an ``alone`` test runs, "0" while another does
TESTS = str(Path(__file__).resolve().parent)


def _names(code: types.CodeType) -> set[str]:
    """The global and attribute names ``code`` and the functions inside it use."""
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _names(const)
    return names


def _ours(obj) -> types.FunctionType | None:
    """``obj`` as a plain function defined in tests/ (decorators taken off), else None."""
    fn = inspect.unwrap(obj) if callable(obj) else None
    if isinstance(fn, types.FunctionType) and fn.__code__.co_filename.startswith(TESTS):
        return fn
    return None


def seats_steady_player(obj, seen: set | None = None) -> bool:
    """Whether calling ``obj`` (a test, a helper, a fixture function) may seat the steady
    player: it names one of STEADY_PLAYER, or calls a function of tests/ that does."""
    fn = _ours(obj)
    if fn is None:
        return False
    seen = set() if seen is None else seen
    if fn.__code__ in seen:
        return False
    seen.add(fn.__code__)
    names = _names(fn.__code__)
    if names & STEADY_PLAYER:
        return True
    for name in names:
        value = fn.__globals__.get(name)
        if isinstance(value, types.ModuleType):       # kit.helper(): any name it uses, of that module
            callees = [getattr(value, other, None) for other in names]
        else:
            callees = [value]
        if any(seats_steady_player(callee, seen) for callee in callees if callee is not None):
            return True
    return False


def must_be_alone(item) -> bool:
    """Whether the pytest ``item`` (a test function) seats the steady player, through its
    own code or a fixture its module defines."""
    if seats_steady_player(getattr(item, "function", None)):
        return True
    module = getattr(item, "module", None)
    return module is not None and any(
        seats_steady_player(getattr(module, name, None)) for name in getattr(item, "fixturenames", ()))
