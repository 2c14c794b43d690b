"""Every game's timers are at most a day (86400 s): Go Wild! and Run Wild capped theirs,
Wild Shots and Go Fish Wildcard took any finite `turn_timer` (1e300 s showed as a
countdown of "1e+300 s"). Capped from their rules versions 2 and 3 (docs/RULES.md "Rules
versions"), so a log of an older version, played with a longer timer, still replays."""

from __future__ import annotations

import pytest

from wildtable.protocol.engine import TableConfig
from wildtable.protocol.errors import IllegalAction
from wildtable.protocol.games import REGISTRY

DAY = 86400
TIMERS = [("go-wild", "turn_timer"), ("wild-shots", "turn_timer"), ("go-fish-wildcard", "turn_timer"),
          ("run-wild", "ready_timeout"), ("run-wild", "idle_timeout")]


@pytest.mark.parametrize("name, setting", TIMERS)
def test_a_timer_up_to_a_day_is_taken_and_a_longer_one_refused_with_a_sentence(name, setting):
    game = REGISTRY[name]
    assert game.new_table(TableConfig(name, 2, {setting: float(DAY)})) is not None
    for longer in (DAY + 1.0, 1e300):
        with pytest.raises(IllegalAction) as e:
            game.new_table(TableConfig(name, 2, {setting: longer}))
        assert e.value.code == "bad_settings" and setting in e.value.reason and "86400" in e.value.reason, e.value


@pytest.mark.parametrize("name, older", [("wild-shots", 1), ("go-fish-wildcard", 2), ("go-fish-wildcard", 1)])
def test_a_log_of_an_older_rules_version_keeps_its_longer_timer(name, older):
    game = REGISTRY[name]
    assert older < game.RULES_VERSION
    state = game.new_table(TableConfig(name, 2, {"turn_timer": 1e6}, rules=older))
    timer = state.rules.turn_timer if name == "wild-shots" else state.turn_timer
    assert timer == 1e6
