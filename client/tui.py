"""The full-screen terminal UI: Textual on asyncio, hosting the Trio client core in
guest mode (``trio.lowlevel.start_guest_run`` with the loop's ``call_soon_threadsafe``).

Both loops share one thread: Trio's tasks run as callbacks of the asyncio loop, so
the core posts Textual messages straight from Trio code, and the screen redraws the
moment the server says something, while the player types. The other way, a typed
command goes to the core with the Trio token's ``run_sync_soon``.

Layout (readable at 80x24, and without colour: every state is also a word):

    top bar: game, table, you, connection                       F1 help  ^Q quit
    lobby (tables) or the table screen of the game   | events pane
    result of your last command (a refusal with its reason)
    > command line (Tab completes, Up/Down history)
    hints: what the command wants next
"""

from __future__ import annotations

import asyncio
import traceback
from collections.abc import Sequence

import trio
from rich.cells import cell_len
from rich.text import Text
from textual import events, on
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.screen import ModalScreen
from textual.suggester import Suggester
from textual.timer import Timer
from textual.widgets import ContentSwitcher, DataTable, Input, RichLog, Static

from wildtable.headless import notices
from wildtable.headless.commands import completions, complete_line, split_for_completion
from wildtable.headless.core import CannotConnect, ClientCore
from wildtable.headless.notices import Notice
from wildtable.headless.words import lobby_row
from . import screens
from .session import Launch, server_for, start_session
from .termsignals import quit_on_signals

FLASH_SECONDS = 2.5
LOBBY_REFRESH = 3.0
NARROW = 64         # columns: narrower, the events pane hides and the table takes the width
LOBBY_COLUMNS = ("#", "table", "game", "seats", "status", "players", "name")

KEYS_HELP = """\
Keys: Tab completes the word you type (Right arrow accepts the grey suggestion), Up/Down
recall earlier commands, F1 shows this help, F2 a hint, Ctrl+Q quits, PageUp/PageDown scroll
the melds, Shift+PageUp/Shift+PageDown (or Ctrl+Up/Ctrl+Down) scroll the events, Ctrl+End
goes back to the newest event. Click a card or a meld handle to type it."""
EVENTS_KEPT = 500       # event lines kept (and laid out again when the pane's width changes)


def reflow(text: str) -> str:
    """Text wrapped by hand for a terminal (help), as paragraphs again, for a window of
    any width to wrap: a line that goes on from the one before (that line is not blank or
    a short heading ending in ":", and this one does not start with a space, "-", "*" or
    "|") is joined to it. Indented lines (command lists) stay lines of their own."""
    out: list[str] = []
    for line in text.split("\n"):
        prev = out[-1] if out else ""
        heading = prev.endswith(":") and len(prev) < 40          # "Run Wild commands:"
        joins = (prev.strip() and line.strip() and not line[:1].isspace() and not prev[:1].isspace()
                 and not heading and not line.startswith(("-", "*", "|")))
        if joins:
            out[-1] = prev.rstrip() + " " + line.strip()
        else:
            out.append(line)
    return "\n".join(out)


#: the command line's placeholder in the lobby and at a table
LOBBY_PROMPT = "type a command (help, list, create, join...)"
TABLE_PROMPT = "type a move or a command (help lists them, leave goes back to the lobby)"

class CoreNotice(Message):
    """A Notice from the Trio side."""

    def __init__(self, notice: Notice):
        super().__init__()
        self.notice = notice


class TrioDone(Message):
    def __init__(self, error: BaseException | None):
        super().__init__()
        self.error = error


class CommandSuggester(Suggester):
    """Grey inline completion of the word being typed, from the live view."""

    def __init__(self, app: "PlayApp"):
        super().__init__(use_cache=False, case_sensitive=True)
        self._app = app

    async def get_suggestion(self, value: str) -> str | None:
        core = self._app.core
        return complete_line(core, value) if core is not None and value else None


class CommandInput(Input):
    BINDINGS = [
        Binding("tab", "complete", "Complete", show=False),
        Binding("up", "history(-1)", "Earlier command", show=False),
        Binding("down", "history(1)", "Later command", show=False),
    ]

    def __init__(self, app: "PlayApp", **kw):
        super().__init__(suggester=CommandSuggester(app), **kw)
        self._play = app
        self._hist_pos: int | None = None

    def on_key(self, event: events.Key) -> None:
        """Enter is taken here, in its place among the keys typed before and after it: the
        line typed so far is one command, and the box is empty at once, so what is typed
        next is the next command. As the Input's binding it ran only once the key had come
        back up to the app, after the keys typed next had joined the line (`show` twice
        quickly was one `showshow`), and the app emptied the box later still."""
        if event.key == "enter":
            event.stop()
            self.submit_line()

    async def action_submit(self) -> None:
        self.submit_line()

    def submit_line(self) -> None:
        line, self.value = self.value, ""
        self.post_message(self.Submitted(self, line))

    def action_complete(self) -> None:
        core = self._play.core
        line = complete_line(core, self.value) if core is not None else None
        if line is None:
            self.app.bell()
            return
        self.value = line + " "
        self.cursor_position = len(self.value)

    def action_history(self, step: int) -> None:
        core = self._play.core
        hist = core.history if core is not None else []
        if not hist:
            return
        pos = len(hist) if self._hist_pos is None else self._hist_pos
        pos = max(0, min(len(hist), pos + step))
        self._hist_pos = pos
        self.value = hist[pos] if pos < len(hist) else ""
        self.cursor_position = len(self.value)

    def reset_history(self) -> None:
        self._hist_pos = None


class HelpScreen(ModalScreen):
    BINDINGS = [Binding("escape,f1,q", "dismiss", "Close")]
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    #help-box { width: 90%; height: 90%; border: heavy $accent; background: $surface; padding: 0 1; }
    #help-title { height: 1; text-style: bold; }
    """

    def __init__(self, text: str, title: str = "Help", flow: bool = True):
        super().__init__()
        self.text = reflow(text) if flow else text      # a table's lines stay lines
        self.title_text = title

    def compose(self) -> ComposeResult:
        with Vertical(id="help-box"):
            yield Static(Text(f"{self.title_text} - Esc closes"), id="help-title")
            with VerticalScroll():
                yield Static(Text(self.text), id="help-text")


class PlayApp(App):
    """`wildtable play`: lobby, table screen, commands; the network runs in Trio."""

    TITLE = "wildtable"
    CSS = """
    Screen { layers: base overlay; }
    #top { height: 1; background: $primary; color: $text; }
    #body { height: 1fr; }
    #main { width: 1fr; }
    #events { width: 30; border-left: solid $primary; scrollbar-size-vertical: 1; }
    #lobby-hint { height: auto; color: $text-muted; }
    #tables { height: 1fr; }
    #board-top { height: auto; }
    #board-mid { height: 1fr; }
    #board-bottom { height: auto; dock: bottom; }
    #result { height: auto; max-height: 3; }
    #cmdline { height: 1; }
    #prompt { width: 2; }
    #cmd { border: none; height: 1; padding: 0; width: 1fr; }
    #hints { height: 1; color: $text-muted; }
    #flash { layer: overlay; dock: right; offset: 0 1; width: 30; height: 3;
             content-align: center middle; text-style: bold; background: $warning; color: $background;
             display: none; }
    """
    BINDINGS = [
        Binding("f1", "help", "Help"),
        Binding("f2", "hint", "Hint"),
        Binding("ctrl+q,ctrl+c", "quit", "Quit", priority=True),
        Binding("pageup", "scroll_melds(-1)", "Scroll melds up", show=False),
        Binding("pagedown", "scroll_melds(1)", "Scroll melds down", show=False),
        Binding("shift+pageup,ctrl+up", "scroll_events(-1)", "Scroll events up", show=False),
        Binding("shift+pagedown,ctrl+down", "scroll_events(1)", "Scroll events down", show=False),
        Binding("ctrl+end", "scroll_events(0)", "Newest events", show=False),
    ]

    def __init__(self, launch: Launch):
        super().__init__()
        self.launch = launch
        self.core: ClientCore | None = None
        self.flashes: list[str] = []            # every flash shown (for tests and the curious)
        self.fatal: str | None = None           # why the UI had to stop, if it did
        self._token: trio.lowlevel.TrioToken | None = None
        self._root: trio.CancelScope | None = None
        self._done: asyncio.Future | None = None
        self._restore_signals = lambda: None     # the former SIGTERM/SIGHUP handlers back (once mounted)
        self._flash_timer: Timer | None = None
        self._status = "connecting..."
        self._lobby_rows: list | None = None
        self._events: list[Text] = []           # every event line kept, to lay out again at a new width
        self._events_width = 0                  # the width they were laid out at

    # ---------------------------------------------------------------- layout
    def compose(self) -> ComposeResult:
        yield Static(id="top")
        with Horizontal(id="body"):
            with ContentSwitcher(initial="lobby", id="main"):
                with Vertical(id="lobby"):
                    yield Static("Tables on this server (join N, spectate N, create GAME PLAYERS):", id="lobby-hint")
                    yield DataTable(id="tables", cursor_type="row", zebra_stripes=True)
                with Vertical(id="table"):
                    yield Static(id="board-top")
                    with VerticalScroll(id="board-mid"):
                        yield Static(id="melds")
                    yield Static(id="board-bottom")
            yield RichLog(id="events", wrap=True, min_width=10, max_lines=500, markup=False)
        yield Static(id="result")
        with Horizontal(id="cmdline"):
            yield Static(">", id="prompt")
            yield CommandInput(self, id="cmd", placeholder=LOBBY_PROMPT)
        yield Static(id="hints")
        yield Static(id="flash")

    async def on_mount(self) -> None:
        dt = self.query_one("#tables", DataTable)
        self._lobby_columns(dt, [])
        self._fit_width()
        self._update_top()
        self._update_hints("")
        self.set_interval(1.0, self._tick)
        self.query_one("#cmd", CommandInput).focus()
        loop = asyncio.get_running_loop()
        self._done = finished = loop.create_future()
        self._restore_signals = quit_on_signals(self, loop)   # SIGTERM, SIGHUP: as Ctrl-C (client/termsignals.py)

        def done(outcome) -> None:
            if not finished.done():
                finished.set_result(outcome)
            error = getattr(outcome, "error", None)
            self.post_message(TrioDone(error))

        trio.lowlevel.start_guest_run(self._trio_main, run_sync_soon_threadsafe=loop.call_soon_threadsafe,
                                      done_callback=done)

    # ---------------------------------------------------------------- the Trio side
    async def _trio_main(self) -> None:
        self._token = trio.lowlevel.current_trio_token()
        self._root = trio.CancelScope()
        with self._root:
            async with server_for(self.launch) as url:
                core = ClientCore(url, self.launch.name, self._from_trio, lobby_refresh=LOBBY_REFRESH,
                                  default_game=self.launch.game, bot_delay=self.launch.bot_delay,
                                  seat_book=self.launch.seat_book(), bot_level=self.launch.level)
                core.logs_kept = not self.launch.local      # a private server's data dir goes when we quit
                self.core = core
                async with trio.open_nursery() as nursery:
                    try:
                        await nursery.start(core.run)
                    except CannotConnect as e:
                        self._from_trio(notices.Fatal(str(e)))
                        return
                    await start_session(core, self.launch, nursery)

    def _from_trio(self, notice: Notice) -> None:
        self.post_message(CoreNotice(notice))

    def send_command(self, text: str) -> None:
        """From the UI to the core (run by Trio at its next tick)."""
        if self._token is not None and self.core is not None:
            self._token.run_sync_soon(self.core.submit, text)

    async def stop_trio(self, timeout: float = 10.0) -> None:
        """Cancel the Trio side (the private server, if any, shuts down cleanly) and wait for it."""
        if self._done is None or self._done.done():
            return
        if self._token is not None and self._root is not None:
            try:
                self._token.run_sync_soon(self._root.cancel)
            except trio.RunFinishedError:
                return
        try:
            await asyncio.wait_for(asyncio.shield(self._done), timeout)
        except asyncio.TimeoutError:
            pass

    async def on_unmount(self) -> None:
        self._restore_signals()
        await self.stop_trio()

    async def action_quit(self) -> None:
        await self.stop_trio()
        self.exit()

    def on_trio_done(self, message: TrioDone) -> None:
        if message.error is not None and not isinstance(message.error, trio.Cancelled):
            trace = "".join(traceback.format_exception(message.error))
            self.fatal = f"wildtable: the network side stopped (a bug; please report it):\n{trace}"
            self.exit(return_code=1, message=Text(self.fatal))

    # ---------------------------------------------------------------- notices
    def on_core_notice(self, message: CoreNotice) -> None:
        """Show one notice, chosen by its type (headless/notices.py), never by its words."""
        n = message.notice
        if isinstance(n, notices.TableChanged):
            self.redraw()
        elif isinstance(n, notices.TimerPlayed):
            self._event_line(n.text)
            self._result(n.text, "bold yellow")     # not only in the events pane: you did not do it
        elif isinstance(n, notices.GameEvent):
            self._event_line(n.text)
        elif isinstance(n, notices.Flash):
            self.flash(n.text)
        elif isinstance(n, notices.ConnectionNews):
            core = self.core
            self._status = "online" if core is not None and core.online else "offline: reconnecting"
            self._update_top()
            self._event_line(n.text, "bold yellow")
            self._result(n.text, "bold yellow")
        elif isinstance(n, notices.Trouble):
            self._event_line(n.text, "bold red")
            self._result("error: " + n.text, "bold red")
        elif isinstance(n, notices.TablesListed):
            self._fill_lobby(list(n.tables))
            if n.asked:
                more = f" (and {n.omitted} more not listed)" if n.omitted else ""
                self._result(f"{len(n.tables)} table(s) on this server{more}")
        elif isinstance(n, notices.IntentSent):
            self._result(f"... {n.text} (sent)", "dim")
        elif isinstance(n, notices.IntentAccepted):
            self._result(f"ok: {n.text}", "green")
        elif isinstance(n, notices.IntentRejected):
            self._result(f"refused: {n.text} - {n.code}: {n.reason}", "bold red")
            self._event_line(f"refused: {n.text} - {n.reason}", "red")
        elif isinstance(n, notices.GameOver):
            self._event_line(n.text, "bold")
            self._result(n.text, "bold")
            self.flash("Game over!")
            self.redraw()
        elif isinstance(n, notices.HelpText):
            self.push_screen(HelpScreen(n.text + "\n\n" + KEYS_HELP))
        elif isinstance(n, notices.TableText):
            for line in n.text.splitlines():
                self._event_line(line)
            if not self.query_one("#events", RichLog).display:
                # a narrow terminal hides the events pane: show the table in a window instead
                self.push_screen(HelpScreen(n.text, "The table", flow=False))
        elif isinstance(n, notices.Hint):       # F2 or the hint command: where the player looks
            self._result("hint: " + n.text, "bold cyan")
        elif isinstance(n, notices.QuitAsked):
            self.run_worker(self.action_quit(), exclusive=True)
        elif isinstance(n, notices.Fatal):
            self.fatal = f"wildtable play: {n.text}"
            self.exit(return_code=1, message=Text(self.fatal))
        else:                       # the other players, seats, the lobby: a dim line
            self._event_line(n.text, "dim")
            if isinstance(n, notices.LOBBY_OUTCOMES):
                self._result(n.text)

    def _event_line(self, text: str, style: str = "") -> None:
        line = Text(text, style=style)
        self._events.append(line)
        del self._events[:-EVENTS_KEPT]
        pane = self.query_one("#events", RichLog)
        if pane.display and pane.scrollable_content_region.width:
            pane.write(line)
        else:       # hidden (a narrow terminal), or not laid out yet: written when it shows
            self._events_width = 0
            self.call_after_refresh(self._relayout_events)

    def _relayout_events(self) -> None:
        """Lay the event lines out again at the pane's width now (they were wrapped at the
        width they arrived at: 10 columns while the pane was hidden)."""
        pane = self.query_one("#events", RichLog)
        width = pane.scrollable_content_region.width if pane.display else 0
        if not width or width == self._events_width:
            return
        self._events_width = width
        at_end = pane.is_vertical_scroll_end
        pane.clear()
        for line in self._events:
            pane.write(line, scroll_end=False)
        if at_end:
            pane.scroll_end(animate=False)

    def action_scroll_events(self, step: int) -> None:
        pane = self.query_one("#events", RichLog)
        if not step:
            pane.auto_scroll = True
            pane.scroll_end(animate=False)
            return
        pane.auto_scroll = False            # reading back: new lines do not pull the pane down
        pane.scroll_relative(y=step * max(1, pane.size.height - 1), animate=False)
        if pane.is_vertical_scroll_end:
            pane.auto_scroll = True

    def _result(self, text: str, style: str = "") -> None:
        self.query_one("#result", Static).update(Text(text, style=style))

    def flash(self, text: str) -> None:
        """A banner for a moment over the top of the events pane (never over your cards):
        "Draw 3!", "Out!"."""
        self.flashes.append(text)
        box = self.query_one("#flash", Static)
        box.update(Text(f"** {text} **", style="bold"))
        box.display = True
        if self._flash_timer is not None:
            self._flash_timer.stop()
        self._flash_timer = self.set_timer(FLASH_SECONDS, self._hide_flash)

    def _hide_flash(self) -> None:
        self.query_one("#flash", Static).display = False

    # ---------------------------------------------------------------- drawing
    def _update_top(self, width: int | None = None) -> None:
        core = self.core
        parts = ["wildtable"]
        if core is not None:
            mir = core.mirror
            if mir.table:
                title = core.plugin.TITLE if core.plugin.NAME != "generic" else (mir.game or "")
                parts.append(f"{title} at {mir.table}")
                parts.append(f"seat {mir.seat}" if mir.seat is not None else "watching")
            else:
                parts.append("lobby")
            parts.append(core.name)
        mark = "*" if self._status == "online" else "!"
        left = " " + " | ".join(parts) + f" | {mark} {self._status}"
        right = "F1 help  ^Q quit "
        width = max(self.size.width if width is None else width, 40)
        line = left if len(left) + len(right) + 1 > width else left + " " * (width - len(left) - len(right)) + right
        self.query_one("#top", Static).update(Text(line))

    def redraw(self) -> None:
        core = self.core
        if core is None:
            return
        if core.online:
            self._status = "online"
        self._update_top()
        # the prompt names what can be typed where (issue #27: the lobby's at a table too)
        self.query_one("#cmd", CommandInput).placeholder = TABLE_PROMPT if core.at_table else LOBBY_PROMPT
        switcher = self.query_one("#main", ContentSwitcher)
        if not core.at_table:
            switcher.current = "lobby"
            return
        switcher.current = "table"
        sections = screens.render_rich(core.plugin.NAME, core.mirror.view, core.ctx)
        self.query_one("#board-top", Static).update(sections.top)
        self.query_one("#melds", Static).update(sections.middle)
        self.query_one("#board-bottom", Static).update(sections.bottom)
        self._update_hints(self.query_one("#cmd", CommandInput).value)

    def _fill_lobby(self, tables: list[dict]) -> None:
        rows = [lobby_row(t) for t in tables]
        if rows == self._lobby_rows:
            return          # refreshed every few seconds: leave the cursor alone when nothing changed
        self._lobby_rows = rows
        dt = self.query_one("#tables", DataTable)
        keep = dt.coordinate_to_cell_key(dt.cursor_coordinate).row_key.value if dt.row_count else None
        cells = [(str(i), r.table, r.game, r.seats, r.status, r.players, r.name) for i, r in enumerate(rows, 1)]
        self._lobby_columns(dt, cells)
        for t, row in zip(tables, cells):
            # Text cells: a str cell would be read as markup (a player named "[/]" crashed the lobby);
            # one line each, as DataTable makes of a str
            dt.add_row(*(Text(c, no_wrap=True, end="") for c in row), key=t["table"])
        if keep is not None and keep in {t["table"] for t in tables}:
            dt.move_cursor(row=dt.get_row_index(keep))
        hint = self.query_one("#lobby-hint", Static)
        hint.update("Tables on this server (join N, spectate N, create GAME PLAYERS):" if tables else
                    "No tables yet: create one, e.g. create run-wild 3 (then bots 2 to add bots)")

    @staticmethod
    def _lobby_columns(dt: DataTable, cells: Sequence[tuple[str, ...]]) -> None:
        """Empty the lobby table and give it its columns, each as wide as its widest cell.
        Widths are set, not measured by the DataTable when idle: a row drawn before that
        measurement kept its cells cut to the column labels' width (its drawing is cached)."""
        dt.clear(columns=True)
        for k, col in enumerate(LOBBY_COLUMNS):
            dt.add_column(col, key=col, width=max([cell_len(col)] + [cell_len(row[k]) for row in cells]))

    def _update_hints(self, value: str) -> None:
        core = self.core
        hints = self.query_one("#hints", Static)
        if core is None:
            hints.update("")
            return
        words = split_for_completion(value)
        usage = ""
        if len(words) > 1:
            usage = core.command_words().get(core.command_word(words[0]), "").split("  - ")[0]
        cands = completions(core, value) if value else []
        text = usage
        if cands:
            text += ("  |  " if usage else "") + "Tab: " + " ".join(cands[:12])
        if not text:
            text = "help lists commands" if core.at_table else "list, create GAME PLAYERS, join N, spectate N, help"
        clock = self._clock_text()
        hints.update(Text(f"{clock}  |  {text}" if clock else text))

    def _clock_text(self) -> str:
        """The turn timer's countdown: "your turn: 42 s left", "bob to play: 42 s left"."""
        core = self.core
        left = core.turn_left() if core is not None else None
        if core is None or left is None:
            return ""
        seat, secs = left
        return f"{'your turn' if seat == core.mirror.seat else core.ctx.name(seat) + ' to play'}: {secs} s left"

    def _tick(self) -> None:
        """Once a second: the countdown moves on."""
        core = self.core
        if core is not None and core.turn_clock is not None:
            self._update_hints(self.query_one("#cmd", CommandInput).value)

    # ---------------------------------------------------------------- input
    @on(Input.Submitted, "#cmd")
    def _submitted(self, event: Input.Submitted) -> None:
        text = event.value.strip()
        box = self.query_one("#cmd", CommandInput)     # (emptied by the Enter itself: submit_line)
        box.reset_history()
        if text:
            self._result(f"... {text}", "dim")
            self.send_command(text)

    @on(Input.Changed, "#cmd")
    def _changed(self, event: Input.Changed) -> None:
        self._update_hints(event.value)

    @on(DataTable.RowSelected, "#tables")
    def _row_selected(self, event: DataTable.RowSelected) -> None:
        box = self.query_one("#cmd", CommandInput)
        box.value = f"join {event.row_key.value}"
        box.cursor_position = len(box.value)
        box.focus()

    def action_insert_handle(self, handle: str) -> None:
        """A clicked card or meld handle is typed into the command line."""
        box = self.query_one("#cmd", CommandInput)
        value = box.value
        if value and not value.endswith(" "):
            value += " "
        box.value = value + handle + " "
        box.cursor_position = len(box.value)
        box.focus()

    def action_hint(self) -> None:  # F2
        self.send_command("hint")
    def action_help(self) -> None:
        if self.core is not None:
            self.push_screen(HelpScreen(self.core.help_text() + "\n\n" + KEYS_HELP))

    def action_scroll_melds(self, step: int) -> None:
        box = self.query_one("#board-mid", VerticalScroll)
        box.scroll_relative(y=step * max(1, box.size.height - 1))

    def on_resize(self, event: events.Resize) -> None:
        self._fit_width(event.size.width)
        self._update_top(event.size.width)
        self.call_after_refresh(self._relayout_events)

    def _fit_width(self, width: int | None = None) -> None:
        """Below NARROW columns the events pane would leave the table too little room: it
        hides (its lines are kept and come back with a wider terminal)."""
        width = self.size.width if width is None else width
        self.query_one("#events", RichLog).display = width >= NARROW


def run_tui(launch: Launch) -> int:
    app = PlayApp(launch)
    app.run()
    return app.return_code or 0
