"""Each game played to the end against a bot by dragging cards onto their targets with the
mouse (app/drag.js): a Wild Shots card onto the trick; a Go Wild! card onto the trick (with
the cards selected); a Go Fish Wildcard card onto a player (an ask for its rank); in Run
Wild a card onto "new meld" (with the cards selected), onto a meld (an add), onto a meld's
wild (a swap), a Draw-3 onto the table, and a meld's card onto the hand (a take). Buttons
that are no card (Ready, Draw, Stuck, End turn) are clicked. The clicking games are
test_web_turn_based_games_played_to_the_end.py and test_web_run_wild_played_to_the_end.py."""

from __future__ import annotations

import time

import pytest

from wildtable.headless.games.run_wild import find_melds

from webkit import DESKTOP, FIRST_DRAW3, fits, swaps_for

WAIT_TURN = """() => { const at = window.wildtable.at;
    return at.over !== null || (at.view.turn === at.seat && window.wildtable.intents.size === 0); }"""

SETTLED = "() => document.getAnimations().length === 0"
NEXT_FRAMES = "() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))"


def wild_shots_move(p, counts) -> None:
    c = p.page.get_attribute('.hand [data-playable="true"]', "data-card")
    counts["drag"] += p.drag(f'.hand [data-card="{c}"]', '[data-drop="trick"]')


def go_wild_move(p, counts) -> None:
    hand = p.state()["view"]["hand"]
    groups = [[c for c in hand if min(c // 18, 5) == k] for k in range(6)]
    best = max(range(5), key=lambda k: len(groups[k]))
    k = best if groups[best] else 5
    cards = sorted(groups[k])
    for c in cards[:-1]:                   # the others selected, the last one dragged in
        p.page.click(f'.hand [data-card="{c}"]')
    counts["drag"] += p.drag(f'.hand [data-card="{cards[-1]}"]', '[data-drop="trick"]')


def go_fish_move(p, counts) -> None:
    view = p.state()["view"]
    if view["step"] == "bonus":
        p.click_and_wait('[data-action="end_turn"]')
        return
    c = min(view["hand"])
    counts["drag"] += p.drag(f'.hand [data-card="{c}"]', '.players [data-drop="seat"]')


TURN_BASED = {
    "go-wild": (go_wild_move, {"target": 4}),
    # one round (setting rounds): ten drags, then the end; four rounds took 40 and 30 s
    # of a suite run, and the rounds after the first are dragged the same way
    "wild-shots": (wild_shots_move, {"rounds": 1}),
    "go-fish-wildcard": (go_fish_move, {}),
}

# A game that never ends fails after this many of ann's moves, each of which must move
# the table on (its seq) within 10 s: a bound on progress, not on the wall clock (a whole
# game took 2-20 s idle, and over 45 s at load 15-22). Games here took 3-4 (Go Wild!),
# 20-22 (Go Fish Wildcard) and 10 (Wild Shots, one round) moves.
MOST_MOVES = 200


@pytest.mark.parametrize("game", sorted(TURN_BASED))
def test_a_turn_based_game_played_by_dragging(players, web_server, game):
    move, settings = TURN_BASED[game]
    p = players(game, viewport=DESKTOP).open()
    p.enter("ann")
    table = p.create(game, 2, turn_timer=30, **settings)
    web_server.bots(table, 1, delay=0.02)
    page = p.page
    counts = {"drag": 0}
    played = 0
    while True:
        page.wait_for_function(WAIT_TURN, timeout=15_000)
        # cards slide to their new places in the frame after an update (app/motion.js: a
        # trick that grew moved the hand down), and a press lands on where a card is drawn:
        # the drag measures and presses once that frame is past and nothing moves
        page.evaluate(NEXT_FRAMES)
        page.wait_for_function(SETTLED, timeout=5_000)
        st = p.state()
        if st["over"] is not None:
            break
        assert played < MOST_MOVES, f"{game} did not end after {played} moves: {counts}"
        seq = st["seq"]
        before, bonus = counts["drag"], st["view"].get("step") == "bonus"
        move(p, counts)
        assert counts["drag"] == before + 1 or bonus, f"the drag could not be made: {counts}"
        r = p.state()["refusal"]
        assert r is None, r
        page.wait_for_function(f"() => window.wildtable.at.seq > {seq} || window.wildtable.at.over !== null", timeout=10_000)
        played += 1
    page.wait_for_selector("#over")
    assert p.state()["view"]["winners"]
    assert counts["drag"] > 0, counts
    # nothing left of a drag on the page: no ghost, no dimmed source
    assert page.locator(".drag-ghost, .drag-source, .drop-over").count() == 0


def run_wild_move(p, counts) -> None:
    """Look at the table and drag one card (or click a button that is no card)."""
    page = p.page
    page.keyboard.press("Escape")
    st = p.state()
    view = st["view"]
    if view.get("phase") == "ready":
        counts["ready"] += p.try_click('[data-action="ready"]', then_wait=True)
        return
    if view.get("phase") != "playing":
        return
    me = next(x for x in view["players"] if x["seat"] == st["seat"])
    melds = view.get("melds") or []
    small = [m for m in melds if len(m["cards"]) == 3]
    if small and not counts["take"]:
        # a meld's card dragged onto the hand is a take; from a 3-card meld the server
        # refuses it (it would break the meld), which shows that the take was sent
        m = small[0]
        if p.drag(f'[data-meld="{m["id"]}"] [data-card="{m["cards"][0]}"]', '.hand'):
            text = page.inner_text("#refusal")
            if "would_break_meld" in text:
                assert text.startswith("take ") and f"from m{m['id']}" in text, text
                counts["take"] += 1
        return
    hand = sorted(view.get("hand") or [])
    draw3 = [c for c in hand if c >= FIRST_DRAW3]
    found = find_melds([c for c in hand if c < FIRST_DRAW3], view["settings"])
    # a meld that leaves a card in the hand where there is one: a first meld of the whole
    # hand (a run of the 4 dealt) is "out!", which ended the game after one drag
    found = [f for f in found if len(f[0]) < len(hand)] or found
    if found:
        cards = found[0][0]
        if len(cards) == len(hand) > 3:
            # still the whole hand: a set of four numbers (find_melds lists a run's shorter
            # runs, not a set's smaller sets); three of it are a set too
            cards = cards[:3]
        for c in cards[:-1]:
            if not p.try_click(f'.hand [data-card="{c}"]'):
                return
        counts["meld"] += p.drag(f'.hand [data-card="{cards[-1]}"]', '[data-drop="new-meld"]')
        return
    for m in melds:
        for c in hand:
            wild = swaps_for(c, m)
            if wild is not None:
                counts["swap"] += p.drag(f'.hand [data-card="{c}"]', f'[data-meld="{m["id"]}"] [data-card="{wild}"]')
                return
    for m in melds:
        for c in hand:
            if fits(c, m):
                counts["add"] += p.drag(f'.hand [data-card="{c}"]', f'[data-meld="{m["id"]}"] .meld-name')
                return
    if draw3:
        counts["draw3"] += p.drag(f'.hand [data-card="{draw3[0]}"]', '[data-drop="new-meld"]')
    elif view.get("pile"):
        counts["draw"] += p.try_click('[data-action="draw"]', then_wait=True)
    elif not me["stuck"]:
        counts["stuck"] += p.try_click('[data-action="stuck"]', then_wait=True)
    else:
        page.wait_for_function(f"() => window.wildtable.at.seq > {st['seq']}", timeout=10_000)


def test_run_wild_played_by_dragging(players, web_server):
    p = players("ann", viewport=DESKTOP).open()
    p.enter("ann")
    table = p.create("run-wild", 2, rounds=1, hand_size=4, idle_timeout=5)
    # an opponent that never ends the round: against a bot (0.05 s a move) the round could
    # end before the page's second drag on a loaded machine (one meld, then the bot was out)
    web_server.passive(table, 1)
    page = p.page
    page.wait_for_function("() => window.wildtable.at.view.phase === 'ready'", timeout=10_000)
    counts = {k: 0 for k in ("ready", "meld", "add", "swap", "draw3", "draw", "stuck", "take")}
    # a bound on progress, not on the whole game (over 45 s at load 15-22): the table's seq
    # must move at least every 30 s (a move, a draw, the idle timer's play)
    seq, moved = -1, time.monotonic()
    while (st := p.state())["over"] is None:
        if st["seq"] != seq:
            seq, moved = st["seq"], time.monotonic()
        assert time.monotonic() - moved < 30, f"the game stood still at seq {seq} for 30 s; {counts}, state {st}"
        run_wild_move(p, counts)
    page.wait_for_selector("#over")
    assert p.state()["view"]["winners"]
    # cards went by dragging: melds made, and at least one other drag that the server took
    assert counts["meld"] >= 1, counts
    assert counts["meld"] + counts["add"] + counts["swap"] + counts["draw3"] + counts["take"] >= 2, counts
    assert page.locator(".drag-ghost, .drag-source, .drop-over").count() == 0
    print("drags:", counts)


# A finger drags after a press and hold (a swipe scrolls): test_web_phone_swipe_scrolls.py
