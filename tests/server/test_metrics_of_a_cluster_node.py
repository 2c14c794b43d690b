"""A cluster node's metrics count what an operator of a cluster watches: the redirects
it sends (a join of another node's table), the tables it adopts (that node stopped and
gave its leases up) and its lease renewals. Two nodes in this process on one store."""

from __future__ import annotations

import trio

from wildtable.headless.net import connect
from wildtable.protocol import messages as m

from opskit import of, scrape
from serverkit import running_server, server_config


async def test_redirects_adoptions_and_renewals_are_counted(tmp_path, pg_dsn):
    with trio.fail_after(60):
        async with running_server(server_config(tmp_path / "n1", store=pg_dsn, node_id="n1", metrics_port=0)) as (n1, url1):
            async with trio.open_nursery() as nursery:
                stopped = trio.Event()

                async def second(task_status=trio.TASK_STATUS_IGNORED):
                    async with running_server(server_config(tmp_path / "n2", store=pg_dsn, node_id="n2")) as (n2, url2):
                        task_status.started((n2, url2))
                        await stopped.wait()
                n2, url2 = await nursery.start(second)
                while True:         # n1 learns of n2 at its next heartbeat (1 s)
                    async with connect(url1) as c:
                        if url2 in (await c.hello("ann")).nodes:
                            break
                    await trio.sleep(0.2)
                async with connect(url2, "ann") as c:
                    await c.send(m.CreateTable("go-wild", 2, {}, "", True))
                    table = (await c.receive_until(lambda x: isinstance(x, m.TableCreated))).table
                async with connect(url1, "bob") as c:
                    await c.send(m.Join(table, 1))
                    r = await c.receive_until(lambda x: isinstance(x, (m.Redirect, m.Joined, m.Error)))
                    assert isinstance(r, m.Redirect) and r.url == url2, r
                seen = await scrape(n1.ops_port)
                assert of(seen, "wildtable_redirects_total") == 1
                assert of(seen, "wildtable_adoptions_total") == 0
                stopped.set()           # n2 stops, giving its leases up
            async with connect(url1, "bob") as c:
                await c.send(m.Join(table, 1))
                r = await c.receive_until(lambda x: isinstance(x, (m.Redirect, m.Joined, m.Error)), timeout=15)
                assert isinstance(r, m.Joined), r
            while of(seen := await scrape(n1.ops_port), "wildtable_lease_renewals_total") < 1:
                await trio.sleep(0.2)
    assert of(seen, "wildtable_adoptions_total") == 1
    assert of(seen, "wildtable_redirects_total") == 1
    assert of(seen, "wildtable_tables", status="waiting") == 1
    assert of(seen, "wildtable_lease_renewal_failures_total") == 0
