"""A connection's timers at their DEFAULTS (server/connection.py), in the simulator (the
real server on a simulated network and clock; tests/simkit.py), where the real-socket
tests shorten them or cannot reach them (IDLE_TIMEOUT is no setting): no hello within
`hello_timeout` (10 s) is `idle_timeout` and a close 1008; a client that answers pings
but sends no message is told `idle_timeout` and closed (1001) after IDLE_TIMEOUT (600 s),
not before, pings and pongs not counting; one that never answers a ping is closed (1001,
"no answer to ping") within HEARTBEAT + PONG_TIMEOUT of its last word."""

import random

import trio

from wildtable.protocol import messages as m
from wildtable.server import connection
from wildtable.server.config import ServerConfig
from wildtable.sim.net import Closed
from wildtable.sim.players import Client

from simkit import one_node, simulate


async def _until_closed(c: Client) -> tuple[float, Closed, list]:
    """Read until the server closes the link: (when, the close, the errors heard)."""
    errors = []
    while True:
        try:
            msg = await c.next(timeout=10 * connection.IDLE_TIMEOUT)
        except Closed as e:
            return trio.current_time(), e, errors
        if type(msg) is m.Error:
            errors.append(msg)


def test_no_hello_in_time_is_closed_at_the_default_hello_timeout(tmp_path):
    seen = []

    async def main():
        async with one_node(tmp_path / "data", "run-wild", 2, {}) as world:
            c = Client(world, "mute", random.Random(1))
            link = world.net.connect(world.node.name, "mute", random.Random(2))
            assert link is not None
            c.end = link.client
            c.end.nursery = world.nursery
            start = trio.current_time()
            seen.append((start, *await _until_closed(c)))

    simulate(main)
    start, closed_at, closed, errors = seen[0]
    timeout = ServerConfig().hello_timeout
    assert timeout <= closed_at - start <= timeout + 1, closed_at - start
    assert closed.code == connection.CLOSE_POLICY
    assert [e.code for e in errors] == ["idle_timeout"] and "no hello within 10 s" in errors[0].message, errors


def test_a_client_that_only_answers_pings_is_closed_at_the_default_idle_timeout(tmp_path):
    seen = []

    async def main():
        async with one_node(tmp_path / "data", "run-wild", 2, {}) as world:
            c = Client(world, "quiet", random.Random(1))
            assert await c.connect()          # its hello is its last message
            said = trio.current_time()
            seen.append((said, *await _until_closed(c)))

    simulate(main)
    said, closed_at, closed, errors = seen[0]
    assert connection.IDLE_TIMEOUT <= closed_at - said <= connection.IDLE_TIMEOUT + 1, closed_at - said
    assert closed.code == connection.CLOSE_GOING_AWAY, closed
    assert [e.code for e in errors] == ["idle_timeout"], errors
    assert "no message within 600 s (pings and pongs do not count)" in errors[0].message, errors[0].message


def test_a_client_that_never_answers_a_ping_is_closed_at_the_default_timers(tmp_path):
    seen = []

    async def main():
        async with one_node(tmp_path / "data", "run-wild", 2, {}) as world:
            c = Client(world, "deaf", random.Random(1), pong_lag=10 * connection.IDLE_TIMEOUT)
            assert await c.connect()
            said = trio.current_time()
            seen.append((said, *await _until_closed(c)))

    simulate(main)
    said, closed_at, closed, errors = seen[0]
    assert connection.PONG_TIMEOUT <= closed_at - said <= connection.HEARTBEAT + connection.PONG_TIMEOUT + 1, \
        closed_at - said
    assert (closed.code, closed.reason) == (connection.CLOSE_GOING_AWAY, "no answer to ping"), closed
