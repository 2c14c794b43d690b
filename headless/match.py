"""One whole game between bots, offline: the real engine, the real bots' decisions, no sockets.

The arena (``wildtable arena``) and the fairness tests measure the bots here, so every bot
decides as it does at a real table (mind.py: the game's ``candidates``, its level's
misses and paces) from what its own seat is sent: after every update each seat's view is
packed and unpacked as the wire carries it, and handed to that seat's Mind only.

Time is simulated, as the server's clock would run: a bot that sees the table change waits
its level's reaction time, then decides on the table as it is then (Run Wild's bots race
one another at their levels' paces, docs/PLAYING.md "Bot levels"); the table's timers
(``timeout_action``) fire at their deadlines. A game is a pure function of its seeds: the
deal's (every shuffle) and the bots' (every draw a bot makes).
"""

from __future__ import annotations

import math
import random
import time
from typing import Any, Callable

import attrs

from wildtable.protocol.codec import packb, to_data, unpackb
from wildtable.protocol.engine import ChanceOutcome, TableConfig, game as find_game, log_hash
from wildtable.protocol.errors import IllegalAction, ProtocolError
from wildtable.protocol.logfmt import (
    FORMAT_VERSION, HASH_EVERY, ActionAccepted, ChanceRecorded, Header, StateHashed,
)

from . import games
from .bots import IDLE_LOOK
from .mind import Mind

MAX_STEPS = 100_000


class MatchError(Exception):
    """A game the bots could not finish (the message says where it stuck)."""


@attrs.frozen
class Played:
    """What one game showed: who won, who was asked (Go Fish Wildcard), how long each
    decision took (ms, per seat), and the log, as the server writes it."""
    game: str
    levels: tuple[str, ...]
    winners: tuple[int, ...]
    scores: tuple[int, ...]
    asked: tuple[int, ...]                   # asks each seat received ("asked" events)
    move_ms: tuple[tuple[float, ...], ...]   # per seat: CPU ms of each decision that chose a move
    header: Header
    records: tuple


def _wire(view: dict) -> dict:
    """The view as a client holds it: packed and unpacked as the wire carries it."""
    return unpackb(packb(view))


def play_match(game_name: str, levels: tuple[str, ...], deal_seed: int, bot_seed: int,
               settings: dict | None = None,
               observe: Callable[[Any, int, dict, Mind], None] | None = None) -> Played:
    """Play one game: seat i is a bot at ``levels[i]``. ``deal_seed`` draws every shuffle
    (the same seed deals the same cards whoever sits where: the arena's --rotate);
    ``bot_seed`` seeds each bot's own generator. ``observe(state, seat, view, mind)`` is
    called before each decision (tests: what a bot knows against the true state)."""
    game = find_game(game_name)
    plugin = games.plugin_for(game_name)
    n = len(levels)
    settings = dict(settings or {})
    deal_rng = random.Random(deal_seed)
    seeder = random.Random(bot_seed)
    minds = [Mind(level, rng=random.Random(seeder.getrandbits(64))) for level in levels]
    for mind in minds:
        mind.seated(plugin)
    state = game.new_table(TableConfig(game.NAME, n, settings))
    header = Header(FORMAT_VERSION, game.NAME, "arena", n, settings, rules=game.RULES_VERSION, created="")
    records: list = []
    asked = [0] * n
    move_ms: list[list[float]] = [[] for _ in range(n)]
    views: list[dict | None] = [None] * n
    watching = hasattr(plugin, "bot_watch")     # the game's bots remember what each update shows
    wake: list[float] = [math.inf] * n       # when each bot next looks and decides
    refused: list[set] = [set() for _ in range(n)]
    seq = 0
    now = 0.0
    last_change = 0.0

    def record(rec: Any) -> None:
        records.append(rec)
        if seq % HASH_EVERY == 0:
            records.append(StateHashed(seq, log_hash(game, state, FORMAT_VERSION)))

    def step(seat: int | None, action: Any, by: str) -> None:
        nonlocal state, seq
        state, events = game.apply(state, seat, action)
        seq += 1
        for ev in events:
            if isinstance(ev, dict) and ev.get("event") == "asked" and isinstance(ev.get("target"), int):
                asked[ev["target"]] += 1
        record(ActionAccepted(seq, seat, to_data(action), by=by))

    def settle() -> None:
        """The table's own steps (shuffles, automatic moves), then one update to every seat."""
        nonlocal state, seq, last_change
        while True:
            req = game.pending_chance(state)
            if req is not None:
                perm = list(range(req.size))
                deal_rng.shuffle(perm)
                state, _ = game.apply(state, None, ChanceOutcome(req.purpose, tuple(perm)))
                seq += 1
                record(ChanceRecorded(seq, req.purpose, tuple(perm)))
                continue
            auto = game.auto_action(state)
            if auto is None:
                break
            step(None, auto, "table")
        last_change = now
        movers = set(game.to_move(state))
        for s in range(n):
            views[s] = None
            refused[s] = set()
            if watching:
                minds[s].watch(plugin, view_of(s), now)
            if s not in movers:
                # a seat the table does not wait for has nothing to play: its bot would look
                # and find nothing (its candidates are empty), so it is not woken (speed)
                wake[s] = math.inf
            elif wake[s] == math.inf:                    # an idle bot sees the change
                wake[s] = now + minds[s].reaction_time()

    def view_of(s: int) -> dict:
        """Seat ``s``'s view of the table now, as the wire carried it (made once per update)."""
        v = views[s]
        if v is None:
            v = views[s] = _wire(game.view(state, s))
        return v

    settle()
    for _ in range(MAX_STEPS):
        if game.outcome(state).over:
            break
        timeout = game.timeout_action(state)
        due = last_change + timeout.seconds if timeout is not None else math.inf
        s = min(range(n), key=lambda i: (wake[i], i))
        if due <= wake[s]:
            if due == math.inf:
                raise MatchError(f"{game_name}: no bot acts and no timer runs (seq {seq})")
            now = due
            step(timeout.seat, timeout.action, "timer")
            settle()
            continue
        now = wake[s]
        mind = minds[s]
        if observe is not None:
            observe(state, s, view_of(s), mind)
        t0 = time.thread_time()     # CPU time on one core: the same on a busy machine
        choice = mind.choose(plugin, view_of(s), now, refused[s])
        took = (time.thread_time() - t0) * 1000
        if choice is None:
            # nothing to do: the bot looks again when the table changes, or after a while
            wake[s] = now + IDLE_LOOK + mind.reaction_time()
            continue
        move_ms[s].append(took)
        try:
            action = game.ACTIONS.decode(choice, "$.action")
            step(s, action, "player")
        except (IllegalAction, ProtocolError):
            refused[s].add(plugin.action_key(choice))    # as the server refuses it: not again until a change
            wake[s] = now + mind.reaction_time()
            continue
        wake[s] = math.inf
        settle()
    else:
        raise MatchError(f"{game_name}: the game did not end within {MAX_STEPS} moves")
    if not records or not isinstance(records[-1], StateHashed):
        records.append(StateHashed(seq, log_hash(game, state, FORMAT_VERSION)))
    o = game.outcome(state)
    return Played(game_name, tuple(levels), tuple(o.winners), tuple(o.scores), tuple(asked),
                  tuple(tuple(x) for x in move_ms), header, tuple(records))
