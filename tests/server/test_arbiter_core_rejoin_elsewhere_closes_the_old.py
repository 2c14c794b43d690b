"""Seats in the table's pure core (server/arbiter.py), with values alone: a seat resumed
from another connection with its token is told to the old connection, which is then
closed after what it was owed (a typed ``Close`` output); a wrong token is refused and
changes nothing (docs/PROTOCOL.md, the `rejoin` message)."""

from __future__ import annotations

from arbiterkit import core_of, links
from wildtable.protocol import messages as m
from wildtable.protocol.games import go_fish_wildcard as game
from wildtable.server.arbiter_io import Attach, Close, Detach, JoinReq, PlayersChanged, RejoinReq, SendTo


def test_a_seat_resumed_elsewhere_closes_the_old_connection():
    core = core_of(game, 2)
    core.start(100.0)
    old, other, thief, new = links("old", "other", "thief", "new")
    core.receive([JoinReq(old, None, "ann"), JoinReq(other, None, "bob")], 100.0)

    g = core.receive([RejoinReq(thief, 0, "not the token")], 101.0)
    (refused,) = g.out
    assert type(refused) is SendTo and refused.link is thief and refused.message.code == "bad_token"
    assert core.seats[0].link is old and thief not in core.at and g.moves == []

    g = core.receive([RejoinReq(new, 0, "token0")], 102.0)
    told, close, joined, players = g.out
    assert told == SendTo(old, m.Error("seat_taken_over", "your seat was resumed from another connection", ref="rejoin"))
    assert close == Close(old, 1000, "seat resumed elsewhere")
    assert type(joined) is SendTo and joined.link is new and type(joined.message) is m.Joined
    assert joined.message.seat == 0 and joined.message.seq == core.seq
    assert players == PlayersChanged((new, other), (("ann", True), ("bob", True)))
    # the shell moves the connections at once: the old one off the table, the new one into seat 0
    assert g.moves == [Detach(old), Attach(new, 0)]
    assert core.at == {new: 0, other: 1} and core.seats[0].link is new
    assert g.records == []          # the seat's token and name are unchanged: nothing to log
