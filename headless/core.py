"""The client's connection layer, plain Trio: one connection kept alive, messages sent and
read, redirects followed; what the messages mean is the reducer's (headless/reducer.py),
what typed commands come to is headless/commands.py's (run one at a time by
headless/typed.py, a base of ClientCore). The full-screen UI hosts it in guest
mode, the line mode and the bots run it under ``trio.run``; all of them see it only through
typed notices (headless/notices.py: what to show) and ``command``/``submit`` (what the
player typed). Why this split: the I/O waits and retries here, the decisions are values in
and values out elsewhere, tested without sockets (docs/ARCHITECTURE.md, "headless/ (wildtable.headless)").

A dropped connection is reopened by itself with backoff; a seated player resumes the
seat with its secret token (``rejoin``), a spectator spectates again, and the player is
told both that the connection dropped and that it is back. A rejoin refused "not yet"
(the table's node is taking it over, its store is away: reducer.NOT_YET) keeps the token
and asks again after a pause, saying so.

On a cluster (docs/PROTOCOL.md, "Clusters") a node may answer a message with
``redirect``: the core connects to the node named, says hello with the same name and
sends the message again (a ``create_table`` with ``here``), at most MAX_REDIRECTS times
in a row for one message; a redirect to a node that did not answer is not followed again
at once: the core asks again where it is after a pause (headless/redirects.py decides).
Seat tokens stay under the URL the player gave. A dropped connection is tried again at
the node it was on, then at that URL, then at each node of the last ``welcome``.
"""

from __future__ import annotations

import time
from typing import Any, Callable

import trio

from wildtable.protocol import messages as m
from wildtable.protocol.errors import ProtocolError

from . import notices as n
from .commands import (  # noqa: F401  (the names the UIs and tests import from here)
    LOBBY_ALIASES, LOBBY_COMMANDS, complete_line, completions, seat_bots, split_for_completion,
)
from .games import CommandError, Ctx
from .net import CannotConnect, Connection, Mirror, NotConnected, connect, url_problem
from .notices import Notice
from .reasons import is_network_error, reason
from .net import Dial
from .redirects import AskAgain, Chase, GiveUp, Unreachable, decide, sent_again
from .reducer import NOT_YET, NOT_YET_DELAYS, Forget, GoBackLater, Remember, Reducer, Send, Step
from .seats import SeatTokens
from .typed import TypedCommands
from .words import LobbyRow, lobby_row, printable, turn_timer_of, user_words  # noqa: F401  (as above)

REPLY_TIMEOUT = 10.0        # seconds to wait for the server's answer to a lobby request
KEEPALIVE = 240.0           # the server closes connections silent for 600 s
HEARTBEAT = 20.0            # seconds between our pings; a server that does not answer ...
PONG_TIMEOUT = 15.0         # ... within this is taken for gone, and we reconnect
BACKOFF = (0.2, 0.5, 1.0, 2.0, 3.0, 5.0)
COMMAND_QUEUE = 64
# the messages a cluster's node may send on to another node
REDIRECTABLE = frozenset((m.CreateTable.TAG, m.Join.TAG, m.Rejoin.TAG, m.Spectate.TAG, m.SeatBots.TAG))  # type: ignore[attr-defined]  # TAG: set by @msg


class _Waiter:
    def __init__(self, pred: Callable[[Any], bool], tag: str = "", quiet: bool = False):
        self.pred = pred
        self.tag = tag              # the type of the message it answers
        self.quiet = quiet          # the caller reports the server's Error itself
        self.event = trio.Event()
        self.value: Any = None




class ClientCore(TypedCommands):
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
        self.state = Reducer(name)          # the mirror and what the messages mean (pure)
        self.conn: Connection | None = None
        self.online = False
        self.server_name = ""
        self.quit_requested = False
        self.history: list[str] = []
        self._waiters: list[_Waiter] = []
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
    def mirror(self) -> Mirror:
        return self.state.mirror

    @property
    def tables(self) -> list[dict]:
        return self.state.tables

    @property
    def logs_kept(self) -> bool:
        """False at a private server's table, whose logs go when it stops: not named."""
        return self.state.logs_kept

    @logs_kept.setter
    def logs_kept(self, kept: bool) -> None:
        self.state.logs_kept = kept

    @property
    def pending(self) -> dict[int, str]:
        return self.state.pending

    @property
    def turn_clock(self) -> tuple[int, float, float] | None:
        return self.state.turn_clock

    @property
    def plugin(self):
        return self.state.plugin

    @property
    def ctx(self) -> Ctx:
        return self.state.ctx

    @property
    def at_table(self) -> bool:
        return self.state.at_table

    def turn_left(self) -> tuple[int, int] | None:
        """(seat to move, whole seconds left before the timer plays for it), or None."""
        return self.state.turn_left(time.monotonic())

    def notify(self, notice: Notice) -> None:
        self._notify(notice)

    def _say(self, notices: tuple[Notice, ...]) -> None:
        for x in notices:
            self._notify(x)

    def _apply(self, step: Step) -> None:
        """Carry out what the reducer made of one message: the seat book first (a token is
        kept before anyone acts on the seat), the notices, then the messages to send."""
        for effect in step.effects:
            if isinstance(effect, Remember) and self.seat_book is not None:
                self.seat_book.remember(self.url, effect.table, self.name, effect.seat, effect.token)
            elif isinstance(effect, Forget) and self.seat_book is not None:
                self.seat_book.forget(self.url, effect.table, self.name)
        self._say(step.notices)
        for effect in step.effects:
            if isinstance(effect, Send):
                self._spawn(self._send_quietly, effect.msg)
            elif isinstance(effect, GoBackLater):
                self._spawn(self._go_back_later, effect.delay, self.conn)

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
                    raise CannotConnect(f"cannot connect to {self.url}: {reason(error)}" if error else
                                        f"cannot connect to {self.url}")
            self._say(self.state.connection_ended())
            for w in self._waiters:
                w.event.set()
            self._waiters.clear()
            if self._moving is not None and self._moving is not moved:
                continue            # a redirect ended this connection: go there at once
            self._moving = None
            delay = BACKOFF[min(attempt, len(BACKOFF) - 1)]
            attempt += 1
            why = reason(error) if error else "closed by the server"
            self.notify(n.ConnectionLost(why, delay))
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
                    self.notify(n.Connected(self.url, welcome.server, self.name))
                    task_status.started()
                elif moving is not None and moving[0] == target:
                    self.notify(n.Moved(target, moving[1]))
                else:
                    self.notify(n.Reconnected(target))
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
        again = None if first else self.state.resume_message()
        if again is not None:
            await self._send(again)
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
            raise NotConnected(f"the connection dropped ({reason(e)}); reconnecting") from None
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
                    self.notify(n.ServerError(action.error))
                return action.error
            if isinstance(action, AskAgain):
                self.notify(n.AskingAgain(action.why))
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
            for delay in NOT_YET_DELAYS:
                self.state.resuming = True
                try:
                    reply = await self.request(m.Rejoin(table, saved[0], saved[1]), lambda x: isinstance(x, m.Joined))
                finally:
                    self.state.resuming = False
                if isinstance(reply, m.Joined) or reply.code == "already_at_table":
                    return reply
                if reply.code not in NOT_YET:
                    break
                # not yet (the table's node is taking it over, say): the token is kept
                self.notify(n.NotBackYet(reply, delay))
                await trio.sleep(delay)
            else:
                self.notify(n.ServerError(reply))
                return reply        # still not yet after them all: the token is kept for later
            self.seat_book.forget(self.url, table, self.name)  # type: ignore[union-attr]  # saved came from it; released, or another server's table
        return await self.request(m.Join(table, seat), lambda x: isinstance(x, m.Joined))

    async def spectate(self, table: str) -> Any:
        return await self.request(m.Spectate(table), lambda x: isinstance(x, m.Spectating))

    async def list_tables(self, asked: bool = True) -> Any:
        if asked:
            self.state.asked_lists += 1
        return await self.request(m.ListTables(), lambda x: isinstance(x, m.TableList))

    async def act(self, action: dict, label: str) -> int:
        """Send one action as an intent; its answer arrives as an accepted/rejected notice."""
        iid = self.state.intent(label)
        try:
            await self._send(m.Intent(iid, action))
        except (NotConnected, CommandError):
            self.state.unsent(iid)
            raise
        # The reader may have read the answer while the write was under way (the server
        # answers at once, and our task resumes only after the reader's turn): then its
        # accepted/rejected is already out, and a "sent" now would come after it.
        self._say(self.state.sent(iid))
        return iid

    # ---------------------------------------------------------------- receiving
    async def _read(self, conn: Connection) -> None:
        while True:
            try:
                msg = await conn.receive()
            except ProtocolError as e:
                if e.code == "patch_base":
                    # not the view the server patches (docs/PROTOCOL.md, "update"): drop
                    # this connection; the reconnect's rejoin brings a whole view
                    self._dropped = ConnectionError(str(e))
                    return
                self.notify(n.Problem(f"unreadable message from the server: {e}"))
                continue
            if isinstance(msg, m.Redirect):
                self._redirected(msg)
                continue
            if isinstance(msg, (m.Joined, m.Spectating, m.TableCreated, m.BotsSeated)) or (
                    isinstance(msg, m.Error) and msg.ref in REDIRECTABLE):
                self._chase = None          # answered: the next redirect starts a new chase
            if not (isinstance(msg, m.Error) and
                    any(w.quiet and msg.ref == w.tag and w.pred(msg) for w in self._waiters)):
                self._apply(self.state.absorb(msg, time.monotonic()))
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
                                     patient=self.state.rejoining)
        if isinstance(action, GiveUp):
            self._chase = None
            self.state.rejoining = False
            self.notify(n.ServerError(action.error))
        elif isinstance(action, AskAgain):
            self.notify(n.AskingAgain(action.why))
            self._spawn(self._ask_again, action.delay, self.conn, self._last_sent_of.get(msg.ref))
        else:
            # a seat being taken back: the reconnect at the node takes it back itself
            self._spawn(self._follow, msg, None if self.state.rejoining else self._last_sent_of.get(msg.ref))

    async def _go_back_later(self, delay: float, conn: Connection | None) -> None:
        """Ask for the seat back again after ``delay``, on the same connection and only if
        it is still not taken back (a new connection asks by itself)."""
        await trio.sleep(delay)
        again = self.state.resume_message() if self.conn is conn and self.state.rejoining else None
        if again is None:
            return
        try:
            await self._send(again)
        except NotConnected:
            pass            # the reconnect sends a rejoin itself

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

    async def _follow(self, redirect: m.Redirect, again: Any) -> None:
        try:
            await self._move(redirect)
            if again is not None:
                await self._send(sent_again(again))
        except (NotConnected, trio.TooSlowError) as e:
            self.notify(n.Problem(f"could not follow the server to {redirect.url}: "
                                  f"{e if isinstance(e, NotConnected) else 'it did not answer in time'}"))

    def _spawn(self, fn, *args) -> None:
        if self._nursery is not None:
            self._nursery.start_soon(fn, *args)

    async def _send_quietly(self, msg: Any) -> None:
        try:
            await self._send(msg)
        except NotConnected as e:
            self.notify(n.Problem(str(e)))
