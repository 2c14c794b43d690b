"""Caps on what a stranger can make the listener hold, tried with raw sockets:

- connections still in the opening handshake count against ``max_handshakes`` (default
  128); over it a new TCP connection gets ``HTTP/1.1 503`` and is closed at once;
- a handshake that does not complete is closed after ``handshake_timeout`` (default 10 s);
- ``max_per_address`` (default 32, 0: no cap) connections from one IP; beyond it, 503.

Attackers bind to other loopback addresses (127.x.y.z) so that they and the well-behaved
player (127.0.0.1, hostilekit.steady_player) are different addresses."""

from __future__ import annotations

import pytest
import trio

from wildtable.server.listener import HANDSHAKE_TIMEOUT

from hostilekit import (Gone, Raw, Sockets, ends_within, port_of, refused_503, said_hello, serve_process,
                        steady_player, under_attack, upgraded)
from mockclockkit import OneThreadWorld
from serverkit import server_config

HALF = b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"     # and no more


async def half_open(port: int, source: str | None = None) -> Raw:
    raw = await Raw.open(port, source=source)
    await raw.send(HALF)
    return raw


async def admitted(port: int, source: str | None = None, tries: float = 3) -> Raw:
    """A connection from ``source`` completes its handshake, retrying for up to ``tries`` s
    (a slot given back is noticed by the server a moment after the close)."""
    last = None
    with trio.move_on_after(tries):
        while True:
            try:
                return await upgraded(port, source=source)
            except (AssertionError, OSError, Gone) as e:      # a 503 or a reset meanwhile
                last = e
                await trio.sleep(0.1)
    raise AssertionError(f"no connection from {source or '127.0.0.1'} admitted within {tries:g} s: {last!r}")


async def test_over_the_handshake_cap_a_new_connection_gets_503_at_once(tmp_path):
    with trio.fail_after(30):
        async with under_attack(server_config(tmp_path / "data", max_handshakes=8, max_per_address=0, handshake_timeout=5)) as (server, url, port), Sockets() as held:
            held += [await half_open(port, "127.0.0.2") for _ in range(8)]
            # all eight are in their handshake: a stand-in for a condition the server does not
            # show (its count of handshakes is the listener's own), and a probe cannot ask
            # without taking a place itself; margin: it reads a half request at once
            await trio.sleep(0.3)
            for _ in range(3):
                await refused_503(port, "127.0.0.3")
            # one of the eight leaves: its place is free again
            held.pop().close()
            (await admitted(port, "127.0.0.3")).close()


async def test_a_handshake_that_does_not_complete_is_closed_after_the_timeout(tmp_path):
    with trio.fail_after(30):
        async with under_attack(server_config(tmp_path / "data", handshake_timeout=1.0)) as (server, url, port), Sockets() as conns:
            started = trio.current_time()
            for _ in range(5):
                conns.append(await half_open(port, "127.0.0.2"))
            for _ in range(3):
                conns.append(await Raw.open(port, source="127.0.0.2"))     # not a byte
            async with trio.open_nursery() as n:
                for r in conns:
                    n.start_soon(ends_within, r, 4.0, "in its handshake (timeout 1 s)")
            # not before its time: the timeout is the handshake's whole life
            assert trio.current_time() - started >= 0.9
            (await said_hello(port)).close()


async def test_a_handshake_that_does_not_complete_is_closed_at_the_default_timeout(tmp_path, autojump_clock):
    """As above at serve's default (10 s), on trio's mock clock, which jumps to the next
    deadline whenever every task waits (the kernel hands loopback data over as it is sent,
    and the server's blocking calls run in the task: OneThreadWorld): each closed 10 s
    after it connected, not before."""
    assert server_config(tmp_path).handshake_timeout == HANDSHAKE_TIMEOUT == 10.0
    async with under_attack(server_config(tmp_path / "data"), world=OneThreadWorld()) as (server, url, port):
        async def closed_after(raw: Raw, opened: float) -> None:
            with raw:
                await ends_within(raw, HANDSHAKE_TIMEOUT + 1, f"in its handshake (timeout {HANDSHAKE_TIMEOUT:g} s)")
            assert HANDSHAKE_TIMEOUT <= trio.current_time() - opened <= HANDSHAKE_TIMEOUT + 0.05

        async with trio.open_nursery() as n:
            for i in range(4):
                opened = trio.current_time()
                raw = await (half_open(port, "127.0.0.2") if i % 2 else Raw.open(port, source="127.0.0.2"))
                n.start_soon(closed_after, raw, opened)
                await trio.sleep(3.0)       # each on its own clock: 0, 3, 6, 9 s
        (await said_hello(port)).close()


async def test_200_half_open_handshakes_leave_the_server_responsive(tmp_path):
    """200 connections that send half a request and stall (the default cap of 128, ten
    addresses so the per-address cap stays out of it): those over the cap get 503 at once,
    the well-behaved player plays on, and the rest are closed after the handshake timeout."""
    with trio.fail_after(40):
        async with under_attack(server_config(tmp_path / "data", handshake_timeout=2.0)) as (server, url, port), \
                Sockets() as conns:
            for i in range(200):
                conns.append(await half_open(port, f"127.0.1.{i % 10 + 1}"))
            refused = []

            async def first_answer(r: Raw) -> None:
                with trio.move_on_after(1.0):
                    head = await r.read_head()
                    assert head.status == 503, head.raw
                    refused.append(r)
                    await ends_within(r, 2, "after its 503")
            async with trio.open_nursery() as n:
                for r in conns:
                    n.start_soon(first_answer, r)
            assert len(refused) >= 200 - 128, f"only {len(refused)} of 200 half-open handshakes refused over a cap of 128"
            assert len(refused) <= 200 - 128 + 10, f"{len(refused)} of 200 refused: the cap is 128"
            # the rest: closed once the handshake timeout (2 s) has passed
            async with trio.open_nursery() as n:
                for r in conns:
                    if r not in refused:
                        n.start_soon(ends_within, r, 5.0, "in its handshake (timeout 2 s)")
            (await admitted(port)).close()


async def test_beyond_the_per_address_cap_a_connection_gets_503(tmp_path):
    with trio.fail_after(30):
        async with under_attack(server_config(tmp_path / "data", max_per_address=4)) as (server, url, port), Sockets() as mine:
            for i in range(4):
                mine.append(await said_hello(port, f"a{i}", source="127.0.0.2"))
            await refused_503(port, "127.0.0.2")
            await refused_503(port, "127.0.0.2")
            # another address is not affected
            (await said_hello(port, "other", source="127.0.0.3")).close()
            # one leaves: its address may connect again
            mine.pop().close()
            mine.append(await admitted(port, "127.0.0.2"))
            await refused_503(port, "127.0.0.2")


@pytest.mark.parametrize("cap, admitted_count, then", [(None, 32, 503), (0, 40, None)], ids=["default 32", "0 is no cap"])
async def test_the_per_address_cap_default_and_0(tmp_path, cap, admitted_count, then):
    kw = {} if cap is None else {"max_per_address": cap}
    with trio.fail_after(30):
        async with under_attack(server_config(tmp_path / "data", **kw)) as (server, url, port), Sockets() as mine:
            for _ in range(admitted_count):
                mine.append(await upgraded(port, source="127.0.0.4"))
            if then == 503:
                await refused_503(port, "127.0.0.4")
            else:
                (await said_hello(port, "one more", source="127.0.0.4")).close()


async def test_the_serve_flags_set_the_caps(tmp_path):
    """`wildtable serve --max-per-address 2 --max-handshakes 3`, as a real process."""
    with trio.fail_after(40):
        async with serve_process(tmp_path / "data", "--max-per-address", "2", "--max-handshakes", "3") as srv, \
                steady_player(srv.url), Sockets() as held:
            port = port_of(srv.url)
            for i in range(2):
                held.append(await said_hello(port, f"a{i}", source="127.0.0.2"))
            await refused_503(port, "127.0.0.2")
            for i in range(3):
                held.append(await half_open(port, f"127.0.0.{3 + i}"))
            await trio.sleep(0.3)       # the three in their handshake: as above, nothing to wait on
            await refused_503(port, "127.0.0.9")
