"""Helpers for tests that talk to a real server over real sockets on 127.0.0.1."""

from __future__ import annotations

from contextlib import asynccontextmanager

import trio

from wildtable.client.net import Connection, connect
from wildtable.protocol import messages as m
from wildtable.server.app import Server


@asynccontextmanager
async def running_server(data_dir, **kw):
    """A real server on 127.0.0.1, port chosen by the OS; shut down cleanly at exit."""
    kw.setdefault("rate_limit", 10_000.0)   # scripted players act far faster than people
    kw.setdefault("rate_burst", 10_000.0)
    server = Server(data_dir, **kw)
    async with trio.open_nursery() as nursery:
        port = await nursery.start(server.run, "127.0.0.1", 0)
        try:
            yield server, f"ws://127.0.0.1:{port}"
        finally:
            with trio.move_on_after(5):
                await server.shutdown("test over")


async def create(conn: Connection, game: str, seats: int, **settings) -> str:
    await conn.send(m.CreateTable(game, seats, settings))
    msg = await conn.receive_until(lambda x: isinstance(x, (m.TableCreated, m.Error)))
    assert isinstance(msg, m.TableCreated), msg
    return msg.table


async def join(conn: Connection, table: str, seat: int | None = None) -> m.Joined:
    await conn.send(m.Join(table, seat))
    msg = await conn.receive_until(lambda x: isinstance(x, (m.Joined, m.Error)))
    assert isinstance(msg, m.Joined), msg
    return msg


async def reply_to(conn: Connection, intent_id: int, keep: list | None = None):
    """The accepted/rejected answer to one intent (other messages go to ``keep``)."""
    return await conn.receive_until(
        lambda x: isinstance(x, (m.Accepted, m.Rejected)) and x.intent == intent_id, keep=keep)


@asynccontextmanager
async def seated(url: str, game: str, seats: int, settings: dict | None = None, names=None):
    """Open ``seats`` connections, create a table, seat everyone; yield (table, conns, joined)."""
    conns, joined = [], []
    names = names or [f"p{i}" for i in range(seats)]
    stack = []
    try:
        for i in range(seats):
            cm = connect(url, names[i])
            conn = await cm.__aenter__()
            stack.append(cm)
            conns.append(conn)
        table = await create(conns[0], game, seats, **(settings or {}))
        for i, c in enumerate(conns):
            joined.append(await join(c, table, i))
        yield table, conns, joined
    finally:
        for cm in reversed(stack):
            with trio.move_on_after(3) as s:
                s.shield = True
                try:
                    await cm.__aexit__(None, None, None)
                except Exception:
                    pass
