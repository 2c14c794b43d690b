"""Run Wild: a player who draws cards through someone's Draw-3 is no longer stuck.

docs/DECISIONS.md "Run Wild", "Stuck rounds": a stuck declaration is "cleared by their next
action, and by drawing cards through someone's Draw-3: new cards may be playable". Before
this rule the last active player could play a Draw-3 and declare stuck at once, ending
the round on players who had declared stuck, with the 3 cards they were just made to
draw (15 points or more each) in their hands (issue #16).
"""

from __future__ import annotations

import pytest

from wildtable.protocol.codec import to_data
from wildtable.protocol.engine import ChanceOutcome, TableConfig, state_hash
from wildtable.protocol.errors import IllegalAction
from wildtable.protocol.games import run_wild as rw
from wildtable.protocol.games.run_wild import Draw, PlayDraw3, State, Stuck
from wildtable.protocol.logfmt import (
    FORMAT_VERSION, ActionAccepted, ChanceRecorded, Header, StateHashed, encode_record, read_log,
)
from wildtable.protocol.replay import replay

DRAW3 = 69


def act(state, seat, action):
    return rw.apply(state, seat, action)


def kinds(events):
    return [e["event"] for e in events]


def test_the_issue_scenario_draw3_then_stuck_does_not_end_the_round():
    # seats 1 and 2 declared stuck; seat 0, the last active player, plays a Draw-3 and
    # declares stuck at once
    st = State.arranged(3, hands={0: ["D3", "B1"], 1: ["G5"], 2: ["Y7"]},
                        piles={1: ["G1", "G2", "G3", "G9"], 2: ["Y1", "Y2", "Y3"]}, stuck=(1, 2))
    st, events = act(st, 0, PlayDraw3(DRAW3))
    assert kinds(events) == ["draw3_played", "stuck_cleared", "stuck_cleared"]
    assert events[0]["drawn"] == [0, 3, 3]
    assert [e["seat"] for e in events[1:]] == [1, 2]
    assert st.stuck == (False, False, False)
    v = rw.view(st, None)
    assert [p["stuck"] for p in v["players"]] == [False, False, False]

    st, events = act(st, 0, Stuck())
    assert kinds(events) == ["stuck_declared"]           # not "round_ended": 1 and 2 may play again
    assert st.phase == "playing" and st.score.ended_by is None
    # the two must say so again (or play) for the round to end as "all stuck"
    st, _ = act(st, 1, Stuck())
    st, events = act(st, 2, Stuck())
    assert kinds(events)[:2] == ["stuck_declared", "round_ended"] and events[1]["reason"] == "all_stuck"


def test_a_stuck_player_who_draws_fewer_than_three_is_cleared_too():
    st = State.arranged(2, hands={0: ["D3", "B1"], 1: ["G5"]}, piles={1: ["G1"]}, stuck=(1,))
    st, events = act(st, 0, PlayDraw3(DRAW3))
    assert events[0]["drawn"] == [0, 1] and kinds(events) == ["draw3_played", "stuck_cleared"]
    assert st.stuck == (False, False)


def test_a_stuck_player_with_an_empty_pile_draws_nothing_and_stays_stuck():
    # no new card, nothing new to play: the declaration stands, so the Draw-3 player's
    # own "stuck" then ends the round as before
    st = State.arranged(3, hands={0: ["D3", "B1"], 1: ["G5"], 2: ["Y7"]},
                        piles={1: ["G1", "G2"]}, stuck=(1, 2))
    st, events = act(st, 0, PlayDraw3(DRAW3))
    assert events[0]["drawn"] == [0, 2, 0]
    assert kinds(events) == ["draw3_played", "stuck_cleared"] and events[1]["seat"] == 1
    assert st.stuck == (False, False, True)
    st, _ = act(st, 1, Stuck())
    st, events = act(st, 0, Stuck())
    assert st.phase in ("scored", "over") and st.score.ended_by == "all_stuck"


def test_the_draw3_player_is_cleared_as_by_any_action_and_others_not_stuck_get_no_event():
    st = State.arranged(3, hands={0: ["D3", "B1"], 1: ["G5"], 2: ["Y7"]},
                        piles={1: ["G1", "G2", "G3"], 2: ["Y1", "Y2", "Y3"]}, stuck=(0, 2))
    st, events = act(st, 0, PlayDraw3(DRAW3))
    assert kinds(events) == ["draw3_played", "stuck_cleared", "stuck_cleared"]
    assert sorted(e["seat"] for e in events[1:]) == [0, 2]
    assert st.stuck == (False, False, False)


def test_a_draw3_as_the_last_card_ends_the_round_with_no_draws_and_no_clearing():
    st = State.arranged(2, hands={0: ["D3"], 1: ["G5"]}, piles={1: ["G1", "G2", "G3"]}, stuck=(1,))
    st, events = act(st, 0, PlayDraw3(DRAW3))
    assert events[0]["drawn"] == [0, 0] and "stuck_cleared" not in kinds(events)
    assert st.score.out == 0 and st.score.ended_by == "out"


def test_a_seat_sitting_out_a_tie_break_round_is_not_touched():
    st = State.arranged(3, hands={0: ["D3", "B1"], 2: ["Y7"]}, piles={2: ["Y1", "Y2", "Y3"]},
                        in_round=(0, 2), stuck=(2,))
    st, events = act(st, 0, PlayDraw3(DRAW3))
    assert events[0]["drawn"] == [0, 0, 3] and st.stuck == (False, False, False)
    with pytest.raises(IllegalAction) as info:
        act(st, 1, Draw())
    assert info.value.code == "not_in_round"


# ------------------------------------------------------------------ old logs

# A log written under rules version 1 (header "rules" left out) by the engine before this
# rule: seat 1 declares stuck, seat 0 plays its Draw-3 (seat 1 draws 3) and declares
# stuck, and the round (the whole game: rounds 1) ends "all stuck" with seat 1 holding
# 25 points. The hash is the one that engine computed for the final state.
_DECK = (0, 69, *range(1, 69), 70, 71)
_OLD_ACTIONS = [(0, rw.Ready()), (1, rw.Ready()), (None, rw.Go()), (1, Stuck()), (0, PlayDraw3(DRAW3)), (0, Stuck())]
_OLD_FINAL_HASH = bytes.fromhex("6746d6813534e8ce5a8c0f3ceab95444")


def test_a_rules_1_log_replays_with_the_old_behaviour_and_its_hashes_check():
    recs = [ChanceRecorded(1, "deal", _DECK)]
    recs += [ActionAccepted(i, seat, to_data(a), by="table" if seat is None else "player")
             for i, (seat, a) in enumerate(_OLD_ACTIONS, start=2)]
    recs.append(StateHashed(len(recs), _OLD_FINAL_HASH))
    header = Header(FORMAT_VERSION, rw.NAME, "old", 2, {"rounds": 1, "hand_size": 2})   # no "rules": 1
    contents = read_log(encode_record(header) + b"".join(encode_record(r) for r in recs))
    assert contents.header.rules == 1
    result = replay(contents)
    assert result.hashes_checked == 1
    assert result.state.phase == "over" and result.state.score.ended_by == "all_stuck"
    assert result.state.score.totals == (5, 25)


def test_the_same_actions_under_the_current_rules_do_not_end_the_round():
    st = rw.new_table(TableConfig(rw.NAME, 2, {"rounds": 1, "hand_size": 2, "first_dealer": 0}))
    st, _ = act(st, None, ChanceOutcome("deal", _DECK))
    for seat, a in _OLD_ACTIONS:
        st, _ = act(st, seat, a)
    assert st.phase == "playing" and st.stuck == (True, False)
    assert state_hash(rw, st) != _OLD_FINAL_HASH
