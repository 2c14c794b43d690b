"""One lobby across the nodes of a cluster: list_tables on any node lists every table of
every node, with its owner's facts (who sits, who is connected, its status), in the same
order, within a couple of seconds of a change (each owner writes its entries to the store
at most every second; each node reads the others' at most every second)."""

from __future__ import annotations

import trio

from wildtable.headless.net import connect
from wildtable.protocol import messages as m

from clusterkit import cluster, roamers


async def lobby(url: str) -> list[dict]:
    async with connect(url, "looker") as c:
        await c.send(m.ListTables())
        return list((await c.receive_until(lambda x: isinstance(x, m.TableList))).tables)


async def test_every_node_lists_every_table_of_the_cluster(tmp_path, pg_dsn):
    with trio.fail_after(60):
        async with cluster(tmp_path, pg_dsn, 3) as nodes:
            urls = [n.url for n in nodes]
            async with roamers(urls, ["ann", "bob", "cat"]) as (ann, bob, cat):
                tables = [await p.create(game, 2, here=True) for p, game in
                          ((ann, "run-wild"), (bob, "go-wild"), (cat, "wild-shots"))]
                # bob, on n2, sits at ann's table on n1; cat, on n3, at bob's on n2
                await bob.join(tables[0], 1)
                await cat.join(tables[1], 0)
                assert bob.url == urls[0] and cat.url == urls[1]
                want = {tables[0]: [None, "bob"], tables[1]: ["cat", None], tables[2]: [None, None]}
                seen = None
                with trio.move_on_after(15):
                    while True:
                        seen = [await lobby(u) for u in urls]
                        if all(s == seen[0] for s in seen) and \
                                {t["table"]: t["players"] for t in seen[0]} == want:
                            break
                        await trio.sleep(0.2)
                by_node = {n.name: [(t["table"], t["players"], t["connected"]) for t in s]
                           for n, s in zip(nodes, seen)}
                assert all(s == seen[0] for s in seen), f"the nodes list different lobbies: {by_node}"
                assert {t["table"]: t["players"] for t in seen[0]} == want, by_node
                # in creation order, with each owner's facts
                assert [t["table"] for t in seen[0]] == tables
                assert [t["connected"] for t in seen[0]] == [[False, True], [True, False], [False, False]]
                assert [t["game"] for t in seen[0]] == ["run-wild", "go-wild", "wild-shots"]
