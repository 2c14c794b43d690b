"""The invariants are checked as the log grows (wildtable/sim/check.py, Checker): a check
replays only what was added since the last one and compares each view shown once. What
it says must be what a whole replay of the log says, sentence for sentence and in order,
at every check of a run (with a planted bug, so that it has something to say), and when
the log is cut back or a record already replayed is written anew (a crash, another owner)."""

import attrs

from wildtable.protocol.logfmt import ActionAccepted, ChanceRecorded, encode_record, read_log
from wildtable.sim import check
from wildtable.sim.plant import planted
from wildtable.sim.run import run

SEED = 15       # a Run Wild table ordering by send time, watched by a spectator (spectator_leak finds it)


_CHECK = check.Checker.check


def _whole(data, seen, when):
    """What a whole replay says: a new Checker's first check."""
    return _CHECK(check.Checker(), data, seen, when)


def test_a_check_as_the_log_grows_says_what_a_whole_replay_says(monkeypatch):
    calls = []
    def both(self, data, seen, when):
        got = _CHECK(self, data, seen, when)
        assert got == _whole(data, seen, when), when
        calls.append((data, list(seen)))
        return got
    monkeypatch.setattr(check.Checker, "check", both)
    with planted("spectator_leak"):
        r = run(SEED, {"spectator_leak"})
    assert any("spec was shown a view" in v for v in r.violations), r.violations
    assert len(calls) > 3
    monkeypatch.setattr(check.Checker, "check", _CHECK)

    # the last log of the run, cut back and then written on differently from record k
    data, seen = calls[-1]
    contents = read_log(data)
    acts = [i for i, rec in enumerate(contents.records)
            if type(rec) is ActionAccepted and rec.sent is not None and rec.recv is not None]
    assert acts, "the seed's table must order by send time"
    k = acts[len(acts) // 2]
    rec = contents.records[k]
    ends = list(contents.offsets[1:]) + [contents.good_length]
    cut = data[:contents.offsets[k]]
    # the same moves, but credited 5 s (over the cap): only the check of record k can say so
    rewritten = cut + encode_record(attrs.evolve(rec, sent=rec.recv - 5.0)) + data[ends[k]:]
    # the deal shuffled otherwise, the log ending there: the views shown at its seq differ now
    d = next(i for i, r in enumerate(contents.records) if type(r) is ChanceRecorded and len(r.permutation) > 1)
    p = contents.records[d].permutation
    redealt = data[:contents.offsets[d]] + encode_record(attrs.evolve(contents.records[d],
                                                                      permutation=(p[1], p[0]) + p[2:]))
    c = check.Checker()
    for when, log in (("whole", data), ("cut", cut), ("grown", data), ("rewritten", rewritten), ("back", data),
                      ("redealt", redealt), ("back again", data)):
        got = c.check(log, seen, when)
        assert got == _whole(log, seen, when), when
        if when == "cut":
            assert any("an acknowledged record was lost" in g for g in got)
        if when == "rewritten":
            assert any(f"seq {rec.seq} was ordered as sent 5.000 s" in g for g in got), got
        if when == "redealt":
            assert any(f"at seq {contents.records[d].seq} " in g and "that is not the log's" in g for g in got), got
