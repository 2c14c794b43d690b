"""The action log: framing, record types and a reader that tells torn from corrupt.

A log is a sequence of records, each framed as

    [u32 little-endian payload length][u32 little-endian CRC-32 of payload][payload]

where the payload is one msgpack map tagged by ``t``. The first record is the header.
State-changing records (``chance``, ``action``) carry a gapless ``seq`` from 1. A
``hash`` record every HASH_EVERY state-changing records lets replay name the first seq
at which a rules change diverges. ``seat`` records say who claimed a seat (with the
hash of the seat token, never the token); ``rejected`` records are optional, for
debugging races. See docs/LOG-FORMAT.md.
"""

from __future__ import annotations

import functools
import struct
import zlib
from typing import Any, Iterator

import attrs

import msgpack

from .codec import INT_MAX, INT_MIN, MAX_STR, Registry, builder, packb, to_data, unpackb
from .errors import LogError, ProtocolError

FORMAT_VERSION = 3
#: formats this build reads: 1 is 2 without the order fields (``delay``, ``sent``, ``hold``
#: of action records; ``recv``, ``delay``, ``sent``, ``hold`` of rejected records); 3 is 2
#: with a game's compact state hash where it has one (``engine.log_hash``: the records are
#: 2's; docs/LOG-FORMAT.md, 3)
READABLE_FORMATS = (1, 2, 3)
HASH_EVERY = 256
MAX_RECORD = 16 * 1024 * 1024
_FRAME = struct.Struct("<II")
FRAME_HEADER = _FRAME.size

RECORDS = Registry("t", "record type")
rec = RECORDS.register


@rec("header")
@attrs.frozen
class Header:
    format: int
    game: str
    table: str
    seats: int
    settings: dict
    rules: int = 1
    created: str = ""


@rec("seat")
@attrs.frozen
class SeatClaimed:
    seat: int
    name: str
    token_hash: bytes = attrs.field(metadata={"max_len": 64})


@rec("chance")
@attrs.frozen
class ChanceRecorded:
    seq: int
    purpose: str
    permutation: tuple[int, ...] = attrs.field(metadata={"max_items": 100_000})


@rec("action")
@attrs.frozen
class ActionAccepted:
    seq: int
    seat: int | None
    action: dict
    intent: int | None = None
    by: str = "player"           # "player", "timer" or "table"
    recv: float | None = None    # server receive time: information only, replay ignores it
    # format 2, a Run Wild table ordering by send time (fair_ms > 0): what explains the
    # order, information only like recv: the connection's one-way delay estimate (s), the
    # send time the intent was ordered by (Unix time, s) and the hold it waited for (s)
    delay: float | None = None
    sent: float | None = None
    hold: float | None = None


@rec("rejected")
@attrs.frozen
class IntentRejected:
    after: int                   # the seq of the state it was checked against
    seat: int | None
    action: dict
    code: str
    reason: str
    intent: int | None = None
    recv: float | None = None    # format 2: as in ActionAccepted
    delay: float | None = None
    sent: float | None = None
    hold: float | None = None


#: fields a format 1 log does not have
_NEW_IN_2 = ("delay", "sent", "hold")


def _format2_fields(r: Any) -> str | None:
    """The first field of record ``r`` that a format 1 log cannot hold, if any."""
    t = type(r)
    if t is ActionAccepted or t is IntentRejected:
        for name in _NEW_IN_2 if t is ActionAccepted else ("recv",) + _NEW_IN_2:
            if getattr(r, name) is not None:
                return name
    return None


@rec("hash")
@attrs.frozen
class StateHashed:
    seq: int
    hash: bytes = attrs.field(metadata={"max_len": 64})


def frame(payload: bytes) -> bytes:
    return _FRAME.pack(len(payload), zlib.crc32(payload)) + payload


def encode_record(record: Any) -> bytes:
    return frame(packb(to_data(record)))


@attrs.frozen
class TornTail:
    offset: int          # where the cut starts (the file's good length)
    dropped: int         # bytes after it


@attrs.frozen
class LogContents:
    """A log as read. ``decoded`` holds every record after the header as the reader left
    it: an action record (its four keys ``t``, ``seq``, ``seat``, ``action``, and in a
    format 2 log the fields a server adds, checked like any record: nearly every record of
    a log) as its msgpack map, any other record typed. ``records`` types them all, built on first use: replay folds ``decoded`` and
    builds no ActionAccepted (docs/LOG-FORMAT.md, 5)."""
    header: Header
    decoded: tuple       # every record after the header: a plain action record's map, or the record
    good_length: int     # bytes up to the end of the last whole record
    torn: TornTail | None
    offsets: tuple       # byte offset of each record in ``decoded`` (and ``records``)
    #: read_prefix only: what stopped the reader before the end (the records before it
    #: are all here, ``good_length`` ends the last of them); None: the log read to its end
    damage: LogError | None = None
    #: whether ``decoded`` may hold a seat record (the reader says False where it read none:
    #: replay's check_seats then has nothing to look at)
    has_seat_records: bool = True

    @functools.cached_property
    def records(self) -> tuple:
        """Every record after the header, typed (an ActionAccepted for each action record)."""
        return typed_records(self.decoded)


def typed_records(decoded: Any) -> tuple:
    """``decoded`` (LogContents.decoded) with each plain action record's map as its
    ActionAccepted (the other fields at their defaults, as the strict path reads them)."""
    typed = _typed_action
    return tuple(typed(r) if type(r) is dict else r for r in decoded)


def _whole_record_after(view: memoryview, pos: int) -> int | None:
    """The offset of the first whole, CRC-correct, decodable record at or after ``pos``, if any.
    Only called on the rare path where a frame runs past the end of the data."""
    n = len(view)
    crc32 = zlib.crc32
    unpack_from = _FRAME.unpack_from
    for p in range(pos, n - FRAME_HEADER):
        length, crc = unpack_from(view, p)
        end = p + FRAME_HEADER + length
        if 0 < length and end <= n and crc32(view[p + FRAME_HEADER:end]) == crc:
            try:
                RECORDS.decode(unpackb(bytes(view[p + FRAME_HEADER:end]), max_size=MAX_RECORD))
            except ProtocolError:
                continue
            return p
    return None


def iter_frames(data: bytes | memoryview) -> Iterator[tuple[int, bytes]]:
    """Yield (offset, payload bytes) for each whole frame; stop silently at a torn tail."""
    for off, payload in _frames(data):
        yield off, bytes(payload)


def _frames(data: bytes | memoryview, off: int = 0) -> Iterator[tuple[int, memoryview]]:
    """Yield (offset, payload view) for each whole frame from byte ``off``; stop silently at
    a torn tail.

    A frame whose CRC fails raises LogError naming its offset: that is corruption,
    not a torn write (a torn write leaves a frame that runs past the end).
    """
    view = memoryview(data)
    n = len(view)
    crc32 = zlib.crc32
    unpack_from = _FRAME.unpack_from
    while off + FRAME_HEADER <= n:
        length, crc = unpack_from(view, off)
        start = off + FRAME_HEADER
        end = start + length
        if length > MAX_RECORD or end > n:
            _frame_check(view, off, length)
            return
        payload = view[start:end]
        if crc32(payload) != crc:
            raise LogError("bad_crc", "record fails its CRC check", offset=off)
        yield off, payload
        off = end


def _frame_check(view: memoryview, off: int, length: int) -> None:
    """A frame at ``off`` whose ``length`` is over the cap or runs past the end: LogError,
    unless it is a torn tail (nothing whole after it), where reading stops."""
    if length > MAX_RECORD:
        raise LogError("bad_frame", f"record length {length} exceeds the cap", offset=off)
    # A torn write leaves one partial frame and nothing after it. If whole records
    # follow, this length field is damaged: cutting here would drop good records.
    later = _whole_record_after(view, off + 1)
    if later is not None:
        raise LogError("bad_frame", f"record length {length} runs past the end of the log, "
                       f"but a whole record follows at byte offset {later}", offset=off)


_ACTION_KEYS = frozenset(("t", "seq", "seat", "action", "intent", "by", "recv", "delay", "sent", "hold"))


_unpackb_default = msgpack.unpackb


_new_action = builder(ActionAccepted)     # ActionAccepted(...) for the fast path, set directly
_NO_SEAT = object()                       # an action record without its ``seat`` key


def _server_fields(obj: dict) -> bool:
    """Whether action record map ``obj`` holds only the fields of an action record, the ones
    a server adds (``intent``, ``by``, ``recv``, ``delay``, ``sent``, ``hold``) each as
    _action_record takes it: such a map is kept as read (LogContents.decoded), as a plain
    one is, and typed only if asked for. Replay reads its seat and action alone: the rest
    is what the server knew of the intent (docs/LOG-FORMAT.md, 2a)."""
    if not obj.keys() <= _ACTION_KEYS:
        return False
    intent, by, recv = obj.get("intent"), obj.get("by", "player"), obj.get("recv")
    delay, sent, hold = obj.get("delay"), obj.get("sent"), obj.get("hold")
    return ((intent is None or (intent.__class__ is int and INT_MIN <= intent <= INT_MAX))
            and by.__class__ is str and len(by) <= MAX_STR
            and (recv is None or recv.__class__ is float)
            and (delay is None or delay.__class__ is float)
            and (sent is None or sent.__class__ is float)
            and (hold is None or hold.__class__ is float))


def _action_record(obj: Any) -> ActionAccepted | None:
    """The ActionAccepted of a well-formed action record, with the checks the strict path
    makes; None for anything else, which that path then decodes or refuses with its path.
    Action records are nearly all of a log; their ``action`` map is decoded strictly by
    the game at replay."""
    if type(obj) is not dict or obj.get("t") != "action":
        return None
    # anything the strict path would refuse (a missing ``seat``, an int out of range, a
    # long ``by``) falls through to it and is refused there with its path
    seq, seat, action = obj.get("seq"), obj.get("seat", _NO_SEAT), obj.get("action")
    if (type(seq) is not int or not INT_MIN <= seq <= INT_MAX or type(action) is not dict
            or (seat is not None and (type(seat) is not int or not INT_MIN <= seat <= INT_MAX))):
        return None
    # the four keys just read and nothing else (a self-play or bot log), or a server's
    # fields besides them
    return _typed_action(obj) if len(obj) == 4 or _server_fields(obj) else None


def _typed_action(r: dict) -> ActionAccepted:
    """The ActionAccepted of action record map ``r``, already checked (_action_record,
    read_prefix): the fields it does not hold at their defaults."""
    if len(r) == 4:
        return _new_action(r["seq"], r["seat"], r["action"], None, "player", None, None, None, None)
    return _new_action(r["seq"], r["seat"], r["action"], r.get("intent"), r.get("by", "player"), r.get("recv"),
                       r.get("delay"), r.get("sent"), r.get("hold"))


def decode_record(obj: Any) -> Any:
    """A record from plain data: action records take the fast path of _action_record."""
    r = _action_record(obj)
    return r if r is not None else RECORDS.decode(obj)


def read_log(data: bytes) -> LogContents:
    """Decode a whole log. Torn tail: cut and reported. Corruption: LogError with
    the byte offset and the seq expected there."""
    contents = read_prefix(data)
    if contents.damage is not None:
        raise contents.damage
    return contents


#: how a msgpack map (every record's payload) starts
MAP_START = frozenset(range(0x80, 0x90)) | {0xDE, 0xDF}


def looks_like_log(data: bytes) -> bool:
    """Whether ``data`` starts as every log does (docs/LOG-FORMAT.md, 1): a frame whose
    length is 1..MAX_RECORD and whose payload starts a msgpack map. Text, images and
    archives fail this at their first four bytes (read as a length, they are far above
    the cap); it tells "not a log" from "a log whose header is damaged"."""
    if len(data) >= 4:
        length = int.from_bytes(data[:4], "little")
        if not 0 < length <= MAX_RECORD:
            return False
    return len(data) <= FRAME_HEADER or data[FRAME_HEADER] in MAP_START


def _not_a_log(data: bytes, why: str) -> LogError:
    shown = data[:8].hex(" ")
    return LogError("not_a_log", f"not a wildtable log: it does not start with a log's header record "
                    f"(its first bytes are {shown}; {why})", offset=0)


def read_prefix(data: bytes) -> LogContents:
    """Decode a log up to its end or up to the first damage, whichever comes first: every
    record before the damage is returned, and the damage as ``damage`` (a LogError naming
    its byte offset and the seq expected there). Only a log whose header cannot be read
    raises: a file that does not start like a log is ``not_a_log``."""
    try:
        return _read_prefix(data)
    except LogError as e:
        if e.offset == 0 and e.code in ("bad_frame", "bad_crc", "bad_record", "no_header") \
                and not looks_like_log(data):
            raise _not_a_log(data, e.message) from None
        raise


def _read_prefix(data: bytes) -> LogContents:
    records: list[Any] = []
    offsets: list[int] = []
    header = None
    last_seq = 0
    seats = False           # a seat record read
    # the seq the next action record must have, for the common case below: none before the
    # header (a float no seq equals), then last_seq + 1
    expect: int | float = 0.5
    old = False             # a format 1 log: the fields new in format 2 are refused
    view = memoryview(data)
    n = len(view)
    last = n - FRAME_HEADER     # the last offset a frame's header fits at
    # ``off`` is also the log's good length: the end of the last whole record read (every
    # record read moves it there; a torn tail or damage leaves it where that frame starts)
    off = 0
    crc32 = zlib.crc32
    unpack_from = _FRAME.unpack_from
    unpack = _unpackb_default
    append_record = records.append
    append_offset = offsets.append
    # names the loop reads each record, as locals
    fh, cap, lo, hi, int_, dict_, len_ = FRAME_HEADER, MAX_RECORD, INT_MIN, INT_MAX, int, dict, len
    try:
        # _frames inlined (replay speed: this loop runs once per record of every log read)
        while off <= last:
            length, crc = unpack_from(view, off)
            start = off + fh
            end = start + length
            if length > cap or end > n:
                _frame_check(view, off, length)
                break                       # a torn tail: the log ends at ``off``
            payload = view[start:end]
            if crc32(payload) != crc:
                raise LogError("bad_crc", "record fails its CRC check", offset=off)
            # the common case, first: an action record in its place. msgpack's defaults (str
            # keys only, no decoding arguments to parse) are the fast unpack; an extension
            # value can only reach fields that are checked again later
            try:
                obj = unpack(payload)
            except Exception:
                obj = None
            if obj.__class__ is dict_ and (len_(obj) == 4 or (not old and _server_fields(obj))):
                # a plain action record (its four keys, the other fields at their defaults:
                # nothing new in format 2), or one with the fields a server adds (the
                # intent's id, who, its timing: _server_fields, checked as _action_record
                # checks them; a format 2 log's), as _action_record reads it. Its seq is the next
                # one (``expect``: none before the header): gapless from 1, so in range; any
                # other such map (a key missing, ...) takes the path below.
                # (A type read as ``__class__``: the same for msgpack's values, in a third
                # of the time of a type() call)
                try:
                    seq = obj["seq"]
                    seat = obj["seat"]
                    action = obj["action"]
                    t = obj["t"]
                except KeyError:
                    seq = None
                if (seq.__class__ is int_ and seq == expect and action.__class__ is dict_ and t == "action"
                        and (seat.__class__ is int_ and lo <= seat <= hi or seat is None)):
                    expect = seq + 1
                    append_record(obj)      # typed only if asked for (LogContents.records)
                    append_offset(off)
                    off = end
                    continue
            last_seq = int(expect) - 1 if header is not None else 0
            r = _action_record(obj) if header is not None else None
            if r is not None:
                if r.seq != last_seq + 1:
                    raise LogError("seq_gap", f"expected seq {last_seq + 1}, found {r.seq}", offset=off, seq=last_seq + 1)
                if old and _format2_fields(r):
                    raise LogError("bad_record", f"field {_format2_fields(r)!r} is new in format 2; this log is format 1",
                                   offset=off, seq=last_seq + 1)
                expect = r.seq + 1
                records.append(r)
                offsets.append(off)
                off = end
                continue
            try:
                # a payload the fast unpack refused is unpacked strictly, which names the fault;
                # a map that is no action record _action_record takes (just asked, or before
                # the header, where decode_record would ask it again) decodes strictly
                r = RECORDS.decode(obj) if obj is not None else decode_record(unpackb(bytes(payload), max_size=MAX_RECORD))
            except ProtocolError as e:
                raise LogError("bad_record", f"record cannot be decoded: {e}", offset=off, seq=last_seq + 1) from None
            if header is None:
                if not isinstance(r, Header):
                    raise LogError("no_header", "the first record is not a header", offset=off)
                if r.format not in READABLE_FORMATS:
                    raise LogError("bad_version", f"log format {r.format} is not supported (this build reads "
                                   f"{', '.join(map(str, READABLE_FORMATS))})", offset=off)
                header = r
                expect = 1
                old = r.format == 1
            elif isinstance(r, Header):
                raise LogError("bad_record", "a second header record", offset=off)
            else:
                if old and _format2_fields(r):
                    raise LogError("bad_record", f"field {_format2_fields(r)!r} is new in format 2; this log is format 1",
                                   offset=off, seq=last_seq + 1)
                seq = getattr(r, "seq", None)
                if seq is not None and isinstance(r, (ChanceRecorded, ActionAccepted)):
                    if seq != last_seq + 1:
                        raise LogError("seq_gap", f"expected seq {last_seq + 1}, found {seq}", offset=off, seq=last_seq + 1)
                    expect = seq + 1
                elif r.__class__ is SeatClaimed:
                    seats = True
                records.append(r)
                offsets.append(off)
            off = end
    except LogError as e:
        if header is None:
            raise
        if e.seq is None:
            e.seq = int(expect)
            e.args = (f"{e.message} (seq {e.seq}, byte offset {e.offset})",)
        return LogContents(header, tuple(records), off, None, tuple(offsets), e, seats)
    if header is None:
        if len(data) == 0:
            raise LogError("empty", "the log is empty", offset=0)
        raise LogError("no_header", "the log has no whole header record", offset=0)
    torn = TornTail(off, n - off) if off < n else None
    return LogContents(header, tuple(records), off, torn, tuple(offsets), None, seats)
