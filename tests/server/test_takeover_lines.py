"""server/takeover.py: what the operator reads after a node's tables were taken over,
decided from values (the seats held at the takeover, the seats connected now, the time):
all players back, or after BACK_WITHIN which seats are still away, and nothing for a
game that ended meanwhile."""

from __future__ import annotations

from wildtable.server.takeover import BACK_WITHIN, awaited, comeback, suspect


def players(*connected: bool, names=("ann", "bob")) -> tuple[dict, ...]:
    return tuple({"seat": i, "name": n, "connected": c} for i, (n, c) in enumerate(zip(names, connected)))


def test_all_players_back_is_said_once_they_are():
    w = awaited("t1", players(False, False), 10.0)
    assert w is not None and w.seats == ((0, "ann"), (1, "bob"))
    assert comeback(w, players(True, False), 11.0, False) == (False, None, False)
    done, line, warn = comeback(w, players(True, True), 12.5, False)
    assert done and not warn
    assert line == "table t1: all 2 player(s) back at their seats 2.5 s after this node took it over"


def test_players_still_away_after_back_within_are_named_as_a_warning():
    w = awaited("t1", players(False, False), 0.0)
    assert comeback(w, players(True, False), BACK_WITHIN - 0.1, False)[0] is False
    done, line, warn = comeback(w, players(True, False), BACK_WITHIN, False)
    assert done and warn
    assert line.startswith(f"table t1: 1 of 2 player(s) not back {BACK_WITHIN:.0f} s after this node took it "
                           "over: seat 1 (bob); their clients have not sent rejoin"), line
    assert "join the table again" in line


def test_a_game_that_ends_meanwhile_or_a_table_nobody_held_says_nothing():
    w = awaited("t1", players(False, False), 0.0)
    assert comeback(w, players(False, False), 1.0, True) == (True, None, False)
    assert awaited("t1", tuple({"seat": i, "name": None, "connected": False} for i in range(2)), 0.0) is None


def test_a_live_node_is_suspect_once_it_missed_a_heartbeat():
    assert not suspect(1.4, 1.0) and suspect(1.6, 1.0)
