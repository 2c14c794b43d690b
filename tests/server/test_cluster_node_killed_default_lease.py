"""Failover at the DEFAULT lease (5 s), as an operator runs it: two `wildtable serve
--store` nodes with no --lease-seconds, two terminal players (headless/core.py, what
`wildtable play` runs) seated at a table of n1 (ann gave n1's URL, bob n2's and was
redirected to n1), n1 SIGKILLed. While n1's heartbeat still looks live to n2 (LIVE, 3 s),
n2 redirects their rejoins to n1, which does not answer; then n2 waits for n1's lease
and adopts the table. Both players sit again at n2 without typing anything, are told
meanwhile what they wait for, and never reach the `too_many_redirects` dead end.
(tests/server/test_cluster_node_killed.py tries three nodes and whole games at 1.5 s.)"""

from __future__ import annotations

import signal

import trio

from wildtable.headless.core import ClientCore, Notice
from wildtable.protocol import messages as m
from wildtable.server.cluster import ADOPT_EVERY, HEARTBEAT, LIVE
from wildtable.server.store_pg import LEASE_SECONDS

from clusterkit import both_live, cluster, owners

# n1's heartbeat goes stale (LIVE plus one heartbeat of n2's view), then its lease runs
# out (at most a whole lease after that), then n2 adopts (on demand, or its next passes);
# the machine is shared, hence the generous slack
SEATED_AGAIN_WITHIN = LIVE + HEARTBEAT + LEASE_SECONDS + 2 * ADOPT_EVERY + 10


async def test_players_of_a_killed_node_sit_again_at_the_default_lease(tmp_path, pg_dsn):
    with trio.fail_after(SEATED_AGAIN_WITHIN + 40):
        async with cluster(tmp_path, pg_dsn, 2, lease=None) as (n1, n2), trio.open_nursery() as nursery:
            await both_live(n1.url, n2.url)         # players come once the cluster is up
            notes: dict[str, list[Notice]] = {"ann": [], "bob": []}
            back_at: dict[str, float] = {}      # when each first reconnected (to n2) after the kill

            def told(name):
                def hear(n: Notice) -> None:
                    notes[name].append(n)
                    if n.text.startswith("connection back"):
                        back_at.setdefault(name, trio.current_time())
                return hear
            ann = ClientCore(n1.url, "ann", told("ann"))
            bob = ClientCore(n2.url, "bob", told("bob"))
            await nursery.start(ann.run)
            await nursery.start(bob.run)
            created = await ann.create("run-wild", 2, {"rounds": 1})
            assert isinstance(created, m.TableCreated), created
            table = created.table
            assert (await owners(pg_dsn))[table][0] == "n1"
            for p in (ann, bob):
                joined = await p.join(table)
                assert isinstance(joined, m.Joined), joined
                assert p.node_url == n1.url
            seats = {p.name: p.mirror.seat for p in (ann, bob)}
            before = {p.name: len(notes[p.name]) for p in (ann, bob)}
            back_at.clear()

            n1.signal(signal.SIGKILL)
            killed = trio.current_time()

            def seated_again(p) -> bool:
                return (p.online and p.node_url == n2.url and p.mirror.table == table
                        and any(n.text.startswith(f"back at table {table} (seat {seats[p.name]})")
                                for n in notes[p.name][before[p.name]:]))

            with trio.move_on_after(SEATED_AGAIN_WITHIN):
                while not (seated_again(ann) and seated_again(bob)):
                    await trio.sleep(0.1)
            await n1.proc.wait()
            for p in (ann, bob):
                said = [n.text for n in notes[p.name][before[p.name]:]]
                assert seated_again(p), (f"{p.name} not seated again at n2 within {SEATED_AGAIN_WITHIN:g} s of "
                                         f"the kill; told: {said}")
                assert not any("too_many_redirects" in s for s in said), said
                # told what they waited for: the node that did not answer, the table moving.
                # (n2 sends a rejoin to n1 while n1's last heartbeat is under LIVE old, as n2
                # read it at most a HEARTBEAT ago: so surely if it came within LIVE - 2 HEARTBEAT)
                if back_at[p.name] - killed < LIVE - 2 * HEARTBEAT:
                    assert any(f"{n1.url}" in s and "does not answer" in s for s in said), said
                assert p.mirror.seat == seats[p.name]
            assert (await owners(pg_dsn))[table] == ("n2", 2)
            assert f"table {table} adopted" in n2.log
            # and the operator reads on n2 that they came back (or which did not)
            with trio.move_on_after(5):
                while f"table {table}: all 2 player(s) back at their seats" not in n2.log:
                    await trio.sleep(0.1)
            assert f"table {table}: all 2 player(s) back at their seats" in n2.log, n2.log[-2000:]
            nursery.cancel_scope.cancel()
