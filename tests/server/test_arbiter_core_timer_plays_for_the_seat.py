"""The table's timer in its pure core (server/arbiter.py), at a given ``now``: the turn
timer's deadline counts from the last action; before it nothing happens, at it the
core plays the default move for the seat to move (logged `by: "timer"`), and an intent
that arrived after the deadline goes after the timer's move in the log
(docs/ARCHITECTURE.md, "Timers")."""

from __future__ import annotations

from arbiterkit import core_of, links, records
from wildtable.protocol import messages as m
from wildtable.protocol.codec import to_data
from wildtable.protocol.games import go_fish_wildcard as game
from wildtable.protocol.logfmt import ActionAccepted
from wildtable.server.arbiter_io import IntentReq, JoinReq, SendTo, Update


def _dealt():
    core = core_of(game, 2)             # the default turn timer: 60 s
    core.start(100.0)
    a, b = links("a", "b")
    core.receive([JoinReq(a, None, "ann"), JoinReq(b, None, "bob")], 101.0)
    assert core.started
    return core, (a, b)


def test_the_timer_plays_for_the_seat_at_its_deadline():
    core, peers = _dealt()
    deadline, timeout = core.deadline(101.0)
    mover = game.to_move(core.state)[0]
    assert (deadline, timeout) == (101.0 + 60.0, game.timeout_action(core.state))
    assert timeout.seat == mover

    seq = core.seq
    early = core.tick(deadline - 0.001)
    assert early.records == [] and early.out == [] and core.seq == seq

    g = core.tick(deadline)
    assert records(g)[0] == ActionAccepted(seq + 1, mover, to_data(timeout.action), None, "timer", None)
    update = g.out[0]
    assert type(update) is Update and update.seq == seq + 1 and update.seats == peers
    # the next turn's deadline counts from the timer's move
    assert core.deadline(deadline)[0] == deadline + 60.0


def test_an_intent_read_after_the_deadline_goes_after_the_timers_move():
    core, peers = _dealt()
    deadline, timeout = core.deadline(101.0)
    mover = game.to_move(core.state)[0]
    seq = core.seq
    # read 1 s after the deadline, handled later still (the shell was busy committing)
    action = game.legal_actions(core.state, mover)[0]
    g = core.receive([IntentReq(peers[mover], m.Intent(5, to_data(action)), 1.7e9, deadline + 1.0)], deadline + 2.0)
    first = records(g)[0]
    assert first == ActionAccepted(seq + 1, mover, to_data(timeout.action), None, "timer", None)
    answers = [o.message for o in g.out if type(o) is SendTo and o.link is peers[mover]]
    assert answers and answers[0].intent == 5      # answered after the timer's move: accepted or refused
    assert all(u.seq > seq for u in g.out if type(u) is Update)
