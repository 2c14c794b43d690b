"""A game in play nobody is at, on a cluster (`serve --store`): its node gives it up after
`--abandoned-expiry` as a single server does (server/arbiter.py), the store marks it
expired so no node adopts it, and any node asked says it expired while its game was in
play, with no redirect and no replay (a game given up is no finished game)."""

from __future__ import annotations

import trio

from clusterkit import cluster
from serverkit import fetch
from test_cluster_ended_tables import answers, made_here, row_is
from wildtable.headless.net import connect
from wildtable.protocol import messages as m


async def test_a_game_given_up_on_one_node_is_expired_on_every_node(tmp_path, pg_dsn):
    with trio.fail_after(60):
        async with cluster(tmp_path, pg_dsn, 2, "--abandoned-expiry", "0.5") as (a, b):
            async with connect(a.url, "ann") as ann, connect(a.url, "bob") as bob:
                table = await made_here(ann, "go-wild", 2, turn_timer=0)
                for c, seat in ((ann, 0), (bob, 1)):
                    await c.send(m.Join(table, seat))
                    assert isinstance(await c.receive_until(lambda x: isinstance(x, (m.Joined, m.Error))), m.Joined)
                await row_is(pg_dsn, table, "NOT finished")
            # both gone: a gives it up half a second later
            await row_is(pg_dsn, table, "finished AND ended = 'expired'")
            for node in (b, a):
                for r in await answers(node.url, table):
                    assert isinstance(r, m.Error) and r.code == "no_such_table", (node.name, r)
                    assert f"table {table!r} expired" in r.message and "in play" in r.message, r
                status, _ = await trio.to_thread.run_sync(fetch, node.port, f"/replay/{table}.json")
                assert status == 404, (node.name, status)
