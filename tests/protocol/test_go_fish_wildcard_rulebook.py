"""Rules audit of the Go Fish Wildcard engine: scenarios the main test file does not cover,
each quoting the rule it checks (go-fish-wildcard.txt, docs/DECISIONS.md "Go Fish Wildcard").

The audit found no place where the engine departs from the rulebook as docs/DECISIONS.md "Go Fish Wildcard" reads
it; these are regression tests for edge cases the existing tests leave open.
"""

from __future__ import annotations

from test_go_fish_wildcard import C, Cs, Ask, Place, act, g, hand, kinds, position


def test_handed_over_wilds_never_earn_another_ask():
    # docs/DECISIONS.md "Go Fish Wildcard": "You ask again only if the card you asked for reached you ... and you place
    # it at once in a set with no wilds. A drawn wild never earns another ask."
    # Jacks are wild; asking for jacks brings two more: three jacks, but all wild, so no natural set.
    s = position([Cs("JD 3C"), Cs("JH JS 4H")], Cs("QH KH"), turn=0, sets=[(1, Cs("JC 5C 5D"))])
    s, ev = act(s, 0, Ask(1, "J"))
    assert ev[0]["handed"] == 2 and "extra_ask_earned" not in kinds(ev) and s.turn == 1
    assert [(e["cards"], e["wilds"], e["forced"]) for e in ev if e["event"] == "set_placed"] == [
        (sorted(Cs("3C JD JH")), 2, True)]      # the lowest ids of the one set the hand makes


def test_extra_asks_chain_while_each_asked_card_goes_into_a_natural_set():
    # Rulebook: "Getting the requested card(s) ... grants another turn if you place down that
    # card in a set that does not use a wild card" - again after an extra ask.
    s = position([Cs("7C 7D 9C 9D 2C"), Cs("7H 9H 4C")], Cs("QH QS"), turn=0)
    s, _ = act(s, 0, Ask(1, "7"))
    s, ev = act(s, 0, Place(tuple(Cs("7C 7D 7H"))))
    assert s.step == "again"
    s, _ = act(s, 0, Ask(1, "9"))
    assert s.turn == 0 and s.step == "bonus" and g.view(s, 0)["bonus"] == [C("9H")]
    s, ev = act(s, 0, Place(tuple(Cs("9C 9D 9H"))))
    assert "extra_ask_earned" in kinds(ev) and s.step == "again" and s.scores == (2, 0)


def test_an_unrelated_set_placed_first_keeps_the_earned_chance_open():
    # docs/RULES.md reading of "at once": other sets may go down first in step bonus.
    s = position([Cs("7C 7D 8C 8D 8H 2C"), Cs("7H 4C")], Cs("QH QS"), turn=0)
    s, _ = act(s, 0, Ask(1, "7"))
    s, ev = act(s, 0, Place(tuple(Cs("8C 8D 8H"))))
    assert kinds(ev) == ["set_placed"] and s.step == "bonus"
    s, ev = act(s, 0, Place(tuple(Cs("7C 7D 7H"))))
    assert "extra_ask_earned" in kinds(ev)


def test_running_out_takes_what_is_left_and_the_one_who_took_the_last_card_ends_the_last_asks():
    # docs/DECISIONS.md "Go Fish Wildcard": "Empty hand: during your turn, draw 2 (or what is left)"; "when the last card
    # is drawn, that turn ends, then every player, starting left of the drawer and ending
    # with the drawer, gets one last ask".
    s = position([Cs("7C 7D 9C 9D 9H"), Cs("7H 4C"), Cs("5C")], Cs("QH"), turn=0, fill=False)
    s, _ = act(s, 0, Ask(1, "7"))
    s, _ = act(s, 0, Place(tuple(Cs("7C 7D 7H"))))
    s, ev = act(s, 0, Place(tuple(Cs("9C 9D 9H"))))
    drawn = [e for e in ev if e["event"] == "cards_drawn"]
    assert drawn == [{"event": "cards_drawn", "seat": 0, "count": 1, "reason": "empty_hand", "pile": 0}]
    assert s.phase == "last_asks" and s.drawer == 0 and s.turn == 1 and s.last_order == (2, 0)
    assert hand(s, 0) == [C("QH")]


def test_starting_empty_with_two_cards_left_draws_both_and_that_turn_ends_before_its_ask():
    # docs/DECISIONS.md "Go Fish Wildcard": "Starting a turn empty: draw 2, then play on" - but "when the last card is
    # drawn, that turn ends".
    s = position([Cs("7C 2C"), Cs("7H"), Cs("9C 9D")], Cs("KH KS"), turn=0, fill=False)
    s, ev = act(s, 0, Ask(1, "7"))
    assert hand(s, 1) == sorted(Cs("KH KS")) and s.drawer == 1
    assert s.phase == "last_asks" and s.turn == 2 and s.last_order == (0, 1)


def test_a_last_ask_go_fish_draws_nothing_and_placing_first_is_allowed():
    # Rulebook Ending: "each player will have one last chance to ask for cards and place
    # down sets"; docs/DECISIONS.md "Go Fish Wildcard": one last ask; the pile is empty, so go fish draws nothing.
    s = position([Cs("2C 3C"), Cs("8C 8D 8H 4C"), Cs("5C")], [C("KH")], turn=0, fill=False)
    s, _ = act(s, 0, Ask(2, "2"))
    assert s.phase == "last_asks" and s.turn == 1
    s, ev = act(s, 1, Place(tuple(Cs("8C 8D 8H"))))
    assert kinds(ev) == ["set_placed"] and s.turn == 1 and s.step == "ask"
    s, ev = act(s, 1, Ask(0, "4"))
    assert "cards_drawn" not in kinds(ev) and ev[0]["handed"] == 0
    assert g.view(s, 2)["asks"][-1] == {"seat": 1, "target": 0, "rank": "4", "handed": 0, "drew": 0}
    assert s.turn == 2
