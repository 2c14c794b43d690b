"""A lying client cannot buy a head start in fair order (issue #24, server/fairorder.py).

The adversary: a client on the same loopback as an honest one, holding every pong 200 ms
(tests/delayproxy.py holds its pong frames: the server sees exactly what a modified
client would send), so its WebSocket round trip says 200 ms. Under the old rule (credit:
half the smallest ping round trip, up to fair_ms) it was credited 100 ms and beat an
honest player who sent up to 200 ms earlier. Here the honest player sends first, the liar
LEAD later, race after race, at the default fair_ms: the kernel's round trip (TCP_INFO,
read by the server itself, not the proxy-aware hook) caps the liar's credit, and the
honest player wins every race."""

from __future__ import annotations

import pytest
import trio

from wildtable.headless.net import connect
from wildtable.protocol import messages as m
from wildtable.protocol.logfmt import ActionAccepted, IntentRejected, read_log

from delayproxy import delayed
from serverkit import create, join, ready_all, reply_to, running_server
from test_fair_arbitration import FIVES, _meld_of_four, _until, leave, scripted

pytestmark = pytest.mark.alone      # decided by LEAD ms: alone under pytest -n

PONG_HOLD = 0.200
LEAD = 0.030            # the honest player sends this long before the liar
RACES = 3


async def test_late_pongs_do_not_win_races(tmp_path):
    data = tmp_path / "data"
    with trio.fail_after(40):
        async with running_server(data, chance=scripted) as (server, url):
            async with delayed(url, 0.0, pong_hold=PONG_HOLD) as liar_url:
                async with connect(url, "honest") as honest, connect(liar_url, "liar") as liar:
                    table = await create(honest, "run-wild", 2)      # fair_ms: the default, 100
                    await join(honest, table, 0)
                    await join(liar, table, 1)
                    await ready_all([honest, liar])
                    for c in (honest, liar):
                        await _until(c, lambda v: v.get("phase") == "playing")
                    live = server.tables[table]
                    assert live.fair == 0.100
                    # the lie took: the liar's ping bound says ~100 ms one way
                    while live.seats[1].conn.reach.ping is None or live.seats[1].conn.reach.ping < 0.09:
                        await trio.sleep(0.02)
                    await honest.send(m.Intent(1, {"kind": "meld", "cards": list(FIVES)}))
                    assert isinstance(await reply_to(honest, 1), m.Accepted)
                    meld = _meld_of_four((await _until(honest, _meld_of_four)).view)
                    take = {"kind": "take", "meld": meld["id"], "card": 40}
                    wins = []
                    iid = 2
                    for _ in range(RACES):
                        await _until(liar, _meld_of_four)
                        await honest.send(m.Intent(iid, take))
                        await trio.sleep(LEAD)
                        await liar.send(m.Intent(iid, take))
                        h, lie = await reply_to(honest, iid), await reply_to(liar, iid)
                        assert isinstance(h, m.Accepted) != isinstance(lie, m.Accepted), (h, lie)
                        winner = honest if isinstance(h, m.Accepted) else liar
                        wins.append("honest" if winner is honest else "liar")
                        await winner.send(m.Intent(iid + 1, {"kind": "add", "meld": meld["id"], "card": 40}))
                        assert isinstance(await reply_to(winner, iid + 1), m.Accepted)
                        await _until(honest, lambda v: _meld_of_four(v) is not None)
                        iid += 2
                    for c in (honest, liar):
                        await leave(c)
    assert wins == ["honest"] * RACES, wins
    # the log says why: the liar's credit was the kernel's few microseconds, not its pongs' 100 ms
    records = read_log((data / f"{table}.wlog").read_bytes()).records
    liar_takes = [r for r in records if type(r) in (ActionAccepted, IntentRejected) and r.seat == 1
                  and r.action.get("kind") == "take"]
    assert len(liar_takes) == RACES
    assert all(r.delay < 0.005 and r.recv - r.sent < 0.005 for r in liar_takes), liar_takes
