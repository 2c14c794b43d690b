"""The client's pure reducer (headless/reducer.py), without sockets or a clock: server
messages in, the mirror, typed notices and effects out. What the connection layer used to
decide inside its reader (an "ok" held until the mirror holds its seq, the move the turn
timer made for us, a seat taken back after a reconnect, an overlap of old updates) is
checked here with values."""

from __future__ import annotations

import attrs
import pytest

from wildtable.headless import notices as n
from wildtable.headless.net import Mirror
from wildtable.protocol import messages as m
from wildtable.headless.reducer import Forget, Reducer, Remember, Send, Step

GAME = "toy"            # no client module: the generic one describes its events
NOW = 1000.0


def players(*names, connected=True):
    return tuple({"seat": i, "name": x, "connected": connected} for i, x in enumerate(names))


def seated(seat: int = 0, seq: int = 3, view: dict | None = None) -> tuple[Reducer, Step]:
    r = Reducer("ann")
    step = r.absorb(m.Joined("t1", GAME, seat, "secret", seq, view or {"turn": 1}, players("ann", "bob")), NOW)
    return r, step


def kinds(step: Step) -> list[type]:
    return [type(x) for x in step.notices]


def test_joining_says_so_keeps_the_token_and_redraws():
    r, step = seated()
    assert step.notices == (n.Joined("t1", GAME, 0, "ann", 3), n.TableChanged())
    assert step.notices[0].text == f"joined table t1 ({GAME}) at seat 0 as ann"
    assert step.effects == (Remember("t1", 0, "secret"),)
    assert (r.mirror.table, r.mirror.seat, r.mirror.seq) == ("t1", 0, 3)


def test_an_accepted_intent_is_ok_only_once_the_mirror_holds_its_seq():
    r, _ = seated()
    iid = r.intent("ready")
    assert r.sent(iid) == (n.IntentSent(iid, "ready"),)
    assert r.absorb(m.Accepted(iid, 4), NOW) == Step()          # its update has not come yet
    step = r.absorb(m.Update(4, ({"event": "ready", "seat": 0},), {"turn": 1}), NOW)
    assert kinds(step) == [n.GameEvent, n.IntentAccepted, n.TableChanged]
    assert step.notices[1] == n.IntentAccepted(iid, 4, "ready")
    assert r.mirror.seq == 4 and not r.pending
    assert r.sent(iid) == ()        # answered before the write returned: no "sent" after it


def test_an_update_older_than_the_mirror_changes_nothing():
    r, _ = seated(seq=7)
    view = r.mirror.view
    assert r.absorb(m.Update(7, ({"event": "x", "seat": 1},), {"turn": 0}), NOW) == Step()
    assert r.absorb(m.Update(5, ({"event": "x", "seat": 1},), {"turn": 0}), NOW) == Step()
    assert r.mirror.seq == 7 and r.mirror.view is view


def test_a_rejected_intent_says_which_command_why_and_in_the_players_words():
    r, _ = seated()
    iid = r.intent("create")
    step = r.absorb(m.Rejected(iid, "no_such_table", "list_tables shows the open ones"), NOW)
    assert step.notices == (n.IntentRejected(iid, "no_such_table", "list shows the open ones", "create"),)
    assert not r.pending
    # one this client did not send (an earlier connection's) is named by its id
    (other,) = r.absorb(m.Rejected(99, "not_your_turn", "wait"), NOW).notices
    assert isinstance(other, n.IntentRejected) and other.command == "intent 99"


def test_the_timer_playing_for_you_is_told_apart_from_your_own_move():
    view = {"turn": 0, "turn_timer": 30}
    r, _ = seated(view=view)
    step = r.absorb(m.Update(4, ({"event": "played", "seat": 0},), {"turn": 1, "turn_timer": 30}), NOW)
    assert kinds(step) == [n.Flash, n.TimerPlayed, n.TableChanged]
    timer = step.notices[1]
    assert isinstance(timer, n.TimerPlayed) and timer.seconds == 30
    assert timer.text.startswith("the timer played for you (30 s passed): ")
    assert r.turn_left(NOW + 10) == (1, 20)
    # our own accepted move at our turn is ours, not the timer's
    r, _ = seated(view=view)
    iid = r.intent("play")
    r.absorb(m.Accepted(iid, 4), NOW)
    step = r.absorb(m.Update(4, ({"event": "played", "seat": 0},), {"turn": 1, "turn_timer": 30}), NOW)
    assert kinds(step) == [n.GameEvent, n.IntentAccepted, n.TableChanged]
    # a draw by lot naming our seat is nobody's move
    r, _ = seated(view=view)
    step = r.absorb(m.Update(4, ({"event": "dealer_chosen", "seat": 0},), {"turn": 1, "turn_timer": 30}), NOW)
    assert n.TimerPlayed not in kinds(step)


def test_a_dropped_connection_ends_what_was_under_way_and_the_seat_is_taken_back():
    r, _ = seated(seq=3)
    done = r.intent("ready")
    r.absorb(m.Accepted(done, 5), NOW)      # accepted, its update lost with the connection
    lost = r.intent("draw")                 # never answered
    ended = r.connection_ended()
    assert ended == (n.IntentAccepted(done, 5, "ready"),
                     n.IntentRejected(lost, "connection_lost", ended[1].reason, "draw"))
    assert "the table shows whether it happened" in ended[1].reason and not r.pending
    # the reconnect: rejoin with the seat's token; the answer puts the player back
    assert r.resume_message() == m.Rejoin("t1", 0, "secret")
    step = r.absorb(m.Joined("t1", GAME, 0, "secret", 6, {"turn": 1}, players("ann", "bob")), NOW)
    assert step.notices == (n.BackAtTable("t1", 0, 6), n.TableChanged())
    assert step.notices[0].text == "back at table t1 (seat 0) at seq 6"
    assert not r.rejoining and r.mirror.seq == 6
    # the resync's overlap: an update the rejoin already holds is dropped, the next one kept
    assert r.absorb(m.Update(6, ({"event": "x", "seat": 1},), {}), NOW) == Step()
    assert kinds(r.absorb(m.Update(7, ({"event": "x", "seat": 1},), {"turn": 0}), NOW))[-1] is n.TableChanged


def test_a_seat_that_cannot_be_taken_back_goes_to_the_lobby_and_says_why():
    r, _ = seated()
    assert r.resume_message() is not None
    err = m.Error("seat_released", "the seat was given up", ref="rejoin")
    step = r.absorb(err, NOW)
    assert step.notices == (n.CannotGoBack(err), n.TableChanged())
    assert step.notices[0].text == "could not go back to the table: seat_released: the seat was given up"
    assert r.mirror == Mirror() and not r.rejoining


def test_a_spectator_spectates_again_after_a_reconnect():
    r = Reducer("ann")
    r.absorb(m.Spectating("t1", GAME, 2, {}, players("bob", "cy")), NOW)
    assert r.resume_message() == m.Spectate("t1")
    (back, _) = r.absorb(m.Spectating("t1", GAME, 4, {}, players("bob", "cy")), NOW).notices
    assert back == n.BackAtTable("t1", None, 4) and back.text == "back at table t1 (watching) at seq 4"
    # nothing to take back in the lobby, nor once the game is over
    assert Reducer("ann").resume_message() is None


def test_other_players_coming_and_going():
    r, _ = seated()
    step = r.absorb(m.Players("t1", players("ann", "bob") + ({"seat": 2, "name": "cy", "connected": True},)), NOW)
    assert step.notices == (n.SeatTaken("cy", 2), n.TableChanged())
    gone = tuple(dict(p, connected=p["seat"] != 1) for p in r.mirror.players)
    assert r.absorb(m.Players("t1", gone), NOW).notices[0] == n.PlayerLost("bob")
    back = tuple(dict(p, connected=True) for p in gone)
    assert r.absorb(m.Players("t1", back), NOW).notices[0] == n.PlayerBack("bob")
    assert r.absorb(m.Players("t2", ()), NOW) == Step()        # another table's (a late one)


def test_game_over_is_said_once_in_the_games_words_and_forgets_the_token():
    r, _ = seated()
    step = r.absorb(m.Update(4, ({"event": "game_over", "seat": 1},), {}), NOW)
    assert kinds(step) == [n.TableChanged]          # the game_over event waits for game_over
    over = m.GameOver("t1", 4, (3, 5), (1,), "t1.log")
    step = r.absorb(over, NOW)
    assert kinds(step) == [n.GameOver, n.TableChanged] and step.effects == (Forget("t1"),)
    said = step.notices[0]
    assert isinstance(said, n.GameOver) and said.over is over and "log t1.log" in said.text
    assert r.turn_clock is None and r.mirror.over is over
    assert r.resume_message() is None


def test_leaving_and_creating_ask_the_shell_to_send():
    r, _ = seated()
    step = r.absorb(m.Left("t1"), NOW)
    assert step.notices == (n.LeftTable("t1"), n.TableChanged())
    assert step.effects == (Forget("t1"), Send(m.ListTables()))
    r.join_created = 1
    step = r.absorb(m.TableCreated("t9", GAME, 2), NOW)
    assert step.effects == (Send(m.Join("t9", None)),) and r.join_created == 0
    assert r.absorb(m.TableCreated("t8", GAME, 2), NOW).effects == ()    # someone else's request
    r.asked_lists = 1
    (listed,) = r.absorb(m.TableList(({"table": "t9"},), 2), NOW).notices
    assert listed == n.TablesListed(({"table": "t9"},), True, 2) and r.tables == [{"table": "t9"}]
    (listed,) = r.absorb(m.TableList(()), NOW).notices
    assert isinstance(listed, n.TablesListed) and not listed.asked      # a refresh


@pytest.mark.parametrize("cls", [c for c in vars(n).values()
                                 if isinstance(c, type) and issubclass(c, n.Notice)])
def test_every_notice_is_a_frozen_slotted_value(cls):
    assert attrs.has(cls) and "__slots__" in vars(cls), cls
    one = object.__new__(cls)
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        one.kind = "x"
