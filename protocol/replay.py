"""Replay is a fold: state = new_table(header); for each record, state = apply(...).

Hash records are checked against the replayed state, so a rules change that makes an
old log diverge is reported at the first seq where it does.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any, Iterable

import attrs

from .engine import ChanceOutcome, TableConfig, game as find_game, log_hash
from .codec import INT_MAX
from .errors import IllegalAction, LogError, ProtocolError
from .logfmt import FORMAT_VERSION, ActionAccepted, ChanceRecorded, Header, LogContents, SeatClaimed, StateHashed


@attrs.frozen
class ReplayResult:
    game: ModuleType
    state: Any
    seq: int
    actions: int
    chances: int
    hashes_checked: int


def initial_state(header: Header) -> tuple[ModuleType, Any]:
    """The game and its state before any record, under the rules version the log was
    written with (``header.rules``: an old log replays as it was played). A header that
    cannot start a table (an unknown game, seats, settings or rules version the game
    refuses) is a log that cannot be trusted: LogError("bad_record") at the header's
    offset, like any record that makes no sense."""
    try:
        g = find_game(header.game)
        return g, g.new_table(TableConfig(header.game, header.seats, dict(header.settings), header.rules))
    except IllegalAction as e:
        raise LogError("bad_record", f"the header cannot start a table: {e.reason}", offset=0) from None


def advancer(g: ModuleType) -> Any:
    """``advance(state, seat, action) -> state``: the game's own ``advance`` (the state of
    ``apply`` without building its events, which replay drops; engine API, optional), else
    ``apply``'s state."""
    advance = getattr(g, "advance", None)
    if advance is not None:
        return advance
    apply = g.apply
    return lambda state, seat, action: apply(state, seat, action)[0]


def step(g: ModuleType, state: Any, record: Any) -> Any:
    """Apply one state-changing record; other records leave the state as it is."""
    if type(record) is ActionAccepted:
        try:
            action = g.ACTIONS.decode(record.action, "$.action")
            return advancer(g)(state, record.seat, action)
        except (IllegalAction, ProtocolError) as e:
            raise LogError("diverged", f"logged action no longer applies: {e}", seq=record.seq) from None
    if type(record) is ChanceRecorded:
        try:
            return advancer(g)(state, None, ChanceOutcome(record.purpose, record.permutation))
        except IllegalAction as e:
            raise LogError("diverged", f"logged chance outcome no longer applies: {e}", seq=record.seq) from None
    return state


def replay(contents: LogContents, *, verify_hashes: bool = True, upto: int | None = None) -> ReplayResult:
    g, state = initial_state(contents.header)
    check_seats(contents)
    return fold(g, state, contents.decoded, verify_hashes=verify_hashes, upto=upto,
                log_format=contents.header.format)


def check_seats(contents: LogContents) -> None:
    """A seat record names a seat of the table, or the log cannot be trusted (the fold
    does not look at seat records: they change who holds a seat, not the game)."""
    if not contents.has_seat_records:
        return      # the reader read none (a log of selfplay, a match or a bench)
    seats = contents.header.seats
    for off, r in zip(contents.offsets, contents.decoded):
        if type(r) is SeatClaimed and not 0 <= r.seat < seats:
            raise LogError("bad_record", f"a seat record for seat {r.seat}, but the table has seats 0..{seats - 1}",
                           offset=off)


def fold(g: ModuleType, state: Any, records: Iterable[Any], *, verify_hashes: bool = True,
         upto: int | None = None, log_format: int = FORMAT_VERSION) -> ReplayResult:
    """Replay ``records`` from ``state``: typed records, or LogContents.decoded (where a
    plain action record is still its map, already checked by the reader: read_prefix).
    Their hash records are checked as a log of ``log_format`` holds them (its header's
    ``format``: ``engine.log_hash``; records of a new log by default).
    A game with ``REPLAY_RUN`` (engine API, optional: protocol/engine.py) folds runs of
    its commonest steps itself; each record it leaves goes through the loop below."""
    limit = upto if upto is not None else INT_MAX + 1
    run = getattr(g, "REPLAY_RUN", None)
    if run is None:
        state, seq, actions, chances, checked, _ = _fold(g, state, records, verify_hashes, limit, 0, log_format)
        return ReplayResult(g, state, seq, actions, chances, checked)
    recs = records if type(records) is tuple else tuple(records)
    # the records a run may start at: plain action records, or (REPLAY_RUN_TYPED) any but a hash
    # (vars: a missing name costs getattr an AttributeError, a microsecond a log)
    typed = vars(g).get("REPLAY_RUN_TYPED", False)
    seq = actions = chances = checked = 0
    i = 0
    n = len(recs)
    while i < n:
        t = type(recs[i])
        if t is dict or (typed and t is not StateHashed):
            state, j, s, c = run(state, recs, i, limit)
            if j > i:
                seq = s
                actions += j - i - c
                chances += c
                i = j
                if i >= n:
                    break
        # the record the run left (none of its kind, a refusal, the limit), and the typed
        # records after it (hashes, chances): the loop below
        j = i + 1
        while j < n and type(recs[j]) is not dict:
            j += 1
        state, seq, a, c, h, stopped = _fold(g, state, recs[i:j], verify_hashes, limit, seq, log_format)
        actions += a
        chances += c
        checked += h
        if stopped:
            break
        i = j
    return ReplayResult(g, state, seq, actions, chances, checked)


#: game module -> what _fold looks up in it (bounded: the games, and a test's stand-ins)
_PARTS: dict = {}


def _parts(g: ModuleType) -> tuple:
    parts = _PARTS.get(g) if type(g) is ModuleType else None
    if parts is None:
        registry = g.ACTIONS
        parts = (advancer(g), registry.decode, registry.tag_key,
                 # kind -> the game's one-pass decoder of that kind (None: none, decode checks it all)
                 {tag: registry.fast_decoder(tag) for tag in registry.classes},
                 # kind -> the game's step straight from an action's map (engine API, optional:
                 # RAW_ADVANCE), which takes only maps its decoder takes, or gives None
                 getattr(g, "RAW_ADVANCE", None) or {})
        if len(_PARTS) < 64 and type(g) is ModuleType:
            _PARTS[g] = parts
    return parts


def _fold(g: ModuleType, state: Any, records: Iterable[Any], verify_hashes: bool, limit: int,
          seq: int, log_format: int) -> tuple[Any, int, int, int, int, bool]:
    """fold's loop, from ``state`` after record ``seq``: (the state, the seq of the last
    record applied, actions, chances, hashes checked, whether it stopped at ``limit``)."""
    actions = chances = checked = 0
    cache: dict = {}
    advance, decode, tag_key, fast, raw = _parts(g)
    for r in records:
        t = type(r)
        if t is dict:
            # a plain action record as read (nearly every record): its map, no ActionAccepted
            r_seq = r["seq"]
            seat = r["seat"]
            data = r["action"]
        elif t is ActionAccepted:
            r_seq = r.seq
            seat = r.seat
            data = r.action
        else:
            if t is ChanceRecorded:
                if r.seq > limit:
                    return state, seq, actions, chances, checked, True
                try:
                    state = advance(state, None, ChanceOutcome(r.purpose, r.permutation))
                except IllegalAction as e:
                    raise LogError("diverged", f"logged chance outcome no longer applies: {e}", seq=r.seq) from None
                seq = r.seq
                chances += 1
            elif t is StateHashed and verify_hashes:
                if r.seq != seq:
                    # the writer puts a hash right after the record it hashes: one that names
                    # another seq was moved or edited, and would otherwise check nothing
                    raise LogError("misplaced_hash", f"a hash record for seq {r.seq} follows seq {seq}; "
                                   "hash records follow the record they hash", seq=r.seq)
                if log_hash(g, state, log_format) != r.hash:
                    raise LogError("hash_mismatch", "replayed state differs from the logged hash", seq=r.seq)
                checked += 1
            continue
        if r_seq > limit:
            return state, seq, actions, chances, checked, True
        # the hot path of replay, inlined: decode, apply. An action that is its kind
        # alone ({"kind": "draw"}, ...) is decoded once per fold and shared (actions
        # are immutable): those are the ones that repeat, and a lone str is a key that
        # cannot be mistaken for another value (1, 1.0 and True are equal dict keys:
        # a record with "card": 5.0 must not pass for an earlier one with "card": 5).
        # Any other goes first to the game's step from the map itself (RAW_ADVANCE, where
        # the game has one for the kind: the action is never built; it takes only maps the
        # decoder takes, and gives None for any other, or where it leaves the step to
        # ``advance``); then it is decoded by its kind's one-pass decoder, or (a map that
        # decoder does not accept, or an unknown kind) by ``decode``, which names what is
        # wrong.
        try:
            kind = data.get(tag_key)
            one_step = raw.get(kind) if type(kind) is str else None
            if one_step is not None:
                st = one_step(state, seat, data)
                if st is not None:
                    state = st
                    seq = r_seq
                    actions += 1
                    continue
            if len(data) == 1:
                action = cache.get(kind) if type(kind) is str else None
                if action is None:
                    action = decode(data, "$.action")
                    if type(kind) is str:
                        cache[kind] = action
            elif type(kind) is str:
                one_pass = fast.get(kind)
                action = one_pass(data) if one_pass is not None else None
                if action is None:
                    action = decode(data, "$.action")
            else:
                action = decode(data, "$.action")
            state = advance(state, seat, action)
        except (IllegalAction, ProtocolError) as e:
            raise LogError("diverged", f"logged action no longer applies: {e}", seq=r_seq) from None
        seq = r_seq
        actions += 1
    return state, seq, actions, chances, checked, False
