"""The good prefix of a damaged log: every record before the damage, replayed, and the
damage named (docs/LOG-FORMAT.md, 5 "Reading up to the damage").

One flipped byte must not hide the records before it: the reader stops at the damage
(``logfmt.read_prefix``), and a record that no longer replays (``diverged``), a hash
that differs or a seat record for a seat the table lacks stops the fold at that record.
What comes out is the prefix as if the log ended there: its records, the state after
them, its length in bytes (a new log of those bytes verifies: ``replay --salvage``).
"""

from __future__ import annotations

from typing import Any

import attrs

from .engine import log_hash
from .errors import LogError
from .logfmt import ActionAccepted, ChanceRecorded, LogContents, SeatClaimed, StateHashed, read_prefix
from .replay import ReplayResult, fold, initial_state, step


@attrs.frozen
class Prefix:
    """A log read and replayed up to its damage (or its end, or ``upto``)."""
    contents: LogContents       # the header and the records of the good prefix only
    result: ReplayResult        # the state after the prefix (after ``upto`` when given)
    damage: LogError | None     # what stopped it; None: the log (up to ``upto``) is whole
    later: LogError | None      # damage after ``upto``, which the prefix does not reach
    size: int                   # bytes in the whole log as read


def damage_after(damage: LogError | None, upto: int | None) -> bool:
    """Whether ``damage`` lies after seq ``upto``: the records up to it are all good."""
    return damage is not None and upto is not None and damage.seq is not None and upto < damage.seq


def replay_prefix(data: bytes, *, upto: int | None = None) -> Prefix:
    """Read and replay ``data`` up to its first damage. Raises LogError only when even the
    header cannot be read or start a table (nothing to show)."""
    contents = read_prefix(data)
    g, state = initial_state(contents.header)
    damage = contents.damage
    try:
        result = fold(g, state, contents.decoded, verify_hashes=True, upto=upto, log_format=contents.header.format)
        bad_seat = _bad_seat(contents)
        if bad_seat is not None:
            raise bad_seat
    except LogError:
        # the fast fold says what, not at which record: walk again, record by record
        index, err, result = _walk(g, state, contents)
        cut = contents.offsets[index]
        contents = attrs.evolve(contents, decoded=contents.decoded[:index], offsets=contents.offsets[:index],
                                good_length=cut, torn=None, damage=err)
        damage = err
        if upto is not None and not damage_after(err, upto):
            result = fold(g, state, contents.decoded, verify_hashes=True, upto=upto,
                          log_format=contents.header.format)
    later = None
    if damage_after(damage, upto):
        later, damage = damage, None
    return Prefix(contents, result, damage, later, len(data))


def _bad_seat(contents: LogContents) -> LogError | None:
    seats = contents.header.seats
    for off, r in zip(contents.offsets, contents.decoded):
        if type(r) is SeatClaimed and not 0 <= r.seat < seats:
            return LogError("bad_record", f"a seat record for seat {r.seat}, but the table has seats "
                            f"0..{seats - 1}", offset=off)
    return None


def _walk(g: Any, state: Any, contents: LogContents) -> tuple[int, LogError, ReplayResult]:
    """The index of the first record that does not replay, why, and the result before it
    (the slow path of replay_prefix: only a damaged log takes it)."""
    seq = actions = chances = checked = 0
    seats = contents.header.seats
    for i, (off, r) in enumerate(zip(contents.offsets, contents.records)):
        t = type(r)
        try:
            if t is ActionAccepted or t is ChanceRecorded:
                state = step(g, state, r)
            elif t is StateHashed:
                if r.seq != seq:
                    raise LogError("misplaced_hash", f"a hash record for seq {r.seq} follows seq {seq}; "
                                   "hash records follow the record they hash", seq=r.seq)
                if log_hash(g, state, contents.header.format) != r.hash:
                    raise LogError("hash_mismatch", "replayed state differs from the logged hash", seq=r.seq)
            elif t is SeatClaimed and not 0 <= r.seat < seats:
                raise LogError("bad_record", f"a seat record for seat {r.seat}, but the table has seats "
                               f"0..{seats - 1}", seq=seq + 1)
        except LogError as e:
            e.offset = off
            e.args = (f"{e.message} (seq {e.seq}, byte offset {off})",)
            return i, e, ReplayResult(g, state, seq, actions, chances, checked)
        if t is ActionAccepted:
            seq, actions = r.seq, actions + 1
        elif t is ChanceRecorded:
            seq, chances = r.seq, chances + 1
        elif t is StateHashed:
            checked += 1
    raise AssertionError("replay_prefix: the fold failed but every record replays")
