"""Bots the server runs (seat_bots) take no slot of the public listener (issue #22).

The adversary: any local process, which can hold 127.0.0.1's 32 connections (the default
``--max-per-address``). Before, the server's bots connected through the public listener
from 127.0.0.1 like strangers, and seat_bots then failed with bots_not_seated ("HTTP
503: too many connections from your address"). Now they come in over a socketpair handed
straight to the server's connection handler: still a WebSocket under every rule a
player's connection obeys (the same handler), with no address slot to take.
"""

from __future__ import annotations

import trio

from wildtable.headless.net import connect
from wildtable.protocol import messages as m
from wildtable.server import wire

from hostilekit import Sockets, port_of, refused_503, upgraded
from serverkit import create, join, running_server


async def test_seat_bots_works_while_loopback_holds_its_32_connections(tmp_path):
    with trio.fail_after(30):
        async with running_server(tmp_path / "data") as (server, url), Sockets() as held:
            assert server.limits.max_per_address == wire.MAX_PER_ADDRESS == 32     # the default cap
            port = port_of(url)
            async with connect(url, "ann") as ann:
                table = await create(ann, "run-wild", 2)
                await join(ann, table)
                # ann's connection and 31 more from 127.0.0.1: the address is at its cap
                for _ in range(31):
                    held.append(await upgraded(port))
                await refused_503(port)
                await ann.send(m.SeatBots(table, 1, "easy", 50))
                got = await ann.receive_until(lambda x: isinstance(x, (m.BotsSeated, m.Error)))
                assert isinstance(got, m.BotsSeated), got
                assert got.seats == (1,), got
                # the bot is at its seat over the server's own path, named so in the logs
                bot = server.tables[table].seats[1].conn
                assert bot is not None and bot.peer.remote.startswith("server-bot:"), bot
                # and the game it sat down to is played: its first accepted move reaches ann
                await ann.receive_until(lambda x: isinstance(x, m.Update) and x.seq > 0)
                # the cap still holds for everyone else from 127.0.0.1
                await refused_503(port)
