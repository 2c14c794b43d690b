"""Run Wild's ready timer (issue #15, item 4): after a deal, a seat that never says
`ready` (a player who left or closed the client) held the table for good: the engine
had no timeout in phase `ready`. Setting `ready_timeout` (seconds, default 60, 0 = wait
for them): if no action is accepted for that long after the deal, the table's timer
readies every seat in the round not yet ready, and "Go!" follows. The timer's move is
an action like any other (`ready_timeout`, logged `by: timer`), so replay needs no clock.

Engine scenarios, without sockets; the server side is tests/server/test_run_wild_ready_timer_server.py."""

from __future__ import annotations

import pytest

from wildtable.protocol.codec import to_data
from wildtable.protocol.engine import ChanceOutcome, TableConfig, Timeout, state_hash
from wildtable.protocol.errors import IllegalAction
from wildtable.protocol.games import run_wild as rw
from wildtable.protocol.games.run_wild import Go, PlayMeld, Ready, State, card_id
from wildtable.protocol.logfmt import ActionAccepted, ChanceRecorded, Header, encode_record, read_log
from wildtable.protocol.replay import replay


def ready_timeout():
    """The timer's action, looked up by its wire tag (the log's name for it)."""
    return rw.ACTIONS.decode({"kind": "ready_timeout"}, "$.action")


def deal(st):
    """Settle the chance outcomes the table asks for (the dealer by lot, a shuffle), each
    the identity permutation; the state and the records they make, as the server logs them."""
    records = []
    while (req := rw.pending_chance(st)) is not None:
        outcome = ChanceOutcome(req.purpose, tuple(range(req.size)))
        st, _ = rw.apply(st, None, outcome)
        records.append(("chance", outcome))
    return st, records


def dealt(seats=2, **settings):
    st, _ = deal(rw.new_table(TableConfig(rw.NAME, seats, settings)))
    assert st.phase == "ready"
    return st


def refused(st, seat, action, code):
    with pytest.raises(IllegalAction) as info:
        rw.apply(st, seat, action)
    assert info.value.code == code, info.value.reason
    assert info.value.reason[0].isupper() and info.value.reason.endswith(".")


def test_the_default_is_a_timer_of_60_seconds_shown_with_the_settings():
    assert rw.default_settings()["ready_timeout"] == 60.0
    st = dealt(3)
    assert rw.timeout_action(st) == Timeout(60.0, None, ready_timeout())
    assert rw.view(st, 0)["settings"]["ready_timeout"] == 60.0
    assert rw.view(st, None)["settings"]["ready_timeout"] == 60.0
    assert to_data(ready_timeout()) == {"kind": "ready_timeout"}


def test_the_timer_readies_every_silent_seat_and_go_follows():
    st = dealt(3, ready_timeout=5)
    assert rw.timeout_action(st) == Timeout(5.0, None, ready_timeout())
    st, events = rw.apply(st, 1, Ready())                   # seat 1 is there; 0 and 2 are not
    assert rw.timeout_action(st) == Timeout(5.0, None, ready_timeout())
    assert rw.auto_action(st) is None
    st, events = rw.apply(st, None, ready_timeout())
    assert events == [{"event": "player_ready", "seat": 0, "timer": True},
                      {"event": "player_ready", "seat": 2, "timer": True}]
    assert st.ready == (True, True, True) and rw.to_move(st) == ()
    assert rw.auto_action(st) == Go()
    st, events = rw.apply(st, None, Go())
    assert events == [{"event": "round_started", "round": 1}] and st.phase == "playing"
    # during play the idle timer is the one that runs
    assert type(rw.timeout_action(st).action) is rw.IdleTimeout


def test_between_rounds_too():
    """The freeze of the issue: round 1 is over, round 2 is dealt, one player left."""
    st = State.arranged(2, hands={0: ["B1", "B2", "B3"], 1: ["G5"]})
    st, events = rw.apply(st, 0, PlayMeld((card_id("B", 1), card_id("B", 2), card_id("B", 3))))
    assert st.phase == "scored"
    st, _ = deal(st)
    assert st.phase == "ready" and st.deal.round == 2
    assert rw.timeout_action(st) == Timeout(60.0, None, ready_timeout())
    st, _ = rw.apply(st, 0, Ready())
    st, events = rw.apply(st, None, ready_timeout())
    assert events == [{"event": "player_ready", "seat": 1, "timer": True}]
    st, _ = rw.apply(st, None, rw.auto_action(st))
    assert st.phase == "playing" and st.deal.round == 2


def test_a_seat_sitting_a_tie_break_out_is_not_readied():
    st = State.arranged(3, hands={0: ["B1", "B2", "B3"], 1: ["G5"], 2: ["Y5"]}, settings={"rounds": 1},
                        totals=(20, 0, 0))
    st, events = rw.apply(st, 0, PlayMeld((card_id("B", 1), card_id("B", 2), card_id("B", 3))))
    assert {"event": "tie_break", "seats": [1, 2]} in events
    st, _ = deal(st)
    assert st.deal.in_round == (False, True, True)
    st, events = rw.apply(st, None, ready_timeout())
    assert [e["seat"] for e in events] == [1, 2]
    assert st.ready == (False, True, True) and rw.auto_action(st) == Go()


def test_zero_waits_for_every_seat():
    st = dealt(2, ready_timeout=0)
    assert rw.timeout_action(st) is None
    assert rw.view(st, 1)["settings"]["ready_timeout"] == 0.0


@pytest.mark.parametrize("value", [-1, 86401, "60", None, True])
def test_bad_values_are_refused(value):
    with pytest.raises(IllegalAction) as info:
        rw.new_table(TableConfig(rw.NAME, 2, {"ready_timeout": value}))
    assert info.value.code == "bad_settings" and "ready_timeout" in info.value.reason


def test_only_the_table_and_only_in_phase_ready():
    st = dealt(2)
    refused(st, 0, ready_timeout(), "not_your_seat")
    refused(rw.new_table(TableConfig(rw.NAME, 2, {})), None, ready_timeout(), "not_started")
    both = rw.apply(rw.apply(st, 0, Ready())[0], 1, Ready())[0]
    refused(both, None, ready_timeout(), "already_ready")       # "Go!" is due, not the timer
    playing = rw.apply(both, None, Go())[0]
    assert rw.timeout_action(playing).seconds == 120.0
    refused(playing, None, ready_timeout(), "already_started")


def test_the_setting_leaves_state_hashes_as_they_were():
    """A timer never changes how a log replays, so the setting is not hashed: the logs of
    tables created before it existed still verify."""
    assert state_hash(rw, dealt(2, ready_timeout=7)) == state_hash(rw, dealt(2))
    assert "ready_timeout" not in rw.snapshot(dealt(2))["settings"]


def test_a_log_with_the_timers_move_replays_without_a_clock():
    """As the server writes it: the chance records, the timer's move (seat None, by
    timer), then the table's "Go!"; replay folds it to the state the live table had."""
    live, chances = deal(rw.new_table(TableConfig(rw.NAME, 2, {"ready_timeout": 1})))
    header = Header(1, rw.NAME, "t1", 2, {"ready_timeout": 1}, rules=getattr(rw, "RULES_VERSION", 1))
    records, seq = [encode_record(header)], 0
    for _, outcome in chances:
        seq += 1
        records.append(encode_record(ChanceRecorded(seq, outcome.purpose, outcome.permutation)))
    for by, action in (("timer", ready_timeout()), ("table", Go())):
        live, _ = rw.apply(live, None, action)
        seq += 1
        records.append(encode_record(ActionAccepted(seq, None, to_data(action), by=by)))
    contents = read_log(b"".join(records))
    assert [r.by for r in contents.records if type(r) is ActionAccepted] == ["timer", "table"]
    result = replay(contents)
    assert result.state == live and live.phase == "playing"
