"""Log format 2: action and rejected records may carry what explains a fair order (the
intent's arrival, its connection's delay estimate, its send time, the hold). A format 1
log (written before them) still reads and replays; a format 1 log that holds them does
not (strict decoding: the fields are new in format 2)."""

from __future__ import annotations

import pytest

from wildtable.protocol.errors import LogError
from wildtable.protocol.logfmt import (
    FORMAT_VERSION, ActionAccepted, ChanceRecorded, Header, IntentRejected, encode_record, read_log,
)
from wildtable.protocol.replay import replay


def _log(fmt: int, *records) -> bytes:
    head = Header(fmt, "run-wild", "t1", 2, {"first_dealer": 0}, rules=2)
    deal = ChanceRecorded(1, "deal", tuple(range(72)))
    return b"".join(encode_record(r) for r in (head, deal, *records))


def test_format_2_keeps_the_order_fields():
    ready = ActionAccepted(2, 0, {"kind": "ready"}, 1, recv=100.25, delay=0.03, sent=100.22, hold=0.06)
    no = IntentRejected(2, 1, {"kind": "ready"}, "already_ready", "You are ready.", 2,
                        recv=100.5, delay=0.001, sent=100.499, hold=0.06)
    assert FORMAT_VERSION >= 2
    contents = read_log(_log(2, ready, no))
    assert contents.records[1:] == (ready, no)
    assert replay(contents).seq == 2


def test_a_format_1_log_still_reads_and_replays():
    contents = read_log(_log(1, ActionAccepted(2, 0, {"kind": "ready"}, 1, recv=100.25),
                             IntentRejected(2, 1, {"kind": "ready"}, "x", "y", 2)))
    assert contents.header.format == 1
    assert replay(contents).seq == 2


@pytest.mark.parametrize("record", [
    ActionAccepted(2, 0, {"kind": "ready"}, 1, recv=100.25, sent=100.2),
    IntentRejected(1, 1, {"kind": "ready"}, "x", "y", 2, recv=100.5),
])
def test_a_format_1_log_with_a_format_2_field_is_refused(record):
    with pytest.raises(LogError) as info:
        read_log(_log(1, record))
    assert info.value.code == "bad_record"
