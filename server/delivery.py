"""Each seat's private part of an update, encoded again only when it changed (issue #25).

The arbiter encodes the public part of an update once for every seat and spectator
(``messages.SharedUpdate``); a seat's private part (Run Wild: its hand and pile size) is
its own. Most updates change one seat's private keys at most (the one who acted), so the
encoded part of every seat is kept beside the engine's ``private_key`` for it, and built
again only when that key differs. A game without ``private_key`` has its private view
built and encoded for each seat every time. One entry per seat: bounded by the table."""

from __future__ import annotations

from types import ModuleType
from typing import Any, Hashable

from wildtable.protocol.messages import PrivatePart


class PrivateParts:
    """The last encoded private part of each seat (and the spectators'), by its key."""

    __slots__ = ("_game", "_key", "_parts", "built")

    def __init__(self, game: ModuleType):
        self._game = game
        self._key = getattr(game, "private_key", None)
        self._parts: dict[int | None, tuple[Hashable, PrivatePart]] = {}
        self.built = 0                 # private parts built and encoded (bench/tests: what was saved)

    def part(self, state: Any, seat: int | None) -> PrivatePart:
        """``PrivatePart.of(game.private_view(state, seat))``, from the last one of ``seat``
        when the engine's key for it is unchanged."""
        if self._key is None:
            self.built += 1
            return PrivatePart.of(self._game.private_view(state, seat))
        key = self._key(state, seat)
        got = self._parts.get(seat)
        if got is not None and got[0] == key:
            return got[1]
        self.built += 1
        part = PrivatePart.of(self._game.private_view(state, seat))
        self._parts[seat] = (key, part)
        return part
