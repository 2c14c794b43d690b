"""The hostile-network kit: a stranger's raw bytes on a plain socket, and a well-behaved
player who must not notice.

The attacker side builds HTTP and RFC 6455 frames by hand (``struct``, plain Trio
sockets, msgpack for the payloads) and parses what the server sends back with its own
small parser: nothing of ours (no tests/rawclient.py, trio-websocket or wsproto) sits
between the test and the server's bytes, so a garbled stream, a missing close frame or
a frame after the close shows as it is.

The well-behaved side (``steady_player``, tests/steadykit.py, named here too) is our own
client code: two seats at a Run Wild table of their own that act at a steady pace during
the attack; at exit it asserts that every intent was answered and that the p95 of
intent-to-update stayed under 50 ms. ``under_attack`` seats it beside an in-process server.
"""

from __future__ import annotations

import base64
import hashlib
import os
import socket
import struct
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import msgpack
import trio

from wildtable.protocol import messages as m

from adversarial_kit import start_serve
from serverkit import running_server
from steadykit import (CALM, CALM_FACTOR, JUDGED, P99_LIMIT, PACE, Steady, busy_table,  # noqa: F401  (the kit's names)
                       p99_bound, steady_player, steady_player_process)

GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

OP_CONT, OP_TEXT, OP_BINARY, OP_CLOSE, OP_PING, OP_PONG = 0x0, 0x1, 0x2, 0x8, 0x9, 0xA


# ------------------------------------------------------------------ bytes on the wire

def new_key() -> str:
    return base64.b64encode(os.urandom(16)).decode()


def accept_for(key: str) -> str:
    """The Sec-WebSocket-Accept a server must answer ``key`` with (RFC 6455 section 4.2.2)."""
    return base64.b64encode(hashlib.sha1(key.encode() + GUID).digest()).decode()


def upgrade_request(host: str, *, path: str = "/", key: str | None = None, origin: str | None = None,
                    version: str = "13", extra: tuple[str, ...] = ()) -> bytes:
    """An HTTP/1.1 WebSocket upgrade request, by hand."""
    lines = [f"GET {path} HTTP/1.1", f"Host: {host}", "Upgrade: websocket", "Connection: Upgrade",
             f"Sec-WebSocket-Key: {key or new_key()}", f"Sec-WebSocket-Version: {version}"]
    if origin is not None:
        lines.append(f"Origin: {origin}")
    lines.extend(extra)
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def client_frame(opcode: int, payload: bytes = b"", *, fin: bool = True, rsv: int = 0, masked: bool = True,
                 length: int | None = None, mask: bytes | None = None) -> bytes:
    """One client frame (RFC 6455 section 5.2). ``rsv`` is the 3 RSV bits (0..7);
    ``length`` declares a payload length other than the payload's own (a lie, or a header
    sent without its payload); ``masked=False`` leaves the mask bit off, as only servers may."""
    n = len(payload) if length is None else length
    b0 = (0x80 if fin else 0) | (rsv & 7) << 4 | (opcode & 0xF)
    mbit = 0x80 if masked else 0
    if n < 126:
        head = struct.pack("!BB", b0, mbit | n)
    elif n < 1 << 16:
        head = struct.pack("!BBH", b0, mbit | 126, n)
    else:
        head = struct.pack("!BBQ", b0, mbit | 127, n)
    if not masked:
        return head + payload
    mask = mask or os.urandom(4)
    return head + mask + apply_mask(payload, mask)


def apply_mask(data: bytes, mask: bytes) -> bytes:
    if not data:
        return b""
    n = len(data)
    whole = (mask * (n // 4 + 1))[:n]
    return (int.from_bytes(data, "big") ^ int.from_bytes(whole, "big")).to_bytes(n, "big")


def pack(msg: dict) -> bytes:
    return msgpack.packb(msg)


def binary(msg: dict) -> bytes:
    """One masked binary frame holding ``msg`` as msgpack."""
    return client_frame(OP_BINARY, pack(msg))


def close_payload(code: int, reason: str = "") -> bytes:
    return struct.pack("!H", code) + reason.encode()


@dataclass
class Frame:
    """One frame as the server sent it."""
    fin: bool
    rsv: int
    opcode: int
    masked: bool
    payload: bytes

    @property
    def code(self) -> int | None:
        """A close frame's status code (None: no code, or not a close frame)."""
        if self.opcode != OP_CLOSE or len(self.payload) < 2:
            return None
        return struct.unpack("!H", self.payload[:2])[0]

    @property
    def reason(self) -> str:
        return self.payload[2:].decode(errors="replace") if self.opcode == OP_CLOSE else ""

    def message(self):
        """A binary frame's msgpack map."""
        assert self.opcode == OP_BINARY and self.fin, self
        return msgpack.unpackb(self.payload, raw=False, strict_map_key=False)

    def __repr__(self) -> str:
        body = f"{self.code} {self.reason!r}" if self.opcode == OP_CLOSE else f"{len(self.payload)} B"
        return f"<frame op={self.opcode:#x} fin={self.fin} rsv={self.rsv} masked={self.masked} {body}>"


@dataclass
class Head:
    """An HTTP response head."""
    status: int
    reason: str
    headers: dict[str, str]
    raw: bytes

    def header(self, name: str) -> str | None:
        return self.headers.get(name.lower())


class Gone(Exception):
    """The server ended the TCP connection (EOF or reset) before what was awaited came."""


@dataclass
class Raw:
    """A plain TCP socket to the server, reading only what the test asks for."""
    sock: trio.socket.SocketType
    port: int
    buf: bytearray = field(default_factory=bytearray)
    eof: bool = False
    reset: bool = False
    rate: float | None = None       # bytes per second at most, once set (a slow reader)
    _rate_start: float = 0.0
    _rate_read: int = 0

    def read_at(self, rate: float | None) -> None:
        """From now on take at most ``rate`` bytes per second from the socket (None: no limit)."""
        self.rate, self._rate_start, self._rate_read = rate, trio.current_time(), 0

    @classmethod
    async def open(cls, port: int, *, source: str | None = None, rcvbuf: int | None = None) -> "Raw":
        """Connect to 127.0.0.1:``port``, from ``source`` (any 127.x.y.z: another address)."""
        sock = trio.socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            if rcvbuf:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
            if source:
                await sock.bind((source, 0))
            await sock.connect(("127.0.0.1", port))
        except BaseException:
            sock.close()
            raise
        return cls(sock, port)

    @property
    def host(self) -> str:
        return f"127.0.0.1:{self.port}"

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> "Raw":
        return self

    def __exit__(self, *exc) -> None:
        self.sock.close()

    async def __aenter__(self) -> "Raw":        # also in an ``async with`` beside other contexts
        return self

    async def __aexit__(self, *exc) -> None:
        self.sock.close()

    async def send(self, data: bytes) -> bool:
        """Send all of ``data``; False if the server had already closed or reset."""
        view = memoryview(data)
        try:
            while view:
                n = await self.sock.send(view)
                view = view[n:]
        except (BrokenPipeError, ConnectionResetError):
            return False
        return True

    async def _fill(self, want: int = 65536) -> None:
        if self.eof:
            raise Gone("the server closed the connection")
        if self.rate:
            step = 512
            allowed = self.rate * (trio.current_time() - self._rate_start) - self._rate_read
            if allowed < step:
                await trio.sleep((step - allowed) / self.rate)
                allowed = step
            want = min(want, int(allowed))
        try:
            chunk = await self.sock.recv(want)
            self._rate_read += len(chunk)
        except ConnectionResetError:
            chunk, self.reset = b"", True
        if not chunk:
            self.eof = True
            raise Gone("the server closed the connection" + (" (reset)" if self.reset else ""))
        self.buf += chunk

    async def _take(self, n: int) -> bytes:
        while len(self.buf) < n:
            await self._fill()
        out = bytes(self.buf[:n])
        del self.buf[:n]
        return out

    async def read_head(self) -> Head:
        """An HTTP response head (status line and headers); the bytes after it stay buffered."""
        while b"\r\n\r\n" not in self.buf:
            if len(self.buf) > 65536:
                raise AssertionError(f"no end of an HTTP head in {len(self.buf)} bytes: {bytes(self.buf[:200])!r}")
            try:
                await self._fill()
            except Gone:
                if self.buf:
                    raise Gone(f"the server closed after a partial head: {bytes(self.buf)!r}") from None
                raise
        raw, rest = bytes(self.buf).split(b"\r\n\r\n", 1)
        self.buf = bytearray(rest)
        lines = raw.decode("latin-1").split("\r\n")
        parts = lines[0].split(" ", 2)
        assert parts[0].startswith("HTTP/1."), f"not an HTTP response: {raw[:200]!r}"
        headers = {}
        for line in lines[1:]:
            k, _, v = line.partition(":")
            headers[k.strip().lower()] = v.strip()
        return Head(int(parts[1]), parts[2] if len(parts) > 2 else "", headers, raw)

    async def read_frame(self) -> Frame:
        b0, b1 = await self._take(2)
        n = b1 & 0x7F
        if n == 126:
            (n,) = struct.unpack("!H", await self._take(2))
        elif n == 127:
            (n,) = struct.unpack("!Q", await self._take(8))
        mask = await self._take(4) if b1 & 0x80 else None
        payload = await self._take(n)
        if mask:
            payload = apply_mask(payload, mask)
        return Frame(bool(b0 & 0x80), (b0 >> 4) & 7, b0 & 0xF, mask is not None, payload)

    async def read_message(self) -> dict:
        """The next binary frame's message (pings are answered; anything else fails)."""
        while True:
            f = await self.read_frame()
            if f.opcode == OP_PING:
                await self.send(client_frame(OP_PONG, f.payload))
                continue
            return f.message()

    async def until_close(self) -> tuple[list[Frame], Frame | None]:
        """Frames up to and with the server's close frame: (those before it, the close);
        (all, None) if the connection ended without one."""
        seen = []
        try:
            while True:
                f = await self.read_frame()
                if f.opcode == OP_CLOSE:
                    return seen, f
                seen.append(f)
        except Gone:
            return seen, None

    async def after_close(self) -> list[Frame]:
        """What the server sends after its close frame, up to the end of the connection
        (the caller bounds the wait): must be nothing."""
        after = []
        try:
            while True:
                after.append(await self.read_frame())
        except Gone:
            return after

    async def wait_gone(self) -> bytes:
        """Until the server ends the TCP connection; what it sent meanwhile (and what was
        buffered), returned."""
        got = bytearray(self.buf)
        self.buf.clear()
        while not self.eof:
            try:
                await self._fill()
            except Gone:
                break
            got += self.buf
            self.buf.clear()
        return bytes(got)


async def upgraded(port: int, *, source: str | None = None, rcvbuf: int | None = None,
                   origin: str | None = None) -> Raw:
    """A raw connection past a checked handshake (101, the right accept)."""
    raw = await Raw.open(port, source=source, rcvbuf=rcvbuf)
    try:
        key = new_key()
        await raw.send(upgrade_request(raw.host, key=key, origin=origin))
        head = await raw.read_head()
        assert head.status == 101, head.raw
        assert head.header("sec-websocket-accept") == accept_for(key), head.raw
    except BaseException:
        raw.close()
        raise
    return raw


async def refused_503(port: int, source: str | None = None, within: float = 2) -> None:
    """A new connection (sending nothing) is answered 503 and closed, at once."""
    with await Raw.open(port, source=source) as raw:
        with trio.fail_after(within):
            head = await raw.read_head()
        assert head.status == 503, head.raw
        await ends_within(raw, within, "after its 503")


async def said_hello(port: int, name: str = "stranger", **kw) -> Raw:
    """``upgraded``, then hello answered with welcome."""
    raw = await upgraded(port, **kw)
    try:
        await raw.send(binary({"type": "hello", "version": m.PROTOCOL_VERSION, "name": name}))
        welcome = await raw.read_message()
        assert welcome["type"] == "welcome", welcome
    except BaseException:
        raw.close()
        raise
    return raw


async def close_code(raw: Raw, within: float = 5) -> tuple[list[Frame], Frame | None]:
    """The frames before the server's close frame and the close frame, read within ``within`` s."""
    with trio.fail_after(within):
        return await raw.until_close()


async def every_case(cases: dict, check) -> None:
    """``await check(name, case)`` for each of ``cases`` in turn, all of them even when some
    go wrong; then fail naming each that did. For one attack of many kinds against one
    server (a server and its steady player for each kind cost a third of a second of
    set-up, and the player measured almost nothing but the quiet after it)."""
    wrong = []
    for name, case in cases.items():
        try:
            await check(name, case)
        except trio.TooSlowError:
            wrong.append(f"{name}: no answer in time")
        except (AssertionError, Gone) as e:
            wrong.append(f"{name}: {e}")
    assert not wrong, "\n".join(wrong)


async def ends_within(raw: Raw, seconds: float, what: str = "") -> bytes:
    """The server ends the TCP connection within ``seconds``; what it sent until then."""
    with trio.move_on_after(seconds):
        return await raw.wait_gone()
    raise AssertionError(f"the server kept the connection open for more than {seconds:g} s {what}".rstrip())


# ------------------------------------------------------------------ the Origin check, by hand

# origins that are not the server's (with {port}: the server's port)
FOREIGN = ["http://evil.example", "https://evil.example", "http://evil.example:{port}", "null",
           "http://localhost:{port}", "http://127.0.0.1:1", "http://127.0.0.1.evil.example:{port}"]


async def handshake_status(port: int, origin: str | None) -> tuple[int, Raw]:
    raw = await Raw.open(port)
    try:
        key = new_key()
        await raw.send(upgrade_request(raw.host, key=key, origin=origin))
        with trio.fail_after(5):
            head = await raw.read_head()
        if head.status == 101:
            assert head.header("sec-websocket-accept") == accept_for(key), head.raw
    except BaseException:
        raw.close()
        raise
    return head.status, raw


async def refused_403(port: int, origin: str) -> None:
    status, raw = await handshake_status(port, origin)
    with raw:
        assert status == 403, f"Origin {origin!r} got {status}, not 403"
        # a frame sent anyway is not a WebSocket message: no welcome, and the socket closes
        await raw.send(binary({"type": "hello", "version": m.PROTOCOL_VERSION, "name": "page"}))
        rest = await ends_within(raw, 3, f"after refusing Origin {origin!r}")
        assert b"welcome" not in rest, rest


async def accepted_101(port: int, origin: str | None) -> None:
    status, raw = await handshake_status(port, origin)
    raw.close()
    assert status == 101, f"Origin {origin!r} got {status}, not 101"


def port_of(url: str) -> int:
    return int(url.rsplit(":", 1)[1])


@asynccontextmanager
async def serve_process(data_dir, *flags):
    """`wildtable serve --port 0 --data-dir DATA_DIR FLAGS` as a real process (its stderr
    drained, see adversarial_kit.start_serve); yield it; stopped (SIGTERM, then SIGKILL
    after 10 s) at exit."""
    async with trio.open_nursery() as bg:
        srv = await start_serve(bg, data_dir, *flags)
        try:
            yield srv
        finally:
            with trio.CancelScope(shield=True):
                if srv.proc.returncode is None:
                    srv.proc.terminate()
                with trio.move_on_after(10):
                    await srv.proc.wait()
                if srv.proc.returncode is None:
                    srv.proc.kill()
                    await srv.proc.wait()
            bg.cancel_scope.cancel()


class Sockets(list):
    """Raw connections a test opens; every one is closed at the end of the ``with``."""

    def __enter__(self) -> "Sockets":
        return self

    def __exit__(self, *exc) -> None:
        for raw in self:
            raw.close()

    async def __aenter__(self) -> "Sockets":    # also in an ``async with`` beside other contexts
        return self

    async def __aexit__(self, *exc) -> None:
        self.__exit__()


# ------------------------------------------------------------------ the well-behaved player

@asynccontextmanager
async def under_attack(config, **runs_on):
    """An in-process server (serverkit.running_server: ``config`` a ServerConfig or a data
    dir) with the steady player at a table of its own for the whole attack; yield (server,
    url, port)."""
    async with running_server(config, **runs_on) as (server, url), steady_player(url):
        yield server, url, port_of(url)
