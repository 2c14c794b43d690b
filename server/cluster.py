"""This node among the nodes that share one store (`wildtable serve --store`).

Every node is a whole server: it owns some tables (a lease each, server/store_pg.py), runs
their arbiters, and answers every client. What it adds to a single server:

- **Heartbeat** every HEARTBEAT (1 s): its public URL, load and capacity in wt_nodes. A
  node is *live* while its heartbeat is younger than LIVE (3 s, three heartbeats missed).
  The live nodes' URLs go to every client in ``welcome.nodes``.
- **Placement**: ``create_table`` goes to the live node with room and the least load
  (load = open tables + connections / 4, against capacity = max tables + max
  connections / 4); when that is another node the answer is ``redirect``, and the
  create_table it sends there again with ``here: true`` is honoured if that node has room.
- **Redirects**: ``join``, ``rejoin``, ``spectate`` and ``seat_bots`` of a table another
  live node owns get ``redirect`` to that node's URL. A table whose owner's lease has
  passed is adopted on the spot (on demand); one whose owner stopped heartbeating while
  its lease still runs is adopted as soon as the lease passes (the request waits for it,
  at most one lease). A table that has ended is answered here from its row, never
  redirected (``no_such_table``: expired waiting or given up in play, or over and
  forgotten by its owner, which then clears its lobby entry); only a game over that a live owner still lists
  (holds, watchable) is redirected there.
- **Adoption**: every ADOPT_EVERY (1 s) a node with room adopts unfinished tables whose
  lease has passed (or that have no owner: a node that stopped cleanly gave them up),
  replaying their records from the store exactly as recovery replays a file; turn and
  idle timers go on from the replayed state. On its first pass a node takes its share (the
  tables over the live nodes), so that a dead node's tables spread; on the next pass,
  whatever is left. A dead node's tables are served again within its lease plus two passes.
- **Lobby**: the owner writes each table's ``list_tables`` entry to the store when it
  changes (at most every LOBBY_EVERY, 1 s); every node lists its own tables and the
  other tables' stored entries (read at most every LOBBY_EVERY): the same lobby from every node.
- **Bots**: the server-run bots of a table (botseats.py) are kept in its row, so the
  node that adopts the table runs them on; the node that loses it stops its own.
"""

from __future__ import annotations

import logging
import math
import random
from urllib.parse import urlsplit

import msgpack
import trio

from wildtable.protocol.codec import packb
from wildtable.protocol.errors import IllegalAction

from .botseats import valid_entries
from .logwriter import EXPIRED
from .store_pg import StoreError, first_line
from .storewait import until_the_store_answers
from .takeover import SAID_KEPT, awaited, comeback, redirect_to_suspect, suspect, waiting_for_lease
from .wire import ws_url
from .oplog import about

log = logging.getLogger("wildtable.server")

HEARTBEAT = 1.0         # seconds between a node's heartbeats
LIVE = 3.0              # a node whose last heartbeat is older than this is not live
ADOPT_EVERY = 1.0       # seconds between looks for tables whose lease passed
LOBBY_EVERY = 1.0       # seconds between writes of this node's lobby entries (and reads of the others')
BOTS_EVERY = 0.1        # seconds at least between writes of the bots of tables (they are written when they change)
ADOPT_AT_ONCE = 100     # tables looked at per adoption pass at most
_STATUS_RANK = {"waiting": 0, "playing": 1, "over": 2}


def ws_origin(url: str) -> str | None:
    """The origin (lowercase, default port left out, as browsers send it) of the pages of
    the server at WebSocket URL ``url``; None if it is not a ws:// or wss:// URL."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return None
    scheme = {"ws": "http", "wss": "https"}.get(parts.scheme.lower())
    host = parts.hostname
    if scheme is None or not host:
        return None
    host = f"[{host}]" if ":" in host else host
    default = 80 if scheme == "http" else 443
    return f"{scheme}://{host}" + (f":{port}" if port is not None and port != default else "")


class Redirected(Exception):
    """The message is for another node: answer ``redirect`` (connection.py)."""

    def __init__(self, url: str, table: str | None, reason: str):
        super().__init__(reason)
        self.url, self.table, self.reason = url, table, reason


def _rank(entry: bytes) -> int:
    """The status rank of an encoded list_tables entry (waiting first, as app.py lists)."""
    try:
        info = msgpack.unpackb(entry, raw=False)
        return _STATUS_RANK.get(info.get("status"), 2)
    except Exception:
        return 2


class Cluster:
    """This node's part in the cluster (see the module's doc). ``server`` is the app.Server,
    whose tables it serves; ``store`` the store the nodes share (PgStore)."""

    def __init__(self, server, store, public_url: str | None = None):
        self.server = server
        self.clock = server.world.clock     # how it waits (server/world.py)
        self.store = store
        self.public_url = public_url
        self.url: str | None = None             # this node's public URL, once it listens
        self.nodes: list = []                   # the live nodes (store_pg.NodeRow), this one too
        self._nodes_at = -math.inf              # when they were last read
        self._placed: dict[str, int] = {}       # tables sent to each node since the last heartbeat
        self._remote: dict[str, tuple[int, bytes]] = {}   # other nodes' tables: id -> (rank, entry)
        self._order: list[str] = []             # every listed table's id, in the store's creation order
        self._published: dict[str, bytes] = {}  # our tables' entries as last written
        self._bots_dirty: set[str] = set()
        self._bots_wake = trio.Event()
        self._said: dict[str, float] = {}       # warnings already logged: when (so they are not every second)
        self.adopted = 0                        # tables adopted by the loop or on demand
        self._pending: set[str] = set()         # tables left to adopt at the next pass (others took their share)
        # one lookup of a table at a time, first come first served: see locate
        self._locating: dict[str, trio.Lock] = {}
        self._adopting: dict[str, trio.Event] = {}    # adoptions under way here (_adopt): set when done
        self._origins: tuple[list, frozenset[str]] = ([], frozenset())   # peer_origins() for which nodes
        self._nursery: trio.Nursery | None = None   # the loops' (and the takeover watchers')
        # the order of the adoption pass, from this node's own generator, never the global
        # one: seeded by the config (the simulator's node seed), a run replays exactly from
        # its seed (docs/ARCHITECTURE.md, "The simulator"); unseeded, from the OS
        self._rng = random.Random(server.config.seed)

    # ---------------------------------------------------------------- start
    def node_url(self, host: str, port: int) -> str:
        """This node's public URL: --public-url, else the listen address."""
        if self.public_url:
            return self.public_url
        return ws_url(host, port)

    async def join_cluster(self, host: str, port: int) -> None:
        """Once listening: this node's URL and id (the URL unless given), and its first
        heartbeat; the store away meanwhile is waited out (server/storewait.py)."""
        self.url = self.node_url(host, port)
        if not self.store.node_id:
            self.store.node_id = self.url
        try:
            await until_the_store_answers(self.server, self.store.dsn, "register this node", self._register)
        except StoreError:
            raise
        except Exception as e:
            raise StoreError(f"cannot register this node in the store: {first_line(e)}") from e

    async def _register(self) -> None:
        """A node id with a fresh heartbeat may belong to another running node: if that
        heartbeat moves on meanwhile, it does, and this node refuses to start; if it does
        not (a node restarted at once after a crash), this node takes the id over."""
        me = self.store.node_id

        async def age() -> float | None:
            rows = await self.store.call(self.store.live_nodes, 2 * LIVE)
            return next((r.age for r in rows if r.node_id == me), None)
        first = await age()
        if first is not None and first < LIVE:
            await self.clock.sleep(1.5 * HEARTBEAT)
            again = await age()
            if again is not None and again < first + HEARTBEAT:
                raise StoreError(f"another live node is known to the store as {me!r} (its heartbeat goes on): "
                                 "give each node its own --node-id (and --public-url)")
        await self._heartbeat()

    # ---------------------------------------------------------------- the loops
    async def run(self, *, task_status=trio.TASK_STATUS_IGNORED) -> None:
        async with trio.open_nursery() as nursery:
            self._nursery = nursery
            nursery.start_soon(self._every, HEARTBEAT, self._heartbeat)
            nursery.start_soon(self._every, ADOPT_EVERY, self._adopt_pass)
            nursery.start_soon(self._every, LOBBY_EVERY, self._lobby_pass)
            nursery.start_soon(self._bots_loop)
            task_status.started()

    async def _every(self, period: float, work) -> None:
        """``work()`` every ``period`` seconds; a failure (the store unreachable, say) is
        logged (once a minute at most) and the next round tries again."""
        while True:
            await self.clock.sleep(period)
            try:
                await work()
            except Exception as e:
                self._warn(work.__name__, "cluster: %s failed (%s); trying again", work.__name__.strip("_"),
                           first_line(e))

    def _warn(self, key: str, text: str, *args, level: int = logging.WARNING, extra: dict | None = None) -> None:
        """Log once a minute at most for ``key`` (the keys remembered are bounded);
        ``extra``: the record's fields (server/oplog.py ``about``)."""
        now = trio.current_time()
        if now - self._said.get(key, -math.inf) >= 60:
            self._said.pop(key, None)
            self._said[key] = now
            while len(self._said) > SAID_KEPT:
                del self._said[next(iter(self._said))]
            log.log(level, text, *args, extra=extra)

    def load(self) -> int:
        return self.open_tables() + len(self.server.connections) // 4

    def capacity(self) -> int:
        return self.server.config.max_tables + self.server.config.max_connections // 4

    def open_tables(self) -> int:
        return len(self.server.open_tables)

    def room(self) -> bool:
        return self.open_tables() < self.server.config.max_tables

    async def _heartbeat(self) -> None:
        try:
            await self.store.call(self.store.heartbeat, self.url, self.load(), self.capacity())
            self.nodes = await self.store.call(self.store.live_nodes, LIVE)
        except Exception:
            if trio.current_time() - self._nodes_at > LIVE:
                self.nodes = []         # nobody known live: tables are made here, none sent elsewhere
            raise
        self._nodes_at = trio.current_time()
        self._placed.clear()

    def node_urls(self) -> tuple[str, ...]:
        """The live nodes' public URLs for welcome.nodes: none for a node alone."""
        urls = tuple(r.url for r in self.nodes)
        return urls if len(urls) > 1 else ()

    def peer_origins(self) -> frozenset[str]:
        """The browser origins of the live nodes' pages (``ws://h:p`` -> ``http://h:p``,
        ``wss://`` -> ``https://``): a page one node served may open a WebSocket to any
        node (a redirect, a reconnect), so each node accepts them as an Origin (listener.py)."""
        nodes = self.nodes
        if self._origins[0] is not nodes:
            self._origins = (nodes, frozenset(o for o in map(ws_origin, (r.url for r in nodes)) if o))
        return self._origins[1]

    def _live(self, node_id: str | None):
        return next((r for r in self.nodes if r.node_id == node_id), None)

    # ---------------------------------------------------------------- placement
    def place(self) -> str | None:
        """Where a new table goes: None for this node, else the URL of the live node with
        room and the least load (this node on a tie)."""
        me = self.store.node_id
        best, best_load = None, self.load() if self.room() else math.inf
        for r in self.nodes:
            if r.node_id == me:
                continue
            load = r.load + self._placed.get(r.node_id, 0)
            if load < r.capacity and load < best_load:
                best, best_load = r, load
        if best is None:
            return None
        # counted until its next heartbeat says it: creates meanwhile do not all go there
        self._placed[best.node_id] = self._placed.get(best.node_id, 0) + 1
        return best.url

    def redirect_create(self) -> None:
        """Raise Redirected if a new table belongs on another node."""
        url = self.place()
        if url is not None:
            raise Redirected(url, None, "the cluster places new tables on its least loaded node: create it there")

    # ---------------------------------------------------------------- finding a table
    async def locate(self, table_id: str):
        """The table ``table_id`` served here: one this node runs, or one it adopts now
        because its owner's lease has passed. Redirected if another live node owns it;
        IllegalAction(no_such_table) if the store has no such open table, (storage_error)
        if the store cannot be asked now."""
        # Requests for one table take turns in the order they came (trio.Lock is FIFO):
        # several players waiting for one lease to pass would otherwise all wake at one
        # instant, and which of them adopted the table (and was seated first, 50 ms before
        # the rest) was Trio's pick of the tasks ready then, not who asked first: unfair to
        # players, and a seed of the simulator ran two ways (docs/ARCHITECTURE.md,
        # "Determinism"). The first adopts; the others then find the table at once and
        # reach its inbox in their order (nothing yields between release and submit).
        # Every wait of a request is bounded by its deadline, a lease and two adoption passes
        # from when it came (docs/PROTOCOL.md, "Clusters"): for its turn, for a lease to pass,
        # for an adoption under way. The store calls it makes are bounded by the store's own
        # timeouts; an adoption is not cancelled (it goes on, and a request after it finds
        # the table), the request is answered.
        since = trio.current_time()
        deadline = since + self.store.lease_seconds + 2 * ADOPT_EVERY
        lock = self._locating.get(table_id)
        if lock is None:
            lock = self._locating[table_id] = trio.Lock()
        try:
            got = False
            with self.clock.move_on_at(deadline):
                await lock.acquire()
                got = True
            if not got:
                raise self._too_long(table_id, since, "its turn (earlier requests for it are still waiting)")
            try:
                return await self._locate(table_id, since, deadline)
            finally:
                lock.release()
        except (Redirected, IllegalAction):
            raise
        except Exception as e:
            self._warn("locate", "cluster: cannot look table %s up in the store (%s)", table_id, first_line(e), extra=about(table=table_id))
            raise IllegalAction("storage_error", f"this server cannot reach its store to find table {table_id} just "
                                "now; try again in a few seconds") from None
        finally:
            if not lock.locked() and lock.statistics().tasks_waiting == 0:
                self._locating.pop(table_id, None)      # bounded by the requests waiting now

    def _too_long(self, table_id: str, since: float, what: str, here: bool = True) -> IllegalAction:
        """The answer to a request that waited its whole deadline for ``what``; logged.
        ``here``: this node is taking the table over (else another one is)."""
        waited = trio.current_time() - since
        self._warn(f"waited {table_id}", "cluster: a request for table %s waited %.1f s for %s and was answered "
                   "storage_error (is the store slow?)", table_id, waited, what, extra=about(table=table_id))
        who = "this server, which" if here else "the cluster; this server"
        return IllegalAction("storage_error", f"table {table_id} is being taken over by {who} waited "
                             f"{waited:.0f} s for {what}; try again in a few seconds")

    async def _locate(self, table_id: str, since: float, deadline: float):
        srv = self.server
        # a table whose node is gone may wait for its lease to pass, and another node may
        # be adopting it meanwhile: look again until then, at most a lease and a bit
        while trio.current_time() < deadline:
            table = srv.tables.get(table_id)
            if table is not None:
                return table
            info = await self.store.call(self.store.table_info, table_id)
            if info is None:
                raise IllegalAction("no_such_table", srv.no_table(table_id))
            if info["finished"] and (info["ended"] == EXPIRED or not info["listed"]):
                # expired waiting (never held), or over and forgotten by its owner (who clears
                # its lobby entry then): answered from the row, whatever node owned it
                raise IllegalAction("no_such_table", self.gone(table_id, info["ended"]))
            owner, left = info["owner"], info["lease_left"]
            live = None
            if owner is not None and owner != self.store.node_id:
                live = self._live(owner)
                if live is None and info["url"] is not None:
                    # a node that joined since our last heartbeat, maybe: look again
                    self.nodes = await self.store.call(self.store.live_nodes, LIVE)
                    self._nodes_at = trio.current_time()
                    live = self._live(owner)
            if info["finished"]:
                # over and still listed: watched (and rejoined) where a live node holds it
                if live is not None:
                    raise Redirected(live.url, table_id, f"table {table_id} is held by another node")
                raise IllegalAction("no_such_table", self.gone(table_id, info["ended"]))
            if owner is not None and owner != self.store.node_id and left > 0:
                if live is not None:
                    age = live.age + trio.current_time() - self._nodes_at
                    if suspect(age, HEARTBEAT):
                        # dead, maybe: its players are sent there and come back here until it
                        # stops counting as live (the client waits: headless/redirects.py)
                        self._warn(f"suspect {owner}", "%s", redirect_to_suspect(owner, live.url, age,
                                                                                self.store.lease_seconds))
                    raise Redirected(live.url, table_id, f"table {table_id} is served by another node")
                # its node stopped heartbeating while its lease still runs: take the
                # table over once the lease passes (the fence keeps that node out then)
                wait = min(left, self.store.lease_seconds)
                self._warn(f"lease {table_id}", "%s", waiting_for_lease(table_id, owner, wait), level=logging.INFO,
                           extra=about(table=table_id))
                await self.clock.sleep(wait + 0.05)
                continue
            # ownerless, this node's, or its lease has passed: served here from now on
            if table_id in self._adopting:          # being adopted here (the pass): served when it is
                with self.clock.move_on_at(deadline):
                    await self._adopting[table_id].wait()
                if table_id in self._adopting:
                    raise self._too_long(table_id, since, "its adoption here to read it from the store")
                continue
            if srv.storage.adopting(table_id):       # being adopted here right now (at start)
                await self.clock.sleep(0.05)
                continue
            if not self.room():
                url = self.place()
                if url is not None:
                    raise Redirected(url, table_id, f"table {table_id} is being moved to another node; this one "
                                     "is full")
                raise IllegalAction("too_many_tables", f"table {table_id} waits for a node to take it over and "
                                    "every node is full; try again later")
            table = await self._adopt(table_id)
            if table is not None:
                return table
            if table_id in srv.refused_logs:
                raise IllegalAction("no_such_table", f"table {table_id!r} cannot be loaded from the store: "
                                    f"{srv.refused_logs[table_id]}")
            await self.clock.sleep(0.05)              # another node took it meanwhile: where is it now?
        table = srv.tables.get(table_id)              # (served here as the deadline came)
        if table is not None:
            return table
        # Another node was taking it over all along (each adoption here found it taken): it
        # is an open table, so the answer says "try again", never no_such_table, which
        # clients take as final and forget the seat's token for (docs/PROTOCOL.md, "Clusters").
        raise self._too_long(table_id, since, "another node of this cluster to take it over", here=False)

    def gone(self, table_id: str, ended: str) -> str:
        """Why table ``table_id``, which ``ended`` (OVER or EXPIRED), is no table of any node
        now: the sentences of a single server (app.Server.no_table), its log in the store."""
        export = (f"its log is in the cluster's store (wildtable export --store DSN {table_id} writes it as a .wlog "
                  "file)")
        if ended == EXPIRED:
            return (f"table {table_id!r} expired: nobody was at it while it waited for players, or for long while "
                    f"its game was in play, so no node of this cluster holds it any more ({export}); create a new "
                    "table, or list_tables shows the open ones")
        return (f"table {table_id!r} is over and no node of this cluster holds it any more; its replay is at "
                f"/replay/{table_id}.json on this server, and {export}")

    # ---------------------------------------------------------------- adoption
    async def _adopt(self, table_id: str):
        """Adopt one table now (server.adopt_table), and start its bots here. One adoption
        of a table at a time: a request that finds one under way (the pass's, say) waits
        for all of it, so that it is answered at the same instant whichever of the two
        Trio happened to run first (docs/ARCHITECTURE.md, "Determinism")."""
        under_way = self._adopting.get(table_id)
        if under_way is not None:
            await under_way.wait()
            return self.server.tables.get(table_id)
        done = self._adopting[table_id] = trio.Event()
        try:
            was = self.server.tables.get(table_id)
            table = await self.server.storage.adopt_table(table_id)
            if table is not None and table is not was:
                self.adopted += 1
                await self.resume_bots(table_id)
                w = awaited(table_id, table.players(), trio.current_time())
                if w is not None and not table.finished and self._nursery is not None:
                    self._nursery.start_soon(self._watch_comeback, table, w)
            return table
        finally:
            del self._adopting[table_id]
            done.set()

    async def _watch_comeback(self, table, w) -> None:
        """Say whether the players of a table taken over came back (takeover.comeback)."""
        while True:
            done, line, warn = comeback(w, table.players(), trio.current_time(),
                                        table.finished or self.server.tables.get(table.id) is not table)
            if line:
                (log.warning if warn else log.info)("%s", line)
            if done:
                return
            await self.clock.sleep(0.5)

    async def _adopt_pass(self) -> None:
        """Adopt tables whose lease passed, while there is room: this node's share of them
        at the first look (they spread over the live nodes), the rest at the next."""
        if not self.room():
            return
        ids = await self.store.call(self.store.expired_tables, ADOPT_AT_ONCE)
        ids = [t for t in ids if t not in self.server.tables]
        again = [t for t in ids if t in self._pending]
        fresh = [t for t in ids if t not in self._pending]
        self._rng.shuffle(fresh)
        share = math.ceil(len(fresh) / max(1, len(self.nodes)))
        todo = again + fresh[:share]
        self._pending = set(fresh[share:])
        for tid in todo:
            if not self.room():
                break
            await self._adopt(tid)

    # ---------------------------------------------------------------- lobby
    def lobby_entries(self) -> list[tuple[int, bytes]]:
        """Every table's list_tables entry (rank, entry) in the cluster's creation order:
        this node's tables as they are now, the others' as last read from the store (a
        table of ours the store does not list yet comes last)."""
        local = self.server.tables
        out, seen = [], set()
        for tid in self._order:
            t = local.get(tid)
            if t is not None:
                out.append(t.list_entry())
                seen.add(tid)
            else:
                e = self._remote.get(tid)
                if e is not None:
                    out.append(e)
        out += [t.list_entry() for tid, t in local.items() if tid not in seen]
        return out

    async def _lobby_pass(self) -> None:
        """Write the entries of this node's tables that changed (and clear those of tables it
        forgot), then read the other nodes'."""
        srv = self.server
        changed: dict[str, bytes | None] = {}
        for tid, t in srv.tables.items():
            entry = t.list_entry()[1]
            if self._published.get(tid) != entry:
                changed[tid] = entry
        for tid in [t for t in self._published if t not in srv.tables]:
            del self._published[tid]
            changed[tid] = None     # forgotten here: leaves the lobby (a table lost to another node is not ours to clear)
        if changed:
            await self.store.call(self.store.set_entries, changed)
            for tid, entry in changed.items():
                if entry is not None:
                    self._published[tid] = entry
        rows = await self.store.call(self.store.lobby, LIVE)
        remote = {}
        for r in rows:
            if r.table_id in srv.tables:
                continue
            old = self._remote.get(r.table_id)
            remote[r.table_id] = old if old is not None and old[1] == r.entry else (_rank(r.entry), r.entry)
        order = [r.table_id for r in rows]
        if remote != self._remote or order != self._order:
            self._remote, self._order = remote, order
            srv._lobby_changed()

    # ---------------------------------------------------------------- bots
    def bots_changed(self, table_id: str) -> None:
        """The server-run bots of ``table_id`` changed (botseats.BotBook): write them soon."""
        self._bots_dirty.add(table_id)
        self._bots_wake.set()

    async def _bots_loop(self) -> None:
        while True:
            await self._bots_wake.wait()
            self._bots_wake = trio.Event()
            dirty, self._bots_dirty = self._bots_dirty, set()
            every = self.server.bots.book.load() if dirty else []     # bots.json, read once a round
            for tid in dirty:
                entries = [e for e in every if e.get("table") == tid]
                try:
                    await self.store.call(self.store.set_bots, tid, packb(entries) if entries else None)
                except Exception as e:
                    self._bots_dirty.add(tid)       # tried again at the next change or round
                    self._warn("bots", "cluster: cannot write the bots of table %s to the store (%s); trying again",
                               tid, first_line(e), extra=about(table=tid))
            if self._bots_dirty:
                self._bots_wake.set()
            await self.clock.sleep(BOTS_EVERY)

    async def resume_bots(self, table_id: str) -> None:
        """The server-run bots of a table this node now serves take their seats back here."""
        try:
            data = await self.store.call(self.store.bots_of, table_id)
        except Exception as e:
            log.warning("cluster: cannot read the bots of table %s from the store (%s); they stay offline",
                        table_id, first_line(e), extra=about(table=table_id))
            return
        if not data:
            return
        try:
            entries = msgpack.unpackb(data, raw=False)
        except Exception:
            log.warning("table %s: its bots in the store cannot be read; they stay offline", table_id, extra=about(table=table_id))
            return
        self.server.bots.resume_entries([e for e in valid_entries(entries) if e["table"] == table_id])

    async def resume_all_bots(self) -> None:
        """At start, once the bots can run: the bots of every table this node took to play
        on (not of the finished ones it holds again)."""
        for tid, t in list(self.server.tables.items()):
            if not t.finished:
                await self.resume_bots(tid)

    def stepped_down(self, table) -> None:
        """This node lost ``table``: its bots here stop (the adopter runs them)."""
        self._published.pop(table.id, None)
        self.server.bots.drop_table(table.id)

    # ---------------------------------------------------------------- stop
    async def leave(self) -> None:
        """A clean stop: this node is no longer live."""
        with self.clock.move_on_after(3):
            try:
                await self.store.call(self.store.node_down)
            except Exception as e:
                log.warning("cluster: could not mark this node stopped in the store (%s)", first_line(e))
