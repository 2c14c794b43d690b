"""Two tabs of one browser are two players (issue #26): each tab keeps its own name and
the table it sits at (sessionStorage), so a reload puts each tab back at its own seat.

The adversary is the browser's shared storage: before, the name and the current table
were one value per origin, so the tab reloaded last came back as the player who typed a
name last and took that player's seat with that player's token."""

from __future__ import annotations


def seated(p, table: str, seat: int, name: str) -> None:
    p.page.wait_for_function(
        "([t, s]) => { const at = window.wildtable.at; return at && at.id === t && at.seat === s; }",
        arg=[table, seat], timeout=10_000)
    assert p.page.evaluate("() => window.wildtable.name") == name
    assert name in p.page.inner_text("#status")


def test_two_tabs_two_names_each_reload_keeps_its_own_seat(players):
    # two tabs of one browser, opened before any name is stored
    alice = players("alice").open()
    bob = players("bob", beside=alice).open()
    alice.page.wait_for_selector("#name")
    bob.page.wait_for_selector("#name")
    alice.enter("alice")
    bob.enter("bob")
    table = alice.create("go-wild", 2, turn_timer=0)
    join = f'[data-key="join-{table}"]'
    bob.page.wait_for_selector(join, timeout=10_000)
    bob.page.click(join)
    seated(alice, table, 0, "alice")
    seated(bob, table, 1, "bob")

    alice.page.reload()
    seated(alice, table, 0, "alice")
    bob.page.reload()
    seated(bob, table, 1, "bob")
    alice.page.reload()
    seated(alice, table, 0, "alice")

    # nobody's seat was taken over, and the server sees both players at their seats
    for p in (alice, bob):
        assert p.page.evaluate("() => window.wildtable.conn.stopped") is not True
        assert "another window" not in p.page.inner_text("#conn")
    alice.page.wait_for_function(
        """() => { const ps = window.wildtable.at.players;
                   return ps.length === 2 && ps[0].name === 'alice' && ps[1].name === 'bob'
                          && ps.every((p) => p.connected !== false); }""", timeout=10_000)


def test_a_new_tab_offers_the_last_name_and_sits_nowhere(players):
    """A tab opened later connects under the name last typed in this browser (a default),
    and stays in the lobby: it takes no seat nobody asked it to take."""
    first = players("first").open()
    first.enter("carol")
    table = first.create("go-wild", 2, turn_timer=0)
    second = players("second", beside=first).open()
    second.page.wait_for_selector("#create-btn", timeout=10_000)
    second.page.wait_for_function("() => window.wildtable.conn && window.wildtable.conn.ready")
    assert second.page.evaluate("() => window.wildtable.name") == "carol"
    second.page.wait_for_selector(f'[data-key="rejoin-{table}"]', timeout=10_000)   # offered, not taken
    assert second.page.evaluate("() => window.wildtable.at") is None
    assert first.page.evaluate("() => window.wildtable.conn.stopped") is not True
