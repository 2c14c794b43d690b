"""Rules audit of the Wild Shots engine against /work/shared/rules/wild-shots.txt and
docs/DECISIONS.md "All games" and "Wild Shots": scenarios that the engine once got wrong,
plus the checks that tests/protocol/test_wild_shots.py did not cover yet.
"""

from __future__ import annotations

import attrs

from wildtable.protocol.states import evolve
from wildtable.protocol.engine import TableConfig
from wildtable.protocol.games import wild_shots as ws
from wildtable.protocol.games import wild_shots_data as data

from test_wild_shots import C, play_cards, start, won_event


def _last_trick_of_round(round_index: int, seats: int = 2, totals: tuple[int, ...] | None = None,
                         won: tuple[tuple[int, ...], ...] | None = None) -> ws.State:
    """A table at the 10th trick of ``round_index`` (0-based): seat 0 leads the blue 3,
    seat 1 holds the blue 6 (both without a symbol, so the trick itself scores 0)."""
    s = start(seats, [[]] * seats, ["revolver"])
    lead, follow = C["blue 3"], C["blue 6"]
    assert s.rules.symbols[lead] == s.rules.symbols[follow] == -1
    won = won or ((),) * seats
    rest = [c for c in range(40) if c not in (lead, follow) and all(c not in w for w in won)]
    pens = ((0,) * seats,) * round_index
    return evolve(s,
        round=round_index, trick_no=9, hands=((lead,), (follow,)), aside=tuple(rest), won=won,
        leader=0, turn=0,
        tally=attrs.evolve(s.tally, penalties=pens, totals=totals or (0,) * seats))


# ----------------------------------------------------------------------------- All games: trick ids

def test_every_trick_has_an_id_in_events_and_in_the_view():
    # docs/DECISIONS.md "All games": "Every physical card has a stable id for the whole game;
    # every meld or trick has an id." A trick is named by (round, trick number), as in
    # Go Wild!: trick numbers repeat every round, so the round belongs to the id, and the
    # most recent trick in the view must say which trick it is.
    s = start(2, [["red 8"], ["red 3"]], ["star", "hat"])
    s, ev = play_cards(s, ["red 8", "red 3"])
    w = won_event(ev)
    assert (w["round"], w["trick"]) == (1, 1)
    last = ws.view(s, 0)["last_trick"]
    assert (last["round"], last["trick"]) == (1, 1)
    # Round 3, trick 10: the id is (3, 10), also after the round is scored.
    s = _last_trick_of_round(2)
    s, ev = play_cards(s, ["blue 3", "blue 6"])
    w = won_event(ev)
    assert (w["round"], w["trick"]) == (3, 10)
    assert s.phase == "dealing" and s.round == 3
    last = ws.view(s, None)["last_trick"]
    assert (last["round"], last["trick"]) == (3, 10)


# ----------------------------------------------------------------------------- regression coverage

def test_each_round_counts_only_its_own_hit_symbols():
    # Rulebook "Components" (overview card): Round 1 revolver -2; Round 2 cowboy hat -3;
    # Round 3 sheriff star -4 and wanted poster -5; Round 4 all four.
    s = start(2, [[], []], ["revolver"])
    rates = [{"revolver": 2}, {"hat": 3}, {"star": 4, "poster": 5},
             {"revolver": 2, "hat": 3, "star": 4, "poster": 5}]
    for r, rate in enumerate(rates):
        for c in range(40):
            want = rate.get(data.CARD_SYMBOLS[ws.LABELS[c]], 0)
            assert ws.round_penalty(s, r, [c]) == want, (r, ws.LABELS[c])
    # "in round 1 a player can lose at most 20 negative points"; the maxima per round.
    assert [ws.round_penalty(s, r, list(range(40))) for r in range(4)] == [20, 21, 40, 81]


def test_a_trump_of_the_led_suit_and_an_off_suit_trump_of_equal_value_go_to_the_earlier():
    # docs/DECISIONS.md "Wild Shots", Winner: "the highest card bearing the trump symbol, in any suit
    # (equal values: the earlier card)". Red 9 and green 9 are both revolvers: led red 9
    # is earlier than the void player's green 9, so the leader keeps the trick; in the
    # other order the green 9 (led) wins over a later red 9.
    s = start(2, [["red 9"], ["green 9"]], ["revolver"], avoid={1: "red"})
    s, ev = play_cards(s, ["red 9", "green 9"])
    assert won_event(ev)["seat"] == 0
    s = start(2, [["green 9"], ["red 9"]], ["revolver"], avoid={1: "green"})
    s, ev = play_cards(s, ["green 9", "red 9"])
    assert won_event(ev)["seat"] == 0


def test_an_off_suit_card_without_the_trump_symbol_never_wins():
    # Rulebook "Trump": "If no player plays a card with a trump symbol, the card with the
    # highest value of the suit that the active player played wins the trick." A void
    # player's black 10 (revolver) under a star trump loses to the led red 1.
    s = start(2, [["red 1"], ["black 10"]], ["star"], avoid={1: "red"})
    s, ev = play_cards(s, ["red 1", "black 10"])
    assert won_event(ev)["seat"] == 0


def test_the_fewest_points_win_and_a_tie_is_shared():
    # Rulebook "End of the Game": "The player with the fewest negative points in total
    # wins the game"; docs/DECISIONS.md "Wild Shots": "the fewest penalty points wins, ties shared".
    s = _last_trick_of_round(3, seats=2, totals=(12, 12))
    s, ev = play_cards(s, ["blue 3", "blue 6"])
    assert s.phase == "over" and len(s.tally.penalties) == 4
    assert ev[-1] == {"event": "game_over", "totals": [12, 12], "winners": [0, 1]}
    out = ws.outcome(s)
    assert out.over and out.winners == (0, 1)
    s = _last_trick_of_round(3, seats=2, totals=(30, 12))
    s, ev = play_cards(s, ["blue 3", "blue 6"])
    assert ws.outcome(s).winners == (1,) and ws.view(s, 0)["winners"] == [1]


def test_no_snake_oil_reveal_after_the_tenth_trick_and_four_rounds_only():
    # Rulebook "Round Sequence": "A round consists of 10 tricks"; a new Snake Oil card is
    # revealed before each trick, so none after the 10th. "The game ends after the 4th round."
    s = _last_trick_of_round(0)
    s, ev = play_cards(s, ["blue 3", "blue 6"])
    assert not [e for e in ev if e["event"] == "snake_oil_revealed"]
    assert s.phase == "dealing" and ws.pending_chance(s) == ws.ChanceRequest("deal", 40)
    s = _last_trick_of_round(3)
    s, ev = play_cards(s, ["blue 3", "blue 6"])
    assert s.phase == "over" and ws.pending_chance(s) is None


def test_the_host_may_choose_any_seat_and_a_timer_of_zero_waits():
    # docs/DECISIONS.md "Wild Shots": "The first round's starter is ... the host's choice"; "All games": on a
    # left seat's turn the table waits (no timer) or plays a default legal action.
    for first in range(4):
        s = ws.new_table(TableConfig(ws.NAME, 4, {"first_player": first, "turn_timer": 0}))
        assert s.starter == first and ws.timeout_action(s) is None
