"""Frames a client sends before the 101 comes back are its messages all the same (RFC 6455
section 4.1 lets a client send once its handshake is sent; a client that pipelines, or a
proxy that coalesces, puts them in the server's first read). Before, the listener kept only
the handshake's Request of what the parser read and dropped the frames beside it: a hello
sent that way was never answered, and the connection was closed at the hello timeout.

The adversary is the same client flooding in that read: those frames are charged to the
connection's frame budget at its first receive, like any other (server/framebudget.py)."""

from __future__ import annotations

import logging

import trio

from wildtable.protocol import messages as m
from wildtable.server.config import ServerConfig

from hostilekit import (OP_CLOSE, OP_PING, Raw, accept_for, binary, client_frame, close_payload, new_key,
                        upgrade_request)
from serverkit import running_server


async def test_hello_and_a_request_sent_with_the_handshake_are_answered(tmp_path):
    with trio.fail_after(20):
        async with running_server(ServerConfig(data_dir=tmp_path / "data")) as (server, url):     # serve's defaults
            port = int(url.rsplit(":", 1)[1])
            with await Raw.open(port) as raw:
                key = new_key()
                await raw.send(upgrade_request(raw.host, key=key)
                               + binary({"type": "hello", "version": m.PROTOCOL_VERSION, "name": "eager"})
                               + binary({"type": "list_tables"}))
                head = await raw.read_head()
                assert head.status == 101 and head.header("sec-websocket-accept") == accept_for(key), head.raw
                welcome = await raw.read_message()
                assert welcome["type"] == "welcome", welcome
                listed = await raw.read_message()
                assert listed["type"] == "table_list", listed


async def test_a_flood_sent_with_the_handshake_is_charged_to_the_frame_budget(tmp_path):
    flood = 5000        # pings, 35 kB: over the default burst (400 frames), all in the first read
    with trio.fail_after(20):
        async with running_server(ServerConfig(data_dir=tmp_path / "data")) as (server, url):     # serve's defaults
            port = int(url.rsplit(":", 1)[1])
            with await Raw.open(port) as raw:
                await raw.send(upgrade_request(raw.host)
                               + binary({"type": "hello", "version": m.PROTOCOL_VERSION, "name": "eager"})
                               + client_frame(OP_PING, b"x") * flood)
                head = await raw.read_head()
                assert head.status == 101, head.raw
                seen, close = await raw.until_close()
                assert close is not None and close.code == 1008, (close, len(seen))
                assert "too many frames" in close.reason, close.reason
                assert not any(f.opcode == OP_PING for f in seen)
            # the server goes on: another client is welcomed
            with await Raw.open(port) as other:
                await other.send(upgrade_request(other.host)
                                 + binary({"type": "hello", "version": m.PROTOCOL_VERSION, "name": "calm"}))
                assert (await other.read_head()).status == 101
                assert (await other.read_message())["type"] == "welcome"


async def test_a_close_sent_with_the_handshake_is_answered(tmp_path, caplog):
    """A client that opens and closes in one write (a request, a hello, a close frame): the
    protocol reads the close before the 101 opens it, and did not answer it; the server
    then tried to send a close of its own, which websockets refuses after a close came in
    (an AssertionError: "ended by a bug of ours", hundreds of times a run at 4,000 players
    on an overloaded machine). Now the close is echoed, as one that comes after the 101
    is, the connection ends, and nothing is logged as a bug."""
    caplog.set_level(logging.ERROR, logger="wildtable.server")
    with trio.fail_after(20):
        async with running_server(ServerConfig(data_dir=tmp_path / "data")) as (server, url):     # serve's defaults
            port = int(url.rsplit(":", 1)[1])
            for code, reason, hello in ((1000, "bye", True), (4001, "", False), (None, "", True)):
                with await Raw.open(port) as raw:
                    await raw.send(upgrade_request(raw.host)
                                   + (binary({"type": "hello", "version": m.PROTOCOL_VERSION, "name": "brief"})
                                      if hello else b"")
                                   + client_frame(OP_CLOSE, b"" if code is None else close_payload(code, reason)))
                    head = await raw.read_head()
                    assert head.status == 101, head.raw
                    seen, close = await raw.until_close()
                    assert close is not None, (code, seen)
                    assert close.code == (code or 1000), (code, close.code, close.reason)
                    await raw.wait_gone()
            with await Raw.open(port) as other:
                await other.send(upgrade_request(other.host)
                                 + binary({"type": "hello", "version": m.PROTOCOL_VERSION, "name": "calm"}))
                assert (await other.read_head()).status == 101
                assert (await other.read_message())["type"] == "welcome"
    bugs = [r.getMessage() for r in caplog.records if "bug of ours" in r.getMessage()]
    assert not bugs, bugs
