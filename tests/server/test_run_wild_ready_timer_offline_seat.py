"""A Run Wild table whose player left after the deal no longer freezes (issue #15, item
4): the table's ready timer (setting `ready_timeout`, short here) readies the offline
seat, "Go!" follows, and the log holds the timer's move as `by: timer`, so the table
replays and recovers as it was played. Real sockets on 127.0.0.1."""

from __future__ import annotations

import trio

from wildtable.headless.games import Ctx
from wildtable.headless.games.run_wild import describe
from wildtable.headless.net import connect
from wildtable.protocol import messages as m
from wildtable.protocol.logfmt import ActionAccepted, read_log
from wildtable.protocol.replay import replay

from serverkit import create, join, running_server


async def test_the_ready_timer_readies_a_seat_whose_player_left(tmp_path):
    """bob closes his client after the deal; ann is there but says nothing. Neither
    says ready: the timer readies both, and the round starts."""
    data = tmp_path / "data"
    with trio.fail_after(30):
        async with running_server(data) as (server, url):
            async with connect(url, "ann") as ann:
                async with connect(url, "bob") as bob:
                    table = await create(ann, "run-wild", 2, ready_timeout=0.5)
                    await join(ann, table, 0)
                    await join(bob, table, 1)
                # bob closed his client: seat 1 is offline for good
                seen: list = []
                started = await ann.receive_until(
                    lambda x: isinstance(x, m.Update) and x.view["phase"] == "playing", keep=seen)
                events = [e for u in seen + [started] if isinstance(u, m.Update) for e in u.events]
                readied = [e for e in events if e["event"] == "player_ready"]
                assert readied == [{"event": "player_ready", "seat": 0, "timer": True},
                                   {"event": "player_ready", "seat": 1, "timer": True}], events
                assert events[-1] == {"event": "round_started", "round": 1}, events
                # and ann's client says who readied them
                ctx = Ctx(("ann", "bob"), 0)
                assert [describe(e, ctx) for e in readied] == ["you are ready (readied by the table's timer)",
                                                               "bob is ready (readied by the table's timer)"]
                assert [p["ready"] for p in started.view["players"]] == [True, True]
                assert started.view["settings"]["ready_timeout"] == 0.5

        contents = read_log((data / f"{table}.wlog").read_bytes())
        acts = [(r.seat, r.action["kind"], r.by) for r in contents.records if type(r) is ActionAccepted]
        assert acts == [(None, "ready_timeout", "timer"), (None, "go", "table")], acts
        assert replay(contents).state.phase == "playing"      # no clock needed to replay it
