"""The table is usable by keyboard alone and fits a phone-sized screen: Tab reaches the
cards, Enter or Space selects one, and the game's keys act (Run Wild: r ready, d draw,
Esc clears the selection); nothing is wider than the screen."""

from __future__ import annotations

from webkit import PHONE

NO_OVERFLOW = "() => document.scrollingElement.scrollWidth <= window.innerWidth"


def test_run_wild_by_keyboard_on_a_phone_screen(players, web_server):
    p = players("ann", viewport=PHONE).open()
    p.enter("ann")
    assert p.page.evaluate(NO_OVERFLOW), "the lobby is wider than a phone's screen"
    table = p.create("run-wild", 2, rounds=1, idle_timeout=120)
    web_server.bots(table, 1, delay=0.5)
    page = p.page
    page.wait_for_selector('[data-action="ready"]', timeout=10_000)
    page.locator("#leave").focus()          # focus on the page, not in a field
    page.keyboard.press("r")
    page.wait_for_function("() => window.wildtable.at.view.phase === 'playing'", timeout=10_000)
    assert page.evaluate(NO_OVERFLOW), "the table is wider than a phone's screen"

    # Tab from the leave button reaches the hand's cards; Space selects, Enter unselects
    first = page.locator(".hand [data-card]").first
    card = first.get_attribute("data-card")
    for _ in range(40):
        page.keyboard.press("Tab")
        if page.evaluate("() => document.activeElement.closest('.hand') !== null"):
            break
    else:
        raise AssertionError("Tab never reached the hand")
    focused = page.evaluate("() => document.activeElement.dataset.card")
    page.keyboard.press("Space")
    page.wait_for_selector(f'.hand [data-card="{focused}"][aria-pressed="true"]')
    # the focus stays on the card across the redraw, so Enter presses the same card again
    assert page.evaluate("() => document.activeElement.dataset.card") == focused
    page.keyboard.press("Enter")
    page.wait_for_selector(f'.hand [data-card="{focused}"][aria-pressed="false"]')
    page.keyboard.press("Space")
    page.keyboard.press("Escape")
    page.wait_for_selector('.hand [aria-pressed="true"]', state="detached")
    assert card is not None

    # d draws a card
    hand = len(p.state()["view"]["hand"])
    page.keyboard.press("d")
    page.wait_for_function("n => window.wildtable.at.view.hand.length > n || window.wildtable.at.view.phase !== 'playing'",
                           arg=hand, timeout=5_000)
    assert p.state()["refusal"] is None
