"""The engines' states are NamedTuples: one is built per action, and a NamedTuple is built
in a tenth of the time of a frozen attrs class (docs/ARCHITECTURE.md, `games/*.py`). This is
what attrs' ``evolve`` and ``fields`` are for attrs classes, for them, through public names
only: a state's fields are its class's annotations, in order."""

from __future__ import annotations

from typing import Any, TypeVar

T = TypeVar("T", bound=tuple)

#: ``build(State, values)`` is ``State(*values)`` without the NamedTuple ``__new__`` (a
#: Python function around this same call), on the paths that build one per action
build = tuple.__new__

_INDEX: dict[type, dict[str, int]] = {}


def fields(cls: type) -> tuple[str, ...]:
    """The field names of a NamedTuple class, in order."""
    return tuple(cls.__annotations__)


def evolve(state: T, **changes: Any) -> T:
    """``state`` with some fields changed; a name it has no field of is a KeyError (our
    bug, said at once)."""
    cls = type(state)
    index = _INDEX.get(cls)
    if index is None:
        index = _INDEX[cls] = {name: i for i, name in enumerate(fields(cls))}
    values = list(state)
    for name, value in changes.items():
        values[index[name]] = value
    return build(cls, values)
