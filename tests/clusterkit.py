"""Nodes of a cluster for tests: real `wildtable serve --store` subprocesses on 127.0.0.1
sharing one PostgreSQL database (tests/pgkit.py), real signals; and a player that finds
its table in the cluster as our clients do: it follows `redirect`, and after a dropped
connection it connects again (its node, then every other node) and takes its seat back
with its token.

Leases are short (LEASE, 1.5 s) so that failover takes seconds."""

from __future__ import annotations

import signal
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field

import attrs
import trio

from wildtable.headless.core import is_network_error
from wildtable.headless.net import Connection, Mirror, connect
from wildtable.protocol import messages as m
from wildtable.protocol.logfmt import read_log

from adversarial_kit import start_serve
from proc import LineReader

LEASE = 1.5             # seconds: serve --lease-seconds of every node
# A dead node's tables are served again within its lease plus two passes of the 1 s
# adoption loop (server/cluster.py, docs/ARCHITECTURE.md "Scaling")
ADOPTED_WITHIN = LEASE + 2.0


@dataclass
class Node:
    name: str
    proc: trio.Process
    url: str
    stderr: LineReader
    stopped: bool = False

    @property
    def log(self) -> str:
        return self.stderr.text

    @property
    def port(self) -> int:
        return int(self.url.rsplit(":", 1)[1])

    def signal(self, sig: int) -> None:
        self.proc.send_signal(sig)
        if sig == signal.SIGSTOP:
            self.stopped = True
        elif sig == signal.SIGCONT:
            self.stopped = False


async def start_node(nursery, data_dir, dsn: str, name: str, *extra: str, lease: float | None = LEASE) -> Node:
    """`wildtable serve --store DSN --node-id NAME` on a free port (``lease`` None: no
    --lease-seconds, the default an operator gets); its stderr is drained into
    ``node.log`` as it comes."""
    leased = () if lease is None else ("--lease-seconds", str(lease))
    sp = await start_serve(nursery, data_dir, "--store", dsn, "--node-id", name, *leased,
                           "--rate-limit", "10000", "--max-per-address", "0", "--max-waiting-per-address", "0", *extra)
    return Node(name, sp.proc, sp.url, sp.stderr)


@asynccontextmanager
async def cluster(tmp_path, dsn: str, count: int, *extra: str, lease: float | None = LEASE):
    """``count`` nodes n1, n2, ... started side by side; each ended at exit (SIGCONT if it
    was stopped, SIGTERM, SIGKILL after 10 s)."""
    nodes: list[Node | None] = [None] * count
    async with trio.open_nursery() as nursery:
        async def one(i):
            nodes[i] = await start_node(nursery, tmp_path / f"n{i + 1}", dsn, f"n{i + 1}", *extra, lease=lease)
        try:
            async with trio.open_nursery() as starting:
                for i in range(count):
                    starting.start_soon(one, i)
            yield nodes
        finally:
            with trio.CancelScope(shield=True):
                await stop_all([n for n in nodes if n is not None])
            nursery.cancel_scope.cancel()


async def stop_all(nodes: list[Node]) -> None:
    for n in nodes:
        if n.proc.returncode is None:
            if n.stopped:
                n.signal(signal.SIGCONT)
            n.proc.send_signal(signal.SIGTERM)
    for n in nodes:
        with trio.move_on_after(10):
            await n.proc.wait()
        if n.proc.returncode is None:
            n.proc.kill()
            await n.proc.wait()


async def both_live(a: str, b: str) -> None:
    """Until the welcome of each node names both nodes, A and B, each by its URL as the
    cluster names it (its --public-url, if given): A redirects to B only once it knows B,
    and B accepts a page of A's as Origin only once it knows A. Each learns of the other at
    its own next heartbeat, so A knowing B says nothing of B knowing A (the page's
    WebSocket to B was then refused, 403, and the browser logged an error)."""
    with trio.fail_after(10):
        for url in (a, b):
            while True:
                async with connect(url) as c:
                    if sorted((await c.hello("probe")).nodes) == sorted([a, b]):
                        break
                await trio.sleep(0.1)


# ------------------------------------------------------------------ the store, read by the test

def _query(dsn: str, sql: str, args=()):
    import psycopg
    with psycopg.connect(dsn, autocommit=True, connect_timeout=10) as conn:
        return conn.execute(sql, args).fetchall()


async def query(dsn: str, sql: str, args=()):
    return await trio.to_thread.run_sync(_query, dsn, sql, args)


async def owners(dsn: str) -> dict[str, tuple[str | None, int]]:
    """Every table of the store: (owner node, epoch)."""
    return {t: (o, e) for t, o, e in await query(dsn, "SELECT table_id, owner, epoch FROM wt_tables")}


async def log_bytes(dsn: str, table: str) -> bytes:
    """The table's records in the store, in order: its .wlog bytes."""
    rows = await query(dsn, "SELECT n, data FROM wt_records WHERE table_id = %s ORDER BY n", (table,))
    assert [n for n, _ in rows] == list(range(len(rows))), f"table {table}: records missing in the store"
    return b"".join(bytes(d) for _, d in rows)


async def stored_log(dsn: str, table: str):
    return read_log(await log_bytes(dsn, table))


# ------------------------------------------------------------------ a player of the cluster

@dataclass
class Roamer:
    """One player's connection to a cluster (headless/net.py), which finds its table as our
    clients do: `redirect` is followed (at most 3 hops per message, a redirected
    create_table sent again with ``here``), and ``come_back`` connects again after a drop
    (the node it was on, then every other) and rejoins with its token. ``trail`` is every
    node it was connected to, in order."""
    urls: list[str]
    name: str
    conn: Connection | None = None
    url: str | None = None
    trail: list[str] = field(default_factory=list)
    redirects: list[m.Redirect] = field(default_factory=list)
    mirror: Mirror = field(default_factory=Mirror)
    inflight: int | None = None     # the intent play() waits for an answer to
    hold: trio.Event | None = None  # while set and not yet fired, play() sends no intent
    _stack: AsyncExitStack | None = None

    async def open(self, url: str) -> None:
        await self.close()
        stack = AsyncExitStack()
        try:
            self.conn = await stack.enter_async_context(connect(url, self.name))
        except BaseException:
            await stack.aclose()
            raise
        self._stack, self.url = stack, url
        self.trail.append(url)

    async def close(self) -> None:
        stack, self._stack, self.conn = self._stack, None, None
        if stack is not None:
            with trio.move_on_after(3) as s:
                s.shield = True
                try:
                    await stack.aclose()
                except Exception as e:
                    if not is_network_error(e):
                        raise

    async def ask(self, msg, *answers: type, keep: list | None = None):
        """Send ``msg``; its answer (one of ``answers``, or an error), following redirects."""
        for hop in range(4):
            await self.conn.send(msg)
            reply = await self.conn.receive_until(lambda x: isinstance(x, (*answers, m.Redirect, m.Error)),
                                                  keep=keep)
            if not isinstance(reply, m.Redirect):
                self.mirror.absorb(reply)
                return reply
            assert hop < 3, f"{self.name}: redirected more than 3 times: {self.redirects[-3:]}"
            assert reply.ref == msg.TAG, reply
            self.redirects.append(reply)
            await self.open(reply.url)
            if isinstance(msg, m.CreateTable):
                msg = attrs.evolve(msg, here=True)
        raise AssertionError("unreachable")

    async def create(self, game: str, seats: int, here: bool = False, **settings) -> str:
        reply = await self.ask(m.CreateTable(game, seats, settings, "", here), m.TableCreated)
        assert isinstance(reply, m.TableCreated), reply
        return reply.table

    async def join(self, table: str, seat: int | None = None) -> m.Joined:
        reply = await self.ask(m.Join(table, seat), m.Joined)
        assert isinstance(reply, m.Joined), reply
        return reply

    async def come_back(self, timeout: float = 20) -> m.Joined | m.Spectating:
        """After a dropped connection: connect again (the node it was on first, then every
        other node, round and round) and rejoin with the token (a spectator: spectate
        again); the fresh snapshot."""
        mir = self.mirror
        again = m.Spectate(mir.table) if mir.seat is None else m.Rejoin(mir.table, mir.seat, mir.token)
        order = [self.url] + [u for u in self.urls if u != self.url]
        with trio.fail_after(timeout):
            while True:
                for url in order:
                    try:
                        await self.open(url)
                        reply = await self.ask(again, m.Joined, m.Spectating)
                    except Exception as e:
                        if not is_network_error(e):
                            raise
                        await self.close()
                        continue
                    if not isinstance(reply, m.Error):
                        return reply
                    # no_such_table while no node has taken the table over yet: try again
                    assert reply.code == "no_such_table", reply
                await trio.sleep(0.2)

    async def play(self, choose, *, pace: float = 0.0, timeout: float = 60, log: list | None = None,
                   ids: int = 1) -> Mirror:
        """Play from this seat's view (``choose(view)``: an action or None) until game over,
        coming back after every dropped connection. Every message goes to ``log``."""
        mirror = self.mirror
        next_id, need_seq = ids, 0
        self.inflight = None
        with trio.fail_after(timeout):
            while mirror.over is None:
                try:
                    if self.inflight is None and mirror.seq >= need_seq:
                        action = choose(mirror.view)
                        if action is not None:
                            if pace:
                                await trio.sleep(pace)
                            if self.hold is not None:
                                await self.hold.wait()
                            self.inflight = next_id
                            next_id += 1
                            await self.conn.send(m.Intent(self.inflight, action))
                    msg = await self.conn.receive()
                except Exception as e:
                    if not is_network_error(e):
                        raise
                    joined = await self.come_back()
                    if log is not None:
                        log.append(joined)
                    self.inflight, need_seq = None, 0
                    continue
                if log is not None:
                    log.append(msg)
                mirror.absorb(msg)
                if isinstance(msg, (m.Accepted, m.Rejected)) and msg.intent == self.inflight:
                    self.inflight = None
                    if isinstance(msg, m.Accepted):
                        need_seq = msg.seq
        return mirror


    async def watch(self, table: str, log: list, timeout: float = 60) -> None:
        """Spectate ``table`` until game over, coming back after every dropped connection;
        every message goes to ``log``."""
        log.append(await self.ask(m.Spectate(table), m.Spectating))
        with trio.fail_after(timeout):
            while self.mirror.over is None:
                try:
                    msg = await self.conn.receive()
                except Exception as e:
                    if not is_network_error(e):
                        raise
                    msg = await self.come_back()
                log.append(msg)
                self.mirror.absorb(msg)


@asynccontextmanager
async def roamers(urls: list[str], names: list[str], first: list[str] | None = None):
    """Players connected to the cluster, the i-th to ``first[i]`` (default: the nodes in
    turn); all closed at exit."""
    people = [Roamer(urls, n) for n in names]
    try:
        for i, p in enumerate(people):
            await p.open((first or urls)[i % len(first or urls)])
        yield people
    finally:
        for p in people:
            await p.close()
