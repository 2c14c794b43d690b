"""A node stopped cleanly (SIGTERM) hands its tables over: it gives up their leases, and
another node adopts them at its next look (no lease to wait out), replaying them from the
store. Their timers go on there (Run Wild's ready and idle timers, Go Wild!'s turn
timer, playing for seats nobody is connected to) until the games end, and `wildtable
export` of every table writes a .wlog that `wildtable replay --verify` passes."""

from __future__ import annotations

import signal
import subprocess
import sys

import trio

from wildtable.protocol.logfmt import ActionAccepted, read_log
from wildtable.protocol.replay import replay

from clusterkit import cluster, owners, query, roamers

GAMES = [("run-wild", {"rounds": 2, "idle_timeout": 1, "ready_timeout": 0.3}),
         ("go-wild", {"target": 10, "turn_timer": 0.15})]


async def records(dsn: str, table: str) -> int:
    return (await query(dsn, "SELECT count(*) FROM wt_records WHERE table_id = %s", (table,)))[0][0]


async def test_a_stopped_nodes_tables_play_on_by_their_timers_elsewhere(tmp_path, pg_dsn):
    with trio.fail_after(60):
        async with cluster(tmp_path, pg_dsn, 2) as (n1, n2):
            tables = []
            async with roamers([n1.url], ["ann", "bob"], first=[n1.url]) as (ann, bob):
                for game, settings in GAMES:
                    tables.append(await ann.create(game, 2, here=True, **settings))
                    await ann.join(tables[-1], 0)
                    await bob.join(tables[-1], 1)
                    await ann.open(n1.url)          # a connection sits at one table at a time
                    await bob.open(n1.url)
            # nobody is connected any more: the timers play for everyone, on n1 first
            with trio.fail_after(10):
                while min([await records(pg_dsn, t) for t in tables]) < 6:
                    await trio.sleep(0.1)
            n1.proc.send_signal(signal.SIGTERM)
            assert await n1.proc.wait() == 0
            handed = {t: await records(pg_dsn, t) for t in tables}
            assert "gave up the leases of 2 table(s)" in n1.log, n1.log[-1500:]
            with trio.fail_after(30):
                while not all(done for (done,) in await query(
                        pg_dsn, "SELECT finished FROM wt_tables WHERE table_id = ANY(%s)", (tables,))):
                    await trio.sleep(0.2)
            now = await owners(pg_dsn)
            assert all(now[t][0] == "n2" and now[t][1] == 2 for t in tables), now
            for t in tables:
                assert f"table {t} adopted" in n2.log
                out = tmp_path / f"{t}.wlog"
                done = subprocess.run([sys.executable, "-m", "wildtable", "export", "--store", pg_dsn, t, "-o",
                                       str(out)], capture_output=True, text=True, timeout=30)
                assert done.returncode == 0, done.stderr
                check = subprocess.run([sys.executable, "-m", "wildtable", "replay", "--verify", str(out)],
                                       capture_output=True, text=True, timeout=30)
                assert check.returncode == 0, check.stdout + check.stderr
                contents = read_log(out.read_bytes())
                assert contents.torn is None
                assert replay(contents).game.outcome(replay(contents).state).over
                # the timers went on at n2: moves of theirs after the hand-over
                after = contents.records[handed[t] - 1:]
                assert any(type(r) is ActionAccepted and r.by == "timer" for r in after), t
