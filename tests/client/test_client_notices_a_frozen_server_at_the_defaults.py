"""The client's own heartbeat at its defaults (a ping every 20 s, 15 s for the pong:
headless/core.py): a server that goes silent (a process stopped, a network that holds
every byte) is noticed, the client says so, and once the server answers again the
player is back at the seat; the close it tries meanwhile gives up after its default 3 s.
The test beside it (test_client_core.py, a real process stopped with SIGSTOP) shortens
the two to under a second.

Here on trio's mock clock, with the server in this process (its blocking calls in the
task: tests/mockclockkit.py) behind a TCP relay that can hold every byte both ways, as
a stopped process or a stalled network does."""

from __future__ import annotations

from contextlib import asynccontextmanager
from functools import partial

import trio

from wildtable.headless import core as core_mod
from wildtable.headless import notices
from wildtable.headless.core import ClientCore
from wildtable.headless.wire import CLOSE_TIMEOUT

from mockclockkit import OneThreadWorld
from serverkit import running_server, server_config
from test_client_core import Recorder


class Relay:
    """127.0.0.1 TCP to the server's port; ``frozen``: nothing goes either way meanwhile
    (what was read waits, and goes on in order once thawed)."""

    def __init__(self, target: int):
        self.target = target
        self.thawed = trio.Event()
        self.thawed.set()

    def freeze(self) -> None:
        self.thawed = trio.Event()

    def thaw(self) -> None:
        self.thawed.set()

    async def _pump(self, src: trio.SocketStream, dst: trio.SocketStream) -> None:
        try:
            while data := await src.receive_some(65536):
                await self.thawed.wait()
                await dst.send_all(data)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass
        finally:
            await dst.aclose()

    async def handle(self, client: trio.SocketStream) -> None:
        await self.thawed.wait()        # a stopped process accepts nothing either
        async with client, await trio.open_tcp_stream("127.0.0.1", self.target) as server:
            async with trio.open_nursery() as n:
                n.start_soon(self._pump, client, server)
                n.start_soon(self._pump, server, client)


@asynccontextmanager
async def relayed(url: str):
    """A Relay to ``url``'s server; yield (its ws:// URL, the relay)."""
    relay = Relay(int(url.rsplit(":", 1)[1]))
    async with trio.open_nursery() as n:
        [listener] = await n.start(partial(trio.serve_tcp, relay.handle, 0, host="127.0.0.1"))
        yield f"ws://127.0.0.1:{listener.socket.getsockname()[1]}", relay
        n.cancel_scope.cancel()


async def test_a_silent_server_is_noticed_at_the_default_heartbeat_and_the_client_comes_back(tmp_path, autojump_clock):
    assert (core_mod.HEARTBEAT, core_mod.PONG_TIMEOUT, CLOSE_TIMEOUT) == (20.0, 15.0, 3.0)
    async with running_server(server_config(tmp_path / "data"), world=OneThreadWorld()) as (server, url), \
            relayed(url) as (via, relay):
        seen = Recorder()
        core = ClientCore(via, "ann", seen)
        async with trio.open_nursery() as nursery:
            await nursery.start(core.run)
            reply = await core.create("run-wild", 2, {"rounds": 1})
            await core.join(reply.table, 0)
            relay.freeze()
            frozen = trio.current_time()
            lost = await seen.wait(lambda n: isinstance(n, notices.ConnectionLost), timeout=60)
            # the next ping within 20 s of the freeze, 15 s for its pong, then 3 s for a
            # close frame that cannot go out either (headless/wire.py CLOSE_TIMEOUT)
            assert "no answer to a ping within 15 s" in lost.text, lost.text
            assert 15.0 + CLOSE_TIMEOUT <= trio.current_time() - frozen <= 35.0 + CLOSE_TIMEOUT + 0.05
            relay.thaw()
            back = await seen.wait(lambda n: isinstance(n, notices.BackAtTable), timeout=60)
            assert (back.table, back.seat) == (reply.table, 0)
            nursery.cancel_scope.cancel()
