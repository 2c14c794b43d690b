"""Order over a socket that keeps switching between direct writes and the
backlog (tiny buffers both ends, the client reading in bursts): every intent is answered
exactly once and in order, updates come in seq order, for a player and a spectator."""

from __future__ import annotations

import socket
from contextlib import AsyncExitStack, asynccontextmanager

import trio

from wildtable.headless.net import Connection, connect
from wildtable.headless.wire import wrap_stream
from wildtable.protocol import messages as m

from scripted import play_to_end
from serverkit import create, join, running_server, server_config


class Bursty(Connection):
    """Reads in bursts: a pause every few messages lets the server's socket fill up (the
    player's pauses are longer: its table writes to it only as fast as the game goes).

    The first pause lasts until frames have waited in the server's backlog
    (``backed_up()``, set once the server's side is known), and meanwhile this client
    asks for the table list again and again (its answers, ~250 B each, are not what the
    checks below look at), so the server writes to it whatever the game's pace: the
    backlog is taken every time, on any machine. (The pause used to wait for the game's
    own writes, 1 s at most: at load 15-22 the game wrote too little meanwhile and every
    frame went out at once.)"""

    ASKS = 2_000        # a hang guard: ~60 kB of answers, several times what fills the socket

    def __init__(self, ws, every: int, pause: float = 0.01):
        super().__init__(ws)
        self.n, self.every, self.pause = 0, every, pause
        self.backed_up = lambda: False
        self.filled = False

    async def receive(self):
        self.n += 1
        if self.n % self.every == 0:
            if self.filled:
                await trio.sleep(self.pause)
            else:
                for _ in range(self.ASKS):
                    if self.backed_up():
                        break
                    await self.send(m.ListTables())
                    await trio.sleep(0.002)
                self.filled = self.backed_up()
                assert self.filled, f"no backlog after {self.ASKS} unread table lists"
        return await super().receive()


@asynccontextmanager
async def _small_ws(port: int):
    sock = trio.socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 2048)
    await sock.connect(("127.0.0.1", port))
    ws = await wrap_stream(trio.SocketStream(sock), f"ws://127.0.0.1:{port}")
    try:
        yield ws
    finally:
        await ws.aclose()


def _watch(server, name: str, reader: Bursty) -> list:
    """Shrink the server's send buffer for ``name``; note the backlog after every write;
    ``reader`` (its client) pauses until a write has left frames waiting in the backlog
    (noted at the write: the writer task takes the whole backlog at once while it waits
    for the socket, so the backlog looked at later may read 0 while frames wait)."""
    [conn] = [c for c in server.connections if c.name == name]
    waited = []
    reader.backed_up = lambda: bool(waited)
    conn.peer._sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
    seen = []

    def watched(send):
        def watching(data):
            send(data)
            seen.append(conn.peer.backlog)
            if seen[-1] and not waited:
                waited.append(True)
        return watching
    # a table writes a delivery pass with send_frames; the connection itself, send_bytes
    conn.send_bytes = watched(conn.send_bytes)
    conn.send_frames = watched(conn.send_frames)
    return seen


def _check_order(log: list, ids: list[int]) -> None:
    answers = [x.intent for x in log if isinstance(x, (m.Accepted, m.Rejected))]
    assert answers == ids, (answers[:20], ids[:20])
    seqs = [x.seq for x in log if isinstance(x, m.Update)]
    assert seqs and all(a < b for a, b in zip(seqs, seqs[1:])), seqs
    for x in log:                      # an acceptance comes just before the update of its seq
        if isinstance(x, m.Accepted):
            i = log.index(x)
            assert isinstance(log[i + 1], m.Update) and log[i + 1].seq == x.seq


async def test_order_holds_while_writes_switch_between_direct_and_backlog(tmp_path):
    with trio.fail_after(60):
        async with running_server(server_config(tmp_path / "data", durability="off")) as (server, url):
            port = int(url.rsplit(":", 1)[1])
            async with connect(url, "p0") as c0, AsyncExitStack() as stack:
                # two rounds of four: the same switching every 7 frames, and a deal in between
                table = await create(c0, "run-wild", 2, rounds=2)
                j0 = await join(c0, table, 0)
                c1 = Bursty(await stack.enter_async_context(_small_ws(port)), every=7, pause=0.1)
                await c1.hello("p1")
                seen1 = _watch(server, "p1", c1)
                j1 = await join(c1, table, 1)
                sp = Bursty(await stack.enter_async_context(_small_ws(port)), every=5)
                await sp.hello("sp")
                seen_sp = _watch(server, "sp", sp)
                await sp.send(m.Spectate(table))
                await sp.receive_until(lambda x: isinstance(x, m.Spectating))

                log1, log_sp, results = [], [], []
                n_intents = 300

                async def player(conn, joined, log):
                    results.append(await play_to_end(conn, joined, log=log, timeout=50))

                async def spectator_sends():
                    for k in range(n_intents):            # not seated: each one gets a rejection
                        await sp.send(m.Intent(k, {"kind": "draw"}))
                        if k % 25 == 0:
                            await trio.sleep(0.005)

                async def spectator_reads():
                    answered = 0
                    over = False
                    while answered < n_intents or not over:
                        x = await sp.receive()
                        log_sp.append(x)
                        answered += isinstance(x, m.Rejected)
                        over = over or isinstance(x, m.GameOver)

                async with trio.open_nursery() as n:
                    n.start_soon(player, c0, j0, [])
                    n.start_soon(player, c1, j1, log1)
                    n.start_soon(spectator_sends)
                    n.start_soon(spectator_reads)

                assert all(r.over is not None for r in results)
                ids1 = [x.intent for x in log1 if isinstance(x, (m.Accepted, m.Rejected))]
                _check_order(log1, list(range(1, len(ids1) + 1)))
                _check_order(log_sp, list(range(n_intents)))
                assert all(isinstance(x, m.Rejected) and x.code == "not_seated"
                           for x in log_sp if isinstance(x, (m.Accepted, m.Rejected)))
                # both ways were taken: frames written at once and frames that waited
                for seen in (seen1, seen_sp):
                    assert 0 in seen and max(seen) > 0, seen
