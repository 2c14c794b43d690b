"""Go Wild! engine: the rulebook's worked example and every settled reading
(docs/DECISIONS.md "Go Wild!"), then hypothesis playouts checking invariants after every step."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings, strategies as st

from wildtable.protocol.states import evolve
from wildtable.protocol.codec import check_free, packb
from wildtable.protocol.engine import ChanceOutcome, ChanceRequest, TableConfig, Timeout, state_hash
from wildtable.protocol.errors import IllegalAction, ProtocolError
from wildtable.protocol.games import go_wild as gw
from wildtable.protocol.replay import fold
from wildtable.selfplay import play

RED, YELLOW, ORANGE, BLUE, GREEN, WILD = range(6)


class Pool:
    """Hands out unused card ids of a colour (18 per colour, wild = index 5)."""

    def __init__(self):
        self.next = {col: col * 18 for col in range(6)}

    def __call__(self, colour: int, k: int) -> list[int]:
        start = self.next[colour]
        assert start + k <= colour * 18 + 18, "more cards of one colour than the deck has"
        self.next[colour] = start + k
        return list(range(start, start + k))


def deal(hands: list[list[int]], first: int = 0, deck_top: list[int] = (), **settings) -> gw.State:
    """A table where seat i was dealt exactly hands[i] (12 each) and ``first`` leads; the deck
    starts with ``deck_top``. The engine deals one card at a time clockwise from the leader."""
    n = len(hands)
    assert all(len(h) == 12 for h in hands)
    state = gw.new_table(TableConfig(gw.NAME, n, {"first_player": first, **settings}))
    assert gw.pending_chance(state) == ChanceRequest("deal", 108)
    perm = [hands[(first + i) % n][i // n] for i in range(12 * n)]
    used = set(perm) | set(deck_top)
    perm += list(deck_top) + [c for c in range(108) if c not in used]
    state, events = gw.apply(state, None, ChanceOutcome("deal", tuple(perm)))
    assert events[-1] == {"event": "trick_started", "round": 1, "trick": 1, "points": 1, "leader": first}
    assert [sorted(h) for h in hands] == [gw.cards_of(h) for h in state.hands]
    return state


def p(state: gw.State, seat: int, cards: list[int]) -> tuple[gw.State, list[dict]]:
    return gw.apply(state, seat, gw.Play(tuple(cards)))


# Codes raised by engine.check_permutation (shared by all games, worded there).
SHARED_CODES = {"no_chance_pending", "wrong_chance", "bad_permutation"}


def refused(code: str, state: gw.State, seat, action) -> IllegalAction:
    with pytest.raises(IllegalAction) as e:
        gw.apply(state, seat, action)
    assert e.value.code == code, e.value
    if code not in SHARED_CODES:   # ours are sentences a player understands
        assert e.value.reason[0].isupper() and e.value.reason.endswith("."), e.value.reason
    return e.value


def ev(events: list[dict], name: str) -> dict:
    found = [e for e in events if e["event"] == name]
    assert len(found) == 1, (name, events)
    return found[0]


# ----------------------------------------------------------------------------- the worked example

def test_rulebook_example_trick_four_blue_and_four_wild_win():
    """Rulebook "Example of Playing a Trick": Paul leads 3 orange, Anne sloughs 4 wilds,
    Larry plays 6 green, Margaret (the Wild One) plays 4 blue + 4 wild and wins."""
    c = Pool()
    paul = c(RED, 1) + c(YELLOW, 2) + c(ORANGE, 3) + c(RED, 6)
    anne = c(RED, 1) + c(YELLOW, 1) + c(WILD, 4) + c(YELLOW, 6)
    larry = c(RED, 1) + c(YELLOW, 1) + c(GREEN, 6) + c(ORANGE, 4)
    marg = c(RED, 2) + c(YELLOW, 1) + c(BLUE, 4) + c(WILD, 4) + c(ORANGE, 1)
    s = deal([paul, anne, larry, marg], first=0)
    # Trick 1 (nobody is the Wild One in the game's first trick): Margaret wins with 2 red.
    s, _ = p(s, 0, paul[:1])
    s, _ = p(s, 1, anne[:1])
    s, _ = p(s, 2, larry[:1])
    refused("not_wild_one", s, 3, gw.Play((marg[0], marg[7])))
    s, events = p(s, 3, marg[:2])
    assert ev(events, "trick_won") == {"event": "trick_won", "seat": 3, "round": 1, "trick": 1, "points": 1,
                                       "size": 2, "score": 1}
    assert ev(events, "wild_one_passed") == {"event": "wild_one_passed", "seat": 3, "previous": None}
    assert s.wild_one == 3 and s.turn == 3 and s.trick_no == 2
    # Trick 2: Margaret leads; Paul's 2 yellow win, so Paul leads the example trick.
    s, _ = p(s, 3, marg[2:3])
    s, _ = p(s, 0, paul[1:3])
    s, _ = p(s, 1, anne[1:2])
    s, events = p(s, 2, larry[1:2])
    assert ev(events, "trick_won")["seat"] == 0 and s.leader == 0 and s.turn == 0
    # Trick 3, the example.
    s, _ = p(s, 0, paul[3:6])
    s, events = p(s, 1, anne[2:6])
    assert events == [{"event": "cards_played", "seat": 1, "cards": anne[2:6], "kind": "slough", "size": 0,
                       "next": 2}]
    s, _ = p(s, 2, larry[2:8])
    v = gw.view(s, None)
    assert v["trick"] == [{"seat": 0, "cards": paul[3:6], "kind": "set"},
                          {"seat": 1, "cards": anne[2:6], "kind": "slough"},
                          {"seat": 2, "cards": larry[2:8], "kind": "set"}]
    assert v["best"] == {"seat": 2, "size": 6} and v["turn"] == 3
    assert (v["trick_number"], v["trick_points"], v["wild_one"]) == (3, 3, 3)
    s, events = p(s, 3, marg[3:11])
    assert events[0] == {"event": "cards_played", "seat": 3, "cards": marg[3:11], "kind": "mixed", "size": 8,
                         "next": None}
    assert ev(events, "trick_won") == {"event": "trick_won", "seat": 3, "round": 1, "trick": 3, "points": 3,
                                       "size": 8, "score": 4}
    assert s.scores == (2, 0, 0, 4)
    v = gw.view(s, 3)
    assert [e["kind"] for e in v["last_trick"]["plays"]] == ["set", "slough", "set", "mixed"]
    assert v["last_trick"]["winner"] == 3 and v["last_trick"]["points"] == 3
    # The round is over: everyone refilled to 12, Margaret (the winner) leads round 2.
    assert v["round"] == 2 and v["trick_number"] == 1 and v["leader"] == 3 and v["turn"] == 3
    assert v["hand_counts"] == [12, 12, 12, 12]
    assert v["discard_count"] == 31 and v["deck_count"] == 108 - 48 - 31


# ----------------------------------------------------------------------------- valid sets

def _wild_one_leading_trick_two():
    """Two players; seat 0 wins the first trick with one red and leads trick 2 as the Wild One."""
    c = Pool()
    a = c(RED, 2) + c(BLUE, 2) + c(WILD, 3) + c(ORANGE, 5)
    b = c(YELLOW, 2) + c(WILD, 2) + c(GREEN, 8)
    s = deal([a, b], first=0)
    s, _ = p(s, 0, a[:1])
    s, _ = p(s, 1, b[:1])        # 1 against 1: the earlier player, seat 0, wins
    assert s.wild_one == 0 and s.turn == 0 and s.trick_no == 2
    return s, a, b


def test_wild_one_two_blue_take_one_or_two_wilds_not_three():
    """Rulebook: "the Wild One could play two blue cards with one or two wild cards, but not
    with three or more wild cards"."""
    s, a, _b = _wild_one_leading_trick_two()
    blue, wild = a[2:4], a[4:7]
    for w in (1, 2):
        after, events = p(s, 0, blue + wild[:w])
        assert events[0]["kind"] == "mixed" and events[0]["size"] == 2 + w
        assert after.best == 0 and after.best_size == 2 + w
    e = refused("too_many_wilds", s, 0, gw.Play(tuple(blue + wild)))
    assert "at most 2" in e.reason
    # The Wild One holding colour cards may not slough.
    refused("wild_one_cannot_slough", s, 0, gw.Play(tuple(wild[:1])))


def test_mixed_set_refused_for_anyone_but_the_wild_one():
    s, a, b = _wild_one_leading_trick_two()
    s, _ = p(s, 0, a[1:2])
    refused("not_wild_one", s, 1, gw.Play((b[1], b[2])))          # yellow + wild
    after, events = p(s, 1, b[2:4])                               # wilds alone: a slough
    assert events[0]["kind"] == "slough"
    # In the game's very first trick nobody is the Wild One, not even the leader.
    c = Pool()
    s0 = deal([c(RED, 6) + c(WILD, 6), c(BLUE, 12)], first=0)
    assert s0.wild_one is None
    refused("not_wild_one", s0, 0, gw.Play((0, 90)))


def test_colour_cards_must_share_one_colour_and_the_lead_binds_nobody():
    c = Pool()
    a = c(RED, 6) + c(YELLOW, 6)
    b = c(BLUE, 6) + c(GREEN, 6)
    s = deal([a, b], first=0)
    e = refused("mixed_colours", s, 0, gw.Play((a[0], a[6])))
    assert "red" in e.reason and "yellow" in e.reason
    s, _ = p(s, 0, a[:2])
    s, events = p(s, 1, b[6:9])                                   # green after a red lead: fine, and wins
    assert ev(events, "trick_won")["seat"] == 1


def test_wild_one_with_no_colour_card_may_slough_and_an_all_slough_trick_scores_nobody():
    """docs/DECISIONS.md "Go Wild!": a Wild One holding no colour card may slough; if every play is a slough
    nobody scores, the Wild One stays, and the same player leads again."""
    c = Pool()
    a = c(RED, 3) + c(WILD, 9)
    b = c(GREEN, 9) + c(WILD, 3)
    refills = c(WILD, 3)
    greens = c(GREEN, 3)
    # Round 1's refill is dealt from seat 0 (the last trick's winner): 0, 1, 0, 1, 0, 1.
    top = [refills[0], greens[0], refills[1], greens[1], refills[2], greens[2]]
    s = deal([a, b], first=0, deck_top=top)
    for t in range(3):                                            # seat 0 wins all three (ties)
        s, _ = p(s, 0, a[t:t + 1])
        s, _ = p(s, 1, b[t:t + 1])
    assert s.scores == (6, 0) and s.wild_one == 0 and s.round == 2 and s.turn == 0
    assert gw.cards_of(s.hands[0]) == sorted(a[3:] + refills)     # only wilds now
    s, events = p(s, 0, refills[:2])                              # the Wild One sloughs
    assert events[0]["kind"] == "slough"
    s, events = p(s, 1, b[9:10])
    assert ev(events, "trick_sloughed") == {"event": "trick_sloughed", "round": 2, "trick": 1, "points": 1}
    assert not [e for e in events if e["event"] in ("trick_won", "wild_one_passed")]
    assert s.scores == (6, 0) and s.wild_one == 0
    assert (s.leader, s.turn, s.trick_no, s.round) == (0, 0, 2, 2)
    assert gw.view(s, 1)["last_trick"]["winner"] is None


def test_an_all_slough_first_trick_of_the_game_leaves_nobody_wild_one():
    c = Pool()
    a = c(RED, 6) + c(WILD, 6)
    b = c(BLUE, 6) + c(WILD, 6)
    cc = c(GREEN, 6) + c(WILD, 6)
    s = deal([a, b, cc], first=1)
    s, _ = p(s, 1, b[6:8])
    s, _ = p(s, 2, cc[6:7])
    s, events = p(s, 0, a[6:9])
    ev(events, "trick_sloughed")
    assert s.wild_one is None and s.scores == (0, 0, 0) and (s.leader, s.trick_no) == (1, 2)
    refused("not_wild_one", s, 1, gw.Play((b[0], b[8])))


# ----------------------------------------------------------------------------- winning, Wild One

def test_ties_go_to_the_earlier_player():
    c = Pool()
    a = c(RED, 12)
    b = c(BLUE, 12)
    d = c(GREEN, 12)
    s = deal([a, b, d], first=0)
    s, _ = p(s, 0, a[:1])
    s, _ = p(s, 1, b[:3])
    s, events = p(s, 2, d[:3])                   # 3 ties 3: seat 1 played first
    assert ev(events, "trick_won")["seat"] == 1 and s.scores == (0, 1, 0) and s.leader == 1
    # Trick 2 is led by seat 1; seat 2 and seat 0 both match the lead's 2 cards.
    s, _ = p(s, 1, b[3:5])
    s, _ = p(s, 2, d[3:5])
    s, events = p(s, 0, a[1:3])
    assert ev(events, "trick_won")["seat"] == 1 and s.scores == (0, 3, 0)


def test_wild_one_status_passes_at_the_next_rounds_first_trick():
    """Rulebook: Margaret, winning round A's first trick, may mix wilds in its tricks 2 and 3
    "and trick one of round B"; whoever wins the first trick of round B is the next Wild One."""
    c = Pool()
    a = c(RED, 5) + c(BLUE, 2) + c(WILD, 5)
    b = c(YELLOW, 9) + c(GREEN, 2) + c(WILD, 1)
    s = deal([a, b], first=0, deck_top=c(ORANGE, 6))
    s, _ = p(s, 0, a[:1])
    s, _ = p(s, 1, b[9:10])
    assert s.wild_one == 0
    s, _ = p(s, 0, a[1:2])
    s, _ = p(s, 1, b[10:11])
    s, _ = p(s, 0, a[2:3])
    s, _ = p(s, 1, b[:1])
    assert (s.round, s.trick_no, s.turn, s.wild_one, s.scores) == (2, 1, 0, 0, (6, 0))
    # Round B, trick 1: seat 0 is still the Wild One and may mix.
    s, events = p(s, 0, a[5:7] + a[7:9])
    assert events[0]["kind"] == "mixed"
    s, events = p(s, 1, b[1:6])                  # 5 yellow beat the Wild One's 4
    assert ev(events, "wild_one_passed") == {"event": "wild_one_passed", "seat": 1, "previous": 0}
    assert s.wild_one == 1 and s.scores == (6, 1)
    v = gw.view(s, 0)
    assert v["wild_one"] == 1 and [pl["wild_one"] for pl in v["players"]] == [False, True]
    # Trick 2: the new Wild One mixes, the old one may not.
    s, events = p(s, 1, b[6:7] + b[11:12])
    assert events[0]["kind"] == "mixed"
    refused("not_wild_one", s, 0, gw.Play((a[3], a[9])))


def test_winning_the_first_trick_again_keeps_the_wild_one():
    c = Pool()
    a = c(RED, 12)
    b = c(BLUE, 12)
    s = deal([a, b], first=0, deck_top=c(GREEN, 6))
    for t in range(3):
        s, events = p(s, 0, a[t:t + 1])
        s, events = p(s, 1, b[t:t + 1])
    s, _ = p(s, 0, a[3:5])
    s, events = p(s, 1, b[3:4])
    assert ev(events, "trick_won")["seat"] == 0
    assert not [e for e in events if e["event"] == "wild_one_passed"] and s.wild_one == 0


# ----------------------------------------------------------------------------- running out, refills

def test_players_out_of_cards_sit_out_and_the_next_seat_with_cards_leads():
    c = Pool()
    a = c(RED, 12)
    b = c(BLUE, 12)
    d = c(GREEN, 12)
    top = c(YELLOW, 18) + c(ORANGE, 2)
    s = deal([a, b, d], first=0, deck_top=top)
    s, _ = p(s, 0, a)                            # all twelve: seat 0 wins and is out of cards
    s, _ = p(s, 1, b[:1])
    s, events = p(s, 2, d[:1])
    assert ev(events, "trick_won")["seat"] == 0 and s.wild_one == 0
    assert ev(events, "trick_started") == {"event": "trick_started", "round": 1, "trick": 2, "points": 2,
                                           "leader": 1}
    assert (s.leader, s.turn) == (1, 1)
    refused("not_your_turn", s, 0, gw.Play((top[0],)))
    s, _ = p(s, 1, b[1:2])
    s, events = p(s, 2, d[1:3])                  # seat 0 is skipped: the trick ends here
    assert ev(events, "trick_won")["seat"] == 2 and s.turn == 2 and s.trick_no == 3
    s, _ = p(s, 2, d[3:5])
    assert s.turn == 1
    s, events = p(s, 1, b[2:3])
    assert ev(events, "trick_won")["seat"] == 2 and s.scores == (1, 0, 5)
    # Refill clockwise from the next leader (seat 2), one card at a time: needs 0:12, 1:3, 2:5.
    assert ev(events, "cards_dealt") == {"event": "cards_dealt", "counts": [12, 3, 5]}
    order = [2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 2, 0] + [0] * 7
    got = {0: [], 1: [], 2: []}
    for seat, card in zip(order, top, strict=True):
        got[seat].append(card)
    assert gw.cards_of(s.hands[0]) == sorted(got[0])
    assert gw.cards_of(s.hands[1]) == sorted(b[3:] + got[1])
    assert gw.cards_of(s.hands[2]) == sorted(d[5:] + got[2])
    assert (s.round, s.trick_no, s.leader, s.turn) == (2, 1, 2, 2)


def test_nobody_holding_a_card_ends_the_round_at_once():
    """Chosen reading: when nobody holds a card at a trick start, the round's remaining
    tricks are not played (nobody scores them); refill and start the next round."""
    c = Pool()
    a = c(RED, 12)
    b = c(YELLOW, 12)
    s = deal([a, b], first=0)
    s, _ = p(s, 0, a)
    s, events = p(s, 1, b)
    names = [e["event"] for e in events]
    assert names == ["cards_played", "trick_won", "wild_one_passed", "tricks_skipped", "round_ended",
                     "cards_dealt", "round_started", "trick_started"]
    assert ev(events, "tricks_skipped") == {"event": "tricks_skipped", "round": 1, "from_trick": 2}
    assert s.scores == (1, 0) and s.wild_one == 0
    assert (s.round, s.trick_no, s.leader, s.turn) == (2, 1, 0, 0)
    assert [h.bit_count() for h in s.hands] == [12, 12] and len(s.deck) == 108 - 48


def test_deck_running_out_reshuffles_the_discard_pile_as_a_chance_record():
    c = Pool()
    a = c(RED, 12)
    b = c(BLUE, 12)
    s = deal([a, b], first=0)
    # Move all but four deck cards to the discard pile (as if many rounds had been played).
    s = evolve(s, deck=s.deck[:4], discard=gw.mask_of(s.deck[4:]))
    four = s.deck
    for t in range(3):
        s, _ = p(s, 0, a[t:t + 1])
        s, events = p(s, 1, b[t:t + 1])
    # Needs 3 + 3 from seat 0: 0, 1, 0, 1 get the four, then the deck is dry at seat 0.
    assert ev(events, "cards_dealt")["counts"] == [2, 2]
    assert ev(events, "deck_ran_out") == {"event": "deck_ran_out", "discard": 80 + 6}
    assert s.phase == gw.RESHUFFLING and s.turn is None and gw.to_move(s) == ()
    assert gw.pending_chance(s) == ChanceRequest("reshuffle", 86)
    refused("waiting_for_deal", s, 0, gw.Play((a[3],)))
    refused("wrong_chance", s, None, ChanceOutcome("deal", tuple(range(86))))
    refused("bad_permutation", s, None, ChanceOutcome("reshuffle", tuple(range(85))))
    refused("chance_from_seat", s, 0, ChanceOutcome("reshuffle", tuple(range(86))))
    pile = gw.cards_of(s.discard)
    perm = tuple(reversed(range(86)))
    s, events = gw.apply(s, None, ChanceOutcome("reshuffle", perm))
    assert events[0] == {"event": "discards_shuffled", "cards": 86}
    assert ev(events, "cards_dealt")["counts"] == [1, 1]
    new_deck = [pile[i] for i in perm]
    assert gw.cards_of(s.hands[0]) == sorted(a[3:] + [four[0], four[2], new_deck[0]])
    assert gw.cards_of(s.hands[1]) == sorted(b[3:] + [four[1], four[3], new_deck[1]])
    assert list(s.deck) == new_deck[2:] and s.discard == 0
    assert (s.phase, s.round, s.turn) == (gw.PLAYING, 2, 0)
    refused("no_chance_pending", s, None, ChanceOutcome("reshuffle", perm))


def test_refill_can_never_run_out_of_cards():
    """Chosen reading: the deck plus discards always refill every hand, because at most
    12 x 6 = 72 of the 108 cards are ever in hands; the worst case still deals fully."""
    c = Pool()
    hands = [c(col, 12) for col in range(5)] + [c(WILD, 12)]
    s = deal(hands, first=0)
    # The deck empty and every card but the hands in the discard pile.
    s = evolve(s, deck=(), discard=gw.mask_of(s.deck))
    for seat in range(6):
        s, events = p(s, seat, hands[seat][:1])
    s, events = p(s, 0, hands[0][1:2])
    for seat in range(1, 6):
        s, events = p(s, seat, hands[seat][1:2])
    for seat in range(6):
        s, events = p(s, seat, hands[seat][2:3])
    assert gw.pending_chance(s) == ChanceRequest("reshuffle", 36 + 18)
    s, _ = gw.apply(s, None, ChanceOutcome("reshuffle", tuple(range(54))))
    assert [h.bit_count() for h in s.hands] == [12] * 6 and len(s.deck) == 36 and s.phase == gw.PLAYING


# ----------------------------------------------------------------------------- the end

def test_game_ends_the_moment_someone_reaches_twenty_even_mid_round():
    c = Pool()
    a = c(RED, 12)
    b = c(BLUE, 12)
    s = deal([a, b], first=0)
    s = evolve(s, scores=(17, 19))
    s, _ = p(s, 0, a[:1])
    s, events = p(s, 1, b[:1])                   # seat 0 wins trick 1: 18
    assert s.phase == gw.PLAYING
    s, _ = p(s, 0, a[1:2])
    s, events = p(s, 1, b[1:2])                  # trick 2, 2 points: 20, with trick 3 unplayed
    assert events[-1] == {"event": "game_over", "winners": [0], "scores": [20, 19]}
    assert s.phase == gw.OVER and gw.outcome(s).over and gw.outcome(s).winners == (0,)
    assert gw.to_move(s) == () and gw.timeout_action(s) is None and gw.legal_actions(s, 0) == []
    assert gw.view(s, 1)["winners"] == [0]
    refused("game_over", s, 0, gw.Play((a[2],)))


def test_target_setting():
    c = Pool()
    a = c(RED, 12)
    b = c(BLUE, 12)
    s = deal([a, b], first=1, target=3)
    assert gw.view(s, None)["target"] == 3
    s, _ = p(s, 1, b[:1])
    s, _ = p(s, 0, a[:1])
    s, _ = p(s, 1, b[1:2])
    s, events = p(s, 0, a[1:2])
    assert gw.outcome(s).over and s.scores == (0, 3) and s.winners == (1,)


# ----------------------------------------------------------------------------- table, chance, refusals

def test_first_leader_by_chance_then_dealt_clockwise_from_them():
    s = gw.new_table(TableConfig(gw.NAME, 4, {}))
    assert gw.pending_chance(s) == ChanceRequest("first_player", 4)
    assert gw.view(s, None)["phase"] == gw.CHOOSING_LEADER and gw.to_move(s) == ()
    refused("waiting_for_deal", s, 0, gw.Play((0,)))
    s, events = gw.apply(s, None, ChanceOutcome("first_player", (2, 0, 3, 1)))
    assert events == [{"event": "leader_chosen", "seat": 2}]
    assert gw.pending_chance(s) == ChanceRequest("deal", 108)
    perm = tuple(reversed(range(108)))
    s, events = gw.apply(s, None, ChanceOutcome("deal", perm))
    assert ev(events, "cards_dealt")["counts"] == [12] * 4
    assert gw.cards_of(s.hands[2]) == sorted(perm[0:48:4])
    assert gw.cards_of(s.hands[3]) == sorted(perm[1:48:4])
    assert list(s.deck) == list(perm[48:])
    assert gw.to_move(s) == (2,) and s.leader == 2 and s.round == 1


def test_host_chooses_the_first_leader():
    s = gw.new_table(TableConfig(gw.NAME, 3, {"first_player": 1}))
    assert gw.pending_chance(s) == ChanceRequest("deal", 108)
    s, _ = gw.apply(s, None, ChanceOutcome("deal", tuple(range(108))))
    assert gw.to_move(s) == (1,)


@pytest.mark.parametrize("seats,given,words", [
    (1, {}, "2 to 6 players"),
    (7, {}, "2 to 6 players"),
    (4, {"target": 0}, "target"),
    (4, {"target": "20"}, "target"),
    (4, {"turn_timer": -1.0}, "turn_timer"),
    (4, {"first_player": 4}, "no seat 4"),
    (4, {"first_player": -2}, "first_player"),
    (4, {"hand_size": 10}, "unknown setting"),
])
def test_bad_settings(seats, given, words):
    with pytest.raises(IllegalAction) as e:
        gw.new_table(TableConfig(gw.NAME, seats, given))
    assert e.value.code == "bad_settings" and words in str(e.value)


def test_settings_defaults():
    assert gw.default_settings() == {"target": 20, "turn_timer": 60.0, "first_player": -1}
    s = gw.new_table(TableConfig(gw.NAME, 2, {"turn_timer": 5}))
    assert s.rules == gw.Rules(2, 20, 5.0, -1)


def test_refusals_leave_the_state_unchanged():
    c = Pool()
    a = c(RED, 6) + c(WILD, 6)
    b = c(BLUE, 12)
    s = deal([a, b], first=0)
    before = gw.snapshot(s)
    e = refused("not_your_turn", s, 1, gw.Play((b[0],)))
    assert "seat 0" in e.reason
    refused("not_your_turn", s, None, gw.Play((a[0],)))
    refused("no_cards", s, 0, gw.Play(()))
    refused("duplicate_card", s, 0, gw.Play((a[0], a[0])))
    e = refused("not_in_hand", s, 0, gw.Play((a[0], b[0])))
    assert f"card {b[0]} (blue)" in e.reason
    refused("not_in_hand", s, 0, gw.Play((500,)))
    refused("not_in_hand", s, 0, gw.Play((-1,)))
    refused("unknown_action", s, 0, "play")
    assert gw.snapshot(s) == before


def test_action_codec():
    a = gw.ACTIONS.decode({"kind": "play", "cards": [3, 91]})
    assert a == gw.Play((3, 91))
    with pytest.raises(ProtocolError):
        gw.ACTIONS.decode({"kind": "play", "cards": [108]})
    with pytest.raises(ProtocolError):
        gw.ACTIONS.decode({"kind": "play", "cards": ["3"]})
    with pytest.raises(ProtocolError):
        gw.ACTIONS.decode({"kind": "play"})


def test_card_info_and_labels():
    assert gw.card_info(0) == {"id": 0, "colour": "red", "wild": False}
    assert gw.card_info(17)["colour"] == "red" and gw.card_info(18)["colour"] == "yellow"
    assert gw.card_info(89)["colour"] == "green" and gw.card_info(90) == {"id": 90, "colour": "wild", "wild": True}
    assert [gw.card_label(c) for c in (36, 54, 107)] == ["orange", "blue", "wild"]
    assert sum(gw.card_info(c)["wild"] for c in range(108)) == 18


# ----------------------------------------------------------------------------- bots, timers

def test_timeout_plays_the_lowest_card_alone_or_sloughs_one_wild():
    c = Pool()
    a = c(WILD, 12)
    b = c(BLUE, 2) + c(RED, 10)
    s = deal([a, b], first=1)
    t = gw.timeout_action(s)
    assert t == Timeout(60.0, 1, gw.Play((b[2],)))              # red 0 is the lowest id
    s, _ = gw.apply(s, t.seat, t.action)
    t = gw.timeout_action(s)
    assert t.seat == 0 and t.action == gw.Play((a[0],))         # only wilds: a one-wild slough
    s, events = gw.apply(s, t.seat, t.action)
    assert ev(events, "trick_won")["seat"] == 1
    off = gw.new_table(TableConfig(gw.NAME, 2, {"turn_timer": 0, "first_player": 0}))
    off, _ = gw.apply(off, None, ChanceOutcome("deal", tuple(range(108))))
    assert gw.timeout_action(off) is None and gw.auto_action(off) is None


def test_timer_only_games_end():
    s = gw.new_table(TableConfig(gw.NAME, 5, {"first_player": 3}))
    s, _ = gw.apply(s, None, ChanceOutcome("deal", tuple((i * 37) % 108 for i in range(108))))
    for _ in range(5000):
        if gw.outcome(s).over:
            break
        req = gw.pending_chance(s)
        if req is not None:
            s, _ = gw.apply(s, None, ChanceOutcome(req.purpose, tuple(range(req.size))))
            continue
        t = gw.timeout_action(s)
        s, _ = gw.apply(s, t.seat, t.action)
    assert gw.outcome(s).over and max(s.scores) >= 20 and sorted(s.scores)[-2] < 20


def _signature(cards) -> tuple[int, ...]:
    """A play up to card identity: how many cards of each colour (and wilds)."""
    counts = [0] * 6
    for x in cards:
        counts[gw.COLOUR_OF[x]] += 1
    return tuple(counts)


@pytest.mark.parametrize("who", ["wild_one", "other", "wild_one_without_colour"])
def test_legal_actions_are_exactly_the_legal_plays(who):
    c = Pool()
    a = c(RED, 1) + c(BLUE, 3) + c(GREEN, 2) + c(WILD, 3) + c(YELLOW, 3)
    b = c(ORANGE, 1) + c(RED, 3) + c(WILD, 4) + c(GREEN, 2) + c(YELLOW, 2)
    if who == "wild_one_without_colour":
        a = c(RED, 1) + c(WILD, 11)
    s = deal([a, b], first=0)
    s, _ = p(s, 0, a[:1])
    s, _ = p(s, 1, b[:1])
    assert s.wild_one == 0 and s.turn == 0
    seat = 0
    if who == "other":
        s, _ = p(s, 0, a[-1:])
        seat = 1
    hand = gw.cards_of(s.hands[seat])
    legal = set()
    for r in range(1, len(hand) + 1):
        for combo in itertools.combinations(hand, r):
            try:
                gw.apply(s, seat, gw.Play(combo))
            except IllegalAction:
                continue
            legal.add(_signature(combo))
    offered = [_signature(x.cards) for x in gw.legal_actions(s, seat)]
    assert len(offered) == len(set(offered)) and set(offered) == legal
    assert gw.legal_actions(s, 1 - seat) == []


# ----------------------------------------------------------------------------- views

def test_views_hold_only_what_a_seat_may_know():
    c = Pool()
    a = c(RED, 12)
    b = c(BLUE, 12)
    s = deal([a, b], first=0)
    s, _ = p(s, 0, a[:2])
    v0, v1, vs = gw.view(s, 0), gw.view(s, 1), gw.view(s, None)
    assert v0["hand"] == a[2:] and v1["hand"] == b and "hand" not in vs
    assert v1["trick"] == [{"seat": 0, "cards": a[:2], "kind": "set"}]
    for v in (v0, v1, vs):
        assert v["hand_counts"] == [10, 12] and [pl["hand"] for pl in v["players"]] == [10, 12]
        assert v["deck_count"] == 84 and v["discard_count"] == 0
        assert v["turn"] == 1 and v["leader"] == 0 and v["wild_one"] is None and v["round"] == 1
        assert (v["trick_number"], v["trick_points"], v["scores"], v["winners"]) == (1, 1, [0, 0], [])
    # No hidden card id appears anywhere in another seat's view (ids equal to the seat
    # numbers, counts, set size and target the view does show are left out of the search).
    shown = {0, 1, 2, 10, 12, 20, 84}
    assert not set(a[2:]) & (set(_ints(v1)) - shown)
    assert not set(b) & (set(_ints(vs)) - shown) and not set(a[2:]) & (set(_ints(vs)) - shown)


def _ints(x) -> list[int]:
    if isinstance(x, dict):
        return [i for v in x.values() for i in _ints(v)]
    if isinstance(x, list):
        return [i for v in x for i in _ints(v)]
    return [x] if type(x) is int else []


def hidden(state: gw.State, seat: int | None) -> tuple[list[int], list[int]]:
    """(seats whose hands ``seat`` cannot see, the cards in them plus the deck)."""
    others = [i for i in range(state.rules.seats) if i != seat]
    cards = [x for i in others for x in gw.cards_of(state.hands[i])] + list(state.deck)
    return others, cards


def scramble(state: gw.State, seat: int | None) -> gw.State:
    """Move every card hidden from ``seat`` (other hands, the deck) to a different place,
    keeping every count: what ``seat`` sees must not change."""
    others, cards = hidden(state, seat)
    cards = cards[1:] + cards[:1] if cards else cards
    hands = list(state.hands)
    i = 0
    for o in others:
        k = state.hands[o].bit_count()
        hands[o] = gw.mask_of(cards[i:i + k])
        i += k
    return evolve(state, hands=tuple(hands), deck=tuple(cards[i:]))


def test_scramble_moves_hidden_cards():
    c = Pool()
    s = deal([c(RED, 12), c(BLUE, 12), c(GREEN, 12)], first=0)
    for seat in (0, 1, None):
        t = scramble(s, seat)
        assert gw.snapshot(t) != gw.snapshot(s)
        if seat is not None:
            assert t.hands[seat] == s.hands[seat]


# ----------------------------------------------------------------------------- playouts

def _check_step(before, after, action, seat, request, events):
    n = after.rules.seats
    # Cards are conserved: hands, deck, discard and trick partition the 108 cards.
    masks = list(after.hands) + [after.discard, gw.mask_of(after.deck),
                                 gw.mask_of([x for _s, cs, _k in after.trick for x in cs])]
    total = sum(m.bit_count() for m in masks)
    union = 0
    for m in masks:
        union |= m
    if after.phase in (gw.CHOOSING_LEADER, gw.DEALING):
        assert total == 0
    else:
        assert total == 108 and union == gw.ALL_MASK
        assert len(after.deck) == len(set(after.deck))
    assert all(h.bit_count() <= 12 for h in after.hands)
    # Points only ever 1, 2 or 3, to one seat, at the end of a trick worth that much.
    deltas = [y - x for x, y in zip(before.scores, after.scores)]
    gained = [d for d in deltas if d]
    if gained:
        assert gained == [before.trick_no] and before.trick_no in (1, 2, 3)
        assert after.last_trick[1] == deltas.index(gained[0])
    assert all(d >= 0 for d in deltas)
    assert 1 <= after.trick_no <= 3
    # A new round starts with every hand at twelve; the one to move always holds cards.
    if after.phase == gw.PLAYING:
        assert after.hands[after.turn] and gw.to_move(after) == (after.turn,)
        if not after.trick and after.trick_no == 1:
            assert all(h.bit_count() == 12 for h in after.hands)
        assert gw.timeout_action(after).seat == after.turn
    if after.phase == gw.OVER:
        assert after.winners == (max(range(n), key=after.scores.__getitem__),)
        assert after.scores[after.winners[0]] >= after.rules.target
        assert sorted(after.scores)[-2] < after.rules.target
    else:
        assert max(after.scores) < after.rules.target
    # Events are public: only a play's own (face-up) cards ever appear in them.
    played = set(action.cards) if type(action) is gw.Play else set()
    for e in events:
        assert e["event"].replace("_", "").isalpha()
        if "cards" in e and isinstance(e["cards"], list):
            assert set(e["cards"]) <= played
    packb(events)
    # Views: plain data, own hand only, unchanged when hidden cards move.
    for s in list(range(n)) + [None]:
        v = gw.view(after, s)
        check_free(v, "$")
        packb(v)
        assert v.get("hand", "spectator") == (gw.cards_of(after.hands[s]) if s is not None else "spectator")
        assert gw.view(scramble(after, s), s) == v


@settings(max_examples=30)
@given(seats=st.integers(2, 6), seed=st.integers(0, 2**32 - 1), first=st.integers(-1, 5),
       target=st.sampled_from([20, 20, 20, 7]))
def test_playouts(seats, seed, first, target):
    given_settings = {"target": target, "first_player": min(first, seats - 1)}
    game = play(gw, seats, given_settings, seed=seed, on_step=_check_step, hash_every=16)
    final = game.state
    assert gw.outcome(final).over and max(final.scores) >= target
    # Replay of the records (with their state hashes) equals the live state.
    start = gw.new_table(TableConfig(gw.NAME, seats, given_settings))
    replayed = fold(gw, start, game.records)
    assert replayed.state == final and gw.snapshot(replayed.state) == gw.snapshot(final)
    assert state_hash(gw, replayed.state) == state_hash(gw, final)
    assert replayed.hashes_checked >= game.steps // 16


def test_playouts_include_reshuffles_and_early_round_ends():
    """The rare branches are reached by ordinary play, not only by rigged tables."""
    seen = set()
    for seed in range(40):
        game = play(gw, 2 + seed % 5, {"first_player": seed % 2}, seed=seed, hash_every=0)
        seen |= {e["event"] for e in game.events}
    assert {"discards_shuffled", "trick_sloughed", "wild_one_passed", "deck_ran_out"} <= seen
