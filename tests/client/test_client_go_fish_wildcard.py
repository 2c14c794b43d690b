"""The Go Fish Wildcard client module without a network: typed commands -> action maps,
completion, the table as text and in colour, event lines, and the bot played against the
real engine; then the full-screen UI driven headless through a whole game against a bot."""

from __future__ import annotations

import asyncio
import random
from collections import Counter

import attrs
import pytest
from hypothesis import given, settings, strategies as st

from wildtable.protocol.states import evolve
from wildtable.headless.games import CommandError, Ctx, ctx_from, has_bot, plugin_for
from wildtable.headless.games import go_fish_wildcard as gf
from wildtable.client.screens import go_fish_wildcard as gf_screen
from wildtable.protocol.engine import ChanceOutcome, TableConfig
from wildtable.protocol.errors import IllegalAction
from wildtable.protocol.games import go_fish_wildcard as E


def C(label: str) -> int:
    return E.RANKS.index(label[:-1]) * 4 + E.SUITS.index(label[-1])


def Cs(labels: str) -> list[int]:
    return [C(x) for x in labels.split()]


def position(hands, pile, turn, sets=(), n=None, **extra):
    """An engine position built directly; ``sets`` are (seat, labels) on the table (their
    ranks wild). Every card not named lies under ``pile``."""
    n = n or len(hands)
    sets = tuple((seat, tuple(sorted(Cs(cards)))) for seat, cards in sets)
    wild, scores = 0, [0] * n
    for seat, cards in sets:
        scores[seat] += 1
        for c in cards:
            wild |= 1 << (c // 4)
    hands = [Cs(h) if isinstance(h, str) else list(h) for h in hands]
    pile = Cs(pile) if isinstance(pile, str) else list(pile)
    used = set(pile) | {c for h in hands for c in h} | {c for _, cs in sets for c in cs}
    pile += [c for c in range(52) if c not in used]
    return evolve(E.new_table(TableConfig(E.NAME, n, {"dealer": 0})),
        phase="play", hands=tuple(E.hand_mask(h) for h in hands), pile=tuple(pile), wild=wild, sets=sets,
        scores=tuple(scores), turn=turn, step="ask", **extra)


def run(state, seat, text):
    """Type ``text`` as ``seat``: parse it against the seat's view, apply it in the engine."""
    action = gf.parse(text.split(), E.view(state, seat))
    return E.apply(state, seat, E.ACTIONS.decode(action, "$.action"))


CTX = Ctx(("ann", "bob", "cy"), 0)


# ------------------------------------------------------------------ commands

def test_ask_reads_players_and_ranks_in_many_ways():
    v = E.view(position(["7C 7D JH 10S", "2C", "3C"], "", turn=0), 0)
    want = {"kind": "ask", "target": 2, "rank": "7"}
    for text in ("ask p2 7", "ask p2 for 7s", "ask 2 7", "a P2 sevens", "ask seat 2 for 7", "ask for 7s from p2",
                 "ask 7 p2", "ask p2 7H"):
        assert gf.parse(text.split(), v) == want, text
    assert gf.parse("ask p1 jacks".split(), v) == {"kind": "ask", "target": 1, "rank": "J"}
    assert gf.parse("ask p1 10s".split(), v)["rank"] == "10"
    assert gf.parse("ask p1 T".split(), v)["rank"] == "10"
    # with one other player the target may be left out
    v2 = E.view(position(["7C KD", "2C"], "", turn=0), 0)
    assert gf.parse("ask for kings".split(), v2) == {"kind": "ask", "target": 1, "rank": "K"}


def test_ask_refusals_are_sentences():
    v = E.view(position(["7C 7D JH", "2C", "3C"], "", turn=0), 0)
    for text, why in [("ask", "whom for what"), ("ask 7", "ask whom"), ("ask p0 7", "not yourself"),
                      ("ask p5 7", "no player p5"), ("ask p1 kings", "you hold no K"),
                      ("ask p1 fish", "'fish' is not a rank"), ("ask bob 7", "no player 'bob' or '7'"),
                      ("ask p1 7 J", "one player for one rank")]:
        with pytest.raises(CommandError, match=why):
            gf.parse(text.split(), v)


def test_place_names_cards_ranks_and_wilds():
    s = position(["KC KD JS JH 2C 10D", "3C"], "", turn=0, sets=[(1, "JC 4C 4D")])
    v = E.view(s, 0)
    assert gf.parse("place KC KD JS".split(), v) == {"kind": "place", "cards": Cs("KC KD JS")}
    assert gf.parse("place kc kd js*".split(), v)["cards"] == Cs("KC KD JS")
    assert gf.parse("place K K W".split(), v)["cards"] == Cs("KC KD JH")       # W: the lowest wild
    assert gf.parse("p K K J".split(), v)["cards"] == Cs("KC KD JH")
    assert gf.parse("place 2 W W".split(), v)["cards"] == Cs("2C JH JS")
    assert gf.parse("set 10 J #48".split(), v)["cards"] == [C("10D"), C("JH"), C("KC")]   # #48: a card id
    # an exact card is never taken by a bare rank named before it
    assert gf.parse("place J JH K".split(), v)["cards"] == Cs("JS JH KC")
    # place alone: a set for you (no wilds first, then fewest wilds)
    assert gf.parse(["place"], v)["cards"] == sorted(Cs("KC KD JH"))
    for text, why in [("place K K", "exactly three"), ("place K K K", "no more K"), ("place QC K W", "do not hold QC"),
                      ("place KC KC W", "named twice"), ("place X K W", "'X' is not a card"),
                      ("place 2 W W W", "exactly three")]:
        with pytest.raises(CommandError, match=why):
            gf.parse(text.split(), v)
    with pytest.raises(CommandError, match="cannot make a set"):
        gf.parse(["place"], E.view(position(["KC 2C", "3C"], "", turn=0), 0))
    assert gf.parse(["end"], v) == gf.parse(["pass"], v) == {"kind": "end_turn"}
    with pytest.raises(CommandError, match="nothing after"):
        gf.parse("end now".split(), v)


def test_the_issues_scenarios_typed_as_commands():
    """Jacks set (typed, earning another ask), then K-K-J forced with no extra ask."""
    s = E.apply(E.new_table(TableConfig(E.NAME, 2, {"dealer": 0})), None, ChanceOutcome("deal", _deal(
        [Cs("JH KD 5C 9C"), Cs("JC JD JS KC")], Cs("4H 6H"))))[0]
    s, ev = run(s, 1, "ask p0 for jacks")
    assert s.step == "bonus"
    assert gf.render_text(E.view(s, 1), Ctx(("ann", "bob"), 1))[-1] == "place JC JD JH to ask again, or end"
    s, ev = run(s, 1, "place")                          # place alone: the set that earns the ask
    assert [e["event"] for e in ev] == ["set_placed", "extra_ask_earned"]
    s, ev = run(s, 1, "ask 0 K")
    lines = [gf.describe(e, Ctx(("ann", "bob"), 0)) for e in ev]
    assert "bob asked you for kings: you handed over 1" in lines
    assert "bob had to place a set: KC KD JS (kings with 1 wild); kings are now wild" in lines
    assert "extra_ask_earned" not in [e["event"] for e in ev] and s.turn == 0
    # a natural 7-7-7 after a successful ask: typed "place 7 7 7" earns another ask
    s = position(["7C 7D 2C 3C", "7H 4C 9D"], "QH QS", turn=0, n=2)
    s, _ = run(s, 0, "ask p1 7")
    s, ev = run(s, 0, "place 7 7 7")
    assert ev[-1]["event"] == "extra_ask_earned" and s.step == "again"
    s, ev = run(s, 0, "end")
    assert s.turn == 1


def _deal(hands, pile_top, dealer=0):
    n = len(hands)
    first = (dealer + 1) % n
    perm = [hands[(first + i) % n][i // n] for i in range(4 * n)]
    return tuple(perm + list(pile_top) + [c for c in range(52) if c not in perm and c not in pile_top])


def test_completion_offers_what_fits_the_command():
    s = position(["KC KD JS 2C 5H", "3C", "4C"], "", turn=0, sets=[(1, "JC JD JH")])
    v = E.view(s, 0)
    assert gf.complete(["ask", ""], v) == ["p1", "p2", "2", "5", "J", "K"]
    assert gf.complete(["ask", "p1", ""], v) == ["2", "5", "J", "K"]
    assert gf.complete(["ask", "p1", "for", ""], v) == ["2", "5", "J", "K"]
    assert gf.complete(["ask", "K", ""], v) == ["p1", "p2"]
    # only cards that can still end in a set (jacks are wild: K-K-J is one; 2C and 5H make none)
    assert gf.complete(["place", ""], v) == ["JS*", "KC", "KD"]
    assert gf.complete(["place", "K", ""], v) == ["JS*", "KD"]
    assert gf.complete(["place", "2C", ""], v) == []
    assert gf.complete(["end", ""], v) == []


# ------------------------------------------------------------------ the table

def _mid_game():
    s = position(["7C 7D JD 2C", "7H 4C 9D", "KC"], "QH QS", turn=0, sets=[(2, "JC JH JS")])
    s, _ = run(s, 0, "ask p1 7")         # 7H reaches ann: step bonus
    return s


def test_text_table_shows_every_public_fact_and_marks_wilds():
    s = _mid_game()
    lines = gf.render_text(E.view(s, 0), CTX)
    assert lines[0] == "Go Fish Wildcard - your turn: place for another ask, or end - pile 41"
    assert lines[1] == "wild ranks: J"
    assert lines[2] == "  p0 ann (you): hand 5, sets 0, asked for 7 - to act, dealer"
    assert lines[3] == "  p1 bob: hand 2, sets 0"
    assert lines[4] == "  p2 cy: hand 1, sets 1"
    assert "  cy: JC JH JS" in lines
    assert "  you asked bob for 7s: got 1" in lines
    assert "your hand (5): 2C 7C 7D 7H JD* | pile 41" in lines
    assert lines[-1] == "place 7C 7D 7H to ask again, or end"
    # bob sees the same table, his own hand, and not ann's
    bob = gf.render_text(E.view(s, 1), Ctx(("ann", "bob", "cy"), 1))
    assert bob[0] == "Go Fish Wildcard - ann's turn (placing for another ask) - pile 41"
    assert "your hand (2): 4C 9D | pile 41" in bob and not any("7C" in x for x in bob)
    # a spectator: no hand line
    assert not any(x.startswith("your hand") for x in gf.render_text(E.view(s, None), Ctx(("ann", "bob", "cy"), None)))


def test_rich_table_fits_80_columns_and_keeps_facts_in_words():
    s = _mid_game()
    ctx = ctx_from([{"seat": 0, "name": "ann", "connected": True}, {"seat": 1, "name": "bob", "connected": False},
                    {"seat": 2, "name": "cy", "connected": True}], 0)
    sec = gf_screen.render_rich(E.view(s, 0), ctx)
    top, mid, bottom = sec.top.plain, sec.middle.plain, sec.bottom.plain
    assert top.splitlines()[1] == "wild: J"
    assert "> p0 ann" in top and "asked 7" in top and "you" in top
    assert "  p1 bob        hand  2  sets  0  offline" in top
    assert "cy JC JH JS" in " ".join(mid.split())
    assert "you asked bob for 7s: got 1" in mid
    assert "2C 7C 7D 7H JD*" in bottom and "Your hand (5) - pile 41 - * marks a wild card:" in bottom
    assert all(len(x) <= 80 for x in (top + "\n" + mid + "\n" + bottom).splitlines())
    # a wild card is reversed, a heart red; each hand card types itself when clicked
    spans = {sec.bottom.plain[x.start:x.end]: x.style for x in sec.bottom.spans}
    assert "reverse" in str(spans["JD*"]) and "red" in str(spans["7D"])
    assert "insert_handle('JD')" in str(spans["JD*"].meta)


def test_snapshot_shows_every_hand_and_the_pile_in_order():
    s = _mid_game()
    lines = gf.render_snapshot(E.snapshot(s), Ctx(("ann", "bob", "cy"), None))
    assert lines[0] == "Go Fish Wildcard - ann's turn (placing for another ask) - pile 41 - all-seeing"
    assert "    hand (2): 4C 9D" in lines and "    hand (5): 2C 7C 7D 7H JD*" in lines
    assert any(x.startswith("pile (41, top first): QH QS AC") for x in lines)
    assert "reached the asker (may earn another ask): 7H" in lines


def test_events_read_as_sentences_and_flash():
    ctx = CTX
    d = gf.describe
    assert d({"event": "cards_dealt", "dealer": 1, "each": 4, "pile": 40}, ctx) == "bob dealt 4 cards each; 40 in the pile"
    assert d({"event": "turn_started", "seat": 0, "last_ask": False}, ctx) == "your turn: ask a player for a rank you hold"
    assert d({"event": "turn_started", "seat": 2, "last_ask": True}, ctx) == "cy's last ask"
    assert d({"event": "asked", "seat": 1, "target": 2, "rank": "Q", "handed": 2}, ctx) == "bob asked cy for queens: got 2"
    assert d({"event": "asked", "seat": 0, "target": 2, "rank": "10", "handed": 0}, ctx) == "you asked cy for 10s: go fish!"
    assert d({"event": "cards_drawn", "seat": 1, "count": 2, "reason": "turn_start_empty", "pile": 7}, ctx) == \
        "bob drew 2 cards (no cards at the start of the turn); pile 7"
    assert d({"event": "set_placed", "seat": 2, "set": 0, "cards": [0, 1, 2], "rank": "A", "wilds": 0, "forced": False,
              "new_wild": ["A"]}, ctx) == "cy placed a set: AC AD AH (aces, no wilds); aces are now wild"
    assert d({"event": "set_placed", "seat": 0, "set": 1, "cards": [3, 40, 41], "rank": None, "wilds": 3,
              "forced": True, "new_wild": []}, ctx) == "you had to place a set: JC JD AS (three wilds)"
    assert d({"event": "extra_ask_earned", "seat": 1}, ctx) == "bob earned another ask"
    assert d({"event": "turn_ended", "seat": 1}, ctx) is None
    assert d({"event": "turn_skipped", "seat": 2, "reason": "empty_hand"}, ctx) == \
        "cy has no cards and the pile is empty: turn skipped"
    assert d({"event": "last_asks_began", "drawer": 1, "order": [2, 0, 1]}, ctx) == \
        "the pile is empty (bob drew the last card): one last ask each: cy, you, bob"
    assert d({"event": "game_over", "scores": [3, 5, 5], "winners": [1, 2]}, ctx) == \
        "game over: bob and cy win with 5 sets each"    # every seat's sets: once, in the "over" line
    assert gf.flash({"event": "asked", "seat": 1, "target": 0, "rank": "Q", "handed": 0}, ctx) == "Go fish!"
    assert gf.flash({"event": "asked", "seat": 1, "target": 2, "rank": "Q", "handed": 0}, ctx) is None
    assert gf.flash({"event": "set_placed", "seat": 1, "new_wild": ["K"]}, ctx) == "Kings wild!"
    assert gf.flash({"event": "last_asks_began", "drawer": 1, "order": [2, 0, 1]}, ctx) == "Last asks!"
    assert "surprise" in d({"event": "surprise", "seat": 1}, ctx)


@settings(max_examples=40)
@given(seats=st.integers(2, 6), seed=st.integers(0, 2**32 - 1))
def test_every_legal_action_reads_back_from_its_label(seats, seed):
    """label_action writes what a player would type; parse reads it back to the same action,
    all through a random game (the bots' lines and the viewer use these labels)."""
    rng = random.Random(seed)
    perm = list(range(52))
    rng.shuffle(perm)
    s, _ = E.apply(E.new_table(TableConfig(E.NAME, seats, {"dealer": 0})), None, ChanceOutcome("deal", tuple(perm)))
    while not E.outcome(s).over:
        view = E.view(s, s.turn)
        legal = E.legal_actions(s, s.turn)
        for a in rng.sample(legal, min(5, len(legal))):
            data = {k: (list(v) if isinstance(v, tuple) else v) for k, v in attrs.asdict(a).items()}
            data["kind"] = {E.Ask: "ask", E.Place: "place", E.EndTurn: "end_turn"}[type(a)]
            assert gf.parse(gf.label_action(data).split(), view) == data
        s, _ = E.apply(s, s.turn, rng.choice(legal))


# ------------------------------------------------------------------ the bot

def test_bot_places_the_set_that_earns_another_ask_and_otherwise_asks():
    s = _mid_game()
    assert gf.choose(E.view(s, 0)) == {"kind": "place", "cards": Cs("7C 7D 7H")}
    assert gf.candidates(E.view(s, 0))[-1] == {"kind": "end_turn"}
    assert gf.candidates(E.view(s, 1)) == [] and gf.candidates(E.view(s, None)) == []
    s, _ = E.apply(s, 0, E.Place(tuple(Cs("7C 7D 7H"))))
    assert gf.choose(E.view(s, 0))["kind"] == "ask"


def test_bot_remembers_who_asked_for_what():
    # bob asked cy for queens and got none: bob holds a queen, cy holds none.
    s = position(["QD 5C 9H", "QC 2D 3D 4D", "KC 8S 8D 6H"], "AH", turn=1, n=3)
    s, _ = E.apply(s, 1, E.Ask(2, "Q"))
    assert s.turn == 2
    s, _ = E.apply(s, 2, E.Ask(0, "6"))
    assert s.turn == 0
    assert gf.choose(E.view(s, 0)) == {"kind": "ask", "target": 1, "rank": "Q"}
    # cy was asked for queens: ann never asks cy for them while bob may hold one
    ranked = [a for a in gf.candidates(E.view(s, 0)) if a["rank"] == "Q"]
    assert ranked[0]["target"] == 1
    # after bob hands his queens over, bob is known to hold none, so he is not asked first
    s2 = position(["QD QH 5C", "QC 2D", "KC 9S"], "AH 3H", turn=0, n=3,
                  history=((1, 2, 11, 0, 1), (0, 1, 11, 1, 0)))
    assert gf.choose(E.view(s2, 0)) != {"kind": "ask", "target": 1, "rank": "Q"}


def _bot_game(seed: int, seats: int, policies) -> tuple:
    """A whole game against the engine; each seat acts on its own view only."""
    rng = random.Random(seed)
    perm = list(range(52))
    rng.shuffle(perm)
    s, _ = E.apply(E.new_table(TableConfig(E.NAME, seats, {"dealer": seed % seats})), None,
                   ChanceOutcome("deal", tuple(perm)))
    kinds = Counter()
    for _ in range(5000):
        if E.outcome(s).over:
            return E.outcome(s), kinds
        seat = s.turn
        action = policies[seat](E.view(s, seat), s, rng)
        try:
            s, _ = E.apply(s, seat, E.ACTIONS.decode(action, "$.action"))
        except IllegalAction as e:
            raise AssertionError(f"the bot chose an action the engine refuses: {action} -> {e}") from None
        kinds[action["kind"]] += 1
    raise AssertionError("a game between bots did not end")


def _bot(view, state, rng):
    return gf.choose(view)


def _forgetful_bot(view, state, rng):
    return gf.choose(dict(view, asks=[]))       # the same strategy without the ask history


def _random_player(view, state, rng):
    a = rng.choice(E.legal_actions(state, view["seat"]))
    return {E.Ask: lambda: {"kind": "ask", "target": a.target, "rank": a.rank},
            E.Place: lambda: {"kind": "place", "cards": list(a.cards)},
            E.EndTurn: lambda: {"kind": "end_turn"}}[type(a)]()


def test_bots_play_whole_games_legally_using_every_kind_of_action():
    total = Counter()
    for seed in range(40):
        seats = 2 + seed % 5
        _, kinds = _bot_game(seed, seats, [_bot] * seats)
        total.update(kinds)
    assert total["ask"] > 0 and total["place"] > 0, total


def test_memory_wins_games_against_the_same_bot_without_it_and_against_random_players():
    """Seat order rotates; two players. Remembering the asks is worth well over a set a game."""
    for rival, margin in ((_forgetful_bot, 1.0), (_random_player, 1.0)):
        mine = theirs = wins = 0
        games = 160
        for seed in range(games):
            me = seed % 2
            pols = [rival, rival]
            pols[me] = _bot
            out, _ = _bot_game(seed, 2, pols)
            mine += out.scores[me]
            theirs += out.scores[1 - me]
            wins += me in out.winners
        assert (mine - theirs) / games > margin, (rival.__name__, mine, theirs)
        assert wins > games * 0.6, (rival.__name__, wins)


def test_plugin_is_registered_with_a_bot():
    assert plugin_for("go-fish-wildcard") is gf and has_bot("go-fish-wildcard")
    assert all(v.split("  - ")[0].split()[0] == k for k, v in gf.COMMANDS.items())


# ------------------------------------------------------------------ the full-screen UI

def test_full_screen_ui_plays_a_whole_game_against_a_bot_by_typed_commands():
    """`wildtable play --game go-fish-wildcard --bots 1` (private server in the process):
    ann types every move as a player would (what the bot would do, as its label); the
    screen shows her hand, both players, the pile, whose turn and the asks at 80x24."""
    from wildtable.client.session import Launch
    from wildtable.client.tui import PlayApp

    from functools import partial

    from uikit import text_of, until as wait_until
    until = partial(wait_until, timeout=15.0)       # each wait may span several of the bot's turns

    async def scenario():
        app = PlayApp(Launch(name="ann", game="go-fish-wildcard", bots=1, bot_delay=0.02))
        async with app.run_test(size=(80, 24)) as pilot:
            await until(pilot, "the deal", lambda: app.core is not None and "bot1" in text_of(app, "#board-top")
                        and "pile " in text_of(app, "#board-top"))
            top = text_of(app, "#board-top")
            assert top.startswith("Go Fish Wildcard - ") and "p0 ann" in top and "p1 bot1" in top
            assert "wild: none yet" in top
            typed = 0
            while app.core.mirror.over is None:
                mir = app.core.mirror
                view = mir.view
                if view.get("turn") == 0 and view.get("phase") in ("play", "last_asks"):
                    seq = mir.seq
                    line = gf.label_action(gf.choose(view))
                    if typed == 0:
                        await pilot.press(*line, "enter")           # typed key by key, once
                    else:
                        app.query_one("#cmd").value = line          # then faster: the line at once
                        await pilot.press("enter")
                    typed += 1
                    await until(pilot, f"the answer to {line}",
                                lambda: mir.seq > seq or app.core.mirror.over is not None
                                or text_of(app, "#result").startswith("refused"))
                    assert not text_of(app, "#result").startswith("refused"), text_of(app, "#result")
                else:
                    await pilot.pause(0.02)
            await until(pilot, "game over", lambda: "game over" in text_of(app, "#result"))
            assert typed > 3
            assert "game over" in text_of(app, "#board-top")
            assert "asks, newest first:" in text_of(app, "#melds")
            await pilot.press("ctrl+q")
            await pilot.pause()

    asyncio.run(asyncio.wait_for(scenario(), 60))
