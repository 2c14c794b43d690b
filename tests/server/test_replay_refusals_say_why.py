"""What the replay viewer answers for a table it cannot serve says why, the same way on
files and on a store (server/replays.py): a table not finished gets 403 "still being
played" whatever of its log there is yet; a finished one whose log cannot be had says that
it is over and why it cannot be replayed, never that there is no such game."""

from __future__ import annotations

import trio

from clusterkit import query
from serverkit import create, get, play_out_with_a_refusal, running_server, server_config
from wildtable.headless.net import connect


async def test_a_finished_table_whose_log_was_taken_away_says_so(tmp_path):
    data = tmp_path / "data"
    with trio.fail_after(30):
        async with running_server(data) as (server, url):
            table = await play_out_with_a_refusal(url)
            assert server.tables[table].finished
            (data / f"{table}.wlog").rename(tmp_path / "taken-away.wlog")     # by hand, outside the server
            status, body = await get(server, f"/replay/{table}.json")
            assert status == 410, body
            assert f"table {table!r} is over, but its log is no longer where this server wrote it" in body["error"]


async def test_a_store_table_without_records_is_refused_for_what_it_is(tmp_path, pg_dsn):
    """Rows our writers never leave (a table's header goes in with its row), made here by
    hand: an unfinished table with no records yet is refused as still being played, in the
    same sentence as a table with records, and a finished one with none as damaged."""
    with trio.fail_after(30):
        async with running_server(server_config(tmp_path / "a", store=pg_dsn, node_id="a")) as (server, url):
            async with connect(url, "ann") as ann:
                live = await create(ann, "go-wild", 2)
            for tid, finished in (("tbare", False), ("tempty", True)):
                # another node's, its lease running: nobody adopts it meanwhile
                await query(pg_dsn, "INSERT INTO wt_tables (table_id, game, owner, lease_until, finished) "
                                    "VALUES (%s, 'go-wild', 'elsewhere', clock_timestamp() + interval '1 hour', %s) "
                                    "RETURNING table_id", (tid, finished))
            status, with_records = await get(server, f"/replay/{live}.json")
            assert status == 403, with_records
            status, without = await get(server, "/replay/tbare.json")
            assert status == 403 and without["error"] == with_records["error"].replace(live, "tbare"), without
            status, empty = await get(server, "/replay/tempty.json")
            assert status == 422 and "is over, but the store holds none of its records" in empty["error"], empty
