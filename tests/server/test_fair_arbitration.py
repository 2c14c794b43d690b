"""Fair order at a Run Wild table (issue #16): intents apply in the order players acted,
arrival corrected for each connection's measured delay, up to the table's fair_ms.

The delay is real: the far player's connection goes through a proxy on 127.0.0.1 that
forwards each direction's bytes 100 ms late (tests/delayproxy.py), so the server's
WebSocket ping measures it as it would over a network; the near player connects
directly. Both race to take the spare card of a four-card set on the table: the far
player sends first, the near one 25 ms later, so the near one's intent arrives first.
By arrival (fair_ms 0) the near player wins; within the cap the far player's earlier
intent wins although it arrived later; beyond the cap (fair_ms 10, far less than its
delay) the far player is made up for 10 ms only, and the near player wins again."""

from __future__ import annotations

import pytest
import trio

from wildtable.headless.net import connect
from wildtable.protocol import messages as m
from wildtable.protocol.engine import state_hash
from wildtable.protocol.logfmt import ActionAccepted, IntentRejected, read_log
from wildtable.protocol.replay import replay

from wildtable.client.viewer import Timeline

from delayproxy import delayed, kernel_delay
from serverkit import create, join, ready_all, reply_to, running_server

# alone under pytest -n (tests/conftest.py): the race is decided by 25 ms and a measured delay
pytestmark = pytest.mark.alone

FAR = 0.100                 # the far player's one-way delay (s)
LEAD = 0.025                # the far player sends this long before the near one
FIVES = (4, 16, 28, 40)     # the four 5s: seat 0 melds them, both race for 40


def scripted(size: int) -> tuple[int, ...]:
    """Seat 0 deals (a draw among the seats: the identity); round 1's deck gives seat 0
    the four 5s (its hand is deck positions 1, 3, 5, 7, ...)."""
    if size != 72:
        return tuple(range(size))
    rest = iter(c for c in range(72) if c not in FIVES)
    return tuple(FIVES[pos // 2] if pos % 2 == 1 and pos < 8 else next(rest) for pos in range(72))


async def _until(conn, pred) -> m.Update:
    return await conn.receive_until(lambda x: isinstance(x, m.Update) and pred(x.view))


async def leave(conn) -> None:
    """Leave the table before closing: no more pings a second, so none can reach the
    client while it closes (trio-websocket, the client's library, then fails sending the
    pong: LocalProtocolError in state LOCAL_CLOSING)."""
    await conn.send(m.Leave())
    await conn.receive_until(lambda x: isinstance(x, m.Left))


def _meld_of_four(view) -> dict | None:
    return next((md for md in view.get("melds", ()) if sorted(md["cards"]) == sorted(FIVES)), None)


async def _race(tmp_path, fair_ms: int):
    """Play the race at a table with ``fair_ms``; return (the winner and the seq it was
    told, the log's records, the live and the replayed state's hashes)."""
    data = tmp_path / "data"
    async with running_server(data, chance=scripted, kernel_delay=kernel_delay) as (server, url):
        async with delayed(url, FAR) as far_url:
            async with connect(url, "near") as near, connect(far_url, "far") as far:
                table = await create(near, "run-wild", 2, fair_ms=fair_ms)
                await join(near, table, 0)
                await join(far, table, 1)
                await ready_all([near, far])
                await _until(near, lambda v: v.get("phase") == "playing")
                await _until(far, lambda v: v.get("phase") == "playing")
                live = server.tables[table]
                if fair_ms:
                    # the server has measured the far connection (five pings 0.1 s apart on sitting down)
                    while live.seats[1].conn.delay < 0.9 * FAR:
                        await trio.sleep(0.05)
                    assert live.seats[0].conn.delay < 0.02
                await near.send(m.Intent(1, {"kind": "meld", "cards": list(FIVES)}))
                assert isinstance(await reply_to(near, 1), m.Accepted)
                meld = _meld_of_four((await _until(near, _meld_of_four)).view)
                await _until(far, _meld_of_four)
                take = {"kind": "take", "meld": meld["id"], "card": 40}
                await far.send(m.Intent(2, take))
                await trio.sleep(LEAD)
                await near.send(m.Intent(2, take))
                answers = {"near": await reply_to(near, 2), "far": await reply_to(far, 2)}
                won = [who for who, a in answers.items() if isinstance(a, m.Accepted)]
                assert len(won) == 1, answers
                live_hash = state_hash(live.game, live.state)
                live_seq = live.seq
                for conn in (near, far):
                    await leave(conn)
    contents = read_log((data / f"{table}.wlog").read_bytes())
    replayed = replay(contents)
    assert replayed.seq == live_seq
    return (won[0], answers[won[0]].seq), contents, live_hash, state_hash(replayed.game, replayed.state)


def _takes(records):
    """The two take intents' records (intent 2 of each seat), by seat."""
    out = {}
    for r in records:
        if type(r) in (ActionAccepted, IntentRejected) and r.intent == 2 and r.action.get("kind") == "take":
            out[r.seat] = r
    return out


@pytest.mark.parametrize("fair_ms, winner", [(0, "near"), (200, "far"), (10, "near")],
                         ids=["arrival-order", "within-the-cap", "beyond-the-cap"])
async def test_the_earlier_sent_intent_wins_within_the_cap(tmp_path, fair_ms, winner):
    with trio.fail_after(60):
        (won, won_seq), contents, live_hash, replayed_hash = await _race(tmp_path, fair_ms)
    records = contents.records
    takes = _takes(records)
    assert set(takes) == {0, 1}, records
    near, far = takes[0], takes[1]
    # the near player's intent arrived first in every case
    assert near.recv < far.recv
    assert won == winner, (won, near, far)
    winner_rec, loser_rec = (far, near) if winner == "far" else (near, far)
    # the log's order is the order applied: the winner's take is the action record of the
    # seq it was told, the loser's a refusal checked against the state after it
    assert type(winner_rec) is ActionAccepted and winner_rec.seq == won_seq
    assert type(loser_rec) is IntentRejected and loser_rec.after >= won_seq
    if fair_ms:
        # the log explains the order: each intent's delay estimate, send time and hold
        assert far.delay >= 0.9 * FAR and near.delay < 0.02
        cap = fair_ms / 1000
        assert far.sent == pytest.approx(far.recv - min(far.delay, cap), abs=1e-6)
        assert near.sent == pytest.approx(near.recv - near.delay, abs=1e-6)
        # the hold: twice the largest delay (capped) of the other seat
        assert near.hold == pytest.approx(2 * min(far.delay, cap), abs=0.01)
        assert far.hold == pytest.approx(2 * near.delay, abs=0.01)
        # the replay viewer shows them, and says whose earlier arrival the far intent overtook
        timeline = Timeline(contents)
        i = next(k for k, step in enumerate(timeline.steps) if step.record is far)
        shown = "\n".join(timeline.detail_lines(i))
        assert "delay estimate" in shown and "sent" in shown, shown
        assert ("went ahead of" in shown) == (winner == "far"), shown
    else:
        assert far.delay is None and far.sent is None and far.hold is None
    # replay rebuilds the live state
    assert live_hash == replayed_hash
    seqs = [r.seq for r in records if type(r) is ActionAccepted]
    assert seqs == sorted(seqs)
