"""A bot's place in its address's share (serve --max-bots-per-address, server/botseats.py)
comes back when that bot ends, in the same moment as its place among the server's 24:
here its game is played to its end, and the address that was refused a bot gets one."""

from __future__ import annotations

from contextlib import AsyncExitStack

import trio

from wildtable.headless.bots import Bot
from wildtable.headless.net import connect
from wildtable.protocol import messages as m

from botsharekit import ask_bots, dial_from, over_the_share, player, with_bots
from serverkit import create, running_server, server_config
from waitkit import wait_until


async def test_a_bot_whose_game_is_over_gives_its_place_back(tmp_path):
    with trio.fail_after(90):
        async with running_server(server_config(tmp_path / "data")) as (server, url), AsyncExitStack() as stack:
            bots = server.bots
            await with_bots(stack, url, "ann", 6)          # 5 bots holding their seats
            await with_bots(stack, url, "ann2", 3)         # 2 more: 7
            maker = await stack.enter_async_context(connect(url, "maker"))
            quick = await create(maker, "run-wild", 3, rounds=1, hand_size=3)
            async with trio.open_nursery() as nursery:
                # ann3 plays her own seat of a short game, and asks the server for a bot there
                ann3 = Bot(url, quick, "ann3", delay=0.0, level="easy", verbose=False)
                await nursery.start(ann3.run)
                got = await ann3.core.request(m.SeatBots(quick, 1, "easy", 0), lambda x: isinstance(x, m.BotsSeated),
                                              quiet=True)
                assert isinstance(got, m.BotsSeated), got
                assert bots.running == bots.count.of("127.0.0.1") == 8
                conn, table = await player(stack, url, "ann4", 2)
                over_the_share(await ask_bots(conn, table, 1), 8)
                # the game starts once its last seat is taken (by someone of another address)
                friend = Bot(url, quick, "friend", delay=0.0, level="easy", verbose=False, dial=dial_from("127.0.0.2"))
                nursery.start_soon(friend.run)
            assert server.tables[quick].finished
            await wait_until(lambda: bots.running == 7, what="the quick game's bot ended", show=lambda: bots.running)
            assert bots.count.of("127.0.0.1") == 7          # given back with the server's place, not later
            assert isinstance(await ask_bots(conn, table, 1), m.BotsSeated)
            assert bots.running == bots.count.of("127.0.0.1") == 8
