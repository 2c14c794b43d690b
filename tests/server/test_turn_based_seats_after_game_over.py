"""Seats of a turn-based game once it is over, and intents from a spectator, over real
sockets on 127.0.0.1."""

from __future__ import annotations

import subprocess
import sys

import trio

from wildtable.headless.net import connect
from wildtable.protocol import messages as m
from wildtable.protocol.logfmt import SeatClaimed, read_log

from serverkit import answer, check_views, replay_by_seq, reply_to, running_server, seated

# Go Wild! to three points, played out by the turn timer at once
FAST = {"turn_timer": 0.01, "target": 3}


async def test_leave_at_a_finished_table_keeps_the_seat_and_its_token(tmp_path):
    """Found: at a finished table (before any restart) `leave` released the seat: the token
    stopped working although nobody could ever join the seat (`join` gets game_over), so
    the player could no longer rejoin to see its final hand, a seat record was written to
    the finished game's log, and the same table after a restart kept the seat. The
    bad_token answer then told the player to "join a free seat", which is refused too."""
    data = tmp_path / "data"
    with trio.fail_after(20):
        async with running_server(data) as (server, url):
            async with seated(url, "go-wild", 2, FAST) as (table, (ann, bob), joined):
                for c in (ann, bob):
                    await c.receive_until(lambda x: isinstance(x, m.GameOver), timeout=10)
                path = data / f"{table}.wlog"
                records = len(read_log(path.read_bytes()).records)
                await ann.send(m.Leave())
                assert isinstance(await answer(ann), m.Left)
                # the token still holds the seat: the final snapshot, then game_over
                await ann.send(m.Rejoin(table, 0, joined[0].token))
                back = await answer(ann)
                assert isinstance(back, m.Joined) and back.seat == 0, back
                over = await ann.receive_until(lambda x: isinstance(x, m.GameOver))
                assert over.table == table
                assert len(read_log(path.read_bytes()).records) == records      # nothing logged
                # a wrong token at a finished table points to what works there
                async with connect(url, "cat") as cat:
                    await cat.send(m.Rejoin(table, 1, joined[0].token))
                    r = await answer(cat)
                    assert r.code == "bad_token" and "spectate" in r.message and "join" not in r.message, r
                    await cat.send(m.Join(table, None))
                    assert (await answer(cat)).code == "game_over"
                log = replay_by_seq(read_log(path.read_bytes()))
                check_views([back], log, 0)
    assert not [r for r in read_log(path.read_bytes()).records if type(r) is SeatClaimed and not r.token_hash]
    proc = subprocess.run([sys.executable, "-m", "wildtable", "replay", str(path), "--verify"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr


async def test_an_intent_from_a_spectator_says_spectators_cannot_act(tmp_path):
    """Found: a spectator's intent was refused with "join or rejoin a table first", advice
    that only earns `already_at_table` while it watches: it must leave first."""
    with trio.fail_after(20):
        async with running_server(tmp_path / "data") as (server, url):
            async with seated(url, "wild-shots", 2, {"turn_timer": 0, "first_player": 0}) as (table, conns, joined):
                async with connect(url, "watcher") as w:
                    await w.send(m.Spectate(table))
                    assert isinstance(await answer(w), m.Spectating)
                    for i, action in enumerate([{"kind": "play", "card": 0}, {"kind": "nope"}, {}]):
                        await w.send(m.Intent(i, action))
                    for i in range(3):
                        r = await reply_to(w, i)
                        assert isinstance(r, m.Rejected) and r.code == "not_seated", r
                        assert "spectator" in r.reason and "leave" in r.reason, r.reason
                    # the advice works: leave, then join ... (the table is full: table_full)
                    await w.send(m.Leave())
                    assert isinstance(await answer(w), m.Left)
                    await w.send(m.Join(table, None))
                    assert (await answer(w)).code == "table_full"
                # a connection at no table still gets the plain advice
                async with connect(url, "nobody") as n:
                    await n.send(m.Intent(7, {"kind": "play", "card": 0}))
                    r = await reply_to(n, 7)
                    assert r.code == "not_seated" and "join or rejoin" in r.reason, r
                # the players were not disturbed: seat 0, to lead, still plays
                up = await conns[0].receive_until(lambda x: isinstance(x, m.Update) and x.view["turn"] == 0)
                await conns[0].send(m.Intent(99, {"kind": "play", "card": min(up.view["playable"])}))
                assert isinstance(await reply_to(conns[0], 99), m.Accepted)
