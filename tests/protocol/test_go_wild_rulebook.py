"""Rules audit of the Go Wild! engine against go-wild.txt and docs/DECISIONS.md "Go Wild!".

Each test quotes the rule it checks. The audit found the engine faithful to every rule
sentence; these are regression tests for corners tests/protocol/test_go_wild.py does not reach."""

from __future__ import annotations


from wildtable.protocol.states import evolve
from wildtable.protocol.engine import ChanceOutcome, ChanceRequest
from wildtable.protocol.games import go_wild as gw

from test_go_wild import BLUE, GREEN, ORANGE, RED, WILD, YELLOW, Pool, deal, ev, p, refused


def _wild_one_is_seat_0(hands, deck_top=()):
    """Seat 0 wins trick 1 with one card (ties go to the earlier player) and leads trick 2
    as the Wild One; every other seat plays its first card."""
    s = deal(hands, first=0, deck_top=deck_top)
    for seat, h in enumerate(hands):
        s, _ = p(s, seat, h[:1])
    assert s.wild_one == 0 and s.turn == 0 and s.trick_no == 2
    return s


def test_wild_one_mixed_set_is_one_colour_plus_wilds():
    """Rulebook: the Wild One "can play one or more wild cards with a set of matching-color
    cards" - two colours stay illegal even with wilds added."""
    c = Pool()
    a = c(RED, 1) + c(BLUE, 3) + c(GREEN, 3) + c(WILD, 5)
    b = c(YELLOW, 12)
    s = _wild_one_is_seat_0([a, b])
    refused("mixed_colours", s, 0, gw.Play((a[1], a[4], a[7])))            # blue + green + wild
    refused("mixed_colours", s, 0, gw.Play((a[1], a[2], a[4], a[7], a[8])))
    s, events = p(s, 0, [a[1], a[7]])                                        # one blue, one wild
    assert events[0]["kind"] == "mixed" and events[0]["size"] == 2


def test_a_slough_never_wins_however_many_wilds():
    """Rulebook: sloughed wild cards "can never win tricks or points"; docs/DECISIONS.md "Go Wild!":
    "sloughs count 0". Five sloughed wilds lose to one red card."""
    c = Pool()
    a = c(RED, 12)
    b = c(WILD, 5) + c(BLUE, 7)
    s = deal([a, b], first=0)
    s, _ = p(s, 0, a[:1])
    s, events = p(s, 1, b[:5])
    assert ev(events, "trick_won")["seat"] == 0 and s.scores == (1, 0) and s.wild_one == 0


def test_wild_one_mixed_set_ties_lose_to_the_earlier_set():
    """Rulebook: "If there is a tie for the largest set ... whoever played his or her set
    first is the winner" - a Wild One's wilds count as colour cards, no more."""
    c = Pool()
    a = c(RED, 1) + c(BLUE, 2) + c(WILD, 2) + c(ORANGE, 7)
    b = c(YELLOW, 1) + c(GREEN, 4) + c(YELLOW, 7)
    s = _wild_one_is_seat_0([a, b])
    # Trick 2: seat 0 (Wild One) leads 2 blue + 2 wild = 4; seat 1's 4 green tie and lose.
    s, _ = p(s, 0, a[1:5])
    s, events = p(s, 1, b[1:5])
    assert ev(events, "trick_won") == {"event": "trick_won", "seat": 0, "round": 1, "trick": 2, "points": 2,
                                       "size": 4, "score": 3}
    # Trick 3: seat 0 leads 4 orange, seat 1's 4 yellow tie and lose again.
    s, _ = p(s, 0, a[5:9])
    s, events = p(s, 1, b[5:9])
    assert ev(events, "trick_won")["seat"] == 0 and s.scores == (6, 0)


def test_all_slough_leader_out_of_cards_next_seat_with_cards_leads():
    """docs/DECISIONS.md "Go Wild!": after an all-slough trick "the same player leads again"; "If the trick's
    winner has no cards, the next player clockwise who has cards leads" (docs/RULES.md reads
    it the same way for a leader who sloughed their last card)."""
    c = Pool()
    a = c(RED, 11) + c(WILD, 1)
    b = c(BLUE, 11) + c(WILD, 1)
    d = c(GREEN, 11) + c(WILD, 1)
    s = deal([a, b, d], first=0)
    # Trick 1: seat 0 plays 11 red and wins; trick 2 led by seat 0.
    s, _ = p(s, 0, a[:11])
    s, _ = p(s, 1, b[:1])
    s, _ = p(s, 2, d[:1])
    assert s.wild_one == 0 and s.turn == 0 and s.trick_no == 2
    # Trick 2: seat 0 (Wild One, no colour card left) sloughs its last card, the others slough.
    s, _ = p(s, 0, a[11:])
    s, _ = p(s, 1, b[11:])
    s, events = p(s, 2, d[11:])
    ev(events, "trick_sloughed")
    assert s.scores == (1, 0, 0) and s.wild_one == 0
    assert ev(events, "trick_started") == {"event": "trick_started", "round": 1, "trick": 3, "points": 3,
                                           "leader": 1}
    assert (s.leader, s.turn) == (1, 1)


def test_all_slough_third_trick_refills_from_the_same_leader_and_scores_nobody():
    """docs/DECISIONS.md "Go Wild!": all sloughs - "nobody scores ... and the same player leads again"; after
    trick 3 "every hand is refilled to 12, dealt clockwise from the next leader"."""
    c = Pool()
    a = c(RED, 9) + c(WILD, 3)
    b = c(BLUE, 2) + c(WILD, 10)
    top = c(ORANGE, 11)
    s = deal([a, b], first=0, deck_top=top)
    s, _ = p(s, 0, a[:1])
    s, _ = p(s, 1, b[:2])                        # seat 1 wins trick 1: Wild One, only wilds left
    assert s.wild_one == 1 and s.turn == 1
    s, _ = p(s, 1, b[2:7])                       # the Wild One without colour cards sloughs
    s, events = p(s, 0, a[1:2])                  # one red beats a slough: seat 0 leads trick 3
    assert ev(events, "trick_won")["seat"] == 0 and s.scores == (2, 1) and s.turn == 0
    s, _ = p(s, 0, a[9:10])                      # seat 0 (not the Wild One) sloughs
    s, events = p(s, 1, b[7:8])
    ev(events, "trick_sloughed")
    assert not [e for e in events if e["event"] == "trick_won"] and s.scores == (2, 1) and s.wild_one == 1
    # Refill from seat 0 (the same leader): needs 0:3, 1:8, dealt 0,1,0,1,0,1,1,1,1,1,1.
    assert ev(events, "cards_dealt")["counts"] == [3, 8]
    assert sorted(gw.cards_of(s.hands[0])) == sorted(a[2:9] + a[10:] + [top[0], top[2], top[4]])
    assert (s.round, s.trick_no, s.leader, s.turn) == (2, 1, 0, 0)


def test_reaching_the_target_in_trick_three_ends_the_game_without_a_refill():
    """docs/DECISIONS.md "Go Wild!": "The game ends the moment a player reaches 20 points, even mid-round";
    rulebook: "The first player to reach 20 points is declared the winner."."""
    c = Pool()
    a = c(RED, 12)
    b = c(BLUE, 12)
    s = deal([a, b], first=0)
    s = evolve(s, scores=(16, 19))
    for t in range(2):
        s, _ = p(s, 0, a[t:t + 1])
        s, _ = p(s, 1, b[t:t + 1])
    assert s.scores == (19, 19) and s.trick_no == 3
    s, _ = p(s, 0, a[2:3])
    s, events = p(s, 1, b[2:4])                  # seat 1's 2 blue win trick 3: 22
    names = [e["event"] for e in events]
    assert names == ["cards_played", "trick_won", "game_over"]
    assert s.phase == gw.OVER and s.winners == (1,) and s.scores == (19, 22)
    assert [h.bit_count() for h in s.hands] == [9, 8]


def test_an_exactly_emptied_deck_is_reshuffled_only_when_a_card_is_needed():
    """Rulebook / docs/DECISIONS.md "Go Wild!": "when the deck runs out the discard pile is shuffled (a logged
    chance outcome)"; docs/RULES.md's chosen reading: only when a card is needed from an empty
    deck. A refill that takes the last card asks for no reshuffle; the next refill does."""
    c = Pool()
    a = c(RED, 12)
    b = c(BLUE, 12)
    s = deal([a, b], first=0)
    s = evolve(s, deck=s.deck[:6], discard=gw.mask_of(s.deck[6:]))
    for t in range(3):
        s, _ = p(s, 0, a[t:t + 1])
        s, events = p(s, 1, b[t:t + 1])
    assert ev(events, "cards_dealt")["counts"] == [3, 3]
    assert not [e for e in events if e["event"] == "deck_ran_out"]
    assert s.deck == () and s.phase == gw.PLAYING and gw.pending_chance(s) is None
    assert (s.round, s.turn) == (2, 0)
    hand0 = gw.cards_of(s.hands[0])
    hand1 = gw.cards_of(s.hands[1])
    for t in range(3):
        s, _ = p(s, 0, hand0[t:t + 1])
        s, events = p(s, 1, hand1[t:t + 1])
    assert ev(events, "deck_ran_out") == {"event": "deck_ran_out", "discard": 78 + 6 + 6}
    assert gw.pending_chance(s) == ChanceRequest("reshuffle", 90)
    s, _ = gw.apply(s, None, ChanceOutcome("reshuffle", tuple(range(90))))
    assert [h.bit_count() for h in s.hands] == [12, 12] and len(s.deck) == 84 and s.discard == 0
