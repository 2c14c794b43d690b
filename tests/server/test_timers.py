"""The tables' far deadlines from one task (server/timers.py; docs/ARCHITECTURE.md, "The
arbiter: pure core, thin shell"): a table whose next deadline is FAR away or more waits
on its inbox alone and is woken by the server's timers task. Pure: ``run_due`` with a
given ``now``; and one server, where a ready timer of FAR or more fires through the task,
and a reminder for a deadline that has since moved later does not expire a waiting table
early."""

from __future__ import annotations

import gc
import math

import trio

from wildtable.headless.net import connect
from wildtable.protocol import messages as m
from wildtable.server.timers import FAR, Timers

from mockclockkit import OneThreadWorld
from serverkit import answer, create, join, running_server, server_config
from waitkit import wait_until


class Table:
    def __init__(self):
        self.due: list[float] = []

    def remind_due(self, at: float) -> None:
        self.due.append(at)


def test_each_is_reminded_when_due_in_order_and_a_forgotten_one_not_at_all():
    t = Timers()
    a, b, gone = Table(), Table(), Table()
    t.remind(a, 5.0)
    t.remind(b, 2.0)
    t.remind(a, 3.0)
    t.remind(gone, 1.0)
    del gone
    gc.collect()
    t.run_due(2.5)
    assert (a.due, b.due) == ([], [2.0])
    t.run_due(10.0)
    assert a.due == [3.0, 5.0] and b.due == [2.0]
    assert len(t) == 0


async def test_a_ready_timer_far_away_fires_through_the_timers_task(tmp_path):
    assert FAR <= 1.2
    with trio.fail_after(30):
        async with running_server(tmp_path / "data") as (server, url):
            async with connect(url, "ann") as ann, connect(url, "bob") as bob:
                table = await create(ann, "run-wild", 2, ready_timeout=1.2)
                await join(ann, table, 0)
                await join(bob, table, 1)
                t = server.tables[table]
                # dealt, nobody ready: the arbiter waits for the ready timer without a
                # cancel scope of its own, its wake-up asked of the timers task
                await wait_until(lambda: t.started and t._remind_at < math.inf and len(server.timers) > 0,
                                 what="the table waiting for its ready timer through the timers task")
                started = await ann.receive_until(lambda x: isinstance(x, m.Update) and x.view["phase"] == "playing")
                assert [p["ready"] for p in started.view["players"]] == [True, True]


async def test_a_reminder_for_a_deadline_moved_later_does_not_expire_a_table_early(tmp_path):
    """ann creates a table and leaves it waiting (it expires EXPIRY s after nobody is at
    it); 0.8 s later she sits down and gets up again: the expiry moves to EXPIRY s after
    that. The reminder asked for the first deadline still comes up then; the table must
    stay until the second."""
    expiry = 2.0
    with trio.fail_after(30):
        async with running_server(server_config(tmp_path / "data", waiting_expiry=expiry)) as (server, url):
            async with connect(url, "ann") as ann:
                created = trio.current_time()
                table = await create(ann, "run-wild", 2)
                await wait_until(lambda: server.tables[table]._remind_at < math.inf,
                                 what="the waiting table's expiry asked of the timers task")
                await trio.sleep_until(created + 0.8)
                await join(ann, table, 0)
                await ann.send(m.Leave())
                assert isinstance(await answer(ann), m.Left)
                left = trio.current_time()
                # past the first deadline (created + 2.0), before the second (left + 2.0): a
                # wait for time, the point being that nothing happens meanwhile
                await trio.sleep_until(left + expiry - 0.4)
                assert table in server.tables, "expired at the deadline it had before someone sat down"
                await wait_until(lambda: table not in server.tables, what="the table expired at its second deadline")


async def test_a_reminder_moved_later_does_not_expire_a_table_early_at_the_default(tmp_path, autojump_clock):
    """As above at the default --waiting-expiry (600 s), on trio's mock clock: made and
    left waiting, sat at and left 300 s later, the table is there at 600 s and expires
    600 s after it was left, not before."""
    expiry = server_config(tmp_path).waiting_expiry
    assert expiry == 600.0
    async with running_server(server_config(tmp_path / "data"), world=OneThreadWorld()) as (server, url):
        async with connect(url, "ann") as ann:
            created = trio.current_time()
            table = await create(ann, "run-wild", 2)
        await trio.sleep_until(created + expiry / 2)
        async with connect(url, "ann") as ann:
            await join(ann, table, 0)
            await ann.send(m.Leave())
            assert isinstance(await answer(ann), m.Left)
        left = trio.current_time()
        await trio.sleep_until(created + expiry + 1)
        assert table in server.tables, "expired at the deadline it had before someone sat down"
        await wait_until(lambda: table not in server.tables, step=0.01, timeout=expiry,
                         what="the table expired at its second deadline")
        assert left + expiry <= trio.current_time() <= left + expiry + 0.05
