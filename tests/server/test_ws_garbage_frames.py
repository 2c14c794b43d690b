"""WebSocket-level garbage after the handshake, by hand: each kind gets a close frame with
1002 (protocol error), or 1007 for bad UTF-8, and then the server ends the TCP connection
by itself (a peer sending garbage is not waited on for a close reply). The server goes on,
and the well-behaved player at another table does not notice."""

from __future__ import annotations

import trio

from hostilekit import (OP_BINARY, OP_CLOSE, OP_CONT, OP_PING, OP_TEXT, binary, client_frame, close_code,
                        close_payload, ends_within, every_case, pack, said_hello, under_attack, upgraded)

LIST = pack({"type": "list_tables"})

GARBAGE: dict[str, tuple[bytes, int]] = {
    "unmasked client frame": (client_frame(OP_BINARY, LIST, masked=False), 1002),
    "RSV1 set": (client_frame(OP_BINARY, LIST, rsv=4), 1002),
    "RSV2 set": (client_frame(OP_BINARY, LIST, rsv=2), 1002),
    "RSV3 set": (client_frame(OP_BINARY, LIST, rsv=1), 1002),
    **{f"reserved opcode {op:#x}": (client_frame(op, LIST), 1002) for op in (3, 4, 5, 6, 7, 0xB, 0xC, 0xD, 0xE, 0xF)},
    "ping with 126 bytes": (client_frame(OP_PING, b"p" * 126), 1002),
    "close with 126 bytes": (client_frame(OP_CLOSE, close_payload(1000, "r" * 124)), 1002),
    "fragmented ping": (client_frame(OP_PING, b"half", fin=False), 1002),
    "stray continuation": (client_frame(OP_CONT, LIST), 1002),
    "new message inside a fragmented one": (
        client_frame(OP_BINARY, LIST[:3], fin=False) + client_frame(OP_BINARY, LIST), 1002),
    **{f"close code {c}": (client_frame(OP_CLOSE, close_payload(c)), 1002)
       for c in (999, 1004, 1005, 1006, 1015, 2999, 5000)},
    "close with a 1-byte payload": (client_frame(OP_CLOSE, b"\x03"), 1002),
    "declared length 2^63": (client_frame(OP_BINARY, b"", length=1 << 63), 1002),
    "declared length 2^64-1": (client_frame(OP_BINARY, b"", length=(1 << 64) - 1), 1002),
    "text frame with bad UTF-8": (client_frame(OP_TEXT, b"caf\xc3(\xff\xfe"), 1007),
    "fragmented text with bad UTF-8": (
        client_frame(OP_TEXT, b"ok \xe2\x82", fin=False) + client_frame(OP_CONT, b"\xff end"), 1007),
    "close reason with bad UTF-8": (client_frame(OP_CLOSE, close_payload(1000) + b"\xff\xfe"), 1007),
}


async def test_websocket_garbage_gets_its_close_code_and_the_socket_closes(tmp_path):
    """Every kind of garbage in turn, each on a connection of its own to one server, with
    the well-behaved player at its table all along."""
    async def check(kind: str, case: tuple[bytes, int]) -> None:
        data, want = case
        with await said_hello(port) as raw:
            await raw.send(data)
            before, close = await close_code(raw, 3)
            assert close is not None, f"the connection ended with no close frame (after {before})"
            assert close.code == want, f"close {close.code} {close.reason!r}, not {want}"
            assert not close.masked and close.fin, close
            await ends_within(raw, 2, "after closing (no close reply is owed)")

    with trio.fail_after(60):
        async with under_attack(tmp_path / "data") as (server, url, port):
            await every_case(GARBAGE, check)
            (await said_hello(port, "after")).close()


async def test_garbage_before_hello_is_refused_the_same_way(tmp_path):
    """Before hello too (a stranger need not say who it is to send garbage)."""
    with trio.fail_after(20):
        async with under_attack(tmp_path / "data") as (server, url, port):
            for kind in ("unmasked client frame", "declared length 2^63", "text frame with bad UTF-8"):
                data, want = GARBAGE[kind]
                with await upgraded(port) as raw:
                    await raw.send(data)
                    before, close = await close_code(raw, 3)
                    assert close is not None and close.code == want, (kind, before, close)
                    await ends_within(raw, 2, f"after closing for {kind}")


async def test_a_well_formed_fragmented_message_is_one_message(tmp_path):
    """The other side of the rules: fragments with pings between them make one message."""
    with trio.fail_after(20):
        async with under_attack(tmp_path / "data") as (server, url, port):
            with await said_hello(port) as raw:
                await raw.send(client_frame(OP_BINARY, LIST[:2], fin=False) + client_frame(OP_PING, b"x")
                               + client_frame(OP_CONT, LIST[2:5], fin=False) + client_frame(OP_CONT, LIST[5:]))
                with trio.fail_after(3):
                    pong = await raw.read_frame()
                    assert pong.payload == b"x", pong
                    msg = await raw.read_message()
                assert msg["type"] == "table_list", msg
                await raw.send(binary({"type": "list_tables"}))
                with trio.fail_after(3):
                    assert (await raw.read_message())["type"] == "table_list"
