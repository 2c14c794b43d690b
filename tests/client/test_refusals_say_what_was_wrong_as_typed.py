"""Refusals the client gives itself in the turn-based games say what was wrong with the
command as typed (views from the real engines, dealt with a fixed deck)."""

from __future__ import annotations

import pytest

from wildtable.headless.games import CommandError
from wildtable.headless.games import go_fish_wildcard as gf
from wildtable.headless.games import go_wild as gw
from wildtable.headless.games import wild_shots as ws
from wildtable.protocol.engine import ChanceOutcome, TableConfig, game


def dealt_view(name: str, seats: int, seat: int, settings: dict) -> dict:
    """``seat``'s view right after the deal (identity shuffles)."""
    E = game(name)
    s = E.new_table(TableConfig(name, seats, settings))
    while (req := E.pending_chance(s)) is not None:
        s, _ = E.apply(s, None, ChanceOutcome(req.purpose, tuple(range(req.size))))
    return E.view(s, seat)


def refusal(parse, text: str, view: dict) -> str:
    with pytest.raises(CommandError) as e:
        parse(text.split(), view)
    return str(e.value)


def test_go_wild_play_with_wilds_you_lack_does_not_speak_of_sloughing():
    v = dealt_view("go-wild", 2, 0, {"first_player": 0})
    held = [c for c in v["hand"] if gw.colour_of(c) != gw.WILD]
    v = dict(v, hand=held)                      # the same hand without its wilds, if any
    col = gw.NAMES[gw.colour_of(held[0])]
    said = refusal(gw.parse, f"play 1 {col} 1 wild", v)
    assert said.startswith("you hold no wild card;"), said
    assert "slough" not in said
    assert refusal(gw.parse, "slough", v).startswith("you hold no wild card to slough;")


def test_wild_shots_two_cards_in_words_are_one_card_at_a_time():
    v = dealt_view("wild-shots", 2, 0, {"first_player": 0})
    assert refusal(ws.parse, "play red 3 blue 4", v) == "play one card at a time, e.g. play R3"
    assert refusal(ws.parse, "play R3 R4", v) == "play one card at a time, e.g. play R3"
    assert "is not a card" in refusal(ws.parse, "play black one", v)


def test_go_fish_ask_naming_only_a_player_asks_for_the_rank():
    v = dealt_view("go-fish-wildcard", 3, 1, {"dealer": 0})
    said = refusal(gf.parse, "ask p2", v)
    assert said == "ask p2 for what? name a rank you hold, e.g. ask p2 for 7s", said
    assert refusal(gf.parse, "ask 7", v).startswith("ask whom?")
