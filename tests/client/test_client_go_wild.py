"""Go Wild! in the client: typed commands -> action maps, completion, the table as text and
in colour, event lines, the bot's strategy against the real engine, then the line mode
(`wildtable play --game go-wild --bots 2 --plain`, a real subprocess with its own server)
and the full-screen UI driven headless."""

from __future__ import annotations

import asyncio
import os
import random
import subprocess
import sys
from collections import Counter

import pytest
import trio
from textual.widgets import RichLog

from wildtable.protocol.states import evolve
from wildtable.headless.games import CommandError, Ctx, ctx_from, generic, has_bot, plugin_for
from wildtable.headless.games import go_wild as gw
from wildtable.client.screens import go_wild as gw_screen
from wildtable.client.session import Launch
from wildtable.client.tui import PlayApp
from wildtable.protocol.engine import ChanceOutcome, TableConfig
from wildtable.protocol.errors import IllegalAction
from wildtable.protocol.games import go_wild as E
from wildtable.selfplay import play as selfplay

from proc import LineReader
from uikit import screen_text, text_of, until

RED, YELLOW, ORANGE, BLUE, GREEN, WILD = range(6)
ENV = dict(os.environ, PYTHONUNBUFFERED="1")


class Pool:
    """Unused card ids of a colour (18 per colour, wild = 5), lowest first."""

    def __init__(self):
        self.next = {col: col * 18 for col in range(6)}

    def __call__(self, colour: int, k: int) -> list[int]:
        start = self.next[colour]
        assert start + k <= colour * 18 + 18
        self.next[colour] = start + k
        return list(range(start, start + k))


def deal(hands: list[list[int]], first: int = 0) -> E.State:
    """A table where seat i was dealt exactly hands[i] and ``first`` leads."""
    n = len(hands)
    s = E.new_table(TableConfig(E.NAME, n, {"first_player": first}))
    perm = [hands[(first + i) % n][i // n] for i in range(12 * n)]
    perm += [c for c in range(108) if c not in set(perm)]
    s, _ = E.apply(s, None, ChanceOutcome("deal", tuple(perm)))
    return s


def typed(state: E.State, seat: int, text: str) -> tuple[E.State, list[dict]]:
    """Play a typed command through the client's parser and the engine."""
    action = gw.parse(text.split(), E.view(state, seat))
    return E.apply(state, seat, E.ACTIONS.decode(action, "$.action"))


def bot_view(hand, *, seat=0, counts=(12, 12, 12, 12), trick_number=1, wild_one=None, trick=(), best=None):
    """A seat's view with it to play; ``trick`` lists (seat, cards) already played."""
    counts = list(counts)
    counts[seat] = len(hand)
    played = {s for s, _ in trick}
    return {"game": "go-wild", "phase": "playing", "seat": seat, "turn": seat, "hand": sorted(hand),
            "players": [{"seat": i, "hand": counts[i], "score": 0, "wild_one": wild_one == i, "leader": False,
                         "played": i in played} for i in range(len(counts))],
            "trick_number": trick_number, "trick_points": trick_number, "wild_one": wild_one,
            "trick": [{"seat": s, "cards": cs, "kind": "set"} for s, cs in trick], "best": best,
            "round": 1, "target": 20, "scores": [0] * len(counts), "winners": [], "last_trick": None}


# ------------------------------------------------------------------ commands

def test_plays_typed_in_every_spelling():
    c = Pool()
    red, orange, blue, wild = c(RED, 3), c(ORANGE, 2), c(BLUE, 4), c(WILD, 3)
    v = {"hand": red + orange + blue + wild}
    for text in ("play 3 red", "play 3r", "play rrr", "play r3", "p 3 reds", "play all red", "play 3 RED"):
        assert gw.parse(text.split(), v) == {"kind": "play", "cards": red}, text
    assert gw.parse("play red".split(), v)["cards"] == red[:1]
    for text in ("play 2 blue 2 wild", "play 2b+2w", "play 2 blue and 2 wilds", "play 2 blue + 2 w",
                 "play 2 blue with ww"):
        assert gw.parse(text.split(), v)["cards"] == blue[:2] + wild[:2], text
    assert gw.parse("play #37".split(), v)["cards"] == [37]
    assert gw.parse(["slough"], v)["cards"] == wild
    assert gw.parse("slough 2".split(), v)["cards"] == wild[:2]
    assert gw.parse("s 1".split(), v)["cards"] == wild[:1]
    assert gw.parse("slough 2 wild".split(), v)["cards"] == wild[:2]
    assert gw.parse("slough all".split(), v)["cards"] == wild


@pytest.mark.parametrize("text,why", [
    ("play 3 purple", "'purple' is not a colour"),
    ("play 5 red", "you hold 3 red, not 5"),
    ("play 3", "3 what\\? say the colour"),
    ("play", "play what\\?"),
    ("play green", "you hold no green card"),
    ("play 0 red", "count of 0"),
    ("play 2 3 red", "one count per colour"),
    ("play #200", "ids go from 0 to 107"),
    ("play #5", "you do not hold card #5"),
    ("play 4 wild 4 blue 4 wild", "you hold 3 wild, not 8"),
    ("slough 2 red", "only wild cards can be sloughed"),
    ("slough 4", "you hold 3 wild, not 4"),
])
def test_command_refusals_are_sentences(text, why):
    c = Pool()
    v = {"hand": c(RED, 3) + c(ORANGE, 2) + c(BLUE, 4) + c(WILD, 3)}
    with pytest.raises(CommandError, match=why):
        gw.parse(text.split(), v)


def test_slough_without_wilds_is_refused_by_the_client():
    with pytest.raises(CommandError, match="you hold no wild card to slough; your hand: 2 red"):
        gw.parse(["slough"], {"hand": Pool()(RED, 2)})


def test_completion_offers_what_the_hand_holds():
    c = Pool()
    v = {"hand": c(RED, 1) + c(BLUE, 4) + c(ORANGE, 2) + c(WILD, 2)}
    assert gw.complete(["play", ""], v) == ["blue", "orange", "wild", "red", "all"]
    assert gw.complete(["play", "3", ""], v) == ["blue"]
    assert gw.complete(["play", "2", "blue", ""], v) == ["orange", "wild", "red", "all"]
    assert gw.complete(["slough", ""], v) == ["all", "1", "2"]
    assert gw.complete(["slough", "2", ""], v) == ["wild"]
    assert gw.complete(["slough", ""], {"hand": c(RED, 2)}) == []


def test_label_action_is_the_command_that_makes_it():
    c = Pool()
    hand = c(RED, 3) + c(BLUE, 4) + c(WILD, 3)
    v = {"hand": hand}
    for cards in (hand[:2], hand[3:7] + hand[7:9], hand[7:]):
        action = {"kind": "play", "cards": cards}
        label = gw.label_action(action)
        assert gw.parse(label.split(), v) == action, label
    assert gw.label_action({"kind": "play", "cards": hand[7:]}) == "slough 3"
    assert gw.label_action({"kind": "play", "cards": hand[3:5] + hand[8:9]}) == "play 2 blue 1 wild"


# ------------------------------------------------------------------ the rulebook example, typed and shown

def test_rulebook_example_typed_shown_and_described():
    """Paul leads 3 orange, Anne sloughs 4 wilds, Larry plays 6 green, Margaret (the Wild One)
    plays 4 blue + 4 wild and wins: typed as players type it, shown as they see it."""
    c = Pool()
    paul = c(ORANGE, 3) + c(RED, 9)
    anne = c(WILD, 4) + c(YELLOW, 7) + c(RED, 1)
    larry = c(GREEN, 6) + c(RED, 6)
    marg = c(BLUE, 4) + c(WILD, 4) + c(YELLOW, 4)
    s = evolve(deal([paul, anne, larry, marg], first=0), wild_one=3, trick_no=3)
    ctx = Ctx(("Paul", "Anne", "Larry", "Margaret"), 3)
    lines = []
    s, evs = typed(s, 0, "play 3 orange")
    lines += [gw.describe(e, ctx) for e in evs]
    with pytest.raises(IllegalAction) as e:
        typed(s, 1, "play 1 yellow 1 wild")
    assert e.value.code == "not_wild_one"
    s, evs = typed(s, 1, "slough 4")
    lines += [gw.describe(e, ctx) for e in evs]
    s, evs = typed(s, 2, "play 6 green")
    lines += [gw.describe(e, ctx) for e in evs]
    text = gw.render_text(E.view(s, 3), ctx)
    assert text[0] == "Go Wild! - round 1, trick 3 of 3 (3 points) - first to 20 - your turn"
    assert "  Margaret (you): 12 cards, score 0 - WILD ONE, to play" in text
    assert "  Anne: 8 cards, score 0 - played" in text
    assert text[text.index("trick 3 (3 points):") + 1:][:3] == [
        "  Paul: 3 orange", "  Anne: sloughed 4 wild", "  Larry: 6 green  <- winning"]
    assert "your hand (12): 4 yellow 4 blue 4 wild" in text
    assert text[-1].startswith("your turn: play N COLOUR, and as the Wild One add up to N wilds")
    with pytest.raises(IllegalAction) as e:
        typed(s, 3, "play 2 blue 3 wild")
    assert e.value.code == "too_many_wilds"
    s, evs = typed(s, 3, "play 4 blue 4 wild")
    lines += [gw.describe(e, ctx) for e in evs]
    assert lines[:4] == ["Paul played 3 orange; Anne to play", "Anne sloughed 4 wild; Larry to play",
                         "Larry played 6 green; your turn", "you played 4 blue + 4 wild (mixed set of 8)"]
    assert lines[4] == "you win trick 3 with a set of 8: +3 (score 3)"
    assert "round 1 over; scores: Paul 0, Anne 0, Larry 0, Margaret 3" in lines
    assert "round 2: you lead; Wild One: you" in lines
    assert gw.flash(evs[0], ctx) == "Go Wild! (you: 8 cards)"
    after = gw.render_text(E.view(s, 0), Ctx(ctx.names, 0))
    assert ("last trick (round 1, trick 3): won by Margaret for 3 points (Paul 3 orange; Anne sloughed 4 wild; "
            "Larry 6 green; Margaret 4 blue + 4 wild (mixed set of 8))") in after


def test_every_event_reads_as_a_sentence_and_the_snapshot_shows_every_hand():
    seen = {}
    ctx = Ctx(("ann", "bob", "cy", "dee"), 0)
    for seed in range(12):
        game = selfplay(E, 2 + seed % 4, {"first_player": -1}, seed=seed, hash_every=0)
        for e in game.events:
            line = gw.describe(e, ctx)
            assert line and "{" not in line and "_" not in line, (e, line)
            seen[e["event"]] = line
    assert set(seen) >= {"leader_chosen", "deck_shuffled", "cards_dealt", "cards_played", "trick_won",
                         "trick_sloughed", "wild_one_passed", "trick_started", "round_ended", "deck_ran_out",
                         "discards_shuffled", "round_started", "game_over"}
    assert gw.describe({"event": "tricks_skipped", "round": 4, "from_trick": 2}, ctx) == \
        "nobody holds a card: the rest of round 4 is not played"
    assert gw.describe({"event": "wild_one_passed", "seat": 0, "previous": 2}, ctx) == \
        "you are now the Wild One (was cy)"
    assert gw.flash({"event": "wild_one_passed", "seat": 1, "previous": None}, ctx) == "bob is the Wild One!"
    assert gw.flash({"event": "cards_played", "seat": 1, "cards": [1], "kind": "set", "size": 1}, ctx) is None
    # an event the module does not know still reads as a line
    assert "surprise" in gw.describe({"event": "surprise", "seat": 1}, ctx)
    snap = E.snapshot(game.state)
    lines = gw.render_snapshot(snap, Ctx(("ann", "bob", "cy", "dee")[:snap["seats"]], None))
    assert lines[0].endswith("game over - all-seeing")
    for s, hand in enumerate(snap["hands"]):
        assert f"    hand ({len(hand)}): {' '.join(gw.hand_labels(hand)) or 'empty'}" in lines
    assert any(x.startswith(f"deck ({len(snap['deck'])}, top first)") for x in lines)
    assert lines[-1].startswith("game over: ")


def test_rich_table_keeps_every_fact_in_words_for_no_colour():
    c = Pool()
    a = c(BLUE, 4) + c(WILD, 2) + c(RED, 6)
    b = c(GREEN, 12)
    s = evolve(deal([a, b], first=1), wild_one=0, scores=(7, 5))
    s, _ = E.apply(s, 1, E.Play(tuple(b[:3])))
    ctx = ctx_from([{"seat": 0, "name": "ann", "connected": True}, {"seat": 1, "name": "bob", "connected": False}], 0)
    sec = gw_screen.render_rich(E.view(s, 0), ctx)
    top, mid, bottom = sec.top.plain, sec.middle.plain, sec.bottom.plain
    assert top.splitlines()[0] == "Round 1, trick 1/3 (1 pt) - your turn"
    assert "> ann        12 cards  7 pts WILD ONE TO PLAY" in top
    assert "  bob         9 cards  5 pts leads played offline" in top
    assert "  bob        3 green <- winning" in mid and mid.startswith("Trick 1 - 1 point")
    assert "Your hand (12) - you are the WILD ONE" in bottom and "6 red  4 blue  2 wild" in bottom
    assert bottom.endswith("your turn: play N COLOUR + up to N wild")
    # 80x24 leaves the table 50 columns beside the events pane: no line is longer
    assert max(len(x) for x in (top + "\n" + mid + "\n" + bottom).splitlines()) <= 50
    # colour groups carry their colour, and a click types the colour word
    span = next(x for x in sec.bottom.spans if sec.bottom.plain[x.start:x.end] == "4 blue")
    assert "blue" in str(span.style) and "insert_handle('blue')" in str(span.style.meta)
    watching = gw_screen.render_rich(E.view(s, None), Ctx(("ann", "bob"), None))
    assert watching.bottom.plain == "watching: no hand" and "your turn" not in watching.top.plain
    assert gw.render_text(E.view(s, None), Ctx(("ann", "bob"), None))[0].endswith("to play: ann")
    waiting = gw.render_text(E.view(E.new_table(TableConfig(E.NAME, 3, {})), 0), Ctx(("ann", "", ""), 0))
    assert waiting[0] == "Go Wild! - waiting for players to join"


def test_the_client_finds_the_plugin_and_its_bot():
    assert plugin_for("go-wild") is gw and plugin_for("go-wild") is not generic and has_bot("go-wild")
    for word in gw.COMMANDS:
        assert gw.COMMANDS[word].startswith(word)


# ------------------------------------------------------------------ the bot

def test_bot_saves_its_best_colour_for_the_third_trick():
    c = Pool()
    blue, red, yellow = c(BLUE, 6), c(RED, 4), c(YELLOW, 2)
    hand = blue + red + yellow
    # leading trick 1 against one player: contest with the second-best colour, keep the 6 blue
    assert gw.choose(bot_view(hand, counts=(12, 12))) == {"kind": "play", "cards": red}
    # trick 3 is worth 3: the largest set
    assert gw.choose(bot_view(hand, counts=(12, 12), trick_number=3)) == {"kind": "play", "cards": blue}
    # last to play: the smallest set that wins, not from the best colour
    v = bot_view(hand, counts=(12, 10), trick_number=2, trick=[(1, c(GREEN, 2))], best={"seat": 1, "size": 2})
    assert gw.choose(v) == {"kind": "play", "cards": red[:3]}
    # nobody after can beat 3 (the only one still to play holds 3 cards): the cheapest sure win
    v = bot_view(hand, seat=1, counts=(9, 12, 3), trick_number=2, trick=[(0, c(GREEN, 2))],
                 best={"seat": 0, "size": 2})
    assert gw.choose(v) == {"kind": "play", "cards": red[:3]}


def test_bot_sloughs_wilds_when_not_the_wild_one_and_mixes_them_when_it_is():
    c = Pool()
    red, yellow, blue, wild = c(RED, 3), c(YELLOW, 2), c(BLUE, 4), c(WILD, 4)
    beaten = dict(trick=[(1, c(GREEN, 7))], best={"seat": 1, "size": 7}, counts=(12, 5, 12))
    # cannot win: wilds are useless to anyone but the Wild One, slough them all
    assert gw.choose(bot_view(red + yellow + wild[:2], **beaten)) == {"kind": "play", "cards": wild[:2]}
    # the Wild One may not slough while holding colours: it gives its smallest colour group
    assert gw.choose(bot_view(red + yellow + wild[:2], wild_one=0, **beaten)) == {"kind": "play", "cards": yellow}
    # the Wild One in trick 3: 4 blue + 4 wild
    assert gw.choose(bot_view(blue + wild + red[:2], wild_one=0, trick_number=3)) == \
        {"kind": "play", "cards": blue + wild}
    # the Wild One holding only wilds sloughs them
    assert gw.choose(bot_view(wild[:3], wild_one=0, **beaten)) == {"kind": "play", "cards": wild[:3]}
    # not its turn: nothing to try
    v = bot_view(red)
    v["turn"] = 1
    assert gw.choose(v) is None and gw.candidates(v) == []
    assert gw.candidates(bot_view(red[:2] + blue, counts=(12, 12), trick_number=3)) == [
        {"kind": "play", "cards": blue}, {"kind": "play", "cards": [red[0]]}]


def _game(seed: int, seats: int, players: list, settings: dict | None = None) -> tuple[E.State, Counter]:
    """A whole game against the engine; each player is f(view, state, seat, rng) -> Play/action map."""
    rng = random.Random(seed)
    s = E.new_table(TableConfig(E.NAME, seats, settings or {}))
    kinds = Counter()
    for _ in range(5000):
        req = E.pending_chance(s)
        if req is not None:
            perm = list(range(req.size))
            rng.shuffle(perm)
            s, _ = E.apply(s, None, ChanceOutcome(req.purpose, tuple(perm)))
            continue
        if E.outcome(s).over:
            return s, kinds
        seat = s.turn
        action = players[seat](E.view(s, seat), s, seat, rng)
        if isinstance(action, dict):
            try:
                s, evs = E.apply(s, seat, E.ACTIONS.decode(action, "$.action"))
            except IllegalAction as e:
                raise AssertionError(f"the bot chose a play the engine refuses: {action} -> {e}") from None
            kinds[evs[0]["kind"]] += 1
        else:
            s, _ = E.apply(s, seat, action)
    raise AssertionError("the game did not end")


def bot(view, state, seat, rng):
    return gw.choose(view)


def random_player(view, state, seat, rng):
    return rng.choice(E.legal_actions(state, seat))


def greedy_player(view, state, seat, rng):
    """Always its largest set (wilds count for the Wild One), the fewest cards on a tie."""
    def size(a):
        return len(a.cards) if any(c < E.FIRST_WILD for c in a.cards) else 0
    return max(E.legal_actions(state, seat), key=lambda a: (size(a), -len(a.cards)))


def test_bots_play_whole_games_legally_with_every_kind_of_play():
    kinds = Counter()
    for seed in range(10):
        seats = 2 + seed % 5
        state, k = _game(seed, seats, [bot] * seats)
        assert E.outcome(state).over and max(state.scores) >= 20
        kinds.update(k)
    assert kinds["set"] and kinds["mixed"] and kinds["slough"], kinds


@pytest.mark.parametrize("rival,at_least", [(random_player, 0.9), (greedy_player, 0.65)])
def test_bots_beat_random_and_greedy_players(rival, at_least):
    """Two bots and two rivals at a four-seat table, seats alternating: the bots win far more
    than the half of the games their seats would win by chance."""
    wins = 0
    games = 30
    for seed in range(games):
        players = [bot, rival, bot, rival] if seed % 2 else [rival, bot, rival, bot]
        state, _ = _game(1000 + seed, 4, players)
        wins += players[state.winners[0]] is bot
    assert wins >= at_least * games, f"bots won {wins} of {games}"


# ------------------------------------------------------------------ the line mode, a real subprocess

def pick(hand_words: list[str]) -> str:
    """A scripted player's command from the hand line ("2 red 3 yellow 2 wild"): its largest
    colour group, or a slough when it holds only wilds."""
    groups = [(int(n), col) for n, col in zip(hand_words[::2], hand_words[1::2])]
    colours = [(n, col) for n, col in groups if col != "wild"]
    if not colours:
        return "slough"
    n, col = max(colours)
    return f"play {n} {col}"


async def test_plain_mode_plays_a_whole_game_against_bots_in_its_own_server():
    """`wildtable play --game go-wild --bots 2 --plain`: a private server and two bots in a
    subprocess; the script reads the table with show, plays on its turn, and is refused
    with a reason when it tries out of turn or types nonsense."""
    with trio.fail_after(60):
        proc = await trio.lowlevel.open_process(
            [sys.executable, "-m", "wildtable", "play", "--game", "go-wild", "--bots", "2", "--plain",
             "--bot-delay", "0.02", "--name", "ann", "--set", "target=8", "--set", "first_player=1"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=ENV)
        out = LineReader(proc.stdout, timeout=15)

        async def send(text: str) -> None:
            await proc.stdin.send_all(text.encode() + b"\n")

        hand: list[str] = []
        waiting = None           # a play sent and not answered yet
        asked = False            # a show sent and not answered yet
        dirty = False            # events arrived since that show was sent
        typo_sent = refused_out_of_turn = False
        over = None
        while over is None:
            line = await out.next()          # fails with the last lines when the client goes silent
            assert line is not None, "the client stopped early:\n" + out.tail()
            tag, _, rest = line.partition(" ")
            if tag in ("hand", "hand:"):
                hand = rest.partition("|")[0].split()
            elif tag in ("ok", "rejected") and waiting is not None and rest.startswith(waiting):
                waiting = None
                refused_out_of_turn = refused_out_of_turn or ":: not_your_turn: " in rest
                if not asked:
                    asked, dirty = True, False
                    await send("show")
            elif tag == "over":
                over = rest
            elif tag == "show" and rest.startswith("Go Wild!"):
                asked = False
                if dirty:
                    asked, dirty = True, False
                    await send("show")
                elif rest.endswith("your turn") and waiting is None:
                    waiting = pick(hand)
                    await send(waiting)
                elif " - to play: " in rest and not refused_out_of_turn and waiting is None and hand:
                    # not our turn: the server refuses (unless a bot was quicker: then it is played)
                    if not typo_sent:
                        typo_sent = True
                        await send("play 2 purple")
                    waiting = pick(hand)
                    await send(waiting)
            elif tag == "event":
                dirty = True
                if not asked:
                    asked, dirty = True, False
                    await send("show")
        await send("quit")
        quitting = len(out.seen)
        while (line := await out.next()) is not None:
            pass
        assert "info bye" in out.seen[quitting:]
        assert await proc.wait() == 0
    seen = "\n".join(out.seen)
    assert "info joined table" in seen and "(Go Wild!) at seat 0 as ann" in seen
    assert "event 12 cards dealt to everyone" in seen
    assert "rejected play 2 purple :: bad_command: 'purple' is not a colour" in seen
    assert any(x.startswith("rejected play ") and ":: not_your_turn: It is seat " in x for x in out.seen)
    oks = [x for x in out.seen if x.startswith("ok play ") or x == "ok slough"]
    assert len(oks) >= 2, seen[-2000:]
    assert any(x.startswith("event you played ") for x in out.seen)
    assert any(x.startswith("event bot") and x.endswith("; your turn") for x in out.seen)
    assert any(x.startswith("event bot") and " played " in x for x in out.seen)
    assert over.startswith("game over: ") and "scores ann" in over


# ------------------------------------------------------------------ the full-screen UI

def test_full_screen_table_at_80x24_takes_a_typed_play():
    """Alone with two bots: ann leads the first trick, sees her hand and the turn marker,
    is refused a set she does not hold, plays, and sees her play on the table."""

    async def scenario():
        app = PlayApp(Launch(name="ann", game="go-wild", bots=2, bot_delay=0.3, settings={"first_player": 0}))
        async with app.run_test(size=(80, 24)) as pilot:
            await until(pilot, "the hand", lambda: "Your hand (12)" in text_of(app, "#board-bottom"), 8)
            screen = screen_text(app)
            assert "Round 1, trick 1/3 (1 pt) - your turn" in screen
            assert "> ann        12 cards  0 pts TO PLAY leads" in screen and "bot1" in screen and "bot2" in screen
            hand = app.core.mirror.view["hand"]
            g = gw.groups(hand)
            have = next(i for i in range(5) if g[i])
            missing = next((i for i in range(5) if not g[i]), None)
            if missing is not None:
                await pilot.press(*f"play 1 {gw.NAMES[missing]}", "enter")
                await until(pilot, "the refusal", lambda: "refused" in text_of(app, "#result"))
                assert f"you hold no {gw.NAMES[missing]} card" in text_of(app, "#result")
            await pilot.press(*"play 1 ", "tab")
            await pilot.pause()
            assert app.query_one("#cmd").value.startswith("play 1 ")
            app.query_one("#cmd").value = f"play 1 {gw.NAMES[have]}"
            await pilot.press("enter")
            await until(pilot, "the play", lambda: text_of(app, "#result") == f"ok: play 1 {gw.NAMES[have]}")
            await until(pilot, "the trick", lambda: f"1 {gw.NAMES[have]}" in text_of(app, "#melds"))
            events = "\n".join(x.text for x in app.query_one("#events", RichLog).lines)
            assert f"you played 1 {gw.NAMES[have]}" in events
            await pilot.press("ctrl+q")
            await pilot.pause()
        assert app._done.done()

    asyncio.run(asyncio.wait_for(scenario(), 40))
