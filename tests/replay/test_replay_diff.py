"""`wildtable replay --diff A B` (issue #27): a log and itself are equal (exit 0); two
seeds differ at the first chance record; a log edited at record N differs at N, with both
records side by side and the state difference; a cut copy ends early; a header with
another rules version shows as the first state that differs."""

from __future__ import annotations

import attrs

from wildtable.cli import main
from wildtable.protocol.logfmt import ActionAccepted, ChanceRecorded, StateHashed, encode_record, read_log

from logs import selfplay_log

DATA = selfplay_log(seats=3, seed=7)


def _diff(capsys, a, b) -> tuple[int, list[str]]:
    rc = main(["replay", "--diff", str(a), str(b)])
    out = capsys.readouterr()
    assert out.err == "" or rc == 2, out.err
    return rc, out.out.splitlines()


def _write(path, data: bytes):
    path.write_bytes(data)
    return path


def test_a_log_and_itself_are_equal(tmp_path, capsys):
    a = _write(tmp_path / "a.wlog", DATA)
    rc, lines = _diff(capsys, a, a)
    assert rc == 0 and lines[-1].startswith("equal: the same "), lines
    assert main(["replay", "diff", str(a), str(a)]) == 0         # the same, spelt as a word
    assert capsys.readouterr().out.splitlines()[-1] == lines[-1]


def test_two_seeds_differ_at_the_first_chance_record(tmp_path, capsys):
    a = _write(tmp_path / "a.wlog", DATA)
    b = _write(tmp_path / "b.wlog", selfplay_log(seats=3, seed=8))
    rc, lines = _diff(capsys, a, b)
    first = next(r for r in read_log(DATA).records if type(r) is ChanceRecorded)
    assert rc == 1
    assert lines[2] == f"first difference at seq {first.seq}: the chance outcome (record 1 of A, record 1 of B)"
    assert lines[3].startswith(f"  A: seq {first.seq}: chance") and lines[4].startswith(f"  B: seq {first.seq}: chance")
    assert lines[5].startswith(f"state after seq {first.seq}")     # a seat drawn by lot: maybe the same one


def test_a_log_edited_at_record_n_differs_at_n(tmp_path, capsys):
    contents = read_log(DATA)
    recs = list(contents.records)
    n = next(i for i, r in enumerate(recs) if type(r) is ActionAccepted and r.seq > 40 and r.seat is not None)
    others = [r for r in recs[n + 1:] if type(r) is ActionAccepted and r.action != recs[n].action
              and r.seat is not None]
    recs[n] = attrs.evolve(recs[n], action=others[0].action, seat=others[0].seat)
    edited = encode_record(contents.header) + b"".join(encode_record(r) for r in recs)
    a = _write(tmp_path / "a.wlog", DATA)
    b = _write(tmp_path / "b.wlog", edited)
    rc, lines = _diff(capsys, a, b)
    seq = contents.records[n].seq
    assert rc == 1
    assert lines[2] == f"first difference at seq {seq}: the action (record {n + 1} of A, record {n + 1} of B)", lines


def test_a_cut_copy_ends_early(tmp_path, capsys):
    contents = read_log(DATA)
    a = _write(tmp_path / "a.wlog", DATA)
    b = _write(tmp_path / "b.wlog", DATA[:contents.offsets[50]])
    rc, lines = _diff(capsys, a, b)
    last = max(r.seq for r in contents.records[:50] if type(r) in (ActionAccepted, ChanceRecorded))
    assert rc == 1 and lines[2].startswith(f"first difference after seq {last}: B ends there; A goes on"), lines


def test_another_rules_version_shows_in_the_header_and_the_state(tmp_path, capsys):
    contents = read_log(DATA)
    old = attrs.evolve(contents.header, rules=1)
    a = _write(tmp_path / "a.wlog", DATA)
    b = _write(tmp_path / "b.wlog", encode_record(old) + DATA[contents.offsets[0]:])
    rc, lines = _diff(capsys, a, b)
    assert rc == 1
    assert lines[2] == f"header: rules differs: A {contents.header.rules}, B 1", lines


def test_the_same_records_with_other_logged_hashes_differ_at_that_hash(tmp_path, capsys):
    """Logs of one seed written by two versions whose rules differ unversioned: the same
    records, another hash logged: the first such hash is the difference."""
    contents = read_log(DATA)
    recs = list(contents.records)
    k, h = next((i, r) for i, r in enumerate(recs) if type(r) is StateHashed)
    recs[k] = StateHashed(h.seq, bytes(16))
    a = _write(tmp_path / "a.wlog", DATA)
    b = _write(tmp_path / "b.wlog", encode_record(contents.header) + b"".join(encode_record(r) for r in recs))
    rc, lines = _diff(capsys, a, b)
    assert rc == 1 and lines[2].startswith(f"first difference at seq {h.seq}: the same records, but the state "
                                           "hashes the two logs hold for it differ"), lines


def test_a_file_that_cannot_be_read_is_exit_2(tmp_path, capsys):
    a = _write(tmp_path / "a.wlog", DATA)
    rc = main(["replay", "--diff", str(a), str(tmp_path / "missing.wlog")])
    assert rc == 2 and "cannot read" in capsys.readouterr().err
