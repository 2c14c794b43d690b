"""A table the server forgets is let go by the connections that once spoke to it, though
they stay connected (server/connection.py ``route``: a weak reference, so that forgetting
a table need not walk every connection to clear it; a node losing its store forgets every
table at once)."""

from __future__ import annotations

import gc
import weakref

import trio

from wildtable.headless.net import connect
from wildtable.protocol import messages as m

from serverkit import create, played_out_and_left, running_server, server_config

FAST = {"turn_timer": 0.01, "target": 1}


async def test_a_finished_table_forgotten_is_freed_while_its_players_stay(tmp_path):
    with trio.fail_after(30):
        async with running_server(server_config(tmp_path / "data", keep_finished=0)) as (server, url):
            async with connect(url, "ann") as ann, connect(url, "bob") as bob:
                t = await create(ann, "go-wild", 2, **FAST)
                table = weakref.ref(server.tables[t])
                await played_out_and_left([ann, bob], t)
                conns = [c for c in server.connections if c.name in ("ann", "bob")]
                assert len(conns) == 2
                # each spoke to it (join, intents, leave): it is their route until forgotten
                while t in server.tables:
                    await trio.sleep(0.001)
                # its arbiter's task ends right after: then nothing of the server holds it
                with trio.move_on_after(5):
                    while table() is not None:
                        gc.collect()
                        await trio.sleep(0.001)
                held = table()
                assert held is None, [type(r) for r in gc.get_referrers(held)]
                assert [c.route for c in conns] == [None, None]
                # still connected, and an intent now is answered here: no seat, no table
                await ann.send(m.Intent(7, {"kind": "play"}))
                got = await ann.receive_until(lambda x: isinstance(x, (m.Rejected, m.Error)))
                assert isinstance(got, m.Rejected) and (got.intent, got.code) == (7, "not_seated"), got
