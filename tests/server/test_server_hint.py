"""The server's ``hint`` (for the browser): the expert's choice for the sender's own seat,
from that seat's view alone, off the table's loop, bounded (docs/PROTOCOL.md "hint")."""

from __future__ import annotations

import trio

from wildtable.headless.net import connect
from wildtable.protocol import messages as m
from wildtable.server import hints

from hintkit import Spy, StandInConn, StandInServer, dealt
from serverkit import reply_to, running_server, seated


async def test_a_player_gets_a_legal_move_others_are_refused(tmp_path):
    with trio.fail_after(30):
        async with running_server(tmp_path / "data") as (server, url):
            async with seated(url, "wild-shots", 4, {"first_player": 2}) as (table, conns, joined):
                seat, view = None, {}
                while seat is None:             # the deal: the last update names whose turn it is
                    got = await conns[0].receive_until(lambda x: isinstance(x, m.Update))
                    seat = got.view.get("turn")
                me = conns[seat]
                view = (await me.receive_until(lambda x: isinstance(x, m.Update) and x.seq == got.seq)).view
                await me.send(m.Hint())
                hint = await me.receive_until(lambda x: isinstance(x, (m.HintGiven, m.Error)))
                assert isinstance(hint, m.HintGiven) and hint.by == "expert" and hint.seq == got.seq, hint
                best = hint.moves[0]
                assert best["action"]["card"] in view["playable"] and hint.text.startswith(best["label"])
                await me.send(m.Intent(7, best["action"]))
                assert isinstance(await reply_to(me, 7), m.Accepted)
                # another seat: not its turn, no move to hint at
                other = conns[(seat + 2) % 4]
                await other.send(m.Hint())
                hint = await other.receive_until(lambda x: isinstance(x, (m.HintGiven, m.Error)))
                assert isinstance(hint, m.HintGiven) and not hint.moves and "no move" in hint.text
                # a spectator, and a connection at no table
                async with connect(url, "watcher") as w:
                    await w.send(m.Hint())
                    err = await w.receive_until(lambda x: isinstance(x, m.Error))
                    assert err.code == "not_at_table" and err.ref == "hint"
                    await w.send(m.Spectate(table))
                    await w.receive_until(lambda x: isinstance(x, m.Spectating))
                    await w.send(m.Hint())
                    err = await w.receive_until(lambda x: isinstance(x, m.Error))
                    assert err.code == "not_seated" and "spectators" in err.message


async def test_the_hint_reads_only_the_askers_view_and_is_bounded(monkeypatch):
    deal = list(range(40))
    # seats 1 and 2 swap two cards of one suit (3 and 17 are not of one suit; 13 and 17 are)
    swapped = [17 if c == 13 else 13 if c == 17 else c for c in deal]
    assert 13 // 10 == 17 // 10 and deal[10:20] != swapped[10:20]
    answers = []
    server = StandInServer()
    try:
        for perm in (deal, swapped):
            table = Spy(dealt(perm), 0)
            answers.append(await hints.answer(StandInConn(table, 0, server)))
            assert table.asked == [0]               # never another seat's view, nor the state itself
        assert answers[0] == answers[1] and answers[0].moves
        # the search runs in one of the hint processes (tests/server/test_hints_search_in_
        # processes_of_their_own.py: not this one), never on the Trio thread the tables run on
        ran = []
        real = hints.Hints.run

        async def run(self, fn, *args):
            ran.append(fn)
            return await real(self, fn, *args)
        monkeypatch.setattr(hints.Hints, "run", run)
        await hints.answer(StandInConn(Spy(dealt(deal), 0), 0, server))
        assert ran == [hints.advise]
    finally:
        server.stop()
    # one hint at a time per connection; a full queue is refused
    server = StandInServer()
    conn = StandInConn(Spy(dealt(deal), 0), 0, server)
    hints.hints_of(server).asking.add(conn)
    try:
        await hints.answer(conn)
        raise AssertionError("a second hint at once was answered")
    except hints.IllegalAction as e:
        assert e.code == "busy"
    hints.hints_of(server).asking.discard(conn)
    hints.hints_of(server).held.take(None, hints.HINT_WAITING)
    try:
        await hints.answer(conn)
        raise AssertionError("a hint past the queue's cap was answered")
    except hints.IllegalAction as e:
        assert e.code == "busy" and "many hints" in e.reason

