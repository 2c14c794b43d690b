"""Requests racing a finished table's eviction, over real sockets."""

from __future__ import annotations

import trio

from wildtable.headless.net import connect
from wildtable.protocol import messages as m

from serverkit import answer, create, played_out_and_left, running_server, server_config

FAST = {"turn_timer": 0.01, "target": 1}


async def finished_tables(url, count: int) -> list[str]:
    tables = []
    async with connect(url, "ann") as ann, connect(url, "bob") as bob:
        for _ in range(count):
            t = await create(ann, "go-wild", 2, **FAST)
            await played_out_and_left([ann, bob], t)
            tables.append(t)
    return tables


async def test_a_request_right_after_the_eviction_is_told_where_the_log_is(tmp_path):
    """Found: the log moves to finished/ in a thread after the table is forgotten; a
    spectate, join or rejoin in between got a bare "no table 'X'; list_tables shows
    the open ones", not the documented "is over ... its log is finished/X.wlog"."""
    with trio.fail_after(30):
        async with running_server(server_config(tmp_path / "data", keep_finished=0)) as (server, url):
            told = []

            async def ask_when_gone(t):
                async with connect(url, f"w-{t}") as w:
                    while t in server.tables:           # forgotten within a second
                        await trio.sleep(0.001)
                    await w.send(m.Spectate(t))          # at once: the log may be moving
                    e = await answer(w)
                    assert isinstance(e, m.Error) and e.code == "no_such_table", e
                    told.append(e.message)

            async with trio.open_nursery() as nursery:
                for t in await finished_tables(url, 12):
                    nursery.start_soon(ask_when_gone, t)
            bad = [w for w in told if "finished/" not in w]
            assert len(told) == 12 and not bad, bad
