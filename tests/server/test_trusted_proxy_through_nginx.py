"""Behind a real nginx, each player is still one address to the caps (issue #22).

A real `wildtable serve --trusted-proxy 127.0.0.1` (its default caps: 32 connections and
4 waiting tables per address) behind Debian's nginx, configured with the block
docs/PLAYING.md documents (tests/nginxkit.py reads it from the doc). Players connect to
nginx from their own loopback addresses (127.0.x.y); nginx connects to the server from
127.0.0.1 and appends each player's address to ``X-Forwarded-For``.

The adversary: a player who forges ``X-Forwarded-For`` to pass as many addresses, through
nginx or straight to the server. Before --trusted-proxy, every player behind nginx was
127.0.0.1, and the 33rd connection of anyone got 503."""

from __future__ import annotations

import pytest
import trio

from wildtable.protocol import messages as m

from hostilekit import (OP_BINARY, Head, Raw, Sockets, accept_for, binary, client_frame, new_key, port_of,
                        serve_process, upgrade_request)
from nginxkit import NGINX, running_nginx

pytestmark = pytest.mark.skipif(not NGINX.exists(), reason="needs Debian's nginx at /usr/sbin/nginx "
                                "(apt-get install nginx; .ci/run installs it)")

CAP = 32            # serve --max-per-address, its default
OVER = "too many connections from your address (at most 32)"


async def handshake(port: int, source: str, forged: str | None = None) -> tuple[Raw, Head, bytes]:
    """A WebSocket handshake to 127.0.0.1:``port`` from ``source``, forging
    ``X-Forwarded-For`` if asked: the socket, the answer's head and its body."""
    raw = await Raw.open(port, source=source)
    try:
        key = new_key()
        extra = () if forged is None else (f"X-Forwarded-For: {forged}",)
        await raw.send(upgrade_request(raw.host, key=key, extra=extra))
        with trio.fail_after(5):
            head = await raw.read_head()
            body = b""
            if head.status == 101:
                assert head.header("sec-websocket-accept") == accept_for(key), head.raw
            else:
                while len(raw.buf) < int(head.header("content-length") or 0):
                    await raw._fill()
                body = bytes(raw.buf)
    except BaseException:
        raw.close()
        raise
    return raw, head, body


async def admitted(port: int, source: str, forged: str | None = None) -> Raw:
    raw, head, body = await handshake(port, source, forged)
    if head.status != 101:
        raw.close()
        raise AssertionError(f"a connection from {source} (X-Forwarded-For forged: {forged}) got {head.status}: "
                             f"{body!r}")
    return raw


async def admitted_again(port: int, source: str) -> Raw:
    """``admitted``, once the server has seen a connection of ``source``'s end (its slot
    is given back a moment after the close): retried until then, 5 s at most."""
    with trio.fail_after(5):
        while True:
            raw, head, _ = await handshake(port, source)
            if head.status == 101:
                return raw
            raw.close()
            await trio.sleep(0.05)


async def over_the_cap(port: int, source: str, forged: str | None = None) -> None:
    raw, head, body = await handshake(port, source, forged)
    with raw:
        assert head.status == 503 and OVER in body.decode(), (head.raw, body)


async def test_40_players_behind_nginx_are_40_addresses_to_the_caps(tmp_path):
    with trio.fail_after(60):
        async with serve_process(tmp_path / "data", "--trusted-proxy", "127.0.0.1") as srv, \
                running_nginx(tmp_path / "nginx", port_of(srv.url)) as port, Sockets() as held:
            # 40 players, 40 addresses: 40 connections at once through one proxy (over 32)
            for i in range(1, 41):
                held.append(await admitted(port, f"127.0.1.{i}"))
            # one player is one address: its 33rd connection gets the 503 and sentence a
            # direct connection gets, while another player still comes in
            for _ in range(CAP):
                held.append(await admitted(port, "127.0.2.1"))
            await over_the_cap(port, "127.0.2.1")
            held.append(await admitted(port, "127.0.2.2"))
            # a connection that ends gives its slot back to that player's address
            held.pop(-2).close()
            held.append(await admitted_again(port, "127.0.2.1"))
            # the server's log names the player, not the proxy
            said = "refused a connection from 127.0.2.1 (via 127.0.0.1): " + OVER
            with trio.fail_after(5):
                while said not in srv.log:
                    await trio.sleep(0.05)          # until the line is read from its stderr


async def test_a_forged_header_changes_nothing(tmp_path):
    with trio.fail_after(60):
        async with serve_process(tmp_path / "data", "--trusted-proxy", "127.0.0.1") as srv, \
                running_nginx(tmp_path / "nginx", port_of(srv.url)) as port, Sockets() as held:
            # through nginx: it appends the player's own address, which is what counts
            for i in range(CAP):
                held.append(await admitted(port, "127.0.3.1", forged=f"198.51.100.{i + 1}"))
            await over_the_cap(port, "127.0.3.1", forged="198.51.100.200")
            # straight to the server from a peer that is not a trusted proxy: ignored
            direct = port_of(srv.url)
            for i in range(CAP):
                held.append(await admitted(direct, "127.0.0.2", forged=f"203.0.113.{i + 1}"))
            await over_the_cap(direct, "127.0.0.2", forged="203.0.113.200")
            # and the addresses forged got no slot: each is free for its own 32
            held.append(await admitted(port, "127.0.3.2", forged="198.51.100.1"))


async def test_waiting_tables_count_per_player_behind_nginx(tmp_path):
    """serve --max-waiting-per-address (4) keys on the player's address too."""

    async def create(raw: Raw) -> dict:
        await raw.send(client_frame(OP_BINARY, m.encode(m.CreateTable("run-wild", 2))))
        while True:
            got = await raw.read_message()
            if got["type"] in ("table_created", "error"):
                return got

    with trio.fail_after(60):
        async with serve_process(tmp_path / "data", "--trusted-proxy", "127.0.0.1") as srv, \
                running_nginx(tmp_path / "nginx", port_of(srv.url)) as port, Sockets() as held:
            players = {}
            for source in ("127.0.4.1", "127.0.4.2"):
                raw = await admitted(port, source)
                held.append(raw)
                await raw.send(binary({"type": "hello", "version": m.PROTOCOL_VERSION, "name": source}))
                assert (await raw.read_message())["type"] == "welcome"
                players[source] = raw
            for _ in range(4):
                assert (await create(players["127.0.4.1"]))["type"] == "table_created"
            refused = await create(players["127.0.4.1"])
            assert refused["type"] == "error" and refused["code"] == "too_many_waiting_tables", refused
            assert (await create(players["127.0.4.2"]))["type"] == "table_created"
