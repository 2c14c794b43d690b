"""The web client at the DEFAULT lease (5 s): a page served by node A sits at a table
node B owns (redirected there); B is killed with SIGKILL. The page loses B, cannot reach
it, goes back to A, which sends its `rejoin` to B again while B still looks live (3 s),
and so on, backing off; then A waits for B's lease, takes the table over and seats the
page there: no `too_many_redirects`, no refusal, the seat taken back without a click
(docs/PROTOCOL.md "Clusters"; tests/server/test_cluster_node_killed_default_lease.py is
the terminal client's)."""

from __future__ import annotations

import signal

from wildtable.server.cluster import ADOPT_EVERY, HEARTBEAT, LIVE
from wildtable.server.store_pg import LEASE_SECONDS

from webkit import ClusterThread

LONGEST_PAUSE = 10.0        # web/app/net.js: the page's longest wait between tries
SEATED_AGAIN_WITHIN = LIVE + HEARTBEAT + LEASE_SECONDS + 2 * ADOPT_EVERY + LONGEST_PAUSE + 10


def test_a_page_is_seated_again_after_its_tables_node_is_killed(browser, tmp_path, pg_dsn):
    with ClusterThread(tmp_path, pg_dsn, 2, lease=None) as c:
        a, b = c.nodes
        ctx = browser.new_context()
        try:
            p, table = c.seated_across(ctx, "ann")
            page = p.page
            assert page.evaluate("() => window.wildtable.conn.node") == b.url

            b.signal(signal.SIGKILL)
            page.wait_for_function("() => !window.wildtable.conn.ready", timeout=10_000)
            # seated again at A, the page's own server (so A took the table over), without a click
            page.wait_for_function("""() => { const w = window.wildtable;
                return w.conn.ready && w.conn.node === null && w.at && w.at.seat === 0; }""",
                                   timeout=SEATED_AGAIN_WITHIN * 1000)
            assert p.state()["refusal"] is None, p.state()
            # what the browser logged: its own words for each try at B that was refused
            assert all(x.startswith(f"console error: WebSocket connection to '{b.url}/' failed")
                       for x in p.problems), p.problems
        finally:
            ctx.close()
