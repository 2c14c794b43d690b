"""`wildtable replay LOG --verify` of a log cut mid-record says how many bytes at which
offset it dropped, on its report (stdout) and not only as a warning, calls the log
INCOMPLETE (never "OK": its game may have gone on), and exits 0 only when
those bytes are a record cut mid-write (a torn tail); other bytes after the last whole
record are damage: a sentence and exit status 1."""

from __future__ import annotations

import subprocess
import sys

from wildtable.protocol.logfmt import read_log

WILDTABLE = [sys.executable, "-m", "wildtable"]


def _run(*argv) -> subprocess.CompletedProcess:
    return subprocess.run(WILDTABLE + list(map(str, argv)), capture_output=True, text=True, timeout=60)


def _log(tmp_path) -> bytes:
    path = tmp_path / "game.wlog"
    assert _run("selfplay", "go-wild", "--players", "2", "--seed", "3", "--log", path).returncode == 0
    return path.read_bytes()


def test_a_log_cut_mid_record_names_the_bytes_dropped_and_where(tmp_path):
    data = _log(tmp_path)
    offsets = read_log(data).offsets
    start, end = offsets[10], offsets[11]           # cut the 11th record in the middle of its payload
    cut = tmp_path / "cut.wlog"
    cut.write_bytes(data[:start + (end - start) // 2])
    dropped = (end - start) // 2
    proc = _run("replay", cut, "--verify")
    assert proc.returncode == 0, proc.stderr
    assert f"{cut}: INCOMPLETE - Go Wild!" in proc.stdout and "OK" not in proc.stdout
    assert (f"torn tail: the last record was cut mid-write: {dropped} bytes at byte offset {start} were dropped"
            in proc.stdout), proc.stdout
    assert f"torn tail of {dropped} bytes at offset {start}" in proc.stderr
    # a cut inside the frame's length field is a torn tail too
    cut.write_bytes(data[:start + 3])
    proc = _run("replay", cut, "--verify")
    assert proc.returncode == 0 and "3 bytes at byte offset" in proc.stdout, proc.stdout + proc.stderr


def test_bytes_after_the_last_record_that_are_no_cut_record_fail_the_check(tmp_path):
    data = _log(tmp_path)
    bad = tmp_path / "bad.wlog"
    bad.write_bytes(data + (64).to_bytes(4, "little") + b"\x01\x02\x03\x04" + b"<html>")
    proc = _run("replay", bad, "--verify")
    assert proc.returncode == 1, proc.stdout
    assert proc.stderr.strip() == (f"wildtable replay: {bad}: the last 14 bytes (from byte offset {len(data)}) are "
                                   f"not a record cut mid-write: they do not start a record; the log is damaged")
    assert "OK" not in proc.stdout
