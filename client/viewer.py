"""`wildtable replay LOG`: step through a table's log, forward and back, as any seat or
as an all-seeing observer, each record beside the state it produced.

The log is folded once into a timeline (states are immutable, so keeping one per
record costs little); stepping back is then just looking at an earlier entry.
Rejected intents and their reasons, seat claims and hash checks are records too.
``--plain`` prints every record and the state after it as text.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any

import attrs
from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Input, Static

from wildtable.protocol.engine import ChanceOutcome, state_hash
from wildtable.protocol.errors import IllegalAction, LogError, ProtocolError
from wildtable.protocol.logfmt import (
    ActionAccepted, ChanceRecorded, IntentRejected, LogContents, SeatClaimed, StateHashed, read_log,
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
    state: Any
    events: tuple
    names: tuple[str, ...]
    problem: str | None = None  # why a logged action no longer applies / a hash differs


#: chance outcomes that draw a seat by lot (DECISIONS "All games": who deals or starts
#: first), and what the seat drawn does
_DRAWN_BY_LOT = {"first_dealer": "deals first", "dealer": "deals", "first_player": "starts"}


class Timeline:
    """Every record of a log with the state after it; step 0 is the header's new table."""

    def __init__(self, contents: LogContents):
        self.contents = contents
        self.header = contents.header
        self.game, state = initial_state(contents.header)
        self.plugin = games.plugin_for(self.game.NAME)
        names = [""] * contents.header.seats
        seq = 0
        self.steps: list[Step] = [Step(None, 0, state, (), tuple(names))]
        for r in contents.records:
            events: tuple = ()
            problem = None
            t = type(r)
            if t is ActionAccepted or t is ChanceRecorded:
                try:
                    if t is ActionAccepted:
                        action = self.game.ACTIONS.decode(r.action, "$.action")
                        state, evs = self.game.apply(state, r.seat, action)
                    else:
                        state, evs = self.game.apply(state, None, ChanceOutcome(r.purpose, r.permutation))
                    events = tuple(evs)
                except (IllegalAction, ProtocolError) as e:
                    problem = f"this record no longer applies: {e}"
                seq = r.seq
            elif t is SeatClaimed:
                if 0 <= r.seat < len(names):
                    names[r.seat] = r.name
                else:
                    problem = f"there is no seat {r.seat} at this {len(names)}-seat table: the log was edited"
            elif t is StateHashed:
                if r.seq != seq:
                    problem = (f"this hash is for seq {r.seq} but follows seq {seq}: hashes follow the record "
                               f"they hash, so the log was moved or edited")
                elif state_hash(self.game, state) != r.hash:
                    problem = "the replayed state differs from this hash: the rules changed since this game"
            self.steps.append(Step(r, seq, state, events, tuple(names), problem))

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
    def _action_text(self, action: dict) -> str:
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
            return f"seq {r.seq}: {who}: {self._action_text(r.action)}"
        if t is IntentRejected:
            who = ctx.seat_label(r.seat) if r.seat is not None else "?"
            what = "(not shown to this view)" if self.hidden_from(r, perspective) else self._action_text(r.action)
            return f"REJECTED after seq {r.after}: {who}: {what} - {r.code}"
        if t is SeatClaimed:
            return f"seat {r.seat} {'claimed by ' + r.name if r.token_hash else 'released by ' + r.name}"
        if t is StateHashed:
            return f"hash at seq {r.seq}: {r.hash.hex()[:12]}" + (" DIFFERS" if step.problem else " ok")
        return f"{type(r).__name__}"

    def detail_lines(self, i: int, perspective: Any = ALL) -> list[str]:
        """Record ``i`` in full: what it says and what it did, as ``perspective`` may see it."""
        step = self.steps[i]
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
        step = self.steps[i]
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


# ---------------------------------------------------------------- plain

def print_plain(timeline: Timeline, perspective: Any, upto: int | None, out=sys.stdout) -> None:
    """Every record, then the state after it (indented), down to seq ``upto``."""
    if upto is not None:
        upto = max(upto, 0)         # as --json and --verify: below 0 is the table before any record
    for i, step in enumerate(timeline.steps):
        if upto is not None and step.seq > upto:
            break
        for line in timeline.detail_lines(i, perspective):
            out.write(f"[{i:>4}] {line}\n")
        if i == 0 or type(step.record) in (ActionAccepted, ChanceRecorded):
            for line in timeline.state_lines(i, perspective):
                out.write(f"       | {line}\n")


# ---------------------------------------------------------------- interactive

class JumpInput(Input):
    """The seq prompt of the g key; Esc puts it away."""
    BINDINGS = [Binding("escape", "cancel", "Cancel", show=False)]

    def action_cancel(self) -> None:
        self.value = ""
        self.display = False
        self.app.set_focus(None)


class ViewerApp(App):
    """Step with the arrow keys; 0-9 a seat's view, a all-seeing, s spectator."""

    TITLE = "wildtable replay"
    AUTO_FOCUS = None       # keys step the log; the seq prompt takes focus only when asked for
    CSS = """
    #top { height: 1; background: $primary; color: $text; }
    #body { height: 1fr; }
    #left { width: 1fr; }
    #records { height: 1fr; text-wrap: nowrap; text-overflow: ellipsis; }
    #detail { height: auto; max-height: 9; border-top: solid $primary; }
    #state-box { width: 1fr; border-left: solid $primary; }
    #keys { height: 1; color: $text-muted; }
    #note { height: auto; max-height: 2; color: $warning; }
    #jump { height: 1; border: none; padding: 0; display: none; }
    """
    BINDINGS = [
        Binding("right,l,n,space", "step(1)", "Next"),
        Binding("left,h,p,backspace", "step(-1)", "Back"),
        Binding("pagedown", "step(10)", "+10", show=False),
        Binding("pageup", "step(-10)", "-10", show=False),
        Binding("home", "go(0)", "First", show=False),
        Binding("end", "go(-1)", "Last", show=False),
        Binding("g", "ask_seq", "Jump to seq"),
        Binding("r", "next_rejected", "Next rejected"),
        Binding("a", "see('all')", "All-seeing"),
        Binding("s", "see('spectator')", "Spectator"),
        Binding("q,escape", "quit", "Quit"),
    ] + [Binding(str(d), f"see({d})", f"Seat {d}", show=False) for d in range(10)]

    def __init__(self, timeline: Timeline, name: str, perspective: Any = ALL, start: int = 0):
        super().__init__()
        self.timeline = timeline
        self.log_name = name
        self.perspective = perspective
        self.index = start

    def compose(self) -> ComposeResult:
        yield Static(id="top")
        with Horizontal(id="body"):
            with Vertical(id="left"):
                yield Static(id="records")
                yield Static(id="detail")
            with VerticalScroll(id="state-box"):
                yield Static(id="state")
        yield Static(id="note")
        yield JumpInput(id="jump", placeholder="seq to jump to, Enter (Esc cancels)")
        yield Static("<- -> step  PgUp/PgDn 10  g seq  r rejected  0-9 seat  a all  s spectator  q quit",
                     id="keys")

    def on_mount(self) -> None:
        self.show()

    def note(self, text: str = "") -> None:
        """A line saying why a key did nothing (empty: clear it)."""
        self.query_one("#note", Static).update(Text(text))
        if text:
            self.bell()

    def show(self) -> None:
        tl = self.timeline
        i = self.index
        step = tl.steps[i]
        self.query_one("#top", Static).update(Text(
            f" {self.log_name} | {tl.game.TITLE} | record {i}/{len(tl) - 1} | seq {step.seq} | "
            f"view: {tl.perspective_name(i, self.perspective)}"))
        height = max(5, self.query_one("#records", Static).size.height or 12)
        lo = max(0, min(i - height // 2, len(tl) - height))
        rec = Text(no_wrap=True, overflow="ellipsis")
        for k in range(lo, min(len(tl), lo + height)):
            if k > lo:
                rec.append("\n")
            line = tl.record_line(k, self.perspective)
            style = "reverse bold" if k == i else ("red" if line.startswith("REJECTED") else "")
            rec.append(("> " if k == i else "  ") + line, style)
        self.query_one("#records", Static).update(rec)
        self.query_one("#detail", Static).update(Text("\n".join(tl.detail_lines(i, self.perspective))))
        self.query_one("#state", Static).update(Text("\n".join(tl.state_lines(i, self.perspective))))

    def action_step(self, delta: int) -> None:
        last = len(self.timeline) - 1
        index = max(0, min(last, self.index + delta))
        if index == self.index:
            self.note("this is the first record" if delta < 0 else "this is the last record")
            return
        self.index = index
        self.note()
        self.show()

    def action_go(self, where: int) -> None:
        self.index = where % len(self.timeline)
        self.note()
        self.show()

    def action_next_rejected(self) -> None:
        nxt = self.timeline.next_rejected(self.index)
        if nxt is None:
            any_at_all = self.timeline.next_rejected(-1) is not None
            self.note("no rejected intent after this record (Home goes back to the first)" if any_at_all else
                      "this log has no rejected intents: r has nothing to jump to")
            return
        self.index = nxt
        self.note()
        self.show()

    def action_see(self, who: Any) -> None:
        seats = self.timeline.header.seats
        if isinstance(who, int) and who >= seats:
            self.note(f"there is no seat {who}: this table has {seats} seats, 0 to {seats - 1}")
            return
        self.perspective = who
        self.note()
        self.show()

    def action_ask_seq(self) -> None:
        box = self.query_one("#jump", Input)
        box.display = True
        box.value = ""
        box.focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        box = self.query_one("#jump", Input)
        box.display = False
        self.set_focus(None)
        text = event.value.strip()
        if text.isascii() and text.isdigit() and len(text) <= 18:
            seq = int(text)
            self.index = self.timeline.index_of_seq(seq)
            last = self.timeline.steps[-1].seq
            self.note(f"the last seq is {last}: showing it" if seq > last else "")
            self.show()
        elif text:
            self.note(f"g wants a seq, a number from 0 to {self.timeline.steps[-1].seq}, not {text[:30]!r}")

    def on_resize(self) -> None:
        self.show()


def viewer_main(args, data: bytes) -> int:
    try:
        contents = read_log(data)
        timeline = Timeline(contents)
    except (LogError, IllegalAction) as e:
        print(f"wildtable replay: {args.log}: {e}", file=sys.stderr)
        return 1
    try:
        perspective = parse_perspective(getattr(args, "seat", None), contents.header.seats)
    except ValueError as e:
        print(f"wildtable replay: {e}", file=sys.stderr)
        return 2
    if contents.torn is not None:
        print(f"warning: {args.log}: torn tail of {contents.torn.dropped} bytes ignored", file=sys.stderr)
    if args.plain or not (sys.stdin.isatty() and sys.stdout.isatty()):
        print_plain(timeline, perspective, args.upto)
        return 0
    start = timeline.index_of_seq(args.upto) if args.upto is not None else 0
    ViewerApp(timeline, str(args.log), perspective, start).run()
    return 0
