"""`wildtable selfplay` as a user runs it: a --log it cannot write is a sentence and exit
1 (not a traceback after the game), a --set without "=" is a usage problem (exit 2), and
the log it writes marks who acted as the server does (`by`: "table" for the table's own
actions, such as Run Wild's "Go!")."""

from __future__ import annotations

import subprocess
import sys

import pytest

from wildtable.protocol.logfmt import ActionAccepted, read_log

WILDTABLE = [sys.executable, "-m", "wildtable"]


def _run(*argv, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run(WILDTABLE + list(map(str, argv)), capture_output=True, text=True, timeout=60, cwd=cwd)


@pytest.mark.parametrize("where", ["a-dir", "no-such-dir/x.wlog"])
def test_a_log_that_cannot_be_written_is_one_line_and_exit_1(tmp_path, where):
    (tmp_path / "a-dir").mkdir()
    target = tmp_path / where
    done = _run("selfplay", "go-wild", "--players", "2", "--seed", "3", "--set", "target=5", "--log", target)
    assert done.returncode == 1, done
    assert "Traceback" not in done.stderr, done.stderr
    assert done.stderr.startswith(f"wildtable selfplay: cannot write the log to {target}: "), done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("command", [["selfplay", "run-wild"], ["play", "--bots", "1", "--plain"]])
def test_a_set_without_an_equals_sign_is_a_usage_problem(command):
    done = _run(*command, "--set", "rounds")
    assert done.returncode == 2, done
    assert "--set wants NAME=VALUE (e.g. --set rounds=2), got 'rounds'" in done.stderr, done.stderr


def test_selfplay_logs_the_tables_own_actions_as_the_server_does(tmp_path):
    log = tmp_path / "rw.wlog"
    done = _run("selfplay", "run-wild", "--players", "2", "--seed", "5", "--set", "rounds=1", "--log", log)
    assert done.returncode == 0, done.stderr
    acted = [r for r in read_log(log.read_bytes()).records if type(r) is ActionAccepted]
    table = [r for r in acted if r.seat is None]
    assert table and all(r.by == "table" for r in table), table[:3]      # "Go!"
    assert all(r.by == "player" for r in acted if r.seat is not None)
    plain = _run("replay", log, "--plain", "--upto", "6")
    assert "the table: go" in plain.stdout and "the player" not in plain.stdout, plain.stdout


def test_without_seed_the_seed_it_used_is_printed_and_repeats_the_game(tmp_path):
    first = _run("selfplay", "wild-shots", "--players", "2", "--log", tmp_path / "a.wlog")
    assert first.returncode == 0, first.stderr
    head = first.stdout.splitlines()[0]
    assert "seed None" not in head
    seed = head.split("seed ", 1)[1].split(",")[0]
    again = _run("selfplay", "wild-shots", "--players", "2", "--seed", seed, "--log", tmp_path / "b.wlog")
    assert again.stdout.replace("b.wlog", "a.wlog") == first.stdout
    assert (tmp_path / "a.wlog").read_bytes() == (tmp_path / "b.wlog").read_bytes()
