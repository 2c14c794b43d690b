"""`wildtable play` and `wildtable bots` pointed at something that is not a wildtable
server (a web server, a WebSocket echo server) say so in one sentence and exit 1: no
handshake tuple, no HTML page, no traceback, no 10-second wait for a welcome that never comes."""

from __future__ import annotations

import os
import sys
from functools import partial

import trio

from wildtable.server import wire

WILDTABLE = [sys.executable, "-m", "wildtable"]
PAGE = b"<!DOCTYPE html>\n<html><head><title>Router admin</title></head><body>Log in</body></html>\n"


async def _web_server(stream: trio.SocketStream) -> None:
    """An ordinary web server: any request gets a web page."""
    try:
        await stream.receive_some(65536)
        await stream.send_all(b"HTTP/1.1 200 OK\r\nServer: TinyWeb/1.0\r\nContent-Type: text/html; charset=utf-8\r\n"
                              b"Content-Length: %d\r\nConnection: close\r\n\r\n" % len(PAGE) + PAGE)
    except trio.BrokenResourceError:
        pass
    finally:
        await stream.aclose()


async def _echo(peer: wire.Peer) -> None:
    """A WebSocket echo server: every message comes back as it went."""
    while True:
        await peer.send(await peer.receive())


async def _both(url: str) -> tuple:
    play = await trio.run_process(WILDTABLE + ["play", url, "--plain", "--name", "ann"], stdin=b"",
                                  capture_stdout=True, capture_stderr=True, check=False, env=dict(os.environ))
    bots = await trio.run_process(WILDTABLE + ["bots", url, "--table", "t1"], capture_stdout=True,
                                  capture_stderr=True, check=False, env=dict(os.environ))
    return play, bots


def _one_sentence(text: str) -> None:
    assert text.count("\n") == 1, text
    for leak in ("<html", "b'", "(200,", "Traceback", "Router admin"):
        assert leak not in text, text


async def test_a_web_server_is_named_as_not_a_wildtable_server():
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            (listener,) = await nursery.start(partial(trio.serve_tcp, _web_server, 0, host="127.0.0.1"))
            url = f"ws://127.0.0.1:{listener.socket.getsockname()[1]}"
            play, bots = await _both(url)
            nursery.cancel_scope.cancel()
    why = "it is not a wildtable server: it answered with HTTP 200 from TinyWeb/1.0 and a web page, not a WebSocket"
    assert play.returncode == 1 and play.stdout.decode() == f"error cannot connect to {url}: {why}\n"
    assert bots.returncode == 1 and bots.stderr.decode() == f"wildtable bots: cannot connect to {url}: {why}\n"
    _one_sentence(play.stdout.decode())
    _one_sentence(bots.stderr.decode())


async def test_a_websocket_echo_server_is_named_as_not_a_wildtable_server():
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            port = await nursery.start(wire.serve, _echo, "127.0.0.1", 0)
            url = f"ws://127.0.0.1:{port}"
            play, bots = await _both(url)
            nursery.cancel_scope.cancel()
    why = ("it is not a wildtable server: it answered the hello with our own hello, echoed "
           "(a WebSocket server of another kind?)")
    assert play.returncode == 1 and play.stdout.decode() == f"error cannot connect to {url}: {why}\n", play
    assert bots.returncode == 1 and bots.stderr.decode() == f"wildtable bots: cannot connect to {url}: {why}\n"
    _one_sentence(play.stdout.decode())


async def test_nothing_listening_says_connection_refused():
    """docs/PLAYING.md: nothing listening is refused in one sentence naming why
    ("Connection refused"), not trio's bare "all attempts to connect ... failed"."""
    with trio.socket.socket() as s:         # a port of ours that nothing listens on
        await s.bind(("127.0.0.1", 0))
        url = f"ws://127.0.0.1:{s.getsockname()[1]}"
        with trio.fail_after(60):
            play, bots = await _both(url)
    why = f"all attempts to connect to {url[5:]} failed (Connection refused)"
    assert play.returncode == 1 and play.stdout.decode() == f"error cannot connect to {url}: {why}\n", play
    assert bots.returncode == 1 and bots.stderr.decode() == f"wildtable bots: cannot connect to {url}: {why}\n"
    _one_sentence(play.stdout.decode())
