"""The Origin header, by hand: a browser page from another site must not open a WebSocket
to the server. An Origin whose host:port differs from the request's Host gets HTTP 403 and
no WebSocket; the server's own origin is accepted; no Origin at all (a program, not a
browser) is accepted; ``allow_origins`` (``--allow-origin``) admits the origins named."""

from __future__ import annotations

import trio

from hostilekit import (FOREIGN, accepted_101, every_case, port_of, refused_403, said_hello, serve_process,
                        steady_player, under_attack)
from serverkit import server_config


async def test_a_foreign_origin_gets_403_and_no_websocket(tmp_path):
    """Each in turn, to one server (hostilekit.every_case)."""
    async def check(origin: str, _) -> None:
        await refused_403(port, origin.format(port=port))
        (await said_hello(port)).close()        # the server goes on

    with trio.fail_after(40):
        async with under_attack(tmp_path / "data") as (server, url, port):
            await every_case(dict.fromkeys(FOREIGN), check)


async def test_the_servers_own_origin_and_no_origin_are_accepted(tmp_path):
    with trio.fail_after(20):
        async with under_attack(tmp_path / "data") as (server, url, port):
            await accepted_101(port, f"http://127.0.0.1:{port}")
            await accepted_101(port, f"https://127.0.0.1:{port}")
            await accepted_101(port, None)
            (await said_hello(port, origin=f"http://127.0.0.1:{port}")).close()


async def test_an_allowed_origin_is_accepted_and_others_still_refused(tmp_path):
    with trio.fail_after(20):
        async with under_attack(server_config(tmp_path / "data", allow_origins=("http://games.example",))) as (server, url, port):
            await accepted_101(port, "http://games.example")
            (await said_hello(port, origin="http://games.example")).close()
            await refused_403(port, "http://evil.example")
            await refused_403(port, "http://games.example.evil.example")
            await accepted_101(port, f"http://127.0.0.1:{port}")


async def test_the_allow_origin_flag_admits_the_origins_named(tmp_path):
    """`wildtable serve --allow-origin A --allow-origin B`, as a real process."""
    with trio.fail_after(40):
        # the operator's spelling does not matter (scheme and host are case-insensitive, and
        # browsers send them lowercase, with no trailing slash)
        async with serve_process(tmp_path / "data", "--allow-origin", "http://games.example",
                                 "--allow-origin", "HTTPS://Cards.Example:8443/") as srv, steady_player(srv.url):
            port = port_of(srv.url)
            await accepted_101(port, "http://games.example")
            await accepted_101(port, "https://cards.example:8443")
            await refused_403(port, "https://cards.example")
            await refused_403(port, "http://evil.example")
            await accepted_101(port, None)
