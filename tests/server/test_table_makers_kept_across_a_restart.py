"""Who made a table still counts after a restart. `--max-waiting-per-address` (4 by
default) caps the tables one address has waiting for players or left in play with nobody
at them; found: a table loaded at start (or adopted by a node of a cluster) had no maker,
so a restart gave every address its four places back while its old tables stayed. Now
a server on files writes DATA_DIR/owners.json at shutdown (the logs never hold an
address: they are replayed and shared) and reads it at start; a cluster's store keeps the
maker in `wt_tables.creator`, which the node that adopts the table reads."""

from __future__ import annotations

import json
import os
import signal

import trio

from wildtable.headless.net import connect
from wildtable.protocol import messages as m
from wildtable.server.config import ServerConfig
from wildtable.server.local_tables import OWNERS_FILE

from botsharekit import dial_from
from clusterkit import cluster, owners, query
from serverkit import running_server
from test_cluster_ended_tables import made_here

HERE, THERE = "127.0.0.1", "127.0.0.2"


async def _make(url: str, address: str) -> m.TableCreated | m.Error:
    async with connect(url, "eve", dial=dial_from(address)) as eve:
        await eve.send(m.CreateTable("go-wild", 2, {"turn_timer": 0}))
        return await eve.receive_until(lambda x: isinstance(x, (m.TableCreated, m.Error)))


async def test_a_restart_keeps_each_waiting_table_counted_against_its_maker_at_the_defaults(tmp_path):
    data = tmp_path / "data"
    cap = ServerConfig().max_waiting_per_address
    with trio.fail_after(60):
        async with running_server(ServerConfig(data_dir=data)) as (server, url):
            made = []
            for _ in range(cap):
                got = await _make(url, HERE)
                assert isinstance(got, m.TableCreated), got
                made.append(got.table)
            other = await _make(url, THERE)
            assert isinstance(other, m.TableCreated), other
        owners = json.loads((data / OWNERS_FILE).read_text())
        assert owners == {**{t: HERE for t in made}, other.table: THERE}, owners
        assert os.stat(data / OWNERS_FILE).st_mode & 0o077 == 0, "addresses are kept from other users"

        async with running_server(ServerConfig(data_dir=data)) as (server, url):
            assert sorted(server.tables) == sorted(made + [other.table])
            refused = await _make(url, HERE)
            assert isinstance(refused, m.Error) and refused.code == "too_many_waiting_tables", refused
            assert all(t in refused.message for t in made), refused.message
            # the other address made one before the restart: it has three places left
            for _ in range(cap - 1):
                assert isinstance(await _make(url, THERE), m.TableCreated)
            assert isinstance(await _make(url, THERE), m.Error)


async def test_a_broken_owners_file_makes_the_tables_nobodys_and_the_server_starts(tmp_path):
    data = tmp_path / "data"
    with trio.fail_after(60):
        async with running_server(ServerConfig(data_dir=data)) as (server, url):
            made = await _make(url, HERE)
            assert isinstance(made, m.TableCreated)
        for broken in ("{not json", "[1, 2]", json.dumps({made.table: 7})):
            (data / OWNERS_FILE).write_text(broken)
            async with running_server(ServerConfig(data_dir=data)) as (server, url):
                assert server.tables[made.table].owner is None
                assert not server.open_tables.owned_by(HERE)
            # (each clean shutdown writes the file anew from what the server holds)


async def test_an_owners_file_that_cannot_be_written_is_said_and_the_shutdown_ends(tmp_path, caplog):
    data = tmp_path / "data"
    with trio.fail_after(60):
        async with running_server(ServerConfig(data_dir=data)) as (server, url):
            assert isinstance(await _make(url, HERE), m.TableCreated)
            (data / OWNERS_FILE).mkdir()        # in the way: the file cannot replace it
    said = [r.getMessage() for r in caplog.records if OWNERS_FILE in r.getMessage()]
    assert said and "count against no address" in said[0], said
    assert not (data / (OWNERS_FILE + ".tmp")).exists(), "its temporary file is not left behind"


async def test_a_node_that_adopts_a_table_counts_it_against_its_maker(tmp_path, pg_dsn):
    """Two nodes at the default lease; one address makes as many waiting tables as the
    default cap allows on n1, which shuts down (its leases given up): n2 adopts them and
    refuses that address one more, naming them."""
    cap = ServerConfig().max_waiting_per_address
    with trio.fail_after(90):
        async with cluster(tmp_path, pg_dsn, 2, "--max-waiting-per-address", str(cap), lease=None) as (n1, n2):
            made = []
            async with connect(n1.url, "eve", dial=dial_from(HERE)) as eve:
                for _ in range(cap):
                    made.append(await made_here(eve, "go-wild", 2, turn_timer=0))
            rows = await query(pg_dsn, "SELECT table_id, creator FROM wt_tables")
            assert dict(rows) == {t: HERE for t in made}, rows
            n1.proc.send_signal(signal.SIGTERM)
            await n1.proc.wait()
            while {t: o for t, (o, _) in (await owners(pg_dsn)).items()} != {t: "n2" for t in made}:
                await trio.sleep(0.05)
            async with connect(n2.url, "eve", dial=dial_from(HERE)) as eve:
                await eve.send(m.CreateTable("go-wild", 2, {"turn_timer": 0}, "", True))
                refused = await eve.receive_until(lambda x: isinstance(x, (m.TableCreated, m.Error, m.Redirect)))
            assert isinstance(refused, m.Error) and refused.code == "too_many_waiting_tables", refused
            assert all(t in refused.message for t in made), refused.message
            async with connect(n2.url, "eve", dial=dial_from(THERE)) as eve:
                assert await made_here(eve, "go-wild", 2, turn_timer=0)
