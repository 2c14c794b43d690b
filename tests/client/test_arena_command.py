"""`wildtable arena` as a user runs it (issue 31; docs/PLAYING.md "Bot levels"): the same
seed gives the same games whatever --workers, --logs writes logs that `replay --verify`
accepts, --json holds the figures the issue lists, and bad arguments are one sentence
and exit 2."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from wildtable.cli import main

WILDTABLE = [sys.executable, "-m", "wildtable"]


def _run(*argv) -> subprocess.CompletedProcess:
    return subprocess.run(WILDTABLE + list(map(str, argv)), capture_output=True, text=True, timeout=120)


def test_the_same_seed_plays_the_same_games_whatever_workers(tmp_path):
    out = {}
    for workers in (1, 2):
        done = _run("arena", "go-fish-wildcard", "--seats", "hard,normal,easy,hard", "--rotate", "--games", 8,
                    "--seed", 5, "--workers", workers, "--json", tmp_path / f"{workers}.json",
                    "--logs", tmp_path / f"logs{workers}")
        assert done.returncode == 0, done.stderr
        assert "8/8 games" in done.stderr
        out[workers] = json.loads((tmp_path / f"{workers}.json").read_text())
    a, b = out[1], out[2]
    assert a["by_seat"] == b["by_seat"]
    assert a["games"] == 8 and a["seed"] == 5 and a["deals"] == 2
    for row in a["by_seat"]:
        assert set(row) >= {"level", "win_share", "asked_share"}
        assert len(row["win_share"]) == 2 and len(row["asked_share"]) == 2
    assert sum(row["win_share"][0] for row in a["by_seat"]) == pytest.approx(1.0)
    assert set(a["by_level"]) == {"hard", "normal", "easy"}
    for level in a["by_level"].values():
        assert set(level["move_ms"]) >= {"p50", "p90"} and len(level["win_share"]) == 2
    logs1 = sorted((tmp_path / "logs1").iterdir())
    assert [p.name for p in logs1] == [f"game-{k:06d}.wlog" for k in range(1, 9)]
    for p in logs1:
        assert p.read_bytes() == (tmp_path / "logs2" / p.name).read_bytes()
        assert p.stat().st_mode & 0o777 == 0o600
    # a deal is played once per rotation: the same shuffles in games 1-4
    verify = _run("replay", logs1[2], "--verify")
    assert verify.returncode == 0 and "OK" in verify.stdout, verify.stdout + verify.stderr


def test_run_wild_plays_in_simulated_time_and_its_log_verifies(tmp_path):
    done = _run("arena", "run-wild", "--seats", "hard,easy", "--games", 1, "--seed", 2, "--set", "rounds=1",
                "--logs", tmp_path)
    assert done.returncode == 0, done.stderr
    assert "hard" in done.stdout and "asks received" not in done.stdout
    verify = _run("replay", tmp_path / "game-000001.wlog", "--verify")
    assert verify.returncode == 0, verify.stdout + verify.stderr


@pytest.mark.parametrize("argv, says", [
    (["go-wild", "--seats", "hard,expertly", "--games", "2"], "there is no bot level 'expertly'"),
    (["go-wild", "--seats", "hard", "--games", "2"], "--seats names 1 seat(s); go-wild is for"),
    (["go-wild", "--seats", "hard,hard,hard", "--games", "4", "--rotate"], "--games must be a multiple of 3"),
    (["go-wild", "--seats", "hard,,hard", "--games", "2"], "--seats wants a level per seat"),
    (["go-wild", "--seats", "hard,hard", "--games", "0"], "--games wants 1 to"),
    (["go-wild", "--seats", "hard,hard", "--games", "2", "--workers", "0"], "--workers wants 1 to"),
    (["chess", "--seats", "hard,hard", "--games", "2"], "there is no game 'chess'"),
    (["go-wild", "--seats", "hard,hard", "--games", "2", "--set", "turn_timer=-1"], "--set: setting 'turn_timer'"),
])
def test_bad_arguments_say_what_to_do(argv, says, capsys):
    assert main(["arena", *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("wildtable arena: ") and says in err, err
    assert len(err.strip().splitlines()) == 1
