"""A server bot's search cancelled under way (the bot leaves, the server stops) holds its
slot (BOT_SEARCHES) only while its process is still at it, and the next bot's search
runs once that process is done: the bot is never waited for, the slot never lost."""

from __future__ import annotations

import random

import trio

from wildtable.headless import games, mind
from wildtable.server import botseats

from serverkit import running_server
from thinkkit import DIR, expert_views, held


async def test_a_cancelled_search_gives_its_slot_back_once_its_process_is_done(tmp_path, monkeypatch):
    monkeypatch.setenv(DIR, str(tmp_path))
    plugin = games.plugin_for("wild-shots")
    ((view, memo),) = expert_views("wild-shots", 1)
    thinker = mind.Mind("expert", rng=random.Random(3))
    thinker.seated(plugin)
    thinker.memo.update(memo)
    thought = thinker.thought(plugin, view, 0.0)
    with trio.fail_after(60):
        async with running_server(tmp_path / "data") as (server, url):
            host = server.bots
            assert host.searches.total_tokens == botseats.BOT_SEARCHES == 1
            monkeypatch.setattr(mind, "think", held)
            with trio.CancelScope() as scope:
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(host.think, thought)
                    while not (tmp_path / "began").exists():        # its process is at it
                        await trio.sleep(0.01)
                    scope.cancel()                  # the bot leaves: not waited for
            assert host.searches.borrowed_tokens == 1           # the process is still at it
            answers: list = []

            async def next_search() -> None:
                answers.append(await host.think(thought))

            async with trio.open_nursery() as nursery:
                nursery.start_soon(next_search)
                while host.searches.statistics().tasks_waiting != 1:   # it waits for the slot
                    await trio.sleep(0.01)
                (tmp_path / "end").touch()                      # the cancelled search is done
            assert answers and answers[0][0] is not None        # and the next one ran
            assert host.searches.borrowed_tokens == 0
