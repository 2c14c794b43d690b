"""What a peer can make the ops port (--metrics-port) hold is bounded: at most
opsport.MAX_CLIENTS connections at once (another is closed unanswered), a request head of
at most HEAD_MAX bytes (400), TIMEOUT seconds to send it; only GET and HEAD (405)."""

from __future__ import annotations

import socket

import trio

from wildtable.server import opsport

from opskit import get
from serverkit import running_server, server_config


def _connect(port: int) -> socket.socket:
    return socket.create_connection(("127.0.0.1", port), timeout=10)


def _ask(s: socket.socket, data: bytes) -> bytes:
    s.sendall(data)
    out = b""
    while chunk := s.recv(65536):
        out += chunk
    return out


async def test_connections_heads_and_methods_are_bounded(tmp_path):
    with trio.fail_after(30):
        async with running_server(server_config(tmp_path / "data", metrics_port=0)) as (server, _):
            port = server.ops_port
            idle = [await trio.to_thread.run_sync(_connect, port) for _ in range(opsport.MAX_CLIENTS)]
            try:
                while server_clients(server) < opsport.MAX_CLIENTS:
                    await trio.sleep(0.01)
                extra = await trio.to_thread.run_sync(_connect, port)
                assert await trio.to_thread.run_sync(_ask, extra, b"GET /metrics HTTP/1.1\r\n\r\n") == b""
                extra.close()
            finally:
                for s in idle:
                    s.close()
            while server_clients(server):
                await trio.sleep(0.01)
            assert (await get(port, "/metrics"))[0] == 200
            big = await trio.to_thread.run_sync(_connect, port)
            answer = await trio.to_thread.run_sync(
                _ask, big, b"GET /metrics HTTP/1.1\r\nX: " + b"a" * opsport.HEAD_MAX + b"\r\n\r\n")
            assert answer.startswith(b"HTTP/1.1 400 "), answer[:100]
            post = await trio.to_thread.run_sync(_connect, port)
            answer = await trio.to_thread.run_sync(_ask, post, b"POST /metrics HTTP/1.1\r\nContent-Length: 0\r\n\r\n")
            assert answer.startswith(b"HTTP/1.1 405 "), answer[:100]
            assert (await get(port, "/nothing"))[0] == 404


def server_clients(server) -> int:
    return server.ops.clients
