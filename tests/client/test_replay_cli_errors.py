"""`wildtable replay --json / --verify / --upto` on finished and unfinished logs of
every game, --upto at 0, below 0 and beyond the end, and on logs whose header cannot start
a table (an unknown game, settings the game refuses): a clear one-line error and exit 1,
never a traceback."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from wildtable.cli import main
from wildtable.protocol.engine import game as find_game, state_hash
from wildtable.protocol.games import REGISTRY
from wildtable.protocol.logfmt import FORMAT_VERSION, Header, encode_record, read_log
from wildtable.protocol.replay import replay
from wildtable.selfplay import play

GAMES = [
    ("run-wild", 2, {"rounds": 1}),
    ("go-wild", 3, {"target": 10}),
    ("wild-shots", 2, {}),
    ("go-fish-wildcard", 3, {}),
]


def _write(path, game, seats, settings, records) -> bytes:
    # the format selfplay writes (its hash records are that format's: engine.log_hash)
    header = Header(FORMAT_VERSION, game, path.stem, seats, settings, rules=REGISTRY[game].RULES_VERSION if game in REGISTRY else 1)
    raw = encode_record(header) + b"".join(encode_record(r) for r in records)
    path.write_bytes(raw)
    return raw


def _run(capsys, *argv) -> tuple[int, str, str]:
    rc = main(["replay", *map(str, argv)])
    out = capsys.readouterr()
    return rc, out.out, out.err


@pytest.mark.parametrize("name,seats,settings", GAMES, ids=[g[0] for g in GAMES])
def test_replay_json_and_upto_on_finished_and_unfinished_logs(tmp_path, capsys, name, seats, settings):
    g = find_game(name)
    p = play(g, seats, settings, seed=2, hash_every=8)
    half = len(p.records) // 2
    for label, records in (("done", p.records), ("half", p.records[:half])):
        path = tmp_path / f"{label}.wlog"
        _write(path, name, seats, settings, records)
        full = replay(read_log(path.read_bytes()))
        assert g.outcome(full.state).over == (label == "done")
        rc, out, err = _run(capsys, path, "--json")
        assert rc == 0, err
        j = json.loads(out)
        assert j["game"] == name and j["seq"] == full.seq
        assert j["outcome"]["over"] == (label == "done")
        rc, out, err = _run(capsys, path, "--verify")
        assert rc == 0 and f"seq: {full.seq} " in out and f"final hash: {state_hash(g, full.state).hex()}" in out, out + err
        for upto, want in ((0, 0), (-3, 0), (full.seq + 100, full.seq), (full.seq, full.seq), (5, 5)):
            rc, out, err = _run(capsys, path, "--json", "--upto", upto)
            assert rc == 0, err
            j = json.loads(out)
            assert j["seq"] == want, (upto, j["seq"])


@pytest.mark.parametrize("game,seats,settings,words", [
    ("poker", 2, {}, "unknown game 'poker'"),
    ("go-wild", 2, {"zz": 1}, "unknown setting 'zz'"),
    ("wild-shots", 9, {}, "9"),
])
def test_replay_of_a_header_that_cannot_start_a_table_is_a_clear_error(tmp_path, game, seats, settings, words):
    path = tmp_path / "t1.wlog"
    _write(path, game, seats, settings, [])
    for flag in ("--verify", "--json"):
        proc = subprocess.run([sys.executable, "-m", "wildtable", "replay", str(path), flag],
                              capture_output=True, text=True, timeout=30)
        assert proc.returncode == 1, proc.stderr
        assert "Traceback" not in proc.stderr, proc.stderr
        assert str(path) in proc.stderr and words in proc.stderr, proc.stderr


@pytest.mark.parametrize("seat", [2, 99, -1])
def test_replay_refuses_a_seat_record_for_a_seat_the_table_does_not_have(tmp_path, capsys, seat):
    """Found: recovery refused such a log, but `replay --verify` and `--json` called it
    good. replay() checks it now, for both."""
    from wildtable.protocol.logfmt import SeatClaimed
    path = tmp_path / "t1.wlog"
    raw = _write(path, "go-wild", 2, {}, [SeatClaimed(0, "ann", b"\x01" * 32), SeatClaimed(seat, "zed", b"x" * 32)])
    offset = read_log(raw).offsets[1]
    for flag in ("--verify", "--json"):
        rc, out, err = _run(capsys, path, flag)
        # the records before it are reported (docs/LOG-FORMAT.md 5): "DAMAGED", never "OK"
        assert rc == 1 and " OK " not in out and ("DAMAGED" in out or '"bad_record"' in out), (flag, out, err)
        assert f"a seat record for seat {seat}, but the table has seats 0..1" in err, err
        assert str(offset) in err, err


def test_seat_with_verify_is_a_usage_error(tmp_path, capsys):
    """--verify reports the all-seeing state: a --seat there was ignored (exit 0)."""
    path = tmp_path / "t1.wlog"
    _write(path, "go-wild", 2, {}, [])
    rc, out, err = _run(capsys, path, "--verify", "--seat", "junk")
    assert rc == 2 and out == "", (out, err)
    assert err.strip() == "wildtable replay: --seat goes with the viewer, --plain or --json, not with --verify"


def test_json_with_a_seat_that_is_not_one_is_a_usage_error(tmp_path, capsys):
    path = tmp_path / "t1.wlog"
    _write(path, "go-wild", 2, {}, [])
    rc, out, err = _run(capsys, path, "--json", "--seat", "junk")
    assert rc == 2 and out == "", (out, err)
    assert err.strip() == "wildtable replay: --seat wants 0..1, all or spectator, not 'junk'"
