"""Fair order in the table's pure core (server/arbiter.py, fairhold.py), at given times
and with no sockets: at a Run Wild table (fair_ms 100) an intent of the near seat is
held for twice the far seat's reach; the far seat's intent, read later but sent
earlier, is applied first, and the held one at its release time, with its delay bound,
send time and hold logged (docs/ARCHITECTURE.md, "Fair order")."""

from __future__ import annotations

import pytest

from arbiterkit import core_of, links, records
from wildtable.protocol import messages as m
from wildtable.protocol.codec import to_data
from wildtable.protocol.games import run_wild as game
from wildtable.protocol.logfmt import ActionAccepted
from wildtable.server import fairorder
from wildtable.server.arbiter_io import Facts, IntentReq, JoinReq, SendTo


def test_the_far_seats_earlier_intent_goes_first_and_the_near_one_waits_its_hold():
    core = core_of(game, 2)
    assert core.fair == 0.1
    core.start(100.0)
    far, near = links("far", "near")
    # each seat's delay bound as the shell measured it (pings, the kernel): a fact of each call
    delays = Facts(delays=(0.04, 0.0))
    core.receive([JoinReq(far, None, "ann"), JoinReq(near, None, "bob")], 100.0, delays)
    seq = core.seq
    ready = to_data(game.legal_actions(core.state, 1)[0])

    # the near seat's intent (no delay measured: no credit) is held 2 x 40 ms
    g = core.receive([IntentReq(near, m.Intent(1, ready), 1000.0, 101.0)], 101.0, delays)
    assert g.out == [] and g.records == [] and len(core.hold) == 1
    assert core.wake(101.0, delays)[0] == pytest.approx(101.08)

    # the far seat's, read 50 ms later but credited 40 ms each way, was sent first
    reach = fairorder.Reach(ping=0.04, kernel=0.04)
    g = core.receive([IntentReq(far, m.Intent(2, ready), 1000.05, 101.05, reach)], 101.05, delays)
    first = records(g)[0]
    assert type(first) is ActionAccepted and (first.seq, first.seat, first.intent) == (seq + 1, 0, 2)
    assert (first.delay, first.hold) == (0.04, 0.0) and first.sent == pytest.approx(1000.01)
    assert SendTo(far, m.Accepted(2, seq + 1)) in g.out
    assert len(core.hold) == 1          # the near one still waits

    assert core.tick(101.079, delays).records == []
    g = core.tick(101.08, delays)
    second = records(g)[0]
    assert type(second) is ActionAccepted and (second.seat, second.intent) == (1, 1)
    assert second.hold == pytest.approx(0.08) and second.delay == 0.0
    assert SendTo(near, m.Accepted(1, second.seq)) in g.out
    assert len(core.hold) == 0


def test_the_hold_follows_the_facts_and_the_seats_at_once():
    """The hold is kept per facts and seats (FairHold.hold_now asks it once, not three
    times an intent): new delays, or a seat leaving under the same facts, change it at
    the next call."""
    core = core_of(game, 3)
    core.start(100.0)
    a, b, c = links("a", "b", "c")
    facts = Facts(delays=(0.01, 0.03, 0.02))
    core.receive([JoinReq(a, None, "ann"), JoinReq(b, None, "bob"), JoinReq(c, None, "cy")], 100.0, facts)
    legs = fairorder.LEGS
    assert core.hold.hold_now(0) == pytest.approx(legs * 0.03)
    assert core.hold.hold_now(1) == pytest.approx(legs * 0.02)
    # new delays: a new facts object
    core.wake(100.1, Facts(delays=(0.01, 0.05, 0.02)))
    assert core.hold.hold_now(0) == pytest.approx(legs * 0.05)
    # bob's seat is let go under the same facts: he holds nobody up any more
    core.forget(b)
    assert core.seats[1].link is None
    assert core.hold.hold_now(0) == pytest.approx(legs * 0.02)
    assert core.hold.hold_now(None) == pytest.approx(legs * 0.02)
