"""/metrics on the ops port, read with prometheus_client's own parser, moves as a
scripted game is played: connections by state, tables by status, intents accepted and
refused by code, tables created, group commits and fsyncs timed, closes by code. On the
game port there are no metrics (404)."""

from __future__ import annotations

import trio

from wildtable.headless.net import connect

from opskit import get, of, scrape
from serverkit import create, join, play_out_with_a_refusal, running_server, server_config
from waitkit import wait_until


async def test_metrics_move_with_play(tmp_path):
    with trio.fail_after(60):
        async with running_server(server_config(tmp_path / "data", metrics_port=0)) as (server, url):
            assert (await get(server.port, "/metrics"))[0] == 404
            before = await scrape(server.ops_port)
            assert of(before, "wildtable_intents_accepted_total") == 0
            assert of(before, "wildtable_ready") == 1
            async with connect(url, "cy") as cy, connect(url, "di") as di:
                table = await create(cy, "go-wild", 2, turn_timer=0, target=1)
                await join(cy, table, 0)
                mid = await scrape(server.ops_port)
                assert of(mid, "wildtable_connections", state="seated") == 1
                assert of(mid, "wildtable_connections", state="lobby") == 1
                assert of(mid, "wildtable_tables", status="waiting") == 1
                await join(di, table, 1)
                mid = await scrape(server.ops_port)
                assert of(mid, "wildtable_tables", status="playing") == 1
                assert of(mid, "wildtable_connections", state="seated") == 2
            await play_out_with_a_refusal(url)
            await wait_until(lambda: not server.connections, what="every connection closed")
            after = await scrape(server.ops_port)
    assert of(after, "wildtable_tables_created_total") == 2
    assert of(after, "wildtable_connections_opened_total") == 4
    assert of(after, "wildtable_connection_closes_total", code="1000") == 4
    assert of(after, "wildtable_connections", state="seated") == 0
    assert of(after, "wildtable_intents_accepted_total") >= 2          # the two players' plays
    refused = {dict(k[1])["code"]: v for k, v in after.items() if k[0] == "wildtable_intents_refused_total"}
    assert sum(refused.values()) == 1 and set(refused) != {"other"}, refused     # the card 9999
    commits = of(after, "wildtable_group_commit_seconds_count")
    assert commits >= of(after, "wildtable_intents_accepted_total") / 10 and commits > 0
    assert of(after, "wildtable_group_commit_seconds_bucket", le="+Inf") == commits
    assert of(after, "wildtable_fsync_seconds_count") > 0 and of(after, "wildtable_fsync_seconds_sum") > 0
