"""The WebSocket handshake, by hand on a plain socket: a proper upgrade gets 101 with the
right Sec-WebSocket-Accept; anything else (not HTTP, a plain GET, a bad upgrade, a head
over 16 KiB) gets an HTTP 4xx answer and the socket closes, and the server goes on.
A well-behaved player at another table keeps playing throughout (hostilekit)."""

from __future__ import annotations

import os

import trio

from hostilekit import Raw, accept_for, ends_within, every_case, new_key, said_hello, under_attack, upgrade_request


async def test_an_upgrade_gets_101_with_the_right_accept(tmp_path):
    with trio.fail_after(20):
        async with under_attack(tmp_path / "data") as (server, url, port):
            for path in ("/", "/any/path?x=1"):         # any path (PROTOCOL.md)
                with await Raw.open(port) as raw:
                    key = new_key()
                    await raw.send(upgrade_request(raw.host, path=path, key=key))
                    head = await raw.read_head()
                    assert head.status == 101, head.raw
                    assert head.header("upgrade").lower() == "websocket", head.raw
                    assert "upgrade" in head.header("connection").lower(), head.raw
                    assert head.header("sec-websocket-accept") == accept_for(key), head.raw
            # and the socket then speaks WebSocket: hello, welcome
            (await said_hello(port)).close()


NOT_HTTP = {
    "ssh banner": b"SSH-2.0-OpenSSH_9.6\r\n\r\n",
    "tls-like bytes": b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + bytes(range(32)) + b"\r\n\r\n",
    "smtp": b"EHLO evil.example\r\n\r\n",
    "http/0.9": b"GET /\r\n\r\n",
}


def bad_upgrades(host: str) -> dict[str, bytes]:
    key = new_key()
    return {
        "plain GET of another path": f"GET /index.html HTTP/1.1\r\nHost: {host}\r\n\r\n".encode(),
        "POST with upgrade": upgrade_request(host).replace(b"GET ", b"POST ", 1),
        "no Sec-WebSocket-Key": upgrade_request(host, key=key).replace(f"Sec-WebSocket-Key: {key}\r\n".encode(), b""),
        "Sec-WebSocket-Version 8": upgrade_request(host, version="8"),
        "no Upgrade header": upgrade_request(host).replace(b"Upgrade: websocket\r\n", b""),
        "HTTP/1.0": upgrade_request(host).replace(b"HTTP/1.1", b"HTTP/1.0", 1),
    }


async def refused_with_4xx(port: int, data: bytes, also: tuple[int, ...] = ()) -> None:
    """``data`` sent on a fresh connection gets an HTTP 4xx answer (or one of ``also``),
    then the server closes."""
    with await Raw.open(port) as raw:
        await raw.send(data)
        with trio.fail_after(5):
            head = await raw.read_head()
        assert 400 <= head.status < 500 or head.status in also, head.raw
        await ends_within(raw, 3, f"after its {head.status}")


async def test_not_http_gets_a_4xx_and_the_server_goes_on(tmp_path):
    """Each in turn, to one server (hostilekit.every_case)."""
    async def check(what: str, data: bytes) -> None:
        await refused_with_4xx(port, data)
        (await said_hello(port)).close()

    with trio.fail_after(40):
        async with under_attack(tmp_path / "data") as (server, url, port):
            await every_case(NOT_HTTP, check)


async def test_a_request_that_is_not_an_upgrade_gets_a_4xx(tmp_path):
    """Each in turn, to one server (hostilekit.every_case)."""
    async def check(what: str, data: bytes) -> None:
        # HTTP/1.0: 505 Version Not Supported says it as well as a 4xx
        await refused_with_4xx(port, data, (505,) if what == "HTTP/1.0" else ())
        (await said_hello(port)).close()

    with trio.fail_after(40):
        async with under_attack(tmp_path / "data") as (server, url, port):
            await every_case(bad_upgrades(f"127.0.0.1:{port}"), check)


async def test_a_head_over_16_kib_gets_a_4xx(tmp_path):
    """A complete head of 17 KiB, and one that never ends: both answered with a 4xx as soon
    as they pass 16 KiB (not held until the handshake timeout)."""
    with trio.fail_after(20):
        async with under_attack(tmp_path / "data") as (server, url, port):
            host = f"127.0.0.1:{port}"
            pad = "X-Pad: " + "a" * (17 * 1024) + "\r\n"
            whole = upgrade_request(host, extra=(pad.rstrip("\r\n"),))
            assert len(whole) > 16 * 1024
            await refused_with_4xx(port, whole)
            # one that never ends: many header lines and no blank line
            endless = f"GET / HTTP/1.1\r\nHost: {host}\r\n".encode() + b"".join(
                f"X-Line-{i}: {os.urandom(24).hex()}\r\n".encode() for i in range(400))
            assert len(endless) > 16 * 1024
            await refused_with_4xx(port, endless)
            (await said_hello(port)).close()
