"""The action log (docs/LOG-FORMAT.md): framing, the reader's torn-tail versus corruption
rules, seq rules, and replay as a fold checked against the logged state hashes
(DESIGN.md, "The action log": a torn tail is detected and cut, a bad record in the middle
is an error; every N records a state hash names the first seq that diverges)."""

from __future__ import annotations

import struct
import zlib

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wildtable.protocol import engine, replay
from wildtable.protocol.codec import packb
from wildtable.protocol.errors import LogError
from wildtable.protocol.logfmt import (
    FORMAT_VERSION, FRAME_HEADER, HASH_EVERY, MAX_RECORD, ActionAccepted, ChanceRecorded, Header,
    IntentRejected, SeatClaimed, StateHashed, TornTail, encode_record, frame, iter_frames, read_log,
)
from wildtable.selfplay import play

HEADER = Header(FORMAT_VERSION, "run-wild", "t1", 2, {"rounds": 4}, rules=1, created="2024-05-01T12:00:00Z")
RECORDS = (
    SeatClaimed(0, "ann", b"\x01" * 32),
    SeatClaimed(1, "bob", b"\x02" * 32),
    ChanceRecorded(1, "deal", (2, 0, 3, 1)),
    ActionAccepted(2, 0, {"kind": "take", "meld": 3, "card": 41}, intent=17, by="player", recv=10.25),
    IntentRejected(2, 1, {"kind": "take", "meld": 3, "card": 41}, "conflict", "Card 41 was just taken.", intent=5),
    StateHashed(2, bytes(range(16))),
    ActionAccepted(3, None, {"kind": "go"}, by="table"),
    ActionAccepted(4, 1, {"kind": "out"}, intent=6, by="timer"),
)


def _log(header=HEADER, records=RECORDS) -> bytes:
    return b"".join(encode_record(r) for r in (header, *records))


def _offsets(header=HEADER, records=RECORDS) -> list[int]:
    """Byte offset of each record after the header."""
    out, off = [], len(encode_record(header))
    for r in records:
        out.append(off)
        off += len(encode_record(r))
    return out


def _expected_seq(records, i) -> int:
    """The seq the reader expects at record i: one past the last state-changing record before it."""
    last = 0
    for r in records[:i]:
        if isinstance(r, (ChanceRecorded, ActionAccepted)):
            last = r.seq
    return last + 1


# ------------------------------------------------------------------ framing

def test_frame_layout():
    payload = packb({"t": "hash", "seq": 1, "hash": b"\x00" * 16})
    data = frame(payload)
    assert data[:4] == struct.pack("<I", len(payload))
    assert data[4:8] == struct.pack("<I", zlib.crc32(payload))
    assert data[8:] == payload
    assert FRAME_HEADER == 8


def test_documented_examples():
    """The byte-by-byte examples in docs/LOG-FORMAT.md section 7: format 1 must not drift."""
    h = encode_record(StateHashed(64, bytes.fromhex("00112233445566778899aabbccddeeff")))
    assert h.hex() == ("24000000" "7c6949c4" "83" "a174" "a468617368" "a3736571" "40" "a468617368"
                       "c410" "00112233445566778899aabbccddeeff")
    a = encode_record(ActionAccepted(7, 2, {"kind": "take", "meld": 3, "card": 41}, intent=17, by="timer",
                                     recv=12.5))
    assert a.hex() == (
        "52000000" "857d5f9d" "87" "a174" "a6616374696f6e" "a3736571" "07" "a473656174" "02"
        "a6616374696f6e" "83" "a46b696e64" "a474616b65" "a46d656c64" "03" "a463617264" "29"
        "a6696e74656e74" "11" "a26279" "a574696d6572" "a472656376" "cb4029000000000000")
    # opt fields holding their defaults are left out by the writer
    plain = encode_record(ActionAccepted(1, 2, {"kind": "draw"}))
    assert read_log(encode_record(HEADER) + plain).records == (ActionAccepted(1, 2, {"kind": "draw"}),)
    assert b"player" not in plain and b"intent" not in plain and b"recv" not in plain


def test_write_and_read_back():
    data = _log()
    contents = read_log(data)
    assert contents.header == HEADER
    assert contents.records == RECORDS
    assert list(contents.offsets) == _offsets()
    assert contents.good_length == len(data)
    assert contents.torn is None
    assert [off for off, _ in iter_frames(data)] == [0, *_offsets()]


def test_header_only_log():
    contents = read_log(encode_record(HEADER))
    assert contents.header == HEADER
    assert contents.records == ()
    assert contents.torn is None


def test_read_accepts_memoryview_and_bytearray():
    data = _log()
    assert read_log(bytearray(data)).records == RECORDS
    assert read_log(memoryview(data)).records == RECORDS


# ------------------------------------------------------------------ torn tail

def test_torn_tail_cut_at_every_byte_of_the_last_record():
    data = _log()
    last = _offsets()[-1]
    for cut in range(last + 1, len(data)):
        contents = read_log(data[:cut])
        assert contents.records == RECORDS[:-1], cut
        assert contents.good_length == last
        assert contents.torn == TornTail(offset=last, dropped=cut - last)
    # Cut exactly between records: nothing torn, one record fewer.
    contents = read_log(data[:last])
    assert contents.records == RECORDS[:-1]
    assert contents.torn is None


def test_torn_tail_inside_any_record_keeps_the_records_before_it():
    data = _log()
    for i, off in enumerate(_offsets()):
        end = off + len(encode_record(RECORDS[i]))
        for cut in (off + 1, off + FRAME_HEADER - 1, off + FRAME_HEADER, end - 1):
            contents = read_log(data[:cut])
            assert contents.records == RECORDS[:i]
            assert contents.torn == TornTail(off, cut - off)
            assert contents.good_length == off


def test_torn_tail_after_a_group_of_records():
    """A group commit that was cut leaves whole records and then one partial one."""
    data = _log()
    extra = encode_record(ActionAccepted(5, 0, {"kind": "go"}))
    contents = read_log(data + extra[:-3])
    assert contents.records == RECORDS
    assert contents.torn == TornTail(len(data), len(extra) - 3)


# ------------------------------------------------------------------ corruption in the middle

def test_flipped_payload_byte_is_bad_crc_with_offset_and_expected_seq():
    data = _log()
    offsets = _offsets()
    for i, off in enumerate(offsets):
        end = off + len(encode_record(RECORDS[i]))
        for pos in range(off + 4, end):          # the CRC field and the payload
            for flip in (0x01, 0xFF):
                bad = bytearray(data)
                bad[pos] ^= flip
                with pytest.raises(LogError) as info:
                    read_log(bytes(bad))
                e = info.value
                assert (e.code, e.offset, e.seq) == ("bad_crc", off, _expected_seq(RECORDS, i)), (i, pos)
                assert f"byte offset {off}" in str(e) and f"seq {e.seq}" in str(e)


def test_flipped_length_byte_in_the_middle_is_never_taken_for_a_torn_tail():
    """Cutting at a damaged length field would throw away every good record after it."""
    data = _log()
    offsets = _offsets()
    for i, off in enumerate(offsets[:-1]):
        for pos in range(off, off + 4):
            for flip in (0x01, 0x10, 0x80, 0xFF):
                bad = bytearray(data)
                bad[pos] ^= flip
                with pytest.raises(LogError) as info:
                    read_log(bytes(bad))
                e = info.value
                assert e.code in ("bad_crc", "bad_frame"), (i, pos, flip)
                assert (e.offset, e.seq) == (off, _expected_seq(RECORDS, i)), (i, pos, flip)


def test_garbage_appended_after_the_log_is_an_error_not_a_torn_tail():
    data = _log()
    bad = data + struct.pack("<II", 5, 0) + b"xxxxx"
    with pytest.raises(LogError) as info:
        read_log(bad)
    assert (info.value.code, info.value.offset) == ("bad_crc", len(data))


def test_record_length_over_the_cap_is_bad_frame():
    data = _log() + struct.pack("<II", MAX_RECORD + 1, 0)
    with pytest.raises(LogError) as info:
        read_log(data)
    assert (info.value.code, info.value.offset, info.value.seq) == ("bad_frame", len(_log()), 5)


@pytest.mark.parametrize("payload", [
    b"\xc1",                                      # not msgpack
    packb([1, 2]),                                # not a map
    packb({"t": "vote", "seq": 5}),               # unknown record type
    packb({"t": "action", "seq": "5", "seat": 0, "action": {}}),   # a field of the wrong type
    packb({"seq": 5}),                            # no tag
    b"",                                          # an empty frame
])
def test_undecodable_record_is_bad_record(payload):
    data = _log()
    with pytest.raises(LogError) as info:
        read_log(data + frame(payload))
    assert (info.value.code, info.value.offset, info.value.seq) == ("bad_record", len(data), 5)


@st.composite
def _random_log(draw):
    """A valid log of random records: seqs run 1, 2, ... over chance and action records."""
    text = st.text(max_size=12)
    small = st.integers(0, 2**53)
    seat = st.none() | st.integers(0, 15)
    records, seq = [], 0
    for kind in draw(st.lists(st.sampled_from(["chance", "action", "seat", "rejected", "hash"]), max_size=12)):
        if kind == "chance":
            seq += 1
            records.append(ChanceRecorded(seq, draw(text), tuple(draw(st.permutations(range(draw(st.integers(0, 30))))))))
        elif kind == "action":
            seq += 1
            records.append(ActionAccepted(seq, draw(seat), {"kind": draw(text), "n": draw(small)}, draw(st.none() | small),
                                          draw(st.sampled_from(["player", "timer", "table"])),
                                          draw(st.none() | st.floats(allow_nan=False))))
        elif kind == "seat":
            records.append(SeatClaimed(draw(st.integers(0, 15)), draw(text), draw(st.binary(max_size=32))))
        elif kind == "rejected":
            records.append(IntentRejected(seq, draw(seat), {"kind": draw(text)}, draw(text), draw(text), draw(st.none() | small)))
        else:
            records.append(StateHashed(seq, draw(st.binary(min_size=16, max_size=16))))
    return tuple(records)


@settings(max_examples=100)
@given(_random_log(), st.data())
def test_random_logs_read_back_and_tell_torn_from_corrupt(records, data):
    log = _log(records=records)
    assert read_log(log).records == records
    head = len(encode_record(HEADER))
    offsets = _offsets(records=records)
    ends = [off + len(encode_record(r)) for off, r in zip(offsets, records)]
    # Any cut keeps exactly the records that are whole before it.
    cut = data.draw(st.integers(head, len(log)))
    kept = sum(1 for e in ends if e <= cut)
    contents = read_log(log[:cut])
    assert contents.records == records[:kept]
    assert contents.good_length == (ends[kept - 1] if kept else head)
    assert contents.torn == (None if cut == contents.good_length else TornTail(contents.good_length, cut - contents.good_length))
    # A changed byte in the CRC or payload of any record is bad_crc at that record.
    if records:
        i = data.draw(st.integers(0, len(records) - 1))
        pos = data.draw(st.integers(offsets[i] + 4, ends[i] - 1))
        bad = bytearray(log)
        bad[pos] ^= data.draw(st.integers(1, 255))
        with pytest.raises(LogError) as info:
            read_log(bytes(bad))
        assert (info.value.code, info.value.offset, info.value.seq) == (
            "bad_crc", offsets[i], _expected_seq(records, i))


# ------------------------------------------------------------------ seq rules

def test_seq_gap_is_caught():
    records = RECORDS[:3] + (ActionAccepted(3, 0, {"kind": "go"}),)     # 1, then 3
    with pytest.raises(LogError) as info:
        read_log(_log(records=records))
    e = info.value
    assert (e.code, e.offset, e.seq) == ("seq_gap", _offsets(records=records)[3], 2)
    assert "expected seq 2, found 3" in str(e)


@pytest.mark.parametrize("seqs", [(2,), (0,), (1, 1), (1, 2, 2), (1, 3, 2)])
def test_seq_must_run_from_one_without_gaps_or_repeats(seqs):
    records = tuple(ActionAccepted(s, 0, {"kind": "go"}) for s in seqs)
    with pytest.raises(LogError) as info:
        read_log(_log(records=records))
    assert info.value.code == "seq_gap"


def test_chance_and_action_share_one_seq_and_others_take_none():
    records = (ChanceRecorded(1, "deal", (0,)), SeatClaimed(0, "a", b""), ActionAccepted(2, 0, {"kind": "go"}),
               IntentRejected(2, 1, {}, "c", "r"), StateHashed(2, b"h"), ChanceRecorded(3, "deal", (0,)))
    assert read_log(_log(records=records)).records == records


# ------------------------------------------------------------------ header

def test_empty_file():
    with pytest.raises(LogError) as info:
        read_log(b"")
    assert (info.value.code, info.value.offset) == ("empty", 0)


def test_missing_header():
    with pytest.raises(LogError) as info:
        read_log(b"".join(encode_record(r) for r in RECORDS))
    assert (info.value.code, info.value.offset) == ("no_header", 0)


def test_torn_header():
    head = encode_record(HEADER)
    for cut in (1, FRAME_HEADER, len(head) - 1):
        with pytest.raises(LogError) as info:
            read_log(head[:cut])
        assert (info.value.code, info.value.offset) == ("no_header", 0)


def test_garbled_header():
    for pos in (4, FRAME_HEADER + 3, len(encode_record(HEADER)) - 1):
        bad = bytearray(_log())
        bad[pos] ^= 0x40
        with pytest.raises(LogError) as info:
            read_log(bytes(bad))
        assert (info.value.code, info.value.offset) == ("bad_crc", 0)


def test_header_that_is_not_a_record():
    with pytest.raises(LogError) as info:
        read_log(frame(packb({"t": "header", "format": 1})) + _log()[len(encode_record(HEADER)):])
    assert (info.value.code, info.value.offset) == ("bad_record", 0)


def test_unsupported_format_version():
    with pytest.raises(LogError) as info:
        read_log(_log(header=attrs.evolve(HEADER, format=FORMAT_VERSION + 1)))
    assert (info.value.code, info.value.offset) == ("bad_version", 0)


def test_second_header_is_an_error():
    records = RECORDS[:3] + (HEADER,)
    with pytest.raises(LogError) as info:
        read_log(_log(records=records))
    assert (info.value.code, info.value.offset, info.value.seq) == ("bad_record", _offsets(records=records)[3], 2)


# ------------------------------------------------------------------ replay (against the Run Wild engine)

GAME = "run-wild"


@attrs.define
class _Game:
    playout: object
    states: list           # states[k] = the state after seq k (states[0]: the new table)
    data: bytes


@pytest.fixture(scope="module")
def game_log() -> _Game:
    g = engine.game(GAME)
    states = []

    def on_step(before, after, action, seat, request, events):
        if not states:
            states.append(before)
        states.append(after)

    p = play(g, 2, seed=20240501, hash_every=8, on_step=on_step)
    data = b"".join(encode_record(r) for r in (p.header, *p.records))
    return _Game(p, states, data)


def _hash_records(records):
    return [(i, r) for i, r in enumerate(records) if isinstance(r, StateHashed)]


def test_replay_equals_the_live_game(game_log):
    contents = read_log(game_log.data)
    assert contents.torn is None
    assert list(contents.records) == game_log.playout.records
    result = replay.replay(contents)
    g = game_log.playout.game
    assert result.game is g
    assert result.state == game_log.playout.state
    assert g.snapshot(result.state) == g.snapshot(game_log.playout.state)
    assert result.seq == game_log.playout.steps
    n_chance = sum(isinstance(r, ChanceRecorded) for r in contents.records)
    assert (result.actions, result.chances) == (game_log.playout.steps - n_chance, n_chance)
    assert result.hashes_checked == len(_hash_records(contents.records)) >= 2
    assert g.outcome(result.state).over


def test_replay_up_to_a_seq(game_log):
    contents = read_log(game_log.data)
    last = game_log.playout.steps
    for upto in sorted({0, 1, 2, last // 2, last - 1, last}):
        result = replay.replay(contents, upto=upto)
        assert result.seq == upto
        assert result.state == game_log.states[upto]


def test_replay_of_a_torn_log_stops_at_the_last_whole_record(game_log):
    contents = read_log(game_log.data[:-1])
    assert contents.torn is not None and contents.torn.offset == contents.good_length
    result = replay.replay(contents)
    assert result.seq == max(r.seq for r in contents.records if isinstance(r, (ActionAccepted, ChanceRecorded)))
    assert result.state == game_log.states[result.seq]


def test_hash_mismatch_names_the_seq(game_log):
    records = list(game_log.playout.records)
    hashes = _hash_records(records)
    i, r = hashes[len(hashes) // 2]
    records[i] = StateHashed(r.seq, bytes(b ^ 0xFF for b in r.hash))
    # The tamper is CRC-correct: only the replay can catch it.
    contents = read_log(b"".join(encode_record(x) for x in (game_log.playout.header, *records)))
    with pytest.raises(LogError) as info:
        replay.replay(contents)
    assert (info.value.code, info.value.seq) == ("hash_mismatch", r.seq)
    # Replay with hashes unchecked still folds to the live state.
    assert replay.replay(contents, verify_hashes=False).state == game_log.playout.state
    # fold itself, from the initial state, reports the same.
    g, state = replay.initial_state(contents.header)
    with pytest.raises(LogError) as info:
        replay.fold(g, state, contents.records)
    assert (info.value.code, info.value.seq) == ("hash_mismatch", r.seq)


def test_hash_of_a_different_state_is_a_mismatch(game_log):
    """A hash record copied from another seq (as if the rules had changed) is caught."""
    records = list(game_log.playout.records)
    (i, first), (_, second) = _hash_records(records)[:2]
    records[i] = StateHashed(first.seq, second.hash)
    g, state = replay.initial_state(game_log.playout.header)
    with pytest.raises(LogError) as info:
        replay.fold(g, state, records)
    assert (info.value.code, info.value.seq) == ("hash_mismatch", first.seq)


def test_a_hash_record_for_another_seq_is_reported(game_log):
    """A hash record moved away from the record it hashes would check nothing: reported."""
    records = list(game_log.playout.records)
    (i, first), _ = _hash_records(records)[:2]
    records[i] = StateHashed(first.seq - 1, first.hash)
    g, state = replay.initial_state(game_log.playout.header)
    with pytest.raises(LogError) as info:
        replay.fold(g, state, records)
    assert (info.value.code, info.value.seq) == ("misplaced_hash", first.seq - 1)
    # without hash checks the same records replay
    replay.fold(g, state, records, verify_hashes=False)


def test_logged_hashes_are_blake2b_of_the_snapshot(game_log):
    g = game_log.playout.game
    for _, r in _hash_records(game_log.playout.records):
        assert r.hash == engine.state_hash(g, game_log.states[r.seq])
        assert len(r.hash) == 16
    assert HASH_EVERY > 0


def test_a_chance_outcome_that_no_longer_applies_is_diverged(game_log):
    records = list(game_log.playout.records)
    i, r = next((i, r) for i, r in enumerate(records) if isinstance(r, ChanceRecorded))
    records[i] = ChanceRecorded(r.seq, r.purpose, r.permutation + (len(r.permutation),))
    g, state = replay.initial_state(game_log.playout.header)
    with pytest.raises(LogError) as info:
        replay.fold(g, state, records)
    assert (info.value.code, info.value.seq) == ("diverged", r.seq)


def test_an_action_that_no_longer_decodes_is_diverged(game_log):
    records = list(game_log.playout.records)
    i, r = next((i, r) for i, r in enumerate(records) if isinstance(r, ActionAccepted))
    records[i] = attrs.evolve(r, action={"kind": "no-such-action"})
    g, state = replay.initial_state(game_log.playout.header)
    with pytest.raises(LogError) as info:
        replay.fold(g, state, records)
    assert (info.value.code, info.value.seq) == ("diverged", r.seq)


def test_the_reader_says_whether_a_log_holds_seat_records():
    """LogContents.has_seat_records: False where the reader read none (replay's seat check
    skips the log), True where it read one, which replay then checks against the seats."""
    p = play(engine.game("go-wild"), 2, {}, seed=1)
    plain = encode_record(p.header) + b"".join(encode_record(r) for r in p.records)
    assert read_log(plain).has_seat_records is False
    for seat, ok in ((1, True), (2, False)):
        data = encode_record(p.header) + encode_record(SeatClaimed(seat, "ann", b"\x01" * 32)) + plain[len(
            encode_record(p.header)):]
        contents = read_log(data)
        assert contents.has_seat_records is True
        if ok:
            replay.replay(contents)
        else:
            with pytest.raises(LogError) as info:
                replay.replay(contents)
            assert info.value.code == "bad_record" and "seat 2" in str(info.value)
