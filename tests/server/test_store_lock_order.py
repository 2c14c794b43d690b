"""The statements that lock several rows of wt_tables at once (the group commit, the lease
renewal, the lobby entries) lock them in one order, so they never deadlock: PostgreSQL
finds a deadlock only after deadlock_timeout (1 s), a stall every player at those tables
would wait through, and the writer would have to retry its group."""

from __future__ import annotations

import random
import threading

import trio

from wildtable.protocol.logfmt import Header, SeatClaimed, encode_record
from wildtable.server.store_pg import PgStore, PgWriter


async def test_group_commits_renewals_and_lobby_entries_side_by_side_never_deadlock(pg_dsn):
    store = PgStore(pg_dsn, "node-a", lease_seconds=600)
    store.ensure_schema()
    ids = [f"t{i:03d}" for i in range(100)]
    handles = [store.create_table_row(t, "go-wild", encode_record(Header(2, "go-wild", t, 2, {}))) for t in ids]
    record = encode_record(SeatClaimed(0, "ann", b""))
    writer = PgWriter(store)
    done = threading.Event()
    failed: list[BaseException] = []

    def keep_at_it(work):
        try:
            while not done.is_set():
                work()
        except BaseException as e:          # a deadlock here is psycopg's DeadlockDetected
            failed.append(e)

    def entries():
        order = ids[:]
        random.shuffle(order)
        store.set_entries({t: t.encode() for t in order})

    async def table(handle):
        for _ in range(25):
            await writer.commit(handle, record)

    with trio.fail_after(120):
        async with trio.open_nursery() as nursery:
            await nursery.start(writer.run)
            async with trio.open_nursery() as side:
                side.start_soon(trio.to_thread.run_sync, keep_at_it, store.renew)
                side.start_soon(trio.to_thread.run_sync, keep_at_it, entries)
                async with trio.open_nursery() as tables:
                    for h in random.sample(handles, len(handles)):
                        tables.start_soon(table, h)
                done.set()
            writer.close()
    assert not failed, failed
    assert writer.retries == 0, f"the writer retried {writer.retries} group(s) (deadlocks)"
    assert writer.records == 2500
