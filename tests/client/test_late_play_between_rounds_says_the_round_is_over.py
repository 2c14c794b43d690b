"""A Run Wild play typed just as a round ends is refused for the round, not for a card
the next round's hand lacks (issue #27: `draw3` was refused as `you hold no Draw-3 (D3)`,
checked against the new hand); the words are the server's (protocol/games/run_wild.py)."""

from __future__ import annotations

import pytest

from wildtable.headless.games import CommandError
from wildtable.headless.games import run_wild as rw

HAND = [0, 1, 2]            # no Draw-3, no wild


@pytest.mark.parametrize("words", [["draw3"], ["meld", "W", "W", "W"], ["add", "D3", "to", "m1"]])
def test_between_rounds_the_round_is_named_not_the_hand(words):
    view = {"phase": "ready", "round": 2, "rounds": 4, "hand": HAND, "round_scores": [[0, 5]], "melds": []}
    with pytest.raises(CommandError) as e:
        rw.parse(words, view)
    assert str(e.value) == "round 1 is over; round 2 starts at Go! once everyone is ready"
    scored = dict(view, phase="scored", round=1)
    with pytest.raises(CommandError) as e:
        rw.parse(words, scored)
    assert str(e.value) == "round 1 is over; wait for the next deal"
    with pytest.raises(CommandError) as e:
        rw.parse(words, dict(view, phase="over"))
    assert str(e.value) == "the game is over"


def test_while_playing_the_hand_is_checked_as_before():
    with pytest.raises(CommandError) as e:
        rw.parse(["draw3"], {"phase": "playing", "round": 1, "hand": HAND, "melds": []})
    assert str(e.value) == "you hold no Draw-3 (D3)"
