"""A finished table forgotten right after its last records: with `--durability off`
(records queued for the log writer when commit returns) or `batch` (written, not yet
fsynced), the log must still be whole when it lands in finished/."""

from __future__ import annotations

import pytest
import trio

from wildtable.headless.net import connect
from wildtable.protocol.logfmt import read_log
from wildtable.protocol.replay import replay

from serverkit import create, join, running_server, server_config
from waitkit import wait_until

# Go Wild! to one point, played by the turn timer with nobody connected: the table ends
# with no audience, so it is forgotten at once with keep_finished 0
FAST = {"turn_timer": 0.01, "target": 1}


@pytest.mark.parametrize("durability", ["off", "batch"])
async def test_a_table_forgotten_at_once_keeps_its_last_records(tmp_path, durability):
    """Found: with durability off the arbiter closed the log file while the game's last
    records still waited in the log writer's queue, which then skipped them: every
    archived log stopped short of the game's end (replay said "not over")."""
    data = tmp_path / "data"
    tables = []
    with trio.fail_after(20):
        async with running_server(server_config(data, keep_finished=0, durability=durability)) as (server, url):
            for _ in range(6):
                async with connect(url, "ann") as ann, connect(url, "bob") as bob:
                    t = await create(ann, "go-wild", 2, **FAST)
                    await join(ann, t, 0)
                    await join(bob, t, 1)
                tables.append(t)            # both gone: the timer plays it out, nobody watching
            for t in tables:
                await wait_until(lambda: t not in server.tables and (server.finished_dir / f"{t}.wlog").exists(),
                                 what=f"table {t} forgotten, its log in finished/")
    for t in tables:
        c = read_log((data / "finished" / f"{t}.wlog").read_bytes())
        assert c.torn is None
        r = replay(c)
        assert r.game.outcome(r.state).over, f"{t}: the archived log stops at seq {r.seq}, before the end"
