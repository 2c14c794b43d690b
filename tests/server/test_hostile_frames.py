"""Hostile frames against a live server: hypothesis-generated random bytes, valid msgpack
of the wrong shape, unknown message types, wrong field types, deep nesting, huge integers
and strings, oversized frames, text frames, frames before the hello, intents for tables
not joined. Every frame gets exactly one answer (an `error` with a documented code, or the
message's own reply), or the connection is closed cleanly with a WebSocket close code; the
server never crashes; Run Wild games at another table go on and finish normally.

One live server serves every hypothesis example: it runs in its own thread (its own Trio
loop), and each example talks to it over real sockets from a fresh `trio.run`."""

from __future__ import annotations

import base64
import os
import socket
import struct
import threading
from contextlib import AsyncExitStack

import msgpack
import trio
from hypothesis import example, given, settings, strategies as st

from wildtable.headless.net import Connection, connect
from wildtable.headless.wire import ConnectionClosed, open_socket
from wildtable.protocol import messages as m
from wildtable.protocol.engine import games
from wildtable.protocol.logfmt import read_log
from wildtable.protocol.replay import replay
from wildtable.server.app import Server
from wildtable.server.config import ServerConfig
from wildtable.server.table import REFUSALS_LOGGED_BURST

from adversarial_kit import documented_codes, is_direct_answer
from scripted import play_to_end
from serverkit import create, join, running_server, server_config
from waitkit import wait_until

CODES = documented_codes()
PROTOCOL_CAP = 64 * 1024
WS_CAP = PROTOCOL_CAP                 # the WebSocket layer refuses a bigger message itself (1009)
GAME_TABLE = "@game-table"           # stands for the id of the table where a game is running
STRIKE_CODES = {"bad_frame", "text_frame", "frame_too_large", "bad_field", "missing_field", "unknown_field",
                "unknown_message_type", "unexpected_message", "hello_first", "already_said_hello", "bad_name",
                "rate_limited"}


# ------------------------------------------------------------------ a live server in a thread

class ThreadedServer:
    """A real server on 127.0.0.1 in a thread of its own, with Run Wild games played to the
    end back to back at one table after another by two scripted clients, until stopped."""

    def __init__(self, data_dir):
        self.data_dir = data_dir
        self.ready = threading.Event()
        self.error: BaseException | None = None
        self.games_done: list = []
        self.game_errors: list = []
        self.game_table: str | None = None
        self._thread = threading.Thread(target=self._thread_main, daemon=True)

    def __enter__(self):
        self._thread.start()
        assert self.ready.wait(20), "server thread did not start"
        if self.error:
            raise self.error
        return self

    def __exit__(self, *exc):
        if self._thread.is_alive():
            try:
                trio.from_thread.run(self._stop, trio_token=self.token)
            except trio.RunFinishedError:
                pass
        self._thread.join(30)
        assert not self._thread.is_alive(), "server thread did not stop"

    def alive(self) -> bool:
        return self._thread.is_alive() and self.error is None

    def _thread_main(self):
        try:
            trio.run(self._main)
        except BaseException as e:          # the server crashed: the test must say so
            self.error = e
            self.ready.set()

    async def _main(self):
        self.token = trio.lowlevel.current_trio_token()
        self._stopping = trio.Event()
        self._games_over = trio.Event()
        self.server = Server(ServerConfig(data_dir=self.data_dir, durability="always", rate_limit=100_000,
                                          rate_burst=100_000, max_waiting_per_address=0))
        async with trio.open_nursery() as n:
            port = await n.start(self.server.run, "127.0.0.1", 0)
            self.url = f"ws://127.0.0.1:{port}"
            n.start_soon(self._games)
            await wait_until(lambda: self.game_table is not None, timeout=30, what="the game table made")
            self.ready.set()
            await self._games_over.wait()
            await self.server.shutdown("test over")

    async def _stop(self):
        self._stopping.set()

    async def _games(self):
        try:
            while not self._stopping.is_set():
                await self._one_game()
        except BaseException as e:
            self.game_errors.append(e)
            raise
        finally:
            self._games_over.set()

    async def _one_game(self):
        with trio.fail_after(60):
            async with connect(self.url, "ann") as a, connect(self.url, "bob") as b:
                table = await create(a, "run-wild", 2, rounds=1)
                ja, jb = await join(a, table, 0), await join(b, table, 1)
                self.game_table = table
                results = [None, None]

                async def play(i, c, j):
                    results[i] = await play_to_end(c, j, timeout=50)

                async with trio.open_nursery() as n:
                    n.start_soon(play, 0, a, ja)
                    n.start_soon(play, 1, b, jb)
        over = [r.over for r in results]
        t = self.server.tables[table]
        assert over[0] == over[1] and over[0] is not None
        assert t.finished and over[0].seq == t.seq
        assert replay(read_log(t.logfile.path.read_bytes())).state == t.state
        self.games_done.append(table)


# ------------------------------------------------------------------ hostile frames

def _msgpack_values():
    scalars = (st.none() | st.booleans() | st.integers(-(2**63), 2**64 - 1)
               | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=30) | st.binary(max_size=30))
    return st.recursive(scalars, lambda ch: st.lists(ch, max_size=4)
                        | st.dictionaries(st.text(max_size=8) | st.integers(-5, 5), ch, max_size=4), max_leaves=12)


def _message_shaped():
    """Maps that look like messages: a known, server-only or unknown `type`, fields of
    that message (or not) with values of any type."""
    client_fields = {
        "hello": ["version", "name", "client"], "list_tables": [], "create_table": ["game", "seats", "settings", "name"],
        "join": ["table", "seat"], "rejoin": ["table", "seat", "token"], "spectate": ["table"], "leave": [],
        "intent": ["id", "action"],
    }
    tags = sorted(m.MESSAGES.classes) + ["", "launch", "HELLO", "intent "]

    @st.composite
    def shaped(draw):
        tag = draw(st.sampled_from(tags))
        fields = client_fields.get(tag) or [f.name for f in getattr(m.MESSAGES.classes.get(tag), "__attrs_attrs__", ())]
        obj = {"type": tag}
        for f in fields:
            if draw(st.integers(0, 9)) < 8:
                obj[f] = draw(_msgpack_values() | st.sampled_from([GAME_TABLE, 1, 2**53 + 1, -1, "run-wild", {}]))
        if draw(st.booleans()) and draw(st.booleans()):
            obj[draw(st.text(max_size=6))] = draw(_msgpack_values())
        return ("obj", obj)
    return shaped()


def _valid_messages():
    """Well-formed client messages the lobby must answer (never seated: every intent
    is for a table this connection has not joined)."""
    kinds = sorted({k for g in games().values() for k in g.ACTIONS.classes}) + ["nope"]
    table = st.sampled_from([GAME_TABLE, "t00000000", ""]) | st.text(max_size=40)
    action = st.builds(lambda k, extra: {"kind": k, **extra}, st.sampled_from(kinds),
                       st.dictionaries(st.sampled_from(["card", "cards", "meld", "value", "values", "target", "rank"]),
                                       _msgpack_values(), max_size=3))
    return st.one_of(
        st.just(("obj", {"type": "list_tables"})),
        st.builds(lambda t: ("obj", {"type": "spectate", "table": t}), table),
        st.builds(lambda t, s: ("obj", {"type": "join", "table": t, "seat": s}), table, st.none() | st.integers(0, 15)),
        st.builds(lambda t, s, k: ("obj", {"type": "rejoin", "table": t, "seat": s, "token": k}), table,
                  st.integers(0, 15), st.text(max_size=100)),
        st.just(("obj", {"type": "leave"})),
        st.builds(lambda i, a: ("obj", {"type": "intent", "id": i, "action": a}), st.integers(0, 2**53), action),
        st.builds(lambda g, n, s: ("obj", {"type": "create_table", "game": g, "seats": n, "settings": s}),
                  st.sampled_from(sorted(games()) + ["chess"]), st.integers(1, 16),
                  st.dictionaries(st.text(max_size=12) | st.sampled_from(["rounds", "turn_timer", "symbols", "snake_oil"]),
                                  _msgpack_values(), max_size=3)),
    )


def _nested(depth: int, as_map: bool) -> bytes:
    return (b"\x81\xa1a" if as_map else b"\x91") * depth + b"\xc0"


FRAMES = st.one_of(
    st.builds(lambda b: ("raw", b), st.binary(max_size=200)),
    st.builds(lambda v: ("raw", msgpack.packb(v)), _msgpack_values()),          # valid msgpack, wrong shape
    _message_shaped(),
    _valid_messages(),
    st.builds(lambda t: ("text", t), st.text(max_size=200)),
    st.builds(lambda d, mp: ("deep", d, mp), st.integers(1, 3000), st.booleans()),
    st.builds(lambda d: ("deep-settings", d), st.integers(17, 40)),
    st.builds(lambda n: ("big", n), st.sampled_from([1000, 60_000, PROTOCOL_CAP + 1, 200_000, WS_CAP + 10])),
    st.builds(lambda v: ("obj", {"type": "intent", "id": v, "action": {"kind": "draw"}}),
              st.integers(-(2**63), 2**64 - 1) | st.floats() | st.text(max_size=3)),
    st.just(("raw", b"\xd4\x01\x00")),                                          # an extension type
    st.just(("raw", msgpack.packb({"type": "list_tables"}) * 2)),               # two values in one frame
)


def _build(frame, table: str):
    """(data to send, the error code it must get or None for "any documented answer")."""
    kind = frame[0]
    if kind == "raw":
        return frame[1], None
    if kind == "text":
        return frame[1], "text_frame"
    if kind == "obj":
        def sub(x):
            if x == GAME_TABLE:
                return table
            if isinstance(x, dict):
                return {k: sub(v) for k, v in x.items()}
            if isinstance(x, list):
                return [sub(v) for v in x]
            return x
        return msgpack.packb(sub(frame[1])), None
    if kind == "deep":
        depth, as_map = frame[1], frame[2]
        if depth >= 1025:                     # past msgpack's own stack: not one value we can read
            return _nested(depth, as_map), "bad_frame"
        return _nested(depth, as_map), "missing_field" if as_map else "bad_field"
    if kind == "deep-settings":
        inner = msgpack.packb({"rounds": 1})
        nested = b"\x81\xa1a" * frame[1] + inner
        head = msgpack.packb({"type": "create_table", "game": "run-wild", "seats": 2})
        return b"\x84" + head[1:] + b"\xa8settings" + nested, "bad_field"
    if kind == "big":
        n = frame[1]
        data = msgpack.packb({"type": "create_table", "game": "run-wild", "seats": 2, "name": "x" * n})
        if len(data) > WS_CAP:
            return data, "close:1009"
        return data, "bad_field"
    raise AssertionError(frame)


class Probe:
    """One hostile client: sends frames, matches each to its answer, reconnects after a close."""

    def __init__(self, url: str, table: str):
        self.url, self.table = url, table
        self.sentinel = 0
        self.closes: list[int] = []

    async def open(self, stack: AsyncExitStack, hello: bool):
        self.stack = stack
        self.ws = await stack.enter_async_context(open_socket(self.url))
        self.conn = Connection(self.ws)
        self.strikes = 0
        self.sent_huge = False
        self.version_mismatch = False
        if hello:
            w = await self.conn.hello("mallory")
            assert isinstance(w, m.Welcome)

    def _closed(self, e: ConnectionClosed):
        code = e.code
        self.closes.append(code)
        if code == 1009:
            assert self.sent_huge, "closed with 1009 without a frame over the 64 KiB cap"
        elif code == 1008:
            assert self.strikes > 20 or self.version_mismatch, f"closed with 1008 after {self.strikes} bad frames"
        else:
            raise AssertionError(f"unexpected close code {code} ({e.reason})")

    def _check_answer(self, msg, expected):
        if isinstance(msg, m.Error):
            assert msg.code in CODES, f"undocumented error code {msg.code!r}"
            assert msg.message, msg
            if msg.code in STRIKE_CODES:
                self.strikes += 1
            if msg.code == "version_mismatch":
                self.version_mismatch = True
        elif isinstance(msg, m.Rejected):
            assert msg.code in CODES, f"undocumented rejection code {msg.code!r}"
            if msg.code in STRIKE_CODES:
                self.strikes += 1           # a malformed intent whose id could be read
            else:
                assert msg.code == "not_seated", msg         # this client never holds a seat
        else:
            assert expected is None, (expected, msg)
            assert isinstance(msg, (m.Welcome, m.TableList, m.TableCreated, m.Spectating, m.Left, m.Joined)), msg
        if expected is not None and not expected.startswith("close:"):
            assert isinstance(msg, (m.Error, m.Rejected)) and msg.code == expected, (expected, msg)

    async def before_hello(self, frame):
        data, expected = _build(frame, self.table)
        self.sent_huge = len(data) > WS_CAP
        try:
            await self.conn.send_raw(data)
            msg = await self.conn.receive()           # exactly one answer to each frame
        except ConnectionClosed as e:
            self._closed(e)
            return "closed"
        self._check_answer(msg, expected)
        if isinstance(msg, m.Error) and msg.code not in ("version_mismatch",) and not expected:
            decoded_hello = False
            try:
                decoded_hello = m.MESSAGES.decode_bytes(data).TAG == "hello"
            except Exception:
                pass
            if not decoded_hello:
                assert msg.code in STRIKE_CODES, msg      # before hello, nothing but errors
        return "hello" if isinstance(msg, m.Welcome) else ("closed" if self.version_mismatch else "open")

    async def after_hello(self, frame):
        """Send the frame, then a sentinel that the game table's arbiter answers (so it is
        answered after anything the frame sent there): the frame's own answer is the one
        direct answer before the sentinel's."""
        data, expected = _build(frame, self.table)
        self.sent_huge = len(data) > WS_CAP
        direct = []
        try:
            await self.conn.send_raw(data)
            await self.conn.send(m.Spectate(self.table))
            with trio.fail_after(10):
                while len(direct) < 2:
                    msg = await self.conn.receive()
                    if is_direct_answer(msg):
                        direct.append(msg)
        except ConnectionClosed as e:
            for a in direct[:1]:
                self._check_answer(a, expected)
            self._closed(e)
            return "closed"
        except trio.TooSlowError:
            raise AssertionError(f"frame {data[:60]!r} was not answered exactly once: {direct}") from None
        assert isinstance(direct[1], m.Spectating), f"frame {data[:60]!r} got two answers: {direct}"
        self._check_answer(direct[0], expected)
        assert expected != "close:1009", "a frame over the 64 KiB cap did not close the connection"
        return "open"


async def _barrage(url: str, table: str, before: list, after: list):
    with trio.fail_after(60):
        return await _barrage_inner(url, table, before, after)


async def _barrage_inner(url: str, table: str, before: list, after: list):
    probe = Probe(url, table)
    async with AsyncExitStack() as stack:
        await probe.open(stack, hello=False)
        state = "open"
        for f in before:
            state = await probe.before_hello(f)
            if state != "open":
                break
    async with AsyncExitStack() as stack:
        await probe.open(stack, hello=True)
        for f in after:
            if await probe.after_hello(f) == "closed":
                await stack.aclose()
                await probe.open(stack, hello=True)
        # still served, and no answer was left over
        await probe.conn.send(m.ListTables())
        last = await probe.conn.receive_until(is_direct_answer)
        assert isinstance(last, m.TableList), last
    return probe


BAD = ("raw", b"\xc1")


def test_hostile_frames_get_answers_or_clean_closes_and_a_game_plays_on(tmp_path):
    with ThreadedServer(tmp_path / "data") as srv:
        closes = []

        @settings(max_examples=60, deadline=None, database=None)
        @given(before=st.lists(FRAMES, max_size=3), after=st.lists(FRAMES, min_size=1, max_size=8))
        @example(before=[("obj", {"type": "intent", "id": 1, "action": {"kind": "draw"}}), ("text", "hi"), BAD],
                 after=[("obj", {"type": "intent", "id": 2, "action": {"kind": "draw"}})])
        @example(before=[], after=[("big", PROTOCOL_CAP + 1), ("big", WS_CAP + 10), ("text", "x"), ("deep", 3000, False),
                                   ("deep", 3000, True), ("deep-settings", 17)])
        @example(before=[], after=[BAD] * 25 + [("obj", {"type": "list_tables"})])
        @example(before=[("obj", {"type": "hello", "version": 99, "name": "x"})], after=[BAD])
        @example(before=[], after=[("obj", {"type": "spectate", "table": GAME_TABLE}),
                                   ("obj", {"type": "intent", "id": 2**53, "action": {"kind": "draw"}}),
                                   ("obj", {"type": "join", "table": GAME_TABLE, "seat": 0}),
                                   ("obj", {"type": "rejoin", "table": GAME_TABLE, "seat": 1, "token": "x" * 32}),
                                   ("obj", {"type": "leave"}), ("obj", {"type": "leave"})])
        @example(before=[], after=[("obj", {"type": "create_table", "game": "run-wild", "seats": 2,
                                            "settings": {"x" * 1100: 1}}),
                                   ("obj", {"type": "create_table", "game": "wild-shots", "seats": 2,
                                            "settings": {"snake_oil": {"y" * 1100: 14}}})])
        def hostile(before, after):
            assert srv.alive(), srv.error
            probe = trio.run(_barrage, srv.url, srv.game_table, before, after)
            closes.extend(probe.closes)

        hostile()
        assert srv.alive(), srv.error
        assert {1008, 1009} <= set(closes)          # both kinds of close were seen
        assert len(srv.games_done) >= 1
    assert srv.error is None, srv.error
    assert not srv.game_errors, srv.game_errors
    assert len(srv.games_done) >= 2               # games went on during the barrage, and the last one finished


# ------------------------------------------------------------------ hostile sockets

async def _raw(port: int, payload: bytes, *, rst: bool, wait: float = 0.0):
    s = trio.socket.socket()
    try:
        await s.connect(("127.0.0.1", port))
        await s.send(payload)
        if wait:
            await trio.sleep(wait)
        if rst:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    finally:
        s.close()


def _upgrade(port: int) -> bytes:
    key = base64.b64encode(os.urandom(16)).decode()
    return (f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode()


async def test_sockets_dropped_during_the_handshake_or_at_the_connection_cap_do_not_take_the_server_down(tmp_path):
    """Found: a client that sent a WebSocket handshake and vanished before the server's
    answer (or before the server_full error, at the connection cap) crashed the whole server."""
    with trio.fail_after(60):
        async with running_server(server_config(tmp_path / "data", max_connections=4)) as (server, url):
            port = int(url.rsplit(":", 1)[1])
            async with connect(url, "ann") as a, connect(url, "bob") as b:
                table = await create(a, "run-wild", 2, rounds=1)
                ja, jb = await join(a, table, 0), await join(b, table, 1)
                results = []

                async def player(c, j):
                    results.append(await play_to_end(c, j, timeout=50))

                async def abuse():
                    for i in range(40):
                        kind = i % 5
                        if kind == 0:
                            await _raw(port, _upgrade(port), rst=True)
                        elif kind == 1:
                            await _raw(port, _upgrade(port), rst=False)
                        elif kind == 2:
                            await _raw(port, b"GET / HTTP/1.1\r\nHost: x\r\n", rst=True, wait=0.01)
                        elif kind == 3:
                            await _raw(port, os.urandom(300), rst=i % 2 == 0)
                        else:
                            await _raw(port, _upgrade(port) + os.urandom(50), rst=True)
                    # at the cap: two players + two held connections, then handshakes that vanish
                    async with connect(url, "c3"), connect(url, "c4"):
                        for i in range(30):
                            await _raw(port, _upgrade(port), rst=i % 2 == 0)
                        async with open_socket(url) as ws:
                            c = Connection(ws)
                            with trio.fail_after(5):
                                try:
                                    # the server's error and close may be in already (read with
                                    # the handshake's answer): then the hello cannot go out
                                    await c.send(m.Hello(m.PROTOCOL_VERSION, "fifth"))
                                    e = await c.receive()
                                    assert isinstance(e, m.Error) and e.code == "server_full", e
                                    await c.receive()
                                    raise AssertionError("the connection over the cap stayed open")
                                except ConnectionClosed as closed:
                                    assert closed.code == 1013

                async with trio.open_nursery() as n:
                    n.start_soon(player, a, ja)
                    n.start_soon(player, b, jb)
                    n.start_soon(abuse)
            assert len(results) == 2 and results[0].over == results[1].over and results[0].over is not None
            await wait_until(lambda: not server.connections, timeout=5, what="every connection closed")
            async with connect(url, "after") as c:
                await c.send(m.ListTables())
                lst = await c.receive_until(lambda x: isinstance(x, m.TableList))
                assert [t["status"] for t in lst.tables] == ["over"]


# ------------------------------------------------------------------ hostile intents from a seat

def _junk_action(rng) -> dict:
    """An action map a hostile seated player might send: known kinds with fields of any
    type and size, unknown kinds, deep and wide values (all within the wire's caps)."""
    kinds = sorted({k for g in games().values() for k in g.ACTIONS.classes}) + ["", "x" * 40, "launch"]

    def value(depth=0):
        r = rng.random()
        if r < 0.25:
            return rng.choice([0, -1, 71, 72, 2**53, -(2**53), 10**6])
        if r < 0.35:
            return rng.choice([1.5, float("nan"), float("inf"), -0.0])
        if r < 0.45:
            return "w" * rng.choice([0, 1, 900, 20_000])
        if r < 0.55:
            return rng.choice([None, True, False, b"\x00\xff"])
        if r < 0.65 and depth < 14:
            return [value(depth + 1)]                                  # deep
        if r < 0.7 and depth < 2:
            return [rng.randint(0, 80) for _ in range(rng.choice([3, 100, 500]))]   # wide
        if depth < 14:
            return {("k" * rng.choice([1, 200])) + str(i): value(depth + 1) for i in range(rng.randint(0, 2))}
        return 7
    action = {"kind": rng.choice(kinds)}
    for f in rng.sample(["card", "cards", "meld", "value", "values", "take", "give", "target", "rank", "zz"],
                        rng.randint(0, 4)):
        action[f] = value()
    return action


async def test_hostile_intents_from_a_seat_are_refused_logged_and_the_log_still_loads(tmp_path):
    """A seated player sends 200 malformed or illegal intents mid-game: each is answered
    once, in order, and refused (or, rarely, accepted); the first refusals go to the log
    (then only a few a second: the rest are counted), and after a restart the log still
    reads and the table is rebuilt where it was."""
    import random
    rng = random.Random(99)
    data = tmp_path / "data"
    with trio.fail_after(60):
        async with running_server(data) as (server, url):
            async with connect(url, "ann") as a, connect(url, "bob") as b:
                table = await create(a, "run-wild", 2)
                await join(a, table, 0)
                await join(b, table, 1)
                for i, c in enumerate((a, b)):
                    await c.send(m.Intent(i, {"kind": "ready"}))
                sent = []
                for k in range(200):
                    data_ = msgpack.packb({"type": "intent", "id": 10 + k, "action": _junk_action(rng)})
                    if len(data_) > PROTOCOL_CAP:
                        continue
                    sent.append(10 + k)
                    await a.send_raw(data_)
                answers = []
                with trio.fail_after(20):
                    while len(answers) < len(sent) + 1:
                        msg = await a.receive()
                        if isinstance(msg, m.Error):
                            raise AssertionError(f"an intent answered with an error: {msg}")
                        if isinstance(msg, (m.Accepted, m.Rejected)):
                            answers.append(msg)
                assert [x.intent for x in answers] == [0] + sent
                assert all(x.code in CODES for x in answers if isinstance(x, m.Rejected))
                assert sum(isinstance(x, m.Rejected) for x in answers) > 150
                seq = server.tables[table].seq
                state = server.tables[table].state
    contents = read_log((data / f"{table}.wlog").read_bytes())
    assert sum(type(r).__name__ == "IntentRejected" for r in contents.records) >= REFUSALS_LOGGED_BURST
    with trio.fail_after(30):
        async with running_server(data) as (server, url):
            assert server.tables[table].seq == seq and server.tables[table].state == state
