"""The server's bots left alone leave after serve's default --waiting-expiry (600 s),
and a waiting table they leave then expires at the default too: the runs at the default
beside tests/client/test_bots_outlive_their_player.py's, which shorten it to 1 s.

A real server on real sockets (its bots over their socketpairs) on trio's mock clock,
which jumps to the next deadline whenever every task waits: the kernel hands loopback
and socketpair data over as it is sent, before the clock can jump, and the log's writes
run in the task (tests/mockclockkit.py), so the 20 minutes take no wall time. Only what
the server reads is polled, once a simulated second. The server's first bot imports the
bots' code through the world too (server/botseats.py): in a thread of its own it let the
clock jump past ann's wait for her bots, 1 run in 5."""

from __future__ import annotations

import json

import trio

from wildtable.headless.net import connect
from wildtable.protocol import messages as m
from wildtable.server import botseats
from wildtable.server.config import WAITING_EXPIRY

from mockclockkit import OneThreadWorld
from serverkit import create, join, running_server, server_config
from waitkit import wait_until

# how late after its time a bot's leave may come: the sweep looks every SWEEP seconds, and
# counts the time alone from its first look (so up to two periods), and a second more for
# the leave's own round trip
LATE = 2 * botseats.SWEEP + 1.0


async def seated_with_bots_and_gone(url: str, seats: int, bots: int, **settings) -> tuple[str, float]:
    """ann makes a Go Wild! table, sits, seats ``bots`` server bots and goes: the table's
    id and when she was gone (trio's clock)."""
    async with connect(url, "ann") as ann:
        table = await create(ann, "go-wild", seats, **settings)
        await join(ann, table, 0)
        await ann.send(m.SeatBots(table, bots, None, 50))
        seated = await ann.receive_until(lambda x: isinstance(x, (m.Error, m.BotsSeated)))
        assert isinstance(seated, m.BotsSeated) and len(seated.seats) == bots, seated
    return table, trio.current_time()


def bots_at(data, table: str) -> list:
    return [e for e in json.loads((data / "bots.json").read_text() or "[]") if e.get("table") == table]


async def test_bots_alone_at_a_waiting_table_leave_at_the_default_then_it_expires(tmp_path, autojump_clock):
    assert WAITING_EXPIRY == 600.0 and server_config(tmp_path).waiting_expiry == WAITING_EXPIRY
    data = tmp_path / "data"
    async with running_server(server_config(data), world=OneThreadWorld()) as (server, url):
        table, gone = await seated_with_bots_and_gone(url, 4, 2)
        assert server.bots.running == 2 and len(bots_at(data, table)) == 2
        await wait_until(lambda: server.bots.running == 0, step=1.0, timeout=WAITING_EXPIRY + LATE + 1,
                         what="the bots gone", show=lambda: server.bots.running)
        left = server.tables[table].empty_since()        # when the last of them left it
        assert left is not None and WAITING_EXPIRY <= left - gone <= WAITING_EXPIRY + LATE, (left, gone)
        assert bots_at(data, table) == []
        # nobody at it now: it expires a waiting expiry later, as any waiting table does
        await wait_until(lambda: table not in server.tables, step=1.0, timeout=WAITING_EXPIRY + 5,
                         what="the table expired")
        expired = trio.current_time()
        assert WAITING_EXPIRY <= expired - left <= WAITING_EXPIRY + 1.0, expired - left
        await wait_until(lambda: (data / "expired" / f"{table}.wlog").exists(), step=1.0, timeout=10,
                         what="its log in expired/")


async def test_bots_alone_at_a_game_that_cannot_go_on_leave_at_the_default(tmp_path, autojump_clock):
    """No turn timer: once ann has gone the game cannot go on; her bot stays the default
    600 s of nothing happening, no longer; the game waits, its seats held by their names."""
    data = tmp_path / "data"
    async with running_server(server_config(data), world=OneThreadWorld()) as (server, url):
        table, gone = await seated_with_bots_and_gone(url, 2, 1, turn_timer=0)
        seq = server.tables[table].seq
        # the bot may play once more (its turn at the deal, after a 50 ms reaction): then nothing
        await wait_until(lambda: server.bots.running == 0, step=1.0, timeout=WAITING_EXPIRY + LATE + 1,
                         what="the bot gone", show=lambda: server.bots.running)
        t = server.tables[table]
        left = t.empty_since()
        assert left is not None and WAITING_EXPIRY <= left - gone <= WAITING_EXPIRY + LATE, (left, gone)
        assert t.seq <= seq + 1 and not t.finished and t.started
        assert [(s.name, s.conn) for s in t.seats] == [("ann", None), ("bot1", None)]
        assert bots_at(data, table) == []
