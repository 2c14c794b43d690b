"""Go Fish Wildcard's fished card reaches its fisher alone (docs/RULES.md, "Go Fish
Wildcard": "or say "go fish" and you draw one (its face is yours alone)"), in the frames
the server really sends (server/delivery.py: the shared part encoded once, each seat's
private part beside it).

test_delivery.py holds every frame to the engine's whole view, so a leak in the engine's
view or events passes there: here each frame is decoded and every card id it carries (a
hand, a bonus, a set, an event's cards) must be one its reader may see: its own hand's,
or a placed set's. A spectator may see set cards only."""

from __future__ import annotations

import random

import msgpack

from wildtable.protocol.engine import games
from wildtable.protocol.games.go_fish_wildcard import hand_ids
from wildtable.protocol.messages import SharedUpdate
from wildtable.selfplay import play
from wildtable.server.delivery import PrivateParts

SEATS = 4


def carried(frame: bytes) -> set[int]:
    """Every card id a Go Fish Wildcard update frame carries, wherever it sits."""
    msg = msgpack.unpackb(frame, raw=False, strict_map_key=False)
    view, out = msg["view"], set()
    out.update(view.get("hand") or ())
    out.update(view.get("bonus") or ())
    for p in view["players"]:
        for s in p["sets"]:
            out.update(s["cards"])
    for ev in msg["events"]:
        for key in ("card", "cards"):
            got = ev.get(key)
            out.update(got if isinstance(got, list) else () if got is None else (got,))
    return out


def test_a_fished_card_reaches_no_other_seat_and_no_spectator():
    game = games()["go-fish-wildcard"]
    parts = PrivateParts(game)
    steps: list = []
    rng = random.Random(11)
    while len(steps) < 1500:
        play(game, SEATS, {}, rng=rng, on_step=lambda before, after, action, seat, req, events:
             steps.append((before, after, tuple(events))))
    fished = 0
    for seq, (before, after, events) in enumerate(steps, 1):
        shared = SharedUpdate(seq, events, game.public_view(after))
        in_sets = {c for _, cards in after.sets for c in cards}
        frames = {seat: shared.frame_encoded(parts.part(after, seat)) for seat in (*range(SEATS), None)}
        for seat, frame in frames.items():
            may = in_sets | (set(hand_ids(after.hands[seat])) if seat is not None else set())
            leak = carried(frame) - may
            assert not leak, f"seq {seq}: seat {seat} is sent cards {sorted(leak)} it may not see"
        # the fish itself: the pile's top card went to the asker, and only the asker's frame has it
        if len(after.history) > len(before.history) and after.history[-1][4] and len(after.pile) < len(before.pile):
            fisher, card = after.history[-1][0], before.pile[0]
            if card in in_sets:
                continue            # set at once (a forced set): public from then on
            assert after.hands[fisher] >> card & 1, (seq, fisher, card)
            assert card in carried(frames[fisher]), (seq, fisher, card)     # the check sees a hand
            for seat in (*range(SEATS), None):
                if seat != fisher:
                    assert card not in carried(frames[seat]), f"seq {seq}: the fished card {card} sent to {seat}"
            fished += 1
    assert fished >= 50, fished          # the games fished often enough to show it
