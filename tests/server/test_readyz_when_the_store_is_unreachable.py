"""A node of a cluster whose store does not answer (PostgreSQL stopped under it) says so
on /readyz (503, with the reason) until its lease renewals go through again, then 200;
the metrics count the failed renewals. A real `wildtable serve --store` process at the
default lease."""

from __future__ import annotations

import trio

from opskit import of, ops_serve, scrape, until_ready


async def test_store_stopped_and_started(tmp_path, pg_private):
    dsn = pg_private.create_database()
    with trio.fail_after(90):
        async with ops_serve(tmp_path / "data", "--store", dsn, "--node-id", "n1") as sp:
            port = await sp.serving()
            await until_ready(port, True)
            await trio.to_thread.run_sync(pg_private.stop)
            body = await until_ready(port, False, timeout=20)
            assert body["state"] == "serving" and "store does not answer" in body["reason"], body
            assert dsn.split("@")[0] not in body["reason"]          # no credentials in a public answer
            metrics = await scrape(sp.ops)
            assert of(metrics, "wildtable_lease_renewal_failures_total") >= 1
            assert of(metrics, "wildtable_store_errors_total", where="lease_renewal") >= 1
            assert of(metrics, "wildtable_ready") == 0
            await trio.to_thread.run_sync(pg_private.start)
            await until_ready(port, True, timeout=20)
            metrics = await scrape(sp.ops)
            assert of(metrics, "wildtable_ready") == 1
            assert of(metrics, "wildtable_lease_renewals_total") >= 1
    assert "see that PostgreSQL runs" in sp.stderr.text
