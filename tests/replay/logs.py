"""Logs for the replay tests: a selfplay game written as the server writes it, with
refused intents put in where a server would log them (selfplay refuses nothing)."""

from __future__ import annotations

from wildtable.protocol.engine import game as find_game
from wildtable.protocol.logfmt import ActionAccepted, IntentRejected, encode_record
from wildtable.selfplay import play


def selfplay_log(game: str = "run-wild", seats: int = 3, seed: int = 7, settings: dict | None = None,
                 refused: int = 0) -> bytes:
    """The bytes of a whole game's log; with ``refused``, that many refused intents, one
    after every 20th action, each of the seat that acted, asking for a card id 999."""
    out = play(find_game(game), seats, settings if settings is not None else {"rounds": 1}, seed=seed)
    records = []
    n = 0
    for r in out.records:
        records.append(r)
        if refused and type(r) is ActionAccepted and r.seat is not None and n < refused and r.seq % 20 == 0:
            records.append(IntentRejected(r.seq, r.seat, {"kind": "discard", "card": 999}, "no_such_card",
                                          "you hold no card 999", intent=100 + n))
            n += 1
    assert n == refused, "the game is too short for that many refused intents"
    return encode_record(out.header) + b"".join(encode_record(r) for r in records)
