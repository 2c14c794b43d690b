"""A server bot whose search process died (killed, out of memory) plays on: that search
is lost, the bot tries its turn again, in a new process (server/botseats.py,
server/cpu_pool.py), and nothing of the server stops."""

from __future__ import annotations

import trio

from wildtable.headless import mind
from wildtable.headless.net import connect

from serverkit import running_server
from thinkkit import DIR, die_once, seat_three_experts, until_played_by


async def test_a_server_bot_plays_on_after_its_search_process_died(tmp_path, monkeypatch):
    monkeypatch.setenv(DIR, str(tmp_path))
    monkeypatch.setattr(mind, "think", die_once, raising=False)     # the first search ends its process
    with trio.fail_after(60):
        async with running_server(tmp_path / "data") as (server, url):
            async with connect(url, "ann") as ann:
                await seat_three_experts(ann)
                await until_played_by(ann, {1, 2})         # the first bot's card after all, the next's
                assert (tmp_path / "died").exists()         # its first search did die
                assert server.bots.running == 3             # no bot stopped
