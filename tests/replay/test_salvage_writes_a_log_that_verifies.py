"""`wildtable replay LOG --salvage OUT` writes the records before the damage (or a torn
tail) as a new log, 0600, never over a file, which --verify reads as OK with the same
last seq and hash as --verify --upto that seq of the damaged one."""

from __future__ import annotations

import stat

from wildtable.cli import main
from wildtable.protocol.logfmt import read_log

from logs import selfplay_log

DATA = selfplay_log(seats=3, seed=11)


def _run(capsys, *argv):
    rc = main(["replay", *map(str, argv)])
    out = capsys.readouterr()
    return rc, out.out, out.err


def _line(out: str, start: str) -> str:
    return next(x for x in out.splitlines() if x.startswith(start))


def test_salvage_of_a_damaged_log_verifies(tmp_path, capsys):
    offsets = read_log(DATA).offsets
    bad = bytearray(DATA)
    bad[offsets[40] + 10] ^= 0xFF
    src, out = tmp_path / "bad.wlog", tmp_path / "good.wlog"
    src.write_bytes(bytes(bad))
    rc, text, err = _run(capsys, src, "--salvage", out)
    assert rc == 0, err
    assert out.read_bytes() == DATA[:offsets[40]]
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    assert f"{out}: the header and 40 records" in text
    rc, verified, err = _run(capsys, out, "--verify")
    assert rc == 0 and verified.startswith(f"{out}: OK - Run Wild"), verified + err
    seq = int(_line(verified, "records:").split("seq: ")[1].split()[0])
    rc, damaged, _ = _run(capsys, src, "--verify")
    assert rc == 1 and _line(damaged, "final hash:") == _line(verified, "final hash:")
    assert f"up to seq {seq}," in damaged
    # never over an existing file
    rc, _, err = _run(capsys, src, "--salvage", out)
    assert rc == 2 and "exists already" in err


def test_salvage_of_a_torn_log_leaves_the_cut_record_out(tmp_path, capsys):
    offsets = read_log(DATA).offsets
    src, out = tmp_path / "torn.wlog", tmp_path / "whole.wlog"
    src.write_bytes(DATA[:offsets[50] + 6])
    rc, text, err = _run(capsys, src, "--salvage", out)
    assert rc == 0 and "torn tail of 6 bytes left out" in text, text + err
    rc, verified, err = _run(capsys, out, "--verify")
    assert rc == 0 and verified.startswith(f"{out}: OK"), verified + err
