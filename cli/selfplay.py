"""Offline whole games between random legal players, for `wildtable selfplay` and tests.

Random players act in a random interleaving (standing in for simultaneous play in Run
Wild); the same seeded generator picks the shuffles, so a run can be repeated. Every
state-changing step is also returned as a log record, exactly as the server writes them.
"""

from __future__ import annotations

import random
from types import ModuleType
from typing import Any, Callable

import attrs

from wildtable.protocol.codec import to_data
from wildtable.protocol.engine import ChanceOutcome, TableConfig, log_hash
from wildtable.protocol.logfmt import (
    FORMAT_VERSION, HASH_EVERY, ActionAccepted, ChanceRecorded, Header, StateHashed,
)


@attrs.define
class Playout:
    game: ModuleType
    state: Any
    header: Header
    records: list
    steps: int
    events: list


def play(game: ModuleType, seats: int, settings: dict | None = None, *, seed: int | None = None,
         rng: random.Random | None = None, max_steps: int = 200_000, hash_every: int = HASH_EVERY,
         on_step: Callable[[Any, Any, Any, int | None, Any, tuple], None] | None = None,
         pick: Callable[[random.Random, list], Any] | None = None) -> Playout:
    """Play one whole game. ``on_step(before, after, action, seat, request, events)`` is
    called after every applied step (chance steps have seat None and action a ChanceOutcome)."""
    rng = rng or random.Random(seed)
    settings = dict(settings or {})
    state = game.new_table(TableConfig(game.NAME, seats, settings))
    header = Header(FORMAT_VERSION, game.NAME, "selfplay", seats, settings, rules=game.RULES_VERSION, created="")
    records: list = []
    all_events: list = []
    seq = 0
    for _ in range(max_steps):
        req = game.pending_chance(state)
        seat = None
        if req is not None:
            perm = list(range(req.size))
            rng.shuffle(perm)
            action = ChanceOutcome(req.purpose, tuple(perm))
            rec_fn: Callable[..., Any] = lambda s, a: ChanceRecorded(s, a.purpose, a.permutation)
        else:
            action = game.auto_action(state)
            by = "table"            # as the server logs them: the table's own actions,
            if action is None:      # a player's, and a default move the timer made
                by = "player"
                if game.outcome(state).over:
                    break
                movers = list(game.to_move(state))
                choices: list = []
                while movers and not choices:
                    seat = movers.pop(rng.randrange(len(movers)))
                    choices = game.legal_actions(state, seat)
                if not choices:
                    t = game.timeout_action(state)
                    if t is None:
                        raise RuntimeError(f"{game.NAME}: nobody can act and no timeout applies")
                    seat, action, by = t.seat, t.action, "timer"
                else:
                    action = pick(rng, choices) if pick else rng.choice(choices)
            rec_fn = lambda s, a, seat=seat, by=by: ActionAccepted(s, seat, to_data(a), by=by)
        before = state
        state, events = game.apply(state, seat, action)
        seq += 1
        records.append(rec_fn(seq, action))
        all_events.extend(events)
        if on_step is not None:
            on_step(before, state, action, seat, req, events)
        if hash_every and seq % hash_every == 0:
            records.append(StateHashed(seq, log_hash(game, state, FORMAT_VERSION)))
    else:
        raise RuntimeError(f"{game.NAME}: game did not end within {max_steps} steps")
    if hash_every:
        records.append(StateHashed(seq, log_hash(game, state, FORMAT_VERSION)))
    return Playout(game, state, header, records, seq, all_events)
