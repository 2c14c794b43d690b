"""How a `wildtable play` session starts, shared by the full-screen UI and the line mode:
where the server is (given, or a private one started in this process), and what to do
first (create a table and seat bots, join or watch a table, or show the lobby)."""

from __future__ import annotations

import getpass
import logging
import tempfile
from contextlib import asynccontextmanager

import attrs
import trio

from wildtable.protocol import messages as m
from wildtable.protocol.engine import TableConfig, games as engine_games
from wildtable.protocol.errors import IllegalAction

from wildtable.headless import games
from wildtable.headless import notices
from wildtable.headless.commands import seat_bots
from wildtable.headless.core import ClientCore, NotConnected
from wildtable.headless.words import user_words
from wildtable.headless.games import CommandError
from wildtable.headless.levels import level_problem
from wildtable.headless.net import DEFAULT_URL, url_problem
from wildtable.headless.seats import SeatBook

LOCAL_HOST = "127.0.0.1"
BOTS_SEATED_WAIT = 15.0     # seconds --bots waits for its bots to sit down before taking commands


NAME_MAX = attrs.fields(m.Hello).name.metadata["max_len"]      # what the server accepts in hello


@attrs.define
class Launch:
    """What `wildtable play` was asked to do (see cli.py's play parser)."""
    url: str | None = None
    name: str = "player"
    game: str = "run-wild"
    bots: int | None = None
    players: int | None = None
    table: str | None = None
    seat: int | None = None
    spectate: bool = False
    settings: dict = attrs.Factory(dict)
    bot_delay: float | None = None
    level: str | None = None            # the bots' level (None: levels.DEFAULT_LEVEL)

    @property
    def local(self) -> bool:
        """Play alone: no URL but bots, so the server runs inside this process."""
        return self.url is None and self.bots is not None

    @classmethod
    def from_args(cls, args) -> "Launch":
        from wildtable.cli import parse_settings
        return cls(url=args.url, name=args.name or default_name(), game=args.game, bots=args.bots,
                   players=args.players, table=args.table, seat=args.seat, spectate=args.spectate,
                   settings=parse_settings(args.set), bot_delay=args.bot_delay,
                   level=getattr(args, "level", None))

    def seat_book(self) -> SeatBook | None:
        """Where seat tokens are kept between runs (not for a private server: it dies with us)."""
        return None if self.local else SeatBook()

    def problem(self) -> str | None:
        """Why these options cannot work together, or None."""
        if self.url is not None and (bad := url_problem(self.url)):
            return bad
        if len(self.name) > NAME_MAX or not self.name.strip() or not self.name.strip().isprintable():
            return f"--name wants 1 to {NAME_MAX} printable characters, not {self.name[:60]!r}"
        if self.game not in engine_games():
            return f"--game: there is no game {self.game!r}; choose one of: {', '.join(sorted(engine_games()))}"
        if self.bot_delay is not None and not 0 <= self.bot_delay < float("inf"):
            return "--bot-delay wants seconds, 0 or more"
        if bad := level_problem(self.level):
            return f"--level: {bad}"
        if self.bots is not None:
            if self.bots < 0:
                return "--bots must be 0 or more"
            if self.table is not None:
                return "--bots creates a new table; to seat bots at an existing table use: wildtable bots URL --table ID"
            if self.bots and not games.has_bot(self.game):
                return f"there is no bot for {self.game} yet"
            if self.players is not None and self.players < self.bots + 1:
                return f"--players {self.players} leaves no seat for you beside {self.bots} bots"
            if bad := self.seats_problem() or self.settings_problem():
                return bad
        elif self.players is not None:
            return "--players goes with --bots (the seats of the new table they are seated at)"
        elif self.settings:
            return ("--set goes with --bots (the settings of the new table they are seated at); "
                    "in the lobby: create GAME PLAYERS NAME=VALUE...")
        if (self.seat is not None or self.spectate) and self.table is None:
            return "--seat and --spectate go with --table"
        return None

    def seats_problem(self) -> str | None:
        """Why the new table of --bots/--players would have too few or too many seats."""
        assert self.bots is not None        # (problem() asks only with --bots)
        eng = engine_games()[self.game]
        low, high = eng.MIN_PLAYERS, eng.MAX_PLAYERS
        title = getattr(eng, "TITLE", self.game)
        if self.players is not None:
            if not low <= self.players <= high:
                return f"{title} is for {low} to {high} players, not --players {self.players}"
        elif not low <= self.bots + 1 <= high:
            return (f"{title} is for {low} to {high} players: --bots {self.bots} and you make {self.bots + 1}; "
                    f"use --bots {low - 1} to {high - 1}")
        return None


    def settings_problem(self) -> str | None:
        """Why the game would refuse the --set settings of the new table, asked of the
        game's own rules (pure, no server needed), so nothing starts for a table that
        cannot be made."""
        assert self.bots is not None
        seats = self.players if self.players is not None else self.bots + 1
        try:
            engine_games()[self.game].new_table(TableConfig(self.game, seats, dict(self.settings)))
        except IllegalAction as e:
            return f"--set: {e.reason}"
        return None


def default_name() -> str:
    try:
        return (getpass.getuser() or "player")[:40]
    except Exception:
        return "player"


@asynccontextmanager
async def local_server():
    """A private server on 127.0.0.1 (a free port) with a temporary data dir; its logs
    stay quiet so they do not scribble over the screen. Yields the URL."""
    from wildtable.server.app import Server
    from wildtable.server.config import ServerConfig
    logging.getLogger("wildtable.server").setLevel(logging.WARNING)
    with tempfile.TemporaryDirectory(prefix="wildtable-") as data_dir:
        server = Server(ServerConfig(data_dir=data_dir))
        async with trio.open_nursery() as nursery:
            port = await nursery.start(server.run, LOCAL_HOST, 0)
            try:
                yield f"ws://{LOCAL_HOST}:{port}"
            finally:
                with trio.move_on_after(5) as scope:
                    scope.shield = True
                    await server.shutdown("the player left")
                # run() returns once the logs are flushed; do not wait for ever.
                nursery.cancel_scope.deadline = trio.current_time() + 5


@asynccontextmanager
async def server_for(launch: Launch):
    """The URL to connect to: a private server's for play alone, else the given one."""
    if launch.local:
        async with local_server() as url:
            yield url
    else:
        yield launch.url or DEFAULT_URL


async def start_session(core: ClientCore, launch: Launch, nursery: trio.Nursery) -> bool:
    """The first steps after connecting: bots at a new table, a given table, or the lobby.
    With --bots it returns once the bots sit at the table (every seat taken when no friend
    is awaited), so that a command given at once, such as a piped `ready`, finds the game
    started. False if the table asked for (--table) could not be joined or watched, or the
    new table could not be made (the reason is notified)."""
    try:
        return await _first_steps(core, launch, nursery)
    except (NotConnected, trio.TooSlowError):
        core.notify(notices.Problem("the server did not answer the first request; the lobby commands still "
                                    "work once the connection is back"))
    except CommandError as e:       # e.g. a --set value that cannot be sent
        core.notify(notices.CannotCreate(str(e)))
    return False


async def _first_steps(core: ClientCore, launch: Launch, nursery: trio.Nursery) -> bool:
    if launch.bots is not None:
        seats = launch.players or launch.bots + 1
        reply = await core.create(launch.game, seats, launch.settings, quiet=True)
        if isinstance(reply, m.Error):
            core.notify(notices.CannotCreate(f"{reply.code}: {user_words(reply.message)}"))
            return False
        joined = await core.join(reply.table, 0)
        if isinstance(joined, m.Error):
            return False
        if launch.bots:
            # the server runs them (seat_bots): they play on if this client goes
            seated = await core.request(seat_bots(reply.table, launch.bots, launch.level, launch.bot_delay),
                                        lambda x: isinstance(x, m.BotsSeated))
            if isinstance(seated, m.Error):
                return True         # the reader showed why; the player is at the table all the same
        free = seats - 1 - launch.bots
        if free:
            core.notify(notices.SeatsWaiting(free, core.url, reply.table))
        elif launch.bots:
            await _until_every_seat_is_taken(core)
        return True
    if launch.table is not None:
        reply = await (core.spectate(launch.table) if launch.spectate else core.join(launch.table, launch.seat))
        return not isinstance(reply, m.Error)
    await core.list_tables(asked=True)
    return True


async def _until_every_seat_is_taken(core: ClientCore) -> None:
    """Wait (BOTS_SEATED_WAIT at most: a bot that cannot sit says why itself) until the
    mirror shows every seat of the table taken, then say so: the line a script may wait for."""
    with trio.move_on_after(BOTS_SEATED_WAIT):
        while not (core.mirror.players and all(p.get("name") for p in core.mirror.players)):
            await trio.sleep(0.02)
        core.notify(notices.EverySeatTaken())
