"""The races of a single server hold across the nodes of a cluster (racekit, as in
test_clients_racing_for_the_same_melds.py): two tables, one on each node, four clients at each entering
through the other node (redirected to the table's); they hammer the same melds at once.
Every intent is answered exactly once and in order, acceptances are exactly the store's
log at the same seqs, cards are conserved, and every view is the engine's view of the
stored log at its seq."""

from __future__ import annotations

import trio

from clusterkit import cluster, roamers, stored_log
from racekit import HAMMER_DEADLINE, SETTINGS, check_hammered, hammer


async def test_eight_clients_hammering_tables_on_two_nodes(tmp_path, pg_dsn):
    with trio.fail_after(HAMMER_DEADLINE):
        async with cluster(tmp_path, pg_dsn, 2) as (n1, n2):
            urls = [n1.url, n2.url]
            results = []

            async def one_table(home: int, seed: int):
                other = urls[1 - home]
                async with roamers(urls, [f"s{seed}p{i}" for i in range(4)], first=[urls[home]]) as people:
                    table = await people[0].create("run-wild", 4, here=True, **SETTINGS)
                    joined = []
                    for i, p in enumerate(people):
                        await p.open(other)
                        joined.append(await p.join(table, i))
                        assert p.url == urls[home] and p.redirects, "redirected to the table's node"
                    results.append((table, await hammer([p.conn for p in people], joined, seed)))

            async with trio.open_nursery() as n:
                n.start_soon(one_table, 0, 1)
                n.start_soon(one_table, 1, 2)
            total_accepted = total_rejected = 0
            for table, hammers in results:
                accepted, rejected = check_hammered(await stored_log(pg_dsn, table), hammers, views=True)
                total_accepted += accepted
                total_rejected += rejected
    # they really fought: many actions went through, many lost a race
    assert total_accepted > 200, total_accepted
    assert total_rejected > 200, total_rejected
