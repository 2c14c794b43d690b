"""Wild Shots engine: the rulebook's worked examples, the rejections, the settings, and
hypothesis playouts checking invariants after every step.

Rules: /work/shared/rules/wild-shots.txt + docs/DECISIONS.md "Wild Shots"; as implemented:
docs/RULES.md "Wild Shots".
"""

from __future__ import annotations

from collections import Counter

import attrs
import pytest
from hypothesis import given, settings, strategies as st

from wildtable.protocol.states import evolve
from wildtable.protocol import replay as replay_mod
from wildtable.protocol.codec import packb, to_data, unpackb
from wildtable.protocol.engine import ChanceOutcome, TableConfig, game, state_hash
from wildtable.protocol.errors import IllegalAction
from wildtable.protocol.games import wild_shots as ws
from wildtable.protocol.games import wild_shots_data as data
from wildtable.protocol.logfmt import encode_record, read_log
from wildtable.selfplay import play

C = ws.LABEL_TO_ID          # "red 4" -> card id
SUITS = data.SUITS


def sym(label: str) -> str:
    return data.CARD_SYMBOLS[label]


# ----------------------------------------------------------------------------- helpers

def fill_hands(seats: int, required: list[list[str]], avoid: dict[int, str] | None = None) -> list[list[int]]:
    """Complete each seat's hand to 10 cards around the ``required`` labels; a seat in
    ``avoid`` gets no card of that suit. Returns hands plus, last, the set-aside cards."""
    avoid = avoid or {}
    hands = [[C[x] for x in req] for req in required]
    pool = [c for c in range(40) if all(c not in h for h in hands)]
    for s in sorted(range(seats), key=lambda s: s not in avoid):   # restricted seats first
        bad = SUITS.index(avoid[s]) if s in avoid else -1
        while len(hands[s]) < 10:
            c = next(c for c in pool if ws.SUIT[c] != bad)
            pool.remove(c)
            hands[s].append(c)
    return hands + [pool]


def oil_order(state: ws.State, trumps: list[str]) -> tuple[int, ...]:
    """A Snake Oil permutation whose top cards show ``trumps`` in order."""
    left = list(range(len(state.rules.oil)))
    top = []
    for t in trumps:
        i = next(i for i in left if state.rules.oil[i] == data.SYMBOLS.index(t))
        left.remove(i)
        top.append(i)
    return tuple(top + left)


def start(seats: int, required: list[list[str]], trumps: list[str], *, starter: int = 0,
          avoid: dict[int, str] | None = None, settings: dict | None = None) -> ws.State:
    """A table dealt as asked, the first trick's Snake Oil card revealed."""
    s = ws.new_table(TableConfig(ws.NAME, seats, {"first_player": starter, **(settings or {})}))
    parts = fill_hands(seats, required, avoid)
    s, _ = ws.apply(s, None, ChanceOutcome("deal", tuple(c for part in parts for c in part)))
    s, ev = ws.apply(s, None, ChanceOutcome("snake_oil", oil_order(s, trumps)))
    assert ev[-1] == {"event": "snake_oil_revealed", "seat": starter, "trick": 1, "symbol": trumps[0]}
    return s


def play_cards(state: ws.State, labels: list[str]) -> tuple[ws.State, list[dict]]:
    """Each seat in turn plays the named card; returns the state and all events."""
    events: list = []
    for label in labels:
        state, ev = ws.apply(state, state.turn, ws.Play(C[label]))
        events += ev
    return state, events


def refused(code: str, state, seat, action) -> IllegalAction:
    with pytest.raises(IllegalAction) as e:
        ws.apply(state, seat, action)
    assert e.value.code == code, e.value
    assert e.value.reason
    return e.value


def won_event(events: list[dict]) -> dict:
    return next(e for e in events if e["event"] == "trick_won")


# ----------------------------------------------------------------------------- the deck data

def test_deck_reconstruction_agrees_with_the_rulebook_and_decisions():
    cs = data.CARD_SYMBOLS
    assert list(cs) == list(ws.LABELS) and len(cs) == 40
    assert Counter(cs.values()) == Counter(data.SYMBOL_COUNTS)
    assert (cs["red 3"], cs["red 8"], cs["black 9"]) == ("star", "hat", "hat")
    assert (cs["red 9"], cs["green 9"]) == ("revolver", "revolver")
    assert cs["red 1"] == cs["red 2"] == cs["red 7"] == "none"
    assert cs["red 4"] == cs["black 7"] != "none"
    assert cs["red 2"] != cs["red 4"] and cs["red 10"] != cs["red 4"]
    assert sum(data.SNAKE_OIL.values()) == 14 and set(data.SNAKE_OIL) <= set(data.SYMBOLS)
    assert ws.card_label(C["green 10"]) == "green 10"
    assert ws.card_info(C["red 3"]) == {"id": 12, "suit": "red", "value": 3, "label": "red 3", "symbol": "star"}
    assert ws.card_info(C["red 7"])["symbol"] is None


# ----------------------------------------------------------------------------- rulebook examples

def test_black_7_trump_beats_red_trump_4_on_a_red_lead():
    # "Player D cannot follow suit and plays the black 7 ... higher than the red trump 4".
    trump = sym("red 4")
    s = start(4, [["red 2"], ["red 4"], ["red 10"], ["black 7"]], [trump, "star"], avoid={3: "red"})
    s, ev = play_cards(s, ["red 2", "red 4", "red 10", "black 7"])
    w = won_event(ev)
    assert w["seat"] == 3 and w["trump"] == trump
    assert [x["card"] for x in w["cards"]] == [C["red 2"], C["red 4"], C["red 10"], C["black 7"]]
    assert w["card"] == C["black 7"] and w["symbol"] == trump
    # A played card is face up: its event names its symbol and who plays next in the trick.
    played = [e for e in ev if e["event"] == "card_played"]
    assert played[1] == {"event": "card_played", "seat": 1, "card": C["red 4"], "symbol": trump, "next": 2}
    assert played[0]["symbol"] is None and [e["next"] for e in played] == [1, 2, 3, None]
    # The winner becomes the active player, reveals the next Snake Oil card and leads.
    assert ev[-1] == {"event": "snake_oil_revealed", "seat": 3, "trick": 2, "symbol": "star"}
    assert ws.to_move(s) == (3,) and s.leader == 3


def test_red_3_sheriff_star_wins_a_red_trick_led_by_the_8():
    s = start(4, [["red 8"], ["red 3"], ["red 9"], ["red 2"]], ["star"])
    s, ev = play_cards(s, ["red 8", "red 3", "red 9", "red 2"])
    assert won_event(ev)["seat"] == 1
    assert ws.view(s, 1)["own_tricks"] == [[C["red 8"], C["red 3"], C["red 9"], C["red 2"]]]


def test_red_7_wins_a_trick_with_no_trump_symbol():
    labels = ["red 5", "red 1", "red 7", "red 2"]
    carried = {sym(x) for x in labels}
    trumps = [t for t in data.SYMBOLS if t not in carried]
    assert trumps, "the classic example needs a trump none of its cards carries"
    for trump in trumps:
        s = start(4, [[x] for x in labels], [trump])
        s, ev = play_cards(s, labels)
        assert won_event(ev)["seat"] == 2, trump


def test_equal_trump_values_go_to_the_earlier_card():
    # docs/DECISIONS.md "Wild Shots", Winner: equal values -> the earlier card.
    pairs = [(a, b) for a in range(40) for b in range(a + 1, 40)
             if ws.VALUE[a] == ws.VALUE[b] and ws.SUIT[a] != ws.SUIT[b]
             and sym(ws.LABELS[a]) == sym(ws.LABELS[b]) != "none"]
    a, b = pairs[0]
    lead_suit = next(x for x in SUITS if SUITS.index(x) not in (ws.SUIT[a], ws.SUIT[b]))
    lead = next(f"{lead_suit} {v}" for v in range(1, 11) if sym(f"{lead_suit} {v}") == "none")
    trump = sym(ws.LABELS[a])
    s = start(3, [[lead], [ws.LABELS[b]], [ws.LABELS[a]]], [trump], avoid={1: lead_suit, 2: lead_suit})
    s, ev = play_cards(s, [lead, ws.LABELS[b], ws.LABELS[a]])
    assert won_event(ev)["seat"] == 1


def test_round_two_scoring_example_gives_6_penalty_points():
    example = ["red 2", "red 3", "red 8", "red 9", "red 1", "black 9", "green 9", "red 7"]
    s = start(2, [[], []], ["revolver"])
    assert ws.round_penalty(s, 1, [C[x] for x in example]) == 6
    # Drive the engine through the end of round 2: seat 0 holds exactly the example's
    # tricks when the last trick (blue 3 led, blue 6 wins: no symbols) is played.
    rest = [c for c in range(40) if c not in {C[x] for x in example} | {C["blue 3"], C["blue 6"]}]
    s = evolve(s, round=1, trick_no=9, hands=((C["blue 3"],), (C["blue 6"],)), aside=tuple(rest[10:]),
                   won=(tuple(C[x] for x in example), tuple(rest[:10])), leader=0, turn=0,
                   tally=attrs.evolve(s.tally, penalties=((0, 0),)))
    s, ev = play_cards(s, ["blue 3", "blue 6"])
    scored = next(e for e in ev if e["event"] == "round_scored")
    assert scored["round"] == 2 and scored["hits"] == {"hat": 3}
    assert scored["penalties"][0] == 6
    assert scored["penalties"][1] == 3 * sum(sym(ws.LABELS[c]) == "hat" for c in rest[:10])
    assert ws.view(s, 1)["players"][0]["penalties"] == [0, 6]


def test_off_suit_card_refused_while_holding_the_led_suit():
    s = start(3, [["green 5"], ["green 2", "black 7"], []], ["hat"], avoid={2: "green"})
    s, _ = play_cards(s, ["green 5"])
    e = refused("must_follow_suit", s, 1, ws.Play(C["black 7"]))
    assert "green" in e.reason
    assert ws.legal_actions(s, 1) == [ws.Play(c) for c in s.hands[1] if ws.SUIT[c] == SUITS.index("green")]
    s, _ = play_cards(s, ["green 2"])
    # Seat 2 holds no green: any card is allowed.
    assert len(ws.legal_actions(s, 2)) == 10
    s, ev = ws.apply(s, 2, ws.Play(s.hands[2][-1]))
    assert won_event(ev)


# ----------------------------------------------------------------------------- rejections

def test_rejections():
    s = ws.new_table(TableConfig(ws.NAME, 3, {}))
    refused("waiting_for_shuffle", s, 0, ws.Play(0))
    refused("wrong_chance", s, None, ChanceOutcome("deal", tuple(range(40))))
    refused("bad_permutation", s, None, ChanceOutcome("first_player", (0, 0, 1)))
    refused("not_a_table", s, 0, ChanceOutcome("first_player", (0, 1, 2)))
    refused("unknown_action", s, 0, "play red 3")
    s = start(3, [["red 3"], ["red 5"], []], ["star"])
    refused("no_chance_pending", s, None, ChanceOutcome("deal", tuple(range(40))))
    e = refused("not_your_turn", s, 1, ws.Play(C["red 5"]))
    assert "It is seat 0's turn" in e.reason
    refused("not_a_seat", s, None, ws.Play(C["red 3"]))
    refused("card_not_in_hand", s, 0, ws.Play(C["red 5"]))
    refused("no_such_card", s, 0, ws.Play(40))
    assert ws.legal_actions(s, 1) == [] and ws.legal_actions(s, None) == []


@pytest.mark.parametrize("seats, given, words", [
    (1, {}, "2 to 4 players"),
    (5, {}, "2 to 4 players"),
    (2, {"jokers": True}, "unknown setting"),
    (2, {"rotate_starter": 1}, "must be bool"),
    (2, {"turn_timer": -1.0}, "positive number"),
    (3, {"first_player": 3}, "no seat 3"),
    (2, {"first_player": -2}, "-1 (chance)"),
    (2, {"symbols": {"red 3": "star"}}, "each of the 40 cards"),
    (2, {"symbols": {**data.CARD_SYMBOLS, "red 3": "moon"}}, "'moon'"),
    (2, {"symbols": {**{k: v for k, v in data.CARD_SYMBOLS.items() if k != "red 3"}, "red 11": "star"}},
     "each of the 40 cards"),
    (2, {"snake_oil": {"star": 13}}, "add up to 14"),
    (2, {"snake_oil": {"moon": 14}}, "unknown symbol"),
    (2, {"snake_oil": {"star": 15, "hat": -1}}, "0 or more"),
    (2, {"rounds": 0}, "must be 1 to 4"),
    (3, {"rounds": 5}, "must be 1 to 4"),
    (2, {"rounds": 2.0}, "must be int"),
    (2, {"rounds": True}, "must be int"),
])
def test_bad_settings(seats, given, words):
    with pytest.raises(IllegalAction) as e:
        ws.new_table(TableConfig(ws.NAME, seats, given))
    assert e.value.code == "bad_settings" and words in e.value.reason, e.value.reason


# ----------------------------------------------------------------------------- settings and flow

def test_replaced_symbol_table_and_snake_oil_split():
    symbols = {label: "none" for label in ws.LABELS}
    symbols["blue 1"] = "star"          # any counts are allowed
    s = start(2, [["red 10"], ["blue 1"]], ["star"], avoid={1: "red"},
              settings={"symbols": symbols, "snake_oil": {"star": 14}})
    v = ws.view(s, 0)
    assert v["symbols"].count("star") == 1 and v["symbols"].count(None) == 39
    assert v["snake_oil"] == {"revolver": 0, "hat": 0, "star": 14, "poster": 0}
    s, ev = play_cards(s, ["red 10", "blue 1"])
    assert won_event(ev)["seat"] == 1
    # Red 3 carries a star by default but not at this table.
    assert ws.round_penalty(s, 2, [C["red 3"], C["blue 1"]]) == 4


def test_first_player_by_chance_or_host():
    s = ws.new_table(TableConfig(ws.NAME, 3, {}))
    assert ws.pending_chance(s) == ws.ChanceRequest("first_player", 3)
    assert ws.to_move(s) == () and ws.view(s, None)["starter"] is None
    s, ev = ws.apply(s, None, ChanceOutcome("first_player", (2, 0, 1)))
    assert ev == [{"event": "starter_chosen", "seat": 2}]
    assert ws.pending_chance(s) == ws.ChanceRequest("deal", 40)
    s, ev = ws.apply(s, None, ChanceOutcome("deal", tuple(range(40))))
    assert ev == [{"event": "cards_dealt", "round": 1, "hand_sizes": [10, 10, 10], "set_aside": 10}]
    assert ws.pending_chance(s) == ws.ChanceRequest("snake_oil", 14)
    s, _ = ws.apply(s, None, ChanceOutcome("snake_oil", tuple(range(14))))
    assert ws.to_move(s) == (2,) and ws.pending_chance(s) is None
    host = ws.new_table(TableConfig(ws.NAME, 3, {"first_player": 1}))
    assert ws.pending_chance(host) == ws.ChanceRequest("deal", 40) and host.starter == 1


def _finish_round(state: ws.State) -> tuple[ws.State, list]:
    events: list = []
    while state.phase == "playing":
        state, ev = ws.apply(state, state.turn, ws.legal_actions(state, state.turn)[0])
        events += ev
    return state, events


@pytest.mark.parametrize("rotate", [False, True])
def test_next_round_starter(rotate):
    s = start(3, [[], [], []], ["hat"], starter=2, settings={"rotate_starter": rotate})
    s, ev = _finish_round(s)
    last_winner = [e for e in ev if e["event"] == "trick_won"][-1]["seat"]
    assert last_winner not in (2, 0)    # so the three readings differ
    assert s.phase == "dealing" and ws.pending_chance(s) == ws.ChanceRequest("deal", 40)
    assert ws.view(s, 0)["starter"] == (0 if rotate else last_winner)
    s, _ = ws.apply(s, None, ChanceOutcome("deal", tuple(range(40))))
    s, _ = ws.apply(s, None, ChanceOutcome("snake_oil", tuple(range(14))))
    assert ws.to_move(s) == ((0,) if rotate else (last_winner,))
    assert s.round == 1 and ws.view(s, 0)["last_round"]["round"] == 1


def test_timeout_plays_the_lowest_legal_card():
    s = start(2, [["green 5", "red 2"], ["green 9", "green 7", "red 1"]], ["hat"])
    t = ws.timeout_action(s)
    assert t.seconds == 60.0 and t.seat == 0 and t.action == ws.Play(min(s.hands[0], key=lambda c: (ws.VALUE[c], c)))
    s, _ = play_cards(s, ["green 5"])
    t = ws.timeout_action(s)
    greens = [c for c in s.hands[1] if ws.SUIT[c] == SUITS.index("green")]
    assert t.seat == 1 and t.action == ws.Play(min(greens, key=lambda c: (ws.VALUE[c], c)))
    assert C["red 1"] in s.hands[1]       # lower, but it would not follow suit
    off = start(2, [[], []], ["hat"], settings={"turn_timer": 0})
    assert ws.timeout_action(off) is None
    assert ws.timeout_action(ws.new_table(TableConfig(ws.NAME, 2, {}))) is None


def test_action_codec_round_trip():
    a = ws.Play(C["blue 10"])
    assert to_data(a) == {"kind": "play", "card": 39}
    assert game("wild-shots").ACTIONS.decode(unpackb(packb(to_data(a)))) == a


# ----------------------------------------------------------------------------- visibility

def hidden_cards(state: ws.State, seat: int | None) -> list[int]:
    """Cards that ``seat`` may not see: other hands, the set-aside cards and other
    players' won tricks except the most recent trick."""
    recent = set(state.last.cards) if state.last is not None and state.phase == "playing" else set()
    out = list(state.aside)
    for s in range(state.rules.seats):
        if s != seat:
            if state.hands:
                out += state.hands[s]
            out += [c for c in state.won[s] if c not in recent]
    return out


def scramble(state: ws.State, seat: int | None) -> ws.State:
    """The same state with every card ``seat`` may not see moved to another hidden place,
    and the unrevealed Snake Oil cards in another order."""
    hidden = sorted(hidden_cards(state, seat))
    swap = dict(zip(hidden, reversed(hidden)))
    recent = set(state.last.cards) if state.last is not None and state.phase == "playing" else set()

    def mv(c: int, s: int) -> int:
        return c if s == seat or c in recent else swap.get(c, c)

    n = state.rules.seats
    hands = tuple(tuple(sorted(mv(c, s) for c in state.hands[s])) for s in range(n)) if state.hands else ()
    won = tuple(tuple(mv(c, s) for c in state.won[s]) for s in range(n))
    aside = tuple(sorted(swap.get(c, c) for c in state.aside))
    oil = state.oil
    if state.phase == "playing":
        k = state.trick_no + 1
        oil = oil[:k] + tuple(reversed(oil[k:]))
    return evolve(state, hands=hands, won=won, aside=aside, oil=oil)


def check_views(state: ws.State) -> None:
    n = state.rules.seats
    for seat in list(range(n)) + [None]:
        v = ws.view(state, seat)
        assert unpackb(packb(v)) == v                    # plain msgpack data, lists not tuples
        assert ws.view(scramble(state, seat), seat) == v, f"view of {seat} shows something hidden"
        if seat is None:
            assert "hand" not in v and v["own_tricks"] == [] and v["playable"] == []
        else:
            assert v["hand"] == (list(state.hands[seat]) if state.hands else [])
            assert [c for t in v["own_tricks"] for c in t] == list(state.won[seat])


def _finish_trick(state: ws.State) -> tuple[ws.State, list]:
    events: list = []
    while True:
        state, ev = ws.apply(state, state.turn, ws.legal_actions(state, state.turn)[0])
        events += ev
        if any(e["event"] == "trick_won" for e in ev):
            return state, events


def cards_shown(v: dict) -> set[int]:
    """Card ids a view names in its card fields."""
    out = set(v.get("hand", ())) | {c for t in v["own_tricks"] for c in t} | {x["card"] for x in v["trick"]}
    if v["last_trick"]:
        out |= {x["card"] for x in v["last_trick"]["cards"]}
    if v["last_round"]:
        out |= {c for w in v["last_round"]["tricks"] for t in w for c in t}
    return out


def test_older_tricks_are_hidden_until_the_round_is_scored():
    s = start(3, [[], [], []], ["hat", "star", "poster"])
    s, ev = _finish_trick(s)
    first = won_event(ev)
    first_cards = {x["card"] for x in first["cards"]}
    s, ev = _finish_trick(s)
    second = won_event(ev)
    check_views(s)
    for seat in range(3):
        v = ws.view(s, seat)
        # Everyone sees the most recent trick and how many tricks each player has won.
        assert v["last_trick"]["cards"] == second["cards"] and v["last_trick"]["winner"] == second["seat"]
        assert [p["tricks"] for p in v["players"]] == [len(s.won[x]) // 3 for x in range(3)]
        # Only the first trick's winner still sees it.
        assert (first_cards <= cards_shown(v)) == (seat == first["seat"])
    assert not first_cards & cards_shown(ws.view(s, None))
    # Once scored, every trick of the round is public.
    s, ev = _finish_round(s)
    scored = next(e for e in ev if e["event"] == "round_scored")
    assert ws.view(s, None)["last_round"]["tricks"] == [
        [w[i:i + 3] for i in range(0, len(w), 3)] for w in scored["won"]]
    assert first_cards <= cards_shown(ws.view(s, None))
    check_views(s)


def test_scramble_moves_every_hidden_card():
    # The playouts' view check compares views before and after scramble(); it can only
    # catch a leak if scramble really moves what the seat may not see.
    s = start(3, [[], [], []], ["hat"])
    s, _ = _finish_trick(s)
    x = scramble(s, 0)
    assert x.hands[0] == s.hands[0] and x.won[0] == s.won[0]
    assert x.hands[1] != s.hands[1] and x.hands[2] != s.hands[2] and x.aside != s.aside
    assert x.oil[:2] == s.oil[:2] and x.oil != s.oil
    assert x.last == s.last
    # Still one of each card: the scrambled state is a possible state.
    assert sorted([c for h in x.hands for c in h] + list(x.aside) + [c for w in x.won for c in w]) \
        == list(range(40))


# ----------------------------------------------------------------------------- playouts

EVENTS = {"starter_chosen", "cards_dealt", "snake_oil_shuffled", "snake_oil_revealed", "card_played",
          "trick_won", "round_scored", "game_over"}


def _bound(round_index: int, symbols: dict) -> int:
    counts = Counter(symbols.values())
    return sum(counts[s] * rate for s, rate in data.ROUND_OVERVIEW[round_index].items())


def _make_checker(seats: int, symbols: dict):
    def on_step(before, after, action, seat, request, events):
        for e in events:
            assert type(e) is dict and e["event"] in EVENTS and unpackb(packb(e)) == e
        if request is not None and request.purpose == "deal":
            # Events do not depend on the hidden deal.
            other = ws.apply(before, None, ChanceOutcome("deal", tuple(reversed(action.permutation))))[1]
            assert other == events
        if after.phase == "playing":
            cards = [c for h in after.hands for c in h] + list(after.aside) + list(after.trick) \
                + [c for w in after.won for c in w]
            assert sorted(cards) == list(range(40)), "cards not conserved"
            played = {(after.leader + i) % seats for i in range(len(after.trick))}
            for s in range(seats):
                assert len(after.hands[s]) == 10 - after.trick_no - (s in played)
            assert after.trump == after.rules.oil[after.oil[after.trick_no]]
        for r, pens in enumerate(after.tally.penalties):
            assert all(p >= 0 for p in pens) and sum(pens) <= _bound(r, symbols)
        check_views(after)
    return on_step


@settings(max_examples=40)
@given(seats=st.integers(2, 4), seed=st.integers(0, 2**32 - 1), rotate=st.booleans(),
       first=st.integers(-1, 3), custom=st.booleans())
def test_playouts(seats, seed, rotate, first, custom):
    symbols = dict(data.CARD_SYMBOLS)
    given_settings: dict = {"rotate_starter": rotate, "first_player": first if first < seats else -1}
    if custom:
        # A replaced table with other counts: every card of value <= 4 a revolver, 10 a poster.
        symbols = {label: "revolver" if ws.VALUE[c] <= 4 else "poster" if ws.VALUE[c] == 10 else "none"
                   for c, label in enumerate(ws.LABELS)}
        given_settings |= {"symbols": symbols, "snake_oil": {"revolver": 7, "poster": 7}}
    p = play(ws, seats, given_settings, seed=seed, on_step=_make_checker(seats, symbols), hash_every=16)
    final = p.state
    out = ws.outcome(final)
    assert out.over and final.phase == "over" and len(final.tally.penalties) == 4
    assert out.scores == tuple(sum(col) for col in zip(*final.tally.penalties))
    assert out.winners == tuple(s for s in range(seats) if out.scores[s] == min(out.scores))
    assert ws.view(final, None)["winners"] == list(out.winners)
    assert ws.pending_chance(final) is None and ws.to_move(final) == ()
    # 4 rounds of 10 tricks, each card played once per round.
    assert p.steps == (1 if given_settings["first_player"] < 0 else 0) + 4 * (2 + 10 * seats)
    refused("game_over", final, 0, ws.Play(0))
    # Replay of the records, through the log's bytes, equals the live game.
    log = encode_record(p.header) + b"".join(encode_record(r) for r in p.records)
    contents = read_log(log)
    start_state = ws.new_table(TableConfig(ws.NAME, contents.header.seats, dict(contents.header.settings)))
    result = replay_mod.fold(ws, start_state, contents.records)
    assert result.state == final and state_hash(ws, result.state) == state_hash(ws, final)
    assert result.hashes_checked >= p.steps // 16


@pytest.mark.parametrize("rounds", [1, 2, 3])
def test_a_game_of_fewer_rounds_ends_after_them_and_replays(rounds):
    """Setting rounds (docs/RULES.md "Wild Shots" Settings): the first rounds of the
    overview card, in its order, then the end; the view says how many."""
    seats = 3
    p = play(ws, seats, {"rounds": rounds}, seed=rounds, hash_every=16)
    final = p.state
    assert ws.outcome(final).over and final.phase == "over" and len(final.tally.penalties) == rounds
    assert p.steps == 1 + rounds * (2 + 10 * seats)
    v = ws.view(final, 0)
    assert v["rounds"] == rounds and v["round"] == rounds and v["hits"] == dict(data.ROUND_OVERVIEW[rounds - 1])
    log = encode_record(p.header) + b"".join(encode_record(r) for r in p.records)
    contents = read_log(log)
    start_state = ws.new_table(TableConfig(ws.NAME, contents.header.seats, dict(contents.header.settings)))
    result = replay_mod.fold(ws, start_state, contents.records)
    assert result.state == final and result.hashes_checked >= p.steps // 16


def test_a_four_round_table_hashes_as_before_the_rounds_setting():
    """The snapshot (the state hash) names rounds only when it is not 4: the logs of
    4-round games written before the setting came still replay with their hashes."""
    plain, four, one = (ws.new_table(TableConfig(ws.NAME, 2, given)) for given in ({}, {"rounds": 4}, {"rounds": 1}))
    assert "rounds" not in ws.snapshot(plain)["rules"] and ws.snapshot(one)["rules"]["rounds"] == 1
    assert state_hash(ws, plain) == state_hash(ws, four) != state_hash(ws, one)
    assert ws.view(plain, None)["rounds"] == 4
