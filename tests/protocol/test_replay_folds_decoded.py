"""Replay folds the records as the reader left them (LogContents.decoded: a plain action
record is still its map, no ActionAccepted built; docs/LOG-FORMAT.md, 5): ``records``,
built on first use, are the records the strict decoder makes of every frame, and the fold
over ``decoded`` ends where the fold over ``records`` ends, or fails as it fails."""

from __future__ import annotations

import random

import attrs
import pytest

from wildtable.protocol.codec import unpackb
from wildtable.protocol.engine import games
from wildtable.protocol.errors import LogError
from wildtable.protocol.logfmt import RECORDS, ActionAccepted, encode_record, iter_frames, read_log
from wildtable.protocol.replay import fold, initial_state, replay
from wildtable.selfplay import play

SHORT = {"run-wild": {"rounds": 1}}


def logs(name: str, n: int, seed: int = 3) -> list[bytes]:
    g = games()[name]
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        p = play(g, rng.randint(g.MIN_PLAYERS, g.MAX_PLAYERS), dict(SHORT.get(name, {})), rng=rng)
        out.append(encode_record(p.header) + b"".join(encode_record(r) for r in p.records))
    return out


@pytest.mark.parametrize("name", sorted(games()))
def test_decoded_folds_as_records_do(name):
    for data in logs(name, 4):
        c = read_log(data)
        strict = tuple(RECORDS.decode(unpackb(p)) for _, p in iter_frames(data))[1:]
        assert c.records == strict
        assert any(type(r) is dict for r in c.decoded)      # the plain action records, as maps
        assert len(c.decoded) == len(c.records) == len(c.offsets)
        g, s0 = initial_state(c.header)
        a, b = fold(g, s0, c.decoded), fold(g, s0, c.records)
        assert (a.state, a.seq, a.actions, a.chances, a.hashes_checked) == \
               (b.state, b.seq, b.actions, b.chances, b.hashes_checked)
        assert b.hashes_checked >= 1
        mid = a.seq // 2
        assert fold(g, s0, c.decoded, upto=mid).state == fold(g, s0, c.records, upto=mid).state


@pytest.mark.parametrize("name", sorted(games()))
def test_an_illegal_plain_action_fails_at_its_seq_with_its_reason(name):
    data = logs(name, 1, seed=5)[0]
    c = read_log(data)
    # the last plain action record played again at its seq + 1 in its place: the game
    # refuses it (the turn moved on, or the card is gone), and says why
    i = max(k for k, r in enumerate(c.records) if type(r) is ActionAccepted and k + 1 < len(c.records))
    r = c.records[i]
    prev = next(k for k in range(i - 1, -1, -1) if type(c.records[k]) is ActionAccepted)
    forged = attrs.evolve(c.records[prev], seq=r.seq)
    bad = data[:c.offsets[i]] + encode_record(forged)
    forged_contents = read_log(bad)
    assert type(forged_contents.decoded[i]) is dict
    with pytest.raises(LogError) as e:
        replay(forged_contents)
    assert e.value.code == "diverged" and e.value.seq == r.seq and "no longer applies" in str(e.value)
