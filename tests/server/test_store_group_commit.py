"""Group commit on PostgreSQL: the commits waiting when the writer takes a group (of many
tables, several each) are written in ONE transaction, and each commit returns only once
that transaction is committed: its records are in the store when the table hears back."""

from __future__ import annotations

import psycopg
import trio
import trio.testing

from wildtable.protocol.logfmt import Header, SeatClaimed, encode_record, read_log
from wildtable.server.store_pg import PgStore, PgWriter


async def test_the_commits_waiting_together_are_one_transaction(pg_dsn):
    store = PgStore(pg_dsn, "node-a")
    store.ensure_schema()
    tables = [f"t{i}" for i in range(5)]
    handles = [store.create_table_row(t, "go-wild", encode_record(Header(2, "go-wild", t, 2, {}))) for t in tables]
    writer = PgWriter(store)
    seen_in_store = []

    async def commit(handle, k):
        # two records in one commit, as a table hands a group's records over
        await writer.commit(handle, encode_record(SeatClaimed(0, f"p{k}", b"")) + encode_record(SeatClaimed(1, f"q{k}", b"")))
        with psycopg.connect(pg_dsn) as db:
            seen_in_store.append(db.execute("SELECT count(*) FROM wt_records WHERE table_id = %s",
                                            (handle.table_id,)).fetchone()[0])

    with trio.fail_after(20):
        async with trio.open_nursery() as outer:
            async with trio.open_nursery() as nursery:
                for k in range(3):
                    for h in handles:
                        nursery.start_soon(commit, h, k)
                        await trio.testing.wait_all_tasks_blocked()     # queued in this order
                # all 15 commits wait in the queue
                await outer.start(writer.run)
            writer.close()
    with psycopg.connect(pg_dsn) as db:
        xids = db.execute("SELECT count(DISTINCT xmin::text), count(*) FROM wt_records WHERE n > 0").fetchone()
    assert xids == (1, 30), f"{xids[1]} records in {xids[0]} transactions"
    assert writer.transactions == 1
    assert seen_in_store == [7] * 15        # the header and the 6 records: all there before any commit returned
    for t in tables:
        with psycopg.connect(pg_dsn) as db:
            data = b"".join(r[0] for r in db.execute("SELECT data FROM wt_records WHERE table_id = %s ORDER BY n", (t,)))
        names = [r.name for r in read_log(data).records]
        assert names == ["p0", "q0", "p1", "q1", "p2", "q2"], names     # each table's commits in order
