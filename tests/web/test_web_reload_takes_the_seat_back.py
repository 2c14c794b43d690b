"""A page reload in the middle of a game takes the seat back: the seat token is kept in
the browser's localStorage per server, table and player name, and the page rejoins with it.
So does a dropped connection: the page connects again and rejoins."""

from __future__ import annotations


def test_a_reload_mid_game_takes_the_seat_back(players, web_server):
    p = players("ann").open()
    p.enter("ann")
    table = p.create("run-wild", 2, rounds=1, idle_timeout=120)
    # bob never ends the round: a bot did once, at load 8-10, before the last draw below
    web_server.passive(table, 1)
    page = p.page
    page.wait_for_selector('[data-action="ready"]')
    p.click_and_wait('[data-action="ready"]')
    page.wait_for_function("() => window.wildtable.at.view.phase === 'playing'", timeout=10_000)
    before = p.state()
    kept = page.evaluate("() => localStorage.getItem('wildtable.seats')")
    assert table in kept and "token" in kept

    page.reload()
    page.wait_for_selector(f'#table[data-table="{table}"]', timeout=10_000)
    after = p.state()
    assert after["seat"] == before["seat"] == 0
    assert after["view"]["phase"] == "playing" and len(after["view"]["hand"]) >= 8
    assert "ann" in page.inner_text("#status")
    # the seat is ours again: an action is accepted
    seq = after["seq"]
    p.click_and_wait('[data-action="draw"]')
    page.wait_for_function("s => window.wildtable.at.seq > s", arg=seq)
    assert p.state()["refusal"] is None
    assert len(p.state()["view"]["hand"]) >= 9 or p.state()["view"]["phase"] != "playing"

    # a dropped connection: the page connects again by itself and takes the seat back
    seq = p.state()["seq"]
    page.evaluate("() => window.wildtable.conn.ws.close()")
    page.wait_for_function("() => !window.wildtable.conn.ready")
    page.wait_for_function("() => window.wildtable.conn.ready && window.wildtable.at && window.wildtable.at.seat === 0",
                           timeout=10_000)
    page.wait_for_function("s => window.wildtable.at.seq >= s", arg=seq)
    p.click_and_wait('[data-action="draw"]')
    assert p.state()["refusal"] is None


def test_a_second_window_takes_the_seat_and_the_first_lets_it_go(players, web_server):
    """Two windows of one browser share the seat's token (per server, table and name): one
    opened at the table's link under the same name takes the seat (the server tells the
    other 'seat_taken_over'), and the first does not take it back in turn: the two would
    otherwise fight for it forever."""
    first = players("first").open()
    first.enter("ann")
    table = first.create("go-wild", 2, turn_timer=0)
    link = first.page.input_value("#table-link")
    assert link.endswith(f"#t={table}")
    second = players("second", beside=first)      # the same browser: the same localStorage
    second.page.goto(link)
    second.page.wait_for_selector(f'#table[data-table="{table}"]', timeout=10_000)
    assert second.state()["seat"] == 0
    first.page.wait_for_function("() => window.wildtable.conn.stopped === true", timeout=10_000)
    assert "another window" in first.page.inner_text("#conn")
    assert "seat_taken_over" in first.page.inner_text("#refusal")
    first.page.wait_for_timeout(1500)          # longer than the first reconnect pause
    assert second.page.evaluate("() => window.wildtable.conn.ready") is True
    assert first.page.evaluate("() => window.wildtable.conn.ws === null")
