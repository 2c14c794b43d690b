"""The client's network side, plain Trio: one connection to a server, messages in and out.

Used by the terminal UI, the line mode, the bots, the load generator and the tests.
``Session`` keeps a mirror of what the server said this seat may know.
"""

from __future__ import annotations

from contextlib import asynccontextmanager
from typing import Any, Awaitable, Callable

import attrs
import trio

from wildtable.protocol import messages as m
from wildtable.protocol.codec import MAX_SERVER_FRAME
from wildtable.protocol.errors import ProtocolError
from wildtable.protocol.views import ViewMirror

from .wire import ConnectionClosed, open_socket

DEFAULT_URL = "ws://127.0.0.1:8765"
REPLY_TIMEOUT = 10.0


def url_problem(url: str) -> str | None:
    """Why ``url`` cannot be a server address (a sentence), or None."""
    from urllib.parse import urlsplit
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return f"bad server address {url!r}: the port must be a number from 1 to 65535"
    if parts.scheme not in ("ws", "wss"):
        return f"bad server address {url!r}: it must start with ws:// or wss://, e.g. {DEFAULT_URL}"
    if not parts.hostname:
        return f"bad server address {url!r}: no host, e.g. {DEFAULT_URL}"
    if port == 0:
        return f"bad server address {url!r}: the port must be a number from 1 to 65535"
    return None


class CannotConnect(Exception):
    """The first connection to the server failed (later drops are retried, not raised)."""


class NotConnected(Exception):
    """No connection right now (the core is reconnecting); the message says so."""


class NotOurServer(Exception):
    """The peer speaks WebSocket but is not a wildtable server (it answered our hello with
    something else); the message says what."""


class ServerError(Exception):
    def __init__(self, error: m.Error):
        self.error = error
        self.code = error.code
        super().__init__(f"{error.code}: {error.message}")


class Connection:
    """A raw, decoded message stream to a server."""

    def __init__(self, ws):
        self.ws = ws
        # updates arrive as patches against what this connection received last: made
        # whole here, so whatever reads them gets whole views (protocol/views.py)
        self.views = ViewMirror()

    async def send(self, message: Any) -> None:
        await self.ws.send_message(m.encode(message))

    async def send_raw(self, data: bytes | str) -> None:
        await self.ws.send_message(data)

    async def receive(self) -> Any:
        data = await self.ws.get_message()
        if isinstance(data, str):
            raise ProtocolError("text_frame", "server sent a text frame")
        return self.views.fill(m.decode(data, max_size=MAX_SERVER_FRAME))

    async def receive_until(self, pred: Callable[[Any], bool], timeout: float = REPLY_TIMEOUT,
                            keep: list | None = None) -> Any:
        """Receive until ``pred(msg)``; the others are appended to ``keep`` if given."""
        with trio.fail_after(timeout):
            while True:
                msg = await self.receive()
                if pred(msg):
                    return msg
                if keep is not None:
                    keep.append(msg)

    async def hello(self, name: str) -> m.Welcome:
        """Say hello; a wildtable server answers first with welcome (or an error). Any other
        answer (our own hello echoed, a text frame, bytes that are no message of ours) or
        none at all means the peer is not a wildtable server: NotOurServer."""
        try:
            await self.send(m.Hello(m.PROTOCOL_VERSION, name, "wildtable-client"))
        except ConnectionClosed:
            pass            # closed as we came (a full server): what it said first comes below
        try:
            with trio.fail_after(REPLY_TIMEOUT):
                msg = await self.receive()
        except trio.TooSlowError:
            raise NotOurServer(f"it accepted a WebSocket but did not answer the hello in {REPLY_TIMEOUT:g} s; "
                               f"it does not look like a wildtable server") from None
        except ProtocolError:
            raise NotOurServer("it is not a wildtable server: it answered the hello with something that is "
                               "not a wildtable message (a WebSocket server of another kind?)") from None
        if isinstance(msg, m.Error):
            raise ServerError(msg)
        if isinstance(msg, m.Goodbye):          # it is shutting down as we arrive
            raise ServerError(m.Error("goodbye", f"the server says goodbye: {msg.reason}"))
        if not isinstance(msg, m.Welcome):
            what = "our own hello, echoed" if isinstance(msg, m.Hello) else f"a {type(msg).TAG} message"
            raise NotOurServer(f"it is not a wildtable server: it answered the hello with {what} "
                               f"(a WebSocket server of another kind?)")
        return msg

    async def ping(self, timeout: float = REPLY_TIMEOUT) -> None:
        """A WebSocket ping; trio.TooSlowError if no pong comes back in time."""
        with trio.fail_after(timeout):
            await self.ws.ping()

    async def close(self) -> None:
        """The close handshake, bounded and shielded (headless/wire.py)."""
        await self.ws.aclose()


# dial(url): a stream already connected to the server at url, or None for the usual TCP
# (the server's own bots reach it over a socketpair: server/botseats.py)
Dial = Callable[[str], Awaitable["trio.abc.Stream | None"]]


@asynccontextmanager
async def connect(url: str, name: str | None = None, *, dial: Dial | None = None):
    """Open a connection and (if ``name``) say hello."""
    stream = None if dial is None else await dial(url)
    async with open_socket(url, stream) as ws:
        conn = Connection(ws)
        if name is not None:
            await conn.hello(name)
        yield conn


@attrs.define
class Mirror:
    """What the server told one seat (or spectator) about one table."""
    table: str | None = None
    game: str | None = None
    seat: int | None = None
    token: str | None = None
    seq: int = 0
    view: dict = attrs.Factory(dict)
    players: tuple = ()
    events: list = attrs.Factory(list)     # recent public events, newest last
    over: m.GameOver | None = None

    def absorb(self, msg: Any) -> None:
        """Fold one server message into the mirror."""
        if isinstance(msg, m.Joined):
            self.table, self.game, self.seat, self.token = msg.table, msg.game, msg.seat, msg.token
            self.seq, self.view, self.players, self.over = msg.seq, msg.view, msg.players, None
        elif isinstance(msg, m.Spectating):
            self.table, self.game, self.seat, self.token = msg.table, msg.game, None, None
            self.seq, self.view, self.players, self.over = msg.seq, msg.view, msg.players, None
        elif isinstance(msg, m.Update):
            if msg.seq > self.seq:      # (whole: Connection.receive makes patches whole)
                self.seq, self.view = msg.seq, msg.view if msg.view is not None else self.view
                self.events.extend(msg.events)
                del self.events[:-200]
        elif isinstance(msg, m.Players):
            self.players = msg.players
        elif isinstance(msg, m.GameOver):
            self.over = msg
        elif isinstance(msg, m.Left):
            self.table = self.seat = self.token = None
            self.view = {}
