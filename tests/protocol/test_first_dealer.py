"""Who deals (or starts) first is a logged chance outcome, or the host's choice.

docs/DECISIONS.md "All games": "Randomness enters only as logged chance outcomes (a shuffle's
permutation, who deals first)"; Run Wild: "Who deals the first round: a logged chance
outcome, or the host's choice (setting)"; Go Fish Wildcard: "The dealer: a logged chance
outcome, or the host's choice (setting)". Go Wild! (first leader) and Wild Shots (first
starter) already drew theirs by lot. Before this rule Run Wild's first dealer and Go
Fish Wildcard's dealer were always seat 0, so seat 1 always started a two-player Go Fish
game (issue #16).

The engine asks for the outcome through ``pending_chance`` like a shuffle (a permutation
of the seats; its first item is the seat), so the server picks and logs it and replay
needs no randomness. Logs written under rules version 1 replay as they were played.
"""

from __future__ import annotations

import pytest

from wildtable.protocol.engine import ChanceOutcome, ChanceRequest, TableConfig, state_hash
from wildtable.protocol.errors import IllegalAction, LogError
from wildtable.protocol.games import REGISTRY
from wildtable.protocol.games import go_fish_wildcard as gf
from wildtable.protocol.games import run_wild as rw
from wildtable.protocol.logfmt import FORMAT_VERSION, ChanceRecorded, Header, StateHashed, encode_record, read_log
from wildtable.protocol.replay import replay
from wildtable.selfplay import play


def refused(game, state, seat, action, code):
    with pytest.raises(IllegalAction) as info:
        game.apply(state, seat, action)
    assert info.value.code == code, info.value.reason


def bad_settings(game, seats, settings, rules=None):
    with pytest.raises(IllegalAction) as info:
        game.new_table(TableConfig(game.NAME, seats, settings, rules))
    assert info.value.code == "bad_settings"
    return info.value.reason


def lot(seat: int, seats: int) -> tuple[int, ...]:
    """The permutation of the seats that draws ``seat``."""
    return (seat, *(s for s in range(seats) if s != seat))


# ------------------------------------------------------------------ Run Wild

@pytest.mark.parametrize("seats", [2, 3, 4])
def test_run_wild_first_dealer_is_drawn_by_lot_before_the_shuffle(seats):
    for dealer in range(seats):
        st = rw.new_table(TableConfig(rw.NAME, seats, {}))
        assert rw.pending_chance(st) == ChanceRequest("first_dealer", seats)
        assert st.phase == "dealing" and rw.view(st, None)["dealer"] is None
        assert rw.snapshot(st)["dealer"] is None and rw.to_move(st) == ()
        refused(rw, st, 0, rw.Ready(), "not_started")
        refused(rw, st, None, ChanceOutcome("deal", tuple(range(72))), "wrong_chance")
        st, events = rw.apply(st, None, ChanceOutcome("first_dealer", lot(dealer, seats)))
        assert events == [{"event": "dealer_chosen", "seat": dealer, "round": 1}]
        assert rw.view(st, 0)["dealer"] == dealer and st.phase == "dealing"
        assert rw.pending_chance(st) == ChanceRequest("deal", 72)
        st, events = rw.apply(st, None, ChanceOutcome("deal", tuple(range(72))))
        order = [(dealer + k) % seats for k in range(1, seats + 1)]     # the dealer's left gets the first card
        assert events == [{"event": "round_dealt", "round": 1, "dealer": dealer, "seats": order}]
        assert rw.view(st, order[0])["hand"] == list(range(0, 8 * seats, seats))


def test_run_wild_the_deal_rotates_from_the_dealer_drawn():
    st = rw.new_table(TableConfig(rw.NAME, 3, {}))
    st, _ = rw.apply(st, None, ChanceOutcome("first_dealer", (2, 0, 1)))
    st, _ = rw.apply(st, None, ChanceOutcome("deal", tuple(range(72))))
    for s in range(3):
        st, _ = rw.apply(st, s, rw.Ready())
    st, _ = rw.apply(st, None, rw.Go())
    st, _ = rw.apply(st, None, rw.IdleTimeout())
    assert st.phase == "scored" and rw.pending_chance(st) == ChanceRequest("deal", 72)
    st, events = rw.apply(st, None, ChanceOutcome("deal", tuple(range(72))))
    assert events[0]["dealer"] == 0 and events[0]["round"] == 2


def test_run_wild_the_host_may_choose_the_first_dealer():
    st = rw.new_table(TableConfig(rw.NAME, 4, {"first_dealer": 3}))
    assert rw.pending_chance(st) == ChanceRequest("deal", 72) and rw.view(st, None)["dealer"] == 3
    refused(rw, st, None, ChanceOutcome("first_dealer", (0, 1, 2, 3)), "wrong_chance")
    st, events = rw.apply(st, None, ChanceOutcome("deal", tuple(range(72))))
    assert events[0]["dealer"] == 3 and events[0]["seats"] == [0, 1, 2, 3]
    assert rw.view(st, 0)["settings"]["first_dealer"] == 3


def test_run_wild_first_dealer_setting_checks():
    assert rw.default_settings()["first_dealer"] == -1
    assert "no seat 4" in bad_settings(rw, 4, {"first_dealer": 4})
    bad_settings(rw, 2, {"first_dealer": -2})
    bad_settings(rw, 2, {"first_dealer": "random"})
    bad_settings(rw, 2, {"first_dealer": True})


def test_run_wild_only_the_table_draws_the_dealer_and_only_a_permutation_of_the_seats():
    st = rw.new_table(TableConfig(rw.NAME, 3, {}))
    refused(rw, st, 0, ChanceOutcome("first_dealer", (0, 1, 2)), "not_your_seat")
    refused(rw, st, None, ChanceOutcome("first_dealer", (0, 1)), "bad_permutation")
    refused(rw, st, None, ChanceOutcome("first_dealer", (0, 0, 1)), "bad_permutation")


# ------------------------------------------------------------------ Go Fish Wildcard

@pytest.mark.parametrize("seats", [2, 3, 6])
def test_go_fish_dealer_is_drawn_by_lot_and_the_dealers_left_starts(seats):
    starters = set()
    for dealer in range(seats):
        s = gf.new_table(TableConfig(gf.NAME, seats, {}))
        assert gf.pending_chance(s) == ChanceRequest("dealer", seats)
        assert s.phase == "deal" and gf.view(s, 0)["dealer"] is None and gf.to_move(s) == ()
        refused(gf, s, None, ChanceOutcome("deal", tuple(range(52))), "wrong_chance")
        refused(gf, s, 0, gf.Ask(1, "A"), "not_dealt")
        s, events = gf.apply(s, None, ChanceOutcome("dealer", lot(dealer, seats)))
        assert events == [{"event": "dealer_chosen", "seat": dealer}]
        assert gf.view(s, None)["dealer"] == dealer and gf.pending_chance(s) == ChanceRequest("deal", 52)
        s, events = gf.apply(s, None, ChanceOutcome("deal", tuple(range(52))))
        assert events[0]["dealer"] == dealer
        assert s.turn == (dealer + 1) % seats
        assert gf.hand_ids(s.hands[s.turn]) == list(range(0, 4 * seats, seats))
        starters.add(s.turn)
    assert starters == set(range(seats))      # any seat may start: no seat is always second


def test_go_fish_the_host_may_choose_the_dealer():
    s = gf.new_table(TableConfig(gf.NAME, 3, {"dealer": 2}))
    assert gf.pending_chance(s) == ChanceRequest("deal", 52) and gf.view(s, 1)["dealer"] == 2
    s, _ = gf.apply(s, None, ChanceOutcome("deal", tuple(range(52))))
    assert s.turn == 0
    assert gf.default_settings()["dealer"] == -1
    assert gf.new_table(TableConfig(gf.NAME, 3, {"dealer": -1})).dealer is None
    bad_settings(gf, 3, {"dealer": 3})
    bad_settings(gf, 3, {"dealer": -2})


# ------------------------------------------------------------------ every game

def test_every_game_draws_who_starts_by_lot_unless_the_host_chose():
    who = {"run-wild": "first_dealer", "go-fish-wildcard": "dealer",
           "go-wild": "first_player", "wild-shots": "first_player"}
    assert set(who) == set(REGISTRY)
    for name, game in REGISTRY.items():
        seats = game.MIN_PLAYERS + 1
        st = game.new_table(TableConfig(name, seats, {}))
        assert game.pending_chance(st) == ChanceRequest(who[name], seats), name
        chosen = game.new_table(TableConfig(name, seats, {who[name]: 1}))
        req = game.pending_chance(chosen)
        assert req is not None and req.purpose != who[name], name


@pytest.mark.parametrize("name", ["run-wild", "go-fish-wildcard"])
def test_selfplay_logs_carry_the_rules_version_and_replay(name):
    game = REGISTRY[name]
    pl = play(game, 3, {"rounds": 1} if name == "run-wild" else {}, seed=5)
    assert pl.header.rules == game.RULES_VERSION >= 2      # (Go Fish Wildcard's 3: its timer capped)
    assert type(pl.records[0]) is ChanceRecorded and pl.records[0].purpose in ("first_dealer", "dealer")
    contents = read_log(encode_record(pl.header) + b"".join(encode_record(r) for r in pl.records))
    assert contents.header.rules == game.RULES_VERSION
    result = replay(contents)
    assert result.state == pl.state and result.hashes_checked >= 1


# ------------------------------------------------------------------ old logs (rules version 1)

def test_run_wild_rules_1_tables_have_seat_0_deal_first_and_hash_as_before():
    st = rw.new_table(TableConfig(rw.NAME, 3, {}, 1))
    assert rw.pending_chance(st) == ChanceRequest("deal", 72)
    assert "first_dealer" not in rw.snapshot(st)["settings"]    # the state hash of an old log is unchanged
    st, events = rw.apply(st, None, ChanceOutcome("deal", tuple(range(72))))
    assert events[0]["dealer"] == 0
    bad_settings(rw, 3, {"first_dealer": 1}, rules=1)     # not a setting of rules version 1


def test_go_fish_rules_1_log_replays_with_seat_0_dealing():
    # written by the engine before this rule: no "rules" in the header (version 1), default
    # settings, the deal as the first chance record; the hash is the one it computed (of
    # the snapshot: a format 2 log's)
    recs = (ChanceRecorded(1, "deal", tuple(range(52))),
            StateHashed(1, bytes.fromhex("b4521bfb0f12f00afafacf6ffb72afa5")))
    header = Header(2, gf.NAME, "old", 2, {})
    contents = read_log(encode_record(header) + b"".join(encode_record(r) for r in recs))
    result = replay(contents)
    assert result.hashes_checked == 1 and result.state.dealer == 0 and result.state.turn == 1
    # the same records under today's rules: the first chance must name the dealer
    with pytest.raises(LogError) as info:
        replay(read_log(encode_record(Header(FORMAT_VERSION, gf.NAME, "new", 2, {}, rules=2))
                        + b"".join(encode_record(r) for r in recs)))
    assert info.value.code == "diverged"


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_a_log_from_newer_or_unknown_rules_is_refused(name):
    game = REGISTRY[name]
    for rules in (0, game.RULES_VERSION + 1):
        bad_settings(game, game.MIN_PLAYERS, {}, rules=rules)
        data = encode_record(Header(FORMAT_VERSION, name, "t", game.MIN_PLAYERS, {}, rules=rules))
        with pytest.raises(LogError) as info:
            replay(read_log(data))
        assert info.value.code == "bad_record" and "rules" in str(info.value)


def test_the_chosen_dealer_is_part_of_the_state_hash():
    a = rw.apply(rw.new_table(TableConfig(rw.NAME, 2, {})), None, ChanceOutcome("first_dealer", (0, 1)))[0]
    b = rw.apply(rw.new_table(TableConfig(rw.NAME, 2, {})), None, ChanceOutcome("first_dealer", (1, 0)))[0]
    assert state_hash(rw, a) != state_hash(rw, b)
