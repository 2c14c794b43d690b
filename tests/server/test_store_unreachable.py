"""The store out of reach (PostgreSQL stopped under a running `serve --store`): the server
acknowledges nothing meanwhile and says so in its log; its commits wait and are retried,
and once PostgreSQL is back the same intent is accepted, its record in the store, and play
goes on (within the lease: past it, the fence decides, tests/server/test_store_fencing.py)."""

from __future__ import annotations

import logging

import psycopg
import trio

from wildtable.protocol import messages as m
from wildtable.protocol.logfmt import ActionAccepted, read_log

from serverkit import running_server, seated, server_config
from waitkit import wait_until


async def test_no_ack_while_the_store_is_down_then_play_goes_on(tmp_path, pg_private, caplog):
    caplog.set_level(logging.INFO, logger="wildtable.server")
    dsn = pg_private.create_database()
    with trio.fail_after(60):
        async with running_server(server_config(tmp_path / "data", store=dsn, lease_seconds=120)) as (server, url):
            async with seated(url, "run-wild", 2, {"rounds": 1}, names=["ann", "bob"]) as (table, (ann, bob), _):
                await ann.receive_until(lambda x: isinstance(x, m.Update) and x.seq >= 2)    # dealt
                heard: list = []

                async def listen():
                    while True:
                        heard.append(await ann.receive())

                async with trio.open_nursery() as nursery:
                    nursery.start_soon(listen)
                    await trio.to_thread.run_sync(pg_private.stop)
                    await ann.send(m.Intent(5, {"kind": "ready"}))
                    await wait_until(lambda: server.writer.retries >= 3, what="the store tried and failed three times")
                    assert not [x for x in heard if isinstance(x, (m.Accepted, m.Rejected))], heard
                    assert "store unreachable" in caplog.text and "nothing is acknowledged" in caplog.text
                    await trio.to_thread.run_sync(pg_private.start)
                    await wait_until(lambda: [x for x in heard if isinstance(x, m.Accepted) and x.intent == 5],
                                     what="intent 5 accepted once the store is back")
                    accepted = next(x for x in heard if isinstance(x, m.Accepted))
                    # and the table goes on: bob's ready is accepted too
                    await bob.send(m.Intent(6, {"kind": "ready"}))
                    await bob.receive_until(lambda x: isinstance(x, m.Accepted) and x.intent == 6)
                    nursery.cancel_scope.cancel()
                assert "store reachable again" in caplog.text
                assert table in server.tables
    with psycopg.connect(dsn) as db:
        data = b"".join(r[0] for r in db.execute("SELECT data FROM wt_records WHERE table_id = %s ORDER BY n",
                                                 (table,)))
    acts = {r.seq: r for r in read_log(data).records if type(r) is ActionAccepted}
    assert acts[accepted.seq].intent == 5 and acts[accepted.seq].seat == 0
