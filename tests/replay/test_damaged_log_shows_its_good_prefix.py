"""One damaged byte hides nothing before it (issue #27, docs/LOG-FORMAT.md 5): a byte
flipped at ten random offsets of a selfplay log, and every mode (--verify, --plain,
--json, --upto) shows the records before the damage and names it: its byte offset, the
seq expected there, what to do; exit 1, or 0 with --upto before it."""

from __future__ import annotations

import json
import random

import pytest

from wildtable.cli import main
from wildtable.protocol.logfmt import ActionAccepted, ChanceRecorded, read_log, read_prefix

from logs import selfplay_log

DATA = selfplay_log(seats=3, seed=7)
CONTENTS = read_log(DATA)
HEADER_END = CONTENTS.offsets[0]
# ten offsets in the records, before the last one (whose damaged length would read as a torn write)
FLIPS = sorted(random.Random(27).sample(range(HEADER_END, CONTENTS.offsets[-1]), 10))


def _run(capsys, *argv) -> tuple[int, str, str]:
    rc = main(["replay", *map(str, argv)])
    out = capsys.readouterr()
    return rc, out.out, out.err


def _damaged(tmp_path, pos: int):
    """The log with byte ``pos`` flipped, the offset of the record it is in, and the last
    seq before that record."""
    data = bytearray(DATA)
    data[pos] ^= 0x5A
    path = tmp_path / "flipped.wlog"
    path.write_bytes(bytes(data))
    k = max(i for i, off in enumerate(CONTENTS.offsets) if off <= pos)
    last = max([r.seq for r in CONTENTS.records[:k] if type(r) in (ActionAccepted, ChanceRecorded)], default=0)
    return path, CONTENTS.offsets[k], last


@pytest.mark.parametrize("pos", FLIPS)
def test_every_mode_shows_the_records_before_a_flipped_byte_and_names_it(tmp_path, capsys, pos):
    path, at, last = _damaged(tmp_path, pos)
    assert read_prefix(path.read_bytes()).damage.offset == at

    rc, out, err = _run(capsys, path, "--verify")
    assert rc == 1, out + err
    assert out.startswith(f"{path}: DAMAGED - Run Wild") and " OK " not in out, out
    assert f"byte offset {at}, where seq {last + 1} was expected" in out, out
    assert f"up to seq {last}" in out and f"seq: {last} " in out, out
    assert "--salvage OUT" in out and f"byte offset {at}" in err, err

    rc, out, err = _run(capsys, path, "--plain", "--events")
    assert rc == 1, err
    lines = out.splitlines()
    assert lines[0].startswith("[   0] header: run-wild")
    shown = [x for x in lines if x.startswith("[")]
    assert len(shown) == 1 + CONTENTS.offsets.index(at)         # the header and every record before
    assert lines[-1].startswith(f"DAMAGED: the log ends early, after seq {last}:") and f"byte offset {at}" in lines[-1]

    rc, out, err = _run(capsys, path, "--json")
    assert rc == 1, err
    doc = json.loads(out)
    assert doc["seq"] == last and doc["complete"] is False
    assert doc["damage"]["offset"] == at and doc["damage"]["seq"] == last + 1

    # --upto before the damage: as if the log ended there, exit 0, and a note
    if last >= 1:
        rc, out, err = _run(capsys, path, "--verify", "--upto", last - 1)
        assert rc == 0 and f"{path}: OK - Run Wild" in out, out + err
        assert "damaged later" in err and f"byte offset {at}" in err, err
        rc, out, err = _run(capsys, path, "--plain", "--upto", last - 1)
        assert rc == 0 and "DAMAGED" not in out, err


def test_a_cut_log_is_incomplete_not_ok(tmp_path, capsys):
    path = tmp_path / "cut.wlog"
    path.write_bytes(DATA[:CONTENTS.offsets[len(CONTENTS.offsets) * 2 // 3] + 5])     # mid-record
    rc, out, err = _run(capsys, path, "--verify")
    assert rc == 0, err
    assert out.startswith(f"{path}: INCOMPLETE - Run Wild") and "OK" not in out, out
    assert "The log is incomplete" in out
