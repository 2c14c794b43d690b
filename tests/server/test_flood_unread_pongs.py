"""A pinger that never reads (125-byte pings, a 4 KiB receive buffer): every pong we owe
it waits in its backlog, under the caps our data waits under (512 frames, 1 MiB:
docs/PROTOCOL.md, "Connection lifetime" 6), and the frame budget bounds how fast it can
ask (5). Flat out it is closed at once; within the frame rate it is closed (1008) once it
owes more than the caps, well before the 10 s send timeout; either way the server's RSS
grows by a few MB at most (at 08d2ea1: 290-341 MB), and two players at another table
keep their p99 intent-to-update under 50 ms."""

from __future__ import annotations

import trio

from floodkit import ATTACKER, PeakRss, attacked, chunk_of, logged, write_flat_out
from hostilekit import OP_PING, client_frame, port_of, said_hello

PING = client_frame(OP_PING, b"p" * 125)
CAP = 1024 * 1024       # the backlog's byte cap (docs/PROTOCOL.md)


async def unread_pinger(srv, first: bytes, then: bytes, rate: float, within: float) -> tuple[float, PeakRss]:
    """A connection with a 4 KiB receive buffer that says hello, sends ``first``, then
    ``then`` ``rate`` times a second (0: flat out), and never reads; the server's peak RSS is
    watched meanwhile. Returns when the server has ended the connection (the seconds it
    took from the first ping) and the RSS seen."""
    raw = await said_hello(port_of(srv.url), "pinger", source=ATTACKER, rcvbuf=4096)
    watch = PeakRss(srv.proc.pid)
    with raw:
        async with trio.open_nursery() as n:
            n.start_soon(watch.watch)
            t0 = trio.current_time()
            with trio.move_on_after(within) as scope:
                if await raw.send(first):
                    await write_flat_out(raw, then, rate=rate)
            n.cancel_scope.cancel()
    assert not scope.cancelled_caught, (f"the server still took pings after {within:g} s; its RSS grew by "
                                        f"{watch.growth / 1e6:.1f} MB")
    return trio.current_time() - t0, watch


async def test_a_flat_out_pinger_that_never_reads_costs_a_few_mb(tmp_path):
    with trio.fail_after(60):
        async with attacked(tmp_path / "data") as srv:
            took, watch = await unread_pinger(srv, b"", chunk_of(PING), rate=0, within=8)
            assert watch.growth < 4 * CAP, f"server RSS grew by {watch.growth / 1e6:.1f} MB"
            await logged(srv, "too many frames")
        assert srv.log.count("too many frames") == 1, srv.log


async def test_a_pinger_within_the_rate_that_never_reads_is_closed_at_the_backlog_cap(tmp_path):
    """150 pings a second (the frame budget allows 200) after a burst of 350 (it allows
    400): closed for what it owes (512 pongs waiting) in a few seconds, not after the 10 s
    of the send timeout, which is all that closed it at 08d2ea1."""
    with trio.fail_after(60):
        async with attacked(tmp_path / "data") as srv:
            took, watch = await unread_pinger(srv, PING * 350, PING, rate=150, within=9)
            assert watch.growth < 4 * CAP, f"server RSS grew by {watch.growth / 1e6:.1f} MB"
            await logged(srv, "too much owed")
            assert "took no bytes" not in srv.log, srv.log
        assert srv.log.count("too much owed") == 1, srv.log
