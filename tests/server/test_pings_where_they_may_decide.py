"""A seat at a fair table is pinged every PROBE_EVERY only while a ping may decide its
delay (server/fairorder.py ``Reach.ping_may_decide``; docs/ARCHITECTURE.md, "Fair
order", the ping bound): where the kernel's smallest round trip is at most every ping's,
as on Linux, at the heartbeat's pace, and a ping left unanswered still closes the
connection. At the default timers on trio's mock clock (the kernel's bound given by
``kernel_delay``), and on real sockets with this machine's kernel."""

from __future__ import annotations

import trio
from wsproto.events import CloseConnection, Ping

from wildtable.server import connection
from wildtable.server.fairorder import Reach

from serverkit import running_server
from mockclockkit import InlineWorld
from test_prober import seated_at_a_fair_table

QUICK = connection.PROBE_FIRST[1] + 1       # the ping on sitting down and the quick ones after it


def test_a_ping_may_decide_only_below_a_kernel_bound():
    assert not Reach(None, None).ping_may_decide()          # no kernel bound: no credit to lower
    assert not Reach(0.001, None).ping_may_decide()
    assert Reach(None, 0.002).ping_may_decide()             # no pong yet: not known
    assert Reach(0.001, 0.002).ping_may_decide()            # the pings' is the smaller
    assert not Reach(0.002, 0.002).ping_may_decide()
    assert not Reach(0.005, 0.002).ping_may_decide()        # the kernel's decides


async def pings_of_an_answering_seat(tmp_path, kernel, until: float) -> list[float]:
    """When (trio's clock, from the first) a seat at a fair table that answers every ping
    at once was pinged, until ``until`` s after the first; the server's kernel bound is
    ``kernel`` for every connection."""
    async with running_server(tmp_path, world=InlineWorld(), kernel_delay=lambda peer: kernel) as (server, url):
        c = await seated_at_a_fair_table(url, "answers")
        pings: list[float] = []
        while not pings or trio.current_time() - pings[0] < until:
            ev = await c.event()
            if isinstance(ev, Ping):
                pings.append(trio.current_time())
                await c.stream.send_all(c.ws.send(ev.response()))
            else:
                assert isinstance(ev, bytes), ev
    return [t - pings[0] for t in pings]


def gaps(pings: list[float]) -> list[float]:
    return [round(b - a, 3) for a, b in zip(pings, pings[1:])]


async def test_where_the_kernel_bound_is_the_smaller_pings_go_at_the_heartbeat(tmp_path, autojump_clock):
    """The kernel's bound at 0 (at most any ping's, as Linux's tcpi_min_rtt is): after the
    quick pings of sitting down, one every HEARTBEAT (20 s), not every PROBE_EVERY."""
    assert (connection.PROBE_EVERY, connection.HEARTBEAT, connection.PROBE_FIRST) == (5.0, 20.0, (0.1, 2))
    got = gaps(await pings_of_an_answering_seat(tmp_path, 0.0, 80))
    assert got[:QUICK - 1] == [0.1, 0.1], got
    assert got[QUICK - 1:] == [20.0] * 4, got


async def test_where_a_ping_may_decide_pings_go_every_probe_every(tmp_path, autojump_clock):
    """A kernel bound above the pings' (an older kernel's smoothed round trip): every
    PROBE_EVERY, as the estimate needs."""
    got = gaps(await pings_of_an_answering_seat(tmp_path, 0.05, 40))
    assert got[:QUICK - 1] == [0.1, 0.1], got
    assert got[QUICK - 1:] == [5.0] * 8, got


async def test_with_no_kernel_bound_pings_go_at_the_heartbeat(tmp_path, autojump_clock):
    """No kernel bound: no credit at all (fairorder.Reach.value), which no ping changes."""
    got = gaps(await pings_of_an_answering_seat(tmp_path, None, 40))
    assert got[QUICK - 1:] == [20.0] * 2, got


async def test_a_seat_that_stops_answering_is_still_closed(tmp_path, autojump_clock):
    """Pinged at the heartbeat's pace (the kernel decides), a seat that answered at first and
    then stops is closed 1001 at the look after its unanswered ping waited PONG_TIMEOUT:
    within PONG_TIMEOUT + PROBE_EVERY, as at any fair table."""
    async with running_server(tmp_path, world=InlineWorld(), kernel_delay=lambda peer: 0.0) as (server, url):
        c = await seated_at_a_fair_table(url, "stops")
        pings: list[float] = []
        while True:
            ev = await c.event()
            if isinstance(ev, Ping):
                pings.append(trio.current_time())
                if len(pings) <= QUICK:
                    await c.stream.send_all(c.ws.send(ev.response()))
            elif not isinstance(ev, bytes):
                break
        closed = trio.current_time()
    assert isinstance(ev, CloseConnection), ev
    assert ev.code == connection.CLOSE_GOING_AWAY and ev.reason == "no answer to ping"
    assert len(pings) == QUICK + 1
    assert connection.PONG_TIMEOUT < closed - pings[-1] <= connection.PONG_TIMEOUT + connection.PROBE_EVERY + 0.5


async def test_on_this_kernel_no_ping_goes_below_its_bound(tmp_path):
    """Real sockets, the real clock and this machine's kernel (tcpi_min_rtt): once a seat's
    quick pings are answered, its kernel bound is at most its ping bound, so it is next
    pinged a HEARTBEAT after the last, not PROBE_EVERY."""
    async with running_server(tmp_path) as (server, url):
        with trio.fail_after(20):
            c = await seated_at_a_fair_table(url, "near")
            answered = 0
            while answered < QUICK:
                ev = await c.event()
                if isinstance(ev, Ping):
                    await c.stream.send_all(c.ws.send(ev.response()))
                    answered += 1
            (conn,) = [x for x in server.connections if x.seat is not None]
            # the look that sent the last quick ping: the next one is a heartbeat away
            while server.prober.next_due() - trio.current_time() < connection.PROBE_EVERY:
                await trio.sleep(0.01)
            assert server.prober.next_due() - trio.current_time() > connection.HEARTBEAT - 1
            assert conn.reach.kernel is not None and conn.reach.ping is not None
            assert conn.reach.kernel <= conn.reach.ping, conn.reach
            assert not conn.reach.ping_may_decide()
        await c.stream.aclose()
