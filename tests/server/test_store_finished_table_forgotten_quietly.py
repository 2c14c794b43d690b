"""On `serve --store` a finished table forgotten after `--keep-finished` (long after its
lease passed: a finished table's lease is not renewed) loses nothing: what it queues then
is a release with no records, which the fence turns away. That is not a lost lease: it is
neither logged as one nor counted as a commit fenced out (every finished game logged
"lease lost ... steps down" when it was forgotten before)."""

from __future__ import annotations

import logging

import trio

from clusterkit import query
from serverkit import running_server, seated, server_config
from wildtable.protocol import messages as m

TIMER_PLAYS = {"turn_timer": 0.01, "target": 1}     # Go Wild! to one point, played out by the turn timer


async def test_a_finished_table_forgotten_after_its_lease_says_no_lease_lost(tmp_path, pg_dsn, caplog):
    caplog.set_level(logging.INFO, logger="wildtable.server")
    with trio.fail_after(30):
        async with running_server(server_config(tmp_path / "a", store=pg_dsn, node_id="a", lease_seconds=1.0, keep_finished=3.0)) as (server, url):
            async with seated(url, "go-wild", 2, TIMER_PLAYS) as (table, conns, _):
                await conns[0].receive_until(lambda x: isinstance(x, m.GameOver), timeout=8)
            while table in server.tables:
                await trio.sleep(0.1)
            (passed,) = await query(pg_dsn, "SELECT lease_until < clock_timestamp() FROM wt_tables "
                                             "WHERE table_id = %s AND finished", (table,))
            assert passed == (True,)
            await trio.sleep(0.3)           # its release goes through the writer after it is forgotten
    said = [r.getMessage() for r in caplog.records if r.name == "wildtable.server"]
    assert f"table {table} forgotten (finished, nobody at it)" in said, said
    assert not [s for s in said if "lease lost" in s], said
    (summary,) = [s for s in said if s.startswith("log writer:")]
    assert " 0 commits fenced out" in summary, summary
