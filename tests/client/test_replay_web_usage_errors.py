"""`wildtable replay LOG --web` given what it cannot use: a flag it does not go with, a
seat the table does not have, a log that does not read. One sentence and an exit status
(2 for usage, 1 for the log), before any server starts; never a traceback."""

from __future__ import annotations

from wildtable.cli import main
from wildtable.protocol.engine import game as find_game
from wildtable.protocol.logfmt import Header, encode_record
from wildtable.selfplay import play


def _run(capsys, *argv) -> tuple[int, str]:
    rc = main(["replay", *map(str, argv)])
    out = capsys.readouterr()
    assert "Traceback" not in out.err and not out.out, out
    return rc, out.err


def test_replay_web_refuses_what_it_cannot_use(tmp_path, capsys):
    p = play(find_game("go-wild"), 2, {"target": 5}, seed=3)
    log = tmp_path / "game.wlog"
    raw = encode_record(Header(2, "go-wild", "t1", 2, {"target": 5})) + b"".join(encode_record(r) for r in p.records)
    log.write_bytes(raw)

    for flag in ("--verify", "--json", "--plain"):
        rc, err = _run(capsys, log, "--web", flag)
        assert rc == 2 and "--web is the viewer in a browser: it goes without --verify, --json and --plain" in err, err
    rc, err = _run(capsys, log, "--no-browser")
    assert rc == 2 and "--no-browser goes with --web" in err
    rc, err = _run(capsys, log, "--web", "--no-browser", "--seat", "5")
    assert rc == 2 and "--seat wants 0..1, all or spectator, not '5'" in err, err

    damaged = tmp_path / "damaged.wlog"
    damaged.write_bytes(raw[:40] + b"\xff" * 64 + raw[40:])
    rc, err = _run(capsys, damaged, "--web", "--no-browser")
    assert rc == 1 and err.startswith(f"wildtable replay: {damaged}: "), err
    assert len(err.strip().splitlines()) == 1
