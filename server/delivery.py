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

from wildtable.protocol import messages as m
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


# A whole view every FULL_EVERY updates (seq divisible by it), to every seat and spectator,
# besides the one a connection gets when it did not receive the update before (a join, a
# rejoin, a resync). Patches travel on one ordered connection, so nothing is missed; the
# whole view bounds how long a client whose mirror went wrong (a bug, a hand-made client)
# shows a wrong table, at a cost of about a whole view / FULL_EVERY per update: with Run
# Wild's ~600-byte views, ~10 bytes per update, under a tenth of a patch
# (bench/README.md, "Patches").
FULL_EVERY = 64


class UpdateFrames:
    """The frames of each update for each seat and spectator of one table: a patch
    against what the connection received last, or a whole view (docs/PROTOCOL.md,
    "update"). Kept between updates: the last update's seq and public view, each seat's
    private view (and its ``private_key``) at that seq, and who received that update
    (bounded by the table's seats and spectators)."""

    __slots__ = ("_game", "_public_view", "_public_from", "_private_view", "_key", "_parts", "_seq", "_public",
                 "_state", "_private", "_held", "full_every", "patches", "fulls")

    def __init__(self, game: ModuleType, full_every: int | None = None):
        self._game = game
        self._public_view = getattr(game, "public_view", None)
        # the public view built from the last one, sharing what did not change (optional)
        self._public_from = getattr(game, "public_view_from", None) if self._public_view is not None else None
        # a game without public_view: its whole view is its "private" part
        self._private_view = game.private_view if self._public_view is not None else game.view
        self._key = getattr(game, "private_key", None) if self._public_view is not None else None
        self._parts = PrivateParts(game) if self._public_view is not None else None
        self._seq: int | None = None
        self._public: dict | None = None
        self._state: Any = None                     # the state of the last update (for _public_from)
        self._private: dict[int | None, tuple[Hashable, dict]] = {}
        self._held: dict[Any, int | None] = {}      # connection -> the seat (None: spectator) it held
        self.full_every = full_every or FULL_EVERY
        self.patches = 0               # frames sent as patches / whole views (bench, tests)
        self.fulls = 0

    def frames(self, seq: int, events, state: Any, seats, specs) -> list[tuple[Any, bytes]]:
        """(connection, frame) for each seat's connection (``seats``: one or None per seat)
        and each spectator of the update of ``seq``."""
        old_public, held, old_private = self._public, self._held, self._private
        if self._public_view is None:
            public = {}
        elif self._public_from is not None and old_public is not None:
            public = self._public_from(state, self._state, old_public)
        else:
            public = self._public_view(state)
        whole = old_public is None or seq % self.full_every == 0
        patch = None
        if not whole:
            assert old_public is not None and self._seq is not None
            changed, removed, items = _public_diff(old_public, public)
            patch = m.PatchUpdate(seq, self._seq, events, changed, removed, items)
        shared = None
        new_held: dict[Any, int | None] = {}
        new_private: dict[int | None, tuple[Hashable, dict]] = {}
        out: list[tuple[Any, bytes]] = []
        audience: list[tuple[Any, int | None]] = [(c, i) for i, c in enumerate(seats) if c is not None]
        audience += [(c, None) for c in specs]
        spec_frame: bytes | None = None
        key_of = self._key
        for c, i in audience:
            new_held[c] = i
            if i is None and spec_frame is not None and held.get(c, -1) is None:
                out.append((c, spec_frame))
                self.patches += 1
                continue
            private = new_private.get(i)
            if private is None:
                kept = old_private.get(i)
                if key_of is not None and kept is not None and kept[0] == key_of(state, i):
                    private = kept          # (the engine's key unchanged: the same private view)
                else:
                    private = self._private_of(state, i, None)
                new_private[i] = private
            if patch is not None and i in old_private and held.get(c, -1) == i:
                before = old_private[i][1]
                if before is private[1]:
                    data = patch.frame()
                else:
                    ch, gone = _diff(before, private[1])
                    data = patch.frame(m._map_pairs(ch), len(ch), gone) if ch or gone else patch.frame()
                if i is None:
                    spec_frame = data
                self.patches += 1
            else:
                if shared is None:
                    shared = self._whole(seq, events, public)
                data = shared(state, i)
                self.fulls += 1
            out.append((c, data))
        self._seq, self._public, self._held, self._private = seq, public, new_held, new_private
        self._state = state
        return out

    def _private_of(self, state: Any, seat: int | None, kept: tuple[Hashable, dict] | None) -> tuple[Hashable, dict]:
        """(key, private view) of ``seat`` now: the kept one while the engine's key is unchanged."""
        if self._key is None:
            return None, self._private_view(state, seat)
        key = self._key(state, seat)
        if kept is not None and kept[0] == key:
            return kept
        return key, self._private_view(state, seat)

    def _whole(self, seq: int, events, public: dict):
        """seat -> the frame of the whole view of the update."""
        if self._parts is not None:
            parts = self._parts
            su = m.SharedUpdate(seq, events, public)
            return lambda state, i: su.frame_encoded(parts.part(state, i))
        game, events = self._game, tuple(events)
        return lambda state, i: m.encode(m.Update(seq, events, game.view(state, i)))


def _diff(before: dict, after: dict) -> tuple[dict, list]:
    """(the top-level keys of ``after`` whose values differ from ``before``'s, the keys of
    ``before`` that ``after`` has not). Values compared with ``==`` and their type: a 1
    that becomes True is a change."""
    changed = {}
    for k, v in after.items():
        if k in before:
            w = before[k]
            if w is v or (w == v and type(w) is type(v)):
                continue
        changed[k] = v
    removed = [k for k in before if k not in after] if len(before) > len(after) - len(changed) else []
    return changed, removed


def _public_diff(before: dict, after: dict) -> tuple[dict, list, dict]:
    """``_diff`` of the public views, with the changed lists some of whose items are
    unchanged moved out of ``changed`` into the items map ``[length, index, item, ...]``:
    the list cut (or grown) to ``length``, the items at those indexes set (a card laid on
    one of twenty melds sends that meld, not the twenty; docs/PROTOCOL.md "Updates are
    patches"). One walk: a list is compared item by item once."""
    changed = {}
    items = {}
    for k, v in after.items():
        w = before.get(k, _NONE)
        if w is v:
            continue
        if type(v) is list and type(w) is list:
            n, old_n = len(v), len(w)
            spec: list = [n]
            for j in range(min(n, old_n)):
                a, b = v[j], w[j]
                if a is not b and (a != b or type(a) is not type(b)):
                    spec += (j, a)
            for j in range(old_n, n):
                spec += (j, v[j])
            if len(spec) == 1:
                if n != old_n:
                    items[k] = spec         # only cut
            elif len(spec) // 2 < n:        # some items unchanged: they are not sent
                items[k] = spec
            else:
                changed[k] = v
        elif w is _NONE or w != v or type(w) is not type(v):
            changed[k] = v
    removed = [k for k in before if k not in after] if len(before) != len(after) or changed else []
    return changed, removed, items


_NONE = object()
