"""A finished game is held again after a server restart, on files and on a store alike:
listed as over and watchable until `--keep-finished` has passed since it ended, then no
longer held (list_tables leaves it out, spectate gets no_such_table). From files, recovery
loads a finished log younger than keep_finished read-only; on a store, the node loads its
own tables marked finished under keep_finished ago (wt_tables.finished_at)."""

from __future__ import annotations

import trio

from serverkit import answer, running_server, seated, server_config
from wildtable.headless.net import connect
from wildtable.protocol import messages as m

TIMER_PLAYS = {"turn_timer": 0.01, "target": 1}     # Go Wild! to one point, played out by the turn timer


async def lobby_and_spectate(url: str, table: str) -> tuple[list, object]:
    """(the tables list_tables shows, the answer to spectate ``table``: spectating or an error)."""
    async with connect(url, "cy") as cy:
        await cy.send(m.ListTables())
        listed = (await cy.receive_until(lambda x: isinstance(x, m.TableList))).tables
        await cy.send(m.Spectate(table))
        return listed, await answer(cy)


async def test_a_finished_game_is_held_again_until_keep_finished(tmp_path, files_or_store):
    data = tmp_path / "data"
    with trio.fail_after(60):
        async with running_server(server_config(data, **files_or_store)) as (server, url):
            async with seated(url, "go-wild", 2, TIMER_PLAYS) as (table, conns, _):
                over = await conns[0].receive_until(lambda x: isinstance(x, m.GameOver), timeout=8)

        async with running_server(server_config(data, keep_finished=3600, **files_or_store)) as (server, url):
            assert table in server.tables and server.tables[table].readonly
            listed, watching = await lobby_and_spectate(url, table)
            assert [(t["table"], t["status"]) for t in listed] == [(table, "over")], listed
            assert isinstance(watching, m.Spectating), watching
            async with connect(url, "dee") as dee:
                await dee.send(m.Spectate(table))
                again = await dee.receive_until(lambda x: isinstance(x, m.GameOver), timeout=5)
                assert again.scores == over.scores

        async with running_server(server_config(data, keep_finished=0, **files_or_store)) as (server, url):
            assert table not in server.tables
            listed, watching = await lobby_and_spectate(url, table)
            assert table not in [t["table"] for t in listed], listed
            assert isinstance(watching, m.Error) and watching.code == "no_such_table", watching
