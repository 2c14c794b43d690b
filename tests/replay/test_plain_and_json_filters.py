"""`wildtable replay --plain/--json` cut a long log down (issue #27): --events prints one
line per record, --by-seat, --kind, --refused and --find keep only the records they
name, together as well as alone, and --json gives the same records as data."""

from __future__ import annotations

import json

import pytest

from wildtable.cli import main
from wildtable.protocol.logfmt import ActionAccepted, ChanceRecorded, IntentRejected, read_log

from logs import selfplay_log

DATA = selfplay_log(seats=3, seed=7, refused=3)
RECORDS = read_log(DATA).records


@pytest.fixture
def log(tmp_path):
    path = tmp_path / "game.wlog"
    path.write_bytes(DATA)
    return path


def _plain(capsys, log, *flags) -> list[str]:
    rc = main(["replay", str(log), "--plain", "--events", *map(str, flags)])
    out = capsys.readouterr()
    assert rc == 0, out.err
    return out.out.splitlines()


def test_events_is_one_line_per_record(capsys, log):
    lines = _plain(capsys, log)
    assert len(lines) == 1 + len(RECORDS)
    assert all(x.startswith("[") for x in lines) and not any(x.startswith("       |") for x in lines)


def test_each_filter_keeps_only_what_it_names(capsys, log):
    refused = _plain(capsys, log, "--refused")
    assert len(refused) == 3 and all("REJECTED after seq" in x and "no_such_card" in x for x in refused)
    by1 = _plain(capsys, log, "--by-seat", 1)
    assert len(by1) == sum(1 for r in RECORDS if getattr(r, "seat", None) == 1) and by1
    assert all(": seat 1: " in x for x in by1), by1[:3]
    chance = _plain(capsys, log, "--kind", "chance")
    assert len(chance) == sum(1 for r in RECORDS if type(r) is ChanceRecorded) >= 2
    draws = _plain(capsys, log, "--kind", "draw3", "--kind", "draw")
    kinds = {r.action["kind"] for r in RECORDS if type(r) is ActionAccepted and r.action.get("kind") in
             ("draw", "draw3")}
    assert len(draws) == sum(1 for r in RECORDS if type(r) is ActionAccepted and r.action.get("kind") in kinds) > 0
    found = _plain(capsys, log, "--find", "SHUFFLE OF")
    assert found and all("a shuffle of" in x for x in found)
    # together: a record passes each
    seat = next(r.seat for r in RECORDS if type(r) is IntentRejected)
    both = _plain(capsys, log, "--refused", "--by-seat", seat)
    assert len(both) == sum(1 for r in RECORDS if type(r) is IntentRejected and r.seat == seat) >= 1


def test_plain_without_events_keeps_the_states_of_what_passes(capsys, log):
    rc = main(["replay", str(log), "--plain", "--kind", "chance"])
    out = capsys.readouterr().out.splitlines()
    assert rc == 0
    assert any(x.startswith("       | ") for x in out)
    assert not any(": seat " in x and x.startswith("[") and "chance" not in x for x in out)


def test_json_gives_the_same_records_as_data(capsys, log):
    rc = main(["replay", str(log), "--json", "--refused"])
    doc = json.loads(capsys.readouterr().out)
    assert rc == 0 and len(doc["records"]) == 3
    first = doc["records"][0]
    assert "rejected" in first["kind"] and first["record"]["code"] == "no_such_card" and first["detail"]
    rc = main(["replay", str(log), "--json", "--events", "--kind", "chance"])
    doc = json.loads(capsys.readouterr().out)
    assert [r["line"] for r in doc["records"]][:1] and all("record" not in r for r in doc["records"])


def test_a_seat_finds_no_other_seats_refused_intent_by_its_kind(capsys, log):
    r = next(r for r in RECORDS if type(r) is IntentRejected)
    other = (r.seat + 1) % 3
    rc = main(["replay", str(log), "--plain", "--events", "--seat", str(other), "--kind", "discard"])
    out = capsys.readouterr()
    own = [x for x in RECORDS if type(x) is IntentRejected and x.seat == other]
    assert rc == 0 and len(out.out.splitlines()) == len(own) and f"seat {r.seat}:" not in out.out, out.out
    rc = main(["replay", str(log), "--plain", "--events", "--seat", str(r.seat), "--kind", "discard"])
    out = capsys.readouterr()
    assert rc == 0 and f"REJECTED after seq {r.after}: seat {r.seat}: discard" in out.out, out.out


def test_filters_without_plain_or_json_are_a_usage_error(capsys, log):
    assert main(["replay", str(log), "--refused"]) == 2
    assert "go with --plain or --json" in capsys.readouterr().err
    assert main(["replay", str(log), "--verify", "--events"]) == 2
    assert main(["replay", str(log), "--plain", "--by-seat", "9"]) == 2
    assert "--by-seat wants 0..2" in capsys.readouterr().err
