"""A table's log as a timeline: every record with the table as it stood right after it,
for stepping forward and back (`wildtable replay`'s viewer, and the web replay viewer that
server/replays.py serves). The states come from the game's own engine (protocol/), folded
record by record; nothing here is rewritten per game but the words (headless/games).

A timeline keeps the state after every ``keep_every``-th record (every one by default:
states are immutable and share most of their parts, so that costs little for one log on
the player's own machine); ``step(i)`` gives any record's full step, folding forward from
the nearest kept state when it was not kept (the server keeps one in 32: a few records
applied per request, and a small fraction of the memory).
"""

from __future__ import annotations

import json
import time
from typing import Any

import attrs

from wildtable.protocol.engine import ChanceOutcome, log_hash
from wildtable.protocol.errors import IllegalAction, ProtocolError
from wildtable.protocol.logfmt import (
    ActionAccepted, ChanceRecorded, IntentRejected, LogContents, SeatClaimed, StateHashed,
)
from wildtable.protocol.replay import initial_state

from . import games
from .games import Ctx

ALL = "all"             # the all-seeing perspective
SPECTATOR = "spectator"


@attrs.frozen
class Step:
    """One record and the table as it stood right after it."""
    record: Any                 # None for the header step
    seq: int
    state: Any                  # None where the timeline did not keep it: Timeline.step(i) folds it
    events: tuple
    names: tuple[str, ...]
    problem: str | None = None  # why a logged action no longer applies / a hash differs


#: chance outcomes that draw a seat by lot (docs/DECISIONS.md "All games": who deals or starts
#: first), and what the seat drawn does
_DRAWN_BY_LOT = {"first_dealer": "deals first", "dealer": "deals", "first_player": "starts"}


class Timeline:
    """Every record of a log with the state after it; step 0 is the header's new table."""

    def __init__(self, contents: LogContents, keep_every: int = 1):
        if keep_every < 1:
            raise ValueError(f"keep_every wants 1 or more, not {keep_every}")
        self.contents = contents
        self.header = contents.header
        self.keep_every = keep_every
        self.game, state = initial_state(contents.header)
        self.plugin = games.plugin_for(self.game.NAME)
        names = [""] * contents.header.seats
        seq = 0
        self.steps: list[Step] = [Step(None, 0, state, (), tuple(names))]
        for r in contents.records:
            t = type(r)
            problem = None
            if t is ActionAccepted or t is ChanceRecorded:
                state, events, problem = self._apply(state, r)
                seq = r.seq
            else:
                events = ()
            if t is SeatClaimed:
                if 0 <= r.seat < len(names):
                    names[r.seat] = r.name
                else:
                    problem = f"there is no seat {r.seat} at this {len(names)}-seat table: the log was edited"
            elif t is StateHashed:
                if r.seq != seq:
                    problem = (f"this hash is for seq {r.seq} but follows seq {seq}: hashes follow the record "
                               f"they hash, so the log was moved or edited")
                elif log_hash(self.game, state, contents.header.format) != r.hash:
                    problem = "the replayed state differs from this hash: the rules changed since this game"
            kept = len(self.steps) % keep_every == 0
            self.steps.append(Step(r, seq, state if kept else None, events if kept else (), tuple(names), problem))

    def _apply(self, state: Any, r: Any) -> tuple[Any, tuple, str | None]:
        """The state after action or chance record ``r``, its events, and why it no longer
        applies (the state is then left as it was)."""
        try:
            if type(r) is ActionAccepted:
                action = self.game.ACTIONS.decode(r.action, "$.action")
                state, evs = self.game.apply(state, r.seat, action)
            else:
                state, evs = self.game.apply(state, None, ChanceOutcome(r.purpose, r.permutation))
            return state, tuple(evs), None
        except (IllegalAction, ProtocolError) as e:
            return state, (), f"this record no longer applies: {e}"

    def step(self, i: int) -> Step:
        """Record ``i``'s step with its state and events, folded forward from the nearest
        kept state if they were not kept."""
        s = self.steps[i]
        if s.state is not None:
            return s
        k = i - i % self.keep_every
        state = self.steps[k].state
        events: tuple = ()
        for j in range(k + 1, i + 1):
            r = self.steps[j].record
            if type(r) is ActionAccepted or type(r) is ChanceRecorded:
                state, events, _ = self._apply(state, r)
            else:
                events = ()
        return attrs.evolve(s, state=state, events=events)

    def __len__(self) -> int:
        return len(self.steps)

    def index_of_seq(self, seq: int) -> int:
        """The step of the record with this seq (or the last one before it)."""
        best = 0
        for i, s in enumerate(self.steps):
            if type(s.record) in (ActionAccepted, ChanceRecorded) and s.record.seq <= seq:
                best = i
        return best

    def next_rejected(self, after: int) -> int | None:
        for i in range(after + 1, len(self.steps)):
            if type(self.steps[i].record) is IntentRejected:
                return i
        return None

    def ctx(self, i: int, seat: int | None = None) -> Ctx:
        return Ctx(self.steps[i].names, seat)

    # ------------------------------------------------------------ text
    def action_text(self, action: dict) -> str:
        label = getattr(self.plugin, "label_action", None)
        if label is not None and isinstance(action, dict) and isinstance(action.get("kind"), str):
            try:
                text = label(action)
            except (LookupError, TypeError, ValueError, AttributeError):
                text = None     # a refused intent may name cards or melds that do not exist: show it raw
            if isinstance(text, str) and text:
                return text
        return raw(action)

    @staticmethod
    def hidden_from(r: Any, perspective: Any) -> bool:
        """Whether ``perspective`` may not see what rejected intent ``r`` asked for: a seat
        sees its own refused intents only (their cards would show another hand); a
        spectator sees none. The all-seeing view sees them all."""
        return perspective != ALL and type(r) is IntentRejected and r.seat != perspective

    def record_line(self, i: int, perspective: Any = ALL) -> str:
        """One line naming record ``i``, as ``perspective`` may see it."""
        step = self.steps[i]
        r = step.record
        ctx = self.ctx(i)
        t = type(r)
        if r is None:
            h = self.header
            return f"header: {h.game}, table {h.table}, {h.seats} seats, settings {json.dumps(h.settings)}"
        if t is ChanceRecorded:
            verb = _DRAWN_BY_LOT.get(r.purpose)
            if verb and r.permutation:          # a permutation of the seats: its first item is drawn
                return f"seq {r.seq}: chance ({r.purpose}): {ctx.seat_label(r.permutation[0])} {verb}, drawn by lot"
            return f"seq {r.seq}: chance ({r.purpose}): a shuffle of {len(r.permutation)}"
        if t is ActionAccepted:
            who = ctx.seat_label(r.seat) if r.seat is not None else f"the {r.by}"
            return f"seq {r.seq}: {who}: {self.action_text(r.action)}"
        if t is IntentRejected:
            who = ctx.seat_label(r.seat) if r.seat is not None else "?"
            what = "(not shown to this view)" if self.hidden_from(r, perspective) else self.action_text(r.action)
            return f"REJECTED after seq {r.after}: {who}: {what} - {r.code}"
        if t is SeatClaimed:
            return f"seat {r.seat} {'claimed by ' + r.name if r.token_hash else 'released by ' + r.name}"
        if t is StateHashed:
            return f"hash at seq {r.seq}: {r.hash.hex()[:12]}" + (" DIFFERS" if step.problem else " ok")
        return f"{type(r).__name__}"

    def detail_lines(self, i: int, perspective: Any = ALL) -> list[str]:
        """Record ``i`` in full: what it says and what it did, as ``perspective`` may see it."""
        step = self.step(i)
        r = step.record
        ctx = self.ctx(i)
        lines = [self.record_line(i, perspective)]
        if type(r) is ActionAccepted:
            extra = [f"by {r.by}"]
            if r.intent is not None:
                extra.append(f"intent {r.intent}")
            lines.append("  " + ", ".join(extra) + f"; action {raw(r.action)}")
        if type(r) is IntentRejected and self.hidden_from(r, perspective):
            lines.append("  what another seat sent, and why it was refused, are not shown to this view")
        elif type(r) is IntentRejected:
            lines.append(f"  reason: {r.reason}")
            lines.append(f"  checked against the state after seq {r.after}; intent {r.intent}")
        if type(r) in (ActionAccepted, IntentRejected) and not self.hidden_from(r, perspective):
            lines.extend(self.order_lines(i, perspective))
        for ev in step.events:
            text = self.plugin.describe(ev, ctx)
            if text:
                lines.append("  -> " + text)
        if step.problem:
            lines.append("  PROBLEM: " + step.problem)
        return lines

    #: how many records after an intent's are looked at for intents it went ahead of
    OVERTAKEN_WINDOW = 32

    def order_lines(self, i: int, perspective: Any = ALL) -> list[str]:
        """When record ``i``'s intent arrived, and at a table in fair order (Run Wild,
        fair_ms > 0) what put it where it is in the log: its connection's delay estimate,
        the send time it was ordered by, the hold; and the intents that arrived before it
        yet come after it in the log, because they were sent later (docs/LOG-FORMAT.md)."""
        r = self.steps[i].record
        if r.recv is None:
            return []
        out = [f"  arrived {_clock(r.recv)}"]
        if r.sent is None:
            return out
        out[0] += (f", delay estimate {r.delay * 1000:.1f} ms, sent {_clock(r.sent)} "
                   f"({(r.recv - r.sent) * 1000:.1f} ms before it arrived), held up to {r.hold * 1000:.0f} ms")
        for k in range(i + 1, min(len(self.steps), i + 1 + self.OVERTAKEN_WINDOW)):
            o = self.steps[k].record
            if (type(o) in (ActionAccepted, IntentRejected) and o.recv is not None and o.sent is not None
                    and o.recv < r.recv and o.seat != r.seat and not self.hidden_from(o, perspective)):
                where = f"seq {o.seq}" if type(o) is ActionAccepted else f"refused after seq {o.after}"
                out.append(f"  went ahead of {self.ctx(k).seat_label(o.seat)}'s intent {o.intent} ({where}), "
                           f"which arrived {(r.recv - o.recv) * 1000:.1f} ms earlier but acted "
                           f"{(self.acted(o) - self.acted(r)) * 1000:.1f} ms later")
        return out

    def acted(self, r: Any) -> float:
        """The time a logged intent was ordered by (Unix time): its send time less the
        delay with which its player saw the table, that delay capped at the table's
        fair_ms (docs/LOG-FORMAT.md, "Fair order")."""
        cap = self.header.settings.get("fair_ms", self.game.default_settings().get("fair_ms", 0)) / 1000
        return r.sent - min(r.delay, cap)

    def state_lines(self, i: int, perspective: Any) -> list[str]:
        """The state after record ``i`` as ``perspective`` (ALL, SPECTATOR or a seat) sees it."""
        step = self.step(i)
        if perspective == ALL:
            snap = self.game.snapshot(step.state)
            render = getattr(self.plugin, "render_snapshot", None) or games.plugin_for(None).render_snapshot
            return render(snap, self.ctx(i))
        seat = None if perspective == SPECTATOR else perspective
        return self.plugin.render_text(self.game.view(step.state, seat), self.ctx(i, seat))

    def perspective_name(self, i: int, perspective: Any) -> str:
        if perspective == ALL:
            return "all-seeing"
        if perspective == SPECTATOR:
            return "spectator"
        return f"seat {perspective} ({self.ctx(i).seat_label(perspective)})"


def parse_perspective(value: str | None, seats: int) -> Any:
    if value is None or value in (ALL, "all-seeing"):
        return ALL
    if value == SPECTATOR:
        return SPECTATOR
    if value.isascii() and value.isdigit() and len(value) <= 3 and int(value) < seats:
        return int(value)
    raise ValueError(f"--seat wants 0..{seats - 1}, all or spectator, not {value!r}")


def _clock(t: float) -> str:
    """A logged Unix time as UTC clock time to the millisecond."""
    return time.strftime("%H:%M:%S", time.gmtime(t)) + f".{int(t * 1000) % 1000:03d} UTC"


def raw(value: Any) -> str:
    """A map as compact JSON, as a client sent it: byte strings (which msgpack carries
    and JSON does not) as hex."""
    return json.dumps(value, separators=(",", ":"),
                      default=lambda x: x.hex() if isinstance(x, (bytes, bytearray)) else repr(x))
