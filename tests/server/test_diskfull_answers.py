"""What a table answers while its disk is full or its server stops (server/diskfull.py):
pure decisions, checked request kind by request kind (docs/PROTOCOL.md `notice`)."""

from __future__ import annotations

from wildtable.protocol import messages as m
from wildtable.server import diskfull
from wildtable.server.table import IntentReq, JoinReq, LeaveReq, RejoinReq, SpectateReq


def test_while_paused_intents_and_joins_are_refused_at_once_saying_play_resumes_by_itself():
    a = diskfull.answer("intent", IntentReq(None, m.Intent(7, {"kind": "draw"}), 0.0, 0.0), "t1", failed=False, kept=0)
    assert a.send == m.Rejected(7, "storage_full", diskfull.REFUSED_TEXT) and not a.keep
    assert "resumes by itself" in a.send.reason
    a = diskfull.answer("join", JoinReq(None, None, "ann"), "t1", failed=False, kept=0)
    assert a.send.code == "storage_full" and a.send.ref == "join" and not a.keep


def test_while_paused_what_would_show_the_table_waits_bounded_and_a_gone_connection_always_waits():
    for kind, req in (("rejoin", RejoinReq(None, 0, "tok")), ("spectate", SpectateReq(None))):
        a = diskfull.answer(kind, req, "t1", failed=False, kept=0)
        assert a.keep and a.send == m.Notice("t1", "storage_full", diskfull.WAIT_TEXT)
        full = diskfull.answer(kind, req, "t1", failed=False, kept=diskfull.MAX_WAITING)
        assert not full.keep and full.send.code == "storage_full" and full.send.ref == kind
    assert diskfull.answer("leave", LeaveReq(None), "t1", failed=False, kept=0).keep
    assert not diskfull.answer("leave", LeaveReq(None), "t1", failed=False, kept=diskfull.MAX_WAITING).keep
    assert diskfull.answer("leave", LeaveReq(None, notify=False), "t1", failed=False, kept=diskfull.MAX_WAITING).keep


def test_while_a_failed_server_stops_nothing_is_kept_and_refusals_say_storage_error():
    a = diskfull.answer("intent", IntentReq(None, m.Intent(7, {"kind": "draw"}), 0.0, 0.0), "t1", failed=True, kept=0)
    assert a.send.code == "storage_error" and "stopping" in a.send.reason
    for kind, req in (("rejoin", RejoinReq(None, 0, "tok")), ("spectate", SpectateReq(None)),
                      ("leave", LeaveReq(None, notify=False)), ("join", JoinReq(None, None, "ann"))):
        a = diskfull.answer(kind, req, "t1", failed=True, kept=0)
        assert not a.keep and (a.send is None or a.send.code == "storage_error"), (kind, a)
