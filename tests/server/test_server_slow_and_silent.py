"""Peers that do not keep up: a client that never says hello, and a slow consumer whose
outbox fills. Both are closed, with their own close code; nobody else waits for them."""

from __future__ import annotations

import trio

from wildtable.headless.net import connect
from wildtable.headless.wire import ConnectionClosed, open_socket
from wildtable.protocol import messages as m
from wildtable.server.connection import HELLO_TIMEOUT, SEND_TIMEOUT
from wildtable.server.wire import CLOSE_FLUSH

from mockclockkit import OneThreadWorld
from scripted import play_all_to_end
from serverkit import running_server, seated, server_config, unread_spectator
from waitkit import wait_until


async def test_no_hello_in_time_is_an_idle_timeout(tmp_path):
    with trio.fail_after(20):
        async with running_server(server_config(tmp_path / "data", hello_timeout=0.5)) as (server, url):
            async with connect(url, None) as c:
                e = await c.receive_until(lambda x: isinstance(x, m.Error))
                assert e.code == "idle_timeout" and "hello" in e.message
                try:
                    with trio.fail_after(5):
                        while True:
                            await c.ws.get_message()
                except ConnectionClosed as closed:
                    assert closed.code == 1008


async def test_a_spectator_that_never_reads_is_closed_and_the_game_goes_on(tmp_path):
    with trio.fail_after(90):
        async with running_server(server_config(tmp_path / "data", outbox=8)) as (server, url):
            async with seated(url, "run-wild", 2) as (table, conns, joined):
                # a real socket with a tiny receive buffer, then never read from
                async with unread_spectator(url, table, "slowpoke") as ws:
                    results = await play_all_to_end(conns, joined, timeout=80)
                    # the game finished for the players although one peer never read
                    assert len(results) == 2 and all(r.over is not None for r in results)
                    assert not server.tables[table].spectators      # the slow one was dropped
                    # once it reads, what is left ends in a close for being slow (1013)
                    try:
                        with trio.fail_after(10):
                            while True:
                                await ws.get_message()
                    except ConnectionClosed as closed:
                        assert closed.code in (1013, 1006)   # 1006 when the close frame could not get through


async def test_a_peer_that_stops_taking_bytes_is_closed_after_the_send_timeout(tmp_path):
    """With room for every frame in its backlog (so it never counts as slow), a peer whose
    socket stops taking bytes is still closed once one write has waited the send timeout."""
    with trio.fail_after(90):
        async with running_server(server_config(tmp_path / "data", outbox=1_000_000, send_timeout=1.0)) as (server, url):
            async with seated(url, "run-wild", 2) as (table, conns, joined):
                async with unread_spectator(url, table, "stuck"):
                    [theirs] = [c for c in server.connections if c.name == "stuck"]
                    results = await play_all_to_end(conns, joined, timeout=80)
                    assert len(results) == 2 and all(r.over is not None for r in results)
                    # the stuck spectator is gone: closed by the send timeout, not as slow
                    await wait_until(lambda: theirs not in server.connections,
                                     timeout=10, step=0.05, what="the stuck spectator closed")
                    assert theirs.closed and not theirs.slow
                    # it leaves the table through the arbiter's inbox: soon after, not at once
                    await wait_until(lambda: not server.tables[table].spectators, timeout=10, step=0.05,
                                     what="the stuck spectator let go by the table")
                    assert not server.tables[table].spectators


async def test_frames_that_are_not_a_hello_do_not_keep_a_connection_open(tmp_path):
    """Until a hello is accepted the clock runs from the connection's start: a client
    sending only other (refused) frames is closed after the hello timeout all the same."""
    with trio.fail_after(20):
        async with running_server(server_config(tmp_path / "data", hello_timeout=1.0)) as (server, url):
            # before the connect: the server's clock for it starts at its accept, which a
            # loaded machine may take a while to reach (the handshake after it too)
            t0 = trio.current_time()
            codes, close = await refused_until_closed(url, 0.3)
            assert close == 1008
            assert "hello_first" in codes and codes[-1] == "idle_timeout"
            assert 0.9 <= trio.current_time() - t0 < 5


async def refused_until_closed(url: str, every: float) -> tuple[list[str], int]:
    """A client that sends list_tables every ``every`` s and never a hello, until the
    server closes it: (the codes of the errors it was sent, the close code)."""
    async with open_socket(url) as ws:
        codes = []
        try:
            while True:
                await ws.send_message(m.encode(m.ListTables()))
                with trio.move_on_after(every):
                    while True:
                        reply = m.decode(await ws.get_message())
                        if isinstance(reply, m.Error):
                            codes.append(reply.code)
        except ConnectionClosed as closed:
            return codes, closed.code


async def test_a_peer_that_stops_taking_bytes_is_closed_at_the_default_send_timeout(tmp_path, autojump_clock):
    """As above at the default send timeout (10 s), on trio's mock clock with the server's
    blocking calls in the task (tests/mockclockkit.py): closed once its socket took nothing
    for 10 s, neither before (it joined 10 s or more before) nor later than that after the
    game's last frame waited for it, and the close frame's own flush (2 s: it cannot go
    out to a peer that takes nothing) after that."""
    assert server_config(tmp_path).send_timeout == SEND_TIMEOUT == 10.0
    async with running_server(server_config(tmp_path / "data", outbox=1_000_000), world=OneThreadWorld()) as (server, url):
        async with seated(url, "run-wild", 2) as (table, conns, joined):
            async with unread_spectator(url, table, "stuck"):
                joined_at = trio.current_time()
                [theirs] = [c for c in server.connections if c.name == "stuck"]
                results = await play_all_to_end(conns, joined, timeout=80)
                ended = trio.current_time()
                assert len(results) == 2 and all(r.over is not None for r in results)
                await wait_until(lambda: theirs not in server.connections,
                                 timeout=SEND_TIMEOUT + 5, step=0.01, what="the stuck spectator closed")
                closed = trio.current_time()
                assert theirs.closed and not theirs.slow
                assert closed - joined_at >= SEND_TIMEOUT and closed <= ended + SEND_TIMEOUT + CLOSE_FLUSH + 0.05, \
                    (joined_at, ended, closed)


async def test_frames_that_are_not_a_hello_do_not_keep_a_connection_open_at_the_default(tmp_path, autojump_clock):
    """As above at the default hello timeout (10 s), on trio's mock clock: a client
    sending list_tables every second and never a hello is closed 10 s after it connected
    (every 0.3 s, its 21st refused frame would close it first, at 6 s: MAX_BAD_FRAMES)."""
    assert server_config(tmp_path).hello_timeout == HELLO_TIMEOUT == 10.0
    async with running_server(server_config(tmp_path / "data"), world=OneThreadWorld()) as (server, url):
        t0 = trio.current_time()
        codes, close = await refused_until_closed(url, 1.0)
        assert close == 1008
        assert "hello_first" in codes and codes[-1] == "idle_timeout"
        assert HELLO_TIMEOUT <= trio.current_time() - t0 <= HELLO_TIMEOUT + 0.05
