"""A Run Wild game against a bot, played to the end by clicking in one browser page: Ready,
cards of the hand and Meld, a hand card and a meld's add button (or the meld's wild it
stands for: a swap), a meld's card alone (a take), Draw, Draw-3, Stuck;
each refusal shows next to what was tried. Small settings (two rounds, a hand of four)
make it end fast."""

from __future__ import annotations

import time

from wildtable.headless.games.run_wild import find_melds

from webkit import DESKTOP, FIRST_DRAW3, FIRST_WILD, fits, swaps_for


def play_one(p, counts: dict) -> None:
    """Look at the table and click one thing, as a player would."""
    page = p.page
    page.keyboard.press("Escape")          # the keyboard clears a selection left by a refusal
    st = p.state()
    view = st["view"]
    if view.get("phase") == "ready":
        if p.try_click('[data-action="ready"]', then_wait=True):
            counts["ready"] += 1
        return
    if view.get("phase") != "playing":
        return
    me = next(x for x in view["players"] if x["seat"] == st["seat"])
    small = [m for m in view.get("melds") or [] if len(m["cards"]) == 3]
    if small and not counts["refused_take"]:
        # a take from a 3-card meld breaks it: the server refuses, and the page says so
        # beside what was tried
        m = small[0]
        if not p.try_click(f'[data-meld="{m["id"]}"] [data-card="{m["cards"][0]}"]', then_wait=True):
            return
        text = page.inner_text("#refusal")
        if "would_break_meld" in text:
            counts["refused_take"] += 1
            assert text.startswith(f"take {'W' if m['cards'][0] >= FIRST_WILD else ''}") and f"from m{m['id']}" in text, text
        # else the table changed first (a card added, the round over): try again later
        return
    hand = sorted(view.get("hand") or [])
    draw3 = [c for c in hand if c >= FIRST_DRAW3]
    melds = find_melds([c for c in hand if c < FIRST_DRAW3], view["settings"])
    if melds:
        cards, _ = melds[0]
        page.keyboard.press("Escape")       # nothing selected from a step the table cut short
        for c in cards:
            if not p.try_click(f'.hand [data-card="{c}"]'):
                return
        if p.state()["seq"] != st["seq"]:
            return          # the table changed while we clicked (the bot's move): try again
        assert page.locator(".hand .selected").count() == len(cards)
        counts["meld"] += p.try_click('[data-action="meld"]', then_wait=True)
        return
    for m in view.get("melds") or []:
        for c in hand:
            wild = swaps_for(c, m)
            if wild is not None:
                # a hand card selected, then the meld's wild it stands for: a swap
                if p.try_click(f'.hand [data-card="{c}"]'):
                    counts["swap"] += p.try_click(f'[data-meld="{m["id"]}"] [data-card="{wild}"]', then_wait=True)
                return
    for m in view.get("melds") or []:
        for c in hand:
            if fits(c, m):
                if p.try_click(f'.hand [data-card="{c}"]'):
                    counts["add"] += p.try_click(f'[data-add="{m["id"]}"]', then_wait=True)
                return
    if draw3:
        counts["draw3"] += p.try_click('[data-action="draw3"]', then_wait=True)
    elif view.get("pile"):
        counts["draw"] += p.try_click('[data-action="draw"]', then_wait=True)
    elif not me["stuck"]:
        counts["stuck"] += p.try_click('[data-action="stuck"]', then_wait=True)
    else:
        time.sleep(0.05)


def test_a_run_wild_game_against_a_bot_played_by_clicking(players, web_server):
    p = players("ann", viewport=DESKTOP).open()
    p.enter("ann")
    table = p.create("run-wild", 2, rounds=2, hand_size=4, idle_timeout=5)
    assert p.state()["seat"] == 0
    web_server.bots(table, 1)
    page = p.page
    page.wait_for_function("() => window.wildtable.at.view.phase === 'ready'", timeout=10_000)
    counts = {k: 0 for k in ("ready", "meld", "add", "swap", "draw3", "draw", "stuck", "refused_take")}
    end = time.monotonic() + 60
    refusals = set()
    while p.state()["over"] is None:
        assert time.monotonic() < end, f"the game did not end in time; clicks {counts}, state {p.state()}"
        play_one(p, counts)
        r = p.state()["refusal"]
        if r:
            assert page.locator("#refusal").inner_text().startswith(r["what"])
            refusals.add(r["code"])
    page.wait_for_selector("#over")
    assert "Game over" in page.inner_text("#over")
    view = p.state()["view"]
    assert view["phase"] == "over" and view["winners"]
    assert counts["ready"] >= 1 and counts["draw"] + counts["meld"] + counts["draw3"] + counts["stuck"] >= 1, counts
    # the round's scores are on the table, and the lobby is one click away
    assert page.locator("table.scores").count() == 1
    page.click("#leave")
    page.wait_for_selector("#create-btn")
    print("clicks:", counts, "refusals:", sorted(refusals))
