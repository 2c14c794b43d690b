"""RFC 6455 close handling, by hand. Once the server has sent its close frame it answers
nothing more: a ping, a pong or a data frame after it is ignored (no pong, no error), and
nothing a peer sends then can hurt the server. The ping after the close once stopped the
whole `wildtable serve` process (issue #14), so that one runs against a real subprocess."""

from __future__ import annotations

import trio

from hostilekit import (OP_BINARY, OP_CLOSE, OP_PING, OP_PONG, OP_TEXT, Raw, Sockets, binary, client_frame,
                        close_code, close_payload, ends_within, port_of, said_hello, serve_process, steady_player,
                        under_attack, upgraded)
from serverkit import server_config

BAD_FRAMES = 21         # the 21st bad frame closes the connection with 1008 (PROTOCOL.md)


async def closed_for_bad_frames(port: int, *, hello: bool = False) -> Raw:
    """A connection (unauthenticated unless ``hello``) that sends 21 text frames and reads
    up to the server's close frame: errors first, then close 1008 "too many bad frames"."""
    raw = await (said_hello(port) if hello else upgraded(port))
    for i in range(BAD_FRAMES):
        await raw.send(client_frame(OP_TEXT, f"bad frame {i}".encode()))
    before, close = await close_code(raw)
    assert close is not None, f"no close frame after {BAD_FRAMES} bad frames: {before}"
    assert close.code == 1008 and "too many bad frames" in close.reason, close
    errors = [f.message() for f in before if f.opcode == OP_BINARY]
    assert errors and all(e["type"] == "error" for e in errors), before
    assert len(errors) == BAD_FRAMES, f"{len(errors)} errors for {BAD_FRAMES} bad frames: the 21st's error comes before the close"
    return raw


async def nothing_after_close(raw: Raw, seconds: float) -> None:
    """What the server sends after its close frame within ``seconds``: nothing (the
    connection may end meanwhile)."""
    with trio.move_on_after(seconds):
        after = await raw.after_close()
        assert not after, f"frames after the server's close frame: {after}"
        return
    assert not raw.buf, f"bytes after the server's close frame: {bytes(raw.buf)!r}"


async def test_a_ping_after_our_close_is_not_answered_and_the_server_lives(tmp_path):
    """The crash of issue #14, against `wildtable serve` itself: 21 bad frames, close 1008,
    then a ping instead of the close reply. No pong comes back, and 3 s later the process
    is alive and serving (the well-behaved player played throughout)."""
    with trio.fail_after(40):
        async with serve_process(tmp_path / "data") as srv:
            port = port_of(srv.url)
            async with steady_player(srv.url):
                with Sockets() as attackers:
                    for k in range(3):
                        raw = await closed_for_bad_frames(port, hello=k == 2)
                        attackers.append(raw)
                        await raw.send(client_frame(OP_PING, b"are you there?"))
                    pinged = trio.current_time()
                    async with trio.open_nursery() as n:
                        for raw in attackers:
                            n.start_soon(nothing_after_close, raw, 2.0)
                    await trio.sleep_until(pinged + 3.0)     # the crash came ~2 s after the ping
                assert srv.proc.poll() is None, f"wildtable serve exited ({srv.proc.returncode}):\n{srv.log[-3000:]}"
                (await said_hello(port, "after")).close()
            assert srv.proc.poll() is None, f"wildtable serve exited:\n{srv.log[-3000:]}"
            assert "Traceback" not in srv.log, srv.log[-3000:]


async def test_a_pong_and_a_data_frame_after_our_close_are_ignored(tmp_path):
    with trio.fail_after(20):
        async with under_attack(tmp_path / "data") as (server, url, port):
            with await closed_for_bad_frames(port, hello=True) as raw:
                await raw.send(client_frame(OP_PONG, b"unasked"))
                await raw.send(binary({"type": "list_tables"}))
                await raw.send(client_frame(OP_PING, b"and a ping"))
                await nothing_after_close(raw, 1.0)
                # the close reply ends it
                if not raw.eof:
                    await raw.send(client_frame(OP_CLOSE, close_payload(1000)))
                    await ends_within(raw, 3, "after the close reply")
            (await said_hello(port, "after")).close()


async def test_a_ping_crossing_a_close_at_the_hello_timeout_is_not_answered(tmp_path):
    """Any close the server starts, not only for bad frames: here the hello timeout. A
    client's heartbeat ping that crosses the close frame gets no pong."""
    with trio.fail_after(20):
        async with under_attack(server_config(tmp_path / "data", hello_timeout=0.5)) as (server, url, port):
            with await upgraded(port) as raw:
                before, close = await close_code(raw, 5)
                assert close is not None and close.code == 1008, (before, close)
                await raw.send(client_frame(OP_PING, b"heartbeat"))
                await nothing_after_close(raw, 1.5)
            (await said_hello(port, "after")).close()


async def test_a_ping_is_answered_with_its_payload_before_any_close(tmp_path):
    with trio.fail_after(20):
        async with under_attack(tmp_path / "data") as (server, url, port):
            with await said_hello(port) as raw:
                await raw.send(client_frame(OP_PING, b"ping-123"))
                with trio.fail_after(3):
                    f = await raw.read_frame()
                assert f.opcode == OP_PONG and f.payload == b"ping-123" and not f.masked, f


async def test_a_client_close_is_echoed_and_the_server_ends_the_connection(tmp_path):
    with trio.fail_after(20):
        async with under_attack(tmp_path / "data") as (server, url, port):
            with await said_hello(port) as raw:
                await raw.send(client_frame(OP_CLOSE, close_payload(1000, "bye")))
                before, close = await close_code(raw, 3)
                assert close is not None and close.code == 1000 and not close.masked, (before, close)
                await ends_within(raw, 3, "after the close handshake")
