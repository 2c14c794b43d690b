"""The client says who deals: the dealer drawn by lot is an event line, and the table
screen names the dealer (Run Wild: in its header; Go Fish Wildcard: on the dealer's row).
The rule: docs/DECISIONS.md "All games" (who deals first is a logged chance outcome)."""

from __future__ import annotations

from wildtable.headless.games import Ctx
from wildtable.headless.games import go_fish_wildcard as gf_client
from wildtable.headless.games import run_wild as rw_client
from wildtable.protocol.engine import ChanceOutcome, TableConfig
from wildtable.protocol.games import go_fish_wildcard as gf
from wildtable.protocol.games import run_wild as rw

CTX = Ctx(("ann", "bob", "cy"), 0)


def test_run_wild_names_the_dealer_drawn_by_lot():
    st = rw.new_table(TableConfig(rw.NAME, 3, {}))
    assert "dealer" not in rw_client.render_text(rw.view(st, 0), CTX)[0]      # not drawn yet
    st, events = rw.apply(st, None, ChanceOutcome("first_dealer", (1, 0, 2)))
    assert [rw_client.describe(e, CTX) for e in events] == ["bob deals the first round (drawn by lot)"]
    assert rw_client.describe(events[0], Ctx(("ann", "bob", "cy"), 1)) == "you deal the first round (drawn by lot)"
    st, events = rw.apply(st, None, ChanceOutcome("deal", tuple(range(72))))
    assert rw_client.describe(events[0], CTX).startswith("round 1 dealt by bob")
    assert rw_client.render_text(rw.view(st, 0), CTX)[0].endswith(" - dealer bob")


def test_go_fish_names_the_dealer_drawn_by_lot_and_marks_the_dealers_row():
    s = gf.new_table(TableConfig(gf.NAME, 3, {}))
    s, events = gf.apply(s, None, ChanceOutcome("dealer", (2, 0, 1)))
    assert [gf_client.describe(e, CTX) for e in events] == ["cy deals (drawn by lot)"]
    s, events = gf.apply(s, None, ChanceOutcome("deal", tuple(range(52))))
    lines = [gf_client.describe(e, CTX) for e in events]
    assert lines[0] == "cy dealt 4 cards each; 40 in the pile" and s.turn == 0
    rows = gf_client.render_text(gf.view(s, 0), CTX)[2:5]
    assert rows[0].startswith("  p0 ann (you)") and rows[0].endswith(" - to act")
    assert rows[2].startswith("  p2 cy") and rows[2].endswith(" - dealer")
