"""Each game's timers at the defaults a table gets with no settings, in a real server: a
turn nobody takes is played by the turn timer 60 s after it began (Go Wild!, Wild Shots,
Go Fish Wildcard), and Run Wild's seats not ready are readied 60 s after the deal and a
round nobody plays in ends 120 s after it started (docs/RULES.md). The other tests of
these timers shorten them, most below a second, where the arbiter waits with a cancel
scope of its own; a deadline a second or more away goes through the server's timers task
instead (server/timers.py ``FAR``), as every timer a table gets by default does.

On trio's mock clock (it jumps to the next deadline whenever every task waits; loopback
data is handed over as it is sent, and the log's writes run in the task: ``OneThreadWorld``),
so six minutes of two silent players take about a second."""

from __future__ import annotations

import pytest
import trio

from wildtable.protocol import messages as m
from wildtable.protocol.engine import games
from wildtable.protocol.logfmt import ActionAccepted, read_log
from wildtable.protocol.replay import replay

from mockclockkit import OneThreadWorld
from serverkit import read_into, running_server, seated, server_config

SILENT_FOR = 370.0      # seconds two seated players say nothing: six turn timers, two Run Wild rounds
EXACT = 0.05            # the mock clock runs no late: a deadline's move comes at it


async def silent_table(tmp_path, game: str) -> tuple[list, dict[int, float], bool]:
    """Two players seated at a table of ``game`` with its default settings, who act not
    at all for SILENT_FOR seconds (they read, and so answer pings: both stay connected):
    (the log's records, when each seq's update reached seat 0 on trio's clock, whether
    replaying the log gives the live state)."""
    async with running_server(server_config(tmp_path / "data"), world=OneThreadWorld()) as (server, url):
        async with seated(url, game, 2) as (table, conns, joined):
            heard: list[list] = [[], []]
            async with trio.open_nursery() as n:
                for c, into in zip(conns, heard):
                    n.start_soon(read_into, c, into)
                await trio.sleep(SILENT_FOR)
                n.cancel_scope.cancel()
            t = server.tables[table]
            assert [s.conn is not None for s in t.seats] == [True, True]
            contents = read_log(t.logfile.path.read_bytes())
            arrived = {msg.seq: when for when, msg in heard[0] if isinstance(msg, m.Update)}
            return list(contents.records), arrived, replay(contents).state == t.state


def since_last_update(r, arrived: dict[int, float]) -> float:
    """How long after the update before it the record's own update came."""
    return arrived[r.seq] - arrived[max(s for s in arrived if s < r.seq)]


@pytest.mark.parametrize("game", ["go-wild", "wild-shots", "go-fish-wildcard"])
async def test_a_turn_nobody_takes_is_played_by_the_timer_at_the_default(tmp_path, autojump_clock, game):
    timer = games()[game].default_settings()["turn_timer"]
    assert timer == 60.0
    records, arrived, replays = await silent_table(tmp_path, game)
    acted = [r for r in records if type(r) is ActionAccepted]
    assert len(acted) == int(SILENT_FOR // timer), [(r.seq, r.by) for r in acted]
    for r in acted:
        assert r.by == "timer" and r.intent is None, r
        assert timer - 1e-6 <= since_last_update(r, arrived) <= timer + EXACT, (r.seq, since_last_update(r, arrived))
    assert replays


async def test_run_wild_readies_at_the_default_and_ends_an_idle_round_at_the_default(tmp_path, autojump_clock):
    defaults = games()["run-wild"].default_settings()
    ready, idle = defaults["ready_timeout"], defaults["idle_timeout"]
    assert (ready, idle) == (60.0, 120.0)
    records, arrived, replays = await silent_table(tmp_path, "run-wild")
    acted = [(r.by, r.action["kind"]) for r in records if type(r) is ActionAccepted]
    # two rounds: readied at the deal + 60 s, "Go!" at once, ended idle 120 s later, dealt again
    assert acted == [("timer", "ready_timeout"), ("table", "go"), ("timer", "idle_timeout")] * 2, acted
    for r in records:
        if type(r) is ActionAccepted and r.by == "timer":
            wait = ready if r.action["kind"] == "ready_timeout" else idle
            assert wait - 1e-6 <= since_last_update(r, arrived) <= wait + EXACT, (r.seq, since_last_update(r, arrived))
    assert replays
