"""`serve --trusted-proxy 127.0.0.1 --proxy-protocol`: a TCP proxy (HAProxy's send-proxy,
nginx stream's proxy_protocol on) names each client in a PROXY protocol header, and
the per-address caps count that client, at the default cap of 32.

The adversary: a client that reaches the server's port itself and sends a PROXY header
naming any address it likes (it is not a trusted proxy: its header is not read), and a
trusted proxy that sends none or garbage (its connection is dropped, as the spec asks)."""

from __future__ import annotations

import ipaddress
import struct

import trio

from wildtable.server.forwarded import TrustedProxies
from wildtable.server.proxyproto import V2_SIGNATURE

from hostilekit import Raw, Sockets, accept_for, ends_within, new_key, port_of, upgrade_request
from serverkit import running_server, server_config

OVER = "too many connections from your address (at most 32)"


def v1(src: str) -> bytes:
    return f"PROXY TCP4 {src} 127.0.0.1 40000 443\r\n".encode()


def v2_tcp6(src: str, sport: int) -> bytes:
    body = ipaddress.IPv6Address(src).packed + ipaddress.IPv6Address("::1").packed + struct.pack("!HH", sport, 443)
    return V2_SIGNATURE + struct.pack("!BBH", 0x21, 0x21, len(body)) + body


async def opened(port: int, header: bytes, source: str | None = None) -> tuple[Raw, int, bytes]:
    """A connection that sends ``header`` and a WebSocket handshake in one write: the
    socket, the answer's status and body."""
    raw = await Raw.open(port, source=source)
    key = new_key()
    await raw.send(header + upgrade_request(raw.host, key=key))
    with trio.fail_after(5):
        head = await raw.read_head()
    if head.status == 101:
        assert head.header("sec-websocket-accept") == accept_for(key), head.raw
    return raw, head.status, bytes(raw.buf)


def hosts(server) -> set[str]:
    return {c.peer.remote for c in server.connections}


async def test_the_proxy_protocol_names_the_client_to_the_caps(tmp_path):
    trusted = TrustedProxies.parse(["127.0.0.1"])
    with trio.fail_after(30):
        async with running_server(server_config(tmp_path / "data", trusted_proxies=trusted, proxy_protocol=True)) as (server, url), \
                Sockets() as held:
            port = port_of(url)
            for _ in range(32):
                raw, status, _ = await opened(port, v1("198.51.100.7"))
                held.append(raw)
                assert status == 101
            raw, status, body = await opened(port, v1("198.51.100.7"))
            with raw:
                assert status == 503 and OVER in body.decode(), body
            raw, status, _ = await opened(port, v1("198.51.100.8"))     # another client of the proxy
            held.append(raw)
            assert status == 101
            raw, status, _ = await opened(port, v2_tcp6("2001:db8::9", 4711))
            held.append(raw)
            assert status == 101
            with trio.fail_after(5):
                while "[2001:db8::9]:4711" not in hosts(server):
                    await trio.sleep(0.02)          # until its Connection is made
            assert "198.51.100.7:40000" in hosts(server), hosts(server)


async def test_without_a_valid_header_a_trusted_proxys_connection_is_dropped(tmp_path):
    trusted = TrustedProxies.parse(["127.0.0.1"])
    with trio.fail_after(30):
        async with running_server(server_config(tmp_path / "data", trusted_proxies=trusted, proxy_protocol=True)) as (server, url):
            port = port_of(url)
            for header in (b"", b"PROXY TCP4 nonsense\r\n", V2_SIGNATURE + b"\x21\x11\x00\x04" + bytes(4)):
                raw = await Raw.open(port)
                with raw:
                    await raw.send(header + upgrade_request(raw.host))
                    got = await ends_within(raw, 5, f"after {header!r}")
                    assert b"101" not in got, (header, got)


async def test_a_peer_that_is_not_trusted_has_its_header_ignored(tmp_path):
    """Its PROXY line is not read: the request it sends is no HTTP (400), and nothing it
    named got a slot."""
    trusted = TrustedProxies.parse(["127.0.0.1"])
    with trio.fail_after(30):
        async with running_server(server_config(tmp_path / "data", trusted_proxies=trusted, proxy_protocol=True)) as (server, url):
            raw, status, _ = await opened(port_of(url), v1("198.51.100.7"), source="127.0.0.2")
            with raw:
                assert status == 400
            raw, status, _ = await opened(port_of(url), b"", source="127.0.0.2")     # a plain client: served
            with raw:
                assert status == 101
