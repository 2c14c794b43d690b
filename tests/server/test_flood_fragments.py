"""Fragments flat out: one message in 100,000 empty continuation frames, and pings
between the fragments of messages each within the fragment cap. A message holds at most
64 fragments (`serve --max-fragments`), and every frame, pings and fragments alike, costs
the connection budget (docs/PROTOCOL.md, "Connection lifetime" 5): either way the sender is
closed with 1008 within 2 s, logged once, and two players at another table keep their p99
intent-to-update under 50 ms (at 08d2ea1 one message of 100,000 fragments held a
player's intent ~300 ms, and nothing was ever closed)."""

from __future__ import annotations

import trio

from floodkit import ATTACKER, attacked, chunk_of, flood_until_close, logged
from hostilekit import (OP_BINARY, OP_CONT, OP_PING, OP_PONG, client_frame, pack, port_of, said_hello,
                       serve_process)

FIRST = client_frame(OP_BINARY, b"", fin=False)
MORE = client_frame(OP_CONT, b"", fin=False)
LAST = client_frame(OP_CONT, b"", fin=True)
PING = client_frame(OP_PING, b"")


def in_fragments(payload: bytes, count: int, between: bytes = b"") -> bytes:
    """One binary message of ``payload`` in ``count`` fragments (the payload in the first,
    the rest empty), ``between`` sent after each fragment but the last."""
    if count == 1:
        return client_frame(OP_BINARY, payload)
    return (client_frame(OP_BINARY, payload, fin=False) + between + (MORE + between) * (count - 2)
            + LAST)


async def test_one_message_in_100000_empty_fragments_is_closed_at_once(tmp_path):
    with trio.fail_after(60):
        async with attacked(tmp_path / "data") as srv:
            with await said_hello(port_of(srv.url), "fragments", source=ATTACKER) as raw:
                close, took, before = await flood_until_close(raw, FIRST + MORE * 99_998 + LAST, None, within=10)
            assert close is not None, "not closed within 10 s"
            assert close.code == 1008 and "in more than 64 fragments" in close.reason, close
            assert took < 2, f"closed after {took:.2f} s"
            await logged(srv, "in more than 64 fragments")
        assert srv.log.count("in more than 64 fragments") == 1, srv.log


async def test_pings_between_fragments_flat_out_are_closed_within_2_s(tmp_path):
    """Messages of 16 fragments each (within the cap), a ping after every fragment: it is
    the frame budget that closes the sender."""
    with trio.fail_after(60):
        async with attacked(tmp_path / "data") as srv:
            with await said_hello(port_of(srv.url), "interleaved", source=ATTACKER) as raw:
                message = in_fragments(pack({"type": "list_tables"}), 16, between=PING)
                close, took, before = await flood_until_close(raw, b"", chunk_of(message), within=10)
            assert close is not None, f"not closed within 10 s ({before} frames answered)"
            assert close.code == 1008 and "too many frames" in close.reason, close
            assert took < 2, f"closed after {took:.2f} s"
            await logged(srv, "too many frames")
        assert srv.log.count("too many frames") == 1, srv.log


async def test_a_message_in_64_fragments_is_served_and_one_in_65_is_closed(tmp_path):
    """The cap at its default (64): a list_tables in 64 fragments, pings between them, is
    answered (the pings first, as they come); one in 65 is closed with 1008."""
    async with serve_process(tmp_path / "data") as srv:
        port = port_of(srv.url)
        with trio.fail_after(20):
            with await said_hello(port, "edge") as raw:
                await raw.send(in_fragments(pack({"type": "list_tables"}), 64, between=PING))
                pongs = 0
                while (f := await raw.read_frame()).opcode == OP_PONG:
                    pongs += 1
                assert pongs == 63 and f.message()["type"] == "table_list", (pongs, f)
            with await said_hello(port, "over") as raw:
                await raw.send(in_fragments(pack({"type": "list_tables"}), 65))
                frames, close = await raw.until_close()
                assert close is not None and close.code == 1008, (frames, close)
                assert close.reason == "a message in more than 64 fragments", close
