"""The reader's and the fold's shortcuts (the fast path for action records, the
decode cache of replay) must not accept what the strict decoding of the contract refuses
(docs/LOG-FORMAT.md section 1: a missing required field, an integer out of range, a bool or
float given for an int make the record undecodable)."""

from __future__ import annotations

import attrs
import msgpack
import pytest

from wildtable.protocol.engine import game as find_game
from wildtable.protocol.errors import LogError
from wildtable.protocol.logfmt import ActionAccepted, Header, encode_record, frame, read_log
from wildtable.protocol.replay import replay
from wildtable.selfplay import play

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
        if ints and (key := repr(sorted(r.action.items()))) in seen:
            break
        if ints:
            seen.add(repr(sorted(r.action.items())))
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
