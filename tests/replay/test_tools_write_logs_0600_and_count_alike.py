"""Every log the tools write is 0600 (it holds every shuffle), selfplay --log too, even
over a file that was 0644; and `replay --verify` counts the records as `export` does and
docs/LOG-FORMAT.md says: the header is one of them (issue #27: export said 53, verify 52)."""

from __future__ import annotations

import stat

from wildtable.cli import main
from wildtable.protocol.logfmt import iter_frames


def test_selfplay_writes_its_log_0600(tmp_path, capsys):
    path = tmp_path / "game.wlog"
    path.write_bytes(b"old")
    path.chmod(0o644)
    assert main(["selfplay", "go-wild", "--players", "2", "--seed", "3", "--log", str(path)]) == 0
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert main(["replay", str(path), "--verify"]) == 0


def test_verify_counts_the_records_export_counts(tmp_path, capsys):
    path = tmp_path / "game.wlog"
    assert main(["selfplay", "go-wild", "--players", "2", "--seed", "3", "--log", str(path)]) == 0
    capsys.readouterr()
    frames = sum(1 for _ in iter_frames(path.read_bytes()))     # what `export` counts: the store's rows
    assert main(["replay", str(path), "--verify"]) == 0
    out = capsys.readouterr().out
    assert f"records: {frames} (the header and {frames - 1} more)" in out, out
