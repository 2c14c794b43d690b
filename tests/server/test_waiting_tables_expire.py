"""Tables cannot be squatted. Found: 10 connections created 1,000 waiting tables in 3 s;
then everyone got `too_many_tables`, the tables came back after every restart, and
nothing ever expired them. Now a table waiting for players that nobody is at (no seated
player connected, no spectator) for `waiting_expiry` seconds is forgotten and its log
moved to expired/ (at run time, and at start for a log that old), and one address may
have created only `max_waiting_per_address` tables still waiting for players."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys

import pytest
import trio

from wildtable.headless.net import connect
from wildtable.protocol import messages as m

from rawclient import RawClient
from serverkit import answer, at_a_new_table, create, join, running_server, server_config
from waitkit import wait_until


async def gone(server, table: str) -> None:
    """Wait (bounded by the test's deadline) until the server has forgotten ``table`` and
    its log is out of the data dir's top level."""
    await wait_until(lambda: table not in server.tables and table not in server._moving,
                     what=f"table {table} forgotten and its log put away")


async def listed(conn) -> list[str]:
    await conn.send(m.ListTables())
    return [t["table"] for t in (await conn.receive_until(lambda x: isinstance(x, m.TableList))).tables]


async def test_a_waiting_table_nobody_is_at_expires_and_its_log_goes_to_expired(tmp_path):
    data = tmp_path / "data"
    with trio.fail_after(20):
        async with running_server(server_config(data, waiting_expiry=0.3)) as (server, url):
            async with connect(url, "ann") as ann:
                squat = await create(ann, "run-wild", 2)          # created, never joined
                await gone(server, squat)
                assert not (data / f"{squat}.wlog").exists()
                assert (data / "expired" / f"{squat}.wlog").exists()
                assert squat not in await listed(ann)
                await ann.send(m.Join(squat))
                e = await answer(ann)
                assert isinstance(e, m.Error) and e.code == "no_such_table", e
                assert "expired" in e.message and f"expired/{squat}.wlog" in e.message, e.message
                assert "create a new table" in e.message, e.message


async def test_a_table_with_someone_at_it_stays_until_they_are_gone(tmp_path):
    data = tmp_path / "data"
    with trio.fail_after(20):
        async with running_server(server_config(data, waiting_expiry=0.3)) as (server, url):
            async with connect(url, "ann") as ann, connect(url, "wes") as wes:
                seated, _, missed = await at_a_new_table(ann, lambda: create(ann, "run-wild", 3),
                                                         lambda t: m.Join(t, 0))
                watched, _, more = await at_a_new_table(wes, lambda: create(wes, "run-wild", 2), m.Spectate)
                # four expiry times: both are still there (a wait for time, the point: that
                # nothing happens has no condition to wait for)
                await trio.sleep(1.2)
                assert seated in server.tables and watched in server.tables
                assert set(await listed(ann)) == {seated, watched}
            # both connections gone (a seat held by a dropped connection counts as nobody)
            await gone(server, seated)
            await gone(server, watched)
            assert sorted(p.name for p in (data / "expired").iterdir()) == \
                sorted(f"{t}.wlog" for t in [seated, watched, *missed, *more])


async def test_at_start_a_waiting_table_whose_log_is_older_than_the_expiry_is_moved_to_expired(tmp_path):
    data = tmp_path / "data"
    with trio.fail_after(30):
        async with running_server(data) as (server, url):
            async with connect(url, "ann") as ann:
                old, fresh = await create(ann, "run-wild", 2), await create(ann, "go-wild", 2)
                await join(ann, old, 0)
        os.utime(data / f"{old}.wlog", (1, 1))          # nobody was at it for decades
        async with running_server(server_config(data, waiting_expiry=600)) as (server, url):
            assert old not in server.tables and fresh in server.tables
            assert (data / "expired" / f"{old}.wlog").exists() and not (data / f"{old}.wlog").exists()
            async with connect(url, "ann") as ann:
                await ann.send(m.Rejoin(old, 0, "x" * 32))
                e = await answer(ann)
                assert isinstance(e, m.Error) and e.code == "no_such_table" and "expired" in e.message, e


async def test_a_table_someone_was_at_until_shutdown_counts_its_expiry_from_the_shutdown(tmp_path):
    """Its log was last written long ago, but its player was there until the server
    stopped: at shutdown the log's mtime is set to when the last one left, so the next
    start does not expire it at once."""
    data = tmp_path / "data"
    with trio.fail_after(30):
        async with running_server(data) as (server, url):
            async with connect(url, "ann") as ann:
                table = await create(ann, "run-wild", 2)
                await join(ann, table, 0)
                os.utime(data / f"{table}.wlog", (1, 1))
                async with connect(url, "wes") as wes:     # still at it as the server stops
                    await wes.send(m.Spectate(table))
                    assert isinstance(await answer(wes), m.Spectating)
                    await server.shutdown("test")
        async with running_server(server_config(data, waiting_expiry=600)) as (server, url):
            assert table in server.tables, "expired at start although someone was at it until the shutdown"


async def _raw_from(address: str, port: int, name: str) -> RawClient:
    """A client whose socket comes from ``address`` (127.0.0.0/8 is all loopback on Linux)."""
    sock = trio.socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    await sock.bind((address, 0))
    await sock.connect(("127.0.0.1", port))
    raw = RawClient(trio.SocketStream(sock))
    from wsproto.events import AcceptConnection, Request
    await raw.stream.send_all(raw.ws.send(Request(host=f"127.0.0.1:{port}", target="/")))
    assert isinstance(await raw.event(), AcceptConnection)
    await raw.send(m.Hello(m.PROTOCOL_VERSION, name))
    assert isinstance(await raw.message(), m.Welcome)
    return raw


async def _create(raw: RawClient, game: str = "run-wild", seats: int = 2):
    await raw.send(m.CreateTable(game, seats, {}))
    while True:                   # (past the traffic of a table it is at)
        msg = await raw.message()
        if isinstance(msg, (m.TableCreated, m.Error)):
            return msg


async def test_one_address_may_have_only_a_few_tables_waiting_for_players(tmp_path):
    with trio.fail_after(30):
        async with running_server(server_config(tmp_path / "data", max_waiting_per_address=2)) as (server, url):
            port = int(url.rsplit(":", 1)[1])
            a1 = await _raw_from("127.0.0.1", port, "a1")
            a2 = await _raw_from("127.0.0.1", port, "a2")        # another connection, the same address
            b = await _raw_from("127.0.0.2", port, "b")
            t1, t2 = await _create(a1), await _create(a2)
            assert isinstance(t1, m.TableCreated) and isinstance(t2, m.TableCreated), (t1, t2)
            refused = await _create(a1)
            assert isinstance(refused, m.Error) and refused.code == "too_many_waiting_tables", refused
            assert refused.ref == "create_table"
            assert t1.table in refused.message and t2.table in refused.message, refused.message
            assert "join one of them" in refused.message and "600 s" in refused.message, refused.message
            assert len(server.tables) == 2
            # another address is not held back by it
            assert isinstance(await _create(b), m.TableCreated)
            # a table that fills up no longer counts: its owner may create another
            await a1.send(m.Join(t1.table, 0))
            await a2.send(m.Join(t1.table, 1))
            for raw in (a1, a2):
                while not isinstance(await raw.message(), m.Joined):
                    pass
            assert isinstance(await _create(a2), m.TableCreated)
            assert isinstance(await _create(a1), m.Error)
            for raw in (a1, a2, b):
                await raw.stream.aclose()


async def test_serve_waiting_expiry_0_means_never(tmp_path):
    from adversarial_kit import start_serve
    with trio.fail_after(60):
        async with trio.open_nursery() as bg:
            srv = await start_serve(bg, tmp_path / "data", "--waiting-expiry", "0")
            try:
                async with connect(srv.url, "ann") as ann:
                    table = await create(ann, "run-wild", 2)
                    await trio.sleep(0.5)       # that it never expires: no condition, the point
                    assert table in await listed(ann)
            finally:
                srv.proc.send_signal(signal.SIGTERM)
                await srv.proc.wait()
    assert srv.proc.returncode == 0 and "expired" not in srv.log, srv.log


@pytest.mark.parametrize("flag,value,why", [
    ("--waiting-expiry", "-1", "--waiting-expiry wants seconds, 0 or more"),
    ("--waiting-expiry", "nan", "--waiting-expiry wants seconds, 0 or more"),
    ("--max-waiting-per-address", "-1", "--max-waiting-per-address wants a count, 0 (no cap) or more"),
])
def test_serve_refuses_a_bad_expiry_or_cap(tmp_path, flag, value, why):
    done = subprocess.run([sys.executable, "-m", "wildtable", "serve", "--port", "0", "--data-dir",
                           str(tmp_path / "d"), flag, value], capture_output=True, text=True, timeout=20)
    assert done.returncode == 2, done
    assert done.stderr.strip() == f"wildtable serve: {why}", done.stderr
    assert not (tmp_path / "d").exists()
