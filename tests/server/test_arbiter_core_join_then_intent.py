"""The table's pure core (server/arbiter.py) driven with values and a given ``now``, no
sockets and no trio: joins seat players and, once every seat is taken, the deal is
settled; an intent of the seat to move is accepted (`accepted` just before its update,
one action record); one of the other seat is refused, answered and logged as a refusal
(docs/ARCHITECTURE.md, "The arbiter: pure core, thin shell")."""

from __future__ import annotations

from arbiterkit import core_of, links, records
from wildtable.protocol import messages as m
from wildtable.protocol.codec import to_data
from wildtable.protocol.games import go_fish_wildcard as game
from wildtable.protocol.logfmt import ActionAccepted, ChanceRecorded, IntentRejected, SeatClaimed
from wildtable.server.arbiter_seats import token_hash
from wildtable.server.arbiter_io import Attach, IntentReq, JoinReq, PlayersChanged, SendTo, Update


def test_a_join_then_an_intent_give_typed_outputs():
    core = core_of(game, 2)
    assert core.start(100.0).out == []
    a, b = links("a", "b")

    g = core.receive([JoinReq(a, None, "ann")], 100.5)
    assert g.moves == [Attach(a, 0)] and core.at == {a: 0}      # the shell seats the connection at once
    assert records(g) == [SeatClaimed(0, "ann", token_hash("token0"))]
    joined, players = g.out
    assert type(joined) is SendTo and joined.link is a
    assert joined.message == m.Joined("t1", game.NAME, 0, "token0", 0, game.view(core.state, 0), core.players())
    assert players == PlayersChanged((a,), (("ann", True), (None, False)))   # as decided
    assert not core.started and not g.ended

    # the second join takes the last seat: the dealer's draw and the deal are settled at once
    g = core.receive([JoinReq(b, None, "bob")], 101.0)
    assert [type(o) for o in g.out] == [SendTo, PlayersChanged, Update, Update]
    assert g.out[1] == PlayersChanged((a, b), (("ann", True), ("bob", True)))
    assert [(u.seq, u.seats, u.spectators) for u in g.out[2:]] == [(1, (a, b), ()), (2, (a, b), ())]
    assert [type(r) for r in records(g)] == [SeatClaimed, ChanceRecorded, ChanceRecorded]
    assert core.started and core.seq == 2

    mover = game.to_move(core.state)[0]
    conn = (a, b)[mover]
    action = game.legal_actions(core.state, mover)[0]
    g = core.receive([IntentReq(conn, m.Intent(7, to_data(action)), 1.7e9, 101.5)], 101.5)
    assert g.out[0] == SendTo(conn, m.Accepted(7, 3))
    update = g.out[1]
    assert type(update) is Update and update.seq == 3 and update.seats == (a, b)
    assert records(g)[0] == ActionAccepted(3, mover, to_data(action), 7, "player", 1.7e9)
    assert g.lazy == 0 and core.seq >= 3 and g.accepted == 1 and g.refused == []

    # the seat not to move acts: refused, answered, logged as a refusal (no fsync of its own)
    seq = core.seq
    mover = game.to_move(core.state)[0]
    idle = (a, b)[1 - mover]
    action = game.legal_actions(core.state, mover)[0]
    g = core.receive([IntentReq(idle, m.Intent(8, to_data(action)), 1.7e9, 102.0)], 102.0)
    (answer,) = g.out
    assert type(answer) is SendTo and answer.link is idle and type(answer.message) is m.Rejected
    assert answer.message.intent == 8
    (refusal,) = records(g)
    assert type(refusal) is IntentRejected and refusal.intent == 8 and g.lazy == 1
    assert g.refused == [answer.message.code] and g.accepted == 0      # for the server's counters
    assert core.seq == seq
