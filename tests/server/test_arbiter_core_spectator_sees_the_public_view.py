"""A spectator in the table's pure core (server/arbiter.py), with values alone: its link is
attached as watching (no seat), its snapshot is the public view, it is named in each
update's ``spectators`` and never in ``seats``, and what delivery makes of those updates
for it (server/delivery.py, pure too) is the public view alone, no hand; it cannot act
(docs/PROTOCOL.md, `spectate`; docs/ARCHITECTURE.md, "The arbiter: pure core, thin
shell")."""

from __future__ import annotations

from arbiterkit import core_of, links
from wildtable.protocol import messages as m
from wildtable.protocol.codec import packb, to_data, unpackb
from wildtable.protocol.games import go_fish_wildcard as game
from wildtable.server.arbiter_io import Attach, IntentReq, JoinReq, SpectateReq, Update
from wildtable.server.delivery import UpdateFrames


def _wire(view) -> dict:
    return unpackb(packb(view))


def test_a_spectator_link_gets_the_public_view_alone():
    core = core_of(game, 2)
    core.start(100.0)
    a, b, w = links("ann", "bob", "watcher")
    core.receive([JoinReq(a, None, "ann"), JoinReq(b, None, "bob")], 100.0)      # and the deal
    g = core.receive([SpectateReq(w)], 100.5)
    assert g.moves == [Attach(w, None)] and core.at[w] is None and g.records == []
    (snapshot,) = g.out
    assert snapshot.link is w and type(snapshot.message) is m.Spectating
    assert snapshot.message.view == game.view(core.state, None) and "hand" not in snapshot.message.view

    updates = []
    for i in range(10):
        mover = game.to_move(core.state)[0]
        action = game.legal_actions(core.state, mover)[0]
        g = core.receive([IntentReq((a, b)[mover], m.Intent(i, to_data(action)), 1.7e9, 101.0 + i)], 101.0 + i)
        updates += [o for o in g.out if type(o) is Update]
    # the spectator cannot act: its intent is refused, changing nothing
    seq = core.seq
    g = core.receive([IntentReq(w, m.Intent(99, {"kind": "draw"}), 1.7e9, 120.0)], 120.0)
    assert [(o.link, o.message.code) for o in g.out] == [(w, "not_seated")] and core.seq == seq
    assert len(updates) >= 10

    frames = UpdateFrames(game, full_every=1)      # a whole view each time: each can be read alone
    for u in updates:
        assert u.seats == (a, b) and u.spectators == (w,)
        mine = [unpackb(data) for link, data in frames.frames(u.seq, u.events, u.state, u.seats, u.spectators)
                if link is w]
        assert len(mine) == 1 and mine[0]["seq"] == u.seq
        assert "hand" not in mine[0]["view"]
        assert mine[0]["view"] == _wire(game.view(u.state, None))
        hands = [_wire(game.view(u.state, s))["hand"] for s in (0, 1)]
        assert any(hands), "the seats hold cards the spectator must not see"

