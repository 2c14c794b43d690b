"""Test-only bugs the simulator must find (tests/sim/test_planted_bugs.py): each is a
small, explicit patch of the real server code, undone when the context ends.

- ``ack_before_commit``: the log writer's commit returns before the record is durable
  (written later, synced only at close), so the table acknowledges what a crash loses.
- ``spectator_leak``: Run Wild shows a spectator seat 0's hand.
- ``fair_unbounded``: fair order credits a connection whatever its pings say, bounded by
  neither the kernel's round trip, causality nor the table's fair_ms (server/fairorder.py;
  a client that answers pings late wins every race).
- ``rejoin_ignored``: a table never answers a rejoin (a player cut off is never seated again).
- ``lease_unchecked``: a missing lease check: the store's group commit writes a node's
  records without checking that the node still holds the table's lease under the epoch
  it writes with (store.py, SimDb.write_group: the twin of server/store_pg.py's
  _GROUP_STATEMENT without its ``owner = me AND epoch = mine AND lease_until > now``),
  so a node paused past its lease writes over its adopter's records.
- ``ack_while_full``: the log writer acknowledges a group the disk had no room for as if
  it were written (server/logwriter.py, LogWriter._write: the DiskFull dropped instead of
  waited out), so the table tells its players of records the log does not hold.
- ``fenced_acked``: PgWriter acknowledges a commit the fence refused (its LeaseLost
  dropped), so the table tells its players of a record the store does not hold.
- ``catch_up_told_first``: a node that finds itself behind (a loop-lag watch of its own
  woke more than LATE after it was due: the process was stopped, or a long GC pause)
  catches up for CATCH_UP seconds: its tables tell their players what they decided
  before it is written (server/table.py, Table._commit). A node paused past its lease
  thus tells its players of moves on a table it no longer owns, which the store then
  fences out. Only a true pause (pause.py) makes a node's timer late: under its links
  and store calls held (the old pause) its timers ran on time.
"""

from __future__ import annotations

import contextlib
import weakref
from typing import Any, Callable

import trio

from wildtable.protocol.games import run_wild
from wildtable.server import arbiter, fairorder, logwriter, store_pg, store_tables, table

from .store import SimDb

PLANTS = ("ack_before_commit", "spectator_leak", "fair_unbounded", "rejoin_ignored", "lease_unchecked",
          "fenced_acked", "ack_while_full", "catch_up_told_first")
LATE = 1.0            # seconds late: catch_up_told_first's idea of a node fallen behind
CATCH_UP = 5.0        # seconds it then catches up for
LAG_EVERY = 0.5       # seconds between the looks of its loop-lag watch


async def _commit_without_waiting(self, log, data):
    await self._send.send(logwriter._Commit(log, data, None))


def _leaky_private_view(state, seat, _real=run_wild.private_view):
    return _real(state, 0 if seat is None else seat)


def _unbounded_credit(reach, cap, arrival, seen_at):
    """The credit as the old rule gave it, with no bound: whatever the pings say (a client
    that answers them late wins every race). Neither the kernel's round trip, nor
    causality, nor the table's fair_ms bounds it."""
    late = reach.ping if reach.ping is not None else 0.0
    return fairorder.Credit(late, late, fairorder.Limit.PING)


async def _write_acking_full(self, group, sync, now):
    try:
        await self._write_once(group, sync, now)
    except logwriter.DiskFull:
        pass
    return True


def _ignore_rejoin(self, req, g):
    pass


def _settle_acking_fenced(self, group, outcome, _real=store_pg.PgWriter._settle):
    _real(self, group, outcome)
    for c in group:
        c.error = None


_BEHIND: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()     # a node's clock -> catching up until


async def _lag_watch(clock) -> None:
    while True:
        due = trio.current_time() + LAG_EVERY
        await clock.sleep_until(due)
        if trio.current_time() - due > LATE:
            _BEHIND[clock] = trio.current_time() + CATCH_UP


async def _serving_with_lag_watch(self, host, port, nursery, _real=store_tables.StoreTables.serving):
    nursery.start_soon(_lag_watch, self.server.world.clock)
    await _real(self, host, port, nursery)


async def _commit_catching_up(self, g, _real=table.Table._commit):
    now = trio.current_time()
    if g.records and g.out and _BEHIND.get(self.clock, 0.0) > now:
        self._sender.send(g.out, now)     # told at once, written behind
        g.out = []
    await _real(self, g)


@contextlib.contextmanager
def planted(*names: str):
    unknown = set(names) - set(PLANTS)
    if unknown:
        raise ValueError(f"no such planted bug: {', '.join(sorted(unknown))}; there are {', '.join(PLANTS)}")
    patches: list[tuple[Any, str, Callable[..., Any] | bool]] = []
    if "ack_before_commit" in names:
        patches.append((logwriter.LogWriter, "commit", _commit_without_waiting))
    if "spectator_leak" in names:
        patches.append((run_wild, "private_view", _leaky_private_view))
    if "fair_unbounded" in names:
        patches.append((fairorder, "credit", _unbounded_credit))
    if "rejoin_ignored" in names:
        patches.append((arbiter.Arbiter, "_handle_rejoin", _ignore_rejoin))
    if "lease_unchecked" in names:
        patches.append((SimDb, "fence", False))
    if "fenced_acked" in names:
        patches.append((store_pg.PgWriter, "_settle", _settle_acking_fenced))
    if "ack_while_full" in names:
        patches.append((logwriter.LogWriter, "_write", _write_acking_full))
    if "catch_up_told_first" in names:
        patches.append((store_tables.StoreTables, "serving", _serving_with_lag_watch))
        patches.append((table.Table, "_commit", _commit_catching_up))
    saved = [(obj, attr, getattr(obj, attr)) for obj, attr, _ in patches]
    try:
        for obj, attr, new in patches:
            setattr(obj, attr, new)
        yield
    finally:
        for obj, attr, old in saved:
            setattr(obj, attr, old)
