"""Bots are clients: the same connection code (ClientCore), a strategy instead of a
keyboard, and a reaction time like a person's so that humans at the table can keep up.

``wildtable bots URL --table ID --count N [--level easy|normal|hard|expert]`` seats N bots at
a table and plays until the game is over. The strategy is the game's client module
(``candidates(view)``, best first); an action the server refused is not tried again
until the table changes. The level (levels.py) sets the reaction times and how often a
bot overlooks a play; a game module may hold actions back for a while (Run Wild: no
Draw-3 in a round's first seconds, ``bot_hold``).
"""

from __future__ import annotations

import random
import sys
from typing import Awaitable, Callable

import attrs
import trio

from wildtable.protocol import messages as m

from . import games, levels, notices
from .core import CannotConnect, ClientCore, NotConnected
from .mind import Mind, Thought, think
from .notices import Notice
from .words import user_words
from .net import connect

ANSWER_TIMEOUT = 10.0
NAME_MAX = attrs.fields(m.Hello).name.metadata["max_len"]     # a bot's name: --name prefix + its number
IDLE_LOOK = 2.0      # look at the table again after this long even if nothing changed
# where an expert's search runs (``Bot(think=...)``): ``mind.think(thought)`` somewhere off
# the event loop, its answer, or None when it could not be worked out (tried again later)
Think = Callable[[Thought], Awaitable["tuple[dict | None, tuple] | None"]]


async def think_in_a_thread(thought: Thought) -> tuple[dict | None, tuple]:
    """A bot's own search, in a worker thread of its process (``wildtable bots``, a
    player's client): its event loop (a player's keys, the other bots, the connection)
    runs on while it thinks."""
    return await trio.to_thread.run_sync(think, thought)


class BotError(Exception):
    """A bot could not take its seat (the message says why)."""


class Bot:
    """One bot at one table, driven by its game module's ``candidates``."""

    def __init__(self, url: str, table: str, name: str, *, delay: float | None = None,
                 seat: int | None = None, report: Callable[[str], None] | None = None,
                 rng: random.Random | None = None, verbose: bool = True, level: str | None = None,
                 seat_book=None, dial=None, think: Think = think_in_a_thread):
        self.url, self.table, self.name, self.seat = url, table, name, seat
        # every decision (memory, reaction times, the play) is the Mind's (mind.py), shared
        # with the offline arena
        self.mind = Mind(level, rng=rng, delay=delay)
        self.think = think      # where its searches run (the server's bots: its processes, server/botseats.py)
        self.report = report or (lambda text: None)
        self.verbose = verbose          # also report the seat taken and the final scores
        # seat_book, dial: the server's bots (server/botseats.py)
        self.core = ClientCore(url, name, self._on_notice, seat_book=seat_book, dial=dial)
        self._changed = trio.Event()
        self._answers: dict[int, trio.Event] = {}
        self._outcomes: dict[int, notices.IntentAccepted | notices.IntentRejected] = {}    # intent id -> its answer
        self._refused: tuple[int, set] = (-1, set())
        self.actions = 0
        self.refusals = 0
        self._seated = False            # until then, a refusal is reported once, by run's BotError

    def _on_notice(self, n: Notice) -> None:
        if isinstance(n, (notices.TableChanged, notices.GameOver)):
            self.mind.watch(self.core.plugin, self.core.mirror.view, trio.current_time())
            self._changed.set()
        elif isinstance(n, (notices.IntentAccepted, notices.IntentRejected)) and n.intent is not None:
            if isinstance(n, notices.IntentRejected) and n.code != "connection_lost":
                self.refusals += 1
            self._outcomes[n.intent] = n
            ev = self._answers.pop(n.intent, None)
            if ev is not None:
                ev.set()
            self._changed.set()
        elif isinstance(n, notices.ConnectionLost):
            self.report(f"{self.name}: {n.text}")
        elif isinstance(n, notices.Trouble) and self._seated:
            self.report(f"{self.name}: {n.text}")

    async def run(self, *, task_status=trio.TASK_STATUS_IGNORED) -> m.GameOver | None:
        """Join, play until the game is over, return the GameOver (None if cancelled first).
        BotError if it cannot take its seat. (Raised here, after the nursery, not inside
        it, where Trio would wrap it in an ExceptionGroup that no ``except BotError`` catches.)"""
        problem = None
        async with trio.open_nursery() as nursery:
            try:
                await nursery.start(self.core.run)
            except CannotConnect as e:
                problem = f"{self.name}: {e}"
            else:
                try:
                    reply = await self.core.join(self.table, self.seat)
                except (NotConnected, trio.TooSlowError) as e:
                    reply = m.Error("no_answer", str(e) if isinstance(e, NotConnected) else "the server did not answer")
                if isinstance(reply, m.Error):
                    problem = f"{self.name}: cannot join table {self.table}: {reply.code}: {user_words(reply.message)}"
                else:
                    self.seat, self._seated = reply.seat, True
                    plugin = games.plugin_for(reply.game)
                    self.mind.seated(plugin)
                    if self.verbose:
                        self.report(f"{self.name}: seat {reply.seat} at table {self.table}")
                    task_status.started(reply.seat)
                    await self._play(plugin)
            nursery.cancel_scope.cancel()
        if problem is not None:
            raise BotError(problem)
        over = self.core.mirror.over
        if over is not None and self.verbose:
            ctx = self.core.ctx
            self.report(f"{self.name}: game over, scores {games.seat_values(over.scores, ctx)}; "
                        f"{games.winners_text(over.winners, ctx) if over.winners else 'nobody wins'}")
        return over

    @property
    def seated(self) -> bool:
        """Whether it took its seat (server/botseats.py tells a refused start from a later end)."""
        return self._seated

    # the Mind's, under the names the bot always had (tests, bench/bots_pace.py)
    level = property(lambda self: self.mind.level)
    pace = property(lambda self: self.mind.pace)
    delay = property(lambda self: self.mind.delay)
    rng = property(lambda self: self.mind.rng)
    waits = property(lambda self: self.mind.waits)

    def reaction_time(self) -> float:
        """How long to wait before the next action: the level's pace, or around --delay."""
        return self.mind.reaction_time()

    def choose(self, plugin, view: dict, refused: set | frozenset = frozenset()) -> dict | None:
        """The action to send now (Mind.choose at the Trio clock)."""
        return self.mind.choose(plugin, view, trio.current_time(), refused)

    async def decide(self, plugin, view: dict, refused: set | frozenset = frozenset()) -> dict | None:
        """``choose``, with an expert's search off the event loop (``think``): on a copy of
        its memory, which the loop keeps updating, and of its generator, whose state after
        the search it takes back. None, also when the search could not be worked out (the
        turn is tried again later)."""
        if not self.mind.searches(plugin, view):
            return self.choose(plugin, view, refused)
        got = await self.think(self.mind.thought(plugin, view, trio.current_time(), refused))
        if got is None:
            return None
        action, rng = got
        self.mind.rng.setstate(rng)
        return action

    async def _play(self, plugin) -> None:
        core = self.core
        while core.mirror.over is None:
            with trio.move_on_after(IDLE_LOOK):
                await self._changed.wait()
            self._changed = trio.Event()
            if core.mirror.table is None:
                # back in the lobby: the server forgot the table, or took the seat back
                # (the core said why); there is nothing more to play
                self.report(f"{self.name}: no longer at table {self.table}; stopping")
                return
            if core.mirror.over is not None or not core.online:
                continue
            await trio.sleep(self.reaction_time())
            seq, view = core.mirror.seq, core.mirror.view
            if self._refused[0] != seq:
                self._refused = (seq, set())
            refused = self._refused[1]
            action = await self.decide(plugin, view, refused)
            if action is None:
                continue
            answered = trio.Event()
            try:
                iid = await core.act(action, plugin.label_action(action))
            except NotConnected:
                continue
            if iid not in self._outcomes:        # the answer may already be in
                self._answers[iid] = answered
                with trio.move_on_after(ANSWER_TIMEOUT):
                    await answered.wait()
                self._answers.pop(iid, None)
            self.actions += 1
            outcome = self._outcomes.pop(iid, None)
            if isinstance(outcome, notices.IntentRejected) and outcome.code != "connection_lost":
                refused.add(plugin.action_key(action))
            self._changed.set()


async def run_bot(url: str, table: str, name: str, delay: float | None = None,
                  report: Callable[[str], None] | None = None, seat: int | None = None,
                  level: str | None = None) -> m.GameOver | None:
    """One bot inside a player's client, from join to game over; only trouble is reported
    (the player sees the bot take its seat anyway); a failure to join is reported, not raised."""
    try:
        return await Bot(url, table, name, delay=delay, seat=seat, report=report, verbose=False,
                         level=level).run()
    except BotError as e:
        (report or print)(str(e))
        return None


async def table_info(url: str, table: str) -> dict | None:
    """The lobby's entry for a table (game, status, players...); None: no such table."""
    async with connect(url, "bot-scout") as conn:
        await conn.send(m.ListTables())
        with trio.fail_after(ANSWER_TIMEOUT):
            msg = await conn.receive_until(lambda x: isinstance(x, m.TableList))
    return next((t for t in msg.tables if t.get("table") == table), None)


async def table_game(url: str, table: str) -> str | None:
    """Which game a table plays (None: no such table)."""
    info = await table_info(url, table)
    return None if info is None else info["game"]


async def _bots_main(args) -> int:
    def say(text: str) -> None:
        print(text, flush=True)

    try:
        info = await table_info(args.url, args.table)
    except Exception as e:
        from .reasons import is_network_error, reason
        if not is_network_error(e):
            raise
        print(f"wildtable bots: cannot connect to {args.url}: {reason(e)}", file=sys.stderr)
        return 1
    if info is None:
        print(f"wildtable bots: no table {args.table!r} on {args.url} (the lobby lists its tables: "
              f"wildtable play {args.url})", file=sys.stderr)
        return 1
    game = info["game"]
    if info.get("status") == "over":
        print(f"wildtable bots: the game at table {args.table} is over; there is nothing left to play",
              file=sys.stderr)
        return 1
    players = info.get("players") or []
    free = sum(1 for p in players if not p)
    # before the deal a free seat is listed without a name; once play began, a seat its
    # player left keeps the name although anyone may take it, so only joining can tell
    if players and info.get("status") == "waiting" and args.count > free:
        print(f"wildtable bots: table {args.table} has {free} free seat(s) of {len(players)}; "
              f"--count {free} or fewer", file=sys.stderr)
        return 1
    if not games.has_bot(game):
        print(f"wildtable bots: there is no bot for {game} yet", file=sys.stderr)
        return 2
    longest = f"{args.name}{args.count}"
    if len(longest) > NAME_MAX:
        print(f"wildtable bots: --name {args.name!r} is too long: the bots' names ({longest!r}, ...) must "
              f"be {NAME_MAX} characters at most", file=sys.stderr)
        return 2
    results: list = [None] * args.count
    failed: list[str] = []

    async def one(i: int) -> None:
        try:
            results[i] = await Bot(args.url, args.table, f"{args.name}{i + 1}", delay=args.delay, report=say,
                                   level=getattr(args, "level", None)).run()
        except BotError as e:
            failed.append(str(e))
            say(str(e))

    async with trio.open_nursery() as nursery:
        for i in range(args.count):
            nursery.start_soon(one, i)
    return 0 if not failed and all(r is not None for r in results) else 1


def bots_main(args) -> int:
    from .net import url_problem
    if args.count < 1:
        print("wildtable bots: --count must be at least 1", file=sys.stderr)
        return 2
    if bad := url_problem(args.url):
        print(f"wildtable bots: {bad}", file=sys.stderr)
        return 2
    if args.delay is not None and not 0 <= args.delay < float("inf"):
        print("wildtable bots: --delay wants seconds, 0 or more", file=sys.stderr)
        return 2
    if bad := levels.level_problem(getattr(args, "level", None)):
        print(f"wildtable bots: --level: {bad}", file=sys.stderr)
        return 2
    try:
        return trio.run(_bots_main, args)
    except KeyboardInterrupt:
        return 130
