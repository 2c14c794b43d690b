"""A seat that cannot be taken back just now is asked for again, never given up
(headless/reducer.py NOT_YET; docs/PROTOCOL.md, "Clusters"). The server comes back after a
restart but answers the client's rejoin twice with ``storage_error`` (as a node of a
cluster does while another node takes the table over, or while its store is away): the
client keeps its seat's token, says it will try again and when, asks again after 1 s and
2 s, and is back at its seat. Before, any refused rejoin after a reconnect dropped the
seat (the player was left in the lobby of a table that played on without them)."""

from __future__ import annotations

import socket

import trio

from wildtable.headless import notices
from wildtable.headless.core import ClientCore
from wildtable.protocol import messages as m
from wildtable.server import arbiter_seats
from wildtable.server.app import Server
from wildtable.server.arbiter_io import SendTo
from wildtable.server.config import ServerConfig

from test_client_core import Recorder, seated_then_server_gone

REFUSED = 2         # rejoins the restarted server refuses "not yet"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def test_a_rejoin_refused_not_yet_is_asked_again_until_the_seat_is_back(tmp_path, monkeypatch):
    data, port = tmp_path / "data", _free_port()
    url = f"ws://127.0.0.1:{port}"
    seen = Recorder()
    refused: list[float] = []
    real_rejoin = arbiter_seats.rejoin

    def rejoin_not_yet(core, req, g):
        if len(refused) < REFUSED:
            refused.append(trio.current_time())
            g.out.append(SendTo(req.link, m.Error("storage_error", "this server cannot reach its store to find "
                                                  "the table just now; try again in a few seconds", ref="rejoin")))
            return
        real_rejoin(core, req, g)

    with trio.fail_after(40):
        async with trio.open_nursery() as outer:
            core = ClientCore(url, "ann", seen)
            reply = await seated_then_server_gone(outer, core, data, port, seen)
            token = core.mirror.token
            monkeypatch.setattr(arbiter_seats, "rejoin", rejoin_not_yet)
            second = Server(ServerConfig(data_dir=data))
            await outer.start(second.run, "127.0.0.1", port)
            waits = []
            for _ in range(REFUSED):
                later = await seen.wait(lambda n: isinstance(n, (notices.NotBackYet, notices.CannotGoBack)))
                assert isinstance(later, notices.NotBackYet), later.text
                assert later.error.code == "storage_error" and "trying again in" in later.text, later.text
                assert (core.mirror.table, core.mirror.seat, core.mirror.token) == (reply.table, 0, token)
                waits.append(later.delay)
            assert waits == [1.0, 2.0]
            back = await seen.wait(lambda n: isinstance(n, (notices.BackAtTable, notices.CannotGoBack)))
            assert isinstance(back, notices.BackAtTable), back.text
            assert (back.table, back.seat) == (reply.table, 0)
            assert refused[1] - refused[0] >= 1.0         # it waited as it said before asking again
            await core.command("ready")
            await seen.wait(lambda n: n.kind == "accepted" and n.text == "ready")
            await second.shutdown("test over")
            outer.cancel_scope.cancel()
