"""The client's engine room, plain Trio: one connection kept alive, the mirror of the
table, and the commands players type. The full-screen UI hosts it in guest mode, the
line mode and the bots run it under ``trio.run``; all of them see it only through
``Notice`` values (what to show) and ``command``/``submit`` (what the player typed).

A dropped connection is reopened by itself with backoff; a seated player resumes the
seat with its secret token (``rejoin``), a spectator spectates again, and the player is
told both that the connection dropped and that it is back.

On a cluster (docs/PROTOCOL.md, "Clusters") a node may answer a message with
``redirect``: the core connects to the node named, says hello with the same name and
sends the message again (a ``create_table`` with ``here``), at most MAX_REDIRECTS times
in a row for one message; a redirect to a node that did not answer is not followed again
at once: the core asks again where it is after a pause (headless/redirects.py decides).
Seat tokens stay under the URL the player gave. A dropped connection is tried again at
the node it was on, then at that URL, then at each node of the last ``welcome``.
"""

from __future__ import annotations

import json
import os
import shlex
import time
from typing import Any, Callable

import attrs
import trio

from wildtable.protocol import messages as m
from wildtable.protocol.errors import ProtocolError

from . import games
from .games import CommandError, Ctx, is_number
from .net import Connection, Dial, Mirror, NotOurServer, ServerError, connect, url_problem
from .redirects import AskAgain, Chase, GiveUp, Unreachable, decide, sent_again
from .seats import SeatTokens
from .wire import ConnectionClosed, ConnectionRejected, HandshakeError

REPLY_TIMEOUT = 10.0        # seconds to wait for the server's answer to a lobby request
KEEPALIVE = 240.0           # the server closes connections silent for 600 s
HEARTBEAT = 20.0            # seconds between our pings; a server that does not answer ...
PONG_TIMEOUT = 15.0         # ... within this is taken for gone, and we reconnect
BACKOFF = (0.2, 0.5, 1.0, 2.0, 3.0, 5.0)
COMMAND_QUEUE = 64
# the messages a cluster's node may send on to another node
REDIRECTABLE = frozenset((m.CreateTable.TAG, m.Join.TAG, m.Rejoin.TAG, m.Spectate.TAG, m.SeatBots.TAG))  # type: ignore[attr-defined]  # TAG: set by @msg

LOBBY_COMMANDS = {
    "list": "list  - the tables on this server (numbered: join 1 joins the first)",
    "create": "create [GAME] [PLAYERS] [NAME=VALUE...]  - a new table, which you join; e.g. create run-wild 3 rounds=2",
    "join": "join TABLE [SEAT]  - take a seat at a table (the first free one unless you name it)",
    "spectate": "spectate TABLE  - watch a table without playing",
    "leave": "leave  - leave the table; while the game is on, your seat is released for someone else",
    "bots": "bots N [LEVEL]  - seat N bots at this table (LEVEL easy, normal, hard or expert); the server runs them, so they play on if you leave",
    "show": "show  - the whole table as text",
    "act": 'act {"kind": ...}  - send an action as raw JSON (any game; see docs/RULES.md)',
    "help": "help [COMMAND]  - all commands, or one",
    "quit": "quit  - close the client; a seat you did not leave stays yours: join that table again later",
}
LOBBY_ALIASES = {"ls": "list", "tables": "list", "watch": "spectate", "exit": "quit", "?": "help", "new": "create"}


# events a chance outcome (a draw by lot) makes, which may name a seat without its acting
CHANCE_EVENTS = frozenset(("leader_chosen", "starter_chosen", "first_player_chosen", "dealer_chosen"))


def turn_timer_of(view: dict) -> float:
    """The table's turn timer in seconds (0: none), from a turn-based game's view."""
    secs = view.get("turn_timer")
    if secs is None:
        secs = (view.get("settings") or {}).get("turn_timer")
    return float(secs) if isinstance(secs, (int, float)) and secs > 0 else 0.0


class CannotConnect(Exception):
    """The first connection to the server failed (later drops are retried, not raised)."""


class NotConnected(Exception):
    """No connection right now (the core is reconnecting); the message says so."""


@attrs.frozen
class Notice:
    """Something to show. ``kind`` is one of:
    info, connection, error          a line of status (``data``: the server's Error, if any)
    tables                           the lobby list changed (``data``: (tables, asked))
    table                            the table changed: redraw from ``core.mirror``
    event, flash                     one public game event as a line; a word to flash
    sent, accepted, rejected         an intent's life (``text``: the command; ``data``: sent id,
                                     accepted (id, seq), rejected (id, code, reason)); "accepted"
                                     comes once the mirror holds that seq, and "table" follows it;
                                     "sent" comes only while the intent still waits for its answer
                                     (none for one answered before the write returned)
    over                             the game ended (``data``: the GameOver)
    help, show                       text the player asked for (several lines)
    quit                             the player asked to quit
    """
    kind: str
    text: str = ""
    data: Any = None


class _Waiter:
    def __init__(self, pred: Callable[[Any], bool], tag: str = "", quiet: bool = False):
        self.pred = pred
        self.tag = tag              # the type of the message it answers
        self.quiet = quiet          # the caller reports the server's Error itself
        self.event = trio.Event()
        self.value: Any = None


def printable(text: Any) -> str:
    """Text that a peer chose (a player's or a table's name), fit for one line of a
    terminal: a character that is not printable (a control or escape character, a line
    break) shows as "?". Shown as plain text still, never read as markup."""
    text = str(text)
    return text if text.isprintable() else "".join(c if c.isprintable() else "?" for c in text)


@attrs.frozen
class LobbyRow:
    """One table of the lobby list as the client shows it (full screen and line mode)."""
    table: str
    name: str           # the name its creator gave it, or ""
    game: str
    seats: str          # "taken/seats"
    status: str
    players: str        # "ann, -, bob" ("-": a free seat)


def lobby_row(t: dict) -> LobbyRow:
    players = t.get("players") or []
    taken = sum(1 for p in players if p)
    return LobbyRow(printable(t["table"]), printable(t.get("name") or ""), printable(t["game"]),
                    f"{taken}/{t['seats']}", printable(t["status"]),
                    ", ".join(printable(p) if p else "-" for p in players))


# the protocol's words in the server's sentences -> the commands a player types
_USER_WORDS = (("list_tables", "list"), ("create_table", "create"))


def user_words(text: str) -> str:
    """A server's sentence with the protocol's message names put as the player's
    commands ("list_tables shows the open ones" -> "list shows the open ones")."""
    for wire, word in _USER_WORDS:
        text = text.replace(wire, word)
    return text


def is_network_error(e: BaseException) -> bool:
    """A dropped or refused connection (possibly wrapped in a group), not a bug of ours."""
    if isinstance(e, BaseExceptionGroup):
        return all(is_network_error(x) for x in e.exceptions)
    return isinstance(e, (ConnectionClosed, HandshakeError, OSError, trio.TooSlowError,
                          trio.BrokenResourceError, trio.ClosedResourceError, ServerError, NotOurServer))


def _reason(e: BaseException) -> str:
    if isinstance(e, BaseExceptionGroup):
        return _reason(e.exceptions[0])
    if isinstance(e, ConnectionRejected):
        return _rejected(e)
    if isinstance(e, ConnectionClosed):
        if e.code == 1006:
            return e.reason or "connection lost"
        return f"closed by the server ({e.code}{': ' + e.reason if e.reason else ''})" if e.code else "connection closed"
    if isinstance(e, OSError):
        text = e.strerror or str(e) or type(e).__name__
        # trio's "all attempts to connect to HOST:PORT failed" keeps why in its cause
        why = e.__cause__
        if not e.strerror and isinstance(why, BaseExceptionGroup) and isinstance(why.exceptions[0], OSError):
            code = why.exceptions[0].errno
            if code:
                text = f"{text} ({os.strerror(code)})"
        return text
    if isinstance(e, trio.TooSlowError):
        return "timed out"
    return str(e) or type(e).__name__


def _rejected(e: ConnectionRejected) -> str:
    """One sentence for a WebSocket handshake answered with plain HTTP. A wildtable server
    refuses with a short plain-text sentence (full, too many connections, a refused origin):
    that is shown; anything else (a web page, a redirect) means another kind of server."""
    headers = {k.lower(): v for k, v in e.headers}
    kind = headers.get("content-type", "").split(";")[0].strip().lower()
    body = e.body
    text = body.decode("utf-8", "replace").strip()
    if kind == "text/plain" and text and len(text) <= 300 and "\n" not in text and text.isprintable():
        return f"the server refused the connection (HTTP {e.status_code}): {text}"
    served = headers.get("server", "")
    what = "a web page" if kind == "text/html" else f"{kind} content" if kind else "no WebSocket"
    return (f"it is not a wildtable server: it answered with HTTP {e.status_code}"
            f"{' from ' + printable(served[:60]) if served else ''} and {what}, not a WebSocket")


class ClientCore:
    """One player's (or bot's) connection, mirror and commands."""

    def __init__(self, url: str, name: str, notify: Callable[[Notice], None] | None = None, *,
                 lobby_refresh: float | None = None, default_game: str = "run-wild",
                 bot_delay: float | None = None, heartbeat: float = HEARTBEAT, pong_timeout: float = PONG_TIMEOUT,
                 seat_book: SeatTokens | None = None, bot_level: str | None = None, dial: Dial | None = None):
        self.url = url
        self.dial = dial                    # how to reach a server (None: TCP; net.Dial)
        self.name = name
        self._notify = notify or (lambda n: None)
        self.lobby_refresh = lobby_refresh
        self.default_game = default_game
        self.bot_delay = bot_delay
        self.bot_level = bot_level          # the level of bots seated with "bots N" (None: the default)
        self.heartbeat, self.pong_timeout = heartbeat, pong_timeout
        self.seat_book = seat_book          # seat tokens kept between runs (None: not kept)
        self._resuming = False              # a rejoin with a token from the seat book is under way
        self.mirror = Mirror()
        self.tables: list[dict] = []
        self.conn: Connection | None = None
        self.online = False
        self.server_name = ""
        self.quit_requested = False
        self.pending: dict[int, str] = {}       # intent id -> the command that sent it
        self._accepted_later: list[tuple[int, int, str]] = []   # (seq, intent, command) awaiting their update
        self._mine: set[int] = set()        # seqs of this client's own accepted intents (recent ones)
        self._over_line: str | None = None  # the game's own words for its end (its game_over event)
        self.logs_kept = True               # False: a private server's, whose logs go when it stops
        self.turn_clock: tuple[int, float, float] | None = None   # (seat to move, deadline, seconds): see turn_left
        self.next_intent = 1
        self.history: list[str] = []
        self._waiters: list[_Waiter] = []
        self._asked_lists = 0
        self._join_created = 0
        self._rejoining = False
        self._last_sent = 0.0
        self._cmd_send, self._cmd_recv = trio.open_memory_channel(COMMAND_QUEUE)
        self._nursery: trio.Nursery | None = None
        self._conn_scope: trio.CancelScope | None = None     # the current connection's reading
        self._dropped: BaseException | None = None           # why we dropped it ourselves
        self.node_url: str | None = None    # the node connected to (on a cluster, maybe not self.url)
        self.nodes: tuple[str, ...] = ()    # the cluster's nodes, as the last welcome named them
        self._moving: tuple[str, str] | None = None          # (url, why): going to that node now
        self._connections = 0               # connections made (said hello) so far
        self._connected = trio.Event()      # set, and replaced, at each connection made
        self._last_sent_of: dict[str, Any] = {}   # the last redirectable message sent, by type
        self._chase: Chase | None = None    # the redirects of the message no request() waits for
        self._unreachable = Unreachable()   # the nodes a connection failed to, for redirects

    # ---------------------------------------------------------------- what the UIs read
    @property
    def plugin(self):
        return games.plugin_for(self.mirror.game)

    @property
    def ctx(self) -> Ctx:
        return games.ctx_from(self.mirror.players, self.mirror.seat)

    @property
    def at_table(self) -> bool:
        return self.mirror.table is not None

    def notify(self, kind: str, text: str = "", data: Any = None) -> None:
        self._notify(Notice(kind, text, data))

    # ---------------------------------------------------------------- lifetime
    async def run(self, *, task_status=trio.TASK_STATUS_IGNORED) -> None:
        """Stay connected until cancelled. ``task_status.started()`` once the first
        connection said hello; if that first attempt fails, CannotConnect is raised."""
        try:
            async with trio.open_nursery() as nursery:
                self._nursery = nursery
                nursery.start_soon(self._command_loop)
                nursery.start_soon(self._heartbeat)
                if self.lobby_refresh:
                    nursery.start_soon(self._refresh_lobby)
                await self._connection_loop(task_status)
                nursery.cancel_scope.cancel()
        except BaseExceptionGroup as group:
            if len(group.exceptions) == 1 and isinstance(group.exceptions[0], CannotConnect):
                raise group.exceptions[0] from None
            raise

    def reconnect_order(self) -> list[str]:
        """Where to connect again after a drop: the node (a redirect's target, if any),
        the URL the player gave, then each node of the last welcome; each once."""
        order: list[str] = []
        for url in ((self._moving[0],) if self._moving else ()) + (self.node_url or self.url, self.url) + self.nodes:
            if url not in order and url_problem(url) is None:
                order.append(url)
        return order

    async def _connection_loop(self, task_status) -> None:
        first = True
        attempt = 0
        while True:
            error: BaseException | None = None
            moved = self._moving
            for target in ([self.url] if first else self.reconnect_order()):
                error, online = await self._connection(target, first, task_status)
                self._unreachable.tried(target, online, trio.current_time())
                if online:
                    first, attempt = False, 0
                    break
                if first:
                    raise CannotConnect(f"cannot connect to {self.url}: {_reason(error)}" if error else
                                        f"cannot connect to {self.url}")
            for seq, iid, label in self._accepted_later:
                self.notify("accepted", label, (iid, seq))
            self._accepted_later.clear()
            for iid, label in sorted(self.pending.items()):
                self.notify("rejected", label, (iid, "connection_lost", "the connection dropped before the server "
                                                 "answered; the table shows whether it happened"))
            self.pending.clear()
            for w in self._waiters:
                w.event.set()
            self._waiters.clear()
            if self._moving is not None and self._moving is not moved:
                continue            # a redirect ended this connection: go there at once
            self._moving = None
            delay = BACKOFF[min(attempt, len(BACKOFF) - 1)]
            attempt += 1
            why = _reason(error) if error else "closed by the server"
            self.notify("connection", f"connection lost ({why}); reconnecting in {delay:g} s...")
            await trio.sleep(delay)

    async def _connection(self, target: str, first: bool, task_status) -> tuple[BaseException | None, bool]:
        """One connection to ``target``, read until it ends: (why it ended, whether it
        said hello)."""
        error: BaseException | None = None
        online = False
        self._dropped = None
        try:
            async with connect(target, None, dial=self.dial) as conn:
                welcome = await conn.hello(self.name)
                online = True
                moving, self._moving = self._moving, None
                self.conn, self.online = conn, True
                self.node_url, self.nodes = target, tuple(welcome.nodes)
                self.server_name = welcome.server
                self._last_sent = trio.current_time()
                if first:
                    self.notify("connection", f"connected to {self.url} ({welcome.server}) as {self.name}")
                    task_status.started()
                elif moving is not None and moving[0] == target:
                    self.notify("connection", f"connected to {target} ({moving[1]})")
                else:
                    self.notify("connection", f"connection back: reconnected to {target}")
                self._connections += 1
                self._connected.set()
                self._connected = trio.Event()
                with trio.CancelScope() as self._conn_scope:
                    await self._resume(conn, first, moving is not None)
                    await self._read(conn)
                self.conn, self.online = None, False
                error = self._dropped
        except Exception as e:
            if not is_network_error(e):
                raise
            error = self._dropped or e      # closing a dropped connection may fail too
        finally:
            self.conn, self.online = None, False
            self._conn_scope = None
        return error, online

    async def _resume(self, conn: Connection, first: bool, moved: bool = False) -> None:
        """After a reconnect: take the seat back with its token, or spectate again (and,
        unless a redirect brought us here, show the lobby)."""
        mir = self.mirror
        if not first and mir.table is not None and mir.over is None:
            if mir.seat is not None and mir.token:
                self._rejoining = True
                await self._send(m.Rejoin(mir.table, mir.seat, mir.token))
                return
            if mir.seat is None:
                self._rejoining = True
                await self._send(m.Spectate(mir.table))
                return
        if not first and not moved:
            await self._send(m.ListTables())

    async def _heartbeat(self) -> None:
        """Notice a server that went silent (no pong: close, so the reader reconnects), and
        never stay quiet long enough for the server's idle timeout."""
        while True:
            await trio.sleep(self.heartbeat)
            conn = self.conn
            if conn is None:
                continue
            try:
                await conn.ping(self.pong_timeout)
                if trio.current_time() - self._last_sent > KEEPALIVE:
                    await self._send(m.ListTables())
            except trio.TooSlowError:
                # Drop this connection (the loop then reconnects); its reader would wait for ever.
                self._dropped = TimeoutError(f"no answer to a ping within {self.pong_timeout:g} s")
                if self._conn_scope is not None and self.conn is conn:
                    self._conn_scope.cancel()
            except NotConnected:
                pass
            except Exception as e:
                if not is_network_error(e):
                    raise

    async def _refresh_lobby(self) -> None:
        """Keep the lobby list fresh while the player is not at a table."""
        while True:
            await trio.sleep(self.lobby_refresh)  # type: ignore[arg-type]  # started only when set
            if self.online and not self.at_table:
                try:
                    await self._send(m.ListTables())
                except NotConnected:
                    pass

    # ---------------------------------------------------------------- sending
    async def _send(self, msg: Any) -> None:
        try:
            data = m.encode(msg)
        except OverflowError:
            raise CommandError("a number in it is too large to send (numbers go up to 2**63)") from None
        except (ValueError, TypeError) as e:
            raise CommandError(f"it cannot be sent: {e}") from None
        conn = self.conn
        if conn is None:
            raise NotConnected("not connected to the server (reconnecting); try again in a moment")
        try:
            with trio.fail_after(REPLY_TIMEOUT):     # a peer that stops reading must not hang us
                await conn.send_raw(data)
        except Exception as e:
            if not is_network_error(e):
                raise
            raise NotConnected(f"the connection dropped ({_reason(e)}); reconnecting") from None
        self._last_sent = trio.current_time()
        if msg.TAG in REDIRECTABLE:
            self._last_sent_of[msg.TAG] = msg

    async def request(self, msg: Any, pred: Callable[[Any], bool], timeout: float = REPLY_TIMEOUT,
                      quiet: bool = False) -> Any:
        """Send ``msg`` and return the first message matching ``pred`` (or the Error the
        server answers it with). The reader still shows every message as usual, except,
        with ``quiet``, the Error that answers ``msg``: the caller reports it (once).

        A ``redirect`` of it is followed as redirects.decide says: to the node named, where
        ``msg`` is sent again (a create_table with ``here``); or, if that node did not
        answer, sent again here after a pause; or answered by an Error the client makes
        (``too_many_redirects``, ``node_unreachable``: shown unless ``quiet``)."""
        chase = Chase(trio.current_time())
        while True:
            reply = await self._request_once(msg, pred, timeout, quiet)
            if not isinstance(reply, m.Redirect):
                return reply
            chase, action = decide(chase, reply, self._unreachable.get(reply.url), trio.current_time(),
                                   patient=False)
            if isinstance(action, GiveUp):
                if not quiet:
                    self._say_error(action.error)
                return action.error
            if isinstance(action, AskAgain):
                self.notify("connection", action.why)
                await trio.sleep(action.delay)
                continue
            await self._move(reply)
            msg = sent_again(msg)

    async def _move(self, redirect: m.Redirect) -> None:
        """Go to the node a redirect names: this connection ends, the next one is there
        (or, if it cannot be reached, wherever the reconnect order leads)."""
        if bad := url_problem(redirect.url):
            raise NotConnected(f"the server sent us to another node, but {bad}")
        why = printable(redirect.reason) if redirect.reason else f"the server sent {redirect.ref} there"
        self._moving = (redirect.url, why)
        made = self._connections
        self._dropped = None
        if self._conn_scope is not None:
            self._conn_scope.cancel()
        with trio.fail_after(REPLY_TIMEOUT):
            while self._connections == made or not self.online:
                await self._connected.wait()

    async def _request_once(self, msg: Any, pred: Callable[[Any], bool], timeout: float, quiet: bool) -> Any:
        tag = type(msg).TAG
        w = _Waiter(lambda x: pred(x) or (isinstance(x, m.Error) and x.ref in (tag, None))
                    or (isinstance(x, m.Redirect) and x.ref == tag), tag, quiet)
        self._waiters.append(w)
        try:
            await self._send(msg)
            with trio.fail_after(timeout):
                await w.event.wait()
        finally:
            if w in self._waiters:
                self._waiters.remove(w)
        if w.value is None:
            raise NotConnected("the connection dropped before the server answered")
        return w.value

    async def create(self, game: str, seats: int, settings: dict | None = None, name: str = "",
                     quiet: bool = False) -> Any:
        return await self.request(m.CreateTable(game, seats, dict(settings or {}), name),
                                  lambda x: isinstance(x, m.TableCreated), quiet=quiet)

    async def join(self, table: str, seat: int | None = None) -> Any:
        """Take a seat: the one this client held before (seat book), else a new one."""
        # only a token this player (this name) kept: never another's who shares the machine
        saved = self.seat_book.find(self.url, table, self.name) if self.seat_book is not None else None
        if saved is not None and seat in (None, saved[0]):
            self._resuming = True
            try:
                reply = await self.request(m.Rejoin(table, saved[0], saved[1]), lambda x: isinstance(x, m.Joined))
            finally:
                self._resuming = False
            if isinstance(reply, m.Joined) or reply.code == "already_at_table":
                return reply
            self.seat_book.forget(self.url, table, self.name)  # type: ignore[union-attr]  # saved came from it; released, or another server's table
        return await self.request(m.Join(table, seat), lambda x: isinstance(x, m.Joined))

    async def spectate(self, table: str) -> Any:
        return await self.request(m.Spectate(table), lambda x: isinstance(x, m.Spectating))

    async def list_tables(self, asked: bool = True) -> Any:
        if asked:
            self._asked_lists += 1
        return await self.request(m.ListTables(), lambda x: isinstance(x, m.TableList))

    async def act(self, action: dict, label: str) -> int:
        """Send one action as an intent; its answer arrives as an accepted/rejected notice."""
        iid = self.next_intent
        self.next_intent += 1
        self.pending[iid] = label
        try:
            await self._send(m.Intent(iid, action))
        except (NotConnected, CommandError):
            self.pending.pop(iid, None)
            raise
        # The reader may have read the answer while the write was under way (the server
        # answers at once, and our task resumes only after the reader's turn): then its
        # accepted/rejected is already out, and a "sent" now would come after it.
        if iid in self.pending:
            self.notify("sent", label, iid)
        return iid

    # ---------------------------------------------------------------- receiving
    async def _read(self, conn: Connection) -> None:
        while True:
            try:
                msg = await conn.receive()
            except ProtocolError as e:
                self.notify("error", f"unreadable message from the server: {e}")
                continue
            if isinstance(msg, m.Redirect):
                self._redirected(msg)
                continue
            if isinstance(msg, (m.Joined, m.Spectating, m.TableCreated, m.BotsSeated)) or (
                    isinstance(msg, m.Error) and msg.ref in REDIRECTABLE):
                self._chase = None          # answered: the next redirect starts a new chase
            if not (isinstance(msg, m.Error) and
                    any(w.quiet and msg.ref == w.tag and w.pred(msg) for w in self._waiters)):
                self._absorb(msg)
            for w in list(self._waiters):
                if w.pred(msg):
                    w.value = msg
                    w.event.set()
                    self._waiters.remove(w)

    def _redirected(self, msg: m.Redirect) -> None:
        """A redirect: to the request that waits for it (which follows it), else handled
        here as redirects.decide says: a message the player typed is sent again at the
        node, and a seat being taken back is taken back there; a node that does not
        answer is not gone to again at once: the message is sent again here after a pause
        (a seat being taken back is never given up)."""
        for w in list(self._waiters):
            if w.pred(msg):
                w.value = msg
                w.event.set()
                self._waiters.remove(w)
                return
        now = trio.current_time()
        self._chase, action = decide(self._chase or Chase(now), msg, self._unreachable.get(msg.url), now,
                                     patient=self._rejoining)
        if isinstance(action, GiveUp):
            self._chase = None
            self._rejoining = False
            self._say_error(action.error)
        elif isinstance(action, AskAgain):
            self.notify("connection", action.why)
            self._spawn(self._ask_again, action.delay, self.conn, self._last_sent_of.get(msg.ref))
        else:
            # a seat being taken back: the reconnect at the node takes it back itself
            self._spawn(self._follow, msg, None if self._rejoining else self._last_sent_of.get(msg.ref))

    async def _ask_again(self, delay: float, conn: Connection | None, again: Any) -> None:
        """Send ``again`` after ``delay`` on the same connection (another one takes the seat
        back by itself, and a message typed since is the player's latest word)."""
        await trio.sleep(delay)
        if again is None or self.conn is not conn or self._last_sent_of.get(again.TAG) is not again:
            return
        try:
            await self._send(again)
        except NotConnected:
            pass            # the reconnect sends a rejoin itself

    def _say_error(self, error: m.Error) -> None:
        self.notify("error", f"{error.code}: {user_words(error.message)}", error)

    async def _follow(self, redirect: m.Redirect, again: Any) -> None:
        try:
            await self._move(redirect)
            if again is not None:
                await self._send(sent_again(again))
        except (NotConnected, trio.TooSlowError) as e:
            self.notify("error", f"could not follow the server to {redirect.url}: "
                                 f"{e if isinstance(e, NotConnected) else 'it did not answer in time'}")

    def _absorb(self, msg: Any) -> None:
        """Fold one server message into the mirror and tell the UI what to show."""
        mir = self.mirror
        t = type(msg)
        if t is m.Update:
            if msg.seq <= mir.seq:
                return
            before = mir.view
            mir.absorb(msg)
            ctx, plugin = self.ctx, self.plugin
            by_timer = self._timer_played_for_me(before, msg)
            for ev in msg.events:
                line = plugin.describe(ev, ctx)
                if isinstance(ev, dict) and ev.get("event") in ("game_over", "game_ended"):     # Run Wild's
                    # said once, by the "over" notice that follows (with the scores and the log)
                    self._over_line = line
                    continue
                if line and ev is by_timer:
                    line = f"the timer played for you ({turn_timer_of(before):g} s passed): {line}"
                    self.notify("flash", "Timer!", ev)
                if line:
                    self.notify("event", line, ev)
                word = plugin.flash(ev, ctx)
                if word:
                    self.notify("flash", word, ev)
            self._set_turn_clock()
            while self._accepted_later and self._accepted_later[0][0] <= mir.seq:
                seq, iid, label = self._accepted_later.pop(0)
                self.notify("accepted", label, (iid, seq))
            self.notify("table")
        elif t is m.Accepted:
            label = self.pending.pop(msg.intent, None)  # type: ignore[arg-type]  # None: not ours
            if label is not None:
                self._mine.add(msg.seq)
                if len(self._mine) > 64:
                    self._mine.discard(min(self._mine))
                if msg.seq > mir.seq:
                    # The update of that seq follows its acceptance: say "ok" once the
                    # mirror holds it, so whoever reads on acts on the new table.
                    self._accepted_later.append((msg.seq, msg.intent, label))
                else:
                    self.notify("accepted", label, (msg.intent, msg.seq))
                    self.notify("table")
        elif t is m.Rejected:
            label = self.pending.pop(msg.intent, f"intent {msg.intent}")
            reason = user_words(msg.reason)
            as_shown = getattr(self.plugin, "reason_text", None)      # the game's cards as the player types them
            self.notify("rejected", label, (msg.intent, msg.code, as_shown(reason) if as_shown else reason))
        elif t is m.Players:
            if msg.table == mir.table:
                self._players_changed(mir.players, msg.players)
                mir.absorb(msg)
                self.notify("table")
        elif t in (m.Joined, m.Spectating):
            mir.absorb(msg)
            self._set_turn_clock()
            title = self.plugin.TITLE if self.plugin.NAME != "generic" else msg.game
            if t is m.Joined and self.seat_book is not None:
                self.seat_book.remember(self.url, msg.table, self.name, msg.seat, msg.token)
            if self._rejoining:
                where = f"seat {msg.seat}" if t is m.Joined else "watching"
                self.notify("connection", f"back at table {msg.table} ({where}) at seq {msg.seq}")
            elif self._resuming and t is m.Joined:
                self.notify("info", f"took your seat {msg.seat} back at table {msg.table} ({title}) at seq {msg.seq}")
            elif t is m.Joined:
                self.notify("info", f"joined table {msg.table} ({title}) at seat {msg.seat} as {self.name}")
            else:
                self.notify("info", f"watching table {msg.table} ({title})")
            self._rejoining = False
            self.notify("table")
        elif t is m.BotsSeated:
            who = ", ".join(f"{n} (seat {i})" for n, i in zip(msg.names, msg.seats))
            self.notify("info", f"seated {len(msg.seats)} bot(s) ({msg.level}): {who}; the server runs them, "
                                "so they play on if you leave")
        elif t is m.TableCreated:
            self.notify("info", f"created table {msg.table} ({msg.game}, {msg.seats} seats)")
            if self._join_created:
                self._join_created -= 1
                self._spawn(self._send_quietly, m.Join(msg.table, None))
        elif t is m.TableList:
            self.tables = [dict(x) for x in msg.tables]
            asked = self._asked_lists > 0
            if asked:
                self._asked_lists -= 1
            self.notify("tables", "", (self.tables, asked, msg.omitted))
        elif t is m.GameOver:
            mir.absorb(msg)
            self.turn_clock = None
            if self.seat_book is not None:
                self.seat_book.forget(self.url, msg.table, self.name)
            ctx = self.ctx
            scores = ", ".join(f"{ctx.seat_label(i)} {s}" for i, s in enumerate(msg.scores))
            won = " and ".join(ctx.seat_label(w) for w in msg.winners) or "nobody"
            said, self._over_line = self._over_line, None
            said = said or f"game over: {won} {'wins' if len(msg.winners) == 1 else 'win'}"
            # the game's words name the winner; every seat's score comes here, once. A private
            # server's log (play alone) is deleted when the player quits: not named
            log = f"; log {msg.log}" if self.logs_kept and msg.log else ""
            self.notify("over", f"{said} (scores {scores}{log}); type leave for the lobby", msg)
            self.notify("table")
        elif t is m.Left:
            if self.seat_book is not None:
                self.seat_book.forget(self.url, msg.table, self.name)
            self.mirror = Mirror()
            self.notify("info", f"you left table {msg.table}")
            self.notify("table")
            self._spawn(self._send_quietly, m.ListTables())
        elif t is m.Error:
            if msg.ref == "rejoin" and self._resuming and msg.code != "already_at_table":
                return          # the saved token no longer holds the seat: join() asks for a new one
            if msg.ref in ("rejoin", "spectate") and self._rejoining:
                self._rejoining = False
                self.mirror = Mirror()
                self.notify("error", f"could not go back to the table: {msg.code}: {user_words(msg.message)}", msg)
                self.notify("table")
                return
            if msg.code == "seat_taken_over":
                self.mirror = Mirror()
                self.notify("error", "your seat was resumed from another connection; this one is back in the lobby", msg)
                self.notify("table")
                return
            self._say_error(msg)
        elif t is m.Goodbye:
            self.notify("connection", f"the server says goodbye: {msg.reason}")
        elif t is m.Welcome:
            pass

    def _timer_played_for_me(self, before: dict, msg: m.Update) -> dict | None:
        """The event of ``msg`` that the table's turn timer made for this seat, or None.

        The server answers an intent of ours with `accepted` before the update of its seq
        (on this connection, in order). So an update whose first event is an action of our
        seat, made when it was our turn, with no `accepted` of ours for its seq, is the move
        the turn timer made for us (the log records it as `by: timer`)."""
        me = self.mirror.seat
        if me is None or not msg.events or before.get("turn") != me or not turn_timer_of(before):
            return None
        if msg.seq in self._mine:
            return None
        ev = msg.events[0]
        if isinstance(ev, dict) and ev.get("seat") == me and ev.get("event") not in CHANCE_EVENTS:
            return ev
        return None

    def _set_turn_clock(self) -> None:
        """The countdown of the seat whose turn it is, from the table's `turn_timer` setting
        (in the view). The server counts it from the table's last accepted action, which is
        when the last update came; after a reconnect it may be due sooner than shown."""
        view, mir = self.mirror.view, self.mirror
        secs = turn_timer_of(view)
        turn = view.get("turn")
        if mir.over is not None or not secs or not isinstance(turn, int) or view.get("winners"):
            self.turn_clock = None
        else:
            self.turn_clock = (turn, time.monotonic() + secs, secs)

    def turn_left(self) -> tuple[int, int] | None:
        """(seat to move, whole seconds left before the timer plays for it), or None."""
        clock = self.turn_clock
        if clock is None or not self.at_table:
            return None
        return clock[0], max(0, int(clock[1] - time.monotonic() + 0.999))

    def _players_changed(self, old, new) -> None:
        before = {p["seat"]: p for p in old or ()}
        for p in new:
            b = before.get(p["seat"], {})
            name = p.get("name")
            if p["seat"] == self.mirror.seat or not name:
                continue
            if b.get("name") != name:
                self.notify("info", f"{name} took seat {p['seat']}")
            elif b.get("connected") and not p.get("connected") and self.mirror.over is not None:
                self.notify("info", f"{name} left")         # the game is over: nobody waits for them
            elif b.get("connected") and not p.get("connected"):
                self.notify("info", f"{name} lost the connection (their seat waits for them)")
            elif not b.get("connected") and p.get("connected"):
                self.notify("info", f"{name} is back")

    def _spawn(self, fn, *args) -> None:
        if self._nursery is not None:
            self._nursery.start_soon(fn, *args)

    async def _send_quietly(self, msg: Any) -> None:
        try:
            await self._send(msg)
        except NotConnected as e:
            self.notify("error", str(e))

    # ---------------------------------------------------------------- commands
    def submit(self, text: str) -> None:
        """Queue a typed command (from the UI's side; never blocks)."""
        try:
            self._cmd_send.send_nowait(text)
        except trio.WouldBlock:
            self.notify("error", f"too many commands at once; {text!r} was dropped")

    async def _command_loop(self) -> None:
        async for text in self._cmd_recv:
            await self.command(text)

    def command_words(self) -> dict[str, str]:
        """Every command word available now, with its help line."""
        words = dict(LOBBY_COMMANDS)
        words.update(self.plugin.COMMANDS if self.at_table else games.plugin_for(self.default_game).COMMANDS)
        return words

    def command_word(self, word: str) -> str:
        """A typed command word through the aliases (``p`` -> ``play``), lower-cased."""
        plugin = self.plugin if self.at_table else games.plugin_for(self.default_game)
        w = word.lower()
        return LOBBY_ALIASES.get(w, getattr(plugin, "ALIASES", {}).get(w, w))

    def help_text(self, word: str | None = None) -> str:
        plugin = self.plugin if self.at_table else games.plugin_for(self.default_game)
        if word:
            line = self.command_words().get(self.command_word(word))
            return line if line else f"no command {word!r}; help lists them all"
        lines = [f"{plugin.TITLE} commands:"]
        lines += ["  " + x for x in plugin.COMMANDS.values()]
        lines += [""] + plugin.HELP.splitlines() + ["", "Table and lobby commands:"]
        lines += ["  " + x for x in LOBBY_COMMANDS.values()]
        return "\n".join(lines)

    async def command(self, text: str) -> None:
        """Run one typed command; everything it leads to arrives as notices."""
        text = text.strip()
        if not text:
            return
        self.history.append(text)
        del self.history[:-200]
        try:
            words = shlex.split(text) if not text.lower().startswith("act ") else text.split(None, 1)
        except ValueError as e:
            self.notify("rejected", text, (None, "bad_command", str(e)))
            return
        word = words[0].lower()
        word = LOBBY_ALIASES.get(word, word)
        try:
            await self._run_command(word, words, text)
        except CommandError as e:
            self.notify("rejected", text, (None, "bad_command", str(e)))
        except NotConnected as e:
            self.notify("rejected", text, (None, "not_connected", str(e)))
        except trio.TooSlowError:
            self.notify("rejected", text, (None, "no_answer", "the server did not answer in time"))
        except Exception as e:
            # a bug of ours in reading the command must not end the session: say so and go on
            self.notify("rejected", text, (None, "client_bug", f"the client failed on this command (our bug: "
                                           f"{type(e).__name__}: {e}); nothing was sent, and the game goes on"))

    async def _run_command(self, word: str, words: list[str], text: str) -> None:
        mir = self.mirror
        if word == "help":
            self.notify("help", self.help_text(words[1].lower() if len(words) > 1 else None))
        elif word == "quit":
            self.quit_requested = True
            self.notify("quit")
        elif word == "list":
            self._no_more_words(word, words)
            self._asked_lists += 1
            await self._send(m.ListTables())
        elif word == "show":
            self._no_more_words(word, words)
            if not self.at_table:
                raise CommandError("you are not at a table; list shows the tables")
            self.notify("show", "\n".join(self.plugin.render_text(mir.view, self.ctx)))
        elif word == "create":
            if self.at_table:
                doing = "watching" if mir.seat is None else "at"
                raise CommandError(f"you are {doing} table {mir.table}: leave it first, then create a new one")
            game, seats, settings = self._parse_create(words[1:])
            self._join_created += 1
            await self._send(m.CreateTable(game, seats, settings))
        elif word in ("join", "spectate"):
            if len(words) < 2:
                raise CommandError(f"{word} which table? e.g. {word} t1a2b3c4d (list shows them)")
            table = self._table_ref(words[1])
            if word == "spectate":
                await self._send(m.Spectate(table))
                return
            seat = None
            if len(words) > 2:
                if not is_number(words[2]):
                    raise CommandError("a seat is a number: join TABLE 2")
                seat = int(words[2])
            await self.join(table, seat)
        elif word == "leave":
            self._no_more_words(word, words)
            if not self.at_table:
                raise CommandError("you are not at a table")
            await self._send(m.Leave())
        elif word == "bots":
            await self._add_bots(words)
        elif word == "act":
            self._need_seat()
            from .games import generic
            action = generic.parse_act(["act"] + words[1:])
            await self.act(action, text)
        else:
            plugin = self.plugin if self.at_table else games.plugin_for(self.default_game)
            known = set(plugin.COMMANDS) | set(getattr(plugin, "ALIASES", {}))
            if word not in known:
                if not self.at_table and any(word in p.COMMANDS or word in getattr(p, "ALIASES", {})
                                             for p in games.PLUGINS.values()):
                    self._need_seat()           # another game's command, typed in the lobby
                raise CommandError(f"unknown command {words[0]!r}; help lists the commands")
            self._need_seat()
            if mir.over is not None:
                raise CommandError("the game is over: no more moves; show prints the final table, "
                                   "leave goes back to the lobby")
            action = plugin.parse(words, mir.view)
            await self.act(action, text)

    @staticmethod
    def _no_more_words(word: str, words: list[str]) -> None:
        if len(words) > 1:
            raise CommandError(f"{word} takes nothing after it; usage: {LOBBY_COMMANDS[word]}")

    def _need_seat(self) -> None:
        if not self.at_table:
            raise CommandError("you are not at a table: join one first (list shows them)")
        if self.mirror.seat is None:
            raise CommandError("you are watching this table, not playing at it")

    def _table_ref(self, ref: str) -> str:
        """A table id, or its number in the last list (1 = the first). A number is always
        a place in the list (table ids start with a letter): one past its end is refused here."""
        if is_number(ref):
            n = len(self.tables)
            if 1 <= int(ref) <= n:
                return self.tables[int(ref) - 1]["table"]
            if n == 0:
                raise CommandError(f"there is no table {ref}: the list is empty (list shows the tables; "
                                   f"create makes one)")
            which = "join 1" if n == 1 else f"1 to {n}"
            raise CommandError(f"there is no table {ref}: the list has {n} table{'s' if n != 1 else ''} ({which}), "
                               f"or give a table's id; list shows them")
        return ref

    def _parse_create(self, args: list[str]) -> tuple[str, int, dict]:
        from wildtable.protocol.engine import games as engine_games
        known = engine_games()
        game, seats, settings = self.default_game, None, {}
        for a in args:
            if "=" in a:
                k, v = a.split("=", 1)
                try:
                    settings[k] = json.loads(v)
                except ValueError:
                    settings[k] = v
            elif is_number(a):
                seats = int(a)
            elif a in known:
                game = a
            else:
                raise CommandError(f"{a!r} is neither a game ({', '.join(sorted(known))}), a number of players, "
                                   f"nor NAME=VALUE")
        if seats is None:
            eng = known.get(game)
            seats = min(4, eng.MAX_PLAYERS) if eng is not None else 2
        return game, seats, settings

    async def _add_bots(self, words: list[str]) -> None:
        """Ask the server to seat bots at this table: it runs them itself, so they play on
        after this client is gone (seat_bots, docs/PROTOCOL.md)."""
        from .levels import level_problem
        mir = self.mirror
        if not self.at_table:
            raise CommandError("join or create a table first; bots N then seats N bots at it")
        if mir.seat is None:
            raise CommandError("you are watching this table: only a player at the table can seat bots at it")
        if not games.has_bot(mir.game):
            raise CommandError(f"there is no bot for {mir.game} yet")
        if len(words) not in (2, 3) or not is_number(words[1]) or not 1 <= int(words[1]) <= 15:
            raise CommandError("bots wants how many, and a level if you like: e.g. bots 2, bots 2 easy")
        level = words[2].lower() if len(words) == 3 else self.bot_level
        if bad := level_problem(level):
            raise CommandError(bad)
        count = int(words[1])
        # a seat released mid-game keeps its player's name, shown offline like a seat whose
        # player only lost the connection: those may be free, and the server says which
        free = sum(1 for p in mir.players if not p.get("name") or (mir.seq > 0 and not p.get("connected")))
        if count > free:
            raise CommandError(f"only {free} seat(s) free at this table")
        await self._send(seat_bots(mir.table, count, level, self.bot_delay))  # type: ignore[arg-type]  # at_table: table set


def seat_bots(table: str, count: int, level: str | None, delay: float | None) -> m.SeatBots:
    """The request that has the server seat (and run) ``count`` bots at ``table``; a fixed
    ``delay`` (--bot-delay, seconds) goes in milliseconds, 60 s at most."""
    return m.SeatBots(table, count, level, None if delay is None else min(60_000, round(delay * 1000)))


def split_for_completion(text: str) -> list[str]:
    """The words of a partly typed line; the last one is the word being typed ("" after a space)."""
    words = text.split()
    if not text or text[-1].isspace():
        words.append("")
    return words


def completions(core: ClientCore, text: str) -> list[str]:
    """Candidates for the word being typed at the end of ``text``, best first."""
    words = split_for_completion(text)
    partial = words[-1]
    if len(words) == 1:
        pool = list(core.command_words())
    else:
        cmd = LOBBY_ALIASES.get(words[0].lower(), words[0].lower())
        if cmd in ("join", "spectate") and len(words) == 2:
            pool = [t["table"] for t in core.tables]
        elif cmd == "create":
            from wildtable.protocol.engine import games as engine_games
            pool = sorted(engine_games())
        elif cmd == "help" and len(words) == 2:
            pool = list(core.command_words())
        else:
            # a game's words only while there is a game to play (not in the lobby, not
            # once it is over: a move would be refused)
            playing = core.at_table and core.mirror.over is None
            pool = core.plugin.complete(words, core.mirror.view) if playing else []
    low = partial.lower()
    return [c for c in pool if c.lower().startswith(low) and c.lower() != low] or \
        ([c for c in pool if c.lower() == low] if partial else [])


def complete_line(core: ClientCore, text: str) -> str | None:
    """``text`` with its last word completed to the first candidate, or None."""
    cands = completions(core, text)
    if not cands:
        return None
    partial = split_for_completion(text)[-1]
    return text[:len(text) - len(partial)] + cands[0]
