"""What the client tells its player, as typed values: one frozen class per kind of news.

Why: a UI or a bot decides what to do by the notice's type and fields (a lost connection,
a refused intent, the timer playing for you), never by reading its wording back. The
wording is made here and only here (each class's ``text``), so it can change without
breaking a decision (docs/ARCHITECTURE.md, "headless/ (wildtable.headless)").

``kind`` is the line mode's tag word for the notice (``wildtable play --plain``: info,
conn, event, ...): a label to print, not something to compare in code.
"""

from __future__ import annotations

from typing import Any, ClassVar

import attrs

from wildtable.protocol import messages as m

from .words import user_words


@attrs.frozen
class Notice:
    """The base of every notice: something to show (``text``), under a line-mode tag."""
    kind: ClassVar[str] = "info"

    @property
    def text(self) -> str:
        return ""


@attrs.frozen
class ConnectionNews(Notice):
    """The base of what happened to the connection itself (the TUI's status line follows it)."""
    kind: ClassVar[str] = "connection"


@attrs.frozen
class Trouble(Notice):
    """The base of the errors: something went wrong that the player should read."""
    kind: ClassVar[str] = "error"


# ---------------------------------------------------------------- the connection
@attrs.frozen
class Connected(ConnectionNews):
    """The first connection said hello."""
    url: str
    server: str
    name: str

    @property
    def text(self) -> str:
        return f"connected to {self.url} ({self.server}) as {self.name}"


@attrs.frozen
class Moved(ConnectionNews):
    """Connected to the node a redirect named."""
    url: str
    why: str

    @property
    def text(self) -> str:
        return f"connected to {self.url} ({self.why})"


@attrs.frozen
class Reconnected(ConnectionNews):
    """A connection again after a drop (the seat is taken back next: BackAtTable)."""
    url: str

    @property
    def text(self) -> str:
        return f"connection back: reconnected to {self.url}"


@attrs.frozen
class ConnectionLost(ConnectionNews):
    """The connection dropped; the next attempt comes in ``delay`` seconds."""
    why: str
    delay: float

    @property
    def text(self) -> str:
        return f"connection lost ({self.why}); reconnecting in {self.delay:g} s..."


@attrs.frozen
class BackAtTable(ConnectionNews):
    """After a reconnect, the seat (or the spectator's place) is ours again at ``seq``."""
    table: str
    seat: int | None        # None: watching
    seq: int

    @property
    def text(self) -> str:
        where = f"seat {self.seat}" if self.seat is not None else "watching"
        return f"back at table {self.table} ({where}) at seq {self.seq}"


@attrs.frozen
class NotBackYet(ConnectionNews):
    """The seat (or the spectator's place) could not be taken back just now, for a reason
    that passes (the table's node is taking it over, its store is away, its disk full):
    the token is kept and it is asked for again in ``delay`` seconds."""
    error: m.Error
    delay: float

    @property
    def text(self) -> str:
        return (f"cannot go back to the table yet ({self.error.code}: {user_words(self.error.message)}); "
                f"trying again in {self.delay:g} s...")


@attrs.frozen
class AskingAgain(ConnectionNews):
    """A redirect led to a node that did not answer: asked again after a pause."""
    why: str

    @property
    def text(self) -> str:
        return self.why


@attrs.frozen
class Goodbye(ConnectionNews):
    """The server closes the connection and says why."""
    reason: str

    @property
    def text(self) -> str:
        return f"the server says goodbye: {self.reason}"


@attrs.frozen
class PlayPaused(Trouble):
    """The server paused play at the table (its disk is full: docs/PROTOCOL.md `notice`
    ``storage_full``); play resumes by itself. ``message``: the server's sentence."""
    notice: m.Notice

    @property
    def text(self) -> str:
        return self.notice.message


@attrs.frozen
class PlayResumed(Notice):
    """Play goes on after a pause (`notice` ``storage_resumed``)."""
    notice: m.Notice

    @property
    def text(self) -> str:
        return self.notice.message


# ---------------------------------------------------------------- the lobby and seats
@attrs.frozen
class TablesListed(Notice):
    """The lobby list changed; ``asked``: the player asked for it (else a refresh)."""
    kind: ClassVar[str] = "tables"
    tables: tuple
    asked: bool
    omitted: int

    @property
    def text(self) -> str:
        more = f" (and {self.omitted} more the server did not list: games in play and finished ones)" \
            if self.omitted else ""
        return (f"{len(self.tables)} table(s)" + ("" if self.tables or self.omitted else ": create one with create")
                + more)


@attrs.frozen
class TableCreated(Notice):
    kind: ClassVar[str] = "info"
    table: str
    game: str
    seats: int

    @property
    def text(self) -> str:
        return f"created table {self.table} ({self.game}, {self.seats} seats)"


@attrs.frozen
class Joined(Notice):
    """This player took a seat (``resumed``: the seat it held before, by its token)."""
    kind: ClassVar[str] = "info"
    table: str
    title: str
    seat: int
    name: str
    seq: int
    resumed: bool = False

    @property
    def text(self) -> str:
        if self.resumed:
            return f"took your seat {self.seat} back at table {self.table} ({self.title}) at seq {self.seq}"
        return f"joined table {self.table} ({self.title}) at seat {self.seat} as {self.name}"


@attrs.frozen
class Watching(Notice):
    kind: ClassVar[str] = "info"
    table: str
    title: str

    @property
    def text(self) -> str:
        return f"watching table {self.table} ({self.title})"


@attrs.frozen
class LeftTable(Notice):
    kind: ClassVar[str] = "info"
    table: str

    @property
    def text(self) -> str:
        return f"you left table {self.table}"


@attrs.frozen
class BotsSeated(Notice):
    kind: ClassVar[str] = "info"
    level: str
    names: tuple
    seats: tuple

    @property
    def text(self) -> str:
        who = ", ".join(f"{n} (seat {i})" for n, i in zip(self.names, self.seats))
        return (f"seated {len(self.seats)} bot(s) ({self.level}): {who}; the server runs them, "
                "so they play on if you leave")


@attrs.frozen
class SeatsWaiting(Notice):
    """A new table with seats left for friends, and the command that joins it."""
    kind: ClassVar[str] = "info"
    free: int
    url: str
    table: str

    @property
    def text(self) -> str:
        return f"{self.free} seat(s) wait for friends: wildtable play {self.url} --table {self.table}"


@attrs.frozen
class EverySeatTaken(Notice):
    """The line a script may wait for: the game starts."""
    kind: ClassVar[str] = "info"

    @property
    def text(self) -> str:
        return "every seat is taken: the game starts"


# ---------------------------------------------------------------- the other players
@attrs.frozen
class SeatTaken(Notice):
    """Another player sat down."""
    kind: ClassVar[str] = "info"
    name: str
    seat: int

    @property
    def text(self) -> str:
        return f"{self.name} took seat {self.seat}"


@attrs.frozen
class PlayerLeft(Notice):
    """Another player went after the game ended (nobody waits for them)."""
    kind: ClassVar[str] = "info"
    name: str

    @property
    def text(self) -> str:
        return f"{self.name} left"


@attrs.frozen
class PlayerLost(Notice):
    kind: ClassVar[str] = "info"
    name: str

    @property
    def text(self) -> str:
        return f"{self.name} lost the connection (their seat waits for them)"


@attrs.frozen
class PlayerBack(Notice):
    kind: ClassVar[str] = "info"
    name: str

    @property
    def text(self) -> str:
        return f"{self.name} is back"


# ---------------------------------------------------------------- the table
@attrs.frozen
class TableChanged(Notice):
    """Redraw from the mirror."""
    kind: ClassVar[str] = "table"


@attrs.frozen
class GameEvent(Notice):
    """One public game event, in the game's words (``line``)."""
    kind: ClassVar[str] = "event"
    line: str
    event: Any

    @property
    def text(self) -> str:
        return self.line


@attrs.frozen
class TimerPlayed(Notice):
    """The table's turn timer made this move for this player (docs/PROTOCOL.md, turn timer)."""
    kind: ClassVar[str] = "event"
    line: str
    event: Any
    seconds: float

    @property
    def text(self) -> str:
        return f"the timer played for you ({self.seconds:g} s passed): {self.line}"


@attrs.frozen
class Flash(Notice):
    """A word to flash ("Draw 3!", "Out!", "Timer!")."""
    kind: ClassVar[str] = "flash"
    word: str
    event: Any = None

    @property
    def text(self) -> str:
        return self.word


@attrs.frozen
class GameOver(Notice):
    """The game ended: ``said`` is the game's own sentence for it (or who won)."""
    kind: ClassVar[str] = "over"
    said: str
    scores: str
    over: m.GameOver
    log_named: bool = True      # False: a private server's log, gone when the player quits

    @property
    def text(self) -> str:
        log = f"; log {self.over.log}" if self.log_named and self.over.log else ""
        return f"{self.said} (scores {self.scores}{log}); type leave for the lobby"


# ---------------------------------------------------------------- intents
@attrs.frozen
class IntentSent(Notice):
    """An intent still waiting for its answer (none for one answered before the write returned)."""
    kind: ClassVar[str] = "sent"
    intent: int
    command: str

    @property
    def text(self) -> str:
        return self.command


@attrs.frozen
class IntentAccepted(Notice):
    """Comes once the mirror holds ``seq``; a TableChanged follows."""
    kind: ClassVar[str] = "accepted"
    intent: int
    seq: int
    command: str

    @property
    def text(self) -> str:
        return self.command


@attrs.frozen
class IntentRejected(Notice):
    """A command refused: by the server (``intent`` its id), or here before anything was
    sent (``intent`` None; code bad_command, not_connected, no_answer, client_bug), or
    lost with the connection (connection_lost: the table shows whether it happened)."""
    kind: ClassVar[str] = "rejected"
    intent: int | None
    code: str
    reason: str
    command: str

    @property
    def text(self) -> str:
        return self.command


# ---------------------------------------------------------------- errors
@attrs.frozen
class ServerError(Trouble):
    """The server answered with an error nobody else reports."""
    error: m.Error

    @property
    def text(self) -> str:
        return f"{self.error.code}: {user_words(self.error.message)}"


@attrs.frozen
class CannotGoBack(Trouble):
    """After a reconnect the seat (or the spectator's place) could not be taken back."""
    error: m.Error

    @property
    def text(self) -> str:
        return f"could not go back to the table: {self.error.code}: {user_words(self.error.message)}"


@attrs.frozen
class SeatTakenOver(Trouble):
    """Another connection resumed this seat; this one is back in the lobby."""
    error: m.Error

    @property
    def text(self) -> str:
        return "your seat was resumed from another connection; this one is back in the lobby"


@attrs.frozen
class Problem(Trouble):
    """A trouble found here, not sent by the server (an unreadable message, a redirect
    that could not be followed, a full command queue): ``what`` says it whole."""
    what: str

    @property
    def text(self) -> str:
        return self.what


@attrs.frozen
class CannotCreate(Trouble):
    why: str

    @property
    def text(self) -> str:
        return f"cannot create the table: {self.why}"


@attrs.frozen
class Fatal(Notice):
    """The client cannot go on (the first connection failed)."""
    kind: ClassVar[str] = "fatal"
    why: str

    @property
    def text(self) -> str:
        return self.why


# ---------------------------------------------------------------- what the player asked for
@attrs.frozen
class HelpText(Notice):
    kind: ClassVar[str] = "help"
    lines: str

    @property
    def text(self) -> str:
        return self.lines


@attrs.frozen
class TableText(Notice):
    """The whole table as text (the show command)."""
    kind: ClassVar[str] = "show"
    lines: str

    @property
    def text(self) -> str:
        return self.lines


@attrs.frozen
class Hint(Notice):
    """The expert's choice for the player's own seat (the hint command; headless/appraise.py)."""
    kind: ClassVar[str] = "hint"
    line: str
    action: dict | None = None      # the move it suggests (None: no move now)

    @property
    def text(self) -> str:
        return self.line


@attrs.frozen
class QuitAsked(Notice):
    kind: ClassVar[str] = "quit"


# what a seat's owner did in the lobby (the TUI shows it as the result of the command)
LOBBY_OUTCOMES = (Joined, Watching, LeftTable, TableCreated)
