"""A server's action records (the intent's id, who acted, its receive time, and at a fair
table its delay, send time and hold: docs/LOG-FORMAT.md, 2a) are kept as read, as maps,
like a self-play log's plain ones, so replay folds them in runs too (issue #25): the
records typed from them are the strict decoder's, the fold over the maps ends where the
fold over the typed records ends, a field of the wrong type is refused as before, and a
format 1 log holding a field new in format 2 is refused as before."""

from __future__ import annotations

import random

import attrs
import pytest

from wildtable.protocol.codec import packb, unpackb
from wildtable.protocol.engine import games
from wildtable.protocol.errors import LogError
from wildtable.protocol.logfmt import RECORDS, ActionAccepted, encode_record, frame, iter_frames, read_log
from wildtable.protocol.replay import fold, initial_state
from wildtable.selfplay import play

SHORT = {"run-wild": {"rounds": 1}}


def server_log(name: str, seed: int) -> bytes:
    """A self-play log whose action records carry what a server's carry."""
    g = games()[name]
    rng = random.Random(seed)
    p = play(g, rng.randint(g.MIN_PLAYERS, g.MAX_PLAYERS), dict(SHORT.get(name, {})), rng=rng)
    out = [encode_record(p.header)]
    for k, r in enumerate(p.records):
        if type(r) is ActionAccepted:
            t = 1_796_000_000.0 + k / 10
            if r.seat is None:
                r = attrs.evolve(r, by="table")
            elif k % 3:
                r = attrs.evolve(r, intent=k, recv=t, delay=1e-5 * (k % 7), sent=t - 1e-5, hold=2e-5)
            else:
                r = attrs.evolve(r, intent=k, recv=t)          # (a table in arrival order)
        out.append(encode_record(r))
    return b"".join(out)


@pytest.mark.parametrize("name", sorted(games()))
def test_server_records_are_maps_typed_as_the_strict_decoder_types_them(name):
    for seed in range(3):
        data = server_log(name, seed)
        c = read_log(data)
        strict = tuple(RECORDS.decode(unpackb(p)) for _, p in iter_frames(data))[1:]
        assert c.records == strict
        maps = [r for r in c.decoded if type(r) is dict]
        assert len(maps) == sum(type(r) is ActionAccepted for r in strict)
        assert any(len(r) > 4 for r in maps)
        g, s0 = initial_state(c.header)
        a, b = fold(g, s0, c.decoded), fold(g, s0, c.records)
        assert (a.state, a.seq, a.actions, a.chances, a.hashes_checked) == \
               (b.state, b.seq, b.actions, b.chances, b.hashes_checked)
        mid = a.seq // 2
        assert fold(g, s0, c.decoded, upto=mid).state == fold(g, s0, c.records, upto=mid).state


@pytest.mark.parametrize("field, value", [("recv", "noon"), ("intent", 1.5), ("by", "x" * 5000), ("hold", 1),
                                          ("delay", [1.0]), ("sent", None), ("colour", "red")])
def test_a_server_field_of_the_wrong_kind_is_refused_where_it_is(field, value):
    data = server_log("run-wild", 4)
    c = read_log(data)
    i = next(k for k, r in enumerate(c.records) if type(r) is ActionAccepted and r.recv is not None)
    record = unpackb(next(p for n, (_, p) in enumerate(iter_frames(data)) if n == i + 1))
    record[field] = value
    bad = data[:c.offsets[i]] + frame(packb(record)) + data[c.offsets[i + 1]:]
    if value is None:
        # (sent: None is its default: the record is as good as without it)
        assert read_log(bad).records[i] == attrs.evolve(c.records[i], sent=None)
        return
    with pytest.raises(LogError) as e:
        read_log(bad)
    assert e.value.code == "bad_record" and e.value.offset == c.offsets[i]


def test_a_format_1_log_with_a_field_new_in_format_2_is_refused():
    data = server_log("go-wild", 5)
    frames = [unpackb(p) for _, p in iter_frames(data)]
    frames[0]["format"] = 1
    i = next(k for k, f in enumerate(frames) if f.get("t") == "action" and "sent" in f)
    old = b"".join(frame(packb({k: v for k, v in f.items() if k not in ("delay", "sent", "hold")}))
                   for f in frames[:i])
    with pytest.raises(LogError) as e:
        read_log(old + frame(packb(frames[i])))
    assert e.value.code == "bad_record" and "new in format 2" in str(e.value)
