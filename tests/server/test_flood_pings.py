"""A ping flood at full speed: empty masked pings (`89 80` and a 4-byte key, 6 bytes each)
written in 64 KiB chunks as fast as the socket takes them, the pongs read. Every frame
costs the connection budget (docs/PROTOCOL.md, "Connection lifetime" 5): the flooder is
closed with 1008 within 2 s, logged once, and two players at another table keep their p99
intent-to-update under 50 ms throughout (at 08d2ea1: 405-490 ms, the flooder never cut)."""

from __future__ import annotations

import trio

from floodkit import ATTACKER, attacked, chunk_of, flood_until_close, logged
from hostilekit import OP_PING, OP_PONG, binary, client_frame, port_of, said_hello


async def test_a_full_speed_ping_flood_is_closed_within_2_s_and_nobody_else_notices(tmp_path):
    with trio.fail_after(60):
        async with attacked(tmp_path / "data") as srv:
            raw = await said_hello(port_of(srv.url), "flooder", source=ATTACKER)
            with raw:
                ping = client_frame(OP_PING, b"", mask=b"\x01\x02\x03\x04")
                assert ping == b"\x89\x80\x01\x02\x03\x04"
                close, took, before = await flood_until_close(raw, b"", chunk_of(ping), within=10)
            assert close is not None, f"the flooder was not closed within 10 s ({before} frames answered)"
            assert close.code == 1008 and "too many frames" in close.reason, close
            assert took < 2, f"closed after {took:.2f} s"
            # a burst's worth of pongs at most (400 frames, docs/PROTOCOL.md), not the
            # 200,000 a second of 08d2ea1
            assert before <= 400, before
            await logged(srv, "too many frames")
            # the server goes on: another connection from the same address is served
            with await said_hello(port_of(srv.url), "after", source=ATTACKER) as again:
                await again.send(client_frame(OP_PING, b"hi") + binary({"type": "list_tables"}))
                pong = await again.read_frame()
                assert (pong.opcode, pong.payload) == (OP_PONG, b"hi"), pong
                assert (await again.read_message())["type"] == "table_list"
        assert srv.log.count("too many frames") == 1, srv.log
