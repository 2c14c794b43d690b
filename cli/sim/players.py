"""Simulated clients speaking the real protocol (protocol/messages.py) over the simulated
network: players that act with the real bots' strategy (the game's client module,
``candidates(view)``), reconnect and rejoin with their token after a cut; a spectator;
and liars (late pongs, someone else's seat with a wrong token, intents from a stale
view). Each remembers every view it was shown, for the invariants (check.py).
"""

from __future__ import annotations

import random
from types import ModuleType

import attrs
import trio

from wildtable.headless import games, redirects
from wildtable.headless.reducer import NOT_YET, NOT_YET_DELAYS
from wildtable.protocol import messages as m
from wildtable.protocol.views import ViewMirror
from wildtable.server import diskfull

from .net import ClientEnd, Closed

ANSWER = 10.0        # seconds a client waits for the answer to a request before it gives up the link
IDLE = 300.0         # seconds a seated client hears nothing before it gives up the link (turns can be long)


@attrs.frozen
class Seen:
    """A view a client was shown: at ``seq``, for ``seat`` (None: a spectator's)."""
    client: str
    seq: int
    seat: int | None
    view: dict


class Moving(Exception):
    """A redirect followed: the link is left for the node named (None: given up)."""


def _url(node: str) -> str:
    """A simulated node's public URL (the server makes it from its listen address)."""
    return f"ws://{node}:8765"


def _node(url: str) -> str:
    return url.split("//", 1)[-1].rsplit(":", 1)[0]


class Client:
    """What every simulated client shares: a link to the node, the trace, the record."""

    def __init__(self, world, name: str, rng: random.Random, *, slow: bool = False, pong_lag: float = 0.0):
        self.world, self.name, self.rng = world, name, rng
        self.slow, self.pong_lag = slow, pong_lag
        self.end: ClientEnd | None = None
        self.views = ViewMirror()            # updates made whole (protocol/views.py)
        self.seen: list[Seen] = []           # every view shown, in order
        self.told: list[str] = []            # every error code, goodbye or close reason heard
        self.seat: int | None = None
        self.token: str | None = None
        self.view: dict | None = None
        self.old_view: dict | None = None
        self.seq = -1
        self.over = False
        self.connected = False
        self.paused = False                  # told play is paused (a full disk), not yet that it resumed
        self.at: str | None = None           # the node it is (or was last) connected to
        self.nodes: tuple[str, ...] = ()     # the cluster's nodes, as the last welcome named them
        self.moving: str | None = None       # a redirect's node: connect there next
        self.unreachable = redirects.Unreachable()

    def trace(self, what: str) -> None:
        self.world.trace(f"{self.name} {what}", self.name)

    def reconnect_order(self) -> list[str]:
        """As headless/core.py's: a redirect's node, the node it was at, the first node
        it was given, then each node of the last welcome; each once."""
        order: list[str] = []
        for name in ((self.moving,) if self.moving else ()) + ((self.at,) if self.at else ()) + \
                self.world.node_names()[:1] + self.nodes:
            if name not in order:
                order.append(name)
        return order

    async def connect(self) -> bool:
        link = None
        for name in self.reconnect_order():
            link = self.world.net.connect(name, self.name, self.rng, slow=self.slow)
            self.unreachable.tried(_url(name), link is not None, trio.current_time())
            if link is not None:
                self.at = name
                break
        self.moving = None
        if link is None:
            return False
        self.end = end = link.client
        self.views = ViewMirror()            # patches are against this link's last view
        end.pong_lag = self.pong_lag
        end.nursery = self.world.nursery
        end.send(m.encode(m.Hello(m.PROTOCOL_VERSION, self.name)))
        msg = await self.next()
        if type(msg) is m.Welcome:
            self.nodes = tuple(_node(u) for u in msg.nodes)
            return True
        return False

    async def redirected(self, msg: m.Redirect, chase: redirects.Chase | None, again, patient: bool):
        """A redirect, handled as headless/core.py does (headless/redirects.py decides):
        follow it (Moving: connect there and send ``again`` there), or ask again here after a
        pause, or give up (told why). Returns the chase."""
        now = trio.current_time()
        chase, action = redirects.decide(chase or redirects.Chase(now), msg, self.unreachable.get(msg.url), now,
                                         patient=patient)
        self.trace(f"redirect to {msg.url}: {type(action).__name__}")
        if isinstance(action, redirects.GiveUp):
            self.told.append(action.error.code)
            self.over = True
            raise Moving(None)
        if isinstance(action, redirects.AskAgain):
            await trio.sleep(action.delay)
            self.send(again)
            return chase
        self.moving = _node(action.url)
        raise Moving(self.moving)

    def link_end(self) -> ClientEnd:
        """The end of the link this client holds (only asked while connected)."""
        if self.end is None:
            raise Closed(None, "not connected")
        return self.end

    async def next(self, timeout: float = ANSWER):
        """The next message (Closed when the link ends; TooSlow after ``timeout`` seconds)."""
        with trio.fail_after(timeout):
            data = await self.link_end().receive()
        msg = self.views.fill(m.decode(data))
        self.note(msg, data)
        return msg

    def note(self, msg, data: bytes) -> None:
        t = type(msg)
        if t is m.Joined:
            # tokens are random (the OS's): not in the trace
            data = m.encode(attrs.evolve(msg, token="*"))
            self.seat, self.token = msg.seat, msg.token
            self.paused = False              # seated anew: whatever paused play is over
            self._view(msg.seq, msg.view)
        elif t is m.Spectating:
            self._view(msg.seq, msg.view)
        elif t is m.Update:
            self._view(msg.seq, msg.view)
        elif t is m.Error:
            self.told.append(msg.code)
        elif t is m.Goodbye:
            self.told.append("goodbye")
        elif t is m.GameOver:
            self.over = True
        elif t is m.Notice:
            # a full disk pauses play, and the table says when it resumes (server/diskfull.py)
            if msg.code == diskfull.PAUSED:
                self.paused = True
                self.world.paused_heard += 1
            elif msg.code == diskfull.RESUMED:
                self.paused = False
        self.world.trace_bytes(self.name, data, msg)

    def _view(self, seq: int, view: dict) -> None:
        self.old_view = self.view
        self.seq, self.view = seq, view
        # checked against the seat the client holds, not the one the view names
        self.seen.append(Seen(self.name, seq, self.seat, view))

    def send(self, message) -> None:
        self.link_end().send(m.encode(message))


class Player(Client):
    """A player: joins (or rejoins with its token), plays with the bots' strategy, and
    after a cut reconnects and rejoins until the game is over or the run ends."""

    def __init__(self, world, name: str, rng: random.Random, *, stale: bool = False, stalls: bool = False, **kw):
        super().__init__(world, name, rng, **kw)
        self.stale = stale                   # acts on the view before the last one (a liar)
        self.stalls = stalls                 # now and then stops reading for 3 to 25 s
        self.plugin: ModuleType | None = None
        self.intent_n = 0
        self.refused: set = set()
        self._cands: tuple = (None, [])

    async def run(self) -> None:
        w = self.world
        await w.table_ready.wait()
        backoff = 0.2
        while not self.over and not w.stopping:
            try:
                if await self.connect():
                    backoff = 0.2
                    await self.session()
            except (Closed, trio.TooSlowError) as e:
                self.trace(f"lost: {type(e).__name__} {getattr(e, 'code', '')}")
            except Moving:
                pass
            finally:
                if self.end is not None:
                    self.end.close()
                self.connected = False
            if self.over or w.stopping:
                break
            if self.moving is not None:
                continue            # a redirect: go there at once
            await trio.sleep(backoff + self.rng.random() * backoff)
            backoff = min(backoff * 2, 3.0)

    async def session(self) -> None:
        w = self.world
        ask: m.Join | m.Rejoin
        if self.token is None or self.seat is None:
            ask = m.Join(w.table_id, None)
        else:
            ask = m.Rejoin(w.table_id, self.seat, self.token)
        self.send(ask)
        chase = None
        not_yet = 0
        while True:
            msg = await self.next()
            if type(msg) is m.Joined:
                break
            if type(msg) is m.Redirect:
                # a seat being taken back is never given up (headless/redirects.py)
                chase = await self.redirected(msg, chase, ask, patient=type(ask) is m.Rejoin)
                continue
            if type(msg) is m.Error:
                if msg.code in ("table_full", "seat_taken", "bad_token", "game_over", "no_such_table"):
                    self.over = True         # told why: it plays no more
                    return
                if type(ask) is m.Rejoin and msg.code in NOT_YET:
                    # "not yet" (the table is being taken over): asked again later, the token
                    # kept, as the real clients do (headless/reducer.py)
                    await trio.sleep(NOT_YET_DELAYS[min(not_yet, len(NOT_YET_DELAYS) - 1)])
                    not_yet += 1
                    self.send(ask)
        self.connected = True
        self.plugin = games.plugin_for(msg.game)
        lost = None
        # The session's tasks draw from Randoms of their own, made here: a task cancelled
        # at the instant it would draw may draw or not, as Trio runs it, and what the
        # client draws next must not depend on that.
        act_rng = random.Random(self.rng.getrandbits(64))
        stall_rng = random.Random(self.rng.getrandbits(64))
        async with trio.open_nursery() as nursery:
            nursery.start_soon(self._act, nursery.cancel_scope, act_rng)
            if self.stalls:
                nursery.start_soon(self._stall, stall_rng)
            try:
                while type(await self.next(IDLE)) is not m.GameOver:
                    pass
            except (Closed, trio.TooSlowError) as e:
                lost = e            # raised below, not inside the nursery (an exception group there)
            nursery.cancel_scope.cancel()
        if lost is not None:
            raise lost

    async def _stall(self, rng: random.Random) -> None:
        while True:
            await trio.sleep(rng.uniform(2.0, 20.0))
            end = self.link_end()
            end.stall_until = trio.current_time() + rng.uniform(3.0, 25.0)
            self.trace(f"stops reading until {end.stall_until:.3f}")
            await trio.sleep_until(end.stall_until)

    async def _act(self, scope, rng: random.Random) -> None:
        """React to the view like a player: wait a reaction time, then send the best
        candidate not refused at this seq."""
        while True:
            await trio.sleep(0.25 + rng.random() * 1.5)
            view = self.old_view if self.stale and self.old_view is not None else self.view
            if view is None:
                continue
            if self._cands[0] is not view and self.plugin is not None:     # the strategy runs once per view
                self._cands = (view, self.plugin.candidates(view))
            cands = [a for a in self._cands[1] if (self.seq, repr(a)) not in self.refused]
            if not cands:
                continue
            action = cands[0] if rng.random() < 0.8 else rng.choice(cands)
            self.intent_n += 1
            self.refused.add((self.seq, repr(action)))
            try:
                self.send(m.Intent(self.intent_n, action))
            except Closed:
                scope.cancel()
                return


class Spectator(Client):
    """Watches the table; reconnects after a cut."""

    async def run(self) -> None:
        w = self.world
        await w.table_ready.wait()
        while not w.stopping and not self.over:
            try:
                if await self.connect():
                    ask = m.Spectate(w.table_id)
                    self.send(ask)
                    chase = None
                    while not self.over:
                        msg = await self.next(IDLE)
                        if type(msg) is m.Redirect:
                            chase = await self.redirected(msg, chase, ask, patient=True)
            except (Closed, trio.TooSlowError, Moving):
                pass
            finally:
                if self.end is not None:
                    self.end.close()
            if self.moving is None:
                await trio.sleep(0.5 + self.rng.random())


class Thief(Client):
    """A liar: asks for each seat with a token it made up, and with another player's
    real token for the seat after that player's; sends intents meanwhile. It must never
    be seated (a token holds one seat: its own)."""

    async def run(self) -> None:
        w = self.world
        await w.table_ready.wait()
        await trio.sleep(self.rng.random() * 10)
        try:
            if not await self.connect():
                return
            asked = 0
            for seat in range(w.seats):
                asked += 2
                token = "%032x" % self.rng.getrandbits(128)
                self.send(m.Rejoin(w.table_id, seat, token))
                self.send(m.Intent(seat, {"kind": "ready"}))
                other = w.players[seat]
                if other.token is not None:
                    asked += 1
                    self.send(m.Rejoin(w.table_id, (other.seat + 1) % w.seats, other.token))
            for _ in range(asked):
                msg = await self.next()
                if type(msg) is m.Joined:
                    w.violation(f"{self.name} was seated at seat {msg.seat} with a token it made up")
        except (Closed, trio.TooSlowError):
            pass
        finally:
            if self.end is not None:
                self.end.close()
