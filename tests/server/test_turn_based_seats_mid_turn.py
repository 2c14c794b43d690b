"""The turn-based games (Go Wild!, Wild Shots, Go Fish Wildcard) over real sockets on
127.0.0.1: the player to move disconnects (timer off: the table waits) or leaves (timer
on: the timer plays for the released seat, and a newcomer takes it); intents pipelined
before any answer; the server restarted mid-turn, tokens still holding their seats. What
every seat and a spectator got is held to the log's replay, and the log passes
`wildtable replay --verify`. (Probes that held up, kept as regressions.)"""

from __future__ import annotations

import subprocess
import sys

import pytest
import trio

from wildtable.headless.net import Mirror, connect
from wildtable.protocol import messages as m
from wildtable.protocol.logfmt import read_log

from adversarial_kit import choose
from serverkit import answer, check_views, join, replay_by_seq, reply_to, running_server, seated

GAMES = ("go-wild", "wild-shots", "go-fish-wildcard")


async def _drain(conn, mirror: Mirror, keep: list, seconds: float) -> None:
    with trio.move_on_after(seconds):
        while True:
            msg = await conn.receive()
            keep.append(msg)
            mirror.absorb(msg)


async def _catch_up(conns, mirrors, keeps, seq: int) -> None:
    for c, mi, keep in zip(conns, mirrors, keeps):
        while mi.seq < seq:
            msg = await c.receive()
            keep.append(msg)
            mi.absorb(msg)


async def _play(conns, mirrors, keeps, moves: int, iid: int = 1000) -> int:
    """Up to ``moves`` accepted moves, each chosen from the mover's own view."""
    for _ in range(moves):
        if mirrors[0].over is not None or mirrors[0].view.get("phase") == "over":
            break
        for _ in range(20):         # the chance records after an action may still be on their way
            movers = [(i, a) for i, mi in enumerate(mirrors) if (a := choose(mi.view)) is not None]
            if movers:
                break
            for c, mi, keep in zip(conns, mirrors, keeps):
                await _drain(c, mi, keep, 0.02)
        else:
            raise AssertionError(f"nobody can move: {mirrors[0].view}")
        if mirrors[0].view.get("phase") == "over":
            break
        i, action = movers[0]
        iid += 1
        await conns[i].send(m.Intent(iid, action))
        r = await reply_to(conns[i], iid, keeps[i])
        keeps[i].append(r)
        assert isinstance(r, m.Accepted), (r, action)
        await _catch_up(conns, mirrors, keeps, r.seq)
    return iid


def _verify(path) -> None:
    proc = subprocess.run([sys.executable, "-m", "wildtable", "replay", str(path), "--verify"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.parametrize("game", GAMES)
async def test_disconnect_on_turn_pipelined_intents_and_a_restart_mid_turn(tmp_path, game):
    data = tmp_path / "data"
    with trio.fail_after(40):
        async with running_server(data) as (server, url):
            async with seated(url, game, 2, {"turn_timer": 0}) as (table, conns, joined), \
                    connect(url, "watcher") as w:
                await w.send(m.Spectate(table))
                seen = [await answer(w)]
                mirrors, keeps = [Mirror() for _ in conns], [[j] for j in joined]
                for c, mi, keep, j in zip(conns, mirrors, keeps, joined):
                    mi.absorb(j)
                    await _drain(c, mi, keep, 0.1)
                await _play(conns, mirrors, keeps, 3)
                # the seat to move pipelines a burst: one answer each, in order, and an
                # accepted one just before the update of its seq
                for cc, mi, keep in zip(conns, mirrors, keeps):
                    await _drain(cc, mi, keep, 0.05)
                mover = next(i for i, mi in enumerate(mirrors) if choose(mi.view) is not None)
                c, view = conns[mover], mirrors[mover].view
                burst = [choose(view), {"kind": "nope"}, {}, {"kind": "play", "cards": "x"},
                         {"kind": "play", "card": 99}, {"kind": "end_turn", "extra": 1}, choose(view)]
                for k, action in enumerate(burst):
                    await c.send(m.Intent(k, action))
                got: list = []
                await _drain(c, mirrors[mover], got, 0.3)
                keeps[mover] += got
                answers = [x for x in got if isinstance(x, (m.Accepted, m.Rejected))]
                assert [x.intent for x in answers] == list(range(len(burst)))
                assert isinstance(answers[0], m.Accepted)
                for k, x in enumerate(got):
                    if isinstance(x, m.Accepted):
                        assert isinstance(got[k + 1], m.Update) and got[k + 1].seq == x.seq
                for x in answers[1:-1]:
                    assert isinstance(x, m.Rejected) and x.reason, x
                for i, (cc, mi, keep) in enumerate(zip(conns, mirrors, keeps)):
                    if i != mover:
                        await _drain(cc, mi, keep, 0.1)
                # the seat to move disconnects: with no timer the table waits for it
                for cc, mi, keep in zip(conns, mirrors, keeps):
                    await _drain(cc, mi, keep, 0.05)
                mover = next(i for i, mi in enumerate(mirrors) if choose(mi.view) is not None)
                seq = mirrors[0].seq
                await conns[mover].close()
                other = 1 - mover
                await _drain(conns[other], mirrors[other], keeps[other], 0.3)
                assert mirrors[other].seq == seq
                tokens = [j.token for j in joined]
                await _drain(w, Mirror(), seen, 0.1)
        path = data / f"{table}.wlog"
        log = replay_by_seq(read_log(path.read_bytes()))
        check_views(seen, log, None)
        for i in (0, 1):
            check_views(keeps[i], log, i)
        # restart: the tokens still hold the seats, mid-turn, and play goes on to the end
        async with running_server(data) as (server, url):
            async with connect(url, "p0") as c0, connect(url, "p1") as c1, connect(url, "watcher") as w:
                conns, mirrors, keeps = [c0, c1], [Mirror(), Mirror()], [[], []]
                for i, c in enumerate(conns):
                    await c.send(m.Rejoin(table, i, tokens[i]))
                    back = await answer(c)
                    assert isinstance(back, m.Joined) and back.seq == seq, back
                    keeps[i].append(back)
                    mirrors[i].absorb(back)
                await w.send(m.Spectate(table))
                seen = [await answer(w)]
                await _play(conns, mirrors, keeps, 10_000)
                for c, keep in zip(conns, keeps):
                    if not any(isinstance(x, m.GameOver) for x in keep):
                        keep.append(await c.receive_until(lambda x: isinstance(x, m.GameOver)))
                seen.append(await w.receive_until(lambda x: isinstance(x, m.GameOver), keep=seen))
    log = replay_by_seq(read_log(path.read_bytes()))
    check_views(seen, log, None)
    for i in (0, 1):
        check_views(keeps[i], log, i)
    _verify(path)


@pytest.mark.parametrize("game", GAMES)
async def test_leave_on_turn_with_the_timer_on_and_a_newcomer_takes_the_seat(tmp_path, game):
    data = tmp_path / "data"
    timer = 0.3
    with trio.fail_after(30):
        async with running_server(data) as (server, url):
            async with seated(url, game, 2, {"turn_timer": timer}) as (table, conns, joined), \
                    connect(url, "watcher") as w:
                await w.send(m.Spectate(table))
                seen = [await answer(w)]
                mirrors = [Mirror(), Mirror()]
                for c, mi, j in zip(conns, mirrors, joined):
                    mi.absorb(j)
                    await _drain(c, mi, [], 0.05)
                mover = next(i for i, mi in enumerate(mirrors) if choose(mi.view) is not None)
                seq = mirrors[mover].seq
                await conns[mover].send(m.Leave())
                assert isinstance(await answer(conns[mover]), m.Left)
                # the released seat's token no longer works; the timer plays for it
                async with connect(url, "newcomer") as n:
                    await n.send(m.Rejoin(table, mover, joined[mover].token))
                    assert (await answer(n)).code == "bad_token"
                    other = 1 - mover
                    await conns[other].receive_until(lambda x: isinstance(x, m.Update) and x.seq > seq,
                                                     timeout=timer * 10)
                    got = await join(n, table, None)
                    assert got.seat == mover and got.token != joined[mover].token
                    taken = await answer(conns[other], (m.Players,))
                    assert taken.players[mover]["name"] == "newcomer" and taken.players[mover]["connected"]
                    mine = [got]
                    await _drain(n, Mirror(), mine, timer * 2)
                await _drain(w, Mirror(), seen, 0.05)
        path = data / f"{table}.wlog"
        log = replay_by_seq(read_log(path.read_bytes()))
        check_views(seen, log, None)
        check_views(mine, log, mover)
        assert any(getattr(r, "by", None) == "timer" and r.seat == mover
                   for r in read_log(path.read_bytes()).records)
    _verify(path)
