"""Run Wild scenarios: the rulebook's own examples, the docs/DECISIONS.md "Run Wild" readings, and every
rejection code. States are laid out with ``State.arranged`` (cards by label: "B6" is the
blue 6; wilds and Draw-3s by id, see WILD/DRAW3 below)."""

from __future__ import annotations

import pytest

from wildtable.protocol.states import evolve
from wildtable.protocol.codec import to_data
from wildtable.protocol.engine import ChanceOutcome, ChanceRequest, TableConfig, Timeout, state_hash
from wildtable.protocol.errors import IllegalAction, ProtocolError
from wildtable.protocol.games import REGISTRY
from wildtable.protocol.games import run_wild as rw
from wildtable.protocol.games.run_wild import (
    Add, Draw, Go, IdleTimeout, PlayDraw3, PlayMeld, Ready, State, Stuck, Swap, Take, card_id,
)

WILD = 60          # the first wild; 61.. are the others
WILD2 = 61
DRAW3 = 69         # the first Draw-3


def c(label: str) -> int:
    """Card id of a number card label such as "B6"."""
    return card_id(label[0], int(label[1:]))


def act(state, seat, action):
    return rw.apply(state, seat, action)


def refused(state, seat, action, code):
    """Assert the action is refused with ``code``; return the reason (a full sentence)."""
    with pytest.raises(IllegalAction) as info:
        rw.apply(state, seat, action)
    assert info.value.code == code, info.value.reason
    assert info.value.reason and info.value.reason[0].isupper() and info.value.reason.endswith(".")
    return info.value.reason


def meld(state, meld_id):
    return next(m for m in state.melds if m.id == meld_id)


def hand(state, seat):
    return rw.view(state, seat)["hand"]


def labels(cards):
    return [rw.card_label(x) for x in cards]


def kinds(events):
    return [e["event"] for e in events]


def dealt(seats=3, settings=None, perm=None):
    """A fresh table after round 1's deal (deck in id order unless ``perm``), seat 0
    dealing (the host's choice; drawn by lot: test_first_dealer.py)."""
    st = rw.new_table(TableConfig(rw.NAME, seats, {"first_dealer": 0, **(settings or {})}))
    st, _ = act(st, None, ChanceOutcome("deal", tuple(perm or range(72))))
    return st


def started(seats=3, settings=None):
    st = dealt(seats, settings)
    for s in range(seats):
        st, _ = act(st, s, Ready())
    st, _ = act(st, None, rw.auto_action(st))
    return st


# ------------------------------------------------------------------ cards and module


def test_module_is_registered_with_its_names():
    assert REGISTRY["run-wild"] is rw
    assert (rw.NAME, rw.TITLE, rw.MIN_PLAYERS, rw.MAX_PLAYERS) == ("run-wild", "Run Wild", 2, 4)


def test_card_ids_labels_and_info():
    assert rw.card_info(5) == {"id": 5, "kind": "number", "colour": "blue", "number": 6}
    assert rw.card_info(59) == {"id": 59, "kind": "number", "colour": "purple", "number": 12}
    assert rw.card_info(12) == {"id": 12, "kind": "number", "colour": "green", "number": 1}
    assert rw.card_info(60) == {"id": 60, "kind": "wild"}
    assert rw.card_info(68)["kind"] == "wild" and rw.card_info(69) == {"id": 69, "kind": "draw3"}
    assert [rw.card_label(x) for x in (5, 12, 35, 47, 59, 60, 71)] == ["B6", "G1", "Y12", "R12", "P12", "W", "D3"]
    kinds_ = [rw.card_info(x)["kind"] for x in range(72)]
    assert (kinds_.count("number"), kinds_.count("wild"), kinds_.count("draw3")) == (60, 9, 3)
    assert c("R9") == 44 and card_id("red", 9) == 44 and card_id(3, 9) == 44


def test_hand_points_example_three_numbers_a_wild_and_a_draw3_score_35():
    # Rulebook: number 5 each, wild 10, Draw-3 10.
    assert rw.hand_points(rw._mask([c("B1"), c("G5"), c("P12"), WILD, DRAW3])) == 35


def test_settings_defaults_and_refusals():
    assert rw.default_settings() == {"rounds": 4, "idle_timeout": 120.0, "ready_timeout": 60.0, "allow_all_wild_melds": False,
                                     "max_set_size": 0, "hand_size": 8, "first_dealer": -1, "fair_ms": 100}
    st = rw.new_table(TableConfig(rw.NAME, 2, {"idle_timeout": 30}))
    assert st.rules.idle_timeout == 30.0 and type(st.rules.idle_timeout) is float
    for settings in ({"rounds": 0}, {"rounds": "4"}, {"max_set_size": 2}, {"hand_size": 19},
                     {"idle_timeout": 0}, {"allow_all_wild_melds": 1}, {"colour_blind": True}):
        with pytest.raises(IllegalAction) as info:
            rw.new_table(TableConfig(rw.NAME, 3, settings))
        assert info.value.code == "bad_settings"
    for seats in (1, 5):
        with pytest.raises(IllegalAction) as info:
            rw.new_table(TableConfig(rw.NAME, seats, {}))
        assert info.value.code == "bad_settings"


def test_actions_round_trip_through_the_strict_codec():
    actions = [Ready(), Go(), PlayMeld((1, 2, 60), (2, 3, 4)), PlayMeld((1, 2, 3)), Draw(), Add(3, 41, None),
               Add(3, 60, 7), Take(2, 41), Swap(1, 60, 44, None), PlayDraw3(69), Stuck(), IdleTimeout()]
    for a in actions:
        data = to_data(a)
        assert rw.ACTIONS.decode(data) == a
    assert to_data(Draw()) == {"kind": "draw"}
    assert to_data(Take(3, 41)) == {"kind": "take", "meld": 3, "card": 41}
    assert rw.ACTIONS.decode({"kind": "meld", "cards": [0, 1, 2]}) == PlayMeld((0, 1, 2), ())
    for bad in ({"kind": "take", "meld": 1, "card": 72}, {"kind": "take", "meld": 1, "card": "41"},
                {"kind": "draw", "extra": 1}, {"kind": "meld", "cards": [0, 1, -1]}):
        with pytest.raises(ProtocolError):
            rw.ACTIONS.decode(bad)


# ------------------------------------------------------------------ deal, ready, Go!


@pytest.mark.parametrize("seats,each", [(2, 36), (3, 24), (4, 18)])
def test_whole_deck_dealt_round_robin_from_the_dealers_left(seats, each):
    st = rw.new_table(TableConfig(rw.NAME, seats, {"first_dealer": 0}))
    assert st.phase == "dealing" and rw.pending_chance(st) == ChanceRequest("deal", 72)
    assert rw.to_move(st) == () and rw.legal_actions(st, 0) == []
    refused(st, 0, Ready(), "not_started")
    refused(st, 0, Draw(), "not_started")
    st, events = act(st, None, ChanceOutcome("deal", tuple(range(72))))
    order = [(1 + k) % seats for k in range(seats)]      # seat 0 deals round 1; seat 1 gets the first card
    assert events == [{"event": "round_dealt", "round": 1, "dealer": 0, "seats": order}]
    for s in range(seats):
        mine = list(range(order.index(s), 72, seats))
        assert len(mine) == each
        assert hand(st, s) == sorted(mine[:8])
        assert rw.view(st, s)["pile"] == each - 8
        assert rw.snapshot(st)["piles"][s] == mine[8:]
    assert st.phase == "ready" and rw.pending_chance(st) is None


def test_hand_size_setting():
    st = dealt(4, {"hand_size": 3})
    assert [len(hand(st, s)) for s in range(4)] == [3, 3, 3, 3]
    assert [p["pile"] for p in rw.view(st, None)["players"]] == [15, 15, 15, 15]
    st = dealt(4, {"hand_size": 18})
    assert [p["pile"] for p in rw.view(st, None)["players"]] == [0, 0, 0, 0]


def test_bad_shuffles_are_refused():
    st = rw.new_table(TableConfig(rw.NAME, 2, {"first_dealer": 0}))
    for outcome, code in ((ChanceOutcome("deal", tuple(range(71))), "bad_permutation"),
                          (ChanceOutcome("deal", (0,) * 72), "bad_permutation"),
                          (ChanceOutcome("seat", tuple(range(72))), "wrong_chance")):
        with pytest.raises(IllegalAction) as info:
            act(st, None, outcome)
        assert info.value.code == code
    refused(st, 0, ChanceOutcome("deal", tuple(range(72))), "not_your_seat")
    st = started(2)
    with pytest.raises(IllegalAction) as info:
        act(st, None, ChanceOutcome("deal", tuple(range(72))))
    assert info.value.code == "no_chance_pending"


def test_no_play_before_go_then_ready_then_go():
    st = dealt(3)
    assert rw.to_move(st) == (0, 1, 2) and rw.auto_action(st) is None
    assert rw.legal_actions(st, 1) == [Ready()]
    assert rw.timeout_action(st) == Timeout(60.0, None, rw.ReadyTimeout())     # test_run_wild_ready_timer.py
    refused(st, 1, Draw(), "not_started")
    refused(st, 1, PlayMeld((0, 1, 2)), "not_started")
    refused(st, None, Go(), "not_ready")
    refused(st, 1, Go(), "not_your_seat")
    refused(st, None, Ready(), "not_your_seat")
    refused(st, 7, Ready(), "not_your_seat")
    st, events = act(st, 1, Ready())
    assert events == [{"event": "player_ready", "seat": 1}]
    refused(st, 1, Ready(), "already_ready")
    assert rw.to_move(st) == (0, 2) and rw.legal_actions(st, 1) == []
    st, _ = act(st, 0, Ready())
    assert rw.auto_action(st) is None
    st, _ = act(st, 2, Ready())
    assert rw.auto_action(st) == Go()
    st, events = act(st, None, Go())
    assert events == [{"event": "round_started", "round": 1}]
    assert st.phase == "playing" and rw.to_move(st) == (0, 1, 2)
    refused(st, None, Go(), "already_started")
    refused(st, 0, Ready(), "already_ready")
    assert rw.timeout_action(st) == Timeout(120.0, None, IdleTimeout())


def test_draw_takes_the_top_of_your_own_pile_and_the_event_hides_it():
    st = started(2)
    top = rw.snapshot(st)["piles"][1][0]
    st2, events = act(st, 1, Draw())
    assert events == [{"event": "card_drawn", "seat": 1}]
    assert top in hand(st2, 1) and top not in hand(st, 1)
    assert rw.view(st2, 1)["pile"] == rw.view(st, 1)["pile"] - 1
    assert hand(st2, 0) == hand(st, 0)


def test_pile_empty():
    st = State.arranged(2, hands={0: ["B1"], 1: ["B2"]}, piles={1: ["G5"]})
    refused(st, 0, Draw(), "pile_empty")
    st, _ = act(st, 1, Draw())
    refused(st, 1, Draw(), "pile_empty")


# ------------------------------------------------------------------ the rulebook's examples


def test_take_the_6_or_the_9_from_a_6_7_8_9_run_but_not_the_7_or_the_8():
    # Rulebook: "Any player may take either the 6 or the 9 ... The 7 and the 8 may not be
    # taken because the remaining cards would not form a complete set or run."
    st = State.arranged(2, hands={0: ["G1"], 1: ["G2"]}, melds=[["B6", "B7", "B8", "B9"]])
    for end, left in (("B6", ["B7", "B8", "B9"]), ("B9", ["B6", "B7", "B8"])):
        after, events = act(st, 0, Take(1, c(end)))
        assert events == [{"event": "card_taken", "seat": 0, "meld": 1, "card": c(end)}]
        assert labels(meld(after, 1).cards) == left
        assert c(end) in hand(after, 0)
    for middle in ("B7", "B8"):
        reason = refused(st, 0, Take(1, c(middle)), "would_break_meld")
        assert "split" in reason


def test_a_three_card_meld_gives_nothing_and_a_set_keeps_a_number_card():
    st = State.arranged(2, hands={0: ["G1"], 1: ["G2"]},
                        melds=[["B6", "B7", "B8"], ["B9", (WILD, 9), (WILD2, 9), ("W", 9)]])
    refused(st, 0, Take(1, c("B6")), "would_break_meld")
    reason = refused(st, 0, Take(2, c("B9")), "would_break_meld")
    assert "number card" in reason
    after, _ = act(st, 0, Take(2, WILD2))
    assert meld(after, 2).values == (9, 9, 9)
    allowed = State.arranged(2, hands={0: ["G1"], 1: ["G2"]}, settings={"allow_all_wild_melds": True},
                             melds=[["B9", (WILD, 9), (WILD2, 9), ("W", 9)]])
    after, _ = act(allowed, 0, Take(1, c("B9")))
    assert meld(after, 1).cards == (WILD, WILD2, 62)


def test_replacing_the_wild_in_9_9_wild_with_a_red_9_sends_the_wild_to_hand():
    # Rulebook: "A player may take the Wild Card and replace it with a 9 of any other color
    # because the three 9's would form a complete set."
    st = State.arranged(2, hands={0: ["R9", "Y1"], 1: ["G2"]}, melds=[["B9", "G9", (WILD, 9)]])
    after, events = act(st, 0, Swap(1, WILD, c("R9"), None))
    assert events == [{"event": "card_swapped", "seat": 0, "meld": 1, "took": WILD, "gave": c("R9"), "value": 9}]
    assert labels(meld(after, 1).cards) == ["B9", "G9", "R9"] and meld(after, 1).values == (9, 9, 9)
    assert hand(after, 0) == sorted([c("Y1"), WILD])
    # The wild came back to hand without a value; placed again it is declared anew.
    refused(after, 0, Add(1, WILD, None), "wild_value_missing")
    after, _ = act(after, 0, Add(1, WILD, 9))
    assert meld(after, 1).values == (9, 9, 9, 9)


def test_swap_must_stand_for_the_same_card():
    st = State.arranged(2, hands={0: ["G7", "R6", "P6", "B1", WILD2], 1: ["G2"]},
                        melds=[["B5", (WILD, 6), "B7"], ["G6", "Y6", "B6"]])
    # A run's wild standing for a 6 is the blue 6: only a blue 6 or a wild declaring 6 fits.
    reason = refused(st, 0, Swap(1, WILD, c("R6"), None), "swap_mismatch")
    assert "blue" in reason
    refused(st, 0, Swap(1, c("B6"), c("G7"), None), "not_in_meld")
    refused(st, 0, Swap(1, WILD, WILD2, 7), "swap_mismatch")
    refused(st, 0, Swap(1, WILD, WILD2, None), "wild_value_missing")
    after, _ = act(st, 0, Swap(1, WILD, WILD2, 6))
    assert meld(after, 1).cards == (c("B5"), WILD2, c("B7")) and WILD in hand(after, 0)
    # In a set a number card fits any spot of that number: P6 replaces B6.
    after, _ = act(st, 0, Swap(2, c("B6"), c("P6"), None))
    assert labels(meld(after, 2).cards) == ["G6", "Y6", "P6"] and c("B6") in hand(after, 0)
    refused(st, 0, Swap(2, c("B6"), c("B1"), None), "swap_mismatch")
    refused(st, 0, Swap(2, c("B6"), c("P6"), 7), "bad_value")
    # A wild may not replace the last number card while all-wild melds are off.
    lone = State.arranged(2, hands={0: [WILD2], 1: ["G2"]}, melds=[["B5", (WILD, 6), ("W", 7)]])
    refused(lone, 0, Swap(1, c("B5"), WILD2, 5), "swap_mismatch")
    # In a run the wilds stand for cards of the run's colour, so its only number card can be
    # replaced by a wild but not by another colour's card of that number.
    blue = State.arranged(2, hands={0: ["R7", WILD2], 1: ["G2"]}, melds=[[(WILD, 5), ("W", 6), "B7"]])
    refused(blue, 0, Swap(1, c("B7"), c("R7"), None), "swap_mismatch")


def test_draw3_makes_the_others_draw_3_2_and_0_from_piles_of_10_2_and_0():
    # Rulebook: "If fewer than three cards remain in a player's draw pile, all remaining
    # cards must be drawn."
    ten = ["G1", "G2", "G3", "G4", "G5", "G6", "G7", "G8", "G9", "G10"]
    st = State.arranged(4, hands={0: ["D3", "B1"], 1: ["R1"], 2: ["R2"], 3: ["R3"]},
                        piles={0: ["P1"], 1: ten, 2: ["Y1", "Y2"], 3: []})
    after, events = act(st, 0, PlayDraw3(DRAW3))
    assert events == [{"event": "draw3_played", "seat": 0, "card": DRAW3, "drawn": [0, 3, 2, 0]}]
    assert hand(after, 1) == sorted([c("R1"), c("G1"), c("G2"), c("G3")])
    assert hand(after, 2) == sorted([c("R2"), c("Y1"), c("Y2")])
    assert hand(after, 3) == [c("R3")]
    assert hand(after, 0) == [c("B1")]
    v = rw.view(after, None)
    assert [p["pile"] for p in v["players"]] == [1, 7, 0, 0]
    assert [p["draw3s"] for p in v["players"]] == [[DRAW3], [], [], []]
    assert after.phase == "playing"


def test_draw3_as_last_card_ends_the_round_at_once_with_no_draws():
    # Rulebook: "If a player plays a Draw-3 Card as his or her last card, the round ends
    # immediately, and the other players are not required to draw three additional cards."
    st = State.arranged(3, hands={0: ["D3"], 1: ["R1", "R2"], 2: ["D3"]},
                        piles={1: ["G1", "G2", "G3", "G4"], 2: ["Y1"]})
    after, events = act(st, 0, PlayDraw3(DRAW3))
    assert kinds(events) == ["draw3_played", "player_out", "round_ended"]
    assert events[0]["drawn"] == [0, 0, 0]
    assert events[1] == {"event": "player_out", "seat": 0}
    assert events[2] == {"event": "round_ended", "round": 1, "reason": "out", "scores": [0, 10, 10],
                         "totals": [0, 10, 10]}
    assert hand(after, 1) == [c("R1"), c("R2")] and rw.view(after, 1)["pile"] == 4
    assert after.phase == "scored" and rw.view(after, None)["out"] == 0


def test_hand_scoring_at_out_three_numbers_a_wild_and_a_draw3_is_35():
    st = State.arranged(2, hands={0: ["B1"], 1: ["B5", "G6", "R7", "W", "D3"]},
                        piles={0: ["P1", "P2"], 1: ["P3", "P4"]}, melds=[["G1", "Y1", "R1"]])
    after, events = act(st, 0, Add(1, c("B1"), None))
    assert kinds(events) == ["card_added", "player_out", "round_ended"]
    assert events[2]["scores"] == [0, 35]          # docs/DECISIONS.md "Run Wild": piles score nothing
    v = rw.view(after, 1)
    assert v["round_scores"] == [[0, 35]] and v["totals"] == [0, 35] and v["ended_by"] == "out"


def test_a_12_1_2_run_is_refused():
    # docs/DECISIONS.md "Run Wild": "Run: ... consecutive numbers 1..12, no wrap from 12 to 1."
    st = State.arranged(2, hands={0: ["B12", "B1", "B2", "R1", WILD], 1: ["G2"]},
                        melds=[["G10", "G11", "G12"], ["Y1", "Y2", "Y3"]])
    reason = refused(st, 0, PlayMeld((c("B12"), c("B1"), c("B2"))), "not_a_meld")
    assert "wrap" in reason
    refused(st, 0, PlayMeld((c("B12"), WILD, c("B2")), (12, 1, 2)), "not_a_meld")
    refused(st, 0, Add(1, WILD, 1), "does_not_fit")
    refused(st, 0, Add(1, WILD, 13), "bad_value")
    refused(st, 0, Add(2, WILD, 12), "does_not_fit")
    after, _ = act(st, 0, Add(1, WILD, 9))
    assert meld(after, 1).values == (9, 10, 11, 12)


# ------------------------------------------------------------------ melds and adds


def test_a_run_with_a_gap_is_refused():
    st = State.arranged(2, hands={0: ["B8", "B5", WILD], 1: ["G2"]})
    reason = refused(st, 0, PlayMeld((c("B8"), c("B5"), WILD), (8, 5, 6)), "not_a_meld")
    assert "consecutive" in reason
    refused(st, 0, PlayMeld((c("B8"), c("B5"), WILD), (8, 5, 5)), "not_a_meld")


def test_meld_values_and_kinds():
    st = State.arranged(2, hands={0: ["B5", "B7", WILD, "G9", "R9", "P9", WILD2, "Y1"], 1: ["G2"]})
    after, events = act(st, 0, PlayMeld((c("B7"), c("B5"), WILD), (7, 5, 6)))
    assert events == [{"event": "meld_played", "seat": 0, "meld": 1, "kind": "run",
                       "cards": [c("B5"), WILD, c("B7")], "values": [5, 6, 7]}]
    after, events = act(after, 0, PlayMeld((WILD2, c("P9"), c("G9"), c("R9")), (9, 9, 9, 9)))
    assert events[0]["kind"] == "set" and events[0]["meld"] == 2
    assert events[0]["cards"] == [c("G9"), c("R9"), c("P9"), WILD2]
    v = rw.view(after, None)["melds"]
    assert v == [{"id": 1, "kind": "run", "cards": [c("B5"), WILD, c("B7")], "values": [5, 6, 7]},
                 {"id": 2, "kind": "set", "cards": [c("G9"), c("R9"), c("P9"), WILD2], "values": [9, 9, 9, 9]}]
    assert hand(after, 0) == [c("Y1")]


def test_declared_wild_values_are_kept_while_the_wild_stays():
    # docs/DECISIONS.md "Run Wild": "A wild stands for one number card, declared when it is placed, and keeps
    # that value while it stays in the meld."
    st = State.arranged(2, hands={0: ["B4", "B9", "G1"], 1: ["G2"]}, melds=[["B5", (WILD, 6), "B7", "B8"]])
    st, _ = act(st, 1, Take(1, c("B8")))
    assert meld(st, 1).cards == (c("B5"), WILD, c("B7")) and meld(st, 1).values == (5, 6, 7)
    refused(st, 0, Add(1, c("B9"), None), "does_not_fit")     # the 8 is gone: a 9 does not reach
    st, _ = act(st, 0, Add(1, c("B4"), None))
    assert meld(st, 1).cards == (c("B4"), c("B5"), WILD, c("B7")) and meld(st, 1).values == (4, 5, 6, 7)
    refused(st, 0, Take(1, WILD), "would_break_meld")         # the wild-as-6 holds the run together
    st, _ = act(st, 0, Take(1, c("B4")))
    assert meld(st, 1).values == (5, 6, 7)
    refused(st, 1, Take(1, c("B5")), "would_break_meld")      # three cards stay three


def test_a_wild_at_the_end_keeps_its_value_when_the_other_end_is_taken():
    st = State.arranged(2, hands={0: ["B4", "B9", "G1"], 1: ["G2"]}, melds=[["B5", (WILD, 6), "B7", "B8"]])
    st, _ = act(st, 0, Take(1, c("B5")))
    assert meld(st, 1).cards == (WILD, c("B7"), c("B8")) and meld(st, 1).values == (6, 7, 8)
    refused(st, 0, Add(1, c("B4"), None), "does_not_fit")     # the wild still stands for the 6
    st, _ = act(st, 0, Add(1, c("B9"), None))
    assert meld(st, 1).values == (6, 7, 8, 9)
    st, _ = act(st, 0, Take(1, WILD))
    assert meld(st, 1).values == (7, 8, 9) and WILD in hand(st, 0)


def test_add_to_sets_and_runs_places_the_card_in_position():
    st = State.arranged(2, hands={0: ["B9", "P9", "B12", "G5", "R4", WILD2], 1: ["G2"]},
                        melds=[["G9", "Y9", "R9"], ["R5", "R6", "R7"]])
    after, events = act(st, 0, Add(1, c("B9"), None))
    assert events == [{"event": "card_added", "seat": 0, "meld": 1, "card": c("B9"), "value": 9}]
    assert labels(meld(after, 1).cards) == ["B9", "G9", "Y9", "R9"]
    after, _ = act(after, 0, Add(2, c("R4"), 4))
    assert labels(meld(after, 2).cards) == ["R4", "R5", "R6", "R7"]
    after, _ = act(after, 0, Add(2, WILD2, 8))
    assert meld(after, 2).values == (4, 5, 6, 7, 8) and meld(after, 2).cards[-1] == WILD2
    refused(after, 0, Add(1, c("B12"), None), "does_not_fit")
    reason = refused(after, 0, Add(2, c("G5"), None), "does_not_fit")
    assert "red" in reason
    refused(after, 0, Add(1, c("B12"), 9), "bad_value")


def test_max_set_size_caps_sets_only():
    st = State.arranged(2, hands={0: ["B9", "P9", "G8", "G9", "G10", "G11", "Y1"], 1: ["G2"]},
                        settings={"max_set_size": 4}, melds=[["Y9", "R9", (WILD, 9)], ["B1", "B2", "B3"]])
    after, _ = act(st, 0, Add(1, c("B9"), None))
    refused(after, 0, Add(1, c("P9"), None), "does_not_fit")
    refused(st, 0, PlayMeld((c("B9"), c("P9"), c("G9"), c("B9"))), "duplicate_card")
    refused(st, 0, PlayMeld((c("B9"), c("P9"), c("G9"), WILD2 + 5), (9, 9, 9, 9)), "not_in_hand")
    after, _ = act(st, 0, PlayMeld((c("G8"), c("G9"), c("G10"), c("G11"))))
    assert meld(after, 3).kind == "run"


def test_all_wild_melds_are_a_setting():
    st = State.arranged(2, hands={0: [WILD, WILD2, "W", "B1"], 1: ["G2"]})
    reason = refused(st, 0, PlayMeld((WILD, WILD2, 62), (4, 4, 4)), "not_a_meld")
    assert "number card" in reason
    on = State.arranged(2, hands={0: [WILD, WILD2, "W", "B1"], 1: ["G2"]}, settings={"allow_all_wild_melds": True})
    after, events = act(on, 0, PlayMeld((WILD, WILD2, 62), (4, 5, 6)))
    assert events[0]["kind"] == "run"
    assert meld(after, 1).values == (4, 5, 6)
    # An all-wild run takes a number card of any colour at its ends; then it has that colour.
    after2 = State.arranged(2, hands={0: ["G7", "B1"], 1: ["R7"]}, settings={"allow_all_wild_melds": True},
                            melds=[[(WILD, 4), (WILD2, 5), ("W", 6)]])
    after2, _ = act(after2, 0, Add(1, c("G7"), None))
    refused(after2, 1, Add(1, c("R7"), None), "does_not_fit")


# ------------------------------------------------------------------ races, Out!, stuck, timeout


def test_two_takes_of_the_same_card_second_gets_card_taken_naming_the_conflict():
    # docs/DECISIONS.md "Run Wild": "two players taking the same card - the first to act wins (see the order above),
    # the second is rejected with a reason that names the conflict."
    st = State.arranged(3, hands={0: ["G1"], 1: ["G2"], 2: ["G3"]}, melds=[["B6", "B7", "B8", "B9"]])
    st, _ = act(st, 1, Take(1, c("B9")))
    reason = refused(st, 2, Take(1, c("B9")), "card_taken")
    assert "seat 1" in reason and "B9" in reason and "meld 1" in reason
    reason = refused(st, 1, Take(1, c("B9")), "card_taken")
    assert "you took it already" in reason
    refused(st, 2, Swap(1, c("B9"), c("G3"), None), "card_taken")
    refused(st, 2, Take(1, c("G1")), "not_in_meld")


def test_card_taken_names_the_meld_the_card_moved_to():
    st = State.arranged(3, hands={0: ["G1"], 1: ["G2"], 2: ["G3"]},
                        melds=[["B6", "B7", "B8", "B9", "B10"], ["R10", "P10", "Y10"]])
    st, _ = act(st, 1, Take(1, c("B10")))
    st, _ = act(st, 1, Add(2, c("B10"), None))
    reason = refused(st, 2, Take(1, c("B10")), "card_taken")
    assert "meld 2" in reason


def test_nothing_is_accepted_after_out():
    # docs/DECISIONS.md "Run Wild": "Out: the moment any action leaves the actor's hand empty, the round ends;
    # every action that arrives later is rejected as "round over"."
    st = State.arranged(3, hands={0: ["B1", "B2", "B3"], 1: ["G1", "G2", "D3"], 2: ["Y5"]},
                        piles={1: ["P1"], 2: ["P2"]}, melds=[["R4", "R5", "R6", "R7"]])
    st, events = act(st, 0, PlayMeld((c("B1"), c("B2"), c("B3"))))
    assert kinds(events) == ["meld_played", "player_out", "round_ended"]
    assert st.phase == "scored" and rw.pending_chance(st) == ChanceRequest("deal", 72)
    for seat, action in ((1, Draw()), (2, Draw()), (1, PlayDraw3(DRAW3)), (1, Take(2, c("R7"))),
                         (2, Add(2, c("Y5"), None)), (1, Stuck()), (0, Draw()), (1, Ready())):
        reason = refused(st, seat, action, "round_over")
        assert "seat 0 went out" in reason
    refused(st, None, IdleTimeout(), "round_over")
    refused(st, None, Go(), "round_over")
    assert rw.to_move(st) == () and rw.legal_actions(st, 1) == [] and rw.timeout_action(st) is None
    # The next round is dealt at once: until its "Go!" a play is still a late one.
    st, _ = act(st, None, ChanceOutcome("deal", tuple(range(72))))
    assert st.phase == "ready" and rw.view(st, None)["round"] == 2
    for seat, action in ((1, Draw()), (2, Take(1, c("R7"))), (0, Stuck())):
        reason = refused(st, seat, action, "round_over")
        assert "Round 1 is over" in reason
    st, events = act(st, 1, Ready())
    assert events == [{"event": "player_ready", "seat": 1}]


def test_all_stuck_ends_the_round_and_acting_clears_stuck():
    # docs/DECISIONS.md "Run Wild": "a player may declare "stuck" (cleared by their next action); when all are
    # stuck ... the round ends and is scored as if someone went out."
    st = State.arranged(3, hands={0: ["B1", "W"], 1: ["G1"], 2: ["Y5", "D3"]}, piles={0: ["P1"]})
    st, events = act(st, 0, Stuck())
    assert events == [{"event": "stuck_declared", "seat": 0}]
    refused(st, 0, Stuck(), "already_stuck")
    st, _ = act(st, 1, Stuck())
    st, events = act(st, 0, Draw())
    assert events == [{"event": "card_drawn", "seat": 0}, {"event": "stuck_cleared", "seat": 0}]
    assert [p["stuck"] for p in rw.view(st, None)["players"]] == [False, True, False]
    st, _ = act(st, 0, Stuck())
    st, events = act(st, 2, Stuck())
    assert kinds(events) == ["stuck_declared", "round_ended"]
    assert events[1] == {"event": "round_ended", "round": 1, "reason": "all_stuck", "scores": [20, 5, 15],
                         "totals": [20, 5, 15]}
    v = rw.view(st, 2)
    assert v["ended_by"] == "all_stuck" and v["out"] is None and st.phase == "scored"


def test_idle_timeout_ends_the_round_scored_as_if_someone_went_out():
    st = State.arranged(2, hands={0: ["B1", "W"], 1: ["G1"]}, settings={"idle_timeout": 45.5})
    t = rw.timeout_action(st)
    assert t == Timeout(45.5, None, IdleTimeout())
    refused(st, 0, IdleTimeout(), "not_your_seat")
    st, events = act(st, None, t.action)
    assert events == [{"event": "round_ended", "round": 1, "reason": "idle_timeout", "scores": [15, 5],
                       "totals": [15, 5]}]
    assert st.phase == "scored" and rw.view(st, 0)["ended_by"] == "idle_timeout"
    refused(st, None, IdleTimeout(), "round_over")


# ------------------------------------------------------------------ rounds, tie-breaks, game end


def _ready_go(st):
    for s in rw.to_move(st):
        st, _ = act(st, s, Ready())
    st, _ = act(st, None, rw.auto_action(st))
    return st


def test_dealer_rotates_clockwise_and_scores_add_up():
    st = started(3, {"rounds": 3})
    dealers = [rw.view(st, None)["dealer"]]
    for r in range(3):
        st, _ = act(st, None, IdleTimeout())
        if r < 2:
            st, events = act(st, None, ChanceOutcome("deal", tuple(reversed(range(72)))))
            dealers.append(events[0]["dealer"])
            assert events[0]["round"] == r + 2
            assert events[0]["seats"] == [(events[0]["dealer"] + k) % 3 for k in (1, 2, 3)]
            st = _ready_go(st)
    assert dealers == [0, 1, 2]
    v = rw.view(st, None)
    assert len(v["round_scores"]) == 3
    assert v["totals"] == [sum(r[s] for r in v["round_scores"]) for s in range(3)]


def test_tie_break_round_among_the_tied_only():
    # Rulebook: "In the event of a tie, the tied players play an additional round";
    # docs/DECISIONS.md "Run Wild": "players tied for lowest play further rounds among themselves until one wins."
    st = State.arranged(3, hands={0: ["B1"], 1: ["G1"], 2: ["Y1", "Y2"]}, round=4, dealer=0,
                        totals=(20, 30, 15))
    st, events = act(st, None, IdleTimeout())
    assert events[0]["totals"] == [25, 35, 25]
    assert events[-1] == {"event": "tie_break", "seats": [0, 2]}
    assert rw.outcome(st).over is False and st.phase == "scored"
    st, events = act(st, None, ChanceOutcome("deal", tuple(range(72))))
    # The deal passes clockwise from seat 0 to the next seat that plays (seat 2); the whole
    # deck goes to the two tied seats, seat 0 (left of the dealer) first.
    assert events == [{"event": "round_dealt", "round": 5, "dealer": 2, "seats": [0, 2]}]
    v = rw.view(st, 1)
    assert [p["in_round"] for p in v["players"]] == [True, False, True]
    assert [p["pile"] + p["hand"] for p in v["players"]] == [36, 0, 36]
    assert v["hand"] == [] and v["pile"] == 0
    refused(st, 1, Ready(), "not_in_round")
    assert rw.to_move(st) == (0, 2) and rw.legal_actions(st, 1) == []
    st = _ready_go(st)
    assert rw.to_move(st) == (0, 2)
    for action in (Draw(), Stuck(), Take(1, 0)):
        refused(st, 1, action, "not_in_round")
    st, _ = act(st, 0, Stuck())
    st, events = act(st, 2, Stuck())
    # eight number cards each (ids 0,2,..,14 and 1,3,..,15): tied again, another round
    assert events[1]["scores"] == [40, None, 40] and events[1]["totals"] == [65, 35, 65]
    assert events[-1] == {"event": "tie_break", "seats": [0, 2]}
    assert rw.view(st, None)["round_scores"][-1] == [40, None, 40]


def test_tie_break_decides_the_winner_and_the_game_ends():
    st = State.arranged(3, hands={0: ["B1"], 1: ["G1", "G2"], 2: ["Y1"]}, piles={0: ["P1"]}, round=5,
                        in_round=(0, 2), dealer=2, totals=(20, 40, 20))
    refused(st, 1, Draw(), "not_in_round")
    st, _ = act(st, 0, Draw())
    st, _ = act(st, 2, Stuck())
    st, events = act(st, 0, Stuck())
    assert events[-2]["scores"] == [10, None, 5]
    assert events[-1] == {"event": "game_ended", "totals": [30, 40, 25], "winners": [2]}
    out = rw.outcome(st)
    assert out.over and out.winners == (2,) and out.scores == (30, 40, 25)
    assert st.phase == "over" and rw.pending_chance(st) is None and rw.auto_action(st) is None
    assert rw.to_move(st) == () and rw.timeout_action(st) is None
    assert rw.view(st, None)["winners"] == [2] and rw.legal_actions(st, 0) == []
    for seat, action in ((0, Draw()), (1, Ready()), (2, Stuck())):
        refused(st, seat, action, "game_over")
    refused(st, None, Go(), "game_over")
    refused(st, None, IdleTimeout(), "game_over")


def test_last_regular_round_with_one_lowest_total_ends_the_game():
    st = State.arranged(2, hands={0: ["B1"], 1: ["G1", "G2"]}, round=4, totals=(10, 0))
    st, events = act(st, None, IdleTimeout())
    assert kinds(events) == ["round_ended", "game_ended"]
    assert events[-1] == {"event": "game_ended", "totals": [15, 10], "winners": [1]}
    tied = State.arranged(2, hands={0: ["B1"], 1: ["G1", "G2"]}, round=4, totals=(10, 5))
    tied, events = act(tied, None, IdleTimeout())
    assert kinds(events) == ["round_ended", "tie_break"] and tied.phase == "scored"


def test_game_ends_after_the_set_number_of_rounds():
    st = started(2, {"rounds": 1})
    # after an identity deal by seat 0, seat 1 holds ids 0,2,..,14 and seat 0 ids 1,3,..,15
    st, events = act(st, None, IdleTimeout())
    assert events[0]["scores"] == [40, 40]
    assert events[-1] == {"event": "tie_break", "seats": [0, 1]}
    st, events = act(st, None, ChanceOutcome("deal", tuple(range(72))))
    assert events[0]["dealer"] == 1
    st = _ready_go(st)
    st, _ = act(st, 1, Draw())          # 45 points against 40: seat 0 wins
    st, events = act(st, None, IdleTimeout())
    assert events[-1] == {"event": "game_ended", "totals": [80, 85], "winners": [0]}
    assert rw.outcome(st).over and rw.outcome(st).winners == (0,)


# ------------------------------------------------------------------ refusals


def test_refusal_codes():
    st = State.arranged(2, hands={0: ["B1", "B2", "B3", "G7", WILD, "D3"], 1: ["Y4"]},
                        piles={0: ["P5"]}, melds=[["R4", "R5", "R6"]])
    cases = [
        (0, PlayMeld((c("B1"), c("B2"), c("Y4"))), "not_in_hand"),
        (0, PlayMeld((c("B1"), c("B2"), DRAW3)), "draw3_not_meldable"),
        (0, PlayMeld((c("B1"), c("B2"), c("G7"))), "not_a_meld"),
        (0, PlayMeld((c("B1"), c("B2"))), "not_a_meld"),
        (0, PlayMeld((c("B1"), c("B2"), c("B2"))), "duplicate_card"),
        (0, PlayMeld((c("B1"), c("B2"), WILD)), "wild_value_missing"),
        (0, PlayMeld((c("B1"), c("B2"), WILD), (1, 2)), "bad_value"),
        (0, PlayMeld((c("B1"), c("B2"), WILD), (1, 3, 3)), "bad_value"),
        (0, PlayMeld((c("B1"), c("B2"), WILD), (1, 2, 0)), "bad_value"),
        (0, PlayMeld((c("B1"), c("B2"), 99)), "no_such_card"),
        (0, Add(9, c("B1"), None), "no_such_meld"),
        (0, Add(1, DRAW3, None), "draw3_not_meldable"),
        (0, Add(1, c("Y4"), None), "not_in_hand"),
        (0, Add(1, c("B1"), None), "does_not_fit"),
        (0, Add(1, WILD, None), "wild_value_missing"),
        (0, Add(1, c("B2"), 7), "bad_value"),
        (0, Take(9, c("R4")), "no_such_meld"),
        (0, Take(1, c("B1")), "not_in_meld"),
        (0, Take(1, c("R5")), "would_break_meld"),
        (0, Swap(1, c("R5"), DRAW3, None), "draw3_not_meldable"),
        (0, Swap(1, c("R5"), c("Y4"), None), "not_in_hand"),
        (0, Swap(1, c("R5"), c("B2"), None), "swap_mismatch"),
        (0, PlayDraw3(c("B1")), "not_a_draw3"),
        (0, PlayDraw3(70), "not_in_hand"),
        (1, Draw(), "pile_empty"),
        (None, Draw(), "not_your_seat"),
        (2, Draw(), "not_your_seat"),
        (0, Go(), "not_your_seat"),
        (0, object(), "unknown_action"),
    ]
    for seat, action, code in cases:
        refused(st, seat, action, code)


def test_a_refused_action_leaves_the_state_as_it_was():
    st = State.arranged(2, hands={0: ["B1", "B2"], 1: ["Y4"]}, melds=[["R4", "R5", "R6"]])
    before = rw.snapshot(st)
    refused(st, 0, Take(1, c("R5")), "would_break_meld")
    refused(st, 0, PlayMeld((c("B1"), c("B2"), c("Y4"))), "not_in_hand")
    assert rw.snapshot(st) == before


# ------------------------------------------------------------------ views, snapshot, legal actions


def test_view_shape_own_hand_only_and_spectator_sees_no_hand():
    st = State.arranged(3, hands={0: ["B1", "B2"], 1: ["Y4", "D3"], 2: ["G9"]}, piles={0: ["P5", "P6"]},
                        melds=[["R4", "R5", "R6"]], draw3s={2: ["D3"]})
    v = rw.view(st, 0)
    assert set(v) == {"game", "round", "rounds", "dealer", "phase", "seat", "hand", "pile", "players", "melds",
                      "round_scores", "totals", "out", "ended_by", "winners", "settings"}
    assert v["game"] == "run-wild" and v["seat"] == 0 and v["phase"] == "playing"
    assert v["hand"] == [c("B1"), c("B2")] and v["pile"] == 2
    assert v["players"][1] == {"seat": 1, "hand": 2, "pile": 0, "draw3s": [], "stuck": False, "ready": True,
                               "in_round": True}
    assert v["players"][2]["draw3s"] == [70]
    spec = rw.view(st, None)
    assert spec["seat"] is None and "hand" not in spec and "pile" not in spec
    assert {k: x for k, x in v.items() if k not in ("hand", "pile", "seat")} == \
        {k: x for k, x in spec.items() if k != "seat"}


def test_a_view_does_not_change_when_only_cards_hidden_from_it_change():
    a = State.arranged(3, hands={0: ["B1"], 1: ["Y4", "Y5"], 2: ["G9"]}, piles={1: ["P5", "P6"], 2: ["P7"]},
                       melds=[["R4", "R5", "R6"]])
    b = State.arranged(3, hands={0: ["B1"], 1: ["P6", "Y5"], 2: ["P7"]}, piles={1: ["P5", "Y4"], 2: ["G9"]},
                       melds=[["R4", "R5", "R6"]])
    assert rw.view(a, 0) == rw.view(b, 0) and rw.view(a, None) == rw.view(b, None)
    assert rw.view(a, 1) != rw.view(b, 1)
    assert rw.snapshot(a) != rw.snapshot(b)
    assert state_hash(rw, a) != state_hash(rw, b)


def test_snapshot_is_plain_data_and_sees_everything():
    st = started(2)
    snap = rw.snapshot(st)
    cards = sorted(sum(snap["hands"], []) + sum(snap["piles"], []))
    assert cards == list(range(72))
    import json
    json.dumps(snap)
    json.dumps(rw.view(st, 0))


def test_legal_actions_are_all_accepted_on_a_busy_table():
    st = State.arranged(
        3,
        hands={0: ["B1", "B2", "B3", "G3", "R3", "P9", WILD, "D3", "R8", "Y12"], 1: ["Y4"], 2: ["G12"]},
        piles={0: ["P5"]},
        melds=[["R4", "R5", "R6", "R7"], ["G9", "Y9", ("W", 9), ("W", 9)], ["Y10", "Y11", ("W", 12)]],
    )
    acts = rw.legal_actions(st, 0)
    kinds_ = {type(a) for a in acts}
    assert {Draw, PlayDraw3, PlayMeld, Add, Take, Swap} <= kinds_
    for a in acts:
        act(st, 0, a)
    stuck = State.arranged(2, hands={0: ["B1", "G7"], 1: ["Y4"]}, melds=[["R4", "R5", "R6", "R7"]])
    assert Stuck() in rw.legal_actions(stuck, 0)
    st2, _ = act(stuck, 0, Stuck())
    assert rw.legal_actions(st2, 0) == []       # nothing shrinks the hand: a stuck seat waits
    assert rw.legal_actions(st2, 5) == [] and rw.legal_actions(st2, None) == []


def test_a_meld_is_found_by_its_id_whatever_the_ids_on_the_table():
    """_find_meld looks at index id - first id before it scans (ids are handed out in
    order); a table whose ids have gaps or another order must find the same melds."""
    st = State.arranged(2, hands={0: ["B4", "G9"], 1: ["Y4"]},
                        melds=[["R4", "R5", "R6"], ["B1", "B2", "B3"], ["G5", "Y5", "P5", "B5"]])
    for ids in [(1, 2, 3), (2, 3, 5), (5, 3, 2), (7, 8, 9), (0, 4, 1)]:
        table = evolve(st, melds=tuple(evolve(m, id=i) for m, i in zip(st.melds, ids)))
        run, blues, fives = table.melds
        after, _ = act(table, 0, Add(blues.id, c("B4"), None))
        assert meld(after, blues.id).cards == blues.cards + (c("B4"),)
        assert [m.id for m in after.melds] == list(ids)
        after, _ = act(table, 1, Take(fives.id, c("Y5")))
        assert c("Y5") not in meld(after, fives.id).cards and hand(after, 1) == sorted([c("Y4"), c("Y5")])
        for missing in {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10} - set(ids):
            refused(table, 0, Add(missing, c("B4"), None), "no_such_meld")
            refused(table, 1, Take(missing, c("Y5")), "no_such_meld")
