"""The replay viewer on `serve --store` answers 503 "try again" when the store fails it;
found: the operator was told nothing. Now the cause is logged (once a minute per kind of
error, however many requests meet it) and counted in /metrics as a store error."""

from __future__ import annotations

import logging

import psycopg
import trio

from opskit import get
from serverkit import running_server, server_config


async def test_a_store_error_is_logged_once_and_counted(tmp_path, pg_dsn, caplog):
    caplog.set_level(logging.INFO, logger="wildtable.server")
    with trio.fail_after(30):
        async with running_server(server_config(tmp_path / "data", store=pg_dsn, metrics_port=0, lease_seconds=120)) as (server, url):
            assert (await get(server.port, "/replay/tnone.json"))[0] == 404
            # the store fails the viewer's query (its table is not there under that name)
            with psycopg.connect(pg_dsn, autocommit=True) as db:
                db.execute("ALTER TABLE wt_tables RENAME TO wt_tables_away")
            try:
                for _ in range(3):
                    status, _, body = await get(server.port, "/replay/tnone.json")
                    assert status == 503 and b"try again" in body, (status, body)
            finally:
                with psycopg.connect(pg_dsn, autocommit=True) as db:
                    db.execute("ALTER TABLE wt_tables_away RENAME TO wt_tables")
            assert (await get(server.port, "/replay/tnone.json"))[0] == 404
            metrics = (await get(server.ops_port, "/metrics"))[2].decode()
    told = [r for r in caplog.records if "replay viewer cannot read the store" in r.getMessage()]
    assert len(told) == 1, [r.getMessage() for r in told]
    assert "UndefinedTable" in told[0].getMessage() and "wt_tables" in told[0].getMessage()
    assert told[0].levelno == logging.WARNING
    assert 'wildtable_store_errors_total{where="replays"} 3' in metrics, metrics
