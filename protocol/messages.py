"""Wire messages: one frozen attrs class per message type, each under a stable tag.

Client -> server messages are decoded strictly (see codec.py); server -> client
messages are built by the server and decoded by the client with the same registry.
Views, events and settings are free-form maps (their shape is per game, documented in
docs/PROTOCOL.md and docs/RULES.md).
"""

from __future__ import annotations

from typing import Any

import attrs
from attrs import frozen as _frozen  # frozen + slots (imported, not assigned: mypy's attrs plugin sees it)

from .codec import MAX_SERVER_FRAME, Registry, packb

# 2: an update may be a patch against the view its connection last received (docs/PROTOCOL.md, "update")
PROTOCOL_VERSION = 2

MESSAGES = Registry("type", "message type")
msg = MESSAGES.register



def _f(**meta):
    return attrs.field(metadata=meta)


def _d(default, **meta):
    return attrs.field(default=default, metadata=meta)


def version_mismatch_text(version: int) -> str:
    """The sentence of a ``version_mismatch`` error: both versions, and which side is
    older (so a newer client is not told to upgrade itself)."""
    ours = PROTOCOL_VERSION
    if version > ours:
        return (f"this server speaks protocol version {ours}, older than the client's version {version}: "
                f"use a client that speaks version {ours}, or upgrade the server")
    return (f"this server speaks protocol version {ours}, newer than the client's version {version}: "
            "upgrade the client")


# ---------------------------------------------------------------- client -> server

@msg("hello")
@_frozen
class Hello:
    # Any integer msgpack can carry: every version other than ours gets version_mismatch
    # (naming both), never bad_field, so that a client of any version learns which is older.
    version: int = _f(min=-(2**63), max=2**64 - 1)
    name: str = _f(max_len=40)
    client: str = _d("", max_len=80)


@msg("list_tables")
@_frozen
class ListTables:
    pass


@msg("create_table")
@_frozen
class CreateTable:
    game: str = _f(max_len=40)
    seats: int = _f(min=1, max=16)
    settings: dict = attrs.field(factory=dict)
    name: str = _d("", max_len=60, printable=True)     # shown to everyone: no control characters
    # "create it on this node": sent after a redirect of create_table, so a cluster's node
    # honours it if it has room instead of redirecting again. Left out when False, so an
    # older server (which refuses a field it does not know) sees the create_table of before.
    here: bool = False


@msg("join")
@_frozen
class Join:
    table: str = _f(max_len=40)
    seat: int | None = _d(None, min=0, max=15)


@msg("rejoin")
@_frozen
class Rejoin:
    table: str = _f(max_len=40)
    seat: int = _f(min=0, max=15)
    token: str = _f(max_len=100)


@msg("spectate")
@_frozen
class Spectate:
    table: str = _f(max_len=40)


@msg("leave")
@_frozen
class Leave:
    pass


@msg("seat_bots")
@_frozen
class SeatBots:
    """Seat bots at the table the sender sits at; the server runs them (docs/PROTOCOL.md)."""
    table: str = _f(max_len=40)
    count: int = _f(min=1, max=15)
    level: str | None = _d(None, max_len=20)
    delay_ms: int | None = _d(None, min=0, max=60_000)     # a fixed reaction time instead of the level's


@msg("intent")
@_frozen
class Intent:
    id: int = _f(min=0, max=2**53)
    action: dict = _f()


@msg("hint")
@_frozen
class Hint:
    """What the expert would play now for the sender's own seat, from that seat's view
    alone (docs/PROTOCOL.md "hint"; answered with ``hint_given`` or an ``error``)."""


# ---------------------------------------------------------------- server -> client

@msg("welcome")
@_frozen
class Welcome:
    version: int
    server: str
    max_frame: int
    heartbeat: float
    # the public URLs of a cluster's live nodes, for reconnecting; empty (and left out of
    # the frame, so an older client reads the welcome of before) for a single node
    nodes: tuple[str, ...] = _d((), max_items=1024)


@msg("error")
@_frozen
class Error:
    code: str
    message: str
    path: str | None = None
    ref: str | None = None      # the message type that caused it, when known


@msg("table_list")
@_frozen
class TableList:
    tables: tuple[dict, ...] = _d((), max_items=100_000)
    omitted: int = _d(0, min=0, max=2**31)      # tables left out to keep the answer within a frame


@msg("table_created")
@_frozen
class TableCreated:
    table: str
    game: str
    seats: int
    settings: dict = attrs.field(factory=dict)


@msg("joined")
@_frozen
class Joined:
    table: str
    game: str
    seat: int
    token: str
    seq: int
    view: dict
    players: tuple[dict, ...] = _d((), max_items=64)


@msg("spectating")
@_frozen
class Spectating:
    table: str
    game: str
    seq: int
    view: dict
    players: tuple[dict, ...] = _d((), max_items=64)


@msg("bots_seated")
@_frozen
class BotsSeated:
    table: str
    seats: tuple[int, ...] = _d((), max_items=64)
    names: tuple[str, ...] = _d((), max_items=64)
    level: str = ""


@msg("left")
@_frozen
class Left:
    table: str


@msg("players")
@_frozen
class Players:
    """Who sits where and who is connected (lobby facts, not game state)."""
    table: str
    players: tuple[dict, ...] = _d((), max_items=64)


@msg("accepted")
@_frozen
class Accepted:
    intent: int
    seq: int


@msg("rejected")
@_frozen
class Rejected:
    intent: int
    code: str
    reason: str


@msg("update")
@_frozen
class Update:
    """The table moved to ``seq``. Either ``view`` is the whole view, or (``base`` set) the
    update is a patch against the view of seq ``base``, which the connection holds: the
    top-level keys in ``changed`` take these values, those in ``removed`` go, and each
    list in ``items`` is cut to its length and has the items named set (docs/PROTOCOL.md,
    "update"; protocol/views.py applies it)."""
    seq: int
    events: tuple[dict, ...] = _d((), max_items=100_000)
    view: dict | None = None
    base: int | None = _d(None, min=0, max=2**63)
    changed: dict | None = None
    removed: tuple[str, ...] = _d((), max_items=100_000)
    items: dict | None = None       # list keys patched item by item: [length, index, item, ...]


@msg("game_over")
@_frozen
class GameOver:
    table: str
    seq: int
    scores: tuple[int, ...] = _d((), max_items=64)
    winners: tuple[int, ...] = _d((), max_items=64)
    log: str = ""


@msg("redirect")
@_frozen
class Redirect:
    """Go to the node at ``url`` and send the same message there again (hello first):
    ``ref`` is the type of the message redirected, ``table`` the table it named."""
    url: str
    ref: str
    table: str | None = None
    reason: str = ""


@msg("hint_given")
@_frozen
class HintGiven:
    """The answer to ``hint``: ``text`` in a sentence; ``moves`` the best few, best first,
    each ``{action, label, value}`` (value nil where the game has no expert); ``seq`` the
    table's seq the view it read was at; ``by`` "expert" or "hard"."""
    seq: int
    text: str
    by: str = "expert"
    moves: tuple[dict, ...] = _d((), max_items=3)


@msg("goodbye")
@_frozen
class Goodbye:
    reason: str


@msg("notice")
@_frozen
class Notice:
    """Something about a table its people should know that is no answer to anything:
    ``code`` ``storage_full`` (play is paused: the server's disk is full) or
    ``storage_resumed`` (play goes on); ``message`` says it in a sentence."""
    table: str
    code: str
    message: str


def _map_header(n: int) -> bytes:
    if n < 16:
        return bytes((0x80 | n,))
    if n < 1 << 16:
        return b"\xde" + n.to_bytes(2, "big")
    return b"\xdf" + n.to_bytes(4, "big")


def _map_pairs(d: dict) -> bytes:
    """The key/value bytes of a msgpack map, without its header."""
    return packb(d)[len(_map_header(len(d))):]


class SharedUpdate:
    """The frames of one update for many seats whose views share a public part: the
    message head, the events and the public part are encoded once; each seat adds only
    its private keys. A frame decodes exactly as ``encode(Update(seq, events, {**public,
    **private}))`` does (a msgpack map is its header followed by its key/value pairs)."""

    __slots__ = ("_prefix", "_public", "_n_public")

    def __init__(self, seq: int, events, public: dict):
        head = {"type": Update.TAG, "seq": seq}  # type: ignore[attr-defined]  # TAG: set by @msg
        if events:
            head["events"] = list(events)
        self._prefix = _map_header(len(head) + 1) + _map_pairs(head) + packb("view")
        self._public = _map_pairs(public)
        self._n_public = len(public)

    def frame(self, private: dict) -> bytes:
        return (self._prefix + _map_header(self._n_public + len(private)) + self._public
                + _map_pairs(private))

    def frame_encoded(self, part: "PrivatePart") -> bytes:
        """``frame(private)`` from the private part encoded already (``PrivatePart.of``):
        a seat whose private keys did not change is not encoded again."""
        return self._prefix + _map_header(self._n_public + part.n) + self._public + part.pairs


class PatchUpdate:
    """The patch frames of one update for many seats: the head (seq, base, events) and the
    changed public keys are encoded once; each seat adds its changed private keys (none
    for most seats). A frame decodes as ``Update(seq, events, None, base, {**public,
    **private}, removed)``; the view's public and private keys are disjoint."""

    __slots__ = ("_head", "_n_head", "_public", "_n_public", "_removed", "_same")

    def __init__(self, seq: int, base: int, events, public: dict, removed: list, items: dict | None = None):
        head: dict = {"type": Update.TAG, "seq": seq, "base": base}  # type: ignore[attr-defined]  # TAG: set by @msg
        if events:
            head["events"] = list(events)
        if items:
            head["items"] = items
        self._head = _map_pairs(head) + _CHANGED
        self._n_head = len(head) + 1
        self._public = _map_pairs(public)
        self._n_public = len(public)
        self._removed = removed
        self._same: bytes | None = None

    def frame(self, private: bytes = b"", n_private: int = 0, removed: list | tuple = ()) -> bytes:
        """The frame of a seat whose changed private keys encode as ``private`` (map pairs)."""
        if not n_private and not removed:
            if self._same is None:
                self._same = self._build(b"", 0, ())
            return self._same
        return self._build(private, n_private, removed)

    def _build(self, private: bytes, n_private: int, removed) -> bytes:
        gone = self._removed + list(removed) if removed else self._removed
        head = _map_header(self._n_head + (1 if gone else 0)) + self._head
        out = head + _map_header(self._n_public + n_private) + self._public + private
        return out + _REMOVED + packb(gone) if gone else out


_CHANGED = packb("changed")
_REMOVED = packb("removed")


@attrs.frozen
class PrivatePart:
    """A seat's private view keys, encoded as msgpack map pairs (no header), and their count."""
    pairs: bytes
    n: int

    @classmethod
    def of(cls, private: dict) -> "PrivatePart":
        return cls(_map_pairs(private), len(private))


def encode(message: Any) -> bytes:
    return MESSAGES.encode(message)


def decode(data: bytes, *, max_size: int | None = None) -> Any:
    return MESSAGES.decode_bytes(data, max_size if max_size is not None else MAX_SERVER_FRAME)


CLIENT_MESSAGES = frozenset({"hello", "list_tables", "create_table", "join", "rejoin", "spectate", "leave", "intent",
                             "seat_bots", "hint"})
