"""Each game's round-end and end-of-game lines, as the terminal client says them (issue
#27): the scores come once (Go Wild! said them twice: `game over: bot1 wins with 22
(scores ...) (scores ...; log ...)`), Run Wild's game-over line comes once too, numbers
agree with their nouns ("1 card", never "1 cards"), and a private server's log, deleted
when the player quits, is not named."""

from __future__ import annotations

import re

import pytest

from wildtable.headless.core import ClientCore
from wildtable.protocol import messages as m
from wildtable.protocol.codec import to_data
from wildtable.protocol.engine import TableConfig, game as find_game
from wildtable.selfplay import play

GAMES = [("run-wild", 2, {"rounds": 2}), ("go-wild", 2, {"target": 10}), ("wild-shots", 2, {}),
         ("go-fish-wildcard", 3, {})]
NAMES = ("ann", "bob", "cy")
ROUND_END = {"round_ended", "round_scored", "round_over", "tie_break", "game_over", "game_ended"}
BAD_GRAMMAR = re.compile(r"\b1 (cards|points|sets|tricks|pts|penalty points)\b|\bwins with\b.*\bwins with\b")


def _said(game: str, seats: int, settings: dict, logs_kept: bool) -> tuple[list[str], list[str]]:
    """A whole selfplay game told to ann's client at seat 0, one update per step: every
    line it says, and the round-end and end-of-game event lines among them."""
    g = find_game(game)
    steps = []
    out = play(g, seats, settings, seed=5, on_step=lambda b, a, act, seat, req, ev: steps.append((a, ev)))
    lines, ends = [], []
    core = ClientCore("ws://127.0.0.1:1", "ann", lambda n: lines.append((n.kind, n.text)))
    core.logs_kept = logs_kept

    def feed(core, msg):        # one server message through the client's reducer, as its reader does
        core._apply(core.state.absorb(msg, 0.0))
    players = tuple({"seat": i, "name": NAMES[i], "connected": True} for i in range(seats))
    first = g.new_table(TableConfig(game, seats, settings))
    feed(core, m.Joined("t1", game, 0, "tok", 0, to_data(g.view(first, 0)), players))
    for seq, (state, events) in enumerate(steps, 1):
        evs = tuple(to_data(e) for e in events)
        feed(core, m.Update(seq, evs, to_data(g.view(state, 0))))
        for e in evs:
            if e.get("event") in ROUND_END:
                ends.append(core.plugin.describe(e, core.ctx) or "")
    o = g.outcome(out.state)
    feed(core, m.GameOver("t1", len(steps), tuple(o.scores), tuple(o.winners), "t1.wlog"))
    return [f"{k} {t}" for k, t in lines if k in ("event", "over", "info", "error")], ends


@pytest.mark.parametrize("game,seats,settings", GAMES, ids=[g[0] for g in GAMES])
def test_the_end_is_said_once_with_the_scores_once(game, seats, settings):
    lines, ends = _said(game, seats, settings, logs_kept=True)
    over = [x for x in lines if "game over" in x.lower()]
    assert len(over) == 1 and over[0].startswith("over game over: "), over
    assert over[0].count("scores") == 1 and len(re.findall(r"ann -?\d+, bob -?\d+", over[0])) == 1, over[0]
    assert "; log t1.wlog)" in over[0] and re.search(r"\b(wins?|win)\b", over[0]), over[0]
    for line in ends + lines:
        assert not BAD_GRAMMAR.search(line), line
    assert ends, "the game had no round-end or end-of-game line"


@pytest.mark.parametrize("game,seats,settings", GAMES[:2], ids=[g[0] for g in GAMES[:2]])
def test_a_private_servers_log_is_not_named(game, seats, settings):
    lines, _ = _said(game, seats, settings, logs_kept=False)
    (over,) = [x for x in lines if x.startswith("over ")]
    assert "log" not in over and "(scores " in over, over


def test_go_wild_hand_counts_agree_with_their_noun():
    from wildtable.client.screens import go_wild as go_wild_screen
    from wildtable.headless.games import Ctx, go_wild
    view = {"game": "go-wild", "phase": "playing", "turn": 0, "round": 1, "trick_number": 1, "target": 10,
            "players": [{"seat": 0, "hand": 1, "score": 1}, {"seat": 1, "hand": 2, "score": 0}], "hand": [3]}
    text = "\n".join(go_wild.render_text(view, Ctx(("ann", "bob"), 0)))
    top = go_wild_screen.render_rich(view, Ctx(("ann", "bob"), 0)).top.plain
    assert "1 card," in text and "1 cards" not in text and "2 cards" in text, text
    assert " 1 card " in top and "1 cards" not in top and " 1 pt " in top, top
