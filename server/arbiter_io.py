"""The values that cross the table arbiter's pure core (server/arbiter.py): requests in,
what it owes the connections out (docs/ARCHITECTURE.md, "The arbiter: pure core, thin
shell"). Typed, frozen values, never tuples tagged by strings (issue #23): the shell
(server/table.py) matches on their types, and a test reads them as they are."""

from __future__ import annotations

import itertools
from types import MappingProxyType
from typing import Any, Mapping

import attrs

from wildtable.protocol import messages as m

from . import fairorder


@attrs.frozen(eq=False)
class Link:
    """A connection as the core knows it: an opaque handle, one per connection (made by
    ``new_link``), equal to itself alone, so that it hashes as fast as the connection did
    (a dict key several times per update and seat). The shell (server/table.py) holds
    the connection it stands for. ``id`` names it in tests and logs; ``remote`` and
    ``name`` are facts for the log's lines (refusals over budget)."""
    id: int
    remote: str = "?"
    name: str | None = None


_ids = itertools.count(1)


def new_link(remote: str = "?", name: str | None = None) -> Link:
    return Link(next(_ids), remote, name)


@attrs.frozen
class Whereabouts:
    """What the shell knows of a connection that asks for a seat or to watch, when the core
    handles that request: whether it is gone (``closed``: seating it would leave a ghost
    shown as connected), and the id of another table it is at (``elsewhere``), if any."""
    closed: bool = False
    elsewhere: str | None = None


NOWHERE = Whereabouts()


def _read_only(where: Mapping[Link, Whereabouts]) -> Mapping[Link, Whereabouts]:
    """A read-only view of ``where`` (the shell makes it for one call and keeps none)."""
    return MappingProxyType(where) if isinstance(where, dict) else where


@attrs.frozen
class Facts:
    """What the core reads of the world outside it at a call, read by the shell just before
    (nothing outside changes while the core decides): whether the table's log can be
    written (server/logwriter.py, store_pg.py: while it is paused or failed, timers stop and
    requests get server/diskfull.py's answers), each seat's connection's delay bound
    (``delays``, s: fair order's hold; 0 for an empty seat), and the whereabouts of the
    connections whose join, rejoin or spectate the call may handle (missing: NOWHERE)."""
    paused: bool = False
    failed: bool = False
    delays: tuple[float, ...] = ()
    where: Mapping[Link, Whereabouts] = attrs.field(factory=dict, converter=_read_only, hash=False)

    def of(self, link: Link) -> Whereabouts:
        return self.where.get(link, NOWHERE)


CLEAR = Facts()


# ------------------------------------------------------------------ requests, in arrival order
@attrs.frozen
class IntentReq:
    link: Link
    intent: m.Intent
    recv: float                  # wall clock, logged as information only
    at: float                    # trio's clock when read: ordered against the table's timer
    reach: fairorder.Reach = fairorder.Reach()   # the connection's delay bounds when it was read


@attrs.frozen
class JoinReq:
    link: Link
    seat: int | None
    name: str


@attrs.frozen
class RejoinReq:
    link: Link
    seat: int
    token: str


@attrs.frozen
class SpectateReq:
    link: Link


@attrs.frozen
class ReplyReq:
    """An answer the connection made itself (an intent dropped by the rate limit, or sent
    with no seat), sent through the table the connection last wrote to so that it reaches
    the client after the answers to that connection's earlier intents."""
    link: Link
    message: Any


@attrs.frozen
class LeaveReq:
    link: Link
    notify: bool = True          # False when the connection is already gone


@attrs.frozen
class WakeReq:
    """No request: the arbiter looks at its deadline again (a pause of the disk ended)."""
    link: Link | None = None


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
    link: Link
    message: Any


@attrs.frozen
class Update:
    """An update to every seat (``seats``: the link of each seat, or None) and spectator
    at the table when it happened. ``events`` and ``state`` are the engine's values."""
    seq: int
    events: Any
    state: Any
    seats: tuple[Link | None, ...]
    spectators: tuple[Link, ...]


@attrs.frozen
class PlayersChanged:
    """The seats' names and connections (`players`), as they were when the core decided
    (not when the group is delivered: which seats a later request of the same instant had
    taken by then was Trio's order, docs/ARCHITECTURE.md "Determinism"), to ``audience``."""
    audience: tuple[Link, ...]
    players: tuple[tuple[str | None, bool], ...]   # each seat's (name shown, connected)


@attrs.frozen
class GameOver:
    """`game_over` with the result, to each of ``audience``."""
    audience: tuple[Link, ...]


@attrs.frozen
class Close:
    """Close one connection, after what it was sent before in the group."""
    link: Link
    code: int
    reason: str


Output = SendTo | Update | PlayersChanged | GameOver | Close


# ------------------------------------------------------------------ moves, done at once
# Where a connection is (server/connection.py ``table``/``seat``) is done by the shell as
# soon as the core returns, before the group's records are durable: another table's
# arbiter, running while this one waits on the disk, must see it at a table already (a
# join here and one there, sent at once, seat it once), as it did when the core moved
# the connection's pointer itself.
@attrs.frozen
class Attach:
    """The connection is at this table now: in ``seat``, or watching (None)."""
    link: Link
    seat: int | None


@attrs.frozen
class Detach:
    """The connection is no longer at this table."""
    link: Link


Move = Attach | Detach


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
    they are durable, the moves of connections the shell makes at once (``moves``), whether
    the game ended in it, and what the server's counters (server/metrics.py) add."""
    records: list[bytes] = attrs.Factory(list)
    out: list[Output] = attrs.Factory(list)
    moves: list[Move] = attrs.Factory(list)
    lazy: int = 0
    ended: bool = False
    refused: list[str] = attrs.Factory(list)     # the code of each intent refused (the server's counters)
    accepted: int = 0                            # players' intents accepted
