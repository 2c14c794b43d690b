"""`wildtable replay LOG`: step through a table's log, forward and back, as any seat or
as an all-seeing observer, each record beside the state it produced.

The log is folded once into a timeline (headless/timeline.py: states are immutable, so
keeping one per record costs little); stepping back is then just looking at an earlier entry.
Rejected intents and their reasons, seat claims and hash checks are records too.
``--plain`` prints every record and the state after it as text.
"""

from __future__ import annotations

import sys
from typing import Any, ClassVar

from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Input, Static

from wildtable.protocol.errors import IllegalAction, LogError
from wildtable.protocol.logfmt import ActionAccepted, ChanceRecorded, read_log

# the timeline is shared with the web replay viewer (server/replays.py)
from wildtable.headless.timeline import ALL, Timeline, parse_perspective


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
    BINDINGS: ClassVar[list[BindingType]] = [
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
        *(Binding(str(d), f"see({d})", f"Seat {d}", show=False) for d in range(10)),
    ]

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
