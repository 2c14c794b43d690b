"""Run Wild rules audit: scenarios checking the engine against the rulebook and
docs/DECISIONS.md "Run Wild" where tests/protocol/test_run_wild.py left a gap. Each test quotes the rule it checks."""

from __future__ import annotations

from wildtable.protocol.games.run_wild import Add, PlayDraw3, State, Stuck, Swap, Take

from test_run_wild import act, c, refused   # the scenario helpers of the main Run Wild tests

WILD, WILD2, WILD3 = 60, 61, 62
DRAW3, DRAW3_2 = 69, 70
ALL_WILD = {"allow_all_wild_melds": True}




def meld(state, meld_id):
    return next(m for m in state.melds if m.id == meld_id)


# ------------------------------------------------------------------ a run keeps its colour
# docs/DECISIONS.md "Run Wild": "Run: 3+ cards of one colour"; "A wild stands for one number card, declared
# when it is placed, and keeps that value while it stays in the meld." In a blue run a wild
# declared 6 stands for the blue 6, and it still does once the run's number cards have
# left it (possible only with the setting allow_all_wild_melds on).


def test_a_run_stays_its_colour_after_its_last_number_card_is_taken():
    st = State.arranged(2, hands={0: ["G1"], 1: ["R9", "B9"]}, settings=ALL_WILD,
                        melds=[["B5", (WILD, 6), (WILD2, 7), (WILD3, 8)]])
    st, _ = act(st, 0, Take(1, c("B5")))
    assert meld(st, 1).cards == (WILD, WILD2, WILD3)
    # the wilds stand for the blue 6, 7 and 8: a red 9 would make the run two colours
    reason = refused(st, 1, Add(1, c("R9"), None), "does_not_fit")
    assert "blue" in reason
    st, _ = act(st, 1, Add(1, c("B9"), None))
    assert meld(st, 1).values == (6, 7, 8, 9)


def test_a_run_stays_its_colour_after_a_wild_replaces_its_last_number_card():
    st = State.arranged(2, hands={0: [WILD3, "G1"], 1: ["R5", "R8", "B5"]}, settings=ALL_WILD,
                        melds=[[(WILD, 6), (WILD2, 7), "B8"]])
    st, _ = act(st, 0, Swap(1, c("B8"), WILD3, 8))
    assert meld(st, 1).cards == (WILD, WILD2, WILD3)
    # the wild now standing for the 8 stands for the blue 8, the others for blue 6 and 7
    refused(st, 1, Swap(1, WILD3, c("R8"), None), "swap_mismatch")
    refused(st, 1, Add(1, c("R5"), None), "does_not_fit")
    st, _ = act(st, 1, Add(1, c("B5"), None))
    assert meld(st, 1).values == (5, 6, 7, 8)


def test_an_all_wild_run_keeps_the_colour_of_the_first_number_card_that_joined():
    # docs/RULES.md: an all-wild run "takes the colour of the first number card that joins".
    st = State.arranged(2, hands={0: ["G7", "G1"], 1: ["R3", "G3"]}, settings=ALL_WILD,
                        melds=[[(WILD, 4), (WILD2, 5), (WILD3, 6)]])
    st, _ = act(st, 0, Add(1, c("G7"), None))
    st, _ = act(st, 0, Take(1, c("G7")))
    assert meld(st, 1).cards == (WILD, WILD2, WILD3)
    refused(st, 1, Add(1, c("R3"), None), "does_not_fit")
    st, _ = act(st, 1, Add(1, c("G3"), None))
    assert meld(st, 1).values == (3, 4, 5, 6)


# ------------------------------------------------------------------ regression: Draw-3s and stuck


def test_two_draw3s_the_second_as_last_card_ends_the_round_with_no_draws():
    # Rulebook: "If a player plays a Draw-3 Card as his or her last card, the round ends
    # immediately, and the other players are not required to draw three additional cards."
    st = State.arranged(2, hands={0: ["D3", "D3"], 1: ["G2"]}, piles={1: ["G3", "G4", "G5", "G6", "G7"]})
    st, events = act(st, 0, PlayDraw3(DRAW3))
    assert events[0]["drawn"] == [0, 3] and st.phase == "playing"
    st, events = act(st, 0, PlayDraw3(DRAW3_2))
    assert events[0]["drawn"] == [0, 0]
    assert [e["event"] for e in events] == ["draw3_played", "player_out", "round_ended"]
    assert events[-1]["scores"] == [0, 20]      # G2 G3 G4 G5; the last pile card scores nothing


def test_draws_forced_by_a_draw3_clear_stuck_as_the_players_own_action_does():
    # docs/DECISIONS.md "Run Wild": "a player may declare "stuck" (cleared by their next action, and by drawing
    # cards through someone's Draw-3: new cards may be playable); when all are stuck ... the
    # round ends". More cases: test_run_wild_draw3_clears_stuck.py.
    st = State.arranged(3, hands={0: ["G1"], 1: ["G2"], 2: ["D3", "Y9"]},
                        piles={0: ["P1", "P2", "P3"], 1: ["P4"]})
    st, _ = act(st, 0, Stuck())
    st, _ = act(st, 1, Stuck())
    st, _ = act(st, 2, PlayDraw3(DRAW3))
    assert st.stuck == (False, False, False) and st.hands[0].bit_count() == 4
    st, events = act(st, 2, Stuck())
    assert st.phase == "playing" and [e["event"] for e in events] == ["stuck_declared"]
    st, _ = act(st, 0, Stuck())
    st, events = act(st, 1, Stuck())
    assert events[-1]["reason"] == "all_stuck" and events[-1]["scores"] == [20, 10, 5]
