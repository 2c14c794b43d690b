"""The web replay viewer on `serve --store` (server/replays.py StoreGames): finished games
live in the store (wt_tables.finished, wt_records), not in log files, so /replays.json
lists them from there and /replay/ID.json steps through their records, on any node of the
cluster, the one that played the game or another; a table still being played is refused."""

from __future__ import annotations

import trio

from wildtable.headless.net import connect
from wildtable.protocol.replay import replay

from clusterkit import stored_log
from serverkit import create, get, play_out_with_a_refusal, running_server, same_json, server_config


async def test_a_finished_game_in_the_store_is_listed_and_replayed_by_every_node(tmp_path, pg_dsn):
    with trio.fail_after(60):
        async with running_server(server_config(tmp_path / "a", store=pg_dsn, node_id="a")) as (a, url_a), \
                running_server(server_config(tmp_path / "b", store=pg_dsn, node_id="b")) as (b, _):
            table = await play_out_with_a_refusal(url_a)
            async with connect(url_a, "cy") as cy:
                playing = await create(cy, "go-wild", 2)
            while not a.tables[table].readonly:         # its last records committed, marked finished
                await trio.sleep(0.05)
            contents = await stored_log(pg_dsn, table)
            final = replay(contents)
            for server in (a, b):
                status, listing = await get(server, "/replays.json")
                assert status == 200 and listing["lobby"] is True, listing
                (entry,) = [g for g in listing["replays"] if g["table"] == table]
                assert entry["game"] == "go-wild" and entry["players"] == ["ann", "bob"], entry
                assert playing not in [g["table"] for g in listing["replays"]]

                status, first = await get(server, f"/replay/{table}.json")
                assert status == 200 and first["record"]["kind"] == "header", first
                assert first["steps"] == len(contents.records) + 1 and first["last_seq"] == final.seq
                assert first["next_rejected"] is not None       # ann's refused intent, in its place
                status, last = await get(server, f"/replay/{table}.json?step=99999&view=all")
                assert status == 200
                assert last["state"]["board"] == same_json(final.game.view(final.state, None))

                status, refused = await get(server, f"/replay/{playing}.json")
                assert status == 403 and "still being played" in refused["error"], refused
                status, missing = await get(server, "/replay/tnosuch.json")
                assert status == 404 and "no finished game" in missing["error"], missing
