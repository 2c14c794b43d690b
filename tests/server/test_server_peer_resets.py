"""Peers that vanish (TCP reset, half-close) while the server holds a
backlog or a partly written frame for them, many at once, while another table plays on;
and a shutdown while peers do not read at all."""

from __future__ import annotations

import logging
import socket
import struct

import trio

from wildtable.protocol import messages as m

from scripted import play_to_end
from serverkit import running_server, seated, server_config
from rawclient import RawClient, make_tables, stuck_client
from waitkit import wait_until


def _reset(raw: RawClient) -> None:
    raw.stream.socket.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    raw.stream.socket.close()


async def test_resets_and_half_closes_with_backlogs_leave_the_other_table_alone(tmp_path, caplog):
    # a half-closed peer that reads nothing keeps its writer until the send timeout
    caplog.set_level(logging.WARNING, logger="wildtable")
    with trio.fail_after(60):
        async with running_server(server_config(tmp_path / "data", outbox=10_000, durability="off", send_timeout=1.0)) as (server, url):
            port = int(url.rsplit(":", 1)[1])
            await make_tables(url, 30)
            async with seated(url, "run-wild", 2) as (table, conns, joined):
                # some spectate the table being played (its arbiter writes to them), some not
                raws = [await stuck_client(server, port, f"v{i}", table if i % 2 else None) for i in range(12)]
                gone = [r.conn for r in raws]
                results = []

                async def player(i):
                    results.append(await play_to_end(conns[i], joined[i], timeout=50))

                async with trio.open_nursery() as n:
                    for i in range(2):
                        n.start_soon(player, i)
                    for i, raw in enumerate(raws):
                        if i % 3 == 2:
                            await raw.stream.send_eof()          # half-close: FIN, still open for reading
                        else:
                            _reset(raw)                          # RST with a partial frame in flight
                        await trio.lowlevel.checkpoint()         # one scheduler pass between peers
                assert len(results) == 2 and all(r.over is not None for r in results)
                await wait_until(lambda: not any(c in server.connections for c in gone),
                                 what="every vanished peer out of server.connections")
                assert all(c.closed for c in gone)
                # a closed connection leaves the table through its arbiter (a LeaveReq in the
                # inbox, which a fair table may also hold behind intents): it is let go soon
                # after leaving server.connections, not at once
                await wait_until(lambda: not server.tables[table].spectators, timeout=10,
                                 what="the vanished spectators let go by the table (else held for the peer)")
                for raw in raws:
                    if raw.stream.socket.fileno() != -1:
                        await raw.stream.aclose()
            await wait_until(lambda: not server.connections, what="every connection closed")
    bad = [r for r in caplog.records if r.levelno >= logging.ERROR or "internal error" in r.getMessage()]
    assert not bad, [r.getMessage() for r in bad]


async def test_shutdown_with_peers_that_do_not_read_is_bounded(tmp_path):
    """Shutdown while a dozen peers hold big backlogs and read nothing: run() returns
    within a few seconds (3 s wait for the connections, then Peer.close's 2 s at most)."""
    with trio.fail_after(30):
        async with trio.open_nursery() as outer:
            from wildtable.server.app import Server
            from wildtable.server.config import ServerConfig
            server = Server(ServerConfig(data_dir=tmp_path / "data", durability="off", rate_limit=10_000.0,
                                         rate_burst=10_000.0, outbox=100_000, max_waiting_per_address=0))
            done = trio.Event()

            async def serve(task_status=trio.TASK_STATUS_IGNORED):
                await server.run("127.0.0.1", 0, task_status=task_status)
                done.set()

            port = await outer.start(serve)
            url = f"ws://127.0.0.1:{port}"
            await make_tables(url, 30)
            raws = [await stuck_client(server, port, f"s{i}") for i in range(12)]
            start = trio.current_time()
            await server.shutdown("test")
            with trio.fail_after(8):
                await done.wait()
            took = trio.current_time() - start
            assert took < 8, took
            assert not server.connections
            for raw in raws:
                await raw.stream.aclose()


async def test_frames_sent_as_the_send_timeout_fires_do_not_raise(tmp_path, caplog):
    """When the send timeout fires, the writer leaves its loop and closes the bell's
    receiving end before the close starts. A frame sent to the connection in that moment
    (by its table's arbiter, by its reader) must not raise out of ``send_bytes``. The pump
    task stands in for an arbiter delivering to this connection on every scheduler pass."""
    caplog.set_level(logging.WARNING, logger="wildtable")
    data = m.encode(m.Goodbye("tick"))
    with trio.fail_after(30):
        async with running_server(server_config(tmp_path / "data", outbox=10_000_000, durability="off", send_timeout=0.5)) as (server, url):
            port = int(url.rsplit(":", 1)[1])
            await make_tables(url, 30)
            raw = await stuck_client(server, port, "stuck")
            conn = raw.conn
            # one frame on every scheduler pass (a checkpoint, not a wait for time)
            while not conn.peer.closed:          # until the send timeout fired
                conn.send_bytes(data)            # raised BrokenResourceError (the bell had no reader)
                await trio.lowlevel.checkpoint()
            for _ in range(50):
                conn.send_bytes(data)
                await trio.lowlevel.checkpoint()
            _reset(raw)
            await wait_until(lambda: conn not in server.connections, what="the connection closed")
    bad = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert not bad, [r.getMessage() for r in bad]


async def test_a_peer_that_closes_and_stops_reading_does_not_pin_its_socket(tmp_path):
    """The peer sends a close frame while the server's socket to it is full, then reads
    nothing. trio-websocket's reader answers the close under the stream lock, with no
    timeout of its own; Connection gives up (send timeout, Peer.close's 2 s), and the
    socket must then be closed: else that task and socket stay pinned (uncounted: the
    connection has left ``server.connections``) for as long as the peer's kernel ACKs."""
    from wsproto.events import CloseConnection
    with trio.fail_after(30):
        async with running_server(server_config(tmp_path / "data", outbox=10_000_000, durability="off", send_timeout=0.5)) as (server, url):
            port = int(url.rsplit(":", 1)[1])
            await make_tables(url, 30)
            raw = await stuck_client(server, port, "closer")
            conn = raw.conn
            await raw.stream.send_all(raw.ws.send(CloseConnection(1000)))
            await wait_until(lambda: conn not in server.connections, what="the connection closed")
            await wait_until(lambda: conn.peer._sock.fileno() == -1, timeout=5, what="its socket closed")
            _reset(raw)
