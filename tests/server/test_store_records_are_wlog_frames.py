"""`serve --store`: a table's records in PostgreSQL are the bytes of its .wlog frames, one
row a frame numbered from 0 (the header); the rows in order replay to the state the players
saw, and a game that ended is marked finished in the store so that no node adopts it."""

from __future__ import annotations

import psycopg
import trio

from wildtable.protocol.logfmt import Header, iter_frames, read_log
from wildtable.protocol.replay import replay

from scripted import play_all_to_end
from serverkit import running_server, seated, server_config


async def test_a_whole_game_is_one_row_a_frame_and_replays_to_the_live_state(tmp_path, pg_dsn):
    with trio.fail_after(60):
        async with running_server(server_config(tmp_path / "data", store=pg_dsn)) as (server, url):
            async with seated(url, "run-wild", 2, {"rounds": 1}) as (table, conns, joined):
                await play_all_to_end(conns, joined, timeout=45)
                live = server.tables[table]
                assert live.finished
                state, seq = live.state, live.seq
    with psycopg.connect(pg_dsn) as db:      # the server stopped: everything it was to write is written
        rows = db.execute("SELECT n, data FROM wt_records WHERE table_id = %s ORDER BY n", (table,)).fetchall()
        finished = db.execute("SELECT finished FROM wt_tables WHERE table_id = %s", (table,)).fetchone()[0]
    assert [n for n, _ in rows] == list(range(len(rows)))
    for n, data in rows:
        frames = list(iter_frames(data))
        assert len(frames) == 1 and frames[0][0] == 0, f"row {n} is not exactly one whole frame"
    wlog = b"".join(data for _, data in rows)
    contents = read_log(wlog)
    assert contents.torn is None and contents.good_length == len(wlog)
    assert type(contents.header) is Header and contents.header.table == table
    assert len(contents.records) == len(rows) - 1
    result = replay(contents)
    assert (result.state, result.seq) == (state, seq)
    assert finished, "a finished game must be marked finished in the store (no node adopts it)"


async def test_a_table_created_on_a_store_has_no_log_file(tmp_path, pg_dsn):
    with trio.fail_after(30):
        async with running_server(server_config(tmp_path / "data", store=pg_dsn)) as (server, url):
            async with seated(url, "go-wild", 2) as (table, conns, joined):
                pass
    assert not list((tmp_path / "data").glob("*.wlog"))
    with psycopg.connect(pg_dsn) as db:
        owner, epoch = db.execute("SELECT owner, epoch FROM wt_tables WHERE table_id = %s", (table,)).fetchone()
    # the server gave up its lease as it stopped (another node may take the table at once)
    assert owner is None and epoch == 1
