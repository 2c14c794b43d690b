"""A table has an address (/#t=ID, shown beside its name with "Copy link"): a friend who
opens it in another browser types a name and sits at a free seat; once the seats are
taken, the link watches the table; a link to no table says so in the lobby."""

from __future__ import annotations


def test_the_link_seats_a_friend_then_watches(players):
    ann = players("ann").open()
    ann.enter("ann")
    table = ann.create("go-wild", 2, turn_timer=0)
    link = ann.page.input_value("#table-link")
    assert link == f"{ann.http}#t={table}"
    assert ann.page.evaluate("() => location.hash") == f"#t={table}"       # the address bar too

    bob = players("bob")          # another browser: nothing stored
    bob.page.goto(link)
    bob.page.wait_for_selector("#invited")
    assert table in bob.page.inner_text("#invited")
    bob.page.fill("#name", "bob")
    bob.page.click("#enter")
    bob.page.wait_for_selector(f'#table[data-table="{table}"][data-seat="1"]', timeout=10_000)
    ann.page.wait_for_function("() => window.wildtable.at.players[1].name === 'bob'", timeout=10_000)

    # a reload of bob's tab keeps his seat; the link in his address bar is the table's
    bob.page.reload()
    bob.page.wait_for_selector(f'#table[data-table="{table}"][data-seat="1"]', timeout=10_000)

    # the table is full: a third browser's link watches it
    cid = players("cid")
    cid.page.goto(link)
    cid.page.fill("#name", "cid")
    cid.page.click("#enter")
    cid.page.wait_for_selector(f'#table[data-table="{table}"][data-seat=""]', timeout=10_000)
    assert "watching" in cid.page.inner_text("#status").lower()


def test_a_link_to_no_table_says_so(players):
    p = players("dan")
    p.page.goto(p.http + "#t=nosuchtable")
    p.page.fill("#name", "dan")
    p.page.click("#enter")
    p.page.wait_for_selector("#lobby-note", timeout=10_000)
    assert "nosuchtable" in p.page.inner_text("#lobby-note") or "no_such_table" in p.page.inner_text("#lobby-note")
    assert p.page.evaluate("() => location.hash") == ""
