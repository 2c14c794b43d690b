"""A spectator that reads, but slower than its table plays, at the server's default
timers (a ping every 20 s, 15 s for its pong): closed as a slow consumer (1013), not
told "no answer to ping" (1001) as it was. Its pings wait behind what it has not read
yet, so at a few kB/s the pong comes late, well before 512 frames wait in the backlog
(the kernel's buffers hold many more): the server now tells the two apart by what still
waits for the peer (server/connection.py ``_ping_overdue``). A reader fast enough is
not closed. test_slow_consumer.py tries slow readers with a 1 s heartbeat.

On trio's mock clock (tests/mockclockkit.py): a busy Run Wild table (steadykit, an
action every 50 ms) and a raw spectator with a 4 kB receive buffer reading at a fixed
rate, answering each ping it reads; minutes of play in seconds."""

from __future__ import annotations

import pytest
import trio

from wildtable.server import connection

from hostilekit import OP_BINARY, OP_PING, OP_PONG, Gone, binary, client_frame, port_of, said_hello
from mockclockkit import OneThreadWorld
from serverkit import running_server, server_config
from steadykit import busy_table

CLOSE = 0x8


async def spectating(tmp_path, rate: float, seconds: float) -> tuple[dict[int, int], int, int]:
    """(the server's closes by code once the spectator is gone, or {} if it read for
    ``seconds``; frames read; pings answered) of a spectator reading ``rate`` bytes a
    second. Its close frame may not reach it: the server drops what waits for a slow
    consumer, and the close frame, behind what fills the kernel's buffers, may not go out
    in the 2 s it is given (a reset then), so the server's own count says which close."""
    assert (connection.HEARTBEAT, connection.PONG_TIMEOUT) == (20.0, 15.0)
    async with running_server(server_config(tmp_path / "data"), world=OneThreadWorld()) as (server, url):
        async with busy_table(url, 0.05) as (table, made):
            raw = await said_hello(port_of(url), "reader", rcvbuf=4096)
            await raw.send(binary({"type": "spectate", "table": table}))
            raw.read_at(rate)
            read = pings = 0
            with raw, trio.move_on_after(seconds):
                try:
                    while True:
                        f = await raw.read_frame()
                        if f.opcode == OP_PING:
                            pings += 1
                            await raw.send(client_frame(OP_PONG, f.payload))
                        elif f.opcode == OP_BINARY:
                            read += 1
                        elif f.opcode == CLOSE:
                            break
                except Gone:
                    pass
                while any(c.name == "reader" for c in server.connections):
                    await trio.sleep(0.1)
                return dict(server.metrics.closes), read, pings
            return {}, read, pings


@pytest.mark.parametrize("rate", [1500])
async def test_a_reader_slower_than_its_table_is_closed_as_a_slow_consumer(tmp_path, autojump_clock, rate):
    closes, read, pings = await spectating(tmp_path, rate, 300)
    assert closes, f"reading {rate} B/s it was never closed ({read} frames read)"
    assert closes == {connection.CLOSE_TRY_LATER: 1}, closes        # 1013, not 1001
    assert pings >= 1          # it answered the pings it read: it was reading, not gone


async def test_a_reader_that_keeps_up_is_not_closed(tmp_path, autojump_clock):
    closes, read, pings = await spectating(tmp_path, 4000, 120)
    assert closes == {}, (closes, read)
    assert read > 1500 and pings >= 5
