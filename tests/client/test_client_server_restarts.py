"""The client reconnecting: a server that restarts full (1013 "try later")
and a plain-mode subprocess whose server goes away (1001) and comes back mid-game."""

from __future__ import annotations

import contextlib

import os
import socket
import subprocess
import sys

import pytest
import trio

from wildtable.headless import core as core_mod
from wildtable.headless import notices
from wildtable.headless.core import ClientCore, Notice
from wildtable.headless.net import connect
from wildtable.server.app import Server
from wildtable.server.config import ServerConfig

from proc import LineReader
from serverkit import create, join
from waitkit import wait_until

ENV = dict(os.environ, PYTHONUNBUFFERED="1")


@pytest.fixture(autouse=True)
def private_state(tmp_path):
    ENV["WILDTABLE_STATE_DIR"] = str(tmp_path / "state")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Gate:
    """A TCP relay on 127.0.0.1 the client connects through: each connection goes on to
    ``target`` (a port), or is closed at once while ``target`` is None (the client sees a
    server that is not there yet). The test lets the client reach the second server only
    once the squatter holds its one place: else the client, retrying every 0.05-0.2 s, may
    get in first (it did on a loaded machine) and the squatter is the one turned away."""

    def __init__(self):
        self.target: int | None = None
        self.port = 0

    async def run(self, task_status=trio.TASK_STATUS_IGNORED) -> None:
        listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
        self.port = listeners[0].socket.getsockname()[1]
        task_status.started()
        await trio.serve_listeners(self._relay, listeners)

    async def _relay(self, client) -> None:
        async with client:
            if self.target is None:
                return
            try:
                server = await trio.open_tcp_stream("127.0.0.1", self.target)
            except OSError:
                return
            async with server:
                async def pump(a, b):
                    try:
                        async for chunk in a:
                            await b.send_all(chunk)
                    except (trio.BrokenResourceError, trio.ClosedResourceError):
                        pass
                    # the other side may be gone already (ENOTCONN: a streak run under
                    # load failed here): then there is no one to tell
                    with trio.move_on_after(1), contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
                        await b.send_eof()
                async with trio.open_nursery() as n:
                    n.start_soon(pump, client, server)
                    n.start_soon(pump, server, client)


async def test_a_server_that_comes_back_full_is_retried_until_a_place_frees(tmp_path):
    """At the client's default backoff (headless/core.py BACKOFF: 0.2 s growing to 5 s
    between tries), each try within 10 s of what it waits for."""
    assert core_mod.BACKOFF[-1] == 5.0
    data = tmp_path / "data"
    notes: list[Notice] = []

    async def until(pred, timeout=10):
        await wait_until(lambda: any(pred(n) for n in notes), timeout=timeout, what="a notice that fits",
                         show=lambda: [n.text for n in notes[-5:]])

    with trio.fail_after(30):
        async with trio.open_nursery() as outer:
            gate = Gate()
            await outer.start(gate.run)
            first = Server(ServerConfig(data_dir=data, rate_limit=10_000.0, rate_burst=10_000.0))
            async with trio.open_nursery() as life:
                gate.target = await life.start(first.run, "127.0.0.1", 0)
                async with connect(f"ws://127.0.0.1:{gate.target}", "bob") as bob:
                    table = await create(bob, "go-wild", 2)
                    await join(bob, table, 1)
                    core = ClientCore(f"ws://127.0.0.1:{gate.port}", "ann", notes.append)
                    await outer.start(core.run)
                    await core.join(table, 0)
                gate.target = None
                await first.shutdown("restart")
            await until(lambda n: isinstance(n, notices.ConnectionLost))
            second = Server(ServerConfig(data_dir=data, max_connections=1, rate_limit=10_000.0, rate_burst=10_000.0))
            async with trio.open_nursery() as life:
                port = await life.start(second.run, "127.0.0.1", 0)
                async with connect(f"ws://127.0.0.1:{port}", "squatter"):
                    gate.target = port          # the client may reach the server again: it is full
                    await until(lambda n: isinstance(n, notices.ConnectionLost) and "server_full" in n.why)
                    assert core.mirror.table == table        # it still means to go back there
                back = lambda n: isinstance(n, notices.BackAtTable) and (n.table, n.seat) == (table, 0)
                await until(back)
                notes.clear()
                await core.command("show")
                assert [n.kind for n in notes] == ["show"]
                await second.shutdown("test over")
            outer.cancel_scope.cancel()


async def test_plain_mode_survives_the_server_going_away_mid_game(tmp_path):
    """`wildtable serve` is stopped (SIGTERM: Goodbye + close 1001) and started again on the
    same port and data dir; the line-mode client says so, takes its seat back and plays on."""
    data, port = tmp_path / "data", _free_port()
    url = f"ws://127.0.0.1:{port}"
    serve_cmd = [sys.executable, "-m", "wildtable", "serve", "--port", str(port), "--data-dir", str(data)]

    async def start_server():
        proc = await trio.lowlevel.open_process(serve_cmd, stderr=subprocess.PIPE, env=ENV)
        err = LineReader(proc.stderr, timeout=15, errors="replace")
        await err.until(r"serving on ws://")
        return proc, err

    with trio.fail_after(45):
        server, err = await start_server()
        async with trio.open_nursery() as nursery:
            nursery.start_soon(err.read_to_end)
            async with connect(url, "bob") as bob:
                table = await create(bob, "go-wild", 2)
                await join(bob, table, 1)
            player = await trio.lowlevel.open_process(
                [sys.executable, "-m", "wildtable", "play", url, "--plain", "--table", table, "--seat", "0",
                 "--name", "ann"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV)
            out = LineReader(player.stdout, timeout=15)
            perr = LineReader(player.stderr, timeout=None, errors="replace")
            nursery.start_soon(perr.read_to_end)
            await out.until(rf"^info joined table {table} .* at seat 0")
            server.terminate()
            assert await server.wait() == 0
            await out.until(r"^conn (the server says goodbye|connection lost)")
            server, err = await start_server()
            nursery.start_soon(err.read_to_end)
            await out.until(rf"^conn back at table {table} \(seat 0\)", timeout=20)
            await player.stdin.send_all(b"show\n")
            await out.until(r"^show Go Wild!")
            await player.stdin.send_all(b"quit\n")
            await out.until(r"^info bye")
            assert await player.wait() == 0
            server.terminate()
            await server.wait()
        assert "Traceback" not in perr.text
