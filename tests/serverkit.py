"""Helpers for tests that talk to a real server over real sockets on 127.0.0.1."""

from __future__ import annotations

from contextlib import asynccontextmanager
from dataclasses import dataclass
import http.client
import json
from pathlib import Path
import socket
from types import ModuleType
from typing import Any

import msgpack
import trio

from wildtable.headless.core import ClientCore, Notice
from wildtable.headless.net import Connection, connect
from wildtable.headless.wire import wrap_stream
from wildtable.protocol import messages as m
from wildtable.protocol.engine import ChanceOutcome
from wildtable.protocol.logfmt import ActionAccepted, ChanceRecorded, LogContents
from wildtable.protocol.replay import initial_state
from wildtable.server.app import Server
from wildtable.server.config import ServerConfig

from scripted import play_to_end


def server_config(data_dir, **settings) -> ServerConfig:
    """The settings tests run a server with: serve's defaults (server/config.py), but for
    scripted players, who act far faster than people (rate limits), and scripted hosts, who
    create many tables from 127.0.0.1 (no cap of waiting tables per address); ``settings``
    change any field."""
    settings.setdefault("rate_limit", 10_000.0)
    settings.setdefault("rate_burst", 10_000.0)
    settings.setdefault("max_waiting_per_address", 0)
    return ServerConfig(data_dir=data_dir, **settings)


@asynccontextmanager
async def running_server(config: ServerConfig | Path | str, **runs_on):
    """A real server on 127.0.0.1, port chosen by the OS; shut down cleanly at exit.
    ``config``: its settings, or a data dir (``server_config(data_dir)``); ``runs_on``: what
    Server takes besides (chance, world, kernel_delay, table_ids, ...)."""
    if not isinstance(config, ServerConfig):
        config = server_config(config)
    server = Server(config, **runs_on)
    async with trio.open_nursery() as nursery:
        port = await nursery.start(server.run, "127.0.0.1", 0)
        try:
            yield server, f"ws://127.0.0.1:{port}"
        finally:
            with trio.move_on_after(5):
                await server.shutdown("test over")


async def create(conn: Connection, game: str, seats: int, **settings) -> str:
    await conn.send(m.CreateTable(game, seats, settings))
    msg = await conn.receive_until(lambda x: isinstance(x, (m.TableCreated, m.Error)))
    assert isinstance(msg, m.TableCreated), msg
    return msg.table


async def join(conn: Connection, table: str, seat: int | None = None) -> m.Joined:
    await conn.send(m.Join(table, seat))
    msg = await conn.receive_until(lambda x: isinstance(x, (m.Joined, m.Error)))
    assert isinstance(msg, m.Joined), msg
    return msg


async def at_a_new_table(conn: Connection, make, ask) -> tuple[str, Any, list[str]]:
    """A new table with ``conn`` at it: ``make()`` creates it (its id), ``ask(table)`` is
    the join or spectate that ``conn`` sends. A table nobody is at expires waiting_expiry
    after its creation, however soon after table_created that request comes: with the short
    expiries of some tests a loaded machine lets it pass first (the server keeping its
    promise), and then a fresh table is made. (table, the answer, those that expired first)."""
    missed: list[str] = []
    for _ in range(10):
        table = await make()
        await conn.send(ask(table))
        got = await conn.receive_until(lambda x: isinstance(x, (m.Joined, m.Spectating, m.Error)))
        if not isinstance(got, m.Error):
            return table, got, missed
        assert got.code == "no_such_table", got
        missed.append(table)
    raise AssertionError(f"every table expired before the request reached it: {missed}")


async def reply_to(conn: Connection, intent_id: int, keep: list | None = None):
    """The accepted/rejected answer to one intent (other messages go to ``keep``)."""
    return await conn.receive_until(
        lambda x: isinstance(x, (m.Accepted, m.Rejected)) and x.intent == intent_id, keep=keep)


@asynccontextmanager
async def seated(url: str, game: str, seats: int, settings: dict | None = None, names=None):
    """Open ``seats`` connections, create a table, seat everyone; yield (table, conns, joined)."""
    conns, joined = [], []
    names = names or [f"p{i}" for i in range(seats)]
    stack = []
    try:
        for i in range(seats):
            cm = connect(url, names[i])
            conn = await cm.__aenter__()
            stack.append(cm)
            conns.append(conn)
        table = await create(conns[0], game, seats, **(settings or {}))
        for i, c in enumerate(conns):
            joined.append(await join(c, table, i))
        yield table, conns, joined
    finally:
        for cm in reversed(stack):
            with trio.move_on_after(3) as s:
                s.shield = True
                try:
                    await cm.__aexit__(None, None, None)
                except Exception:
                    pass


async def ready_all(conns) -> None:
    """Every connection says ready (intents 900, 901, ...); each must be accepted."""
    for i, c in enumerate(conns):
        await c.send(m.Intent(900 + i, {"kind": "ready"}))
    for i, c in enumerate(conns):
        assert isinstance(await reply_to(c, 900 + i), m.Accepted)


async def collect_until_over(conn: Connection, into: list) -> None:
    """Every message ``conn`` receives goes to ``into``, up to and with game_over."""
    while True:
        msg = await conn.receive()
        into.append(msg)
        if isinstance(msg, m.GameOver):
            return


@asynccontextmanager
async def unread_spectator(url: str, table: str, name: str):
    """A spectator of ``table`` over a real socket with a tiny receive buffer (4 kB),
    that reads nothing more until the test does; yield its WebSocket (headless/wire.py),
    which reads only when asked to."""
    port = int(url.rsplit(":", 1)[1])
    stream = await trio.open_tcp_stream("127.0.0.1", port)
    stream.socket.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    ws = await wrap_stream(stream, url)
    try:
        conn = Connection(ws)
        await conn.hello(name)
        await conn.send(m.Spectate(table))
        await conn.receive_until(lambda x: isinstance(x, m.Spectating))
        yield ws
    finally:
        await ws.aclose()


@asynccontextmanager
async def core_beside_bob(url: str, notes: list[Notice], game: str = "run-wild", **core_kw):
    """bob creates a 2-seat ``game`` table and takes seat 1; a running ClientCore for
    "ann" (its notices go to ``notes``), not yet at the table; yield (table, core)."""
    async with connect(url, "bob") as bob:
        table = await create(bob, game, 2)
        await join(bob, table, 1)
        core = ClientCore(url, "ann", notes.append, **core_kw)
        async with trio.open_nursery() as nursery:
            await nursery.start(core.run)
            yield table, core
            nursery.cancel_scope.cancel()


# ------------------------------------------------------------------ updates against the log

def as_sent(x):
    """A value as it travels: msgpack turns tuples into lists."""
    return msgpack.unpackb(msgpack.packb(x), raw=False, strict_map_key=False)


@dataclass
class Replayed:
    """A table's log folded record by record: the ground truth for what clients were sent."""
    game: ModuleType
    states: dict[int, Any]          # seq -> the state after it (0: before any record)
    events: dict[int, list]         # seq -> the events the engine made of it (all of them)

    @property
    def final(self) -> Any:
        return self.states[max(self.states)]


def replay_by_seq(contents: LogContents) -> Replayed:
    """Replay the log of a table, keeping the state after every state-changing record.

    Several tests hold what each client received to the engine's view at that seq; the
    states come from the log (never from the views under test), folded the way
    `wildtable.protocol.replay.step` folds them."""
    g, state = initial_state(contents.header)
    out = Replayed(g, {0: state}, {})
    for r in contents.records:
        if type(r) is ActionAccepted:
            state, ev = g.apply(state, r.seat, g.ACTIONS.decode(r.action, "$.action"))
        elif type(r) is ChanceRecorded:
            state, ev = g.apply(state, None, ChanceOutcome(r.purpose, r.permutation))
        else:
            continue
        out.states[r.seq], out.events[r.seq] = state, ev
    return out


def check_views(msgs: list, log: Replayed, seat: int | None, *, wire: bool = False) -> list[m.Update]:
    """Assert that every view in ``msgs`` (joined, spectating, update) is exactly the
    engine's view for ``seat`` (None: a spectator) of the state the log replays to at its
    seq, and that the updates come one seq after another; return the updates, for the
    game's own checks. With ``wire``, compare to the engine's view as msgpack carries it.

    One helper, so that every test of "no update shows more than the engine's view"
    checks the same things the same way."""
    updates, prev = [], None
    for msg in msgs:
        if not isinstance(msg, (m.Joined, m.Spectating, m.Update)):
            continue
        if isinstance(msg, m.Update):
            assert prev is None or msg.seq == prev + 1, f"seat {seat}: update {msg.seq} after {prev}"
            updates.append(msg)
        prev = msg.seq
        want = log.game.view(log.states[msg.seq], seat)
        assert msg.view == (as_sent(want) if wire else want), f"seat {seat} at seq {msg.seq}: not the engine's view"
    return updates


async def read_into(conn: Connection, into: list) -> None:
    """(trio's clock, message) of every message ``conn`` receives, into ``into``, until
    cancelled: a client left reading in the background (and so answering pings)."""
    while True:
        msg = await conn.receive()
        into.append((trio.current_time(), msg))


async def answer(conn: Connection, types=(m.Error, m.Joined, m.Spectating, m.Left)):
    """The next lobby answer (an error, joined, spectating or left), skipping table traffic."""
    return await conn.receive_until(lambda x: isinstance(x, types))


async def info(conn: Connection, table: str) -> dict:
    """``table``'s entry in a fresh list_tables answer."""
    await conn.send(m.ListTables())
    msg = await conn.receive_until(lambda x: isinstance(x, m.TableList))
    (t,) = [t for t in msg.tables if t["table"] == table]
    return t


async def played_out_and_left(conns: list[Connection], table: str) -> None:
    """``conns[i]`` takes seat i at ``table``, a game its turn timer plays out by itself
    (such as Go Wild! to one point with a 10 ms timer); once the first has seen game_over
    (within 8 s), each leaves and must be told it has left."""
    for i, c in enumerate(conns):
        await join(c, table, i)
    await conns[0].receive_until(lambda x: isinstance(x, m.GameOver), timeout=8)
    for c in conns:
        await c.send(m.Leave())
        assert isinstance(await answer(c), m.Left)


# Go Wild! to one point with no turn timer: the table waits for its players, who end it
# with one trick (eight records)
QUICK_GO_WILD = {"turn_timer": 0, "target": 1}


def lowest_card(view: dict) -> dict | None:
    """A Go Wild! seat's move, as the turn timer would make it (go_wild.default_play, always
    legal): its lowest card alone, on its turn; else None."""
    if view.get("phase") != "playing" or view.get("turn") != view.get("seat") or not view.get("hand"):
        return None
    return {"kind": "play", "cards": [min(view["hand"])]}


async def play_out_with_a_refusal(url: str, names=("ann", "bob")) -> str:
    """A two-seat Go Wild! table played to its end by its two players (each its lowest
    card), in which the first player had an intent refused once dealt (a card that does not
    exist: 9999); its id. There is no turn timer, so the game cannot end before that
    intent arrives, however late it comes: with a 10 ms timer it ended first on a loaded
    machine (the answer was game_over, and no refusal was logged)."""
    async with connect(url, names[0]) as ann, connect(url, names[1]) as bob:
        table, first, _ = await at_a_new_table(ann, lambda: create(ann, "go-wild", 2, **QUICK_GO_WILD),
                                               lambda t: m.Join(t, 0))
        joined = [first, await join(bob, table, 1)]
        refused = []

        def refusal_first(view: dict) -> dict | None:
            if not refused and view.get("hand"):
                refused.append(True)
                return {"kind": "play", "cards": [9999]}
            return lowest_card(view)
        seen = []
        async with trio.open_nursery() as n:
            n.start_soon(lambda: play_to_end(ann, joined[0], refusal_first, timeout=20, log=seen))
            n.start_soon(lambda: play_to_end(bob, joined[1], lowest_card, timeout=20))
        (r,) = [x for x in seen if isinstance(x, m.Rejected)]
        assert r.code not in ("game_over", "not_started"), r
    return table


# ------------------------------------------------------------------ the replay viewer's HTTP answers

def fetch(port: int, path: str) -> tuple[int, dict]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request("GET", path)
        r = conn.getresponse()
        assert r.getheader("Content-Type") == "application/json", r.getheaders()
        return r.status, json.loads(r.read())
    finally:
        conn.close()


async def get(server, path: str) -> tuple[int, dict]:
    # in a thread: the server answers in this same Trio run
    return await trio.to_thread.run_sync(fetch, server.port, path)


def same_json(x) -> object:
    return json.loads(json.dumps(x))
