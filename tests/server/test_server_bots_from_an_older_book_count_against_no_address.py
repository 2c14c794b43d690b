"""A DATA_DIR/bots.json written by an older server, whose entries keep no address,
still loads: its bots take their seats back at the next start, and count against the
server's 24 but against no address's share (serve --max-bots-per-address,
server/botseats.py), which they were never counted in."""

from __future__ import annotations

import json
from contextlib import AsyncExitStack

import trio

from botsharekit import ask_bots, over_the_share, player, with_bots
from serverkit import running_server, server_config
from waitkit import wait_until


async def test_an_older_books_bots_come_back_and_count_against_no_address(tmp_path):
    data = tmp_path / "data"
    with trio.fail_after(90):
        async with running_server(server_config(data)) as (server, url), AsyncExitStack() as stack:
            _, table = await with_bots(stack, url, "ann", 6)
        book = data / "bots.json"
        entries = json.loads(book.read_text())
        assert len(entries) == 5
        for e in entries:
            del e["address"]            # as an older server wrote them
        book.write_text(json.dumps(entries))

        async with running_server(server_config(data)) as (server, url), AsyncExitStack() as stack:
            bots = server.bots
            await wait_until(lambda: all(server.tables[table].seats[i].conn is not None for i in range(1, 6)),
                             what="the older book's 5 bots back in their seats")
            assert bots.running == 5 and bots.count.of("127.0.0.1") == 0
            await with_bots(stack, url, "ann2", 6)
            await with_bots(stack, url, "ann3", 4)
            conn, other = await player(stack, url, "ann4", 2)
            over_the_share(await ask_bots(conn, other, 1), 8)
            assert bots.running == 13
