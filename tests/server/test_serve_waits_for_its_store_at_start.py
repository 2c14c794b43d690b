"""`wildtable serve --store` started before its PostgreSQL (a machine booting: systemd
starts both at once) waits for it (server/storewait.py) instead of stopping: it says so
in its log at once, tells systemd (STATUS=), and /readyz answers 503 with what it waits
for; once PostgreSQL runs on that port, the server makes its tables, joins, and serves
(READY=1, /readyz 200, a table made). A real process and a real PostgreSQL, stopped then
started, at the default timers."""

from __future__ import annotations

import socket

import trio

from wildtable.headless.net import connect

from opskit import ops_serve, readyz, until_ready
from serverkit import create


async def test_serve_waits_for_postgresql_then_serves(tmp_path, pg_private):
    dsn = pg_private.create_database()
    await trio.to_thread.run_sync(pg_private.stop)
    path = str(tmp_path / "notify")
    systemd = trio.socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    await systemd.bind(path)
    try:
        with trio.fail_after(90):
            async with ops_serve(tmp_path / "data", "--store", dsn, "--node-id", "n1",
                                 env={"NOTIFY_SOCKET": path}) as sp:
                said = await sp.stderr.until(r"waiting for the store to make its tables \(.*\): (.*); trying again")
                assert "Connection refused" in said.group(1), said.group(0)
                told = (await systemd.recv(4096)).decode()
                assert told.startswith("STATUS=waiting for the store to make its tables: "), told
                status, body = await readyz(sp.ops)
                assert status == 503 and body["state"] == "starting", body
                assert "waiting for the store to make its tables" in body["reason"], body
                assert dsn.split("@")[0] not in body["reason"]      # no credentials in a public answer
                # nor the error's text, which names the database's host and port
                assert "Connection refused" not in body["reason"] and "port" not in body["reason"], body
                await trio.to_thread.run_sync(pg_private.start)
                port = await sp.serving()
                while not told.startswith("READY=1"):
                    told = (await systemd.recv(4096)).decode()
                await until_ready(sp.ops, True)
                await until_ready(port, True)
                async with connect(f"ws://127.0.0.1:{port}", "ann") as ann:
                    assert await create(ann, "go-wild", 2)
        assert "the store answers after" in sp.stderr.text
    finally:
        systemd.close()
