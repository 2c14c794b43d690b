"""Bots the server runs (``seat_bots``): a player at a table asks for N bots, and the
server starts them in its own process, so they play on after that player's client is
gone, and again after a restart of the server while their table is still being played.

They are the same bots as ``wildtable bots`` (headless/bots.py): clients that speak
WebSocket to this server, join like anyone, and send intents like anyone, so the table,
its log and what the other players see are the same as with bots run elsewhere. Only
the way in differs: a socketpair handed straight to the server's connection handler,
not the public listener, so they take no slot of its per-address caps (any local
process can fill 127.0.0.1's) and still obey every rule a player's connection does.

An expert bot's search (CPU-bound, tens of ms) runs in the server's search processes
(server/cpu_pool.py, shared with the hints), never in a thread of the server's: such a
thread held Python's GIL from every table (24 expert bots took 1,000 players' last-update
p50 from 1.5 to 48-57 ms, p99 from 4 to 121-152 ms; in processes 2.2-2.6 and 14-16 ms:
bench/README.md, "The server's bots think in processes of their own"). Only a decision
that is a search goes there (the game's ``expert_searches``: at the bot's turn, with a
choice), not one at every other seat's move. One search at a time server-wide
(BOT_SEARCHES): the bots take one process of the two at most, and leave the other to the
players' hints. A search that could not be worked out (its process ended) costs that bot
the moment: it tries its turn again.

Each bot's seat token is kept in DATA_DIR/bots.json (0600, like the logs: a token
resumes a seat) with its name, level and pace; at the next start every bot whose table
is still being played takes its seat back with it. A bot's entry goes when its game is
over, or when it no longer holds its seat.

The server runs MAX_BOTS at once, and one address at most ``--max-bots-per-address`` of
them (docs/PROTOCOL.md, ``too_many_bots``): the address whose connection asked, as the
listener's per-address caps key it (forwarded.peer_address: behind a trusted proxy, the
client it names). Bots play on after their asker has gone, so without a share one
address could seat a few at table after table until it held all of them (issue #25).
A bot counts against its address from the request to its end, in the same moment as
against MAX_BOTS (AddressCounts); its entry in bots.json keeps the address, so a bot resumed
after a restart (or by the node adopting its table) counts against it again. An entry
without one (a bots.json of an older server) counts against no address.
"""

from __future__ import annotations

import importlib
import logging
import math
import socket
from pathlib import Path
from typing import TYPE_CHECKING, Any

import trio

from wildtable.protocol import messages as m
from wildtable.protocol.errors import IllegalAction

from .cpu_pool import BrokenProcessPool, pool_of
from .forwarded import Address, AddressCounts, peer_address
from .jsonfile import read_json, replace_json
from .wire import ws_url
from .oplog import Throttled, about

if TYPE_CHECKING:
    from wildtable.headless.mind import Thought
    from wildtable.headless.seats import SeatTokens

log = logging.getLogger("wildtable.server")
_said = Throttled(log)

BOTS_FILE = "bots.json"
LOOPBACK = {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}
# Bots the server runs at once, at most (each holds a connection, counted against
# serve --max-connections, but no slot of the listener's per-address caps)
MAX_BOTS = 24
# of them, running at once for one address (serve --max-bots-per-address; 0: no cap): a
# player filling the largest table (six seats) alone needs 5, and a second tab or a
# friend behind the same NAT filling a four-seat one 3 more; three addresses at the
# default still leave the last 8 of MAX_BOTS to everyone else
MAX_BOTS_PER_ADDRESS = 8
BOT_ADDRESS = "server-bot"   # what the server's own bots' connections are called in logs (Peer.remote)
BOTS_CODE = "wildtable.headless.bots"     # what _load_code imports (its strategies, its levels)
SWEEP = 30.0        # seconds between looks for bots left alone at a table waiting for players
BOT_SEARCHES = 1    # expert bots' searches under way at once, server-wide (in the search processes)


def valid_entries(data) -> list[dict]:
    """The well-formed bot entries of ``data`` (bots.json, or a table's bots in a cluster's store)."""
    if not isinstance(data, list):
        return []
    return [e for e in data if isinstance(e, dict) and isinstance(e.get("table"), str)
            and isinstance(e.get("name"), str) and isinstance(e.get("level"), (str, type(None)))
            and isinstance(e.get("delay"), (int, float, type(None))) and isinstance(e.get("seat"), (int, type(None)))
            and isinstance(e.get("token"), (str, type(None))) and isinstance(e.get("address"), (str, type(None)))]


def too_many(count: AddressCounts, address: str | None, wanted: int, per_address: int, waiting_expiry: float,
             table_id: str) -> str | None:
    """Why ``wanted`` more bots for ``address`` (``count``: those running) are over a cap
    (the sentence of ``too_many_bots``), or None. ``per_address``: serve's
    --max-bots-per-address (0: no cap); ``waiting_expiry``: how long bots alone at a
    table where nothing happens stay (inf: for ever)."""
    elsewhere = f"run them elsewhere: wildtable bots URL --table {table_id} --count N"
    mine = count.of(address)
    if per_address and address is not None and mine + wanted > per_address:
        room = per_address - mine
        fewer = f"seat {room} or fewer, or " if room > 0 else ""
        alone = (f" (bots alone at a table where nothing happens for {waiting_expiry:g} s leave it too)"
                 if math.isfinite(waiting_expiry) else "")
        return (f"your address has {mine} of this server's bots playing, and one address may have at most "
                f"{per_address} at once (serve --max-bots-per-address); {fewer}wait until their games end: "
                f"each bot gives its place back when its game is over{alone}; or {elsewhere}")
    if count.total + wanted > MAX_BOTS:
        return f"this server runs at most {MAX_BOTS} bots at once ({count.total} now); seat fewer, or {elsewhere}"
    return None


class BotBook:
    """DATA_DIR/bots.json: one entry per bot the server runs, {"table", "seat", "name",
    "level", "delay", "token", "address"} (``address``: whose share it counts against; an
    older server's entries have none). Only the server holding the data dir's lock writes it.
    A seat book for a bot's ClientCore (headless/seats.py SeatTokens: find, remember,
    forget), so it keeps its own token here and takes its seat back with it."""

    def __init__(self, path: Path, on_change=None):
        self.path = path
        # on_change(table_id): the bots of that table changed (a cluster's node writes
        # them to the store, so that the node adopting the table runs them)
        self.on_change = on_change

    def load(self) -> list[dict]:
        return valid_entries(read_json(self.path))

    def _save(self, entries: list[dict]) -> None:
        try:
            replace_json(self.path, entries)
        except OSError as e:
            log.warning("cannot write %s (%s): bots seated by the server will not come back after a restart",
                        self.path, e.strerror or e)

    def add(self, entry: dict) -> None:
        self._save([e for e in self.load() if not (e.get("table") == entry["table"] and e.get("name") == entry["name"])]
                   + [entry])
        self._changed(entry["table"])

    def _changed(self, table: str) -> None:
        if self.on_change is not None:
            self.on_change(table)

    # ---- the SeatBook interface ClientCore uses (url is ignored: the port may change)
    def find(self, url: str, table: str, name: str) -> tuple[int, str] | None:
        for e in self.load():
            if e.get("table") == table and e.get("name") == name and e.get("token"):
                try:
                    return int(e["seat"]), str(e["token"])
                except (KeyError, TypeError, ValueError):
                    return None
        return None

    def remember(self, url: str, table: str, name: str, seat: int, token: str) -> None:
        entries = self.load()
        for e in entries:
            if e.get("table") == table and e.get("name") == name:
                if e.get("seat") != seat or e.get("token") != token:
                    e["seat"], e["token"] = seat, token
                    self._save(entries)
                    self._changed(table)
                return

    def forget(self, url: str, table: str, name: str | None = None) -> None:
        entries = self.load()
        kept = [e for e in entries if not (e.get("table") == table and (name is None or e.get("name") == name))]
        if len(kept) != len(entries):
            self._save(kept)
            self._changed(table)


class BotHost:
    """Runs the server's bots in a nursery of its own (inside the listener's scope, so
    they end when the server stops listening)."""

    def __init__(self, server, data_dir: Path):
        self.server = server
        self.book = BotBook(Path(data_dir) / BOTS_FILE)
        self.url: str | None = None
        self._nursery: trio.Nursery | None = None
        self.count = AddressCounts()     # bots playing or sitting down now (MAX_BOTS at most), by address
        self._bots: dict[tuple[str, str], tuple[trio.CancelScope, object]] = {}    # (table, name) -> running bot
        self._alone: dict[str, tuple[float, int]] = {}  # tables where only our bots are: since when, at which seq
        self._code: trio.Event | None = None    # set once the bots' code is imported (_load_code)
        self._dialed = 0                # connections the bots made (numbers them in logs)
        self.searches = trio.CapacityLimiter(BOT_SEARCHES)

    @property
    def running(self) -> int:
        """Bots playing or sitting down now."""
        return self.count.total

    @property
    def nursery(self) -> trio.Nursery:
        """The bots' nursery (open while run() runs: bots are seated only then)."""
        assert self._nursery is not None, "BotHost.run is not running"
        return self._nursery

    async def _load_code(self) -> None:
        """Import the bots' code (headless/bots.py, the games' strategies, the levels) the
        first time a bot is wanted, through the world's ``run_sync`` (a worker thread;
        inline where the world runs every blocking call inline, as the simulator's and the
        mock-clock tests' do, whose clock would jump while a thread of its own ran).
        Imported in the event loop, it stalled every table of the server for 0.5 s, over 1 s
        on a loaded machine, and a node of a cluster with a short lease lost its tables to
        another node for it."""
        if self._code is None:
            self._code = trio.Event()
            try:
                await self.server.world.run_sync(importlib.import_module, BOTS_CODE)
            finally:
                self._code.set()        # (a failed import fails again, with its error, where it is used)
        await self._code.wait()

    async def run(self, host: str, port: int, *, task_status=trio.TASK_STATUS_IGNORED) -> None:
        host = LOOPBACK.get(host, host)
        self.url = ws_url(host, port)
        async with trio.open_nursery() as nursery:
            self._nursery = nursery
            task_status.started()
            while True:
                await self.server.world.clock.sleep(max(0.1, min(SWEEP, self.server.config.waiting_expiry / 2)))
                try:
                    self._sweep(trio.current_time())
                except Exception:       # our bug: the bots stay, the server goes on
                    log.exception("looking for bots left alone failed (the server goes on)")

    async def dial(self, url: str) -> trio.abc.Stream | None:
        """How a bot reaches a server (headless/net.py, Dial): this one over a socketpair whose
        other end the server serves at once, with no slot of the public listener; another
        node of a cluster (a redirect) over TCP, as anyone (None)."""
        if url != self.url or self._nursery is None:
            return None
        ours, theirs = socket.socketpair()
        self._dialed += 1
        self._nursery.start_soon(self.server.attach, ours, Address(BOT_ADDRESS, self._dialed))
        return trio.SocketStream(trio.socket.from_stdlib_socket(theirs))

    async def think(self, thought: Thought) -> tuple[dict | None, tuple] | None:
        """Where the server's bots search (headless/bots.py, Bot's ``think``): in one of the
        server's search processes, BOT_SEARCHES at once; None (the bot tries its turn again
        later) if that process ended meanwhile."""
        from wildtable.headless.mind import think
        try:
            return await pool_of(self.server).run(self.searches, think, thought)
        except BrokenProcessPool:
            _said.warning("bot_search_lost", "a bot's search was lost with its process (killed? out of memory?); "
                          "the bot tries its turn again")
            return None

    def _sweep(self, now: float) -> None:
        """Bots left alone at a table where nothing happens (nobody else seated and
        connected, no spectator, no new record) for the server's --waiting-expiry leave
        it: a table still waiting for players (their player went before it filled) then
        expires as an empty one does, and at a game that cannot go on without its other
        players (no turn timer) the bots do not wait for ever. A game that goes on (the
        timers play for the seats that are gone) they play to its end."""
        by_table: dict[str, list] = {}
        for (tid, _), (scope, bot) in self._bots.items():
            by_table.setdefault(tid, []).append((scope, bot))
        for tid in list(self._alone):
            if tid not in by_table:
                del self._alone[tid]
        for tid, bots in by_table.items():
            t = self.server.tables.get(tid)
            if t is None or t.finished:
                self._alone.pop(tid, None)
                continue
            ours = {bot.seat for _, bot in bots}
            if t.spectators or any(s.conn is not None for i, s in enumerate(t.seats) if i not in ours):
                self._alone.pop(tid, None)
                continue
            since, seq = self._alone.get(tid, (now, t.seq))
            if seq != t.seq:
                since, seq = now, t.seq
            self._alone[tid] = (since, seq)
            if now - since >= self.server.config.waiting_expiry:
                del self._alone[tid]
                log.info("table %s: %d bot(s) alone at it for %g s with nothing happening; they leave",
                         tid, len(bots), self.server.config.waiting_expiry, extra=about(table=tid))
                for scope, bot in bots:
                    self.nursery.start_soon(self._leave, scope, bot)

    async def _leave(self, scope: trio.CancelScope, bot) -> None:
        """The bot sends leave (its seat is free again; on ``left`` it stops by itself)."""
        with self.server.world.clock.move_on_after(5):
            try:
                await bot.core.command("leave")
            except Exception as e:      # not connected just now: it stops all the same
                log.info("bot %s could not say leave at table %s (%s)", bot.name, bot.table, e, extra=about(table=bot.table))
            while (bot.table, bot.name) in self._bots and bot.core.mirror.table is not None:
                await self.server.world.clock.sleep(0.05)
        self.book.forget("", bot.table, bot.name)
        scope.cancel()

    def resume(self) -> None:
        """At start: every bot whose table is still being played takes its seat back."""
        tables = self.server.tables
        entries = self.book.load()
        keep = [e for e in entries if (t := tables.get(e.get("table"))) is not None and not t.finished]
        if len(keep) != len(entries):
            self.book._save(keep)
        for e in keep:
            self.nursery.start_soon(self._play, e)
        if keep:
            log.info("%d bot(s) the server runs back at their tables: %s", len(keep),
                     ", ".join(sorted({e["table"] for e in keep})))

    def resume_entries(self, entries: list[dict]) -> None:
        """The bots of a table this server has just taken over from another node of its
        cluster (their entries from the store) take their seats back here."""
        fresh = [e for e in entries if (e.get("table"), e.get("name")) not in self._bots and e.get("token")]
        if not fresh or self._nursery is None:
            return
        keys = {(e["table"], e["name"]) for e in fresh}
        self.book._save([e for e in self.book.load() if (e.get("table"), e.get("name")) not in keys] + fresh)
        for e in fresh:
            self.nursery.start_soon(self._play, e)
        log.info("%d bot(s) back at table %s, taken over from another node", len(fresh), fresh[0]["table"], extra=about(table=fresh[0]["table"]))

    def drop_table(self, table: str) -> None:
        """This server no longer serves ``table`` (another node of its cluster took it
        over, and runs its bots from the store): its bots here stop, and leave the book
        without a word to the store."""
        for (tid, _), (scope, _) in list(self._bots.items()):
            if tid == table:
                scope.cancel()
        self._alone.pop(table, None)
        entries = self.book.load()
        kept = [e for e in entries if e.get("table") != table]
        if len(kept) != len(entries):
            self.book._save(kept)

    def check(self, conn, msg: m.SeatBots) -> None:
        """Refuse at once what cannot be done (IllegalAction, answered as an error)."""
        from wildtable.headless import games, levels
        table = conn.table
        if table is None or table.id != msg.table:
            raise IllegalAction("not_at_table", f"you are not at table {msg.table}: join it first; bots are seated "
                                "at the table you play at")
        if conn.seat is None:
            raise IllegalAction("not_seated", f"you are watching table {table.id} as a spectator: only a player "
                                "at the table can seat bots at it")
        if table.finished:
            raise IllegalAction("game_over", f"the game at table {table.id} is over: there is nothing left to play")
        if not games.has_bot(table.game.NAME):
            raise IllegalAction("no_bot", f"there is no bot for {table.game.NAME} yet")
        if bad := levels.level_problem(msg.level):
            raise IllegalAction("bad_level", bad)
        free = sum(1 for s in table.seats if not s.token_hash)
        if msg.count > free:
            raise IllegalAction("table_full", f"table {table.id} has {free} free seat(s), not {msg.count}")
        cfg = self.server.config
        if why := too_many(self.count, peer_address(conn), msg.count, cfg.max_bots_per_address, cfg.waiting_expiry,
                           table.id):
            raise IllegalAction("too_many_bots", why)

    def stop(self) -> None:
        """At shutdown: the bots end first (they would only reconnect to a closing server)."""
        if self._nursery is not None:
            self._nursery.cancel_scope.cancel()

    async def seat(self, conn, msg: m.SeatBots) -> None:
        """Seat the bots (checked first); the answer, bots_seated or an error, comes once
        they sit (or could not)."""
        await self._load_code()
        self.check(conn, msg)
        address = peer_address(conn)
        self.count.take(address, msg.count)     # counted now: a second request meanwhile sees them
        self.nursery.start_soon(self._seat_all, conn, msg, address)

    async def _seat_all(self, conn, msg: m.SeatBots, address: str | None) -> None:
        from wildtable.headless import levels
        table = self.server.tables.get(msg.table)
        level = msg.level or levels.DEFAULT_LEVEL
        taken = {s.name for s in table.seats if s.name} if table is not None else set()
        delay = None if msg.delay_ms is None else msg.delay_ms / 1000
        seats, names, problem = [], [], None
        reserved = msg.count            # by seat(); each bot counts itself while it runs
        try:
            for _ in range(msg.count):
                name = next(f"bot{n}" for n in range(1, 100) if f"bot{n}" not in taken)
                taken.add(name)
                entry: dict[str, Any] = {"table": msg.table, "seat": None, "name": name, "level": level,
                                         "delay": delay, "token": None, "address": address}
                seat = await self.nursery.start(self._play, entry)
                reserved -= 1
                self.count.give(address)
                if seat is None:            # it could not sit down (entry["problem"] says why)
                    problem = entry.get("problem")
                    break
                seats.append(seat)
                names.append(name)
        finally:
            self.count.give(address, reserved)      # those not tried
        if seats:
            conn.send_message(m.BotsSeated(msg.table, tuple(seats), tuple(names), level))
            log.info("table %s: %d bot(s) seated by the server (%s) at seat(s) %s", msg.table, len(seats), level,
                     ", ".join(map(str, seats)), extra=about(table=msg.table))
        else:
            conn.send_message(m.Error("bots_not_seated", problem or "no bot could take a seat", None, "seat_bots"))

    async def _play(self, entry: dict, task_status=trio.TASK_STATUS_IGNORED) -> None:
        """One bot from its seat to the end of its game (or of the server)."""
        await self._load_code()
        from wildtable.headless.bots import Bot
        table, name = entry["table"], entry["name"]

        def report(text: str) -> None:
            log.info("bot %s", text)

        started = task_status is not trio.TASK_STATUS_IGNORED
        if started:
            self.book.add(entry)
        try:
            bot = Bot(self.url or "", table, name, delay=entry.get("delay"), seat=entry.get("seat"), report=report,
                      verbose=False, level=entry.get("level"), seat_book=self.book, dial=self.dial,
                      think=self.think)
        except Exception as e:          # an entry of bots.json that makes no bot (edited by hand?)
            log.warning("bot %s at table %s cannot be started (%s); its entry is dropped", name, table, e, extra=about(table=table))
            self.book.forget("", table, name)
            if started:
                entry["problem"] = f"{name}: could not be started"
                task_status.started(None)
            return
        address = entry.get("address")
        self.count.take(address)
        try:
            with trio.CancelScope() as scope:
                self._bots[table, name] = (scope, bot)
                await self._run(bot, entry, task_status)
        finally:
            self.count.give(address)
            self._bots.pop((table, name), None)

    async def _run(self, bot, entry: dict, task_status) -> None:
        from wildtable.headless.bots import BotError
        table, name = entry["table"], entry["name"]
        started = task_status is not trio.TASK_STATUS_IGNORED
        try:
            over = await bot.run(task_status=task_status)
        except BotError as e:
            self.book.forget("", table, name)
            if started and not bot.seated:
                entry["problem"] = str(e)
                task_status.started(None)
            else:
                log.warning("%s", e)
            return
        except Exception:
            # a bot's bug ends that bot, never the server (its seat stays, offline, for
            # `wildtable bots` or the next start)
            log.exception("bot %s at table %s ended by a bug of ours (the server goes on)", name, table, extra=about(table=table))
            if started and not bot.seated:
                entry["problem"] = f"{name}: could not take a seat (a bug of the server's; see its log)"
                task_status.started(None)
            return
        if over is None or bot.core.mirror.table is None:
            # stopped short of the game's end without being cancelled: the seat is gone
            self.book.forget("", table, name)


def _is_a_seat_book(book: BotBook) -> SeatTokens:
    """(For mypy: BotBook satisfies the SeatTokens interface.)"""
    return book
