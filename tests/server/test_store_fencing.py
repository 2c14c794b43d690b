"""Fencing (server/store_pg.py): a node writes a table's records only while it holds the
table's lease with the epoch it took it with. Once another node adopted the table (or the
lease passed), the node's commits are refused whole: LeaseLost, nothing written, nothing
acknowledged; the other tables of the same group commit as usual; and a server whose table
is fenced out steps down (its clients are told to connect again)."""

from __future__ import annotations

import psycopg
import pytest
import trio

from wildtable.headless.net import connect
from wildtable.headless.wire import ConnectionClosed
from wildtable.protocol import messages as m
from wildtable.protocol.logfmt import Header, SeatClaimed, encode_record, read_log
from wildtable.server.store_pg import LeaseLost, PgStore, PgWriter

from serverkit import create, join, running_server, seated, server_config
from waitkit import wait_until

GONE = (ConnectionClosed, trio.BrokenResourceError, trio.ClosedResourceError)


async def _heard_until_gone(conn) -> list:
    """What ``conn`` receives until the server closes it."""
    heard = []
    try:
        while True:
            heard.append(await conn.receive())
    except GONE:
        return heard


def _header(tid: str) -> bytes:
    return encode_record(Header(2, "go-wild", tid, 2, {}))


def _seat(name: str) -> bytes:
    return encode_record(SeatClaimed(0, name, b"\x01" * 32))


def _expire(dsn: str, tid: str) -> None:
    """As if the owner had been paused past its lease: the lease ends now (the store's clock)."""
    with psycopg.connect(dsn) as db:
        db.execute("UPDATE wt_tables SET lease_until = clock_timestamp() - interval '1 second' WHERE table_id = %s",
                   (tid,))


def _records(dsn: str, tid: str) -> list[bytes]:
    with psycopg.connect(dsn) as db:
        return [r[0] for r in db.execute("SELECT data FROM wt_records WHERE table_id = %s ORDER BY n", (tid,))]


async def test_a_writer_whose_table_was_adopted_elsewhere_writes_nothing_more(pg_dsn):
    a, b = PgStore(pg_dsn, "node-a"), PgStore(pg_dsn, "node-b")
    a.ensure_schema()
    lost = a.create_table_row("t-lost", "go-wild", _header("t-lost"))
    kept = a.create_table_row("t-kept", "go-wild", _header("t-kept"))
    writer = PgWriter(a)
    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            await nursery.start(writer.run)
            await writer.commit(lost, _seat("ann"))
            _expire(pg_dsn, "t-lost")
            taken = b.adopt("t-lost")
            assert taken is not None and taken.epoch == 2 and taken.next_n == 2
            before = _records(pg_dsn, "t-lost")
            outcomes = {}

            async def commit(handle, name):
                try:
                    await writer.commit(handle, _seat(name))
                    outcomes[name] = "committed"
                except LeaseLost as e:
                    outcomes[name] = e.table_id
            # both in one group: the fenced table's commit fails, the other's succeeds
            async with trio.open_nursery() as both:
                both.start_soon(commit, lost, "bob")
                both.start_soon(commit, kept, "cid")
            assert outcomes == {"bob": "t-lost", "cid": "committed"}
            # every later write of the lost table is refused at once, and nothing is written
            with pytest.raises(LeaseLost):
                await writer.commit(lost, _seat("dan"))
            await writer.append(lost, _seat("eve"))
            await writer.release(kept)
            writer.close()
    assert _records(pg_dsn, "t-lost") == before
    assert [r.name for r in read_log(b"".join(_records(pg_dsn, "t-kept"))).records] == ["cid"]
    assert writer.fenced >= 1


async def test_a_lease_that_passed_is_refused_even_with_nobody_else_owning_it(pg_dsn):
    store = PgStore(pg_dsn, "node-a")
    store.ensure_schema()
    handle = store.create_table_row("t-paused", "go-wild", _header("t-paused"))
    writer = PgWriter(store)
    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            await nursery.start(writer.run)
            _expire(pg_dsn, "t-paused")
            with pytest.raises(LeaseLost):
                await writer.commit(handle, _seat("ann"))
            writer.close()
    assert len(_records(pg_dsn, "t-paused")) == 1
    # and the renewal does not return it: the node knows it lost the table
    assert "t-paused" not in store.renew()


async def test_a_server_fenced_out_of_its_table_acknowledges_nothing_and_steps_down(tmp_path, pg_dsn):
    with trio.fail_after(30):
        # a long lease: the renewal does not notice first, the commit's fence does
        async with running_server(server_config(tmp_path / "data", store=pg_dsn, lease_seconds=60)) as (server, url):
            async with seated(url, "run-wild", 2, {"rounds": 1}, names=["ann", "bob"]) as (table, (ann, bob), _):
                await ann.receive_until(lambda x: isinstance(x, m.Update) and x.seq >= 2)    # dealt
                _expire(pg_dsn, table)
                assert PgStore(pg_dsn, "node-b").adopt(table) is not None
                before = _records(pg_dsn, table)
                await ann.send(m.Intent(7, {"kind": "ready"}))
                heard = await _heard_until_gone(ann)
                assert not [x for x in heard if isinstance(x, m.Accepted)], heard
                assert [x for x in heard if isinstance(x, m.Goodbye)], heard
                await wait_until(lambda: table not in server.tables,
                                 timeout=5, what=f"table {table} forgotten")
    assert _records(pg_dsn, table) == before


async def test_a_server_steps_down_from_a_table_it_did_not_renew(tmp_path, pg_dsn):
    with trio.fail_after(30):
        async with running_server(server_config(tmp_path / "data", store=pg_dsn, lease_seconds=1.5)) as (server, url):
            async with connect(url, "ann") as ann:
                table = await create(ann, "go-wild", 2)
                await join(ann, table, 0)
                _expire(pg_dsn, table)
                assert PgStore(pg_dsn, "node-b").adopt(table) is not None
                # nothing is sent: the renewal finds the lease gone, and the table steps down
                heard = await _heard_until_gone(ann)
                assert [x for x in heard if isinstance(x, m.Goodbye)], heard
                assert table not in server.tables
