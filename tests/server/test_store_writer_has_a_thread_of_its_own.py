"""The store's log writer (server/store_pg.py PgWriter) runs every group's transaction in
one thread of its own, the one that holds its connection, kept for its whole run and
ended with it (server/own_thread.py): never the Trio thread, never Trio's thread cache."""

from __future__ import annotations


import trio

from wildtable.protocol.logfmt import Header, SeatClaimed, encode_record
from wildtable.server.store_pg import PgStore, PgWriter

from threadkit import ThreadsSeen


class _Watched(PgWriter):
    """PgWriter, noting the thread each group's transaction runs in."""

    def __init__(self, store):
        super().__init__(store)
        self.seen = ThreadsSeen()

    def _write_group(self, group, retry):
        self.seen.note()
        return super()._write_group(group, retry)


async def test_every_transaction_in_the_writers_own_thread(pg_dsn):
    store = PgStore(pg_dsn, "node-a")
    store.ensure_schema()
    handle = store.create_table_row("t1", "go-wild", encode_record(Header(2, "go-wild", "t1", 2, {})))
    writer = _Watched(store)
    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            await nursery.start(writer.run)
            for k in range(4):          # one after another: a group each
                await writer.commit(handle, encode_record(SeatClaimed(k % 2, f"p{k}", b"")))
            writer.close()
    assert writer.transactions == 4 and len(writer.seen.threads) == 4
    writer.seen.one_thread_of_its_own("wildtable-store")      # ended with the writer's run
