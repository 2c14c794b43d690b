"""A Run Wild tie-break round reads as one (issue #27: `Run Wild - round 5 of 4 - game
over` read as a bug): the replay viewer's state lines, the table's header in the terminal
client and the line mode's phase line all say "tie-break round"."""

from __future__ import annotations

from wildtable.headless.games import Ctx, round_words
from wildtable.headless.games import run_wild as rw
from wildtable.headless.timeline import ALL, Timeline
from wildtable.protocol.engine import game as find_game
from wildtable.protocol.logfmt import read_log
from wildtable.selfplay import play

from logs import selfplay_log


def test_round_words():
    assert round_words(3, 4) == "round 3 of 4"
    assert round_words(5, 4) == "tie-break round (after 4 rounds)"
    assert round_words(6, 4) == "tie-break round 2 (after 4 rounds)"
    assert round_words(2, None) == "round 2"


def test_a_game_that_went_to_a_tie_break_says_so_at_its_end():
    # seed 7, two seats, one round: the round ends in a tie, a second round breaks it
    assert find_game("run-wild").snapshot(play(find_game("run-wild"), 2, {"rounds": 1}, seed=7).state)["round"] == 2
    tl = Timeline(read_log(selfplay_log("run-wild", seats=2, seed=7, settings={"rounds": 1})))
    last = tl.state_lines(len(tl) - 1, ALL)[0]
    assert last.startswith("Run Wild - tie-break round (after 1 round) - ") and "of 1" not in last, last
    seen = tl.state_lines(len(tl) - 1, 0)
    assert "tie-break round" in "\n".join(seen) and "round 2 of 1" not in "\n".join(seen)
    header = rw.render_text({"game": "run-wild", "round": 2, "rounds": 1, "phase": "over", "players": []},
                            Ctx(("ann", "bob"), 0))[0]
    assert "tie-break round" in header and "2 of 1" not in header
