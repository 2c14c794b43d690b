"""Stand-ins for what the server's ``hint`` (server/hints.py) reads: a table whose game
records which seat's view is asked for, the server its processes belong to, a seated
connection."""

from __future__ import annotations

import types

from wildtable.protocol.engine import ChanceOutcome, TableConfig
from wildtable.protocol.games import wild_shots as E


class Spy:
    """A table whose game records which seat's view is asked for; its state is the real one."""

    def __init__(self, state, seat):
        self.id, self.seq, self.state = "tspy", 5, state
        spy = self
        self.asked: list = []

        class Game:
            NAME = E.NAME

            @staticmethod
            def view(state, who):
                spy.asked.append(who)
                return E.view(state, who)
        self.game = Game


class StandInServer:
    """Stands for the server the hints' limiter and processes belong to."""

    def __init__(self) -> None:
        self.closers: list = []             # (server/app.py calls them once it stopped)

    def stop(self) -> None:
        for close in self.closers:
            close()


class StandInConn:
    """A seated connection as hints.answer reads it; ``address``: the IP address it comes
    from (as a Peer's host), or none."""

    def __init__(self, table, seat, server, address: str | None = None):
        self.table, self.seat, self.server = table, seat, server
        if address is not None:
            self.peer = types.SimpleNamespace(host=address)


def dealt(perm) -> E.State:
    """A Wild Shots table for 4 dealt ``perm`` (first player 0)."""
    s = E.new_table(TableConfig(E.NAME, 4, {"first_player": 0}))
    s, _ = E.apply(s, None, ChanceOutcome("deal", tuple(perm)))
    s, _ = E.apply(s, None, ChanceOutcome("snake_oil", tuple(range(14))))
    return s

