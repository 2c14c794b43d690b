"""The share of the server's bots one address may have (serve --max-bots-per-address,
server/botseats.py) survives a restart: each bot's entry in DATA_DIR/bots.json (0600)
keeps the address it counts against, and the bots that take their seats back at the next
start count against it again. (Else a restart would hand an address a fresh share on top
of the bots it has playing.)"""

from __future__ import annotations

import json
import stat
from contextlib import AsyncExitStack

import trio

from botsharekit import ask_bots, dial_from, over_the_share, player, with_bots
from serverkit import running_server, server_config
from waitkit import wait_until


async def test_bots_back_after_a_restart_count_against_their_address(tmp_path):
    data = tmp_path / "data"
    with trio.fail_after(90):
        async with running_server(server_config(data)) as (server, url), AsyncExitStack() as stack:
            await with_bots(stack, url, "ann", 6)
            await with_bots(stack, url, "ann2", 4)
            assert server.bots.count.of("127.0.0.1") == 8
        book = data / "bots.json"
        assert stat.S_IMODE(book.stat().st_mode) == 0o600
        entries = json.loads(book.read_text())
        assert len(entries) == 8 and {e["address"] for e in entries} == {"127.0.0.1"}, entries

        async with running_server(server_config(data)) as (server, url), AsyncExitStack() as stack:
            bots = server.bots
            await wait_until(lambda: bots.running == 8, what="the 8 bots back", show=lambda: bots.running)
            assert bots.count.of("127.0.0.1") == 8
            conn, table = await player(stack, url, "ann3", 2)
            over_the_share(await ask_bots(conn, table, 1), 8)
            await with_bots(stack, url, "eve", 3, dial=dial_from("127.0.0.2"))
            assert bots.running == 10 and bots.count.of("127.0.0.2") == 2
