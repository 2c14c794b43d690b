"""Helpers for tests that drive a table's pure core (server/arbiter.py) with values and a
given ``now``: no sockets, no trio (docs/ARCHITECTURE.md, "The arbiter: pure core, thin
shell")."""

from __future__ import annotations

from typing import Any

import attrs

from wildtable.protocol.codec import unpackb
from wildtable.protocol.engine import TableConfig
from wildtable.protocol.logfmt import decode_record, iter_frames
from wildtable.server import fairorder
from wildtable.server.arbiter import Arbiter
from wildtable.server.metrics import Metrics


@attrs.define(eq=False)
class FakePeer:
    """A connection as the core sees it (server/arbiter_io.py Peer)."""
    name: str
    table: Any = None
    seat: int | None = None
    closed: bool = False
    delay: float = 0.0
    written: fairorder.WriteTimes = attrs.Factory(fairorder.WriteTimes)

    def attach(self, table: Any, seat: int | None) -> None:
        self.table, self.seat = table, seat

    def detach(self, table: Any) -> None:
        if self.table is table:
            self.table, self.seat = None, None


@attrs.define
class Disk:
    """The log's state as the core reads it (server/arbiter_io.py Storage)."""
    paused: bool = False
    failed: BaseException | None = None


def identity(size: int) -> tuple[int, ...]:
    """Chance with no randomness: the deck as it is."""
    return tuple(range(size))


def core_of(game, seats: int, settings: dict | None = None, **kw) -> Arbiter:
    settings = settings or {}
    state = game.new_table(TableConfig(game.NAME, seats, settings))
    tokens = iter(f"token{i}" for i in range(100))
    return Arbiter("t1", game, seats, settings, state, storage=Disk(), metrics=Metrics(), chance=identity,
                   new_token=lambda: next(tokens), **kw)


def records(group) -> list:
    """The group's log records, decoded."""
    return [decode_record(unpackb(payload)) for r in group.records for _, payload in iter_frames(r)]
