"""The server's listener: the listening sockets, the caps on what a stranger can make
them hold (connections in their opening handshake, connections per address), the opening
handshake with its Origin check, a trusted reverse proxy's connection (its forwarding
header, or a PROXY protocol header) and the server's connections to itself. Apart from
wire.py, which serves one accepted WebSocket (server/wire.py's Peer), so each module has one
job (docs/ARCHITECTURE.md, "The WebSocket layer"); wire.py still names serve, Limits and
these constants for the callers that know them as ``wire.*``.
"""

from __future__ import annotations

import errno
import logging
import socket
from typing import Awaitable, Callable, Collection
from urllib.parse import urlsplit

import attrs
import trio
from websockets.http11 import Request, Response
from websockets.server import ServerProtocol

from wildtable.protocol.codec import MAX_FRAME

from . import proxyproto
from .forwarded import Address, TrustedProxies
from .wire import RECV_SIZE, ConnectionClosed, Peer, SendStalled, host_port
from .oplog import about

log = logging.getLogger("wildtable.server")
# websockets logs every open and close at INFO; ours says what matters
_ws_log = logging.getLogger("wildtable.server.websocket")
_ws_log.setLevel(logging.WARNING)

HANDSHAKE_TIMEOUT = 10.0     # seconds for a new connection to complete its opening handshake
HANDSHAKE_MAX_BYTES = 16 * 1024   # the request head, at most
MAX_HANDSHAKES = 128         # connections in their opening handshake at once
MAX_PER_ADDRESS = 32         # connections from one IP address at once (0: no cap)


@attrs.frozen
class Limits:
    """What the listener admits. ``allow_origins``: browser origins (``scheme://host[:port]``)
    allowed besides the server's own host."""

    max_handshakes: int = MAX_HANDSHAKES
    max_per_address: int = MAX_PER_ADDRESS
    handshake_timeout: float = HANDSHAKE_TIMEOUT
    # kept as browsers send an Origin: lowercase, no trailing slash (the operator may type
    # either: scheme and host are case-insensitive)
    allow_origins: tuple[str, ...] = attrs.field(
        default=(), converter=lambda names: tuple(o.strip().rstrip("/").lower() for o in names))
    # the origins allowed now besides those (a node of a cluster: the pages its live peer
    # nodes serve, server/cluster.py); asked at each handshake that names an Origin
    peer_origins: Callable[[], Collection[str]] | None = None
    # the reverse proxies whose forwarding header names the client (serve --trusted-proxy)
    trusted: TrustedProxies = TrustedProxies()
    # connections from those proxies begin with a PROXY protocol header (serve --proxy-protocol)
    proxy_protocol: bool = False

class _Gate:
    """Counts what a stranger can make the listener hold: connections in their handshake,
    and connections per address. A trusted proxy's connection counts in the handshake at
    once, and against its client's address once its request head names the client."""

    def __init__(self, limits: Limits):
        self.limits = limits
        self.handshaking = 0
        self.per_address: dict[str, int] = {}

    def refusal(self, host: str | None) -> str | None:
        """Why a new connection from ``host`` (None: a trusted proxy's) is refused, if it is."""
        lim = self.limits
        if self.handshaking >= lim.max_handshakes:
            return f"too many connections opening at once (at most {lim.max_handshakes}); try again in a moment"
        return None if host is None else self.over(host)

    def over(self, host: str) -> str | None:
        lim = self.limits
        if lim.max_per_address and self.per_address.get(host, 0) >= lim.max_per_address:
            return (f"too many connections from your address (at most {lim.max_per_address}); "
                    "close some, or ask the operator to raise --max-per-address")
        return None

    def admit(self, host: str | None) -> None:
        self.handshaking += 1
        if host is not None:
            self.count(host)

    def count(self, host: str) -> None:
        self.per_address[host] = self.per_address.get(host, 0) + 1

    def release(self, host: str) -> None:
        n = self.per_address[host] - 1
        if n:
            self.per_address[host] = n
        else:
            del self.per_address[host]


def _http_response(status: int, phrase: str, text: str) -> bytes:
    body = text.encode()
    return (f"HTTP/1.1 {status} {phrase}\r\nConnection: close\r\nContent-Type: text/plain; charset=utf-8\r\n"
            f"Content-Length: {len(body)}\r\n\r\n").encode() + body


def _refuse_now(sock: socket.socket, why: str) -> None:
    """Over a cap: answer 503 without waiting for anything, and drop the connection."""
    try:
        try:
            sock.recv(RECV_SIZE)        # what arrived already; unread, it would make close() reset
        except OSError:
            pass
        sock.send(_http_response(503, "Service Unavailable", why + "\n"))
        sock.shutdown(socket.SHUT_WR)
    except OSError:
        pass
    sock.close()


def _origin_allowed(request: Request, limits: Limits) -> str | None:
    """None if the request may open a WebSocket; else why not. A browser names the page
    that opened the socket in Origin; any page on the web could drive the server from a
    player's browser, so only the server's own host (or an origin the operator allowed)
    may. A client that is not a browser sends no Origin."""
    origin = request.headers.get("Origin")
    if origin is None:
        return None
    named = origin.strip().lower()
    if named in limits.allow_origins:
        return None
    if limits.peer_origins is not None and named in limits.peer_origins():
        return None
    host = (request.headers.get("Host") or "").strip().lower()
    try:
        netloc = urlsplit(origin.strip()).netloc.lower()
    except ValueError:
        netloc = ""
    if netloc and netloc == host:
        return None
    return (f"a page from {origin} may not open a WebSocket to this server; "
            f"the operator can allow it with --allow-origin {origin}")


async def _send_all(sock: socket.socket, chunks) -> None:
    for data in chunks:
        view = memoryview(data)
        while view:
            try:
                view = view[sock.send(view):]
            except BlockingIOError:
                await trio.lowlevel.wait_writable(sock)


# awaited in the connection's own task (within its handshake timeout): an answer that
# takes work does it elsewhere (server/replays.py: the replay process), never in the event loop
HttpHandler = Callable[[Request, str], Awaitable["Response | None"]]   # (the request, its address as the caps key it)


def _wants_websocket(request: Request) -> bool:
    return any(v.strip().lower() == "websocket" for v in request.headers.get_all("Upgrade"))


async def _read_request(sock: socket.socket, first: bytes = b"") -> tuple[ServerProtocol, Request | None, list | None]:
    """Read the request head of the opening handshake, after ``first`` (read already); a
    bad one is answered here (None). Also the frames read with it (a client may send its
    first messages before the 101 comes: they are its messages all the same) and what the
    protocol owes for them: [frames, pongs]."""
    proto = ServerProtocol(max_size=MAX_FRAME, logger=_ws_log)
    received = 0
    request: Request | None = None
    early: list | None = None
    while request is None:
        if first:
            data, first = first, b""
        else:
            try:
                data = sock.recv(RECV_SIZE)
            except BlockingIOError:
                await trio.lowlevel.wait_readable(sock)
                continue
        if not data:
            return proto, None, None
        received += len(data)
        proto.receive_data(data)
        events = proto.events_received()
        if events:
            request = events[0]  # type: ignore[assignment]  # a ServerProtocol's first event: the Request
            # and what came after it: frames, and the pongs the protocol queued for pings
            # among them, which must follow the 101 (the Peer sends them, under its caps)
            early = [events[1:], [d for d in proto.data_to_send() if d]]
        elif proto.handshake_exc is not None:
            out = [d for d in proto.data_to_send() if d]
            # not HTTP at all: the protocol just drops it; say why
            await _send_all(sock, out or [_http_response(400, "Bad Request", "this is a wildtable server: it speaks "
                                                         "WebSocket (ws://HOST:PORT)\n")])
            return proto, None, None
        elif received > HANDSHAKE_MAX_BYTES:
            await _send_all(sock, [_http_response(431, "Request Header Fields Too Large",
                                                  f"the request head is over {HANDSHAKE_MAX_BYTES} bytes\n")])
            return proto, None, None
    return proto, request, early


async def _answer(sock: socket.socket, proto: ServerProtocol, request: Request, limits: Limits,
                  http: HttpHandler | None, where: Address) -> ServerProtocol | None:
    """Answer the opening handshake of ``where``; the protocol, if the WebSocket is open.
    A plain HTTP request (no ``Upgrade: websocket``) goes to ``http``, if given, with the
    address the per-address caps key (its host), whose response is sent before the
    connection closes (one request per connection)."""
    who = host_port(where.host, where.port)
    if http is not None and not _wants_websocket(request):
        response = await http(request, where.host)
        if response is not None:
            proto.send_response(response)
            await _send_all(sock, [d for d in proto.data_to_send() if d])
            return None
    why = _origin_allowed(request, limits)
    response = proto.reject(403, why + "\n") if why else proto.accept(request)
    proto.send_response(response)
    await _send_all(sock, [d for d in proto.data_to_send() if d])
    if response.status_code != 101:
        if why:
            log.warning("refused a WebSocket from %s: %s", who, why, extra=about(peer=who))
        return None
    return proto


def _listen(host: str, port: int) -> list[socket.socket]:
    """Listening sockets for every address ``host`` names (as trio.open_tcp_listeners)."""
    infos = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    socks: list[socket.socket] = []
    seen = set()
    try:
        for family, kind, proto, _, addr in infos:
            if (family, addr) in seen:
                continue
            seen.add((family, addr))
            s = socket.socket(family, kind, proto)
            socks.append(s)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:
                s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            if port == 0 and len(socks) > 1:       # one port for every address
                addr = (addr[0], socks[0].getsockname()[1], *addr[2:])
            s.bind(addr)
            s.listen(4096)
            s.setblocking(False)
    except BaseException:
        for s in socks:
            s.close()
        raise
    return socks


_TCP_NOTSENT_LOWAT = getattr(socket, "TCP_NOTSENT_LOWAT", 25)     # Linux's number where Python lacks the name
_ACCEPT_AGAIN = {errno.ECONNABORTED, errno.EPROTO, errno.EPERM}
_ACCEPT_LATER = {errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM}


async def serve(handler: Callable[[Peer], Awaitable[None]], host: str, port: int, *,
                limits: Limits = Limits(), http: HttpHandler | None = None,
                task_status=trio.TASK_STATUS_IGNORED) -> None:
    """Accept WebSockets until cancelled; ``task_status.started`` gets the bound port.
    ``http`` answers plain HTTP requests (an async function returning a
    ``websockets.http11.Response``, or None for the usual refusal: 426 "upgrade required").

    Each connection runs in a task of its own; whatever it raises ends that connection
    only (logged once, as our bug unless the peer went away), never the listener."""
    socks = _listen(host, port)
    gate = _Gate(limits)
    try:
        async with trio.open_nursery() as nursery:
            for s in socks:
                nursery.start_soon(_accept, s, gate, handler, http, nursery)
            task_status.started(socks[0].getsockname()[1])
    finally:
        for s in socks:
            trio.lowlevel.notify_closing(s)
            s.close()


async def _accept(lsock: socket.socket, gate: _Gate, handler, http, nursery: trio.Nursery) -> None:
    last_warned = -1e9
    while True:
        try:
            sock, addr = lsock.accept()
        except BlockingIOError:
            await trio.lowlevel.wait_readable(lsock)
            continue
        except OSError as e:
            if e.errno in _ACCEPT_AGAIN:
                continue
            if e.errno in _ACCEPT_LATER:
                now = trio.current_time()
                if now - last_warned > 10:
                    log.warning("cannot accept connections: %s (retrying)", e.strerror or e)
                    last_warned = now
                await trio.sleep(0.1)
                continue
            raise
        await trio.lowlevel.checkpoint()        # a flood of connects must not starve the tables
        sock.setblocking(False)
        host = addr[0]
        # a trusted proxy's connection is its client's, known once its request head is read
        counted = None if gate.limits.trusted.trusts(host) else host
        why = gate.refusal(counted)
        if why is not None:
            log.warning("refused a connection from %s: %s", host, why, extra=about(peer=host))
            _refuse_now(sock, why)
            continue
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            # As trio's SocketStream does: the kernel holds at most 16 kB not yet sent, so
            # a peer that does not keep up shows in our backlog (and is bounded there), not
            # in megabytes of kernel buffer.
            sock.setsockopt(socket.IPPROTO_TCP, _TCP_NOTSENT_LOWAT, 16 * 1024)
        except OSError:
            pass
        gate.admit(counted)
        nursery.start_soon(_connection, sock, Address(host, addr[1]), gate, gate.limits, handler, http, counted)


_LOCAL = Address("local")      # how a connection the server makes to itself is named


async def serve_socket(sock: socket.socket, handler: Callable[[Peer], Awaitable[None]], *,
                       limits: Limits = Limits(), who: Address = _LOCAL) -> None:
    """One connection the server makes to itself (its own bots, server/botseats.py, over
    a socketpair): the same handshake, Peer and handler as a listener's connection, so
    every rule a player obeys, but none of the listener's caps: it takes no slot of any
    address. ``who`` names it in logs and ``Peer.remote``."""
    sock.setblocking(False)
    await _connection(sock, who, None, limits, handler, None, None)


async def _connection(sock: socket.socket, where: Address, gate: _Gate | None, limits: Limits, handler, http,
                      counted: str | None) -> None:
    """One connection from its handshake to its end. ``counted``: the address it counts
    against already (None: a trusted proxy's, counted here once the client is known, or
    one without a gate)."""
    peer = None
    try:
        try:
            proto, early = None, None
            with trio.move_on_after(limits.handshake_timeout):
                proxied = gate is not None and counted is None      # a trusted proxy's
                first: bytes | None = b""
                if proxied and limits.proxy_protocol:
                    where, first = await _proxy_header(sock, where)
                proto, request, early = await _read_request(sock, first) if first is not None else (None, None, None)
                if request is not None and proxied and gate is not None:
                    where, request = await _behind_proxy(sock, where, request, gate)
                    if request is not None:
                        counted = where.host
                proto = None if request is None or proto is None else await _answer(
                    sock, proto, request, limits, http, where)
        except OSError:
            proto = None            # reset during the handshake
        finally:
            if gate is not None:
                gate.handshaking -= 1
        if proto is None:
            return
        peer = Peer(sock, proto, where.host, where.port, early)
        try:
            await handler(peer)
        finally:
            await peer.close()              # the handler may have closed it already
            await peer.linger()
    except* (ConnectionClosed, SendStalled):
        pass                        # the peer went away, or stopped reading
    except* Exception as group:
        log.error("connection %s ended by a bug of ours (the server goes on)", host_port(where.host, where.port),
                  exc_info=group)
    finally:
        if counted is not None and gate is not None:
            gate.release(counted)
        trio.lowlevel.notify_closing(sock)
        sock.close()


async def _proxy_header(sock: socket.socket, proxy: Address) -> tuple[Address, bytes | None]:
    """A trusted proxy's connection that begins with a PROXY protocol header
    (server/proxyproto.py): the client it names (the proxy itself for LOCAL or UNKNOWN), and
    the bytes read after the header; None for them if there is no valid header (dropped,
    as the spec asks, and logged)."""
    data = b""
    while True:
        try:
            more = sock.recv(proxyproto.V2_MAX - len(data))
        except BlockingIOError:
            await trio.lowlevel.wait_readable(sock)
            continue
        if not more:
            return proxy, None
        data += more
        got = proxyproto.parse(data)
        if isinstance(got, proxyproto.Invalid):
            log.warning("dropped a connection from %s (a --trusted-proxy, and --proxy-protocol is on): %s",
                        proxy.host, got.why, extra=about(peer=proxy.host))
            return proxy, None
        if got is not None:
            return got.client or proxy, data[got.size:]


async def _behind_proxy(sock: socket.socket, proxy: Address, request: Request,
                        gate: _Gate) -> tuple[Address, Request | None]:
    """A trusted proxy's connection: whose it is (server/forwarded.py; ``proxy``: the peer,
    or the client its PROXY protocol header named), counted against that address, or
    refused with the 503 a direct connection over the cap gets (None)."""
    trusted = gate.limits.trusted
    client = trusted.client(proxy.host, proxy.port, request.headers.get_all(trusted.header))
    why = gate.over(client.host)
    if why is None:
        gate.count(client.host)
        return client, request
    via = sock.getpeername()[0]
    log.warning("refused a connection from %s (via %s): %s", client.host, via, why, extra=about(peer=client.host))
    await _send_all(sock, [_http_response(503, "Service Unavailable", why + "\n")])
    return client, None