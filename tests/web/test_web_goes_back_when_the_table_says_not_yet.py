"""The browser keeps its seat when the table answers its rejoin "not yet" (web/app/main.js
NOT_YET; docs/PROTOCOL.md, "Clusters"): a reload at a table, and the server refuses the
page's rejoin twice with ``storage_error`` (as a node of a cluster does while another node
takes the table over, or while its store is away). The page says it will try again and
when, keeps the seat's token, asks again after 1 s and 2 s and is back at its seat without a
click. Before, any refused rejoin dropped the token and sent the player to the lobby of a
table that played on without them."""

from __future__ import annotations

from wildtable.protocol import messages as m
from wildtable.server import arbiter_seats
from wildtable.server.arbiter_io import SendTo

REFUSED = 2


def test_a_reload_refused_not_yet_is_seated_again_without_a_click(players, monkeypatch):
    refused: list[str] = []
    real_rejoin = arbiter_seats.rejoin

    def rejoin_not_yet(core, req, g):
        if len(refused) < REFUSED:
            refused.append(req.token)
            g.out.append(SendTo(req.link, m.Error("storage_error", "this server cannot reach its store to find "
                                                  "the table just now; try again in a few seconds", ref="rejoin")))
            return
        real_rejoin(core, req, g)

    ann = players("ann").open()
    ann.enter("ann")
    table = ann.create("go-wild", 2, turn_timer=0)
    token = ann.page.evaluate("() => JSON.stringify(sessionStorage) + JSON.stringify(localStorage)")
    monkeypatch.setattr(arbiter_seats, "rejoin", rejoin_not_yet)
    ann.page.reload()
    ann.page.wait_for_function(
        "() => document.querySelector('#conn').textContent.includes('cannot go back to the table yet')",
        timeout=10_000)
    line = ann.page.inner_text("#conn")
    assert "storage_error" in line and "trying again in 1 s" in line, line
    ann.page.wait_for_function(
        "([t]) => { const at = window.wildtable.at; return at && at.id === t && at.seat === 0; }",
        arg=[table], timeout=20_000)
    assert len(refused) == REFUSED and refused[0] == refused[1]      # the same token, kept
    assert refused[0] in token
    assert "cannot go back" not in ann.page.inner_text("#conn")
    assert ann.page.evaluate("() => window.wildtable.notYet") == 0
