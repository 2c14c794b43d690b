"""The reducer (headless/reducer.py) takes a rejoin refused for a reason that passes as
"not yet": the mirror and the seat's token are kept, the player is told when it is asked
again, the delays grow to 15 s and stay there; a refusal that does not pass still sends the
player to the lobby; and the count starts again once the seat is back."""

from __future__ import annotations

import pytest

from wildtable.headless import notices as n
from wildtable.headless.net import Mirror
from wildtable.headless.reducer import NOT_YET, GoBackLater, Reducer, Step
from wildtable.protocol import messages as m

from test_reducer import GAME, NOW, players, seated


@pytest.mark.parametrize("code", sorted(NOT_YET))
def test_a_rejoin_refused_not_yet_keeps_the_seat_and_asks_again_later(code):
    r, _ = seated()
    r.connection_ended()
    assert r.resume_message() == m.Rejoin("t1", 0, "secret")
    delays = []
    for _ in range(7):
        err = m.Error(code, "the table is being taken over; try again in a few seconds", ref="rejoin")
        step = r.absorb(err, NOW)
        (note,) = step.notices
        assert isinstance(note, n.NotBackYet) and step.effects == (GoBackLater(note.delay),)
        assert note.text == (f"cannot go back to the table yet ({code}: the table is being taken over; try again "
                             f"in a few seconds); trying again in {note.delay:g} s...")
        assert r.rejoining and (r.mirror.table, r.mirror.seat, r.mirror.token) == ("t1", 0, "secret")
        assert r.resume_message() == m.Rejoin("t1", 0, "secret")      # what the shell sends then
        delays.append(note.delay)
    assert delays == [1.0, 2.0, 4.0, 8.0, 15.0, 15.0, 15.0]
    step = r.absorb(m.Joined("t1", GAME, 0, "secret", 6, {"turn": 1}, players("ann", "bob")), NOW)
    assert step.notices[0] == n.BackAtTable("t1", 0, 6) and not r.rejoining
    r.connection_ended()
    r.resume_message()
    again = r.absorb(m.Error(code, "again", ref="rejoin"), NOW)
    assert again.effects == (GoBackLater(1.0),)           # a new outage starts from 1 s


def test_a_spectator_not_let_back_yet_is_asked_again_too():
    r = Reducer("ann")
    r.absorb(m.Spectating("t1", GAME, 2, {}, players("bob", "cy")), NOW)
    assert r.resume_message() == m.Spectate("t1")
    step = r.absorb(m.Error("storage_error", "not now", ref="spectate"), NOW)
    assert step.effects == (GoBackLater(1.0),) and r.mirror.table == "t1"


def test_a_rejoin_refused_for_good_still_goes_to_the_lobby():
    r, _ = seated()
    r.resume_message()
    err = m.Error("bad_token", "that token does not hold seat 0", ref="rejoin")
    step = r.absorb(err, NOW)
    assert step == Step((n.CannotGoBack(err), n.TableChanged()))
    assert r.mirror == Mirror() and not r.rejoining
