"""A close frame must never land inside a frame whose writing was cut
short (the writer task cancelled mid-flush: slow consumer, send timeout). The client
reads with a raw wsproto parser over a real socket, so a garbled stream shows as a
protocol error or a missing close code."""

from __future__ import annotations

import trio
from wsproto.events import CloseConnection

from wildtable.protocol import messages as m

from rawclient import count_sends, make_tables, small_buffered_client, stuck_client, whole_messages_then_close
from serverkit import running_server, server_config
from waitkit import wait_until


async def test_slow_consumer_close_frame_is_not_written_inside_a_cut_frame(tmp_path):
    """A slow consumer is detected while its writer is blocked in the middle of writing
    the backlog; the writer is cancelled. The 1013 close frame must still reach the client
    intact once it reads, after whole frames only (no garbled stream, no 1006)."""
    with trio.fail_after(30):
        async with running_server(server_config(tmp_path / "data", outbox=8, durability="off")) as (server, url):
            port = int(url.rsplit(":", 1)[1])
            await make_tables(url, 30)              # list_tables answers of ~6 kB each
            raw, conn = await small_buffered_client(server, port, "slow")
            calls = count_sends(conn)
            sent = 0
            while not conn.slow:
                assert sent < 2000
                await raw.send(m.ListTables())
                sent += 1
                await wait_until(lambda: len(calls) >= sent or conn.slow, step=0.001,  # so nothing is left unread
                                 what=f"list_tables {sent} answered, or the connection found slow")
            # it reads again: whole frames, then the close frame (not one cut short inside another)
            got, ev = await whole_messages_then_close(raw, m.TableList)
            assert isinstance(ev, CloseConnection) and ev.code == 1013, (got, ev)
            await raw.stream.send_all(raw.ws.send(ev.response()))
            await wait_until(lambda: conn not in server.connections, what="the connection closed")


async def test_send_timeout_close_frame_comes_after_whole_frames(tmp_path):
    """The send timeout cancels the writer while it is blocked mid-write; the close that
    follows must first finish the frame cut short (what merely waits is dropped, as for a
    slow consumer), then send the close frame: the client, reading again, sees whole
    answers only, then a close saying why (1001, send timeout)."""
    with trio.fail_after(30):
        async with running_server(server_config(tmp_path / "data", outbox=1_000_000, durability="off", send_timeout=0.5)) as (server, url):
            port = int(url.rsplit(":", 1)[1])
            await make_tables(url, 30)
            raw = await stuck_client(server, port, "stuck")     # the writer is blocked mid-write
            conn, sent = raw.conn, raw.sent
            await wait_until(lambda: conn.peer.closed, what="the send timeout fired")
            got, ev = await whole_messages_then_close(raw, m.TableList)
            assert isinstance(ev, CloseConnection), (got, ev)
            assert ev.code == 1001 and "send timeout" in ev.reason, ev
            assert 0 < got <= sent                       # whole frames only; what merely waited may be dropped
            await raw.stream.send_all(raw.ws.send(ev.response()))
            await wait_until(lambda: conn not in server.connections, what="the connection closed")
