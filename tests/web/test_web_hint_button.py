"""The table screen's "Hint" (the protocol's hint): at your turn, the server's expert names
a card you may play, worked out from your seat's view alone; none for a spectator."""

from __future__ import annotations


def test_the_hint_names_a_card_the_player_may_play(players, web_server):
    p = players("ann").open()
    page = p.page
    p.enter("ann")
    table = p.create("wild-shots", 2, first_player=0)
    page.select_option("#bot-level", "hard")
    page.click("#seat-bots")
    page.wait_for_function("() => { const at = window.wildtable.at; return at.view.turn === at.seat; }")
    page.click("#hint")
    page.wait_for_function("() => document.querySelector('#hint-text').innerText.length > 0")
    text = page.inner_text("#hint-text")
    assert "the expert's choice, worth" in text, text
    hint = page.evaluate("() => window.wildtable.at.hint")
    assert hint["moves"][0]["action"]["card"] in page.evaluate("() => window.wildtable.at.view.playable")
    assert text.startswith(hint["moves"][0]["label"] + " - ") and hint["seq"] == p.state()["seq"]

    w = players("wes").open()
    w.enter("wes")
    w.page.click(f'[data-key="watch-{table}"]')
    w.page.wait_for_selector(f'#table[data-table="{table}"]')
    assert w.page.locator("#hint").count() == 0
