"""list_tables stays within a frame a client accepts however many tables there are
(finished tables are not capped by max_tables): waiting tables first, then those in
play, then the most recently finished; the rest is counted in `omitted`. Found: the
answer had no bound, and past 4 MiB every client's lobby failed to decode it."""

from __future__ import annotations

import io

import trio

from wildtable.headless.core import ClientCore
from wildtable.headless.net import connect
from wildtable.client.plain import PlainOutput
from wildtable.protocol import messages as m
from wildtable.protocol.codec import packb
from wildtable.server import app

from serverkit import create, join, running_server
from waitkit import wait_until

FAST = {"turn_timer": 0.01, "target": 1}


async def _list(conn) -> m.TableList:
    await conn.send(m.ListTables())
    return await conn.receive_until(lambda x: isinstance(x, m.TableList))


async def test_a_long_list_keeps_waiting_tables_and_counts_what_it_leaves_out(tmp_path, monkeypatch):
    with trio.fail_after(30):
        async with running_server(tmp_path / "data") as (server, url):
            async with connect(url, "ann") as ann, connect(url, "bob") as bob:
                finished = []
                for _ in range(4):                       # four games played out by the timer
                    t = await create(ann, "go-wild", 2, **FAST)
                    await join(ann, t, 0)
                    await join(bob, t, 1)
                    for c in (ann, bob):
                        await c.receive_until(lambda x: isinstance(x, m.GameOver), timeout=8)
                        await c.send(m.Leave())
                        await c.receive_until(lambda x: isinstance(x, m.Left))
                    finished.append(t)
                waiting = [await create(ann, "run-wild", 4, rounds=2) for _ in range(3)]
                everything = await _list(ann)
                assert everything.omitted == 0 and len(everything.tables) == 7
                sizes = {t["table"]: len(packb(t)) for t in everything.tables}

                # a budget for the three waiting tables and one finished one
                budget = sum(sizes[t] for t in waiting) + max(sizes[t] for t in finished)
                monkeypatch.setattr(app, "LIST_BUDGET", budget)
                monkeypatch.setattr(app, "LIST_ENTRY_MAX", budget)     # always size the answer
                short = await _list(ann)
                listed = [t["table"] for t in short.tables]
                assert short.omitted == 7 - len(listed) == 3, listed
                assert set(waiting) <= set(listed)
                # of the finished games, the newest
                assert [t for t in finished if t in listed] == [finished[-1]], listed
                assert [t for t in [*finished, *waiting] if t in listed] == listed   # creation order
                assert sum(sizes[t] for t in listed) <= budget

                # the line mode says how many were left out
                out = io.StringIO()
                box: list[ClientCore] = []
                core = ClientCore(url, "cat", PlainOutput(lambda: box[0], out))
                box.append(core)
                async with trio.open_nursery() as nursery:
                    await nursery.start(core.run)
                    await core.command("list")
                    await wait_until(lambda: "tables " in out.getvalue(), timeout=5, what="the table list printed")
                    nursery.cancel_scope.cancel()
                assert "tables 4 table(s) (and 3 more the server did not list" in out.getvalue(), out.getvalue()
