"""`wildtable serve --store` SIGKILLed while two players send intents as fast as they can,
then started again: every action a client was told was accepted is in the store, the
restarted node takes its table back at once (its own lease, a new epoch) by replaying the
store's records, and the players take their seats back with their tokens."""

from __future__ import annotations

import signal

import psycopg
import trio

from wildtable.client.net import connect
from wildtable.protocol import messages as m
from wildtable.protocol.logfmt import ActionAccepted, read_log

from adversarial_kit import start_serve
from scripted import play_to_end

try:
    from wildtable.client.wire import ConnectionClosed       # the client's own WebSocket layer
except ImportError:
    from trio_websocket import ConnectionClosed

GONE = (ConnectionClosed, trio.BrokenResourceError, trio.ClosedResourceError, OSError)


async def test_sigkill_loses_no_acknowledged_seq_and_the_restart_takes_the_table_back(tmp_path, pg_dsn):
    data = tmp_path / "data"
    args = ("--store", pg_dsn, "--node-id", "node-1")
    seen: list[list] = [[], []]
    joined: list = [None, None]
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            sp = await start_serve(nursery, data, *args)
            async with connect(sp.url, "p0") as a, connect(sp.url, "p1") as b:
                await a.send(m.CreateTable("run-wild", 2, {"rounds": 20}))
                tid = (await a.receive_until(lambda x: isinstance(x, m.TableCreated))).table

                async def player(i, c):
                    await c.send(m.Join(tid, i))
                    joined[i] = await c.receive_until(lambda x: isinstance(x, m.Joined))
                    try:
                        await play_to_end(c, joined[i], log=seen[i], timeout=40)
                    except GONE:
                        pass

                async with trio.open_nursery() as n:
                    n.start_soon(player, 0, a)
                    n.start_soon(player, 1, b)
                    while sum(isinstance(x, m.Accepted) for x in seen[0] + seen[1]) < 40:
                        await trio.sleep(0.005)
                    sp.proc.send_signal(signal.SIGKILL)
            assert await sp.proc.wait() == -signal.SIGKILL
            acked = {x.seq for s in seen for x in s if isinstance(x, m.Accepted)}
            with psycopg.connect(pg_dsn) as db:
                rows = db.execute("SELECT data FROM wt_records WHERE table_id = %s ORDER BY n", (tid,)).fetchall()
                epoch = db.execute("SELECT epoch FROM wt_tables WHERE table_id = %s", (tid,)).fetchone()[0]
            logged = read_log(b"".join(r[0] for r in rows))
            assert logged.torn is None
            assert acked and acked <= {r.seq for r in logged.records if type(r) is ActionAccepted}

            again = await start_serve(nursery, data, *args)
            async with connect(again.url, "p0") as a:
                await a.send(m.Rejoin(tid, 0, joined[0].token))
                back = await a.receive_until(lambda x: isinstance(x, (m.Joined, m.Error)), timeout=15)
                assert isinstance(back, m.Joined), back
                assert back.seq >= max(acked)
            with psycopg.connect(pg_dsn) as db:
                owner, epoch_now = db.execute("SELECT owner, epoch FROM wt_tables WHERE table_id = %s",
                                              (tid,)).fetchone()
            assert (owner, epoch_now) == ("node-1", epoch + 1)
            again.proc.send_signal(signal.SIGTERM)
            assert await again.proc.wait() == 0, again.log[-2000:]
            nursery.cancel_scope.cancel()
