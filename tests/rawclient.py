"""A WebSocket client over a plain socket that reads only when told to, and parses with
wsproto, so a test sees the server's bytes as they are (a garbled stream shows as a
protocol error, a missing close frame as "eof"). For tests of the server's write path."""

from __future__ import annotations

import socket
from collections import deque

import trio
from wsproto import ConnectionType, WSConnection
from wsproto.events import AcceptConnection, BytesMessage, Ping, Request
from wsproto.utilities import RemoteProtocolError

from wildtable.headless.net import connect
from wildtable.protocol import messages as m


class RawClient:
    """A WebSocket client over a plain socket (optionally with a tiny receive buffer)
    that reads only when told to."""

    def __init__(self, stream: trio.SocketStream):
        self.stream = stream
        self.ws = WSConnection(ConnectionType.CLIENT)
        self.events: deque = deque()
        self.parts: list[bytes] = []

    @classmethod
    async def open(cls, port: int, rcvbuf: int | None = None) -> "RawClient":
        sock = trio.socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if rcvbuf:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        await sock.connect(("127.0.0.1", port))
        self = cls(trio.SocketStream(sock))
        await self.stream.send_all(self.ws.send(Request(host="127.0.0.1", target="/")))
        assert isinstance(await self.event(), AcceptConnection)
        return self

    async def send(self, msg) -> None:
        await self.stream.send_all(self.ws.send(BytesMessage(m.encode(msg))))

    async def event(self):
        """The next event: a whole message as bytes, a CloseConnection, or "eof"."""
        while True:
            while self.events:
                ev = self.events.popleft()
                if isinstance(ev, BytesMessage):
                    self.parts.append(ev.data)
                    if ev.message_finished:
                        data, self.parts = b"".join(self.parts), []
                        return data
                    continue
                return ev
            try:
                data = await self.stream.receive_some(65536)
            except trio.BrokenResourceError:
                data = b""
            if not data:
                return "eof"
            self.ws.receive_data(data)
            self.events.extend(self.ws.events())

    async def message(self):
        """The next message; a ping before it is answered, as any client does (a seat at
        a Run Wild table in fair order is pinged at once and then every few seconds)."""
        ev = await self.event()
        while isinstance(ev, Ping):
            await self.stream.send_all(self.ws.send(ev.response()))
            ev = await self.event()
        assert isinstance(ev, bytes), ev
        return m.decode(ev)


async def make_tables(url: str, count: int) -> None:
    """``count`` open tables with long names, so that a table_list answer is ~6 kB."""
    async with connect(url, "maker") as c:
        for i in range(count):
            await c.send(m.CreateTable("run-wild", 2, {}, f"{i:03d}" + "x" * 57))
            await c.receive_until(lambda x: isinstance(x, m.TableCreated))


def count_sends(conn) -> list:
    """The sizes of the frames the server hands to ``conn.send_bytes`` from now on (the
    real method still runs): a test can wait until the server has answered."""
    calls = []
    orig = conn.send_bytes

    def counting(data):
        calls.append(len(data))
        orig(data)
    conn.send_bytes = counting
    return calls


async def small_buffered_client(server, port: int, name: str) -> tuple[RawClient, object]:
    """A client with tiny buffers both ways (4 kB: its receive buffer, the server's send
    buffer to it) that has said hello as ``name``; returns it and the server's connection."""
    raw = await RawClient.open(port, rcvbuf=4096)
    await raw.send(m.Hello(m.PROTOCOL_VERSION, name, ""))
    assert isinstance(await raw.message(), m.Welcome)
    [conn] = [c for c in server.connections if c.name == name]
    conn.peer._sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
    return raw, conn


async def stuck_client(server, port: int, name: str, table: str | None = None) -> RawClient:
    """A client with tiny buffers that asked for more than its socket holds and does not
    read: its writer is blocked mid-write and frames wait in its backlog. The server's
    connection to it is ``raw.conn``; how many list_tables it sent, ``raw.sent``."""
    raw, conn = await small_buffered_client(server, port, name)
    if table is not None:
        await raw.send(m.Spectate(table))
    calls = count_sends(conn)
    sent = 0
    while not (conn.peer.backlog and conn.peer._flushing):
        assert sent < 2000
        await raw.send(m.ListTables())
        sent += 1
        while len(calls) < sent:
            await trio.sleep(0.001)
    raw.conn, raw.sent = conn, sent
    return raw


async def whole_messages_then_close(raw: RawClient, kind: type) -> tuple[int, object]:
    """Read until something other than a message arrives: every message must be a whole
    ``kind``; returns how many there were and what ended them (a close frame, or "eof").
    A garbled stream (a frame cut short, another written inside it) fails the test."""
    got = 0
    try:
        while True:
            ev = await raw.event()
            if not isinstance(ev, bytes):
                return got, ev
            assert isinstance(m.decode(ev), kind)
            got += 1
    except RemoteProtocolError as e:
        raise AssertionError(f"garbled stream after {got} whole frames: {e}") from None
