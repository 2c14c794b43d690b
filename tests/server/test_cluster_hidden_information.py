"""What a seat may know holds across the nodes of a cluster: players and a spectator
enter through one node and are redirected to the table's node; that node is killed
mid-round and another adopts the table from the store. Every view any of them was sent,
before and after the move, is the engine's view of the stored log at its seq, names no
card hidden from that seat, and the spectator's holds nothing private
(adversarial_kit.check_stream, as for a single server)."""

from __future__ import annotations

import signal

import trio

from wildtable.protocol import messages as m
from wildtable.protocol.replay import replay

from adversarial_kit import check_stream, choose
from clusterkit import cluster, roamers, stored_log
from serverkit import replay_by_seq


async def test_views_carry_only_what_each_seat_may_see_through_a_move(tmp_path, pg_dsn):
    game, seats = "run-wild", 3
    with trio.fail_after(90):
        async with cluster(tmp_path, pg_dsn, 2) as (n1, n2):
            names = [f"p{i}" for i in range(seats)] + ["watcher"]
            async with roamers([n1.url, n2.url], names, first=[n2.url]) as people:
                host = people[0]
                await host.open(n1.url)
                table = await host.create(game, seats, here=True, rounds=1)
                await host.open(n2.url)
                logs = [[] for _ in people]
                for i, p in enumerate(people[:seats]):
                    logs[i].append(await p.join(table, i))
                    assert p.url == n1.url
                async with trio.open_nursery() as n:
                    n.start_soon(people[-1].watch, table, logs[-1])
                    for i, p in enumerate(people[:seats]):
                        n.start_soon(lambda p=p, i=i: p.play(choose, pace=0.02, timeout=80, log=logs[i]))
                    while not all(p.mirror.seq >= 15 or p.mirror.over for p in people):
                        await trio.sleep(0.05)
                    # the players send nothing more and what they sent is answered: the table
                    # stands still, so whether its game ended at n1 is the store's to say (a
                    # game may end early, and one player's mirror may not have had the
                    # game_over yet that another's had, and those never come back)
                    for p in people[:seats]:
                        p.hold = trio.Event()
                    while any(p.inflight is not None for p in people[:seats]):
                        await trio.sleep(0.01)
                    at_n1 = replay(await stored_log(pg_dsn, table))
                    moved = not at_n1.game.outcome(at_n1.state).over
                    n1.signal(signal.SIGKILL)
                    for p in people[:seats]:
                        p.hold.set()
                if moved:
                    assert all(p.trail[-1] == n2.url for p in people), [p.trail for p in people]
                    assert all(any(isinstance(x, (m.Joined, m.Spectating)) for x in lg[1:]) for lg in logs), \
                        "everyone came back after the move"
            log = replay_by_seq(await stored_log(pg_dsn, table))
    assert log.game.outcome(log.final).over
    total = sum(check_stream(game, log, seat, logs[seat]) for seat in range(seats))
    total += check_stream(game, log, None, logs[-1])
    assert total > 200, total
