"""A waiting table that expired (nobody at it for `--waiting-expiry`) is not a finished
game: the replay viewer neither lists it nor serves it, on files and on a store alike.
From files its log goes to expired/, which the viewer never reads; a store marks it
finished too (so that no node adopts it), and records that it expired
(wt_tables.ended), which the viewer and a node's restart go by. Found: on a store,
/replays.json listed such tables and opening one gave 409 (its log does not end a game)."""

from __future__ import annotations

import trio

from clusterkit import query
from serverkit import create, get, play_out_with_a_refusal, running_server, server_config
from waitkit import wait_until
from wildtable.headless.net import connect
from wildtable.server.store_pg import PgStore


async def forgotten(server, table: str) -> None:
    """Until the server has forgotten ``table`` and put its log away (moved to expired/, or
    marked in the store)."""
    await wait_until(lambda: table not in server.tables and table not in server._moving,
                     what=f"table {table} forgotten and its log put away")


async def marked_over(server, where: dict, table: str) -> None:
    """Until the finished game ``table`` is closed for good (in a store: marked finished)."""
    await wait_until(lambda: server.tables[table].readonly, what=f"table {table} closed for good")
    if "store" in where:
        await wait_until(lambda: query(where["store"], "SELECT 1 FROM wt_tables WHERE finished AND table_id = %s",
                                       (table,)), step=0.02, what=f"table {table} marked finished in the store")


async def test_an_expired_waiting_table_is_neither_listed_nor_replayed(tmp_path, files_or_store):
    with trio.fail_after(40):
        async with running_server(server_config(tmp_path / "a", waiting_expiry=0.5, **files_or_store)) as (server, url):
            over = await play_out_with_a_refusal(url)
            async with connect(url, "cy") as cy:
                squat = await create(cy, "go-wild", 2)        # created, never joined: it expires
                await forgotten(server, squat)
            await marked_over(server, files_or_store, over)

            status, listing = await get(server, "/replays.json")
            assert status == 200, listing
            assert [g["table"] for g in listing["replays"]] == [over], listing
            status, replayed = await get(server, f"/replay/{over}.json")
            assert status == 200 and replayed["table"] == over, replayed
            status, refused = await get(server, f"/replay/{squat}.json")
            assert status == 404 and "no finished game" in refused["error"], refused

        if "store" in files_or_store:
            dsn = files_or_store["store"]
            ended = dict(await query(dsn, "SELECT table_id, ended FROM wt_tables"))
            assert ended == {over: "over", squat: "expired"}, ended
            # at its next start the node holds its finished game again, and not the expired table
            store = PgStore(dsn, "a")
            try:
                again = await trio.to_thread.run_sync(store.finished_here, 3600.0)
            finally:
                store.close()
            assert [row[0] for row in again] == [over], again
