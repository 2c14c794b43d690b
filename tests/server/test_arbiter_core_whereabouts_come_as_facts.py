"""What the table's pure core knows of a connection beyond its own table comes in as a
value with the call (server/arbiter_io.py ``Facts``), read by the shell just before: a
join from a connection that closed while it waited seats nobody (it would be a ghost
shown as connected), one from a connection at another table is refused naming that
table, and one from a connection already here is refused naming this one; a leave
detaches the link and releases its seat (docs/PROTOCOL.md, `join`, `leave`)."""

from __future__ import annotations

from arbiterkit import core_of, links, records
from wildtable.protocol import messages as m
from wildtable.protocol.games import go_fish_wildcard as game
from wildtable.protocol.logfmt import SeatClaimed
from wildtable.server.arbiter_io import (
    Attach, Detach, Facts, JoinReq, LeaveReq, PlayersChanged, SendTo, SpectateReq, Whereabouts,
)


def test_a_closed_link_is_not_seated_and_one_elsewhere_is_told_where():
    core = core_of(game, 3)
    core.start(100.0)
    gone, roamer, ann = links("gone", "roamer", "ann")
    facts = Facts(where={gone: Whereabouts(closed=True), roamer: Whereabouts(elsewhere="t9")})
    g = core.receive([JoinReq(gone, None, "gus"), JoinReq(roamer, 1, "rho"), SpectateReq(roamer),
                      JoinReq(ann, None, "ann"), JoinReq(ann, None, "ann")], 100.0, facts)
    assert g.moves == [Attach(ann, 0)]
    assert records(g) == [SeatClaimed(0, "ann", records(g)[0].token_hash)]
    told = [(o.link, o.message.code, o.message.message) for o in g.out if type(o) is SendTo and type(o.message) is m.Error]
    assert told == [(roamer, "already_at_table", "you are already at table t9; send leave first")] * 2 + [
        (ann, "already_at_table", "you are already at table t1; send leave first")]
    assert not any(o.link is gone for o in g.out if type(o) is SendTo)
    assert core.at == {ann: 0}


def test_a_leave_detaches_the_link_and_releases_its_seat():
    core = core_of(game, 3)
    core.start(100.0)
    ann, bob = links("ann", "bob")
    core.receive([JoinReq(ann, None, "ann"), JoinReq(bob, None, "bob")], 100.0)
    g = core.receive([LeaveReq(ann)], 101.0)
    assert g.moves == [Detach(ann)] and core.at == {bob: 1}
    assert records(g) == [SeatClaimed(0, "ann", b"")]           # its token is void: anyone may join it
    assert g.out == [SendTo(ann, m.Left("t1")), PlayersChanged((bob,), ((None, False), ("bob", True), (None, False)))]
    # a connection gone (no notice): the seat stays held by its token
    g = core.receive([LeaveReq(bob, notify=False)], 102.0)
    assert g.moves == [Detach(bob)] and core.at == {} and g.records == []
    assert g.out == [PlayersChanged((), ((None, False), ("bob", False), (None, False)))] and core.seats[1].token_hash
