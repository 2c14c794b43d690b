"""Helpers for tests that drive a table's pure core (server/arbiter.py) with values and a
given ``now``: no sockets, no trio (docs/ARCHITECTURE.md, "The arbiter: pure core, thin
shell")."""

from __future__ import annotations

from wildtable.protocol.codec import unpackb
from wildtable.protocol.engine import TableConfig
from wildtable.protocol.logfmt import decode_record, iter_frames
from wildtable.server.arbiter import Arbiter
from wildtable.server.arbiter_io import Link, new_link


def links(*names: str) -> tuple[Link, ...]:
    """A connection as the core knows it (server/arbiter_io.py Link), one per name."""
    return tuple(new_link(f"10.0.0.{i}:5000", name) for i, name in enumerate(names, 1))


def identity(size: int) -> tuple[int, ...]:
    """Chance with no randomness: the deck as it is."""
    return tuple(range(size))


def core_of(game, seats: int, settings: dict | None = None, **kw) -> Arbiter:
    settings = settings or {}
    state = game.new_table(TableConfig(game.NAME, seats, settings))
    tokens = iter(f"token{i}" for i in range(100))
    return Arbiter("t1", game, seats, settings, state, chance=identity, new_token=lambda: next(tokens), **kw)


def records(group) -> list:
    """The group's log records, decoded."""
    return [decode_record(unpackb(payload)) for r in group.records for _, payload in iter_frames(r)]
