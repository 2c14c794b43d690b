"""What a table says and does while its log cannot be written (docs/ARCHITECTURE.md
"Disk full", docs/PROTOCOL.md `notice`).

A full disk pauses play: the log writer waits out the group it had no room for
(server/logwriter.py), and each table answers what comes to it meanwhile without
writing anything: an intent or a join is refused (``storage_full``), an answer the
connection made itself goes out, and what must happen but would show or change the
table (rejoin, spectate, leave) waits, bounded, until play resumes. A writer that
failed for good (the server is stopping) is answered ``storage_error`` the same way.
"""

from __future__ import annotations

from typing import Any

import attrs

from wildtable.protocol import messages as m

PAUSED = "storage_full"       # the pause notice's code, and the refusals' while it lasts
RESUMED = "storage_resumed"   # the notice that play goes on
FAILED = "storage_error"      # the refusals' code while a server that cannot write its logs stops
PAUSED_TEXT = ("the server's disk is full: play is paused and resumes by itself when there is room; "
               "nothing you did is lost")
REFUSED_TEXT = ("the server's disk is full: this was not done; play is paused and resumes by itself when "
                "there is room (a notice says so): send it again then")
WAIT_TEXT = ("the server's disk is full: play is paused; your request is answered when play resumes, "
             "by itself, once there is room")
RESUMED_TEXT = "the server's disk has room again: play resumes"
FAILED_TEXT = ("the server cannot write its logs and is stopping: this was not done; everything it "
               "acknowledged is kept; connect again once it is back")
MAX_WAITING = 1024            # requests a paused table keeps for after the pause (then refuses)


@attrs.frozen
class Answer:
    """What a table does now with a request that came while its log cannot be written:
    ``send`` goes to the request's connection at once; ``keep`` puts it aside for after
    the pause (``send`` then says it waits)."""
    send: Any = None
    keep: bool = False


def answer(kind: str, req, table_id: str, *, failed: bool, kept: int) -> Answer:
    """The answer to ``req`` of ``kind`` (intent, join, reply, rejoin, spectate, leave,
    wake) while paused, or while stopping (``failed``); ``kept``: how many the table keeps
    already."""
    code, text = (FAILED, FAILED_TEXT) if failed else (PAUSED, REFUSED_TEXT)
    if kind == "intent":
        return Answer(m.Rejected(req.intent.id, code, text))
    if kind == "reply":
        return Answer(req.message)
    if kind == "wake":
        return Answer()
    if kind == "join":
        return Answer(m.Error(code, text, ref="join"))
    if failed:
        # stopping: nothing more is shown or changed (a leave's seat is kept by its token)
        return Answer(None if kind == "leave" else m.Error(code, text, ref=kind))
    if kind == "leave" and not req.notify:
        return Answer(keep=True)      # a connection gone: at most one each, never dropped (its seat would look taken)
    if kept >= MAX_WAITING:
        return Answer(None if kind == "leave" else m.Error(code, REFUSED_TEXT, ref=kind))
    if kind == "leave":
        return Answer(keep=True)
    return Answer(m.Notice(table_id, PAUSED, WAIT_TEXT), keep=True)


def paused_notice(table_id: str) -> m.Notice:
    return m.Notice(table_id, PAUSED, PAUSED_TEXT)


def resumed_notice(table_id: str) -> m.Notice:
    return m.Notice(table_id, RESUMED, RESUMED_TEXT)
