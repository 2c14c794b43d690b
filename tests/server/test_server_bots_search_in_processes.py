"""The server's expert bots search in its search processes, never in a thread of the
server's own (server/botseats.py says why: such a thread held Python's GIL from every
table), and a seeded bot decides there exactly as it would by itself: the same action,
and its generator goes on from the same state."""

from __future__ import annotations

import os
import random

import trio

from wildtable.headless import games, mind
from wildtable.headless.games import wild_shots_expert as wx
from wildtable.headless.bots import Bot
from wildtable.headless.net import connect

from serverkit import running_server
from thinkkit import expert_views, seat_three_experts, until_played_by


def _count_searches(monkeypatch) -> list[int]:
    """The pids of the Wild Shots expert's searches made in this process from now on."""
    here: list[int] = []
    search = wx.expert_values

    def counted(*args, **kw):
        here.append(os.getpid())
        return search(*args, **kw)

    monkeypatch.setattr(wx, "expert_values", counted)
    return here


async def test_the_server_bots_expert_decisions_are_not_made_in_its_process(tmp_path, monkeypatch):
    here = _count_searches(monkeypatch)
    with trio.fail_after(60):
        async with running_server(tmp_path / "data") as (server, url):
            async with connect(url, "ann") as ann:
                await seat_three_experts(ann)
                await until_played_by(ann, {1, 2, 3})       # each bot has played a card
    assert here == []                               # not one in the server's process


async def test_a_server_bots_search_runs_in_another_process_and_decides_as_it_would_alone(tmp_path, monkeypatch):
    from wildtable.server.cpu_pool import pool_of
    plugin = games.plugin_for("wild-shots")
    (view1, memo), (view2, _) = expert_views("wild-shots")
    alone = mind.Mind("expert", rng=random.Random(5))
    alone.seated(plugin)
    alone.memo.update(memo)
    expected = [alone.choose(plugin, view1, 0.0), alone.choose(plugin, view2, 0.0)]

    here = _count_searches(monkeypatch)
    with trio.fail_after(60):
        async with running_server(tmp_path / "data") as (server, url):
            bot = Bot(url, "t1", "bot1", level="expert", rng=random.Random(5), think=server.bots.think)
            bot.mind.seated(plugin)
            bot.mind.memo.update(memo)
            got = [await bot.decide(plugin, view1), await bot.decide(plugin, view2)]
            searcher = await pool_of(server).run(server.bots.searches, os.getpid)
    assert got == expected and got[0] is not None
    assert bot.mind.rng.getstate() == alone.rng.getstate()
    assert here == []                               # not one in the server's process
    assert searcher != os.getpid()                  # but in its pool's
