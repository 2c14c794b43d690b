"""A table that has ended on a cluster (docs/PROTOCOL.md, "Clusters"): any node asked
answers it from the store's row itself, with the error a single server gives for it,
while its owner is alive too; no redirect to the owner, which would only say the same.
A game over and forgotten is `no_such_table` saying it is over and where its replay and
log are; a waiting table that expired is `no_such_table` saying it expired. A finished
game its owner still holds (someone is at it) is redirected there, to be watched.
Found: every node redirected such a table to its live owner, which then answered a
sentence that did not say which of the two it was."""

from __future__ import annotations

import trio

from clusterkit import cluster, query
from scripted import play_to_end
from serverkit import QUICK_GO_WILD, at_a_new_table, fetch, lowest_card
from wildtable.headless.net import connect
from wildtable.protocol import messages as m


async def made_here(conn, game: str, seats: int, **settings) -> str:
    """A table made on the node ``conn`` is connected to (create_table with here)."""
    await conn.send(m.CreateTable(game, seats, settings, "", True))
    made = await conn.receive_until(lambda x: isinstance(x, (m.TableCreated, m.Error, m.Redirect)))
    assert isinstance(made, m.TableCreated), made
    return made.table


async def row_is(dsn: str, table: str, condition: str) -> None:
    """Until the table's row in wt_tables meets ``condition`` (SQL)."""
    while not await query(dsn, f"SELECT 1 FROM wt_tables WHERE table_id = %s AND {condition}", (table,)):
        await trio.sleep(0.05)


async def answers(url: str, table: str) -> list:
    """What the node at ``url`` answers to join, rejoin, spectate and seat_bots of ``table``."""
    out = []
    async with connect(url, "wes") as c:
        for msg in (m.Join(table, 0), m.Rejoin(table, 0, "x" * 32), m.Spectate(table),
                    m.SeatBots(table, 1, None, None)):
            await c.send(msg)
            out.append(await c.receive_until(
                lambda x: isinstance(x, (m.Redirect, m.Error, m.Joined, m.Spectating, m.BotsSeated))))
    return out


async def test_any_node_says_an_ended_table_is_over_or_expired_without_a_redirect(tmp_path, pg_dsn):
    with trio.fail_after(60):
        async with cluster(tmp_path, pg_dsn, 2, "--keep-finished", "0", "--waiting-expiry", "0.5") as (a, b):
            async with connect(a.url, "ann") as ann, connect(a.url, "bob") as bob:
                squat = await made_here(ann, "go-wild", 2)     # nobody joins it: it expires on a
                # (made again if it expired before ann's join reached it: at_a_new_table)
                over, first, _ = await at_a_new_table(ann, lambda: made_here(ann, "go-wild", 2, **QUICK_GO_WILD),
                                                      lambda t: m.Join(t, 0))
                await bob.send(m.Join(over, 1))
                seats = [first, await bob.receive_until(lambda x: isinstance(x, (m.Joined, m.Error)))]
                async with trio.open_nursery() as n:
                    for c, joined in zip((ann, bob), seats):
                        n.start_soon(lambda c=c, j=joined: play_to_end(c, j, lowest_card, timeout=20))
                # over, and held by a while its players are still connected: watched there
                await row_is(pg_dsn, over, "finished AND entry IS NOT NULL")
                for r in await answers(b.url, over):
                    assert isinstance(r, m.Redirect) and r.url == a.url and r.table == over, r
            # the players gone, a forgets the game and clears its lobby entry
            await row_is(pg_dsn, over, "entry IS NULL")
            await row_is(pg_dsn, squat, "ended = 'expired'")
            for node in (b, a):         # the other node, and the owner itself, alive all along
                for r in await answers(node.url, over):
                    assert isinstance(r, m.Error) and r.code == "no_such_table", (node.name, r)
                    assert f"table {over!r} is over" in r.message and f"/replay/{over}.json" in r.message, r
                    assert f"export --store DSN {over}" in r.message and "expired" not in r.message, r
                status, replayed = await trio.to_thread.run_sync(fetch, node.port, f"/replay/{over}.json")
                assert status == 200 and replayed["table"] == over, replayed        # as the message says
                for r in await answers(node.url, squat):
                    assert isinstance(r, m.Error) and r.code == "no_such_table", (node.name, r)
                    assert f"table {squat!r} expired" in r.message and "waited for players" in r.message, r
                    assert "is over" not in r.message and "/replay/" not in r.message, r
