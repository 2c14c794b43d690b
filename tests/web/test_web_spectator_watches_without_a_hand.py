"""Watching a table from the lobby: the spectator's page follows the game as it is played,
shows no hand and no action buttons, and goes back to the lobby."""

from __future__ import annotations


def test_a_spectator_follows_the_table_and_sees_no_hand(players, web_server):
    ann = players("ann").open()
    ann.enter("ann")
    table = ann.create("wild-shots", 2, turn_timer=0)
    web_server.bots(table, 1, delay=0.05)
    cy = players("cy").open()
    cy.enter("cy")
    cy.page.wait_for_selector(f'tr[data-table="{table}"]')
    cy.page.click(f'tr[data-table="{table}"] [data-action="watch"]')
    cy.page.wait_for_selector(f'#table[data-table="{table}"]')
    assert cy.state()["seat"] is None and "watching" in cy.page.inner_text("#status")
    assert cy.page.locator(".hand").count() == 0 and cy.page.locator(".actions").count() == 0
    assert "hand" not in cy.state()["view"]
    # ann plays her first card when it is her turn; the spectator sees the same seq
    ann.page.wait_for_function("() => { const at = window.wildtable.at; return at.view.turn === at.seat; }",
                               timeout=10_000)
    ann.click_and_wait('.hand [data-playable="true"]')
    seq = ann.state()["seq"]
    cy.page.wait_for_function("s => window.wildtable.at.seq >= s", arg=seq, timeout=5_000)
    assert "ann" in cy.page.inner_text(".players")
    cy.page.click("#leave")
    cy.page.wait_for_selector("#create-btn")
    assert cy.state() is None
