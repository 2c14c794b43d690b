"""`wildtable replay LOG --analyze`: a line per decision of the seat, deliberately bad
moves marked, and no hindsight (docs/PLAYING.md "Hints and analysis")."""

from __future__ import annotations

import copy
import json

from wildtable.analyze import EFFORT, decisions, seed_of
from wildtable.cli import main
from wildtable.headless.appraise import appraise, marks_for, wire
from wildtable.headless.games import action_key, plugin_for
from wildtable.protocol.codec import to_data
from wildtable.protocol.engine import game as find_game
from wildtable.protocol.logfmt import ActionAccepted, ChanceRecorded, StateHashed, encode_record, read_prefix
from wildtable.selfplay import play

GAME = find_game("wild-shots")


def _log(playout, records=None) -> bytes:
    recs = playout.records if records is None else records
    return encode_record(playout.header) + b"".join(encode_record(r) for r in recs)


def _first_round(records) -> list:
    """The records of a game's first round (up to its second deal): a short log."""
    deals = [i for i, r in enumerate(records) if type(r) is ChanceRecorded and r.purpose == "deal"]
    return list(records[:deals[1]])


def _game_of_bad_moves(seed: int):
    """A Wild Shots game of random players in which seat 0, all through the first round,
    plays the card the expert values lowest; {seq: the loss the expert saw} of those moves."""
    plugin = plugin_for(GAME.NAME)
    memo: dict = {}
    at: dict = {"state": None, "seq": 0}
    bad: dict[int, float] = {}

    def on_step(before, after, action, seat, req, events):
        at["state"], at["seq"] = after, at["seq"] + 1
        plugin.bot_watch(wire(GAME.view(after, 0)), 0.0, memo)

    def pick(rng, choices):
        state = at["state"]
        if state is not None and state.round == 0 and tuple(GAME.to_move(state)) == (0,):
            # as the analysis will see it: the seat's view, a copy of its memory, the seq's seed
            advice = appraise(GAME.NAME, wire(GAME.view(state, 0)), copy.deepcopy(memo), seed_of(at["seq"] + 1),
                              EFFORT)
            best, worst = advice.moves[0], advice.moves[-1]
            bad[at["seq"] + 1] = best.value - worst.value
            return next(c for c in choices if action_key(to_data(c)) == action_key(worst.action))
        return rng.choice(choices)

    return play(GAME, 4, {}, seed=seed, on_step=on_step, pick=pick), bad


def test_analyze_prints_a_line_per_decision_and_marks_the_bad_ones(tmp_path, capsys):
    playout, bad = _game_of_bad_moves(3)
    marks = marks_for(GAME.NAME)
    assert max(bad.values()) >= marks.inaccuracy, "no move of seat 0 worth a mark: choose another seed"
    path = tmp_path / "game.wlog"
    records = _first_round(playout.records)
    path.write_bytes(_log(playout, records))
    assert main(["replay", str(path), "--analyze", "--seat", "0"]) == 0
    out = capsys.readouterr().out.splitlines()
    moves = [r for r in records if type(r) is ActionAccepted and r.seat == 0 and r.by == "player"]
    lines = [x for x in out if x.startswith("seq ")]
    assert len(lines) == len(moves) == len(bad) and all(" seat 0 " in x for x in lines)
    for line in lines:         # each bad move with the loss the expert saw, and its mark
        loss = bad[int(line.split()[1])]
        mark = marks.mark(loss)
        assert (line.endswith("  " + mark) if mark else not line.endswith("?")), (line, loss)
        assert f"-{loss:.2f}" in line or loss <= 0, (line, loss)
    assert out[-1].startswith(f"seat 0: {len(moves)} decisions")
    # the same log, the same analysis; as data, too
    assert main(["replay", str(path), "--analyze", "--seat", "0", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert {d["seq"]: d["mark"] for d in data["decisions"]} == {q: marks.mark(x) for q, x in bad.items()}
    worst = max(bad, key=bad.get)
    assert [d["mark"] for d in data["decisions"] if d["seq"] == worst][0] in ("?!", "?", "??")
    assert data["summary"][0]["decisions"] == len(moves)


def test_the_analysis_has_no_hindsight(tmp_path):
    """Two cards the other seats hold swapped in the deal: what seat 0 saw is the same, so
    each of its decisions is valued the same, up to the first time either card shows."""
    playout = play(GAME, 4, {}, seed=3)
    records = [r for r in playout.records if type(r) is not StateHashed]     # the hashes would differ
    deal = next(i for i, r in enumerate(records) if type(r) is ChanceRecorded and r.purpose == "deal")
    hands = [set(records[deal].permutation[k * 10:(k + 1) * 10]) for k in range(4)]
    played = [r.action["card"] for r in records[deal:] if type(r) is ActionAccepted]
    # a card of seat 1 and one of seat 2 of the same suit (every play before either shows
    # stays legal), neither played in the first three tricks
    cut, x, y = min((min(played.index(a), played.index(b)), a, b) for a in hands[1] for b in hands[2]
                    if a // 10 == b // 10 and a in played and b in played
                    and min(played.index(a), played.index(b)) >= 12)
    cut = [i for i, r in enumerate(records) if type(r) is ActionAccepted][cut]
    perm = [y if c == x else x if c == y else c for c in records[deal].permutation]
    swapped = records[:deal] + [ChanceRecorded(records[deal].seq, "deal", tuple(perm))] + records[deal + 1:cut]
    kept = records[:cut]
    mine = [d for d in decisions(read_prefix(_log(playout, kept)), (0,))]
    theirs = [d for d in decisions(read_prefix(_log(playout, swapped)), (0,))]
    assert len(mine) >= 3 and mine == theirs
    # the seats that held the swapped cards saw another hand: the test can tell
    assert [d for d in decisions(read_prefix(_log(playout, kept)), (1,))] != \
        [d for d in decisions(read_prefix(_log(playout, swapped)), (1,))]


def test_real_time_games_and_bad_seats_are_refused(tmp_path, capsys):
    rw = play(find_game("run-wild"), 2, {}, seed=1)
    path = tmp_path / "rw.wlog"
    path.write_bytes(_log(rw))
    assert main(["replay", str(path), "--analyze"]) == 2
    assert "Run Wild is played in real time" in capsys.readouterr().err
    ws = tmp_path / "ws.wlog"
    ws.write_bytes(_log(play(GAME, 4, {}, seed=1)))
    assert main(["replay", str(ws), "--analyze", "--seat", "4"]) == 2
    assert "--seat wants a seat of this table, 0 to 3" in capsys.readouterr().err
    assert main(["replay", str(ws), "--analyze", "--verify"]) == 2
    assert "--analyze" in capsys.readouterr().err

