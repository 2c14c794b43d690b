"""The client's WebSocket transport (headless/wire.py) against a tiny real server on
127.0.0.1 whose every step the test scripts: websockets' Sans-I/O ``ServerProtocol`` over
a Trio stream (plain TCP, or TLS for wss://), and hand-made frames where a server does
something unusual (a ping right behind the client's close, a frame cut short).

The first test is the one that ended a CI run early: a server ping arriving while the
client closes made trio-websocket, the client's old transport, raise LocalProtocolError
from its reader (its issue #184)."""

from __future__ import annotations

import ssl
import subprocess
from functools import partial

import pytest
import trio
from websockets.frames import Close, Frame, Opcode
from websockets.server import ServerProtocol

from wildtable.headless.core import CannotConnect, ClientCore
from wildtable.headless.wire import ConnectionClosed, ConnectionRejected, HandshakeError, open_socket


class TinyServer:
    """One accepted connection, driven step by step by the test."""

    def __init__(self, stream: trio.abc.Stream):
        self.stream = stream
        self.proto = ServerProtocol(max_size=None)

    async def accept(self) -> None:
        while True:
            data = await self.stream.receive_some(65536)
            assert data, "the client closed before its handshake"
            self.proto.receive_data(data)
            events = self.proto.events_received()
            if events:
                break
        self.proto.send_response(self.proto.accept(events[0]))
        await self.flush()

    async def flush(self) -> None:
        out = b"".join(self.proto.data_to_send())
        if out:
            await self.stream.send_all(out)

    async def frame(self) -> Frame:
        """The client's next frame (its pongs and close are answered by the protocol, not
        sent: the test sends what it means to)."""
        while True:
            events = self.proto.events_received()
            if events:
                return events[0]
            data = await self.stream.receive_some(65536)
            if not data:
                self.proto.receive_eof()
                raise EOFError
            self.proto.receive_data(data)

    async def send(self, opcode: Opcode, data: bytes) -> None:
        await self.stream.send_all(Frame(opcode, data).serialize(mask=False))

    async def rest(self) -> bytes:
        """Every byte the client still sends, up to its end of the stream."""
        got = b""
        while data := await self.stream.receive_some(65536):
            got += data
        return got


async def _serve(script, *, tls: ssl.SSLContext | None = None, task_status=trio.TASK_STATUS_IGNORED):
    """Run ``script(TinyServer)`` on each connection; report (port, list of errors) started."""
    errors: list[BaseException] = []

    async def handler(stream):
        server = TinyServer(stream)
        try:
            await script(server)
        except Exception as e:          # the test's own assertions, said by the test
            errors.append(e)
        finally:
            await stream.aclose()

    if tls is None:
        listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
    else:
        listeners = await trio.open_ssl_over_tcp_listeners(0, tls, host="127.0.0.1")
    async with trio.open_nursery():
        task_status.started(((listeners[0].transport_listener.socket if tls else listeners[0].socket)
                             .getsockname()[1], errors))
        await trio.serve_listeners(handler, listeners)


async def _run(script, client, *, tls: ssl.SSLContext | None = None, timeout: float = 10) -> list:
    """``script`` serves, ``client(port)`` connects; the server script's errors, if any."""
    with trio.fail_after(timeout):
        async with trio.open_nursery() as nursery:
            port, errors = await nursery.start(partial(_serve, script, tls=tls))
            await client(port)
            nursery.cancel_scope.cancel()
    return errors


async def test_a_ping_that_crosses_the_clients_close_is_ignored():
    """The server pings right behind the client's close frame (before its own close): the
    client sends nothing after its close frame, no pong, and raises nothing."""
    after_close = []

    async def script(s: TinyServer):
        await s.accept()
        assert (await s.frame()).data == b"bye soon"
        close = await s.frame()
        assert close.opcode is Opcode.CLOSE and Close.parse(close.data).code == 1000
        await s.send(Opcode.PING, b"crossing")      # in flight as the client closes
        await s.flush()                             # the close frame answering the client's
        await s.stream.send_eof()
        after_close.append(await s.rest())

    async def client(port):
        try:
            async with open_socket(f"ws://127.0.0.1:{port}") as ws:
                await ws.send_message(b"bye soon")
        except BaseException as e:
            # trio-websocket let a trio.Cancelled out here (its reader died of
            # LocalProtocolError), which would end this test early and silently
            raise AssertionError(f"closing raised {e!r}") from e

    assert not await _run(script, client)
    assert after_close == [b""]            # no pong (nor anything else) after the close frame


async def test_pings_are_answered_and_a_ping_of_ours_gets_its_pong():
    async def script(s: TinyServer):
        await s.accept()
        await s.send(Opcode.PING, b"are you there")
        pong = await s.frame()
        assert (pong.opcode, pong.data) == (Opcode.PONG, b"are you there")
        await s.send(Opcode.BINARY, b"after the pong")
        ping = await s.frame()
        assert ping.opcode is Opcode.PING
        await s.send(Opcode.PONG, ping.data)
        assert (await s.frame()).opcode is Opcode.CLOSE
        await s.flush()

    async def client(port):
        async with open_socket(f"ws://127.0.0.1:{port}") as ws:
            assert await ws.get_message() == b"after the pong"
            await ws.ping()             # nobody else reads: ping reads its pong itself

    assert not await _run(script, client)


async def test_a_server_that_closes_mid_message_ends_the_connection_cleanly():
    async def script(s: TinyServer):
        await s.accept()
        await s.send(Opcode.BINARY, b"whole")
        await s.stream.send_all(bytes((0x82, 126)) + (1000).to_bytes(2, "big") + b"only part")
        await s.stream.aclose()

    async def client(port):
        async with open_socket(f"ws://127.0.0.1:{port}") as ws:
            assert await ws.get_message() == b"whole"
            with pytest.raises(ConnectionClosed) as info:
                await ws.get_message()
            assert info.value.code == 1006
            with pytest.raises(ConnectionClosed):
                await ws.send_message(b"too late")

    assert not await _run(script, client)


async def test_the_servers_close_code_and_reason_reach_the_client():
    async def script(s: TinyServer):
        await s.accept()
        await s.send(Opcode.BINARY, b"last words")
        await s.send(Opcode.CLOSE, Close(4003, "table moved").serialize())
        echo = await s.frame()
        assert echo.opcode is Opcode.CLOSE and Close.parse(echo.data).code == 4003

    async def client(port):
        async with open_socket(f"ws://127.0.0.1:{port}") as ws:
            assert await ws.get_message() == b"last words"
            with pytest.raises(ConnectionClosed) as info:
                await ws.get_message()
            assert (info.value.code, info.value.reason) == (4003, "table moved")

    assert not await _run(script, client)


async def test_a_message_over_8_mib_is_refused_with_1009():
    async def script(s: TinyServer):
        await s.accept()
        await s.send(Opcode.BINARY, bytes(8 * 1024 * 1024 + 1))
        close = await s.frame()
        assert close.opcode is Opcode.CLOSE and Close.parse(close.data).code == 1009

    async def client(port):
        async with open_socket(f"ws://127.0.0.1:{port}") as ws:
            with pytest.raises(ConnectionClosed) as info:
                await ws.get_message()
            assert info.value.code == 1009

    assert not await _run(script, client, timeout=20)


async def test_an_http_503_answer_is_a_refusal_with_its_sentence():
    why = b"too many connections from your address (at most 32)\n"

    async def script(s: TinyServer):
        await s.stream.receive_some(65536)
        await s.stream.send_all(b"HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\n"
                                b"Content-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\n\r\n" % len(why)
                                + why)

    async def client(port):
        url = f"ws://127.0.0.1:{port}"
        with pytest.raises(ConnectionRejected) as info:
            async with open_socket(url):
                pass
        assert info.value.status_code == 503 and info.value.body == why
        assert isinstance(info.value, HandshakeError)
        # and the player reads the server's sentence
        with pytest.raises(CannotConnect) as said:
            await ClientCore(url, "ann").run()
        assert str(said.value) == (f"cannot connect to {url}: the server refused the connection (HTTP 503): "
                                   "too many connections from your address (at most 32)")

    assert not await _run(script, client)


async def test_no_handshake_answer_in_time_is_a_handshake_error():
    async def script(s: TinyServer):
        await s.rest()                  # reads the request, never answers

    async def client(port):
        with pytest.raises(HandshakeError, match="no answer to the WebSocket handshake within 0.3 s"):
            async with open_socket(f"ws://127.0.0.1:{port}", connect_timeout=0.3):
                pass

    await _run(script, client)


async def test_a_server_that_never_answers_the_close_is_dropped_after_the_close_timeout():
    async def script(s: TinyServer):
        await s.accept()
        assert (await s.frame()).opcode is Opcode.CLOSE
        await s.rest()                  # no close frame back, no end of stream: until the client drops it

    async def client(port):
        async with open_socket(f"ws://127.0.0.1:{port}", close_timeout=0.3):
            pass

    assert not await _run(script, client)


async def test_wss_over_tls(tmp_path):
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                    "-nodes", "-days", "1", "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost",
                    "-keyout", str(key), "-out", str(cert)], check=True, capture_output=True)
    server_ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_ctx.load_cert_chain(cert, key)
    client_ctx = ssl.create_default_context(cafile=str(cert))

    async def script(s: TinyServer):
        await s.accept()
        got = await s.frame()
        await s.send(Opcode.BINARY, got.data[::-1])
        assert (await s.frame()).opcode is Opcode.CLOSE
        await s.flush()

    async def client(port):
        async with open_socket(f"wss://localhost:{port}", ssl_context=client_ctx) as ws:
            await ws.send_message(b"over tls")
            assert await ws.get_message() == b"slt revo"
        # and the default context refuses a certificate nobody vouches for
        with pytest.raises(HandshakeError, match="the TLS handshake failed: .*certificate verify failed"):
            async with open_socket(f"wss://localhost:{port}"):
                pass

    errors = await _run(script, client, tls=server_ctx)
    assert len(errors) <= 1, errors         # the refused handshake's server side may fail too
