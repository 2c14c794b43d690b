"""`wildtable serve --store` SIGKILLed while two players send intents as fast as they can,
then started again: every action a client was told was accepted is in the store, the
restarted node takes its table back at once (its own lease, a new epoch) by replaying the
store's records, and the players take their seats back with their tokens."""

from __future__ import annotations

import signal

import psycopg
import trio

from wildtable.headless.net import connect
from wildtable.protocol import messages as m
from wildtable.protocol.logfmt import ActionAccepted, read_log

from adversarial_kit import start_serve, two_play_until


async def test_sigkill_loses_no_acknowledged_seq_and_the_restart_takes_the_table_back(tmp_path, pg_dsn):
    data = tmp_path / "data"
    args = ("--store", pg_dsn, "--node-id", "node-1")
    seen: list[list] = [[], []]
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            sp = await start_serve(nursery, data, *args)
            tid, joined = await two_play_until(sp, seen, signal.SIGKILL, timeout=40)
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
