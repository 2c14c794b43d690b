"""``REPLAY_RUN`` (a run of a log's records folded on a working state, the State built
where the run stops: protocol/engine.py; replay folds with it) is a fourth path through
the rules: from any state, the records it applies must give the state that ``advance``
gives them one by one (the same bytes in the state hash), and a record it is not sure of
it must leave, untouched, to replay's fold, so a refusal is always the decoder's or the
rules' own. Checked from every state of random games over the logged records, over maps
made from them (every field of every other type, out of range, missing, an unknown key,
other seats, other kinds), and over whole logs with one record changed: ``replay`` gives
what it gives without the run (the state, or the same LogError), up to any seq."""

from __future__ import annotations

import random
import types

import attrs
import pytest

from wildtable.protocol.engine import ChanceOutcome, games, state_hash
from wildtable.protocol.errors import IllegalAction, LogError, ProtocolError
from wildtable.protocol.logfmt import ActionAccepted, ChanceRecorded, StateHashed, encode_record, read_log
from wildtable.protocol.replay import fold, initial_state
from wildtable.selfplay import play

RUN = sorted(name for name, g in games().items() if getattr(g, "REPLAY_RUN", None))
#: settings that keep a game short, and how many random games (a few seconds in all)
CASES = {"run-wild": [({"rounds": 1}, 4), ({"rounds": 1, "max_set_size": 4, "allow_all_wild_melds": True}, 3),
                     # rounds after the first: the deal passed on, the round's start and end in a run
                     ({"rounds": 2, "first_dealer": 1}, 1), ({}, 1)],
         "go-fish-wildcard": [({}, 30), ({"dealer": 1}, 2)], "go-wild": [({}, 12)], "wild-shots": [({}, 12)]}
ODD = [True, False, 1.0, "1", "A", "10H", None, [], [1], -1, 2**53, 10**30]


def test_the_games_with_runs_are_checked_here():
    assert RUN and set(RUN) <= set(CASES), RUN


def _logs(g, seed):
    """The logs of random games of ``g`` at the settings CASES gives it."""
    rng = random.Random(seed)
    out = []
    for settings, n_games in CASES[g.NAME]:
        for _ in range(n_games):
            p = play(g, rng.randint(g.MIN_PLAYERS, g.MAX_PLAYERS), settings, rng=rng)
            out.append(read_log(encode_record(p.header) + b"".join(encode_record(r) for r in p.records)))
    return out


def _strict(g, state, r):
    """What ``advance`` makes of one plain action record's map: ("state", s),
    ("refused", code, reason), or ("bad_map",)."""
    try:
        action = g.ACTIONS.decode(r["action"], "$.action")
    except ProtocolError:
        return ("bad_map",)
    try:
        return ("state", g.advance(state, r["seat"], action))
    except IllegalAction as e:
        return ("refused", e.code, e.reason)


def _maps(m: dict, rng: random.Random) -> list[dict]:
    """``m`` and maps made from it, most of them malformed or refused."""
    out = [m, {**m, "extra": 1}, {"kind": "end_turn"}, {"kind": "draw"}, {"kind": "nope"}, {}]
    for key, value in m.items():
        if key == "kind":
            for kind in g_kinds:
                out.append({**m, "kind": kind})
            continue
        out.append({k: v for k, v in m.items() if k != key})
        for odd in rng.sample(ODD, 5):
            out.append({**m, key: odd})
        if type(value) is int:
            out += [{**m, key: value + 1}, {**m, key: value - 1}, {**m, key: -value - 1}]
        if type(value) is list:
            for bad in (True, 1.0, -1, 108, None, "3"):
                out.append({**m, key: value + [bad]})
                if value:
                    out.append({**m, key: [bad] + value[1:]})
            out += [{**m, key: value[:1]}, {**m, key: value[::-1]}, {**m, key: value + value[:1]}]
            for d in (1, -1, 4, -4, 8):
                if value and type(value[0]) is int:
                    out.append({**m, key: [value[0] + d] + value[1:]})
    for key in ("target", "rank", "cards", "card", "value"):
        if key not in m:
            out.append({**m, key: rng.choice([1, None, [1], "A"])})
    return out


g_kinds: list = []


@pytest.mark.parametrize("name", RUN)
def test_a_run_gives_the_states_advance_gives_and_leaves_the_rest(name):
    g = games()[name]
    g_kinds[:] = sorted(g.ACTIONS.classes)
    rng = random.Random(5)
    seen = {"applied": 0, "left": 0, "mutated_applied": 0, "mutated_left": 0}
    if name == "run-wild":
        seen["stuck_draw3"] = 0
    for contents in _logs(g, 11):
        recs = contents.decoded
        _, state = initial_state(contents.header)
        # the state before each record, stepped strictly
        before = []
        for r in recs:
            before.append(state)
            if type(r) is dict:
                got = _strict(g, state, r)
                assert got[0] == "state", got
                state = got[1]
            else:
                state = fold(_without_run(g), state, (r,), verify_hashes=False).state
        after = before[1:] + [state]
        for i, r in enumerate(recs):
            # from every state, over the next records of the log (at most 40, and up to a
            # seq now and then): what it applies is advance's
            window = recs[i:i + 40]
            limit = 2**53 + 1 if rng.random() < 0.8 else rng.randint(0, len(recs) + 1)
            st, k, seq, c = g.REPLAY_RUN(before[i], window, 0, limit)
            if k:
                assert st == after[i + k - 1] and state_hash(g, st) == state_hash(g, after[i + k - 1]), (i, k)
                # equal, and of the same types throughout (a plain tuple equals a NamedTuple)
                assert _types(st) == _types(after[i + k - 1]), (i, k)
                assert seq == _seq(window[k - 1]) <= limit
                assert c == sum(type(x) is ChanceRecorded for x in window[:k])
                # (Run Wild's runs take the table's "Go!", typed: logged by "table")
                assert all(type(x) in (dict, ChanceRecorded, ActionAccepted) for x in window[:k])
                seen["applied"] += 1
            else:
                assert st is before[i]
                seen["left"] += 1
            if name == "run-wild" and type(r) is dict and r["action"].get("kind") == "draw3":
                # a Draw-3 with other seats stuck, under rules versions 2 and 1 (a stuck seat
                # that drew stays stuck)
                for version in (2, 1):
                    stuck = tuple(x if s == r["seat"] else rng.random() < 0.7 for s, x in enumerate(before[i].stuck))
                    made = before[i]._replace(rules=attrs.evolve(before[i].rules, version=version), stuck=stuck)
                    st, k, seq, c = g.REPLAY_RUN(made, (r,), 0, 2**53 + 1)
                    want = _strict(g, made, r)
                    assert (want[0] == "state" and st == want[1]) if k else st is made, (i, r, version)
                    seen["stuck_draw3"] += k and True in stuck
            if type(r) is not dict or rng.random() > 0.3:
                continue
            # one record changed: applied only as advance applies it, else left alone
            # (and actions logged elsewhere in the game: asks in a bonus, places out of turn)
            others = [x["action"] for x in rng.sample(recs, min(8, len(recs))) if type(x) is dict]
            for m in _maps(r["action"], rng) + others:
                seat = r["seat"] if rng.random() < 0.7 else rng.choice([None, -1, 0, 1, 2, 5, 7, True, 1.0])
                one = ({**r, "seat": seat, "action": m},)
                st, j, seq, c = g.REPLAY_RUN(before[i], one, 0, 2**53 + 1)
                if j:
                    want = _strict(g, before[i], one[0])
                    assert want[0] == "state" and st == want[1], (seat, m, want)
                    assert state_hash(g, st) == state_hash(g, want[1]), (seat, m)
                    assert (j, seq, c) == (1, r["seq"], 0)
                    seen["mutated_applied"] += 1
                else:
                    assert st is before[i] and (j, c) == (0, 0)
                    seen["mutated_left"] += 1
    assert all(v > (10 if k == "stuck_draw3" else 50) for k, v in seen.items()), seen


def _types(x):
    """The types of ``x`` and of everything in it (tuples, lists, attrs classes)."""
    if isinstance(x, (tuple, list)):
        return type(x), tuple(_types(y) for y in x)
    if attrs.has(type(x)):
        return type(x), tuple(_types(v) for v in attrs.astuple(x, recurse=False))
    return type(x)


def _seq(r):
    return r["seq"] if type(r) is dict else r.seq


def _without_run(g):
    """The game without its REPLAY_RUN: replay's fold record by record."""
    return types.SimpleNamespace(**{k: v for k, v in vars(g).items() if k != "REPLAY_RUN"})


def _replayed(g, contents, upto):
    _, state = initial_state(contents.header)
    try:
        r = fold(g, state, contents.decoded, upto=upto)
    except LogError as e:
        return ("error", e.code, str(e), e.seq)
    return ("ok", r.state, state_hash(r.game, r.state), r.seq, r.actions, r.chances, r.hashes_checked)


@pytest.mark.parametrize("name", RUN)
def test_replay_with_runs_is_replay_without_them_on_changed_logs(name):
    g = games()[name]
    g_kinds[:] = sorted(g.ACTIONS.classes)
    plain = _without_run(g)
    rng = random.Random(9)
    outcomes = {"ok": 0, "error": 0}
    for contents in _logs(g, 12):
        recs = contents.decoded
        upto = rng.choice([None, None, rng.randint(0, len(recs) + 2)])
        assert _replayed(g, contents, upto) == _replayed(plain, contents, upto)
        # chance records changed (a reshuffle within a run is checked by the run)
        at = [i for i, r in enumerate(recs) if type(r) is ChanceRecorded]
        for i in rng.sample(at, min(3, len(at))):
            r = recs[i]
            p = r.permutation
            for perm in (p[:-1], p[:-1] + p[:1], p[::-1], tuple(x + 1 for x in p)):
                for purpose in (r.purpose, "deal" if r.purpose != "deal" else "reshuffle"):
                    changed = recs[:i] + (ChanceRecorded(r.seq, purpose, perm),) + recs[i + 1:]
                    c2 = types.SimpleNamespace(header=contents.header, decoded=changed)
                    got, want = _replayed(g, c2, upto), _replayed(plain, c2, upto)
                    assert got == want, (i, purpose, perm, got[:3], want[:3])
                    outcomes[got[0]] += 1
        for _ in range(12):
            i = rng.randrange(len(recs))
            r = recs[i]
            if type(r) is not dict:
                continue
            m = rng.choice(_maps(r["action"], rng))
            seat = r["seat"] if rng.random() < 0.6 else rng.choice([None, 0, 1, 2, 3, True])
            changed = recs[:i] + ({**r, "seat": seat, "action": m},) + recs[i + 1:]
            c2 = types.SimpleNamespace(header=contents.header, decoded=changed)
            got, want = _replayed(g, c2, upto), _replayed(plain, c2, upto)
            assert got == want, (i, seat, m, got[:3], want[:3])
            outcomes[got[0]] += 1
    assert outcomes["ok"] > 10 and outcomes["error"] > 20, outcomes


def test_go_fish_runs_at_the_pile_s_end_and_in_the_last_asks():
    """Tables random games seldom reach, made up: a pile of 0 to 3 cards (the last card
    fished, the empty-hand draw taking the last ones, the last asks), wild ranks, a bonus
    open; every ask, place and end of turn a seat could send there."""
    gfw = games()["go-fish-wildcard"]
    rng = random.Random(17)
    seen = {"applied": 0, "left": 0}
    for _ in range(4000):
        n = rng.randint(2, 4)
        deck = rng.sample(range(gfw.DECK_SIZE), 30)
        hands = [gfw.hand_mask(deck[i * 6:i * 6 + rng.randint(0, 6)]) for i in range(n)]
        pile = tuple(deck[24:24 + rng.choice([0, 1, 1, 2, 3, 6])])
        wild = rng.choice([0, 0, rng.getrandbits(13)])
        seat = rng.choice([s for s in range(n) if hands[s]] or [0])
        step = rng.choice(["ask", "ask", "again", "bonus"])
        bonus = hands[seat] & rng.getrandbits(52) if step == "bonus" else 0
        if pile:
            phase, order = "play", ()
        else:
            phase, order = "last_asks", tuple(rng.sample([s for s in range(n) if s != seat], rng.randint(0, n - 1)))
        state = gfw.State(n, 0, 60.0, phase, tuple(hands), pile, wild, (), (0,) * n, seat, step, bonus, order,
                          None, ())
        mine = gfw.hand_ids(hands[seat]) or [0]
        kind = rng.choice(["ask", "ask", "ask", "place", "end_turn"])
        if kind == "ask":
            action = {"kind": "ask", "target": rng.randrange(n), "rank": gfw.RANKS[rng.choice(mine) // 4]}
        elif kind == "place":
            action = {"kind": "place", "cards": rng.sample(mine, min(3, len(mine)))}
        else:
            action = {"kind": "end_turn"}
        r = {"t": "action", "seq": 9, "seat": seat, "action": action}
        st, k, seq, c = gfw.REPLAY_RUN(state, (r,), 0, 2**53 + 1)
        if k:
            want = _strict(gfw, state, r)
            assert want[0] == "state" and st == want[1], (state, action, want)
            assert state_hash(gfw, st) == state_hash(gfw, want[1])
            seen["applied"] += 1
        else:
            assert st is state
            seen["left"] += 1
    assert seen["applied"] > 500 and seen["left"] > 500, seen


def test_go_wild_runs_at_a_round_s_end_and_a_short_deck():
    """Go Wild! tables random games seldom reach, made from theirs: seats emptied (a trick
    nobody else plays, a round whose tricks are skipped), a deck of 0 to 30 cards (refills
    that run it out, a reshuffle that runs out again), any trick of the round; the seat's
    plays, each followed by the reshuffle's chance outcome where one is due."""
    g = games()["go-wild"]
    rng = random.Random(23)
    states = []
    play(g, 4, {}, rng=rng, on_step=lambda before, after, *_: states.append(after))
    states = [s for s in states if s.phase == "playing" and s.turn is not None]
    seen = {"applied": 0, "reshuffled": 0, "left": 0}
    for _ in range(1500):
        st = rng.choice(states)
        mine = st.hands[st.turn]
        # fewer cards, or one: the seat's last play
        mine = rng.choice([mine, mine, mine & (rng.getrandbits(108) | (mine & -mine)), mine & -mine])
        hands = tuple(mine if s == st.turn else h if rng.random() < 0.5 else 0 for s, h in enumerate(st.hands))
        deck = st.deck[:rng.choice([0, 1, 5, 12, 30])]
        free = ((1 << 108) - 1) & ~sum(hands) & ~sum(1 << c for c in deck)
        discard = free & rng.choice([rng.getrandbits(108), 1 << rng.randrange(108) | 1 << rng.randrange(108)])
        st = st._replace(hands=hands, deck=deck, trick_no=rng.randint(1, 3), discard=discard)
        plays = g.legal_actions(st, st.turn)
        action = rng.choice(plays)
        recs: list = [{"t": "action", "seq": 7, "seat": st.turn, "action": {"kind": "play", "cards": list(action.cards)}}]
        want = [g.advance(st, st.turn, action)]
        while want[-1].phase == "reshuffling" and len(recs) < 4:
            perm = tuple(rng.sample(range(want[-1].discard.bit_count()), want[-1].discard.bit_count()))
            recs.append(ChanceRecorded(7 + len(recs), "reshuffle", perm))
            want.append(g.advance(want[-1], None, ChanceOutcome("reshuffle", perm)))
        got, k, seq, c = g.REPLAY_RUN(st, tuple(recs), 0, 2**53 + 1)
        if k:
            assert got == want[k - 1] and state_hash(g, got) == state_hash(g, want[k - 1]), (st, recs)
            assert c == k - 1 and seq == 6 + k
            seen["applied"] += 1
            seen["reshuffled"] += c > 0
        else:
            assert got is st
            seen["left"] += 1
    assert seen["applied"] > 500 and seen["reshuffled"] > 50, seen


@pytest.mark.parametrize("name", ["go-wild", "run-wild"])
def test_a_game_is_one_run_up_to_its_first_hash(name):
    """From the table's first state, the run takes every record up to the first hash
    record, or the first timer's action (Run Wild's ready and idle timeouts, left to the
    fold): Go Wild!'s first leader, deal, plays, reshuffles and the play that ends the
    game; Run Wild's first dealer, deals, "ready"s, "Go!"s, plays and the plays that end a
    round or the game. It gives the state the fold gives without it."""
    g = games()[name]
    taken = 0
    for contents in _logs(g, 13):
        recs = contents.decoded
        _, state = initial_state(contents.header)
        stop = next(i for i, r in enumerate(recs)
                    if type(r) is StateHashed or (type(r) is ActionAccepted and r.by == "timer"))
        st, k, seq, c = g.REPLAY_RUN(state, recs, 0, 2**53 + 1)
        assert k == stop and seq == _seq(recs[k - 1])
        assert c == sum(type(r) is ChanceRecorded for r in recs[:k])
        want = fold(_without_run(g), state, recs[:k], verify_hashes=False).state
        assert st == want and state_hash(g, st) == state_hash(g, want)
        taken += k
    assert taken > 1000


@pytest.mark.parametrize("name", ["go-wild", "run-wild"])
def test_replay_calls_the_run_at_chance_records_where_the_game_takes_them(name):
    """With REPLAY_RUN_TYPED, fold starts a run at a chance or typed action record too, so
    that the log's first records (the first leader or dealer, the deal) are folded in the
    run (without it, a run starts at plain action records only)."""
    g = games()[name]
    assert vars(g).get("REPLAY_RUN_TYPED") is True
    for contents in _logs(g, 14)[:4]:
        calls: list = []

        def run(state, records, i, limit):
            out = g.REPLAY_RUN(state, records, i, limit)
            calls.append((i, out[1]))
            return out

        spied = types.SimpleNamespace(**{**vars(g), "REPLAY_RUN": run})
        _, state = initial_state(contents.header)
        assert fold(spied, state, contents.decoded).state == fold(_without_run(g), state, contents.decoded).state
        assert calls[0] == (0, next(i for i, r in enumerate(contents.decoded) if type(r) is StateHashed
                                    or (type(r) is ActionAccepted and r.by == "timer")))


def test_go_fish_runs_take_the_dealer_and_the_deal():
    """Go Fish Wildcard's run takes a log's first records too (REPLAY_RUN_TYPED): the
    dealer drawn by lot and the deal (or the deal alone, where the host chose the dealer),
    then the asks, up to any seq, and gives the fold's state without it."""
    g = games()["go-fish-wildcard"]
    assert vars(g).get("REPLAY_RUN_TYPED") is True
    rng = random.Random(15)
    for settings, chances in (({}, 2), ({"dealer": 1}, 1), ({"dealer": 0}, 1)):
        for _ in range(4):
            p = play(g, rng.randint(2, g.MAX_PLAYERS), settings, rng=rng)
            contents = read_log(encode_record(p.header) + b"".join(encode_record(r) for r in p.records))
            recs = contents.decoded
            assert [type(r) for r in recs[:chances]] == [ChanceRecorded] * chances and type(recs[chances]) is dict
            _, state = initial_state(contents.header)
            for limit in (2**53 + 1, 1, 2, 3, 5):
                st, k, seq, c = g.REPLAY_RUN(state, recs, 0, limit)
                assert k == 0 or c == min(k, chances, limit)
                assert k >= min(limit, chances + 1)
                want = fold(_without_run(g), state, recs[:k], verify_hashes=False).state
                assert st == want and _types(st) == _types(want) and state_hash(g, st) == state_hash(g, want)
                assert seq == (_seq(recs[k - 1]) if k else 0) <= limit
