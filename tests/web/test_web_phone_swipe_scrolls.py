"""A finger on a phone (issue #26; app/drag.js, docs/PLAYING.md "On a phone"): a swipe that
starts on a card scrolls the page and plays nothing, even one that ends on the trick; a press
held on the card (the card lifts: its ghost appears) and then moved onto the trick plays it.
Chromium's own touch input (CDP Input.dispatchTouchEvent: its gestures scroll the page as a
finger's do), a phone-sized screen (390 x 844), a Wild Shots table against a bot."""

from __future__ import annotations

from webkit import PHONE, SCROLL_BETWEEN

WAIT_TURN = """() => { const at = window.wildtable.at;
    return at.over === null && at.view.turn === at.seat && window.wildtable.intents.size === 0; }"""
PLAYED = """c => (window.wildtable.at.view.trick || []).some((t) => t.card === c && t.seat === window.wildtable.at.seat)
    || !(window.wildtable.at.view.hand || []).includes(c)"""


def my_turn_on_a_phone(players, web_server):
    """A page on a touch phone, at a Wild Shots table, its turn (a long turn timer: the page
    waits for nothing but the finger)."""
    p = players("ann", viewport=PHONE, has_touch=True).open()
    p.enter("ann")
    table = p.create("wild-shots", 2, turn_timer=60)
    web_server.bots(table, 1, delay=0.02)
    p.page.wait_for_function(WAIT_TURN, timeout=15_000)
    return p


def finger(p):
    cdp = p.context.new_cdp_session(p.page)

    def touch(kind: str, x: float = 0, y: float = 0) -> None:
        points = [] if kind == "touchEnd" else [{"x": x, "y": y, "id": 1}]
        cdp.send("Input.dispatchTouchEvent", {"type": kind, "touchPoints": points})
    return touch


def playable(p):
    """A card this seat may play now, its element, and the trick's (both in view)."""
    page = p.page
    card = int(page.get_attribute('.hand [data-playable="true"]', "data-card"))
    src, dst = page.locator(f'.hand [data-card="{card}"]'), page.locator('[data-drop="trick"]')
    page.evaluate(SCROLL_BETWEEN, [src.element_handle(), dst.element_handle()])
    return card, src.bounding_box(), dst.bounding_box()


def middle(box: dict) -> tuple[float, float]:
    return box["x"] + box["width"] / 2, box["y"] + box["height"] / 2


def test_a_swipe_that_starts_on_a_card_scrolls_and_plays_nothing(players, web_server):
    p = my_turn_on_a_phone(players, web_server)
    page = p.page
    card, a, b = playable(p)
    (x0, y0), (x1, y1) = middle(a), middle(b)
    # the finger goes from the card up to the trick, as a drag onto it would: the page is
    # scrolled by it, so it must have room to scroll that way
    room = page.evaluate("() => document.documentElement.scrollHeight - innerHeight - scrollY")
    assert room > 100, f"the page cannot scroll down ({room} px): the swipe would prove nothing"
    assert y0 - y1 > 100, (a, b)
    before = page.evaluate("() => ({ y: scrollY, intents: window.wildtable.nextIntent })")
    touch = finger(p)
    touch("touchStart", x0, y0)
    for i in range(1, 9):
        touch("touchMove", x0 + (x1 - x0) * i / 8, y0 + (y1 - y0) * i / 8)
    touch("touchEnd")
    page.wait_for_function("y => scrollY > y + 30", arg=before["y"], timeout=5_000)
    after = page.evaluate("""() => ({ intents: window.wildtable.nextIntent, ghosts: document.querySelectorAll('.drag-ghost, .drag-source').length,
        dragging: document.documentElement.classList.contains('dragging') })""")
    assert after == {"intents": before["intents"], "ghosts": 0, "dragging": False}, after
    st = p.state()
    assert card in st["view"]["hand"] and not any(t["seat"] == st["seat"] for t in st["view"].get("trick") or [])
    assert st["refusal"] is None


def test_a_card_held_then_dragged_by_a_finger_is_played(players, web_server):
    p = my_turn_on_a_phone(players, web_server)
    page = p.page
    card, a, b = playable(p)
    (x0, y0), (x1, y1) = middle(a), middle(b)
    touch = finger(p)
    touch("touchStart", x0, y0)
    # held still: the card lifts (its ghost under the finger), then it follows the finger
    page.wait_for_selector(".drag-ghost", timeout=5_000)
    y = page.evaluate("() => scrollY")
    for i in range(1, 7):
        touch("touchMove", x0 + (x1 - x0) * i / 6, y0 + (y1 - y0) * i / 6)
    touch("touchEnd")
    page.wait_for_function(PLAYED, arg=card, timeout=10_000)
    assert p.state()["refusal"] is None
    assert card not in p.state()["view"]["hand"]
    assert page.evaluate("() => scrollY") == y, "the page scrolled under a card being dragged"
