"""A game in play that nobody is at (no seated player connected, no spectator) is given up
after `serve --abandoned-expiry` (the core's EXPIRE deadline; docs/ARCHITECTURE.md "Bounded
resources"), at the server's default: found, a game whose timers were off (`turn_timer` 0)
with its players gone was held for as long as the server ran, so one address could fill
--max-tables by starting games and leaving them."""

from __future__ import annotations

import math

from arbiterkit import core_of, links
from wildtable.protocol import messages as m
from wildtable.protocol.games import go_wild as game, run_wild
from wildtable.server.arbiter_io import EXPIRE, JoinReq, LeaveReq, RejoinReq, SendTo, SpectateReq, is_timer
from wildtable.server.config import ServerConfig

DEFAULT = ServerConfig().abandoned_expiry


def _left(settings: dict, at: float = 100.0, of=game):
    """A two-seat game dealt at ``at``; both players' connections then closed."""
    core = core_of(of, 2, settings, abandoned_expiry=DEFAULT, waiting_expiry=ServerConfig().waiting_expiry)
    core.start(at)
    a, b = links("a", "b")
    joined = core.receive([JoinReq(a, None, "ann"), JoinReq(b, None, "bob")], at + 1.0)
    assert core.started and not core.finished
    core.receive([LeaveReq(a, notify=False), LeaveReq(b, notify=False)], at + 2.0)
    assert not core.at
    tokens = [o.message.token for o in joined.out if type(o) is SendTo and type(o.message) is m.Joined]
    return core, tokens


def test_a_game_without_timers_that_nobody_is_at_is_given_up_after_the_expiry():
    core, _ = _left({"turn_timer": 0})
    assert core.deadline(102.0) == (102.0 + DEFAULT, EXPIRE)
    # asked again later (the shell wakes for other reasons), the clock still counts from the leaving
    assert core.deadline(50_000.0) == (102.0 + DEFAULT, EXPIRE)


def test_someone_back_at_it_stops_the_clock_and_the_last_to_go_starts_it_again():
    core, tokens = _left({"turn_timer": 0})
    assert core.deadline(102.0)[1] is EXPIRE
    c, d = links("c", "d")
    core.receive([SpectateReq(c)], 80_000.0)          # a spectator is someone at it too
    assert core.deadline(80_000.0) == (math.inf, None)
    core.receive([LeaveReq(c, notify=False)], 80_010.0)
    assert core.deadline(80_010.0) == (80_010.0 + DEFAULT, EXPIRE)
    core.receive([RejoinReq(d, 0, tokens[0])], 90_000.0)     # a player comes back to their seat
    assert core.at and core.deadline(90_000.0) == (math.inf, None)


def test_a_game_whose_timer_plays_for_the_absent_is_given_up_too():
    """Run Wild's timers (at their defaults) move play for seats nobody is at, for ever:
    their moves come first until the expiry is earlier. (The turn-based games' timers
    play them out: a game over is held for --keep-finished instead.)"""
    core, _ = _left({}, of=run_wild)
    deadline, timeout = core.deadline(102.0)
    assert is_timer(timeout) and deadline < 102.0 + DEFAULT
    now, moves = deadline, 0
    while True:
        deadline, timeout = core.deadline(now)
        if not is_timer(timeout) or core.finished:
            break
        core.tick(deadline)
        now, moves = deadline, moves + 1
    assert not core.finished, "the timer's moves ended this game: the test needs one they cannot end"
    assert (deadline, timeout) == (102.0 + DEFAULT, EXPIRE)
    assert moves > 100, moves


def test_a_game_someone_is_at_is_never_given_up():
    core = core_of(game, 2, {"turn_timer": 0}, abandoned_expiry=DEFAULT)
    core.start(100.0)
    a, b = links("a", "b")
    core.receive([JoinReq(a, None, "ann"), JoinReq(b, None, "bob")], 101.0)
    core.receive([LeaveReq(a, notify=False)], 102.0)        # one of the two still connected
    assert core.deadline(10 * DEFAULT) == (math.inf, None)


def test_a_full_disk_stops_the_clock_and_it_goes_on_with_the_time_it_had_left():
    core, _ = _left({"turn_timer": 0})
    assert core.deadline(102.0) == (102.0 + DEFAULT, EXPIRE)
    core.resume_timers(500.0)                        # the disk was full for 500 s
    assert core.deadline(1_000.0) == (602.0 + DEFAULT, EXPIRE)
