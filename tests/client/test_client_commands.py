"""The Run Wild client module without a network: typed commands -> action maps, completion,
the table as text, event lines, and the bot strategy played against the real engine."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from wildtable.headless.games import CommandError, Ctx, ctx_from, generic, plugin_for
from wildtable.headless.games import run_wild as rw
from wildtable.client.screens import run_wild as rw_screen
from wildtable.protocol.engine import ChanceOutcome, TableConfig
from wildtable.protocol.errors import IllegalAction
from wildtable.protocol.games import run_wild as E


def cid(label: str) -> int:
    return E.card_id(label[0], int(label[1:]))


W1, W2, D3 = 60, 61, 69


def view_with(hand, melds=(), **extra):
    v = {"game": "run-wild", "seat": 0, "phase": "playing", "hand": list(hand), "pile": 5, "melds": list(melds),
         "players": [{"seat": 0, "hand": len(hand), "pile": 5, "draw3s": [], "stuck": False, "ready": True,
                      "in_round": True},
                     {"seat": 1, "hand": 6, "pile": 5, "draw3s": [], "stuck": False, "ready": True, "in_round": True}],
         "settings": E.default_settings(), "round": 1, "rounds": 4, "dealer": 0, "totals": [0, 0],
         "round_scores": [], "out": None, "ended_by": None, "winners": []}
    v.update(extra)
    return v


def meld(mid, labels, values=None, kind=None):
    cards = [c if isinstance(c, int) else cid(c) for c in labels]
    values = values or [E.NUMBER_OF[c] for c in cards]
    kind = kind or ("set" if len(set(values)) == 1 else "run")
    return {"id": mid, "kind": kind, "cards": cards, "values": values}


def test_meld_of_labels_and_wild_values_worked_out():
    v = view_with([cid("B6"), cid("G6"), cid("B7"), cid("B9"), W1, W2])
    assert rw.parse("meld B6 g6 W".split(), v) == {"kind": "meld", "cards": [cid("B6"), cid("G6"), W1], "values": [6, 6, 6]}
    # a run: the wild fills the gap first
    assert rw.parse("meld B7 W B9".split(), v)["values"] == [7, 8, 9]
    # then extends upwards; W=5 overrides
    assert rw.parse("meld B6 B7 W".split(), v)["values"] == [6, 7, 8]
    assert rw.parse("meld B6 B7 W=5".split(), v)["values"] == [6, 7, 5]
    # two wilds are two different cards
    assert rw.parse("m B6 W W".split(), v)["cards"] == [cid("B6"), W1, W2]
    # no wild: no values
    assert rw.parse("meld B6 B7 B9".split(), v)["values"] == []


def test_meld_refusals_are_sentences():
    v = view_with([cid("B6"), W1])
    with pytest.raises(CommandError, match="at least 3 cards"):
        rw.parse("meld B6 W".split(), v)
    with pytest.raises(CommandError, match="no more wild"):
        rw.parse("meld B6 W W".split(), v)
    with pytest.raises(CommandError, match="not a card"):
        rw.parse("meld B6 X9 W".split(), v)
    with pytest.raises(CommandError, match="named twice"):
        rw.parse("meld B6 B6 W".split(), v)
    with pytest.raises(CommandError, match="which number each wild"):
        rw.parse("meld W W W".split(), view_with([W1, W2, 62]))
    with pytest.raises(CommandError, match="1 to 12"):
        rw.parse("meld B6 W=13 B7".split(), v)


def test_add_take_swap_draw3_and_simple_commands():
    run = meld(3, ["B6", "B7", "B8"])
    sset = meld(4, ["B9", "G9", W1], [9, 9, 9])
    v = view_with([cid("B5"), cid("R9"), W2, D3], [run, sset])
    assert rw.parse("add B5 to m3".split(), v) == {"kind": "add", "meld": 3, "card": cid("B5"), "value": None}
    assert rw.parse("add W m3".split(), v) == {"kind": "add", "meld": 3, "card": W2, "value": 9}
    assert rw.parse("add W to m4".split(), v)["value"] == 9
    assert rw.parse("add m3 W=5".split(), v)["value"] == 5
    assert rw.parse("take B6 from m3".split(), v) == {"kind": "take", "meld": 3, "card": cid("B6")}
    assert rw.parse("take W from m4".split(), v) == {"kind": "take", "meld": 4, "card": W1}
    assert rw.parse("take 41 from m3".split(), v)["card"] == 41
    # the DESIGN.md example: swap the wild in a set of 9s for red 9
    assert rw.parse("swap W for R9 in m4".split(), v) == {"kind": "swap", "meld": 4, "take": W1, "give": cid("R9"), "value": None}
    # giving a wild: it stands for what the card it replaces stood for
    assert rw.parse("swap B8 for W in m3".split(), v) == {"kind": "swap", "meld": 3, "take": cid("B8"), "give": W2, "value": 8}
    assert rw.parse(["draw3"], v) == {"kind": "draw3", "card": D3}
    assert rw.parse(["d"], v) == {"kind": "draw"}
    assert rw.parse(["stuck"], v) == {"kind": "stuck"}
    assert rw.parse(["ready"], v) == {"kind": "ready"}
    for bad, why in [("take W from m3", "holds no wild"), ("add B5", "name one meld"), ("draw now", "nothing after"),
                     ("take W from m8", "no meld m8"), ("swap W in m4", "the meld's card, then yours")]:
        with pytest.raises(CommandError, match=why):
            rw.parse(bad.split(), v)
    with pytest.raises(CommandError, match="no Draw-3"):
        rw.parse(["draw3"], view_with([cid("B5")]))


def test_parsed_commands_are_accepted_by_the_engine():
    """What the parser builds is what the engine wants: play a scenario through apply."""
    s = E.State.arranged(2, hands={0: ["B6", "B7", "B8", "G6", "W", "R9"], 1: ["Y6"]},
                         piles={0: ["P1"], 1: ["P2"]}, melds=[["Y9", "G9", ("W", 9)]])
    steps = ["meld B6 B7 B8", "swap W for R9 in m1", "add W to m2", "draw", "take B6 from m2"]
    for text in steps:
        view = E.view(s, 0)
        action = E.ACTIONS.decode(rw.parse(text.split(), view), "$.action")
        s, _ = E.apply(s, 0, action)
    view = E.view(s, 0)
    assert rw.hand_labels(view["hand"]) == ["B6", "G6", "P1", "W"]
    lines = rw.render_text(view, Ctx(("ann", "bob"), 0))
    assert "  m1 set of 9s: G9 Y9 R9" in lines
    assert "  m2 blue run 7-9: B7 B8 W=9" in lines
    assert lines[-1] == "your hand (4): B6 G6 P1 W | pile 0"
    assert lines[1] == "  ann (you): hand 4, pile 0, total 0"


def test_completion_offers_what_fits_the_command():
    run = meld(3, ["B6", "B7", "B8"])
    v = view_with([cid("B5"), cid("B9"), cid("G9"), W1, D3], [run])
    assert rw.complete(["meld", ""], v) == ["B5", "B9", "G9", "W"]
    assert rw.complete(["meld", "B5", ""], v) == ["B9", "G9", "W"]
    assert "D3" not in rw.complete(["add", ""], v)
    assert rw.complete(["add", "B9", ""], v) == ["to", "m3"]
    assert rw.complete(["take", ""], v) == ["B6", "B7", "B8"]
    assert rw.complete(["take", "B6", ""], v) == ["m3"]
    assert rw.complete(["draw3", ""], v) == ["D3"]


def test_events_read_as_sentences_and_flash():
    ctx = Ctx(("ann", "bob", "cy"), 0)
    assert rw.describe({"event": "meld_played", "seat": 1, "meld": 3, "kind": "set", "cards": [5, 17, 60],
                        "values": [6, 6, 6]}, ctx) == "bob played m3 (set of 6s): B6 G6 W=6"
    assert rw.describe({"event": "card_drawn", "seat": 0}, ctx) == "you drew a card"
    assert rw.describe({"event": "player_ready", "seat": 0}, ctx) == "you are ready"
    assert rw.describe({"event": "stuck_declared", "seat": 2}, ctx) == "cy is stuck"
    line = rw.describe({"event": "draw3_played", "seat": 1, "card": 69, "drawn": [3, 0, 2]}, ctx)
    assert line == "bob played Draw 3! drawn: you 3, cy 2"
    assert rw.flash({"event": "draw3_played", "seat": 1, "card": 69, "drawn": [3, 0, 2]}, ctx).startswith("Draw 3!")
    assert rw.flash({"event": "player_out", "seat": 0}, ctx).startswith("Out!")
    assert rw.flash({"event": "card_drawn", "seat": 0}, ctx) is None
    ended = rw.describe({"event": "round_ended", "round": 1, "reason": "out", "scores": [0, 35, None],
                         "totals": [0, 35, 10]}, ctx)
    assert ended == "round 1 over (someone went out): scores ann 0, bob 35; totals ann 0, bob 35, cy 10"
    # an event the module does not know still reads as a line
    assert "surprise" in rw.describe({"event": "surprise", "seat": 1}, ctx)


def test_rich_table_keeps_every_fact_in_words_for_no_colour():
    v = view_with([cid("B6"), W1, D3], [meld(1, ["R3", "R4", W2], [3, 4, 5])])
    v["players"][1]["stuck"] = True
    sec = rw_screen.render_rich(v, ctx_from([{"seat": 0, "name": "ann", "connected": True},
                                      {"seat": 1, "name": "bob", "connected": False}], 0))
    top, mid, bottom = sec.top.plain, sec.middle.plain, sec.bottom.plain
    assert "> ann" in top and "STUCK" in top and "offline" in top
    assert "m1 red run 3-5" in " ".join(mid.split()) and "W=5" in mid
    assert "B6 W D3" in bottom and "Your hand (3)" in bottom
    # cards carry their colour and a click handle that types them
    span = next(s for s in sec.bottom.spans if sec.bottom.plain[s.start:s.end] == "B6")
    assert "blue" in str(span.style) and "insert_handle('B6')" in str(span.style.meta)


def test_generic_fallback_shows_any_view_and_sends_raw_json():
    assert plugin_for("a-game-with-no-client-module") is generic and plugin_for("run-wild") is rw
    assert generic.parse(['act', '{"kind":', '"ask", "rank": 5}'], {}) == {"kind": "ask", "rank": 5}
    with pytest.raises(CommandError, match="JSON object"):
        generic.parse(["act", "[1]"], {})
    with pytest.raises(CommandError, match="use act"):
        generic.parse(["ask", "5"], {})
    lines = generic.render_text({"phase": "playing", "hand": [1, 2], "players": [{"seat": 0, "cards": 4}]},
                                Ctx(("ann",), 0))
    assert any("hand: [1, 2]" in x for x in lines)
    assert generic.describe({"event": "card_asked", "seat": 0, "rank": 5}, Ctx(("ann",), 0)) == 'you: card asked {"rank":5}'


def _bot_game(seed: int, seats: int, settings: dict) -> tuple[Counter, Counter, int]:
    """A whole game between bots against the engine, in a random interleaving; each seat
    acts on its own view only. Returns (accepted kinds, refusals, idle timeouts)."""
    rng = random.Random(seed)
    s = E.new_table(TableConfig("run-wild", seats, settings))
    kinds, refused, timeouts = Counter(), Counter(), 0
    for _ in range(20_000):
        req = E.pending_chance(s)
        if req is not None:
            perm = list(range(req.size))
            rng.shuffle(perm)
            s, _ = E.apply(s, None, ChanceOutcome(req.purpose, tuple(perm)))
            continue
        auto = E.auto_action(s)
        if auto is not None:
            s, _ = E.apply(s, None, auto)
            continue
        if E.outcome(s).over:
            return kinds, refused, timeouts
        order = list(range(seats))
        rng.shuffle(order)
        for seat in order:
            action = rw.choose(E.view(s, seat))
            if action is None:
                continue
            try:
                s, _ = E.apply(s, seat, E.ACTIONS.decode(action, "$.action"))
                kinds[action["kind"]] += 1
            except IllegalAction as e:
                refused[(action["kind"], e.code)] += 1
                raise AssertionError(f"the bot chose an action the engine refuses: {action} -> {e}") from None
            break
        else:
            t = E.timeout_action(s)
            s, _ = E.apply(s, t.seat, t.action)
            timeouts += 1
    raise AssertionError("a game between bots did not end")


def test_bots_play_whole_games_sensibly_against_the_engine():
    """Without races a bot's choice is always legal; bots end rounds themselves (going out
    or all stuck, never by the idle timer), and use every kind of play."""
    total = Counter()
    for seed in range(6):
        settings = {"rounds": 2} if seed % 2 else {"rounds": 1, "max_set_size": 4}
        kinds, refused, timeouts = _bot_game(seed, 2 + seed % 3, settings)
        assert timeouts == 0 and not refused
        total.update(kinds)
    for kind in ("ready", "meld", "draw", "add", "take", "draw3"):
        assert total[kind] > 0, (kind, total)


def test_bot_plays_draw3_at_a_rival_about_to_go_out_and_goes_out_with_one():
    v = view_with([cid("B1"), cid("G5"), D3])
    v["players"][1]["hand"] = 2
    assert rw.choose(v) == {"kind": "draw3", "card": D3}
    v["players"][1]["hand"] = 7
    assert rw.choose(v) == {"kind": "draw"}
    assert rw.choose(view_with([D3])) == {"kind": "draw3", "card": D3}


def test_bot_takes_and_swaps_to_complete_its_own_melds():
    # G7 Y7 in hand; a blue run 7-10 can spare its 7: take it, then meld a set of 7s
    v = view_with([cid("G7"), cid("Y7"), cid("R1")], [meld(2, ["B7", "B8", "B9", "B10"])], pile=0)
    assert rw.choose(v) == {"kind": "take", "meld": 2, "card": cid("B7")}
    v["hand"].append(cid("B7"))
    assert rw.choose(v) == {"kind": "meld", "cards": [cid("B7"), cid("G7"), cid("Y7")], "values": []}
    # G4 G5 and R9 in hand; a full set of 9s (cap 3) holds a wild that cannot be taken:
    # give R9 for it, then meld G4 G5 W
    capped = dict(E.default_settings(), max_set_size=3)
    v2 = view_with([cid("G4"), cid("G5"), cid("R9")], [meld(1, ["B9", "Y9", W1], [9, 9, 9])], pile=0,
                   settings=capped)
    assert rw.choose(v2) == {"kind": "swap", "meld": 1, "take": W1, "give": cid("R9"), "value": None}
    v2["hand"] = [cid("G4"), cid("G5"), W1]
    played = rw.choose(v2)
    assert played["kind"] == "meld" and sorted(played["cards"]) == [cid("G4"), cid("G5"), W1]
    assert sorted(played["values"]) in ([3, 4, 5], [4, 5, 6])
    # nothing to do and nothing to draw: stuck, once
    v3 = view_with([cid("Y1")], pile=0)
    assert rw.choose(v3) == {"kind": "stuck"}
    v3["players"][0]["stuck"] = True
    assert rw.choose(v3) is None
    # before Go!: ready, once
    assert rw.choose(view_with([], phase="ready", players=[dict(v3["players"][0], ready=False)])) == {"kind": "ready"}
