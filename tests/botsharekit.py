"""The share of the server's bots one address may have (serve --max-bots-per-address,
server/botseats.py): players from chosen addresses who each sit at a table of their own
and ask the server for bots there."""

from __future__ import annotations

from contextlib import AsyncExitStack

import trio

from wildtable.headless.net import Connection, connect
from wildtable.protocol import messages as m

from serverkit import create, join

SLOW = 60_000       # the bots' delay_ms: they sit and hold their seats, and play nothing while a test runs


def dial_from(source: str | None = None, proxied: str | None = None):
    """A ``dial`` for headless.net.connect: TCP to the server's port on 127.0.0.1 from
    ``source`` (any 127.x.y.z: another address, as the listener sees it), beginning with
    a PROXY protocol header naming ``proxied`` as the client if given (a trusted proxy's
    connection, with serve --trusted-proxy 127.0.0.1 --proxy-protocol)."""
    async def dial(url: str) -> trio.SocketStream:
        sock = trio.socket.socket()
        try:
            if source:
                await sock.bind((source, 0))
            await sock.connect(("127.0.0.1", int(url.rsplit(":", 1)[1])))
        except BaseException:
            sock.close()
            raise
        stream = trio.SocketStream(sock)
        if proxied:
            await stream.send_all(f"PROXY TCP4 {proxied} 127.0.0.1 40000 443\r\n".encode())
        return stream
    return dial


async def ask_bots(conn: Connection, table: str, count: int, delay_ms: int = SLOW) -> m.BotsSeated | m.Error:
    """``conn`` (seated at ``table``) asks for ``count`` easy bots: the answer."""
    await conn.send(m.SeatBots(table, count, "easy", delay_ms))
    return await conn.receive_until(lambda x: isinstance(x, (m.BotsSeated, m.Error)))


async def player(stack: AsyncExitStack, url: str, name: str, seats: int, dial=None) -> tuple[Connection, str]:
    """A connection (kept open by ``stack``) seated at seat 0 of a new Go Wild! table for
    ``seats`` with no turn timer (a seat nobody plays holds the game): it and the table."""
    conn = await stack.enter_async_context(connect(url, name, dial=dial))
    table = await create(conn, "go-wild", seats, turn_timer=0)
    await join(conn, table, 0)
    return conn, table


async def with_bots(stack: AsyncExitStack, url: str, name: str, seats: int, dial=None) -> tuple[Connection, str]:
    """``player``, who fills the other seats of the table with the server's bots."""
    conn, table = await player(stack, url, name, seats, dial)
    got = await ask_bots(conn, table, seats - 1)
    assert isinstance(got, m.BotsSeated) and len(got.seats) == seats - 1, got
    return conn, table


def over_the_share(got, mine: int, cap: int = 8) -> None:
    """``got`` is the per-address ``too_many_bots``: it says which cap, and what to do."""
    assert isinstance(got, m.Error) and (got.code, got.ref) == ("too_many_bots", "seat_bots"), got
    assert got.message.startswith(f"your address has {mine} of this server's bots playing, and one address may have "
                                  f"at most {cap} at once (serve --max-bots-per-address)"), got.message
    assert "wait until their games end" in got.message, got.message
