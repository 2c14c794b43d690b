"""The table's thin shell (server/table.py) carries out what its core decides about
links (docs/ARCHITECTURE.md, "The arbiter: pure core, thin shell"): a join seats the
connection at once (its ``table`` and ``seat``), a second connection's rejoin closes the
first with its reason, and the map from links to connections stays bounded however
many connections pass by (every resource a peer can make us hold is bounded). A log in
memory and connections that only record what they are sent: no sockets."""

from __future__ import annotations

from typing import Any

import attrs
import trio

from arbiterkit import identity
from wildtable.protocol import messages as m
from wildtable.protocol.codec import unpackb
from wildtable.protocol.engine import TableConfig
from wildtable.protocol.games import go_fish_wildcard as game
from wildtable.server.arbiter_io import JoinReq, RejoinReq, new_link
from wildtable.server.table import Table


@attrs.define
class MemLog:
    name: str = "t1.wlog"
    data: bytearray = attrs.Factory(bytearray)


class MemWriter:
    """A log writer that keeps the bytes in memory (server/interfaces.py LogSink)."""
    paused = False
    failed = None

    async def commit(self, log: MemLog, data: bytes) -> None:
        log.data += data
        await trio.lowlevel.checkpoint()

    async def append(self, log: MemLog, data: bytes) -> None:
        log.data += data

    async def release(self, log: MemLog, ended: str | None = None) -> None:
        pass


@attrs.define(eq=False)
class Conn:
    """What the shell does to a connection (server/connection.py), recorded."""
    name: str
    link: Any = None
    table: Any = None
    seat: int | None = None
    closed: bool = False
    delay: float = 0.0
    got: list = attrs.Factory(list)
    close: tuple | None = None

    def __attrs_post_init__(self) -> None:
        self.link = new_link("10.0.0.1:5000", self.name)

    def attach(self, table, seat) -> None:
        self.table, self.seat = table, seat

    def detach(self, table) -> None:
        if self.table is table:
            self.table, self.seat = None, None

    def encode(self, message) -> bytes:
        return m.encode(message)

    def send_frames(self, frames: list[bytes]) -> None:
        self.got += [unpackb(f) for f in frames]

    def close_soon(self, code: int, reason: str) -> None:
        self.close = (code, reason)


async def test_the_shell_seats_closes_and_lets_go():
    state = game.new_table(TableConfig(game.NAME, 2, {}))
    table = Table("t1", game, 2, {}, state, MemLog(), MemWriter(), chance=identity)
    async with trio.open_nursery() as n:
        await n.start(table.run)
        ann, bob = Conn("ann"), Conn("bob")
        await table.submit(ann, JoinReq(ann.link, None, "ann"))
        await table.submit(bob, JoinReq(bob.link, None, "bob"))
        # the shell seats a connection as its core decides; `joined` follows the commit
        with trio.fail_after(10):
            while not all(any(g["type"] == "joined" for g in c.got) for c in (ann, bob)):
                await trio.sleep(0)
        assert (ann.table, ann.seat, bob.table, bob.seat) == (table, 0, table, 1)
        token = next(g["token"] for g in ann.got if g["type"] == "joined")

        # 500 passers-by, each refused a seat: answered, then let go by the shell
        passers = [Conn(f"p{i}") for i in range(500)]
        for p in passers:
            await table.submit(p, JoinReq(p.link, None, p.name))
        with trio.fail_after(10):
            while not passers[-1].got:
                await trio.sleep(0)
        assert all(p.got[0]["code"] == "table_full" and p.table is None for p in passers)
        assert len(table.conns) <= 64 + 2, len(table.conns)

        # ann's seat resumed from another connection: ann is told, then closed with the reason
        again = Conn("ann again")
        await table.submit(again, RejoinReq(again.link, 0, token))
        with trio.fail_after(10):
            while ann.close is None:
                await trio.sleep(0)
        assert ann.close == (1000, "seat resumed elsewhere") and ann.got[-1]["code"] == "seat_taken_over"
        assert (ann.table, again.table, again.seat) == (None, table, 0)
        assert [s.conn for s in table.seats] == [again, bob]
        n.cancel_scope.cancel()
