"""The Origin check on a node of a cluster: a page served by one node may open a WebSocket
to another (to follow a redirect, or to come back after a drop), so each node accepts the
http(s) origin of every live node's public URL besides its own and --allow-origin's. Any
other origin is still refused with 403 and no WebSocket."""

from __future__ import annotations

import trio

from hostilekit import FOREIGN, accepted_101, port_of, refused_403, said_hello
from serverkit import running_server, server_config


async def both_live(*servers) -> None:
    """Until each node has seen both in its heartbeat's read of the live nodes."""
    while not all(len(s.cluster.nodes) == 2 for s in servers):
        await trio.sleep(0.05)


async def test_a_peer_nodes_origin_is_accepted_and_a_foreign_one_refused(tmp_path, pg_dsn):
    with trio.fail_after(30):
        async with running_server(server_config(tmp_path / "a", store=pg_dsn, node_id="a")) as (a, url_a), \
                running_server(server_config(tmp_path / "b", store=pg_dsn, node_id="b", allow_origins=("http://games.example",))) as (b, url_b):
            await both_live(a, b)
            pa, pb = port_of(url_a), port_of(url_b)
            await accepted_101(pb, f"http://127.0.0.1:{pa}")        # a page node a served
            (await said_hello(pb, origin=f"http://127.0.0.1:{pa}")).close()
            await accepted_101(pa, f"http://127.0.0.1:{pb}")        # and the other way round
            await accepted_101(pb, f"http://127.0.0.1:{pb}")        # its own, as ever
            await accepted_101(pb, "http://games.example")          # --allow-origin, as ever
            for origin in FOREIGN + ["https://127.0.0.1:{other}", "http://127.0.0.1.evil.example:{other}",
                                     "http://games.example.evil.example", "ws://127.0.0.1:{other}"]:
                await refused_403(pb, origin.format(port=pb, other=pa))
            await refused_403(pb, f"http://127.0.0.1:{pa + 1 if pa + 1 != pb else pa + 2}")   # not a node
