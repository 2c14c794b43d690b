"""What a node of a cluster answers for another node (docs/PROTOCOL.md, "Clusters"):
welcome names every live node; create_table goes to the least loaded node (a redirect,
unless sent with here: true, which the node honours); join, rejoin, spectate and
seat_bots of a table another live node owns get a redirect to it (ref: the message,
table: its id); a table no node has is no_such_table, not a redirect."""

from __future__ import annotations

import trio

from wildtable.headless.net import connect
from wildtable.protocol import messages as m

from clusterkit import cluster, owners


async def test_a_node_sends_clients_to_the_node_that_serves_their_table(tmp_path, pg_dsn):
    with trio.fail_after(60):
        async with cluster(tmp_path, pg_dsn, 2) as (n1, n2):
            # every node learns of the others at its next heartbeat (1 s)
            with trio.fail_after(5):
                while True:
                    async with connect(n1.url) as c:
                        if sorted((await c.hello("ann")).nodes) == sorted([n1.url, n2.url]):
                            break
                    await trio.sleep(0.2)
            async with connect(n1.url, "ann") as c:
                # n1 holds two tables, n2 none: with here, n1 makes them all the same
                mine = []
                for _ in range(2):
                    await c.send(m.CreateTable("go-wild", 2, {}, "", True))
                    mine.append((await c.receive_until(lambda x: isinstance(x, m.TableCreated))).table)
                # once n1's load is known (a heartbeat a second), a new table goes to n2
                with trio.fail_after(10):
                    while True:
                        await c.send(m.CreateTable("go-wild", 2, {}))
                        r = await c.receive_until(lambda x: isinstance(x, (m.Redirect, m.TableCreated, m.Error)))
                        if isinstance(r, m.Redirect):
                            break
                        mine.append(r.table)
                        await trio.sleep(0.3)
                assert r.url == n2.url and r.ref == "create_table" and r.table is None, r
            async with connect(n2.url, "ann") as d:
                await d.send(m.CreateTable("go-wild", 2, {}, "", True))
                theirs = (await d.receive_until(lambda x: isinstance(x, m.TableCreated))).table
            stored = await owners(pg_dsn)
            assert {stored[t][0] for t in mine} == {"n1"} and stored[theirs][0] == "n2"
            async with connect(n1.url, "bob") as c:
                for msg in (m.Join(theirs, 0), m.Rejoin(theirs, 0, "x" * 32), m.Spectate(theirs),
                            m.SeatBots(theirs, 1, None, None)):
                    await c.send(msg)
                    r = await c.receive_until(lambda x: isinstance(x, (m.Redirect, m.Error, m.Joined, m.Spectating)))
                    assert r == m.Redirect(n2.url, msg.TAG, theirs, r.reason), (msg, r)
                    assert r.reason
                # a table of its own is served here; one nobody has is no table at all
                await c.send(m.Join(mine[0], 0))
                assert isinstance(await c.receive_until(lambda x: isinstance(x, (m.Joined, m.Error, m.Redirect))),
                                  m.Joined)
                await c.send(m.Spectate("tnothing1"))
                r = await c.receive_until(lambda x: isinstance(x, (m.Error, m.Redirect, m.Spectating)))
                assert isinstance(r, m.Error) and r.code == "no_such_table", r
