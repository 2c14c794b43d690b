"""A JSON log line's ``table`` and ``peer`` are the values the code gave the record
(server/oplog.py ``about``, as ``extra=``), never words read back out of its message: a
message that merely says "table x" or "from y" names nothing, and a value with spaces or
odd characters arrives whole (docs/OPERATING.md, "Logs")."""

from __future__ import annotations

import json
import logging

from wildtable.server.oplog import JsonFormatter, about


def _line(msg: str, *args, **extra) -> dict:
    record = logging.LogRecord("wildtable.server", logging.WARNING, __file__, 1, msg, args, None)
    for k, v in extra.items():
        setattr(record, k, v)
    return json.loads(JsonFormatter().format(record))


def test_the_fields_given_are_the_fields_written():
    d = _line("closing %s (%s): it took no bytes for %g s", "10.0.0.7:5555", "ann", 10.0,
              **about(peer="10.0.0.7:5555"))
    assert d["peer"] == "10.0.0.7:5555" and "table" not in d
    d = _line("table %s created: %s for %d", "ab cd", "go-wild", 2, **about(table="ab cd"))
    assert d["table"] == "ab cd"            # whole, spaces and all
    assert d["event"] == "table %s created: %s for %d"


def test_words_in_a_message_name_nothing():
    # a player's name, a table's words: the message may say anything
    d = _line("player %s said: table %s from %s", "eve", "t1", "1.2.3.4")
    assert "table" not in d and "peer" not in d, d


def test_about_leaves_out_what_it_is_not_about():
    assert about() == {}
    assert about(table=7) == {"table": "7"}
    assert about(peer="[::1]:80", table="t") == {"table": "t", "peer": "[::1]:80"}
