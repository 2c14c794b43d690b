"""The reader's and the fold's shortcuts (the fast path for action records, the
decode cache of replay) must not accept what the strict decoding of the contract refuses
(docs/LOG-FORMAT.md section 1: a missing required field, an integer out of range, a bool or
float given for an int make the record undecodable)."""

from __future__ import annotations

import attrs
import msgpack
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wildtable.protocol.codec import INT_MAX, INT_MIN, unpackb
from wildtable.protocol.engine import game as find_game
from wildtable.protocol.errors import LogError, ProtocolError
from wildtable.protocol.logfmt import (
    MAX_RECORD, RECORDS, ActionAccepted, Header, _action_record, encode_record, frame, iter_frames, read_log,
)
from wildtable.protocol.replay import replay
from wildtable.selfplay import play

from typed import typed

HEADER = encode_record(Header(1, "go-wild", "t1", 2, {}))


@pytest.mark.parametrize("record", [
    {"t": "action", "seq": 1, "action": {"kind": "play", "cards": [1]}},                    # no seat
    {"t": "action", "seq": 1, "seat": 2 ** 60, "action": {"kind": "play"}},
    {"t": "action", "seq": 1, "seat": -2 ** 60, "action": {"kind": "play"}},
    {"t": "action", "seq": 1, "seat": 0, "action": {"kind": "play"}, "intent": 2 ** 60},
    {"t": "action", "seq": 1, "seat": 0, "action": {"kind": "play"}, "by": "x" * 1001},
], ids=["missing-seat", "seat-too-big", "seat-too-small", "intent-too-big", "by-too-long"])
def test_an_action_record_the_strict_decoder_refuses_is_bad_record(record):
    raw = HEADER + frame(msgpack.packb(record, use_bin_type=True))
    with pytest.raises(LogError) as e:
        read_log(raw)
    assert e.value.code == "bad_record" and e.value.offset == len(HEADER)


@pytest.mark.parametrize("name,seats,wrong", [("wild-shots", 2, float), ("go-fish-wildcard", 3, float),
                                              ("go-fish-wildcard", 3, bool)],
                         ids=["wild-shots-float", "go-fish-float", "go-fish-bool"])
def test_a_wrongly_typed_action_field_diverges_even_after_an_equal_action(name, seats, wrong):
    """replay caches decoded actions by their items; 5 == 5.0 and 1 == True must not let a
    record with a float or bool where an int belongs through on an earlier record's decode."""
    g = find_game(name)
    p = play(g, seats, {}, seed=1, hash_every=0)
    seen = set()
    for i, r in enumerate(p.records):
        if type(r) is not ActionAccepted:
            continue
        ints = [k for k, v in r.action.items() if type(v) is int and (wrong is float or v in (0, 1))]
        key = repr(sorted(r.action.items()))
        if ints and key in seen:
            break
        if ints:
            seen.add(key)
    else:
        raise AssertionError("no repeated action with an int field: pick another seed")
    records = list(p.records)
    bad = dict(r.action)
    bad[ints[0]] = wrong(bad[ints[0]])
    records[i] = attrs.evolve(r, action=bad)
    raw = encode_record(p.header) + b"".join(encode_record(x) for x in records)
    with pytest.raises(LogError) as e:
        replay(read_log(raw))
    assert e.value.code == "diverged" and e.value.seq == r.seq


_near = (st.integers(-3, 3) | st.sampled_from([INT_MIN, INT_MAX, INT_MIN - 1, INT_MAX + 1]) | st.booleans()
         | st.floats(-2, 2) | st.none() | st.text(max_size=3) | st.just("x" * 1001) | st.just("p" * 1000)
         | st.binary(max_size=2) | st.lists(st.integers(0, 3), max_size=2)
         | st.dictionaries(st.text(max_size=4), st.integers(0, 3), max_size=2))
_FIELDS = ["seq", "seat", "action", "intent", "by", "recv"]


@st.composite
def _action_record_like(draw):
    """Maps shaped like an action record: a good one (optional fields now and then), with up
    to two fields dropped or given a value near what they take, now and then an extra key."""
    obj = {"t": "action", "seq": draw(st.integers(1, 9)), "seat": draw(st.none() | st.integers(0, 3)),
           "action": {"kind": "draw"}}
    for name, good in [("intent", st.integers(-3, 3)), ("by", st.sampled_from(["player", "timer", ""])),
                       ("recv", st.floats(0, 1e9))]:
        if draw(st.booleans()):
            obj[name] = draw(good)
    for _ in range(draw(st.integers(0, 2))):
        name = draw(st.sampled_from(["t"] + _FIELDS))
        if draw(st.integers(0, 3)):
            obj[name] = draw(_near | st.sampled_from(["chance", "Action"]))
        else:
            obj.pop(name, None)
    if draw(st.integers(0, 9)) == 0:
        obj[draw(st.sampled_from(["purpose", "x", "hash", "t2"]))] = 1
    return obj


@settings(max_examples=2000)
@given(_action_record_like())
def test_the_action_record_fast_path_gives_what_the_strict_decoder_gives(obj):
    """read_log's fast path (logfmt._action_record) either gives exactly the record the
    strict decoder gives, types and all, or steps aside for that decoder."""
    got = _action_record(obj)
    try:
        want = RECORDS.decode(obj)
    except ProtocolError:
        assert got is None
        return
    assert got is None or typed(got) == typed(want)


def test_read_log_reads_what_the_strict_decoder_reads_record_by_record():
    """Every record of a log with every action field in use, through read_log's fast path
    and through the strict decoder one frame at a time: the same records."""
    g = find_game("run-wild")
    p = play(g, 3, {}, seed=3)
    records = []
    for i, r in enumerate(p.records):
        if type(r) is ActionAccepted:
            r = attrs.evolve(r, intent=[None, 7, -5][i % 3], by=["player", "timer", "table"][i % 3],
                             recv=[None, 1.25][i % 2])
        records.append(r)
    raw = encode_record(p.header) + b"".join(encode_record(r) for r in records)
    strict = [RECORDS.decode(unpackb(payload, max_size=MAX_RECORD)) for _, payload in iter_frames(raw)]
    got = read_log(raw)
    assert typed(got.header) == typed(strict[0])
    assert [typed(r) for r in got.records] == [typed(r) for r in strict[1:]]
    assert [typed(r) for r in got.records] == [typed(r) for r in records]
