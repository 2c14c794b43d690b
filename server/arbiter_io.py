"""The values that cross the table arbiter's pure core (server/arbiter.py): requests in,
what it owes the connections out (docs/ARCHITECTURE.md, "The arbiter: pure core, thin
shell"). Typed, frozen values, never tuples tagged by strings (issue #23): the shell
(server/table.py) matches on their types, and a test reads them as they are."""

from __future__ import annotations

from typing import Any, Protocol

import attrs

from wildtable.protocol import messages as m

from . import fairorder


class Peer(Protocol):
    """What the core reads of, and does to, a connection (server/connection.py): where it
    sits, whether it is gone, its fair-order bounds. ``attach``/``detach`` only move the
    connection's own pointer to its table and seat: the core reads it back at once (a
    join then a spectate in one group), so it cannot wait for the group's delivery."""

    table: Any
    seat: int | None
    closed: bool
    delay: float
    written: fairorder.WriteTimes

    def attach(self, table: Any, seat: int | None) -> None: ...
    def detach(self, table: Any) -> None: ...


class Storage(Protocol):
    """Whether the table's log can be written (server/logwriter.py, store_pg.py): while it
    is paused or failed, timers stop and requests get server/diskfull.py's answers."""

    @property
    def paused(self) -> bool: ...
    @property
    def failed(self) -> BaseException | None: ...


# ------------------------------------------------------------------ requests, in arrival order
@attrs.frozen
class IntentReq:
    conn: Peer
    intent: m.Intent
    recv: float                  # wall clock, logged as information only
    at: float                    # trio's clock when read: ordered against the table's timer
    reach: fairorder.Reach = fairorder.Reach()   # the connection's delay bounds when it was read


@attrs.frozen
class JoinReq:
    conn: Peer
    seat: int | None
    name: str


@attrs.frozen
class RejoinReq:
    conn: Peer
    seat: int
    token: str


@attrs.frozen
class SpectateReq:
    conn: Peer


@attrs.frozen
class ReplyReq:
    """An answer the connection made itself (an intent dropped by the rate limit, or sent
    with no seat), sent through the table the connection last wrote to so that it reaches
    the client after the answers to that connection's earlier intents."""
    conn: Peer
    message: Any


@attrs.frozen
class LeaveReq:
    conn: Peer
    notify: bool = True          # False when the connection is already gone


@attrs.frozen
class WakeReq:
    """No request: the arbiter looks at its deadline again (a pause of the disk ended)."""
    conn: Any = None


Request = IntentReq | JoinReq | RejoinReq | SpectateReq | ReplyReq | LeaveReq | WakeReq


# ------------------------------------------------------------------ a deadline's reason
# besides the engine's Timeout (protocol/engine.py) or None (no deadline)
EVICT = object()      # a finished table's hold ended: time to forget it
EXPIRE = object()     # a waiting table nobody is at: time to forget it


def is_timer(timeout: Any) -> bool:
    """A deadline's reason is the engine's timeout (not none, not the table's end)."""
    return timeout is not None and timeout is not EVICT and timeout is not EXPIRE


# ------------------------------------------------------------------ outputs, delivered in order
# Each is delivered once the group that made it is durable. A broadcast goes to those at
# the table when it happened, not when it is delivered: one who joins, rejoins or
# spectates later in the same group has it in its snapshot already, and must get
# nothing of the table before that snapshot.
@attrs.frozen
class SendTo:
    """One message to one connection."""
    conn: Any
    message: Any


@attrs.frozen
class Update:
    """An update to every seat (``seats``: the connection of each seat, or None) and
    spectator at the table when it happened."""
    seq: int
    events: Any
    state: Any
    seats: tuple
    spectators: tuple


@attrs.frozen
class PlayersChanged:
    """The seats' names and connections (`players`), as they are when it is delivered."""
    audience: tuple


@attrs.frozen
class GameOver:
    """`game_over` with the result, to each of ``audience``."""
    audience: tuple


@attrs.frozen
class Close:
    """Close one connection, after what it was sent before in the group."""
    conn: Any
    code: int
    reason: str


Output = SendTo | Update | PlayersChanged | GameOver | Close


@attrs.frozen
class Timing:
    """Fair order's figures of an intent, logged with it (docs/LOG-FORMAT.md, 2a): the
    smallest of its delay bounds, its send time (Unix time), its hold."""
    delay: float
    sent: float
    hold: float


@attrs.define
class Group:
    """What one group of requests made, as the core decided it: the encoded log records
    (``lazy`` of them need no fsync of their own: refusals), the outputs to deliver once
    they are durable, and whether the game ended in it."""
    records: list[bytes] = attrs.Factory(list)
    out: list[Output] = attrs.Factory(list)
    lazy: int = 0
    ended: bool = False
