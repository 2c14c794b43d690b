"""One address may have at most --max-bots-per-address (8) of the server's bots running
at once (server/botseats.py, issue #25); the server runs 24 in all. The adversary: one
address, any number of connections and tables, seating a few bots at each and leaving
them playing, until nobody else could have a bot. Its address is the one the listener's
per-address caps count: the socket's, or behind a trusted proxy the client it names."""

from __future__ import annotations

from contextlib import AsyncExitStack

import trio

from wildtable.protocol import messages as m
from wildtable.server.botseats import too_many
from wildtable.server.forwarded import AddressCounts, TrustedProxies

from botsharekit import ask_bots, dial_from, over_the_share, player, with_bots
from serverkit import running_server, server_config


async def test_one_address_gets_its_share_at_the_default_and_another_still_gets_bots(tmp_path):
    with trio.fail_after(60):
        async with running_server(server_config(tmp_path / "data")) as (server, url), AsyncExitStack() as stack:
            assert server.config.max_bots_per_address == 8
            await with_bots(stack, url, "ann", 6)          # 5 bots: the largest table, alone
            await with_bots(stack, url, "ann2", 4)         # 3 more, from another connection of hers
            conn, table = await player(stack, url, "ann3", 3)
            over_the_share(await ask_bots(conn, table, 1), 8)
            assert server.bots.running == 8
            # another address still gets the bots it asks for
            await with_bots(stack, url, "eve", 4, dial=dial_from("127.0.0.2"))
            assert server.bots.running == 11 and server.bots.count.of("127.0.0.1") == 8


async def test_asking_for_more_than_the_room_left_is_refused_with_the_room_named(tmp_path):
    with trio.fail_after(60):
        async with running_server(server_config(tmp_path / "data")) as (server, url), AsyncExitStack() as stack:
            await with_bots(stack, url, "ann", 6)          # 5
            conn, table = await player(stack, url, "ann2", 5)
            got = await ask_bots(conn, table, 4)
            over_the_share(got, 5)
            assert "seat 3 or fewer" in got.message, got.message
            assert isinstance(await ask_bots(conn, table, 3), m.BotsSeated)


async def test_behind_a_trusted_proxy_each_client_it_names_has_a_share_of_its_own(tmp_path):
    """Keyed as --max-per-address is: the client a trusted proxy's PROXY header names,
    not the proxy (whose one address every player behind it would share)."""
    config = server_config(tmp_path / "data", trusted_proxies=TrustedProxies.parse(["127.0.0.1"]), proxy_protocol=True)
    with trio.fail_after(60):
        async with running_server(config) as (server, url), AsyncExitStack() as stack:
            seven = dial_from(proxied="198.51.100.7")
            await with_bots(stack, url, "ann", 6, dial=seven)
            await with_bots(stack, url, "ann2", 4, dial=seven)
            conn, table = await player(stack, url, "ann3", 2, dial=seven)
            over_the_share(await ask_bots(conn, table, 1), 8)
            await with_bots(stack, url, "bob", 6, dial=dial_from(proxied="198.51.100.8"))
            assert server.bots.count.of("198.51.100.8") == 5 and server.bots.count.of("127.0.0.1") == 0


def test_the_share_and_the_servers_cap_say_which_they_are():
    count = AddressCounts()
    count.take("198.51.100.7", 8)
    count.take("203.0.113.1", 8)
    count.take(None, 7)                 # (an older bots.json's bots: no address)
    share = too_many(count, "198.51.100.7", 1, 8, 600.0, "t1")
    assert share is not None and share.startswith("your address has 8 of this server's bots playing"), share
    assert "for 600 s leave it too" in share and "wildtable bots URL --table t1 --count N" in share, share
    whole = too_many(count, "192.0.2.1", 2, 8, 600.0, "t1")
    assert whole is not None and whole.startswith("this server runs at most 24 bots at once (23 now)"), whole
    assert too_many(count, "192.0.2.1", 1, 8, 600.0, "t1") is None
    assert too_many(count, "198.51.100.7", 1, 0, 600.0, "t1") is None        # 0: no share, the server's cap only
    count.give("198.51.100.7", 8)
    assert count.of("198.51.100.7") == 0 and count.total == 15
