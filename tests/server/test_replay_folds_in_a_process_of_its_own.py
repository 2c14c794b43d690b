"""The replay viewer's work (folding a finished game's log, a step's view, its JSON) is
done in a process of its own, never in the server's: a thread of the server that folded
held the GIL from every table (server/replay_process.py; bench/README.md, "Replays in a
process of their own"). The server's stop ends that process."""

from __future__ import annotations

import multiprocessing
import os

import trio

import wildtable.headless.timeline as timeline
from wildtable.server import replay_process

from serverkit import get, play_out_with_a_refusal, running_server


async def _gone(pid: int) -> None:
    """Wait until process ``pid`` has ended and been reaped."""
    while os.path.exists(f"/proc/{pid}"):
        await trio.sleep(0.05)


def _folded_here(*args, **kwargs):
    raise AssertionError("a log was folded in the server's own process")


async def test_a_step_is_worked_out_in_another_process_which_ends_with_the_server(tmp_path, monkeypatch):
    with trio.fail_after(60):
        async with running_server(tmp_path / "data") as (server, url):
            table = await play_out_with_a_refusal(url)
            monkeypatch.setattr(timeline, "Timeline", _folded_here)     # in this process only
            for query in ("step=99999&view=all", "step=3&view=0", "seq=5&view=spectator", "find=play"):
                status, answer = await get(server, f"/replay/{table}.json?{query}")
                assert status == 200 and answer["table"] == table, answer
            status, listing = await get(server, "/replays.json")
            assert status == 200 and [g["table"] for g in listing["replays"]] == [table]
            (child,) = [p for p in multiprocessing.active_children() if p.name == "wildtable-replays"]
            assert child.pid != os.getpid()
            assert replay_process.KEPT.logs == {}                     # nothing kept here either
        await _gone(child.pid)
