"""Races: eight clients (four seats at each of two Run Wild tables; Run Wild seats four
at most) hammer the same melds at once, each with many intents in flight, until each
table has told them of many acceptances and many refusals (racekit.FIGHT). Every intent
is answered exactly once and in order per connection; an acceptance comes just before
the update of its seq; cards are conserved after every accepted action (in every view
the clients get, and in every state the log replays to); the live state is the replayed
log's; nothing deadlocks."""

from __future__ import annotations

import trio

from wildtable.protocol.engine import state_hash
from wildtable.protocol.logfmt import read_log
from wildtable.protocol.replay import replay

from racekit import HAMMER_DEADLINE, SETTINGS, check_hammered, hammer
from serverkit import running_server, seated


async def _hammer_table(url, seed: int, results: list):
    async with seated(url, "run-wild", 4, SETTINGS) as (table, conns, joined):
        results.append((table, await hammer(conns, joined, seed)))


async def test_eight_clients_hammering_the_same_melds(tmp_path):
    with trio.fail_after(HAMMER_DEADLINE):
        async with running_server(tmp_path / "data") as (server, url):
            results: list = []
            async with trio.open_nursery() as n:
                n.start_soon(_hammer_table, url, 1, results)
                n.start_soon(_hammer_table, url, 2, results)
            tables = {t: server.tables[t] for t, _ in results}
            live = {t: (tb.state, tb.seq) for t, tb in tables.items()}
            paths = {t: tb.logfile.path for t, tb in tables.items()}
    total_accepted = total_rejected = 0
    for table, hammers in results:
        contents = read_log(paths[table].read_bytes())
        # the live state is the state the log replays to
        rep = replay(contents)
        assert rep.state == live[table][0] and rep.seq == live[table][1]
        assert state_hash(rep.game, rep.state) == state_hash(rep.game, live[table][0])
        accepted, rejected = check_hammered(contents, hammers)
        total_accepted += accepted
        total_rejected += rejected
    # they really fought: many actions went through, many lost a race
    assert total_accepted > 200, total_accepted
    assert total_rejected > 200, total_rejected
