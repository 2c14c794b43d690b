"""A file that does not start like a log is "not a wildtable log" (issue #27), in every
mode, not `record length 1769414691 exceeds the cap`; a log whose header is damaged is
still called damaged, not "not a log"."""

from __future__ import annotations

import pytest

from wildtable.cli import main
from wildtable.protocol.errors import LogError
from wildtable.protocol.logfmt import FRAME_HEADER, read_log

from logs import selfplay_log

NOT_LOGS = {
    "notes.txt": b"# these are my notes, not a log\n" * 20,
    "image.png": b"\x89PNG\r\n\x1a\n" + bytes(200),
    "archive.zip": b"PK\x03\x04" + bytes(100),
    "small.bin": (40).to_bytes(4, "little") + b"\x00\x00\x00\x00" + b"\x01" * 40,   # a length, then no map
}


@pytest.mark.parametrize("name", sorted(NOT_LOGS))
@pytest.mark.parametrize("mode", [["--verify"], ["--json"], ["--plain"], ["--json", "--seat", "0"]])
def test_a_file_that_is_not_a_log_is_called_so(tmp_path, capsys, name, mode):
    path = tmp_path / name
    path.write_bytes(NOT_LOGS[name])
    rc = main(["replay", str(path), *mode])
    out = capsys.readouterr()
    assert rc == 1 and out.out == "", out
    assert out.err.startswith(f"wildtable replay: {path}: not a wildtable log"), out.err


def test_a_log_with_a_damaged_header_is_damaged_not_foreign():
    data = bytearray(selfplay_log())
    data[FRAME_HEADER + 12] ^= 0x01         # inside the header's payload: its CRC fails
    with pytest.raises(LogError) as e:
        read_log(bytes(data))
    assert e.value.code == "bad_crc" and "not a wildtable log" not in str(e.value)
