"""Go Fish Wildcard engine: the issue's scenarios, every refusal, the forced-set rule
against a brute force, and random whole games checked after every step.

Rules: /work/shared/rules/go-fish-wildcard.txt and docs/DECISIONS.md "Go Fish Wildcard";
as implemented: docs/RULES.md, section "Go Fish Wildcard".
"""

from __future__ import annotations

import functools
import itertools
import random

import pytest
from hypothesis import given, settings, strategies as st

from wildtable.protocol.states import evolve
from wildtable.protocol.codec import packb, to_data, unpackb
from wildtable.protocol.engine import ChanceOutcome, ChanceRequest, TableConfig, Timeout, state_hash
from wildtable.protocol.errors import IllegalAction, ProtocolError
from wildtable.protocol.games import REGISTRY
from wildtable.protocol.games import go_fish_wildcard as g
from wildtable.protocol.replay import fold
from wildtable.selfplay import play

Ask, Place, EndTurn = g.Ask, g.Place, g.EndTurn


# ---------------------------------------------------------------------------- helpers

def C(label: str) -> int:
    """'7H' -> the card id of the seven of hearts."""
    return g.RANKS.index(label[:-1]) * 4 + g.SUITS.index(label[-1])


def Cs(labels: str) -> list[int]:
    return [C(x) for x in labels.split()]


def hand(state, seat) -> list[int]:
    return g.hand_ids(state.hands[seat])


def table(n: int = 2, **settings_):
    return g.new_table(TableConfig(g.NAME, n, settings_))


def deal_perm(hands: list[list[int]], pile_top: list[int], dealer: int = 0) -> tuple[int, ...]:
    """The shuffle that deals ``hands`` (dealt one at a time from the dealer's left) and
    puts ``pile_top`` on top of the pile, the other cards below in id order."""
    n = len(hands)
    first = (dealer + 1) % n
    perm = [hands[(first + i) % n][i // n] for i in range(4 * n)]
    rest = [c for c in range(52) if c not in perm and c not in pile_top]
    return tuple(perm + list(pile_top) + rest)


def dealt(hands, pile_top=(), dealer: int = 0, **settings_):
    s = table(len(hands), dealer=dealer, **settings_)
    s, _ = g.apply(s, None, ChanceOutcome("deal", deal_perm(hands, list(pile_top), dealer)))
    return s


def position(hands, pile, turn, sets=(), fill: bool = True, n: int | None = None, phase: str = "play"):
    """A play position built directly: ``sets`` are (seat, cards) already on the table (their
    ranks are wild). With ``fill`` the unused cards go under ``pile`` so every card is somewhere."""
    n = n or len(hands)
    base = table(n, dealer=0)
    sets = tuple((seat, tuple(sorted(cards))) for seat, cards in sets)
    wild = 0
    scores = [0] * n
    for seat, cards in sets:
        scores[seat] += 1
        for c in cards:
            wild |= 1 << (c // 4)
    pile = list(pile)
    if fill:
        used = set(pile) | {c for h in hands for c in h} | {c for _, cs in sets for c in cs}
        pile += [c for c in range(52) if c not in used]
    return evolve(base, phase=phase, hands=tuple(g.hand_mask(h) for h in hands), pile=tuple(pile),
                         wild=wild, sets=sets, scores=tuple(scores), turn=turn, step="ask")


def act(state, seat, action):
    return g.apply(state, seat, action)


def kinds(events) -> list[str]:
    return [e["event"] for e in events]


def refused(state, seat, action, code):
    with pytest.raises(IllegalAction) as e:
        g.apply(state, seat, action)
    assert e.value.code == code, e.value
    assert e.value.reason and e.value.reason[0].isupper()
    return e.value


def all_cards(state) -> list[int]:
    cards = [c for h in state.hands for c in g.hand_ids(h)] + list(state.pile)
    cards += [c for _, cs in state.sets for c in cs]
    return sorted(cards)


# ---------------------------------------------------------------------------- scenarios from the issue

def test_jacks_set_then_k_k_j_must_be_placed_and_earns_no_extra_ask():
    # Seat 1 (left of dealer 0) starts with three jacks, asks for the fourth and sets
    # J-J-J with the jack it was given: natural, so it may ask again; jacks are now wild.
    s = dealt([Cs("JH KD 5C 9C"), Cs("JC JD JS KC")], pile_top=Cs("4H 6H"), dealer=0)
    assert s.turn == 1 and s.step == "ask"
    s, ev = act(s, 1, Ask(0, "J"))
    assert s.turn == 1 and s.step == "bonus" and hand(s, 1) == sorted(Cs("JC JD JH JS KC"))
    s, ev = act(s, 1, Place(tuple(Cs("JC JD JH"))))
    assert "extra_ask_earned" in kinds(ev) and s.step == "again"
    assert g.view(s, None)["wild_ranks"] == ["J"]
    # Now K + wild J; asking for kings brings K-K-J: a set that needs a wild, so no
    # further ask - the turn ends and the set is forced down.
    s, ev = act(s, 1, Ask(0, "K"))
    assert "extra_ask_earned" not in kinds(ev)
    placed = [e for e in ev if e["event"] == "set_placed"]
    assert placed == [{"event": "set_placed", "seat": 1, "set": 1, "cards": sorted(Cs("KC KD JS")), "rank": "K",
                       "wilds": 1, "forced": True, "new_wild": ["K"]}]
    assert s.turn == 0 and s.step == "ask"
    assert s.scores == (0, 2)
    # Seat 1 ran out at the end of its turn, so it drew 2 then (rulebook: "at the end of your turn").
    assert hand(s, 1) == sorted(Cs("4H 6H"))
    assert [e["reason"] for e in ev if e["event"] == "cards_drawn"] == ["empty_hand"]


def test_k_k_j_may_be_placed_by_hand_before_asking_and_earns_nothing():
    s = position([Cs("KC KD JS 2C"), Cs("3C")], Cs("4H"), turn=0, sets=[(1, Cs("JC JD JH"))])
    s, ev = act(s, 0, Place(tuple(Cs("KC KD JS"))))
    assert kinds(ev) == ["set_placed"] and ev[0]["wilds"] == 1 and ev[0]["new_wild"] == ["K"]
    assert s.turn == 0 and s.step == "ask", "placing is no ask: the player must still ask"
    refused(s, 0, EndTurn(), "must_ask")


def test_natural_777_after_a_successful_ask_earns_another_ask():
    s = position([Cs("7C 7D 2C 3C"), Cs("7H 4C 9D")], Cs("QH QS"), turn=0)
    s, ev = act(s, 0, Ask(1, "7"))
    assert ev[0] == {"event": "asked", "seat": 0, "target": 1, "rank": "7", "handed": 1}
    assert s.turn == 0 and s.step == "bonus"
    assert g.view(s, 0)["bonus"] == [C("7H")] and g.view(s, 1)["bonus"] == []
    refused(s, 0, Ask(1, "2"), "no_extra_ask")
    s, ev = act(s, 0, Place(tuple(Cs("7H 7C 7D"))))
    assert kinds(ev) == ["set_placed", "extra_ask_earned"]
    assert ev[0]["forced"] is False and ev[0]["wilds"] == 0
    assert s.turn == 0 and s.step == "again"
    s, ev = act(s, 0, Ask(1, "2"))          # the extra ask: go fish, turn over
    assert s.turn == 1 and kinds(ev)[:2] == ["asked", "cards_drawn"]


def test_declining_the_bonus_set_ends_the_turn_and_forces_it_without_an_extra_ask():
    s = position([Cs("7C 7D 2C"), Cs("7H 4C")], Cs("QH"), turn=0)
    s, _ = act(s, 0, Ask(1, "7"))
    s, ev = act(s, 0, EndTurn())
    assert "extra_ask_earned" not in kinds(ev) and s.turn == 1
    assert [e["cards"] for e in ev if e["event"] == "set_placed"] == [sorted(Cs("7C 7D 7H"))]


def test_bonus_set_must_hold_the_card_that_reached_you():
    # Three 7s in hand already (a dealt triple); the asked-for fourth arrives. 7C-7D-7H
    # (without it) earns nothing; 7C-7D-7S (with it) would have.
    s = position([Cs("7C 7D 7H 2C"), Cs("7S 4C")], Cs("QH"), turn=0)
    s, _ = act(s, 0, Ask(1, "7"))
    assert s.step == "bonus"
    s2, ev = act(s, 0, Place(tuple(Cs("7C 7D 7H"))))
    assert "extra_ask_earned" not in kinds(ev)
    assert s2.turn == 1                      # 7S is now wild: no natural set left, turn over
    s3, ev = act(s, 0, Place(tuple(Cs("7C 7D 7S"))))
    assert "extra_ask_earned" in kinds(ev) and s3.step == "again"


def test_the_bonus_card_placed_with_a_wild_earns_nothing():
    s = position([Cs("7C 7D 2C JD"), Cs("7H 4C")], Cs("QH"), turn=0, sets=[(1, Cs("JC JH JS"))])
    s, _ = act(s, 0, Ask(1, "7"))
    assert s.step == "bonus"
    s, ev = act(s, 0, Place(tuple(Cs("7H 7C JD"))))
    assert "extra_ask_earned" not in kinds(ev) and s.turn == 1
    # 7s turned wild, so 7D + 2C made no more sets; the turn ended with no other ask.
    assert [e["forced"] for e in ev if e["event"] == "set_placed"] == [False]


def test_fishing_the_last_card_ends_the_turn_even_when_it_completes_a_natural_set():
    s = position([Cs("5C 5H 9C"), Cs("2C 3C")], Cs("5D"), turn=0, fill=False)
    s, ev = act(s, 0, Ask(1, "5"))
    assert "extra_ask_earned" not in kinds(ev) and s.phase == "last_asks" and s.turn == 1
    assert [e["cards"] for e in ev if e["event"] == "set_placed"] == [sorted(Cs("5C 5D 5H"))]


def test_a_fished_5_that_completes_5_5_j_ends_the_turn():
    s = position([Cs("5C JD 9C"), Cs("2C 3C")], Cs("5D QH"), turn=0, sets=[(1, Cs("JC JH JS"))])
    s, ev = act(s, 0, Ask(1, "5"))
    assert kinds(ev)[:2] == ["asked", "cards_drawn"] and ev[0]["handed"] == 0
    assert s.turn == 1, "a set that needs a wild never earns another ask"
    placed = [e for e in ev if e["event"] == "set_placed"]
    assert [(e["cards"], e["wilds"], e["forced"]) for e in placed] == [(sorted(Cs("5C 5D JD")), 1, True)]
    assert hand(s, 0) == [C("9C")]


def test_a_fished_asked_for_card_completing_a_natural_set_earns_another_ask():
    s = position([Cs("5C 5H 9C"), Cs("2C 3C")], Cs("5D QH"), turn=0)
    s, _ = act(s, 0, Ask(1, "5"))
    assert s.turn == 0 and s.step == "bonus" and g.view(s, 0)["bonus"] == [C("5D")]
    # The others learn only that the turn goes on, not the card.
    assert g.view(s, 1)["bonus"] == [] and C("5D") not in g.view(s, 1)["hand"]


def test_a_drawn_wild_never_earns_another_ask():
    # Jacks are wild; asking for jacks and fishing a jack gives J-J-J: three wilds.
    s = position([Cs("JD JH"), Cs("2C 3C")], Cs("JS QH KH"), turn=0, sets=[(1, Cs("JC 4C 4D"))])
    s, ev = act(s, 0, Ask(1, "J"))
    assert s.turn == 1
    assert [e["wilds"] for e in ev if e["event"] == "set_placed"] == [3]


def test_a_player_who_ran_out_on_someone_elses_turn_draws_two_when_their_turn_starts():
    s = position([Cs("7C 2C 3C"), Cs("7H"), Cs("9C 9D")], Cs("KH KS 4D"), turn=0)
    s, ev = act(s, 0, Ask(1, "7"))
    assert s.turn == 1, "an empty hand still gets its turn"
    assert kinds(ev) == ["asked", "turn_ended", "turn_started", "cards_drawn"]
    assert ev[-1] == {"event": "cards_drawn", "seat": 1, "count": 2, "reason": "turn_start_empty", "pile": 44}
    assert hand(s, 1) == sorted(Cs("KH KS")) and s.step == "ask" and len(s.pile) == 44


def test_running_out_during_the_turn_draws_two_and_ends_it_even_after_an_earned_ask():
    s = position([Cs("7C 7D"), Cs("7H 4C")], Cs("QH QS 2D"), turn=0)
    s, _ = act(s, 0, Ask(1, "7"))
    s, ev = act(s, 0, Place(tuple(Cs("7C 7D 7H"))))
    assert "extra_ask_earned" not in kinds(ev)
    assert kinds(ev) == ["set_placed", "cards_drawn", "turn_ended", "turn_started"]
    assert hand(s, 0) == sorted(Cs("QH QS")) and s.turn == 1


def test_placing_before_asking_is_allowed_and_running_out_that_way_ends_the_turn():
    s = position([Cs("8C 8D 8H 2C"), Cs("4C")], Cs("QH QS"), turn=0)
    s, ev = act(s, 0, Place(tuple(Cs("8C 8D 8H"))))
    assert s.turn == 0 and s.step == "ask" and kinds(ev) == ["set_placed"]
    s = position([Cs("8C 8D 8H"), Cs("4C")], Cs("QH QS"), turn=0)
    s, ev = act(s, 0, Place(tuple(Cs("8C 8D 8H"))))
    assert s.turn == 1 and hand(s, 0) == sorted(Cs("QH QS"))


def test_four_players_last_card_drawn_by_the_second_gives_last_asks_to_third_fourth_first_second():
    s = position([Cs("2C 3C"), Cs("4C 5C"), Cs("6C 7C"), Cs("8C 9C")], [C("KH")], turn=1, fill=False)
    s, ev = act(s, 1, Ask(2, "4"))
    assert s.pile == () and s.phase == "last_asks" and s.drawer == 1
    began = [e for e in ev if e["event"] == "last_asks_began"]
    assert began == [{"event": "last_asks_began", "drawer": 1, "order": [2, 3, 0, 1]}]
    order = []
    while s.phase == "last_asks":
        order.append(s.turn)
        seat = s.turn
        s, ev = act(s, seat, Ask((seat + 1) % 4, g.RANKS[hand(s, seat)[0] // 4]))
        assert s.turn != seat, "one last ask each"
    assert order == [2, 3, 0, 1]
    assert s.phase == "over" and g.outcome(s).over


def test_last_card_drawn_at_turn_start_ends_that_turn_then_everyone_asks_once():
    s = position([Cs("7C 2C"), Cs("7H"), Cs("9C 9D")], Cs("KH"), turn=0, fill=False)
    s, ev = act(s, 0, Ask(1, "7"))
    # Seat 1 starts empty, draws the last card: that turn ends, seat 2 asks first.
    assert kinds(ev) == ["asked", "turn_ended", "turn_started", "cards_drawn", "turn_ended", "last_asks_began",
                         "turn_started"]
    assert s.drawer == 1 and s.turn == 2 and s.last_order == (0, 1)


def test_last_asks_skip_empty_hands_give_no_extra_ask_and_end_with_the_drawer():
    # Seat 0 draws the last card; seat 1 is empty (skipped); seat 2's natural set earns nothing.
    s = position([Cs("2C 3C"), [], Cs("9C 9D 4C")], Cs("KH"), turn=0, fill=False)
    s = evolve(s, hands=(s.hands[0], g.hand_mask(Cs("9H")), s.hands[2]))
    s, ev = act(s, 0, Ask(1, "2"))
    assert s.turn == 1 and s.phase == "last_asks"
    s, ev = act(s, 1, Ask(2, "9"))
    assert s.turn == 2 and "extra_ask_earned" not in kinds(ev)
    assert [(e["cards"], e["wilds"], e["forced"]) for e in ev if e["event"] == "set_placed"] == [
        (sorted(Cs("9C 9D 9H")), 0, True)]
    s = position([Cs("2C 3C"), [], Cs("9C 9D 9H 4C")], Cs("KH"), turn=0, fill=False)
    s, ev = act(s, 0, Ask(2, "2"))
    assert kinds(ev)[-2:] == ["turn_skipped", "turn_started"] and s.turn == 2
    s, ev = act(s, 2, Ask(0, "4"))
    assert "extra_ask_earned" not in kinds(ev) and s.turn == 0 and s.last_order == ()
    s, ev = act(s, 0, Ask(2, "2"))
    assert s.phase == "over" and kinds(ev)[-1] == "game_over"


def test_scoring_most_sets_wins_and_ties_are_shared():
    s = position([Cs("2C"), Cs("3C"), Cs("4C")], [], turn=0, fill=False, phase="last_asks",
                 sets=[(0, Cs("5C 5D 5H")), (1, Cs("6C 6D 6H")), (1, Cs("7C 7D 7H")), (2, Cs("8C 8D 8H")),
                       (2, Cs("9C 9D 9H"))])
    s = evolve(s, last_order=(1, 2), drawer=2)
    assert not g.outcome(s).over and g.view(s, 0)["winners"] is None
    for seat in (0, 1, 2):
        s, ev = act(s, seat, Ask((seat + 1) % 3, g.RANKS[hand(s, seat)[0] // 4]))
    assert g.outcome(s).over and g.outcome(s).scores == (1, 2, 2) and g.outcome(s).winners == (1, 2)
    assert ev[-1] == {"event": "game_over", "scores": [1, 2, 2], "winners": [1, 2]}
    assert g.view(s, 0)["winners"] == [1, 2] and s.turn is None and g.to_move(s) == ()
    refused(s, 0, Ask(1, "2"), "game_over")


# ---------------------------------------------------------------------------- forced sets

def test_forced_sets_most_sets_first_even_through_a_rank_that_turns_wild():
    # 7-7-7 first (no wilds); the fourth 7 is then wild and completes Q-Q-7.
    s = position([Cs("7C 7D 7H 7S QC QD"), Cs("2C")], Cs("KH"), turn=0)
    s, _ = act(s, 0, Ask(1, "Q"))
    assert [cs for _, cs in s.sets] == [tuple(Cs("7C 7D 7H")), tuple(sorted(Cs("QC QD 7S")))]


def test_forced_sets_prefer_more_sets_over_lower_ids():
    # 2s are wild. 2C-2D-2H has the lowest ids but would leave K-K and two singles with no
    # wild: one set. 9H-2C-2D then K-K-2H makes two, so that is what is forced.
    s = position([Cs("2C 2D 2H KC KD QS"), Cs("3C")], Cs("9H"), turn=0, sets=[(1, Cs("2S 8C 8D"))])
    s, _ = act(s, 0, Ask(1, "K"))
    assert [cs for seat, cs in s.sets if seat == 0] == [tuple(sorted(Cs("2C 2D 9H"))), tuple(sorted(Cs("2H KC KD")))]
    assert hand(s, 0) == [C("QS")]


def test_forced_sets_equal_counts_go_to_the_lowest_ids():
    # Jacks (and 4s) wild; two jacks make one set either with 2C or with 5-5: 2C-JC-JD is lowest.
    s = position([Cs("2C 5C 5D JC JD QS"), Cs("3C")], Cs("KH"), turn=0, sets=[(1, Cs("JS 4C 4D"))])
    s, _ = act(s, 0, Ask(1, "Q"))
    assert [cs for seat, cs in s.sets if seat == 0] == [tuple(sorted(Cs("2C JC JD")))]


def _triples_ok(cards, wild):
    return g._shape(cards, wild)[0]


@functools.lru_cache(maxsize=None)
def _best(hand_bits: int, wild: int) -> int:
    """Brute force: the most sets a hand can place, trying every triple in every order."""
    ids = g.hand_ids(hand_bits)
    best = 0
    for t in itertools.combinations(ids, 3):
        if _triples_ok(t, wild):
            w2 = wild
            for c in t:
                w2 |= 1 << (c // 4)
            best = max(best, 1 + _best(hand_bits & ~g.hand_mask(t), w2))
    return best


@settings(max_examples=150)
@given(cards=st.sets(st.integers(0, 51), max_size=9), wild=st.integers(0, (1 << 13) - 1))
def test_forced_choice_matches_a_brute_force_reading_of_the_rule(cards, wild):
    """Most sets; then a set without wilds; then the lowest sorted ids - at every step."""
    bits = g.hand_mask(cards)
    total = _best(bits, wild)
    placed = 0
    while True:
        choice = g._forced_choice(bits, wild)
        want = _best(bits, wild)
        if want == 0:
            assert choice is None and not g._any_set(bits, wild)
            break
        assert g._any_set(bits, wild)
        ok = []
        for t in itertools.combinations(g.hand_ids(bits), 3):
            if _triples_ok(t, wild):
                w2 = wild
                for c in t:
                    w2 |= 1 << (c // 4)
                if 1 + _best(bits & ~g.hand_mask(t), w2) == want:
                    ok.append((g._shape(t, wild)[2] > 0, t))
        assert choice == min(ok)[1]
        for c in choice:
            wild |= 1 << (c // 4)
        bits &= ~g.hand_mask(choice)
        placed += 1
    assert placed == total


# ---------------------------------------------------------------------------- deal, settings, refusals

def test_deal_four_each_from_the_dealers_left_and_the_dealers_left_starts():
    s = table(3, dealer=1)
    assert g.pending_chance(s) == ChanceRequest("deal", 52) and g.to_move(s) == ()
    assert g.view(s, 0)["hand"] == [] and g.view(s, 0)["phase"] == "deal"
    refused(s, 0, Ask(1, "A"), "not_dealt")
    s, ev = g.apply(s, None, ChanceOutcome("deal", tuple(range(52))))
    # Cards go one at a time to seats 2, 0, 1, 2, 0, 1, ...
    assert hand(s, 2) == [0, 3, 6, 9] and hand(s, 0) == [1, 4, 7, 10] and hand(s, 1) == [2, 5, 8, 11]
    assert s.pile == tuple(range(12, 52)) and s.turn == 2 and g.to_move(s) == (2,)
    assert ev == [{"event": "cards_dealt", "dealer": 1, "each": 4, "pile": 40},
                  {"event": "turn_started", "seat": 2, "last_ask": False}]
    assert g.pending_chance(s) is None
    with pytest.raises(IllegalAction) as e:
        g.apply(s, None, ChanceOutcome("deal", tuple(range(52))))
    assert e.value.code == "no_chance_pending"


def test_chance_outcome_checks():
    s = table(2, dealer=0)
    for outcome, code in [(ChanceOutcome("shuffle", tuple(range(52))), "wrong_chance"),
                          (ChanceOutcome("deal", tuple(range(51))), "bad_permutation"),
                          (ChanceOutcome("deal", (0,) * 52), "bad_permutation")]:
        with pytest.raises(IllegalAction) as e:
            g.apply(s, None, outcome)
        assert e.value.code == code
    refused(s, 0, ChanceOutcome("deal", tuple(range(52))), "table_only")


def test_settings_defaults_and_checks():
    assert g.default_settings() == {"dealer": -1, "turn_timer": 60.0}     # -1: drawn by lot (test_first_dealer.py)
    assert table(6, dealer=5, turn_timer=0).turn_timer == 0.0
    for n, setting in [(1, {}), (7, {}), (3, {"dealer": 3}), (3, {"dealer": -2}), (3, {"turn_timer": -1.0}),
                     (3, {"turn_timer": float("inf")}), (3, {"dealer": "1"}), (3, {"dealer": True}),
                     (3, {"first_player": 0})]:
        with pytest.raises(IllegalAction) as e:
            table(n, **setting)
        assert e.value.code == "bad_settings", (n, setting)


def test_every_refusal_has_its_code_and_leaves_the_state_alone():
    s = position([Cs("7C 7D 2C"), Cs("7H 4C"), Cs("9C")], Cs("QH"), turn=0)
    before = s
    refused(s, 1, Ask(0, "4"), "not_your_turn")
    refused(s, None, Ask(1, "7"), "not_your_turn")
    refused(s, 0, Ask(0, "7"), "bad_target")
    refused(s, 0, Ask(3, "7"), "bad_target")
    refused(s, 0, Ask(1, "11"), "bad_rank")
    refused(s, 0, Ask(1, "j"), "bad_rank")
    refused(s, 0, Ask(1, "K"), "rank_not_held")
    refused(s, 0, EndTurn(), "must_ask")
    refused(s, 0, Place(tuple(Cs("7C 7D"))), "bad_set")
    refused(s, 0, Place(tuple(Cs("7C 7C 7D"))), "bad_set")
    refused(s, 0, Place(tuple(Cs("7C 7D 7H"))), "not_in_hand")
    refused(s, 0, Place((C("7C"), C("7D"), 60)), "not_in_hand")
    refused(s, 0, Place(tuple(Cs("7C 7D 2C"))), "not_a_set")
    refused(s, 0, "ask", "unknown_action")
    assert s == before
    s, _ = act(s, 0, Ask(1, "7"))
    refused(s, 0, Ask(1, "2"), "no_extra_ask")


def test_a_rank_held_only_as_a_wild_card_may_be_asked_for_and_a_wild_does_not_stand_for_another_rank():
    s = position([Cs("JD 2C"), Cs("JH 3C")], Cs("QH QS"), turn=0, sets=[(1, Cs("JC 4C 4D"))])
    refused(s, 0, Ask(1, "3"), "rank_not_held")
    s, ev = act(s, 0, Ask(1, "J"))
    assert ev[0]["handed"] == 1 and s.turn == 1


def test_asking_a_player_with_no_cards_is_a_go_fish():
    s = position([Cs("7C 2C"), [], Cs("9C")], Cs("QH"), turn=0)
    s, ev = act(s, 0, Ask(1, "7"))
    assert ev[0]["handed"] == 0 and ev[1]["reason"] == "go_fish"


# ---------------------------------------------------------------------------- codec, views, timers

def test_actions_codec_round_trip_and_strict_fields():
    for a in (Ask(2, "10"), Place((1, 2, 3)), EndTurn()):
        data = to_data(a)
        assert g.ACTIONS.decode(unpackb(packb(data))) == a
    assert to_data(Ask(1, "Q")) == {"kind": "ask", "target": 1, "rank": "Q"}
    for bad in ({"kind": "ask", "target": 1, "rank": 12}, {"kind": "ask", "target": "1", "rank": "Q"},
                {"kind": "ask", "target": 6, "rank": "Q"}, {"kind": "place", "cards": [1, 2, 52]},
                {"kind": "place"}, {"kind": "fish"}):
        with pytest.raises(ProtocolError):
            g.ACTIONS.decode(bad)
    assert REGISTRY[g.NAME] is g and g.TITLE == "Go Fish Wildcard"
    assert (g.MIN_PLAYERS, g.MAX_PLAYERS) == (2, 6)


def test_card_info_and_labels():
    assert g.card_label(C("10H")) == "10H" and g.card_label(0) == "AC" and g.card_label(51) == "KS"
    assert g.card_info(C("QD")) == {"id": 45, "rank": "Q", "suit": "D", "suit_name": "diamonds", "label": "QD"}
    assert len({g.card_label(c) for c in range(52)}) == 52


def test_view_shape_and_public_ask_history():
    s = position([Cs("7C 7D 2C"), Cs("7H 4C"), Cs("9C")], Cs("QH"), turn=0)
    s, _ = act(s, 0, Ask(2, "2"))
    v = g.view(s, 0)
    assert v["game"] == g.NAME and v["seat"] == 0 and v["turn"] == 1 and v["phase"] == "play"
    assert v["hand"] == sorted(Cs("7C 7D 2C QH"))
    assert v["asks"] == [{"seat": 0, "target": 2, "rank": "2", "handed": 0, "drew": 1}]
    assert [p["hand"] for p in v["players"]] == [4, 2, 1]
    assert v["pile"] == len(s.pile) and v["wild_ranks"] == [] and v["scores"] == [0, 0, 0]
    spectator = g.view(s, None)
    assert "hand" not in spectator and spectator["bonus"] == [] and spectator["seat"] is None
    assert unpackb(packb(v)) == v
    snap = g.snapshot(s)
    assert snap["hands"][0] == v["hand"] and snap["pile"] == list(s.pile)
    assert len(state_hash(g, s)) == 16


def test_timeout_defaults():
    s = position([Cs("7C 7D 2C"), Cs("7H 4C"), []], Cs("QH"), turn=0)
    t = g.timeout_action(s)
    assert t == Timeout(60.0, 0, Ask(1, "2"))     # lowest card's rank, next seat holding cards
    s2 = position([Cs("7C 7D 2C"), [], Cs("7H 4C")], Cs("QH"), turn=0)
    assert g.timeout_action(s2).action == Ask(2, "2")
    s3, _ = act(s, 0, Ask(1, "7"))
    assert g.timeout_action(s3) == Timeout(60.0, 0, Place(tuple(sorted(Cs("7C 7D 7H")))))
    s4, ev = act(s3, 0, g.timeout_action(s3).action)
    assert "extra_ask_earned" in kinds(ev)
    assert g.timeout_action(s4).action == Ask(1, "2")
    assert g.timeout_action(evolve(s, turn_timer=0.0)) is None
    assert g.timeout_action(table(2)) is None and g.auto_action(s) is None


@settings(max_examples=8)
@given(seats=st.integers(2, 6), seed=st.integers(0, 2**32 - 1))
def test_games_played_by_the_timer_alone_end(seats, seed):
    s = table(seats, dealer=0)
    perm = list(range(52))
    random.Random(seed).shuffle(perm)
    s, _ = g.apply(s, None, ChanceOutcome("deal", tuple(perm)))
    for _ in range(2000):
        t = g.timeout_action(s)
        if t is None:
            break
        s, _ = g.apply(s, t.seat, t.action)
    assert g.outcome(s).over and all_cards(s) == list(range(52))


# ---------------------------------------------------------------------------- playouts

def scramble(state, seat, rng):
    """The same position with every card ``seat`` cannot see moved at random among the
    places it cannot see (other hands, the pile), each keeping its size."""
    hidden_seats = [i for i in range(state.n) if i != seat]
    pool = [c for i in hidden_seats for c in g.hand_ids(state.hands[i])] + list(state.pile)
    rng.shuffle(pool)
    hands = list(state.hands)
    k = 0
    for i in hidden_seats:
        size = state.hands[i].bit_count()
        hands[i] = g.hand_mask(pool[k:k + size])
        k += size
    return evolve(state, hands=tuple(hands), pile=tuple(pool[k:]))


def visible_cards(v) -> set:
    out = set(v.get("hand", ())) | set(v["bonus"])
    for p in v["players"]:
        for st_ in p["sets"]:
            out |= set(st_["cards"])
    return out


# Every event and its fields: all public (seats, ranks, counts); only a placed set names cards.
EVENT_KEYS = {
    "cards_dealt": {"event", "dealer", "each", "pile"},
    "turn_started": {"event", "seat", "last_ask"},
    "asked": {"event", "seat", "target", "rank", "handed"},
    "cards_drawn": {"event", "seat", "count", "reason", "pile"},
    "set_placed": {"event", "seat", "set", "cards", "rank", "wilds", "forced", "new_wild"},
    "extra_ask_earned": {"event", "seat"},
    "turn_ended": {"event", "seat"},
    "last_asks_began": {"event", "drawer", "order"},
    "turn_skipped": {"event", "seat", "reason"},
    "game_over": {"event", "scores", "winners"},
}


def check_step(before, after, action, seat, request, events, rng):
    # Cards are conserved: every card is in exactly one hand, the pile or a set.
    assert all_cards(after) == list(range(52))
    assert after.scores == tuple(sum(1 for s_, _ in after.sets if s_ == i) for i in range(after.n))
    # Every set placed was valid at the moment it was placed, by the seat whose turn it was.
    wild = before.wild
    for e in events:
        if e["event"] == "set_placed":
            cards = tuple(e["cards"])
            assert len(cards) == 3 and g._shape(cards, wild)[0], (cards, wild)
            assert e["seat"] == before.turn == seat
            assert e["wilds"] == sum(1 for c in cards if wild >> (c // 4) & 1)
            for c in cards:
                wild |= 1 << (c // 4)
        else:
            assert "cards" not in e, "only a placed set shows cards in an event"
        assert set(e) == EVENT_KEYS[e["event"]], e
    assert wild == after.wild
    packb(events)
    # The turn structure the engine promises.
    if after.phase == "play":
        assert after.pile and after.hands[after.turn]
    if after.phase == "last_asks":
        assert not after.pile and after.hands[after.turn] and after.step == "ask"
    if after.step == "bonus":
        assert after.bonus & after.hands[after.turn]
    if after.turn is not None and after.step != "bonus":
        # After a turn ends, no set is left in that hand (forced sets).
        if before.turn is not None and after.turn != before.turn:
            assert not g._any_set(after.hands[before.turn], after.wild)
    # Views: each seat sees its own hand and the public table, nothing else.
    for viewer in [*range(after.n), None]:
        v = g.view(after, viewer)
        own = g.hand_ids(after.hands[viewer]) if viewer is not None else []
        assert v.get("hand", "spectator") == (own if viewer is not None else "spectator")
        assert visible_cards(v) <= set(own) | {c for _, cs in after.sets for c in cs}
        assert g.view(scramble(after, viewer, rng), viewer) == v
        assert unpackb(packb(v)) == v
    # The timer's move and every offered action are legal.
    t = g.timeout_action(after)
    if after.phase in ("play", "last_asks"):
        assert t is not None and t.seat == after.turn
        g.apply(after, t.seat, t.action)
        legal = g.legal_actions(after, after.turn)
        for a in rng.sample(legal, min(4, len(legal))):
            g.apply(after, after.turn, a)
        assert all(g.legal_actions(after, i) == [] for i in range(after.n) if i != after.turn)
    else:
        assert t is None


@settings(max_examples=50)
@given(seats=st.integers(2, 6), seed=st.integers(0, 2**32 - 1), dealer=st.integers(0, 5))
def test_random_playouts_keep_every_invariant_and_replay_exactly(seats, seed, dealer):
    rng = random.Random(seed ^ 0x5EED)
    config = {"dealer": dealer % seats}
    p = play(g, seats, config, seed=seed, hash_every=1,
             on_step=lambda *a: check_step(*a, rng=rng))
    assert g.outcome(p.state).over
    out = g.outcome(p.state)
    assert out.winners == tuple(i for i, x in enumerate(out.scores) if x == max(out.scores))
    assert sum(out.scores) == len(p.state.sets)
    # Replay of the records (hash after every step) rebuilds the live state exactly.
    r = fold(g, g.new_table(TableConfig(g.NAME, seats, config)), p.records)
    assert r.state == p.state and state_hash(g, r.state) == state_hash(g, p.state)
    assert r.hashes_checked >= r.actions + r.chances


def test_many_quick_games_all_end():
    for seed in range(60):
        p = play(g, 2 + seed % 5, {"dealer": seed % 2}, seed=seed, hash_every=0)
        assert g.outcome(p.state).over and all_cards(p.state) == list(range(52))
