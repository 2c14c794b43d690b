"""`wildtable serve --durability always|batch|off` stopped by SIGTERM while two
players are sending intents as fast as they can: every action a client was told was
accepted is in the log afterwards, the log reads whole (no torn tail) and replays."""

from __future__ import annotations

import signal

import pytest
import trio

from wildtable.protocol import messages as m
from wildtable.protocol.logfmt import ActionAccepted, read_log
from wildtable.protocol.replay import replay

from adversarial_kit import start_serve, two_play_until


@pytest.mark.parametrize("durability", ["always", "batch", "off"])
async def test_sigterm_loses_no_accepted_action(tmp_path, durability):
    data = tmp_path / "data"
    seen: list[list] = [[], []]
    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            sp = await start_serve(nursery, data, "--durability", durability)
            tid, _ = await two_play_until(sp, seen, signal.SIGTERM, timeout=25)
            assert await sp.proc.wait() == 0, sp.log[-2000:]
            nursery.cancel_scope.cancel()
    acked = {x.seq for s in seen for x in s if isinstance(x, m.Accepted)}
    c = read_log((data / f"{tid}.wlog").read_bytes())
    assert c.torn is None
    logged = {r.seq for r in c.records if type(r) is ActionAccepted}
    assert acked and acked <= logged, sorted(acked - logged)
    updates = max(x.seq for s in seen for x in s if isinstance(x, m.Update))
    assert replay(c).seq >= updates
