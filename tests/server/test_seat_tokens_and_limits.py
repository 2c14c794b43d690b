"""Seats and limits: a wrong token, another table's token, a token reused after leaving,
an intent for a seat the connection does not hold - all refused. The rate limit, the
frame-size cap, the table cap and the connection cap each answer with their own clear
error."""

from __future__ import annotations

import msgpack
import trio

from wildtable.headless.net import Connection, connect
from wildtable.headless.wire import ConnectionClosed, open_socket
from wildtable.protocol import messages as m

from serverkit import create, join, ready_all, reply_to, running_server, seated, server_config
from waitkit import wait_until


async def _answer(conn, types=(m.Error, m.Joined)):
    return await conn.receive_until(lambda x: isinstance(x, types))


async def test_tokens_that_do_not_hold_the_seat_are_refused(tmp_path):
    with trio.fail_after(30):
        async with running_server(tmp_path / "data") as (server, url):
            async with seated(url, "run-wild", 2) as (table, conns, joined), \
                    seated(url, "run-wild", 2) as (other, oconns, ojoined):
                t0, t1 = joined[0].token, joined[1].token
                await conns[1].close()                     # seat 1 is held, its player gone
                async with connect(url, "mallory") as c:
                    cases = [
                        (table, 1, t1[:-1] + ("A" if t1[-1] != "A" else "B"), "a wrong token"),
                        (table, 1, ojoined[1].token, "another table's token"),
                        (table, 1, t0, "the token of another seat"),
                        (table, 1, "", "an empty token"),
                        (other, 1, t1, "a token at another table"),
                    ]
                    for tid, seat, token, what in cases:
                        await c.send(m.Rejoin(tid, seat, token))
                        r = await _answer(c)
                        assert isinstance(r, m.Error) and r.code == "bad_token", (what, r)
                        assert "token" in r.message and r.path == "$.token"
                    await c.send(m.Rejoin("t-none", 1, t1))
                    r = await _answer(c)
                    assert r.code == "no_such_table"
                    await c.send(m.Rejoin(table, 7, t1))
                    r = await _answer(c)
                    assert r.code == "no_such_seat"
                    # the rightful token still works after all that
                    await c.send(m.Rejoin(table, 1, t1))
                    back = await _answer(c)
                    assert isinstance(back, m.Joined) and back.seat == 1 and back.token == t1
                    # ... and a second rejoin while seated is refused
                    await c.send(m.Rejoin(table, 1, t1))
                    assert (await _answer(c)).code == "already_at_table"
                    # leaving releases the seat: the token stops working, for anyone
                    await c.send(m.Leave())
                    await c.receive_until(lambda x: isinstance(x, m.Left))
                    await c.send(m.Rejoin(table, 1, t1))
                    assert (await _answer(c)).code == "bad_token"
                    async with connect(url, "newcomer") as n:
                        j = await join(n, table, 1)          # the released seat is free to join
                        assert j.token != t1
                        await n.send(m.Rejoin(table, 1, t1))
                        assert (await _answer(n)).code == "already_at_table"
                        await c.send(m.Rejoin(table, 1, t1))
                        assert (await _answer(c)).code == "bad_token"   # the old token stays dead
                        await c.send(m.Rejoin(table, 1, j.token))
                        taken = await _answer(c)
                        assert isinstance(taken, m.Joined)            # the new token resumes the seat ...
                        gone = await n.receive_until(lambda x: isinstance(x, m.Error))
                        assert gone.code == "seat_taken_over"         # ... and the other connection hears so
                        try:
                            await n.receive()
                            raise AssertionError("the connection whose seat was taken over stayed open")
                        except ConnectionClosed:
                            pass


async def test_intents_for_seats_the_connection_does_not_hold_are_refused(tmp_path):
    with trio.fail_after(30):
        async with running_server(tmp_path / "data") as (server, url):
            async with seated(url, "go-wild", 2, {"turn_timer": 0.0, "first_player": 0}) as (table, conns, joined):
                t = server.tables[table]
                await wait_until(lambda: t.game.view(t.state, None)["phase"] == "playing", timeout=5,
                                 what="the table playing")
                seq = t.seq
                view = t.game.view(t.state, 1)
                assert view["turn"] == 0
                # seat 1 plays on seat 0's turn: the seat to move is not the one this connection holds
                await conns[1].send(m.Intent(1, {"kind": "play", "cards": [view["hand"][0]]}))
                r = await reply_to(conns[1], 1)
                assert isinstance(r, m.Rejected) and r.code == "not_your_turn"
                # a card from seat 0's hand, played by seat 1's connection
                hand0 = t.game.view(t.state, 0)["hand"]
                await conns[1].send(m.Intent(2, {"kind": "play", "cards": [hand0[0]]}))
                r = await reply_to(conns[1], 2)
                assert isinstance(r, m.Rejected) and r.code in ("not_your_turn", "not_in_hand")
                assert t.seq == seq                                      # nothing changed
                async with connect(url, "watcher") as w, connect(url, "nobody") as nobody:
                    await w.send(m.Spectate(table))
                    await w.receive_until(lambda x: isinstance(x, m.Spectating))
                    for c in (w, nobody):
                        await c.send(m.Intent(3, {"kind": "play", "cards": [hand0[0]]}))
                        r = await reply_to(c, 3)
                        assert isinstance(r, m.Rejected) and r.code == "not_seated", r
                    # a spectator cannot join or rejoin without leaving first
                    await w.send(m.Rejoin(table, 0, joined[0].token))
                    assert (await _answer(w)).code == "already_at_table"
                # seat 0 leaves: its intents are refused from then on
                await conns[0].send(m.Leave())
                await conns[0].receive_until(lambda x: isinstance(x, m.Left))
                await conns[0].send(m.Intent(4, {"kind": "play", "cards": [hand0[0]]}))
                r = await reply_to(conns[0], 4)
                assert isinstance(r, m.Rejected) and r.code == "not_seated"
                assert t.seq == seq


async def test_a_seated_player_cannot_also_spectate_and_gets_each_update_once(tmp_path):
    """Found: a seated player who sent `spectate` for its own table was added as a
    spectator too, and from then on got every update twice (its own view and the
    spectator's), with two different views for one seq."""
    with trio.fail_after(30):
        async with running_server(tmp_path / "data") as (server, url):
            async with seated(url, "run-wild", 2) as (table, conns, joined):
                await conns[0].send(m.Spectate(table))
                r = await conns[0].receive_until(lambda x: isinstance(x, (m.Error, m.Spectating)))
                assert isinstance(r, m.Error) and r.code == "already_at_table", r
                # everything seat 0 gets from here on is kept: the deal, the Go!, every draw
                seen = []
                for i, c in enumerate(conns):
                    await c.send(m.Intent(900 + i, {"kind": "ready"}))
                assert isinstance(await reply_to(conns[0], 900, keep=seen), m.Accepted)
                assert isinstance(await reply_to(conns[1], 901), m.Accepted)
                for k in range(5):
                    await conns[0].send(m.Intent(k + 1, {"kind": "draw"}))
                    assert isinstance(await reply_to(conns[0], k + 1, keep=seen), m.Accepted)
                await conns[0].send(m.ListTables())
                await conns[0].receive_until(lambda x: isinstance(x, m.TableList), keep=seen)
                seqs = [u.seq for u in seen if isinstance(u, m.Update)]
                # at least: the ready, the deal's shuffle, Go! and five draws, each once
                assert len(seqs) >= 8, seqs
                assert seqs == sorted(set(seqs)), f"updates twice or out of order: {seqs}"
                assert all("hand" in u.view for u in seen if isinstance(u, m.Update))
                info = [x for x in (await _list(conns[1])) if x["table"] == table][0]
                assert info["spectators"] == 0


async def _list(conn):
    await conn.send(m.ListTables())
    return (await conn.receive_until(lambda x: isinstance(x, m.TableList))).tables


async def test_rate_limit_answers_every_intent_once_and_in_order(tmp_path):
    """Found: an intent dropped by the rate limit was answered at once by the connection,
    ahead of the answers to the intents before it, still waiting at the table for the disk.

    5 a second, bursts of 20: how many are refused hangs on how long the server took to
    read the burst (the bucket refills meanwhile). At 20 a second, a server held off its
    core for 0.2 s on a loaded machine refused too few; at 5 it takes 2 s."""
    with trio.fail_after(30):
        async with running_server(server_config(tmp_path / "data", rate_limit=5.0, rate_burst=20.0)) as (server, url):
            async with seated(url, "run-wild", 2) as (table, conns, joined):
                await ready_all(conns)
                # every bucket full again: time is what refills a bucket (not a condition to
                # wait for), and a bucket holds at most its burst, so a longer sleep on a
                # loaded machine changes nothing (at most 4 were used, 5 a second refill them)
                await trio.sleep(1.5)
                c = conns[0]
                n = 36
                for i in range(1, n + 1):
                    await c.send(m.Intent(i, {"kind": "draw"}))
                answers = []
                with trio.fail_after(10):
                    while len(answers) < n:
                        msg = await c.receive()
                        if isinstance(msg, (m.Accepted, m.Rejected)):
                            answers.append(msg)
                ids = [a.intent for a in answers]
                assert ids == list(range(1, n + 1)), f"answers out of order or missing: {ids}"
                limited = [a for a in answers if isinstance(a, m.Rejected) and a.code == "rate_limited"]
                assert 5 <= len(limited) <= n - 15, len(limited)
                assert all("at most 5 per second" in a.reason for a in limited)
                accepted = [a for a in answers if isinstance(a, m.Accepted)]
                assert [a.seq for a in accepted] == sorted(a.seq for a in accepted)
                # a lobby message over the limit gets its own error, naming what it answers
                other = conns[1]
                for _ in range(40):
                    await other.send(m.ListTables())
                got = []
                with trio.fail_after(10):
                    while len(got) < 40:
                        msg = await other.receive()
                        if isinstance(msg, (m.Error, m.TableList)):
                            got.append(msg)
                errs = [e for e in got if isinstance(e, m.Error)]
                assert 5 <= len(errs) <= 25, got      # 20 over the burst, less what refilled
                assert {e.code for e in errs} == {"rate_limited"} and {e.ref for e in errs} == {"list_tables"}


async def test_frame_size_caps_answer_clearly(tmp_path):
    with trio.fail_after(30):
        async with running_server(tmp_path / "data") as (server, url):
            async with connect(url, "big") as c:
                at_cap = msgpack.packb({"type": "list_tables", "pad": "x" * 10})
                at_cap = msgpack.packb({"type": "create_table", "game": "run-wild", "seats": 2,
                                        "name": "x" * (65536 - len(at_cap) - 40)})
                assert len(at_cap) <= 65536
                await c.send_raw(at_cap)
                e = await c.receive_until(lambda x: isinstance(x, m.Error))
                assert e.code == "bad_field" and e.path == "$.name"          # read, then refused by field
                # one byte over the protocol's cap: the WebSocket layer refuses it (1009), and
                # the close reason says what the cap is
                await c.send_raw(b"\x00" * 65537)
                try:
                    with trio.fail_after(5):
                        while True:
                            await c.receive()
                except ConnectionClosed as closed:
                    assert closed.code == 1009
                    assert "65537" in closed.reason and "65536" in closed.reason


async def test_table_cap_answers_clearly_and_counts_open_tables_only(tmp_path):
    with trio.fail_after(60):
        async with running_server(server_config(tmp_path / "data", max_tables=2)) as (server, url):
            async with connect(url, "host") as h:
                first = await create(h, "go-wild", 2, turn_timer=0.002)
                await create(h, "run-wild", 2)
                await h.send(m.CreateTable("run-wild", 2, {}))
                e = await h.receive_until(lambda x: isinstance(x, (m.Error, m.TableCreated)))
                assert isinstance(e, m.Error) and e.code == "too_many_tables" and "at most 2" in e.message
                # the first table plays itself to the end; a finished table no longer counts
                async with connect(url, "a") as a, connect(url, "b") as b:
                    await join(a, first, 0)
                    await join(b, first, 1)
                    await a.receive_until(lambda x: isinstance(x, m.GameOver), timeout=30)
                await h.send(m.CreateTable("run-wild", 2, {}))
                ok = await h.receive_until(lambda x: isinstance(x, (m.Error, m.TableCreated)))
                assert isinstance(ok, m.TableCreated), ok


async def test_connection_cap_answers_clearly_and_frees_up(tmp_path):
    with trio.fail_after(30):
        async with running_server(server_config(tmp_path / "data", max_connections=2)) as (server, url):
            async with connect(url, "one"):
                async with connect(url, "two"):
                    async with open_socket(url) as ws:
                        c = Connection(ws)
                        e = await c.receive()
                        assert isinstance(e, m.Error) and e.code == "server_full" and "at most 2" in e.message
                        try:
                            await c.receive()
                            raise AssertionError("the connection over the cap stayed open")
                        except ConnectionClosed as closed:
                            assert closed.code == 1013
                await wait_until(lambda: len(server.connections) <= 1, timeout=5, what="the refused connections gone")
                async with connect(url, "three") as c:
                    await c.send(m.ListTables())
                    await c.receive_until(lambda x: isinstance(x, m.TableList))


async def test_connections_that_vanish_right_after_join_or_spectate_leave_no_ghosts(tmp_path):
    """Found: a connection that closed while its `join` or `spectate` waited in the
    table's queue was seated (or added as a spectator) after it was gone, and showed as
    connected for ever."""
    with trio.fail_after(60):
        async with running_server(tmp_path / "data") as (server, url):
            async with connect(url, "host") as h:
                tables = [await create(h, "run-wild", 4) for _ in range(6)]
                for tid in tables:
                    for i in range(4):
                        async with connect(url, f"g{i}") as g:
                            await g.send(m.Join(tid, None))
                    for i in range(4):
                        async with connect(url, f"s{i}") as g:
                            await g.send(m.Spectate(tid))
                await wait_until(lambda: len(server.connections) <= 1, timeout=5, what="the guests' connections gone")
                # every request they sent is in its table's queue now (a connection ends
                # after its reader submitted what it read): host's spectate behind them is
                # answered once each table has dealt with theirs
                for tid in tables:
                    await h.send(m.Spectate(tid))
                    assert isinstance(await h.receive_until(lambda x: isinstance(x, (m.Spectating, m.Error))),
                                      m.Spectating)
                    await h.send(m.Leave())
                    await h.receive_until(lambda x: isinstance(x, m.Left))
                infos = {t["table"]: t for t in await _list(h)}
                for tid in tables:
                    assert infos[tid]["connected"] == [False] * 4, infos[tid]
                    assert infos[tid]["spectators"] == 0, infos[tid]
                    assert not any(s.conn is not None for s in server.tables[tid].seats)
