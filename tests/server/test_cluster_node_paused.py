"""A node paused (SIGSTOP) past its lease, then woken (SIGCONT): meanwhile another node
adopted its table; what the paused node was asked to do late is never acknowledged and
never written (the store's fence: server/store_pg.py), it steps down, and its player
ends up at the new owner (it connects again, is redirected, rejoins) and plays on to the
end of the game."""

from __future__ import annotations

import signal

import trio

from wildtable.protocol import messages as m
from wildtable.protocol.logfmt import ActionAccepted
from wildtable.protocol.replay import replay

from adversarial_kit import choose
from clusterkit import cluster, owners, roamers, stored_log

LATE = 5000         # the id of the intent sent to the paused node


async def test_a_paused_node_steps_down_and_its_player_ends_at_the_new_owner(tmp_path, pg_dsn):
    with trio.fail_after(90):
        async with cluster(tmp_path, pg_dsn, 2) as (n1, n2):
            async with roamers([n1.url, n2.url], ["ann"]) as (ann,):
                table = await ann.create("run-wild", 2, here=True, rounds=1, hand_size=8)
                await ann.open(n2.url)
                await ann.join(table, 0)
                assert ann.url == n1.url, "redirected to the table's node"
                assert isinstance(await ann.ask(m.SeatBots(table, 1, "easy", 50), m.BotsSeated), m.BotsSeated)
                got: list = []
                late: set[int] = set()
                async with trio.open_nursery() as n:
                    async def play():
                        await ann.play(choose, pace=0.03, timeout=80, log=got)
                    n.start_soon(play)
                    while ann.mirror.seq < 7:        # dealt, both ready, Go!, a few moves in
                        await trio.sleep(0.05)
                    ann.hold = trio.Event()     # ann sends nothing more of her own until woken
                    with trio.fail_after(10):   # and what she sent is answered (accepted, if so, before the pause)
                        while ann.inflight is not None:
                            await trio.sleep(0.01)
                    n1.signal(signal.SIGSTOP)
                    paused_at = len(got)
                    await ann.conn.send(m.Intent(LATE, choose(ann.mirror.view) or {"kind": "draw"}))
                    late.add(LATE)
                    # n2 takes the table over once n1's lease has passed
                    with trio.fail_after(15):
                        while (await owners(pg_dsn))[table][0] != "n2":
                            await trio.sleep(0.1)
                    n1.signal(signal.SIGCONT)
                    ann.hold.set()
            # n1 woke up, stepped down and closed ann's connection; ann came back through
            # n1, was redirected to n2, took her seat back there and played to the end
            assert n1.proc.returncode is None, "the paused node goes on serving"
            assert "lost its lease" in n1.log or "lease lost" in n1.log, n1.log[-2000:]
            assert ann.trail[-1] == n2.url
            assert any(r.ref == "rejoin" and r.url == n2.url for r in ann.redirects), ann.redirects
            late_answers = [x for x in got[paused_at:] if isinstance(x, (m.Accepted, m.Rejected))
                            and x.intent in late]
            assert not [x for x in late_answers if isinstance(x, m.Accepted)], late_answers
            contents = await stored_log(pg_dsn, table)
            assert not [r for r in contents.records if type(r) is ActionAccepted and r.seat == 0
                        and r.intent == LATE], "the paused node's late write is in the store"
            result = replay(contents)
            assert result.game.outcome(result.state).over
            over = [x for x in got if isinstance(x, m.GameOver)]
            assert over and over[-1].seq == result.seq
            owner, epoch = (await owners(pg_dsn))[table]
            assert owner == "n2" and epoch >= 2
