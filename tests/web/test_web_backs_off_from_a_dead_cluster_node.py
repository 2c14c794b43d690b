"""A page sent again and again to a cluster node it cannot reach backs off. Node B tells
the cluster its address is a proxy's (--public-url); the page from node A joins B's table
through it, then the proxy goes away while B still holds the table. The page loses B,
cannot reach it, goes back to A, whose answer to its `rejoin` is a redirect to B again,
and so on: the pause before each try grows (0.5 s, 1 s, 2 s, ...) though A welcomes the
page every round. Once B can be reached again the page sits down there, and after the
connection has stayed up a few seconds the pause is back to 0.5 s."""

from __future__ import annotations

from contextlib import asynccontextmanager

import trio

import clusterkit
from delayproxy import DelayProxy
from webkit import Player, ServerThread, both_live, table_at


class DeadEndCluster(ServerThread):
    """Nodes A and B (`wildtable serve --store DSN` subprocesses), B named by the address of
    a proxy in front of it (``b_url``), which ``cut`` stops and ``mend`` starts again on
    the same port."""

    def __init__(self, base, dsn: str):
        super().__init__(base)
        self.dsn = dsn
        self.proxy = DelayProxy(0, 0.0)

    async def _proxy(self, port: int, task_status=trio.TASK_STATUS_IGNORED) -> None:
        with trio.CancelScope() as self.proxy_scope:
            await self.proxy.run(port, task_status=task_status)

    @asynccontextmanager
    async def _serving(self):
        async with trio.open_nursery() as nursery:
            self.proxy_port = await nursery.start(self._proxy, 0)
            self.b_url = f"ws://127.0.0.1:{self.proxy_port}"
            nodes = []
            try:
                nodes.append(await clusterkit.start_node(nursery, self.data_dir / "a", self.dsn, "a"))
                nodes.append(await clusterkit.start_node(nursery, self.data_dir / "b", self.dsn, "b", "--public-url", self.b_url))
                self.a, self.b = nodes
                self.proxy.target_port = self.b.port
                yield
            finally:
                with trio.CancelScope(shield=True):
                    await clusterkit.stop_all(nodes)
                nursery.cancel_scope.cancel()

    def cut(self) -> None:
        async def go() -> None:
            self.proxy_scope.cancel()
        self.run(go)

    def mend(self) -> None:
        async def go() -> None:
            await self.nursery.start(self._proxy, self.proxy_port)
        self.run(go)


def test_a_page_backs_off_from_a_node_it_is_sent_to_but_cannot_reach(browser, tmp_path, pg_dsn):
    with DeadEndCluster(tmp_path, pg_dsn) as c:
        c.run(both_live, c.a.url, c.b_url)
        table = c.run(table_at, c.b.url)
        ctx = browser.new_context()
        try:
            p = Player(ctx, f"http://127.0.0.1:{c.a.port}/", "ann").open()
            p.enter("ann")
            page = p.page
            page.click(f'[data-key="join-{table}"]', timeout=10_000)
            page.wait_for_selector(f'#table[data-table="{table}"]', timeout=10_000)
            assert page.evaluate("() => window.wildtable.conn.node") == c.b_url

            # B cannot be reached: lost, B refused, back to A, sent to B again, refused, ...
            # each round welcomed by A, and the pause still doubles: 0.5, 1, 2 s
            c.cut()
            # (one wait for both: the line says so only while the page waits out its pause;
            # between two pauses it says connecting, then connected to A)
            page.wait_for_function("""() => window.wildtable.conn.pause >= 4000 &&
                document.getElementById('conn').textContent.includes("connecting to this page's server again in")""",
                                   timeout=15_000)

            # B is back: the page sits down there again, and once that connection has
            # stayed up the pause is 0.5 s again
            c.mend()
            page.wait_for_function(f"""() => {{ const w = window.wildtable;
                return w.conn.ready && w.conn.node === {c.b_url!r} && w.at && w.at.seat === 0; }}""", timeout=15_000)
            page.wait_for_function("() => window.wildtable.conn.pause === 500", timeout=10_000)
            # the browser's own words for each try at B that was refused are all it logged
            assert p.problems and all(x.startswith(f"console error: WebSocket connection to '{c.b_url}/' failed")
                                      and "ERR_CONNECTION_REFUSED" in x for x in p.problems), p.problems
        finally:
            ctx.close()
