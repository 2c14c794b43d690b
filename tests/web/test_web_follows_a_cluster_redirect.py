"""The web client on a cluster (docs/PROTOCOL.md "Clusters"): a page served by node A
joins a table node B owns. A answers `redirect`; the page opens a WebSocket to B (which
accepts A's page as Origin), says hello with the same name, sends the join again and sits
down there. The seat token stays keyed by A, the page's own server, and a reload (back to
A, rejoin, redirected again) takes the seat back at B."""

from __future__ import annotations

from webkit import ClusterThread


def test_a_page_from_one_node_joins_a_table_another_node_owns(browser, tmp_path, pg_dsn):
    with ClusterThread(tmp_path, pg_dsn, 2) as c:
        a, b = c.nodes
        ctx = browser.new_context()
        try:
            p, table = c.seated_across(ctx, "ann")
            page = p.page
            assert p.state()["seat"] == 0
            assert page.evaluate("() => window.wildtable.conn.node") == b.url
            kept = page.evaluate("() => JSON.parse(localStorage.getItem('wildtable.seats'))")
            assert list(kept) == [f"127.0.0.1:{a.port} {table} ann"], kept      # keyed by the page's own server

            page.reload()                                        # back to A: rejoin, redirected to B again
            page.wait_for_selector(f'#table[data-table="{table}"]', timeout=10_000)
            page.wait_for_function("() => window.wildtable.conn.ready && window.wildtable.at.seat === 0")
            assert page.evaluate("() => window.wildtable.conn.node") == b.url
            assert p.state()["refusal"] is None
            assert p.problems == []
        finally:
            ctx.close()
