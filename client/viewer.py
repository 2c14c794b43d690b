"""`wildtable replay LOG`: step through a table's log, forward and back, as any seat or
as an all-seeing observer, each record beside the state it produced.

The log is folded once into a timeline (headless/timeline.py: states are immutable, so
keeping one per record costs little); stepping back is then just looking at an earlier entry.
Rejected intents and their reasons, seat claims and hash checks are records too.
``--plain`` (cli/replay_plain.py, no Textual) prints every record and the state after it as text.
"""

from __future__ import annotations

import bisect
from typing import Any, ClassVar

from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Input, Static


# the timeline is shared with the web replay viewer (server/replays.py)
from wildtable.headless.timeline import ALL, Timeline
from wildtable.headless.find import Filter, matching, parse_filter, search


# ---------------------------------------------------------------- interactive

class JumpInput(Input):
    """The prompt of the g, /, ? and f keys (``mode`` says which); Esc puts it away."""
    mode = "seq"
    BINDINGS = [Binding("escape", "cancel", "Cancel", show=False)]

    def action_cancel(self) -> None:
        self.value = ""
        self.display = False
        self.app.set_focus(None)


class ViewerApp(App):
    """Step with the arrow keys; 0-9 a seat's view, a all-seeing, s spectator; / and ?
    search the records' text forward and back, n and N repeat it; f filters the records
    (by seat, kind, refused only): the arrows then step through those alone."""

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
        Binding("right,l,space", "step(1)", "Next"),
        Binding("left,h,p,backspace", "step(-1)", "Back"),
        Binding("pagedown", "step(10)", "+10", show=False),
        Binding("pageup", "step(-10)", "-10", show=False),
        Binding("home", "go(0)", "First", show=False),
        Binding("end", "go(-1)", "Last", show=False),
        Binding("g", "ask('seq')", "Jump to seq"),
        Binding("slash", "ask('search')", "Search"),
        Binding("question_mark", "ask('back')", "Search back"),
        Binding("n", "again(1)", "Next match"),
        Binding("N", "again(-1)", "Previous match"),
        Binding("f", "ask('filter')", "Filter"),
        Binding("r", "next_rejected", "Next rejected"),
        Binding("a", "see('all')", "All-seeing"),
        Binding("s", "see('spectator')", "Spectator"),
        Binding("q,escape", "quit", "Quit"),
        *(Binding(str(d), f"see({d})", f"Seat {d}", show=False) for d in range(10)),
    ]

    def __init__(self, timeline: Timeline, name: str, perspective: Any = ALL, start: int = 0,
                 damage: str | None = None):
        super().__init__()
        self.timeline = timeline
        self.log_name = name
        self.perspective = perspective
        self.index = start
        self.damage = damage            # why the log ends where it does (a damaged log's good prefix)
        self.filter = Filter()
        self.shown = list(range(len(timeline)))     # the records the filter lets through
        self.last_search = ""                 # the last search, for n and N
        self.last_search_back = False

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
        yield Static("<- -> step  g seq  / ? search  n N again  f filter  r rejected  0-9 seat  a all  "
                     "s spectator  q quit", id="keys")

    def on_mount(self) -> None:
        self.show()
        if self.damage:
            self.note(self.damage)

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
            # a damaged (or cut) log says so first, where a long path cannot push it off the line
            (f" {self.damage.split(':')[0]}: ends early |" if self.damage else "")
            + f" {self.log_name} | {tl.game.TITLE} | record {i}/{len(tl) - 1} | seq {step.seq} | "
            f"view: {tl.perspective_name(i, self.perspective)}"
            + ("" if self.filter.empty else f" | filter: {self.filter.describe()} ({len(self.shown)})")))
        height = max(5, self.query_one("#records", Static).size.height or 12)
        shown = self.shown
        at = self._place()
        lo = max(0, min(at - height // 2, len(shown) - height))
        rec = Text(no_wrap=True, overflow="ellipsis")
        for n, k in enumerate(shown[lo:lo + height]):
            if n:
                rec.append("\n")
            line = tl.record_line(k, self.perspective)
            style = "reverse bold" if k == i else ("red" if line.startswith("REJECTED") else "")
            rec.append(("> " if k == i else "  ") + line, style)
        self.query_one("#records", Static).update(rec)
        self.query_one("#detail", Static).update(Text("\n".join(tl.detail_lines(i, self.perspective))))
        self.query_one("#state", Static).update(Text("\n".join(tl.state_lines(i, self.perspective))))

    def _place(self) -> int:
        """Where the current record stands among the shown ones (the nearest before it
        when the filter hides it)."""
        return max(0, bisect.bisect_right(self.shown, self.index) - 1)

    def action_step(self, delta: int) -> None:
        shown = self.shown
        if not shown:
            self.note(f"no record passes the filter ({self.filter.describe()}): f and Enter clears it")
            return
        at = self._place()
        if delta > 0 and shown[at] > self.index:
            at -= 1                 # the current record is hidden and before every shown one
        index = shown[max(0, min(len(shown) - 1, at + delta))]
        if index == self.index:
            which = "first" if delta < 0 else "last"
            self.note(f"this is the {which} record" + ("" if self.filter.empty else " the filter shows")
                      + (f"; {self.damage}" if self.damage and delta > 0 else ""))
            return
        self.index = index
        self.note()
        self.show()

    def action_go(self, where: int) -> None:
        self.index = self.shown[where] if self.shown else where % len(self.timeline)
        self.note()
        self.show()

    def action_again(self, direction: int) -> None:
        """n: the last search again, the same way; N: the other way."""
        if not self.last_search:
            self.note("no search yet: / searches forward, ? back")
            return
        self._find(self.last_search, self.last_search_back != (direction < 0))

    def _find(self, text: str, backward: bool) -> None:
        found = search(self.timeline, text, self.index, backward=backward, perspective=self.perspective,
                       among=self.shown)
        if found is None:
            where = "before" if backward else "after"
            self.note(f"{text[:40]!r} is not found {where} this record"
                      + ("" if self.filter.empty else " among those the filter shows")
                      + (" (End goes to the last)" if backward else " (Home goes back to the first)"))
            return
        self.index = found
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
        if not self.filter.empty:       # a view finds only what it may see (headless/find.py)
            self.shown = matching(self.timeline, self.filter, who)
        self.note()
        self.show()

    PROMPTS = {"seq": "seq to jump to, Enter (Esc cancels)",
               "search": "/ search forward for, Enter (Esc cancels)",
               "back": "? search back for, Enter (Esc cancels)",
               "filter": "filter: seat N, kind KIND, refused, text WORDS; empty clears (Esc cancels)"}

    def action_ask(self, mode: str) -> None:
        box = self.query_one("#jump", JumpInput)
        box.mode = mode
        box.placeholder = self.PROMPTS[mode]
        box.display = True
        box.value = ""
        # at once, not after the keys already queued (Widget.focus waits its turn): what is
        # typed right after g, /, ? or f goes to the prompt, not to the viewer's bindings
        self.screen.set_focus(box)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        box = self.query_one("#jump", JumpInput)
        box.display = False
        self.set_focus(None)
        text = event.value.strip()
        if box.mode in ("search", "back"):
            if text:
                self.last_search, self.last_search_back = text, box.mode == "back"
                self._find(text, self.last_search_back)
            return
        if box.mode == "filter":
            self._set_filter(text)
            return
        if text.isascii() and text.isdigit() and len(text) <= 18:
            seq = int(text)
            self.index = self.timeline.index_of_seq(seq)
            last = self.timeline.steps[-1].seq
            self.note(f"the last seq is {last}: showing it" if seq > last else "")
            self.show()
        elif text:
            self.note(f"g wants a seq, a number from 0 to {self.timeline.steps[-1].seq}, not {text[:30]!r}")

    def _set_filter(self, text: str) -> None:
        try:
            f = parse_filter(text, self.timeline.header.seats)
        except ValueError as e:
            self.note(str(e))
            return
        shown = matching(self.timeline, f, self.perspective)
        if not shown:
            self.note(f"no record passes the filter {f.describe()}: it is not applied")
            return
        self.filter, self.shown = f, shown
        if self.index not in shown:         # to the first shown record at or after this one
            later = [k for k in shown if k >= self.index]
            self.index = later[0] if later else shown[-1]
        self.note()
        self.show()

    def on_resize(self) -> None:
        self.show()
