"""On `serve --store` the replay viewer lists the most recently finished games first, with
when each finished, as it does from files (a log's last write): the store keeps when each
table was marked finished (wt_tables.finished_at, the database's clock). A store made
before that column is given it at the next start; its games finished before then are
listed after the others, with no time. So is wt_tables.ended (how a table ended: over, or
expired waiting for players); a game marked finished before it counts as over."""

from __future__ import annotations

import psycopg
import trio

from clusterkit import query
from serverkit import create, get, join, play_out_with_a_refusal, running_server, server_config
from wildtable.headless.net import connect
from wildtable.protocol import messages as m

TIMER_PLAYS = {"turn_timer": 0.01, "target": 1}     # Go Wild! to one point, played out by the turn timer

async def finished_in_store(dsn, *tables) -> None:
    """Until each table is marked finished in the store (after its last records)."""
    while len(await query(dsn, "SELECT 1 FROM wt_tables WHERE finished AND table_id = ANY(%s)", (list(tables),))) \
            < len(tables):
        await trio.sleep(0.05)


async def test_the_game_finished_last_is_listed_first(tmp_path, pg_dsn):
    with trio.fail_after(40):
        async with running_server(server_config(tmp_path / "a", store=pg_dsn, node_id="a")) as (server, url):
            async with connect(url, "ann") as ann, connect(url, "bob") as bob:
                made_first = await create(ann, "go-wild", 2, **TIMER_PLAYS)
                made_second = await play_out_with_a_refusal(url, names=("cy", "dee"))     # ends first
                await finished_in_store(pg_dsn, made_second)
                await join(ann, made_first, 0)
                await join(bob, made_first, 1)
                await ann.receive_until(lambda x: isinstance(x, m.GameOver), timeout=8)
            await finished_in_store(pg_dsn, made_first)
            status, listing = await get(server, "/replays.json")
            assert status == 200, listing
            games = listing["replays"]
            assert [g["table"] for g in games] == [made_first, made_second], games
            assert all(isinstance(g["finished"], int) for g in games), games
            assert games[0]["finished"] >= games[1]["finished"]


OLD_TABLES = """CREATE TABLE wt_tables (
    table_id text PRIMARY KEY, game text NOT NULL, owner text, epoch bigint NOT NULL DEFAULT 1,
    lease_until timestamptz NOT NULL, finished boolean NOT NULL DEFAULT false, entry bytea, bots bytea,
    created timestamptz NOT NULL DEFAULT now())"""


async def test_a_store_made_before_finished_at_gets_it_at_start(tmp_path, pg_dsn):
    # wt_tables as the first stores made it (no finished_at, no ended, no creator)
    with psycopg.connect(pg_dsn, autocommit=True, connect_timeout=10) as conn:
        conn.execute(OLD_TABLES)
    with trio.fail_after(40):
        async with running_server(server_config(tmp_path / "a", store=pg_dsn, node_id="a")) as (server, url):
            (kind,) = await query(pg_dsn, "SELECT data_type FROM information_schema.columns "
                                          "WHERE table_name = 'wt_tables' AND column_name = 'finished_at'")
            assert kind == ("timestamp with time zone",)
            (kind,) = await query(pg_dsn, "SELECT data_type FROM information_schema.columns "
                                          "WHERE table_name = 'wt_tables' AND column_name = 'ended'")
            assert kind == ("text",)
            (kind,) = await query(pg_dsn, "SELECT data_type FROM information_schema.columns "
                                          "WHERE table_name = 'wt_tables' AND column_name = 'creator'")
            assert kind == ("text",)
            older = await play_out_with_a_refusal(url)
            newer = await play_out_with_a_refusal(url, names=("cy", "dee"))
            await finished_in_store(pg_dsn, older, newer)
            # the first one finished before the column was there, as far as the store knows
            await query(pg_dsn, "UPDATE wt_tables SET finished_at = NULL, ended = NULL WHERE table_id = %s "
                                "RETURNING 1", (older,))
            status, listing = await get(server, "/replays.json")
            assert status == 200, listing
            assert [(g["table"], g["finished"] is None) for g in listing["replays"]] == [(newer, False), (older, True)]
            status, replayed = await get(server, f"/replay/{older}.json")
            assert status == 200 and replayed["table"] == older, replayed
