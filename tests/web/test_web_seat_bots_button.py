"""The table screen's "Seat bots" (the protocol's seat_bots): a seated player fills the free
seats with the server's bots, of the level chosen, and the game starts; the control is
there only while seats are free, and never for a spectator."""

from __future__ import annotations


def test_seat_bots_fills_the_free_seats_with_the_servers_bots(players, web_server):
    p = players("ann").open()
    page = p.page
    p.enter("ann")
    table = p.create("run-wild", 3)
    page.wait_for_selector("#seat-bots")
    assert "2 seats free" in page.inner_text(".seatbots")
    assert page.eval_on_selector_all("#bot-count option", "os => os.map(o => o.value)") == ["1", "2"]

    page.select_option("#bot-count", "1")
    page.select_option("#bot-level", "easy")
    page.click("#seat-bots")
    page.wait_for_function("() => window.wildtable.at.players.filter(p => p.name).length === 2")
    # bots_seated is the answer once the bots sit, so the table's update showing bot1
    # may come first: wait for the answer rather than expect it already there
    page.wait_for_function("() => document.querySelector('#events').innerText.includes('bots seated')")
    assert "bots seated (easy): bot1 at seat 1" in page.inner_text("#events")
    assert "1 seat free" in page.inner_text(".seatbots")

    # a spectator has no such control
    w = players("wes").open()
    w.enter("wes")
    w.page.click(f'[data-key="watch-{table}"]')
    w.page.wait_for_selector(f'#table[data-table="{table}"]')
    assert w.page.locator("#seat-bots").count() == 0

    page.click("#seat-bots")        # the last free seat: the game starts
    page.wait_for_function("() => window.wildtable.at.players.every(p => p.name)")
    page.wait_for_selector('[data-action="ready"]')
    assert page.locator("#seat-bots").count() == 0
    names = sorted(x["name"] for x in p.state()["players"])
    assert names == ["ann", "bot1", "bot2"], names
    assert p.state()["refusal"] is None
