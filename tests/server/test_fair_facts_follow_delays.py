"""A fair table's facts read each seat's delay bound again only when a seat changes hands
or a connection's bound moves (server/table.py ``_facts``, connection.py ``_measure``:
``delays_moved``), not twice an intent: a bound that moves reaches the table's next
decision. Real sockets on 127.0.0.1; the kernel's bound is the test's (as
tests/server/test_fair_arbitration.py sets it), below the ping's so that it decides."""

from __future__ import annotations

import trio

from wildtable.protocol import messages as m

from serverkit import reply_to, running_server, seated
from waitkit import wait_until


async def test_a_seats_new_delay_reaches_the_tables_next_decision(tmp_path):
    bound = {"us": 1.0}

    def kernel_delay(peer) -> float:
        return bound["us"] / 1e6

    with trio.fail_after(30):
        async with running_server(tmp_path / "data", kernel_delay=kernel_delay) as (server, url):
            async with seated(url, "run-wild", 2) as (table, conns, joined):
                core = server.tables[table].core
                assert core.fair > 0
                await conns[1].send(m.Intent(1, {"kind": "ready"}))
                assert isinstance(await reply_to(conns[1], 1), m.Accepted)
                await wait_until(lambda: core.facts.delays == (1e-6, 1e-6), what="both seats' delays in the facts",
                                 show=lambda: core.facts.delays)
                # ann's kernel round trip grows; her next intent is measured as it is read
                bound["us"] = 3.0
                await conns[0].send(m.Intent(2, {"kind": "ready"}))
                assert isinstance(await reply_to(conns[0], 2), m.Accepted)
                assert core.facts.delays[0] == 3e-6, core.facts.delays
