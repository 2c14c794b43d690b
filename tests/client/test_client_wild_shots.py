"""The Wild Shots client module without a network: typed commands -> action maps,
completion, the table as text and in colour, event lines, the replay viewer's
all-seeing text, and the bot, played against the real engine."""

from __future__ import annotations

import random
import re

import pytest

from wildtable.headless.games import CommandError, Ctx, ctx_from, has_bot, plugin_for
from wildtable.headless.games import wild_shots as P
from wildtable.client.screens import wild_shots as P_screen
from wildtable.protocol.engine import ChanceOutcome, TableConfig
from wildtable.protocol.errors import IllegalAction
from wildtable.protocol.games import wild_shots as E
from wildtable.protocol.games import wild_shots_data as data

C = E.LABEL_TO_ID          # "red 4" -> card id
CTX3 = Ctx(("ann", "bob", "cy"), 0)


def deal(seats: int, hands: list[list[str]], trumps: list[str], *, starter: int = 0,
         settings: dict | None = None) -> E.State:
    """A table whose seats hold the named cards (completed with other cards; a seat is
    never given a suit it did not name, as far as the deck allows), the first trump shown."""
    s = E.new_table(TableConfig(E.NAME, seats, {"first_player": starter, **(settings or {})}))
    full = [[C[x] for x in h] for h in hands]
    pool = [c for c in range(40) if all(c not in h for h in full)]
    for h in full:
        named = {E.SUIT[c] for c in h}
        while len(h) < 10:
            c = next((c for c in pool if E.SUIT[c] in named), pool[0])
            pool.remove(c)
            h.append(c)
    order = []
    for t in trumps:
        order.append(next(i for i in range(14) if s.rules.oil[i] == data.SYMBOLS.index(t) and i not in order))
    order += [i for i in range(14) if i not in order]
    s, _ = E.apply(s, None, ChanceOutcome("deal", tuple(c for h in full for c in h) + tuple(pool)))
    s, _ = E.apply(s, None, ChanceOutcome("snake_oil", tuple(order)))
    return s


def play(s: E.State, *labels: str) -> tuple[E.State, list]:
    events = []
    for label in labels:
        s, ev = E.apply(s, s.turn, E.Play(C[label]))
        events += ev
    return s, events


def act(s: E.State, seat: int, text: str) -> tuple[E.State, list]:
    """Type a command as ``seat`` and apply what it parses to."""
    action = P.parse(text.split(), E.view(s, seat))
    return E.apply(s, seat, E.ACTIONS.decode(action, "$.action"))


# ------------------------------------------------------------------ commands

def test_cards_are_typed_by_suit_letter_and_value_or_in_words():
    s = deal(3, [["red 3", "red 8", "black 7", "black 10", "green 1"], [], []], ["star"])
    v = E.view(s, 0)
    for text, label in [("play R3", "red 3"), ("p r3", "red 3"), ("play K10", "black 10"), ("play red 8", "red 8"),
                        ("play black7", "black 7"), ("lead the G1", "green 1"), ("play 8", "red 8"),
                        ("play 10", "black 10")]:
        assert P.parse(text.split(), v) == {"kind": "play", "card": C[label]}, text
    assert P.label_action({"kind": "play", "card": C["green 10"]}) == "play G10"
    for c in range(40):    # what the viewer and the bots print is what a player types
        assert P.parse(P.label_action({"kind": "play", "card": c}).split(), {}) == {"kind": "play", "card": c}


def test_command_refusals_are_sentences():
    s = deal(3, [["red 3", "green 3", "black 7"], [], []], ["star"])
    v = E.view(s, 0)
    hand = set(v["hand"])
    missing = next(P.handle(c) for c in range(40) if c not in hand)
    for text, why in [("play", "which card"), ("play X9", "not a card"), ("play R11", "1 to 10"),
                      ("play 0", "1 to 10"), ("play R3 G3", "one card"), (f"play {missing}", "do not hold"),
                      ("play 3", "which 3\\? you hold (K3 and )?R3 and G3")]:
        with pytest.raises(CommandError, match=why):
            P.parse(text.split(), v)
    if not any(E.VALUE[c] == 2 for c in hand):
        with pytest.raises(CommandError, match="no 2"):
            P.parse(["play", "2"], v)


def test_a_bare_value_means_the_one_you_may_play():
    # green led: seat 1 holds the green 3 and the red 3; "play 3" is the green one.
    s = deal(3, [["green 5"], ["green 3", "red 3"], []], ["hat"])
    s, _ = play(s, "green 5")
    assert P.parse(["play", "3"], E.view(s, 1)) == {"kind": "play", "card": C["green 3"]}


def test_parsed_commands_are_what_the_engine_takes_and_refusals_keep_their_reason():
    # The rulebook's star example, typed: A red 8, B red 3 (star), C red 9, D red 2.
    s = deal(4, [["red 8"], ["red 3", "black 7"], ["red 9"], ["red 2"]], ["star", "hat"])
    s, _ = act(s, 0, "play R8")
    with pytest.raises(IllegalAction) as e:
        act(s, 1, "play K7")
    assert e.value.code == "must_follow_suit" and "red" in e.value.reason
    for seat, text in [(1, "play red 3"), (2, "p R9"), (3, "play R2")]:
        s, ev = act(s, seat, text)
    won = next(x for x in ev if x["event"] == "trick_won")
    assert won["seat"] == 1
    assert P.describe(won, Ctx(("A", "B", "C", "D"), 0)) == \
        "B wins trick 1 with R3 star (trump star): you R8, B R3, C R9, D R2"


def test_completion_offers_the_playable_cards_first():
    s = deal(3, [["green 5"], ["green 3", "green 9", "red 3", "black 1"], []], ["hat"])
    assert P.complete(["play", ""], E.view(s, 1)) == P.hand_labels(E.view(s, 1)["hand"])   # not its turn
    s, _ = play(s, "green 5")
    v = E.view(s, 1)
    greens = [P.handle(c) for c in sorted(v["hand"]) if E.SUIT[c] == 2]
    assert P.complete(["play", ""], v) == greens and "G3" in greens and "R3" not in greens
    assert P.complete(["p", "G"], v) == greens
    assert P.complete(["play", "G3", ""], v) == []


# ------------------------------------------------------------------ the table

def test_table_text_names_trump_trick_hand_symbols_tricks_and_penalties():
    s = deal(3, [["red 8", "red 1"], ["red 3", "red 2"], ["red 9", "red 7"]], ["star", "hat"])
    s, _ = play(s, "red 8", "red 3", "red 9")               # B's star wins; B leads trick 2
    s, _ = play(s, "red 2")
    v = E.view(s, 2)
    lines = P.render_text(v, Ctx(("ann", "bob", "cy"), 2))
    text = "\n".join(lines)
    assert lines[0] == "Wild Shots - round 1 of 4 (hits: revolver 2) - trick 2 of 10 - trump: hat - your turn"
    assert "  bob: hand 8, tricks 1, penalties 0 - leads" in lines
    assert "  cy (you): hand 9, tricks 0, penalties 0 - to play" in lines
    assert "trick 2 (red led): bob R2" in lines
    assert "last trick (trump star): ann R8 hat, bob R3 star, you R9 revolver - won by bob" in lines
    assert "your tricks (0): none - hits so far 0" in lines
    hand = next(x for x in lines if x.startswith("your hand (9): "))
    assert "R7" in hand and all(f"{P.handle(c)} {v['symbols'][c]}" in hand for c in v["hand"] if v["symbols"][c])
    assert lines[-1] == "you may play: " + " ".join(P.hand_labels(v["playable"]))
    # bob sees his own trick and its hits; a spectator sees no hand and no own tricks
    bob = P.render_text(E.view(s, 1), Ctx(("ann", "bob", "cy"), 1))
    assert "your tricks (1): R8 hat, R3 star, R9 revolver - hits so far 2" in bob
    spec = "\n".join(P.render_text(E.view(s, None), Ctx(("ann", "bob", "cy"), None)))
    assert "your hand" not in spec and "your tricks" not in spec and "trump: hat" in spec
    assert "R9 revolver" in text


def test_a_replaced_symbol_table_is_the_one_shown():
    symbols = {label: "none" for label in E.LABELS} | {"red 1": "poster"}
    s = deal(2, [["red 1", "red 8"], []], ["poster"], settings={"symbols": symbols,
                                                                "snake_oil": {"poster": 14}})
    lines = P.render_text(E.view(s, 0), Ctx(("ann", "bob"), 0))
    hand = next(x for x in lines if x.startswith("your hand"))
    assert "R1 poster" in hand and "R8," in hand + "," and "R8 hat" not in hand
    s, ev = play(s, "red 1")
    assert P.describe(ev[0], Ctx(("ann", "bob"), 1)) == "ann played R1 poster; your turn"


def test_rich_table_keeps_every_fact_in_words_and_marks_cards():
    s = deal(3, [["red 8", "red 1"], ["red 3", "red 2"], ["red 9", "red 7"]], ["star", "hat"])
    s, _ = play(s, "red 8", "red 3", "red 9", "red 2")
    v = E.view(s, 2)
    sec = P_screen.render_rich(v, ctx_from([{"seat": 0, "name": "ann", "connected": True},
                                     {"seat": 1, "name": "bob", "connected": False},
                                     {"seat": 2, "name": "cy", "connected": True}], 2))
    top, mid, bottom = sec.top.plain, sec.middle.plain, sec.bottom.plain
    assert "YOUR TURN" in top and "> cy" in top and "offline" in top and "TO PLAY" in top
    assert "TRUMP:  HAT (h)" in mid and "Trick 2 of 10: (red led)  bob R2" in mid
    assert "Last trick: ann R8:h  bob R3:s  you R9:r  won by bob (trump star)" in " ".join(mid.split("\n"))
    assert "Your hand (9) - your turn" in bottom
    for c in v["hand"]:
        mark = P.MARKS.get(v["symbols"][c])
        assert (P.handle(c) + (":" + mark if mark else "")) in bottom.split()
    spans = {sec.bottom.plain[x.start:x.end].split(":")[0]: x.style for x in sec.bottom.spans}
    red7 = spans["R7"]
    assert "red" in str(red7) and "insert_handle('R7')" in str(red7.meta) and not red7.dim
    off_suit = next(c for c in v["hand"] if E.SUIT[c] != 1)
    assert spans[P.handle(off_suit)].dim                     # not playable now: dimmed
    hat = next((c for c in v["hand"] if v["symbols"][c] == "hat"), None)
    if hat is not None:
        assert spans[P.handle(hat)].reverse                  # bears the trump symbol


def test_events_read_as_sentences_and_the_trump_flashes():
    ctx = CTX3
    assert P.describe({"event": "starter_chosen", "seat": 1}, ctx) == "bob starts the first round (drawn by chance)"
    assert P.describe({"event": "cards_dealt", "round": 2, "hand_sizes": [10] * 3, "set_aside": 10}, ctx) == \
        "round 2: 10 cards dealt to each, 10 set aside unseen"
    assert P.describe({"event": "snake_oil_revealed", "seat": 0, "trick": 3, "symbol": "poster"}, ctx) == \
        "trick 3: you reveal poster: poster is trump; you lead"
    assert P.describe({"event": "card_played", "seat": 2, "card": C["red 3"], "symbol": "star", "next": 0}, ctx) == \
        "cy played R3 star; your turn"
    assert P.describe({"event": "card_played", "seat": 0, "card": C["red 2"], "symbol": None, "next": None}, ctx) == \
        "you played R2"
    assert P.describe({"event": "round_scored", "round": 3, "hits": {"star": 4, "poster": 5}, "penalties": [0, 9, 4],
                       "totals": [10, 9, 30], "won": [[], [], []]}, ctx) == \
        "round 3 scored (hits: star 4, poster 5): penalties ann 0, bob 9, cy 4; totals ann 10, bob 9, cy 30"
    assert P.describe({"event": "game_over", "totals": [10, 9, 30], "winners": [1]}, ctx) == \
        "game over: bob wins with 9 penalty points"
    assert P.flash({"event": "snake_oil_revealed", "seat": 0, "trick": 3, "symbol": "poster"}, ctx) == "Trump: POSTER"
    assert P.flash({"event": "card_played", "seat": 0, "card": 1}, ctx) is None


def _game(seed: int, seats: int, bots: set[int], settings: dict | None = None, on_view=None):
    """A whole game against the engine: bot seats choose from their own view, the others
    play a random legal card. Returns the final state and every event."""
    rng = random.Random(seed)
    s = E.new_table(TableConfig(E.NAME, seats, settings or {}))
    events = []
    while not E.outcome(s).over:
        req = E.pending_chance(s)
        if req is not None:
            perm = list(range(req.size))
            rng.shuffle(perm)
            s, ev = E.apply(s, None, ChanceOutcome(req.purpose, tuple(perm)))
        else:
            seat = s.turn
            v = E.view(s, seat)
            for other in range(seats):
                if other != seat:
                    assert P.choose(E.view(s, other)) is None           # only the seat to move acts
            if on_view is not None:
                on_view(s, v)
            action = P.choose(v) if seat in bots else {"kind": "play", "card": rng.choice(v["playable"])}
            s, ev = E.apply(s, seat, E.ACTIONS.decode(action, "$.action"))   # a bot's choice is always legal
        events += ev
    return s, events


def test_every_event_of_whole_games_reads_as_a_sentence_and_views_render():
    seen = set()

    def on_view(state, v):
        if random.Random(state.trick_no * 7 + len(state.trick)).random() < 0.2:
            ctx = Ctx(("ann", "bob", "cy", "dee")[:state.rules.seats], v["seat"])
            assert P.render_text(v, ctx) and P_screen.render_rich(v, ctx).bottom.plain
            assert P.render_snapshot(E.snapshot(state), ctx)

    for seats in (2, 3, 4):
        s, events = _game(seats, seats, set(range(seats)), on_view=on_view)
        ctx = Ctx(("ann", "bob", "cy", "dee")[:seats], 0)
        for e in events:
            line = P.describe(e, ctx)
            assert line and "{" not in line, e                  # never the generic JSON fallback
            seen.add(e["event"])
        snap = P.render_snapshot(E.snapshot(s), ctx)
        assert snap[-1].startswith("winner")
        # the viewer's per-seat hits of the last round agree with the engine's scores
        hits = [int(m.group(1)) for x in snap if (m := re.search(r"tricks won in round 4 .* - hits (\d+)$", x))]
        assert hits == list(s.tally.penalties[-1])
    assert seen == {"starter_chosen", "cards_dealt", "snake_oil_shuffled", "snake_oil_revealed", "card_played",
                    "trick_won", "round_scored", "game_over"}


# ------------------------------------------------------------------ the bot

def test_bot_ducks_under_a_trick_with_penalty_cards():
    # Round 1 (revolver 2 a hit), trump star: bob leads the red 6 (revolver). ann holds the
    # red 2 and the red 8 (no star): the 8 would win the revolver, the 2 ducks.
    s = deal(2, [["red 2", "red 8", "green 3"], ["red 6"]], ["star"], starter=1)
    assert E.view(s, 1)["symbols"][C["red 6"]] == "revolver"
    s, _ = play(s, "red 6")
    ranked = [a["card"] for a in P.candidates(E.view(s, 0))]
    assert sorted(ranked) == sorted(E.view(s, 0)["playable"])
    # every card that loses to the red 6 (lower, no star) comes before every card that would win
    stars = E.view(s, 0)["symbols"]
    losing = [c for c in ranked if E.VALUE[c] < 6 and stars[c] != "star"]
    assert C["red 2"] in losing and ranked[:len(losing)] == losing
    s, ev = E.apply(s, 0, E.Play(ranked[0]))
    assert next(e for e in ev if e["event"] == "trick_won")["seat"] == 1


def test_bot_dumps_a_penalty_card_when_void_in_the_led_suit():
    # ann holds no red: the black 10 (revolver, not trump) cannot win and costs 2 to whoever takes it.
    s = deal(2, [["black 10", "green 5", "blue 3", "black 2"], ["red 5"]], ["star"], starter=1)
    assert all(E.SUIT[c] != 1 for c in s.hands[0])
    s, _ = play(s, "red 5")
    assert P.choose(E.view(s, 0)) == {"kind": "play", "card": C["black 10"]}


def test_bot_wins_a_clean_trick_with_its_highest_card_and_leads_low():
    # Last to play, the trick holds no hit: win it with the high card, keeping the low one.
    s = deal(2, [["red 10", "red 2", "blue 3", "blue 10"], ["red 5"]], ["poster"], starter=1)
    s, _ = play(s, "red 5")
    assert P.choose(E.view(s, 0)) == {"kind": "play", "card": C["red 10"]}
    # Leading: never the black 10, the top black card and a hit (revolver) that would likely win.
    s = deal(2, [["green 1", "green 10", "black 10", "red 6"], []], ["hat"])
    ranked = [a["card"] for a in P.candidates(E.view(s, 0))]
    assert ranked[-1] == C["black 10"] and E.VALUE[ranked[0]] <= 5


def test_bots_play_legal_cards_and_take_far_fewer_penalties_than_random_players():
    bot = rnd = 0
    for seed in range(12):
        seats = 2 + seed % 3
        s, _ = _game(seed, seats, {seed % seats})
        scores = E.outcome(s).scores
        bot += scores[seed % seats]
        rnd += (sum(scores) - scores[seed % seats]) / (seats - 1)
    assert bot < 0.7 * rnd, (bot, rnd)


def test_the_plugin_is_registered():
    assert plugin_for("wild-shots") is P and has_bot("wild-shots")
    assert P.choose({"phase": "playing", "seat": None, "turn": 0}) is None


# ------------------------------------------------------------------ the full-screen table, headless

def test_full_screen_table_with_bots_tab_completes_and_plays_a_card():
    """`wildtable play --game wild-shots --bots 2` in Textual's headless run (80x24): a
    private server and two bots in this process; the trump, the trick and the hand show;
    Tab types a card you may play; the play is accepted; the trump flashes."""
    import asyncio

    from textual.widgets import Input

    from wildtable.client.session import Launch
    from wildtable.client.tui import PlayApp

    from uikit import text_of as text, until

    async def scenario():
        app = PlayApp(Launch(name="ann", game="wild-shots", bots=2, bot_delay=0.05))
        async with app.run_test(size=(80, 24)) as pilot:
            def view():
                return app.core.mirror.view if app.core is not None else {}
            await until(pilot, "ann's turn", lambda: view().get("phase") == "playing" and view().get("turn") == 0
                        and "YOUR TURN" in text(app, "#board-top"))
            top, mid, bottom = text(app, "#board-top"), text(app, "#melds"), text(app, "#board-bottom")
            assert "> ann" in top and "bot1" in top and "bot2" in top
            assert f"TRUMP:  {view()['trump'].upper()}" in mid and "Your hand (" in bottom
            playable = P.hand_labels(view()["playable"])
            await pilot.press(*"play ", "tab")
            assert app.query_one("#cmd", Input).value.strip() == "play " + playable[0]
            before = len(view()["hand"])
            await pilot.press("enter")
            await until(pilot, "the play accepted", lambda: text(app, "#result") == f"ok: play {playable[0]}")
            await until(pilot, "the hand one card shorter", lambda: len(view().get("hand", ())) == before - 1)
            assert any(f.startswith("Trump: ") for f in app.flashes)
            await pilot.press("ctrl+q")
            await pilot.pause()
        assert app._done.done()

    asyncio.run(scenario())
