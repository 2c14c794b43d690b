"""Slow consumers, with raw-socket spectators (a small SO_RCVBUF) at a busy Run Wild table:
one that reads slower than the table produces is closed with 1013 "slow consumer",
whatever its read rate, never 1001 "send timeout" (which is only for a peer that takes
nothing for the send timeout: 10 s by default, 3 s for these servers, so that the tests
wait seconds, not tens of seconds; not less, for "nothing taken" is the socket not
becoming writable, and the kernel says writable only once a third of the send buffer is
free, which a reader of 15 kB/s can take more than a second to make). The players at that
table and the well-behaved player at another one play on."""

from __future__ import annotations

import pytest
import trio

from wildtable.server import connection, delivery

from hostilekit import (OP_BINARY, OP_PING, OP_PONG, Raw, binary, busy_table, client_frame, port_of, said_hello,
                        under_attack)
from serverkit import running_server, server_config
from waitkit import wait_until

RCVBUF = 4096
SEND_TIMEOUT = 3.0      # the servers' send timeout here (Server(send_timeout=...))


@pytest.fixture(autouse=True)
def whole_views(monkeypatch):
    """Every update a whole view (~380 B), as before updates became patches (~120 B): the
    table then makes the bytes per second the read rates here are chosen against (slower
    readers would meet the kernel's writability threshold, above, instead)."""
    monkeypatch.setattr(delivery, "FULL_EVERY", 1)


async def spectator(port: int, table: str, name: str) -> Raw:
    raw = await said_hello(port, name, rcvbuf=RCVBUF)
    await raw.send(binary({"type": "spectate", "table": table}))
    with trio.fail_after(5):
        while (msg := await raw.read_message())["type"] != "spectating":
            assert msg["type"] not in ("error",), msg
    return raw


async def slow_reader(raw: Raw, rate: float) -> None:
    """Read at ``rate`` B/s until the server's close frame: 1013 "slow consumer", in time."""
    started = trio.current_time()
    raw.read_at(rate)
    with trio.fail_after(30):
        before, close = await raw.until_close()
    took = trio.current_time() - started
    assert close is not None, f"reading {rate} B/s: the connection ended with no close frame after {took:.1f} s"
    assert close.code == 1013 and "slow consumer" in close.reason, \
        f"reading {rate} B/s: close {close.code} {close.reason!r} after {took:.1f} s, not 1013 slow consumer"


async def deaf_reader(server, raw: Raw, name: str) -> None:
    """Take nothing until the server has let the connection go (well past the send
    timeout: the server fills the socket, waits, then gives up), then read fast: what is
    left ends (a close frame, if one got through, says 1013 or 1001) instead of catching up
    with the table."""
    await wait_until(lambda: not any(c.name == name for c in server.connections),
                     timeout=20, step=0.05, what=f"{name}'s connection closed")
    with trio.fail_after(5):
        before, close = await raw.until_close()
        if close is not None:
            assert close.code in (1013, 1001), f"a spectator that took nothing: close {close.code} {close.reason!r}"
            await raw.wait_gone()


async def test_spectators_slower_than_a_busy_table_are_closed(tmp_path):
    """Two spectators of a table producing ~50 kB/s: one reads 15 kB/s (closed 1013), one
    takes nothing (let go, not held)."""
    with trio.fail_after(45):
        async with under_attack(server_config(tmp_path / "data", send_timeout=SEND_TIMEOUT, outbox=128)) as (server, url, port), \
                busy_table(url, 0.004) as (table, _), \
                await spectator(port, table, "slowpoke") as slow, await spectator(port, table, "deaf") as deaf:
            async with trio.open_nursery() as n:
                n.start_soon(slow_reader, slow, 15_000)
                n.start_soon(deaf_reader, server, deaf, "deaf")


BURST = 350     # updates of ~380 B: ~130 kB, under both backlog caps (512 frames, 1 MiB)
RATE = 16_000   # bytes per second the patient spectator reads, from the start of the burst
# updates the spectator must be behind when the table rests: 1.5 send timeouts of reading
# at RATE is ~190 of them. On a loaded machine the burst takes seconds, and the spectator
# reads meanwhile: 350 made was then only 1 s behind (drained 1.0 s), so the table plays
# on until it is this far ahead, not for a count of updates alone.
BEHIND = 260


@pytest.mark.alone
async def test_a_spectator_taking_bytes_slowly_is_not_closed_for_a_send_timeout(tmp_path, monkeypatch):
    """A burst of 350 updates from the busy table, then the table rests; the spectator
    reads 16 kB/s all along, so it still has seconds of updates to drain once the burst is
    over, more than the send timeout. It takes bytes the whole time, so it is not
    "send timeout: nothing taken" (1001, which the old layer sent it: issue #14); it is not
    closed at all, and gets every update in order, then the answer to its list_tables.

    The server's heartbeat pings (docs/PROTOCOL.md "Connection" 4) wait in the same
    backlog as the updates, in order, and the spectator answers them as a real client
    does: a ping every second here (20 s by default, which a loaded machine also reaches),
    so that it always meets some behind its backlog, and is not closed for "no answer to
    ping" while it drains."""
    monkeypatch.setattr(connection, "HEARTBEAT", 1.0)
    seqs: list[int] = []
    pings: list[int] = []       # how many updates had come before each ping
    listed = trio.Event()

    async def read_all(raw: Raw) -> None:
        with raw:
            while True:
                f = await raw.read_frame()
                if f.opcode == OP_PING:
                    pings.append(len(seqs))
                    await raw.send(client_frame(OP_PONG, f.payload))
                    continue
                assert f.opcode == OP_BINARY, f"{f} after {len(seqs)} updates, reading {RATE} B/s"
                msg = f.message()
                if msg["type"] == "table_list":
                    listed.set()
                    return
                assert msg["type"] in ("update", "players"), msg
                if msg["type"] == "update":
                    seqs.append(msg["seq"])

    with trio.fail_after(45):
        # No steady player here (a reader that keeps taking bytes is the player's own
        # concern; the players' is the test above's, with readers slower than the table),
        # but ``alone`` all the same: the table must outpace a reader of RATE, and beside
        # the other tests and two busy loops it did not (a streak run at load 9: 1,162
        # updates made in 30 s, 39 a second, 15 kB/s, the spectator never 260 behind).
        async with running_server(server_config(tmp_path / "data", send_timeout=SEND_TIMEOUT)) as (server, url), \
                trio.open_nursery() as n:
            port = port_of(url)
            async with busy_table(url, 0.004) as (table, made):
                raw = await spectator(port, table, "patient")
                raw.read_at(RATE)
                n.start_soon(read_all, raw)
                base = len(made.latencies)
                await wait_until(lambda: len(made.latencies) >= base + BURST
                                 and len(made.latencies) - base - len(seqs) >= BEHIND, timeout=30,
                                 what=f"{BURST} updates made, the spectator {BEHIND} behind",
                                 show=lambda: (len(made.latencies) - base, len(seqs)))
            # the table rests from here: what the spectator has not read yet waits for it
            rested = trio.current_time()
            await raw.send(binary({"type": "list_tables"}))
            with trio.fail_after(35):
                await listed.wait()
            drained = trio.current_time() - rested
    assert len(seqs) >= BURST, f"only {len(seqs)} updates of {BURST}"
    assert any(0 < k < len(seqs) for k in pings), f"no ping among the updates: {pings}"
    assert seqs == list(range(seqs[0], seqs[0] + len(seqs))), "updates missing or out of order"
    assert drained > 1.5 * SEND_TIMEOUT, \
        f"drained {drained:.1f} s after the burst: too fast to stand for a slow reader past the send timeout"
