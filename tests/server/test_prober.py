"""Fair order's pings from one task (server/prober.py; docs/ARCHITECTURE.md, "Fair
order", the ping bound): each watched connection is pinged when it is due, again when
it says, never twice for one due time, not after it says no more, and a connection
watched again has one live entry, not two. Pure: ``run_due`` with a given ``now``; and
one server, where a seat at a fair table is pinged through the prober and one that never
answers is closed."""

from __future__ import annotations

import trio
import trio.testing

from wsproto.events import CloseConnection, Ping

from wildtable.protocol import messages as m
from wildtable.server import connection, prober
from wildtable.server.prober import Prober

from mockclockkit import InlineWorld
from rawclient import RawClient
from serverkit import running_server


class Conn:
    """A connection that asks for a ping every ``every`` seconds, ``times`` times."""

    def __init__(self, every: float, times: int):
        self.every, self.left = every, times
        self.pinged: list[float] = []

    def probe_due(self, now: float) -> float | None:
        self.pinged.append(now)
        self.left -= 1
        return now + self.every if self.left > 0 else None


def test_each_is_pinged_when_due_and_again_when_it_says():
    p = Prober()
    a, b = Conn(5.0, 3), Conn(0.1, 2)
    p.watch(a, 0.0)
    p.watch(b, 1.0)
    for now in (0.0, 0.5, 1.0, 1.05, 1.1, 5.0, 10.0, 15.0, 20.0):
        p.run_due(now)
    assert a.pinged == [0.0, 5.0, 10.0]         # then it said no more
    assert b.pinged == [1.0, 1.1]
    assert len(p) == 0 and not p._heap


def test_a_wake_serves_what_is_due_within_the_slack():
    p = Prober()
    a = Conn(5.0, 1)
    p.watch(a, 1.0 + prober.SLACK / 2)
    p.run_due(1.0)
    assert a.pinged == [1.0]


def test_watched_again_it_has_one_live_entry():
    """A connection that sits down again (attach) is watched again at once: it is pinged
    then, and its old due time does not ping it a second time."""
    p = Prober()
    a = Conn(5.0, 10)
    p.watch(a, 0.0)
    p.run_due(0.0)                  # next due at 5
    p.watch(a, 2.0)                 # sat down again: due now (2), then every 5
    for now in (2.0, 5.0, 6.0, 7.0):
        p.run_due(now)
    assert a.pinged == [0.0, 2.0, 7.0]
    assert len(p) == 1


def test_forgotten_it_is_not_pinged():
    p = Prober()
    a = Conn(5.0, 10)
    p.watch(a, 1.0)
    p.forget(a)
    p.run_due(1.0)
    assert a.pinged == [] and len(p) == 0


def test_one_that_raises_is_dropped_and_the_others_still_pinged():
    class Broken:
        def probe_due(self, now: float) -> float | None:
            raise RuntimeError("a bug")
    p = Prober()
    a = Conn(5.0, 2)
    p.watch(Broken(), 0.0)
    p.watch(a, 0.0)
    p.run_due(0.0)
    p.run_due(5.0)
    assert a.pinged == [0.0, 5.0]


def test_a_burst_is_pinged_a_slice_a_step():
    """A wake late by a second at 4,000 players finds ~800 due: 45 ms of CPU in one task
    step while every table waited. A step takes PINGS_PER_STEP at most; the task pings
    the rest after a schedule point, each connection still once."""
    p = Prober()
    conns = [Conn(5.0, 1) for _ in range(3 * prober.PINGS_PER_STEP + 5)]
    for c in conns:
        p.watch(c, 0.0)
    slices = []
    while True:
        more = p.run_due(1.0)
        slices.append(sum(len(c.pinged) for c in conns))
        if not more:
            break
    assert slices == [prober.PINGS_PER_STEP, 2 * prober.PINGS_PER_STEP, 3 * prober.PINGS_PER_STEP, len(conns)]
    assert all(c.pinged == [1.0] for c in conns)


def test_the_task_lets_others_run_between_slices():
    p = Prober(clock=lambda: 1.0)
    conns = [Conn(5.0, 1) for _ in range(3 * prober.PINGS_PER_STEP)]
    for c in conns:
        p.watch(c, 0.0)
    seen: list[int] = []

    async def other():
        await trio.lowlevel.checkpoint()        # runs once the prober's first step yields
        seen.append(sum(len(c.pinged) for c in conns))

    async def main():
        async with trio.open_nursery() as n:
            n.start_soon(p.run)
            n.start_soon(other)
            await trio.testing.wait_all_tasks_blocked()
            n.cancel_scope.cancel()
    trio.run(main)
    assert 0 < seen[0] < len(conns)             # between the slices, not after them all
    assert all(len(c.pinged) == 1 for c in conns)


async def seated_at_a_fair_table(url: str, name: str) -> RawClient:
    """A raw client that said hello, created a 2-seat Run Wild table in fair order and
    sent its join for seat 0 (its answer not read yet: pings may come first)."""
    c = await RawClient.open(int(url.rsplit(":", 1)[1]))
    await c.send(m.Hello(m.PROTOCOL_VERSION, name))
    assert isinstance(await c.message(), m.Welcome)
    await c.send(m.CreateTable("run-wild", 2, {"fair_ms": 100}))
    created = await c.message()
    assert isinstance(created, m.TableCreated), created
    await c.send(m.Join(created.table, 0))
    return c


async def mute_seat_closed(tmp_path, **runs_on) -> tuple[float, float]:
    """A client seated at a fair Run Wild table that reads but never answers a ping: it is
    pinged through the prober once (no other while that one is unanswered) and closed 1001
    "no answer to ping"; (when its ping came, when its close came) on trio's clock."""
    async with running_server(tmp_path, **runs_on) as (server, url):
        with trio.fail_after(3 * (connection.PONG_TIMEOUT + connection.PROBE_EVERY)):
            c = await seated_at_a_fair_table(url, "mute")
            pings, pinged = 0, None
            while True:
                ev = await c.event()        # pings read, never answered
                if isinstance(ev, Ping):
                    pings += 1
                    pinged = trio.current_time() if pinged is None else pinged
                    assert len(server.prober) == 1
                elif not isinstance(ev, bytes):
                    break
            closed = trio.current_time()
            assert isinstance(ev, CloseConnection), ev
            assert ev.code == connection.CLOSE_GOING_AWAY and ev.reason == "no answer to ping"
            assert pings == 1 and pinged is not None    # no other while one waits for its pong (wire.Peer.probe)
            while len(server.prober):
                await trio.sleep(0.01)      # forgotten once the connection ended
    return pinged, closed


def closed_in_time(pinged: float, closed: float) -> None:
    """Closed at the first look after PONG_TIMEOUT passed: the looks are PROBE_EVERY apart."""
    waited = closed - pinged
    assert connection.PONG_TIMEOUT < waited <= connection.PONG_TIMEOUT + connection.PROBE_EVERY + 0.5, waited


async def test_a_seat_that_never_answers_the_pings_is_closed(tmp_path, monkeypatch):
    """Seated at a fair Run Wild table, a client that never answers a ping is closed once
    it waited PONG_TIMEOUT, looked at every PROBE_EVERY: here at 1 s and 0.3 s on the wall
    clock; at the defaults below."""
    monkeypatch.setattr(connection, "PONG_TIMEOUT", 1.0)
    monkeypatch.setattr(connection, "PROBE_EVERY", 0.3)
    closed_in_time(*await mute_seat_closed(tmp_path))


async def test_a_seat_that_never_answers_is_closed_at_the_default_timers(tmp_path, autojump_clock):
    """As above at the defaults (15 s to answer, a look every 5 s), on trio's mock clock,
    which jumps to the next deadline whenever every task waits: the 15 to 20 s take no
    wall time (a real server on real sockets: the kernel hands over loopback data as it
    is sent, before the clock can jump)."""
    assert (connection.PONG_TIMEOUT, connection.PROBE_EVERY) == (15.0, 5.0)
    closed_in_time(*await mute_seat_closed(tmp_path, world=InlineWorld()))


async def test_a_seat_closed_by_the_server_is_pinged_no_more(tmp_path):
    """A seated connection the server closes (close_soon: a slow consumer, a shutdown) is
    looked at by the prober once more at most: it stops, and so does its heartbeat task,
    rather than handing it back to the prober again while the close goes out."""
    async with running_server(tmp_path) as (server, url):
        with trio.fail_after(20):
            c = await seated_at_a_fair_table(url, "ann")
            assert isinstance(await c.message(), m.Joined)
            [conn] = [x for x in server.connections if x.name == "ann"]
            while not len(server.prober):
                await trio.sleep(0.01)
            calls = []
            due = conn.probe_due

            def counted(now: float):
                calls.append(now)
                return due(now)
            conn.probe_due = counted    # type: ignore[method-assign]
            conn.close_soon(1000, "test")
            server.prober.watch(conn, trio.current_time())      # as its heartbeat would, at once
            while not isinstance(await c.event(), CloseConnection):
                pass
            await c.stream.aclose()
            while conn in server.connections:
                await trio.sleep(0.01)
            assert len(calls) <= 1, f"the prober looked at a closing connection {len(calls)} times"
            assert len(server.prober) == 0


def test_pings_served_by_late_wakes_stay_spread():
    """A wake pings every connection due within SLACK of it, and all those overdue when it
    is late (the loop busy). Each connection's next ping counts from when it was due, so
    the connections stay spread over the interval: counted from the wake, those served by
    one wake would be due together from then on, and each late wake would merge more,
    until every ping went in one burst (the tail at 4,000 players: bench/README.md, "Pings
    that stay spread")."""
    p = Prober()
    every = 5.0
    conns = [Conn(every, 10_000) for _ in range(500)]
    for i, c in enumerate(conns):
        p.watch(c, 1.0 + i * every / len(conns))     # one due every 10 ms
    now = 0.0
    served: list[int] = []
    while now < 200.0:
        # each wake 40 ms late (a busy loop); it serves ~6 due times
        now = p._heap[0][0] + 0.04
        before = sum(len(c.pinged) for c in conns)
        p.run_due(now, most=10_000)
        served.append(sum(len(c.pinged) for c in conns) - before)
    last = served[-100:]
    assert max(last) <= 8, max(last)     # (counted from the wake: 19 by 200 s, and growing)
    assert all(abs(len(c.pinged) - len(conns[0].pinged)) <= 1 for c in conns)
