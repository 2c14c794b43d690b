"""The engine API every game module implements, and the registry of games.

In the manner of OpenSpiel's Game/State, one module per game exposes the same
functions (all pure; state is immutable):

    NAME, TITLE, MIN_PLAYERS, MAX_PLAYERS
    RULES_VERSION                  the version of the game's rules this engine plays (see below)
    ACTIONS                        a codec Registry of the game's action classes ("kind")
    default_settings() -> dict
    new_table(config) -> State     validates seats and settings (IllegalAction "bad_settings")
    pending_chance(state) -> ChanceRequest | None
    apply(state, seat, action) -> (State, events)   seat None = the table itself
    view(state, seat | None) -> dict                what that seat (or a spectator) may know
    legal_actions(state, seat) -> list              a bounded, useful sample for bots/tests
    outcome(state) -> Outcome
    auto_action(state) -> action | None             a table action due now (e.g. "Go!")
    timeout_action(state) -> Timeout | None         what happens if nobody acts in time
    snapshot(state) -> dict                         the all-seeing state as plain data
    to_move(state) -> tuple[int, ...]               seats that may act now (bots)

Optional, for speed: ``public_view(state)`` and ``private_view(state, seat)`` with
``view(state, seat) == {**public_view(state), **private_view(state, seat)}``; the server
then builds and encodes the public part once per update (every bundled game has them). With
``private_key(state, seat)`` too (hashable, equal whenever ``private_view`` is), a seat's
private part is encoded again only when its key changed (server/delivery.py). With
``public_view_from(state, before, before_view)`` too: ``public_view(state)``, built from
``before_view == public_view(before)`` and sharing its values (the same objects) for what
did not change, so an update builds only what changed and the server's diff skips the rest
by identity (tests/protocol/test_public_view_from.py); nobody may write those values.
With ``advance(state, seat, action) -> State``: the state ``apply`` returns, and the same
IllegalAction for an action ``apply`` refuses, without building the events (replay drops
them; protocol/replay.py folds with it). With ``RAW_ADVANCE``, a dict of action kinds to
``step(state, seat, action_map) -> State | None``: ``advance`` of an action as the log holds
it (its msgpack map), without building the action; for a map the ACTIONS decoder would not
take, always None, and None wherever the step leaves it to ``advance`` (replay then decodes
the map as usual), so a refusal is the decoder's or ``advance``'s own
(tests/protocol/test_raw_advance.py). With ``REPLAY_RUN(state, records, i, limit) ->
(state, j, seq, chances)``: ``records[i:j]`` (LogContents.decoded: plain action records
as their maps, and where the game takes them, chance records and typed action records;
``chances`` of them chance records, the last at ``seq``, none over ``limit``) folded from
``state`` on a working state of the game's own, the State built once where the run stops: at the first
record it is not sure of (any other record, a map it does not take, a step it leaves to
``advance``), which replay's fold then applies as usual; it gives exactly the state
``advance`` gives record by record (tests/protocol/test_replay_run.py). Replay calls it
at each plain action record where a run may start; with ``REPLAY_RUN_TYPED = True``, at
any record but a hash record (a run that takes chance or typed action records, which a
log may start with or hold between two plays).
With ``packed_snapshot(state) -> bytes``: exactly
``packb(snapshot(state))``, cheaper (``state_hash`` digests it). With ``packed_state(state)
-> bytes``: a compact form of the whole state (every field, so that two states differ in it
wherever they differ), which the hash records of a log of format 3 or later digest in place
of the snapshot (``log_hash``; docs/LOG-FORMAT.md, 3).

Rules versions: a log's header names the rules version it was written under, and replay
passes it to ``new_table`` as ``TableConfig.rules`` (None, for a new table: the current
``RULES_VERSION``). An engine whose rules changed in a way that alters how an old log
plays out keeps the old behaviour for the old version, so old logs replay as they were
played; ``rules_version`` refuses a version the engine does not know.

``Engine`` below states the same as a typing.Protocol; mypy checks every game module
against it (protocol/games/__init__.py).

Events are plain maps in public terms (``{"event": "card_drawn", "seat": 2}``); what
only one seat may know appears in that seat's view, never in an event.
"""

from __future__ import annotations

import hashlib
from types import ModuleType
from typing import Any, Protocol

import attrs

from .codec import Registry, packb, to_data
from .errors import IllegalAction


@attrs.frozen
class TableConfig:
    game: str
    seats: int
    settings: dict = attrs.field(factory=dict)
    rules: int | None = None     # rules version to play by (a log's header.rules); None: the current one


@attrs.frozen
class ChanceRequest:
    """The engine needs a random permutation of range(size) for ``purpose``."""
    purpose: str
    size: int


@attrs.frozen
class ChanceOutcome:
    """The server's answer to a ChanceRequest, logged like any action."""
    purpose: str
    permutation: tuple[int, ...]


@attrs.frozen
class Outcome:
    over: bool
    scores: tuple[int, ...]
    winners: tuple[int, ...] = ()


@attrs.frozen
class Timeout:
    """If no action is accepted for ``seconds``, apply ``action`` as ``seat``."""
    seconds: float
    seat: int | None
    action: Any


class Engine(Protocol):
    """One game's rules: a module with these names (the module's doc lists what each
    does). ``state`` is the game's own immutable State; ``action`` one of its ACTIONS."""

    NAME: str
    TITLE: str
    MIN_PLAYERS: int
    MAX_PLAYERS: int
    RULES_VERSION: int
    ACTIONS: Registry

    def default_settings(self) -> dict: ...
    def new_table(self, config: TableConfig) -> Any: ...
    def pending_chance(self, state: Any) -> ChanceRequest | None: ...
    def apply(self, state: Any, seat: int | None, action: Any) -> tuple[Any, list]: ...
    def view(self, state: Any, seat: int | None) -> dict: ...
    def legal_actions(self, state: Any, seat: int) -> list: ...
    def outcome(self, state: Any) -> Outcome: ...
    def auto_action(self, state: Any) -> Any: ...
    def timeout_action(self, state: Any) -> Timeout | None: ...
    def snapshot(self, state: Any) -> dict: ...
    def to_move(self, state: Any) -> tuple[int, ...]: ...


def check_permutation(outcome: ChanceOutcome, request: ChanceRequest | None) -> None:
    if request is None:
        raise IllegalAction("no_chance_pending", "the table is not waiting for a shuffle")
    if outcome.purpose != request.purpose:
        raise IllegalAction("wrong_chance", f"expected a chance outcome for {request.purpose!r}")
    p = outcome.permutation
    # every one of 0..size-1, as many items as that (so each once): the set of the items
    # equals the range's, as ``sorted(p) == list(range(size))`` would say, in 2/3 the time
    n = request.size
    if len(p) != n or set(p) != (_RANGES.get(n) or _range_set(n)):
        raise IllegalAction("bad_permutation", f"expected a permutation of {request.size} items")


#: size -> frozenset(range(size)), for the sizes of permutations games ask for (a deck's
#: at most: bounded in count and size)
_RANGES: dict[int, frozenset] = {}


def _range_set(n: int) -> frozenset:
    r = frozenset(range(n))
    if len(_RANGES) < 256 and n <= 4096:
        _RANGES[n] = r
    return r


def rules_version(config: TableConfig, current: int) -> int:
    """The rules version a table plays by: ``config.rules``, or ``current`` (the engine's
    RULES_VERSION) when None; 1..current, else IllegalAction "bad_settings"."""
    v = config.rules
    if v is None:
        return current
    if type(v) is not int or not 1 <= v <= current:
        raise IllegalAction("bad_settings", f"{config.game} plays rules versions 1 to {current}, not {v!r}: "
                                            "the log comes from a newer wildtable, or is damaged.")
    return v


def merge_settings(defaults: dict, given: dict, checks: dict) -> dict:
    """Settings = defaults updated by ``given``; each value checked by ``checks[name]``
    (a function returning an error sentence or None)."""
    out = dict(defaults)
    for k, v in given.items():
        if k not in defaults:
            raise IllegalAction("bad_settings", f"unknown setting {k!r}; known: {', '.join(sorted(defaults))}")
        if type(v) is not type(defaults[k]) and not (type(defaults[k]) is float and type(v) is int):
            raise IllegalAction("bad_settings", f"setting {k!r} must be {type(defaults[k]).__name__}")
        problem = checks.get(k, lambda _v: None)(v)
        if problem:
            raise IllegalAction("bad_settings", f"setting {k!r}: {problem}")
        out[k] = v
    return out


def state_hash(game: ModuleType, state: Any) -> bytes:
    """A 16-byte digest of the all-seeing state, for the log's hash records: of
    ``packb(snapshot(state))``, which a game's ``packed_snapshot`` gives at less cost."""
    packed = getattr(game, "packed_snapshot", None)
    if packed is not None:
        return hashlib.blake2b(packed(state), digest_size=16).digest()
    snap = game.snapshot(state)
    try:
        data = packb(snap)          # snapshots are plain data: tuples pack as arrays
    except TypeError:
        data = packb(to_data(snap))
    return hashlib.blake2b(data, digest_size=16).digest()


#: the first log format whose hash records digest a game's ``packed_state`` (docs/LOG-FORMAT.md, 3)
COMPACT_HASH_FORMAT = 3


def hash_form(game: ModuleType, log_format: int) -> str:
    """What the hash records of a log of ``log_format`` digest for ``game``: "packed_state"
    (format 3 or later, a game with a compact form) or "snapshot" (every other case)."""
    if log_format >= COMPACT_HASH_FORMAT and getattr(game, "packed_state", None) is not None:
        return "packed_state"
    return "snapshot"


def log_hash(game: ModuleType, state: Any, log_format: int) -> bytes:
    """The hash a log of format ``log_format`` holds for ``state`` (its hash records,
    written and checked): from format 3, the 16-byte BLAKE2b digest of the game's
    ``packed_state`` where it has one; else ``state_hash``, as in formats 1 and 2 (so an
    old log's hashes check as they were written)."""
    if hash_form(game, log_format) == "packed_state":
        return hashlib.blake2b(game.packed_state(state), digest_size=16).digest()
    return state_hash(game, state)


_LOADED: list = []       # [the games' REGISTRY], once imported


def games() -> dict[str, ModuleType]:
    # imported on first use (the games import this module) and kept: replay asks once a
    # log, and an import statement costs 2 us a call
    if not _LOADED:
        from .games import REGISTRY
        _LOADED.append(REGISTRY)
    return _LOADED[0]


def game(name: str) -> ModuleType:
    g = games().get(name)
    if g is None:
        raise IllegalAction("unknown_game", f"unknown game {name!r}; choose one of: {', '.join(sorted(games()))}")
    return g
