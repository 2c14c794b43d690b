"""Table ids are drawn by each node on its own ("t" + 8 random hex digits), so two nodes of
a cluster may draw the same one. The second node's create_table must not fail with
storage_error on the store's unique key: it draws another id and the table is made."""

from __future__ import annotations

import psycopg
import trio

from wildtable.headless.net import connect
from wildtable.protocol import messages as m

from serverkit import running_server, server_config


async def create_here(url: str, name: str):
    async with connect(url, name) as conn:
        await conn.send(m.CreateTable("go-wild", 2, {}, "", True))
        return await conn.receive_until(lambda x: isinstance(x, (m.TableCreated, m.Error, m.Redirect)))


async def test_a_node_that_draws_an_id_another_node_made_draws_again(tmp_path, pg_dsn):
    # both nodes draw the same ids in the same order: the second to create meets "tsame" taken
    with trio.fail_after(30):
        async with running_server(server_config(tmp_path / "a", store=pg_dsn, node_id="a"),
                                  table_ids=iter(["tsame", "tnext"]).__next__) as (_, url_a):
            first = await create_here(url_a, "ann")
            assert isinstance(first, m.TableCreated) and first.table == "tsame", first
            async with running_server(server_config(tmp_path / "b", store=pg_dsn, node_id="b"),
                                      table_ids=iter(["tsame", "tnext"]).__next__) as (b, url_b):
                second = await create_here(url_b, "bob")
                assert isinstance(second, m.TableCreated), second
                assert second.table == "tnext" and "tnext" in b.tables and "tsame" not in b.tables
    with psycopg.connect(pg_dsn) as db:      # each with its own header record
        rows = db.execute("SELECT table_id, count(*) FROM wt_records GROUP BY table_id ORDER BY table_id").fetchall()
    assert rows == [("tnext", 1), ("tsame", 1)]
