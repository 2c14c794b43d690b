"""Slow consumers, with raw-socket spectators (a small SO_RCVBUF) at a busy Run Wild table:
one that reads slower than the table produces is closed with 1013 "slow consumer",
whatever its read rate, never 1001 "send timeout" (which is only for a peer that takes
nothing for 10 s). The players at that table and the well-behaved player at another one
play on."""

from __future__ import annotations

import trio

from hostilekit import OP_BINARY, Raw, binary, busy_table, said_hello, under_attack

RCVBUF = 4096


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


async def deaf_reader(raw: Raw, deaf_for: float) -> None:
    """Take nothing for ``deaf_for`` s (past the 10 s send timeout), then read fast: the
    server has let it go by then, so what is left ends (a close frame, if one got through,
    says 1013 or 1001) instead of catching up with the table."""
    await trio.sleep(deaf_for)
    with trio.fail_after(5):
        before, close = await raw.until_close()
        if close is not None:
            assert close.code in (1013, 1001), f"a spectator that took nothing: close {close.code} {close.reason!r}"
            await raw.wait_gone()


async def test_spectators_slower_than_a_busy_table_are_closed(tmp_path):
    """Two spectators of a table producing ~50 kB/s: one reads 15 kB/s (closed 1013), one
    takes nothing (let go, not held)."""
    with trio.fail_after(45):
        async with under_attack(tmp_path / "data") as (server, url, port), busy_table(url, 0.004) as (table, _), \
                await spectator(port, table, "slowpoke") as slow, await spectator(port, table, "deaf") as deaf:
            async with trio.open_nursery() as n:
                n.start_soon(slow_reader, slow, 15_000)
                n.start_soon(deaf_reader, deaf, 11.0)


BURST = 350     # updates of ~380 B: ~130 kB, under both backlog caps (512 frames, 1 MiB)


async def test_a_spectator_taking_bytes_slowly_is_not_closed_for_a_send_timeout(tmp_path):
    """A burst of 350 updates from the busy table, then the table rests; the spectator
    reads 8 kB/s all along, so draining takes ~15 s, past the 10 s send timeout. It takes
    bytes the whole time, so it is not "send timeout: nothing taken for 10 s" (1001, which
    the old layer sent it: issue #14); it is not closed at all, and gets every update in
    order, then the answer to its list_tables."""
    with trio.fail_after(45):
        async with under_attack(tmp_path / "data") as (server, url, port):
            async with busy_table(url, 0.004) as (table, made):
                raw = await spectator(port, table, "patient")
                raw.read_at(8_000)
                base = len(made.latencies)
                while len(made.latencies) < base + BURST:
                    await trio.sleep(0.02)
            with raw:
                await raw.send(binary({"type": "list_tables"}))
                seqs = []
                started = trio.current_time()
                with trio.fail_after(35):
                    while True:
                        f = await raw.read_frame()
                        assert f.opcode == OP_BINARY, f"{f} after {trio.current_time() - started:.1f} s of reading 8 kB/s"
                        msg = f.message()
                        if msg["type"] == "table_list":
                            break
                        assert msg["type"] in ("update", "players"), msg
                        if msg["type"] == "update":
                            seqs.append(msg["seq"])
                assert len(seqs) >= BURST, f"only {len(seqs)} updates of {BURST}"
                assert seqs == list(range(seqs[0], seqs[0] + len(seqs))), "updates missing or out of order"
                assert trio.current_time() - started > 5, "drained too fast to stand for a slow reader"
