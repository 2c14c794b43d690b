"""The web replay viewer keeps one step request on its way at a time (web/app/replay.js):
keys pressed while an answer is awaited ask for nothing until it comes, then the last
step asked meanwhile is fetched. It used to send a request for every key press, so an
arrow key held down on a busy server filled its address's share of the replay line (4:
docs/PROTOCOL.md, the replay 503) and showed the 503. The record still moves while a
key is held: an answer overtaken by a later key of the same game is shown."""

from __future__ import annotations

import time

from webkit import open_a_finished_game


def test_keys_pressed_while_a_step_is_awaited_send_one_request_for_the_last(players, web_server):
    p, table = open_a_finished_game(players, web_server)
    page = p.page

    held = []          # the step requests the page sent, each held until the test lets it go
    page.route(f"**/replay/{table}.json?*", lambda route: held.append(route))
    for _ in range(5):
        page.keyboard.press("ArrowRight")
    page.wait_for_function("() => window.wildtable.replay.want === 5")     # every key handled
    page.evaluate("() => 0")              # (the requests sent before it have reached the route)
    assert [r.request.url.split("step=")[1].split("&")[0] for r in held] == ["1"], [r.request.url for r in held]

    held[0].continue_()                   # step 1's answer: shown, and then the last asked goes
    page.wait_for_selector('#replay[data-step="1"]')
    deadline = time.monotonic() + 20
    while len(held) < 2 and time.monotonic() < deadline:
        page.evaluate("() => 0")          # (lets the route's handler run)
    assert len(held) == 2 and "step=5" in held[1].request.url, [r.request.url for r in held]
    assert page.evaluate("() => window.wildtable.replay.want") == 5    # keys still move on from 5
    held[1].continue_()
    page.wait_for_selector('#replay[data-step="5"]')
    page.evaluate("() => 0")
    assert len(held) == 2                 # nothing else was asked
