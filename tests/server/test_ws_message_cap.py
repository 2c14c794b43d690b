"""The message cap holds at the WebSocket layer, in bytes, by hand: a message over the
protocol's frame cap (64 KiB, codec.MAX_FRAME) is refused with close 1009 as soon as a
header declares it (the payload is never waited for), fragments add up to the same cap,
and a partial message that stalls does not hold its connection past the timeout. Many
connections doing it at once leave the server and the well-behaved player unhurt."""

from __future__ import annotations

import pytest
import trio

from wildtable.protocol.codec import MAX_FRAME

from hostilekit import (OP_BINARY, OP_CONT, Raw, Sockets, binary, client_frame, close_code, ends_within, said_hello,
                        under_attack, upgraded)
from serverkit import server_config

MiB = 1 << 20


@pytest.mark.parametrize("declared", [MiB, MAX_FRAME + 1], ids=["1 MiB", "64 KiB + 1"])
async def test_a_header_declaring_over_the_cap_is_closed_1009_without_its_payload(tmp_path, declared):
    with trio.fail_after(20):
        async with under_attack(tmp_path / "data") as (server, url, port):
            with await said_hello(port) as raw:
                await raw.send(client_frame(OP_BINARY, b"", length=declared))     # the header alone
                before, close = await close_code(raw, 3)
                assert close is not None and close.code == 1009, (before, close)
                await ends_within(raw, 2, "after close 1009")
            (await said_hello(port, "after")).close()


async def test_fragments_adding_up_over_the_cap_are_closed_1009(tmp_path):
    with trio.fail_after(20):
        async with under_attack(tmp_path / "data") as (server, url, port):
            with await said_hello(port) as raw:
                half = MAX_FRAME // 2
                await raw.send(client_frame(OP_BINARY, b"\x00" * half, fin=False)
                               + client_frame(OP_CONT, b"\x00" * half, fin=False))
                await raw.send(client_frame(OP_CONT, b"\x00", fin=False))          # one byte over, still open
                before, close = await close_code(raw, 3)
                assert close is not None and close.code == 1009, (before, close)
                await ends_within(raw, 2, "after close 1009")


async def test_a_message_of_exactly_the_cap_is_not_closed(tmp_path):
    """The boundary: 65,536 bytes reach the protocol (here: not msgpack, so an error) and
    the connection stays open."""
    with trio.fail_after(20):
        async with under_attack(tmp_path / "data") as (server, url, port):
            with await said_hello(port) as raw:
                await raw.send(client_frame(OP_BINARY, b"\xc1" * MAX_FRAME))
                with trio.fail_after(3):
                    err = await raw.read_message()
                assert err["type"] == "error", err
                await raw.send(binary({"type": "list_tables"}))
                with trio.fail_after(3):
                    assert (await raw.read_message())["type"] == "table_list"


async def test_many_connections_each_with_a_1_mib_partial_message_are_refused(tmp_path):
    """30 connections (three addresses) each start a 1 MiB message (the header and 60 KiB
    of it, or 60 KiB fragments) and stall: each is closed 1009 at once, none is held."""
    with trio.fail_after(30):
        async with under_attack(tmp_path / "data") as (server, url, port), Sockets() as conns:
            for i in range(30):
                raw = await upgraded(port, source=f"127.0.2.{i % 3 + 1}")
                conns.append(raw)
                if i % 2:
                    data = client_frame(OP_BINARY, b"\x00" * (60 * 1024), length=MiB)[:60 * 1024 + 14]
                else:
                    chunk = b"\x00" * (60 * 1024)
                    data = client_frame(OP_BINARY, chunk, fin=False) + client_frame(OP_CONT, chunk, fin=False)
                await raw.send(data)

            async def refused(raw: Raw) -> None:
                before, close = await close_code(raw, 5)
                assert close is not None and close.code == 1009, (before, close)
                await ends_within(raw, 3, "after close 1009")
            async with trio.open_nursery() as n:
                for raw in conns:
                    n.start_soon(refused, raw)
            (await said_hello(port, "after")).close()


async def test_a_stalled_partial_message_does_not_hold_the_connection(tmp_path):
    """20 connections each send part of a message under the cap (a frame header declaring
    60 KiB and 1 KiB of it, or a first fragment) and stall, before hello: each is closed
    once the hello timeout (here 1 s) has passed, whether or not it reads."""
    with trio.fail_after(30):
        async with under_attack(server_config(tmp_path / "data", hello_timeout=1.0)) as (server, url, port), Sockets() as conns:
            for i in range(20):
                raw = await upgraded(port, source=f"127.0.3.{i % 2 + 1}")
                conns.append(raw)
                if i % 2:
                    await raw.send(client_frame(OP_BINARY, b"\x00" * 1024, length=60 * 1024)[:1024 + 8])
                else:
                    await raw.send(client_frame(OP_BINARY, b"\x00" * 1024, fin=False))
            async with trio.open_nursery() as n:
                for raw in conns:
                    n.start_soon(ends_within, raw, 5.0, "with a stalled partial message (hello timeout 1 s)")
            (await said_hello(port, "after")).close()
