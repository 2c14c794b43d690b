"""Tables kept in a store that nodes share (serve --store; docs/ARCHITECTURE.md,
"Scaling"): this node is one of a cluster (server/cluster.py). The schema at start, new
tables' rows, adoption (at start, by the cluster's loop, on demand), the leases kept and
given up, and a forgotten table marked over in the store. One of the two places the
tables' logs live (server/storage.py chooses); the other is server/local_tables.py."""

from __future__ import annotations

import logging
from functools import partial
from typing import TYPE_CHECKING, Any

import attrs
import trio

from wildtable.protocol.errors import IllegalAction, LogError
from wildtable.protocol.logfmt import read_log
from wildtable.protocol.replay import replay

from .cluster import Cluster
from .interfaces import LogSink, Store
from .logwriter import EXPIRED, OVER
from .local_tables import check_lobby_facts, ended_as
from .oplog import about
from .store_pg import PgLog, StoreError, first_line, id_taken, redact
from .storewait import until_the_store_answers
from .table import Table

if TYPE_CHECKING:
    from .app import Server

log = logging.getLogger("wildtable.server")

ID_ATTEMPTS = 5               # table ids drawn for one create on a store whose nodes took the earlier ones


class StoreTables:
    """The tables' logs in ``store``, written by ``writer`` (its log sink); this node one of
    the cluster's."""

    def __init__(self, server: Server, store: Store, writer: LogSink[Any]):
        self.server = server
        self.store = store
        self.writer = writer
        # heartbeat, lobby across nodes, placement, redirects, adoption of tables whose lease passed
        self.cluster = Cluster(server, store, server.config.public_url)
        server.bots.book.on_change = self.cluster.bots_changed
        server.limits = attrs.evolve(server.limits, peer_origins=self.cluster.peer_origins)
        self._adopting: set[str] = set()        # tables being adopted from the store now

    def describe(self) -> str:
        return f"store {redact(self.store.dsn)}, node {self.store.node_id}, data dir {self.server.data_dir}"

    async def open(self) -> list[Table]:
        """Before the port opens: the store's schema (a store away is waited out:
        server/storewait.py). Its tables come once this node's URL (its id, unless
        --node-id) is known: ``serving``."""
        try:
            await until_the_store_answers(self.server, self.store.dsn, "make its tables",
                                          partial(self.store.call, self.store.ensure_schema))
        except Exception as e:
            raise StoreError(f"cannot use the store {redact(self.store.dsn)}: {first_line(e)} "
                             "(does PostgreSQL let this user in there, and may it create tables?)") from e
        return []

    async def serving(self, host: str, port: int, nursery: trio.Nursery) -> None:
        """Once listening: join the cluster, take this node's tables, keep their leases."""
        await self.cluster.join_cluster(host, port)
        await self._open_store()
        nursery.start_soon(self._keep_leases)
        await nursery.start(self.cluster.run)

    async def resume_bots(self) -> None:
        await self.cluster.resume_all_bots()    # from the store, table by table

    def lobby_entries(self) -> list[tuple[int, bytes]]:
        return self.cluster.lobby_entries()     # the other nodes' tables too

    async def create(self, tid: str, game, seats: int, settings: dict, created: str, name: str,
                     address: str | None) -> Table:
        """A new table whose log is in the store (its row and header, owned by this node)."""
        store, server = self.store, self.server
        def create() -> Table:
            return Table.create(tid, game, seats, dict(settings), partial(store.create_table_row, tid, game.NAME, creator=address),
                                self.writer, created, name, owner=address, **server.table_kw())
        for attempt in range(ID_ATTEMPTS):
            try:
                return await store.call(create)
            except IllegalAction:
                raise
            except Exception as e:
                if id_taken(e) and attempt + 1 < ID_ATTEMPTS:
                    # ids are drawn per node: another node of the cluster made this one first
                    log.info("table id %s is taken in the store (another node made it); drawing another", tid)
                    tid = server.new_id()
                    continue
                server.metrics.store_error("create_table")
                log.error("cannot create table %s in the store: %s (see that PostgreSQL runs and that this node's "
                          "role may write to its database)", tid, e, extra=about(table=tid))
                raise IllegalAction("storage_error", "the server cannot write a new table to its store; try later or "
                                    "tell its operator") from None
        raise AssertionError("unreachable: the last attempt returns or raises")

    def forget(self, table: Table, where: str) -> None:
        """Its records stay in the store; marked finished there (and how it ended: the
        replay viewer lists no table that expired), so no node adopts it."""
        log.info("table %s forgotten (%s, nobody at it)", table.id, ended_as(table), extra=about(table=table.id))
        self.server.nursery.start_soon(self._retire, table)

    async def _retire(self, table: Table) -> None:
        try:
            await self.writer.release(table.logfile, OVER if table.finished else EXPIRED)
        finally:
            self.server._moving.pop(table.id, None)

    def _table_from_store(self, handle, finished_ago: float = 0.0) -> Table | None:
        """(In a worker thread.) A table of the store, rebuilt as recovery rebuilds one from
        its file: its records read and replayed by the protocol. None if its log is refused
        (logged, kept in refused_logs, not tried again): nothing in it is cut, torn tail or
        not, and records missing in the middle are refused, never cut."""
        tid = handle.table_id
        refused = self.server.refused_logs
        try:
            data = self.store.load_records(tid)
        except StoreError as e:
            refused[tid] = str(e)
            log.error("table %s in the store: refusing to load it: %s", tid, e, extra=about(table=tid))
            return None
        try:
            contents = read_log(data)
            if contents.torn is not None:
                raise LogError("bad_frame", f"its last record in the store is cut ({contents.torn.dropped} bytes "
                               "of a frame)", offset=contents.torn.offset)
            result = replay(contents)
            seat_records = check_lobby_facts(tid, f"the store's table {tid!r}", contents)
        except (LogError, IllegalAction) as e:
            refused[tid] = str(e)
            log.error("table %s in the store: refusing to load it: %s", tid, e, extra=about(table=tid))
            return None
        h = contents.header
        return Table(tid, result.game, h.seats, dict(h.settings), result.state, handle, self.writer,
                     seq=result.seq, seat_records=seat_records, finished_ago=finished_ago, log_format=h.format,
                     owner=handle.creator, **self.server.table_kw())

    def _finished_from_store(self) -> list[Table]:
        """(In a worker thread, at start.) This node's tables whose game ended under
        keep_finished ago, held again read-only, as recovery holds a finished log from files
        (listed, watchable and rejoinable until keep_finished has passed since they ended);
        never one that expired waiting for players (the store says which: finished_here), nor
        one marked finished before the store kept that whose game is not over."""
        tables = []
        for tid, epoch, records, ago in self.store.finished_here(self.server.config.keep_finished):
            table = self._table_from_store(PgLog(tid, epoch, records), finished_ago=ago)
            if table is not None and table.finished:
                tables.append(table)
        return tables

    def adopting(self, table_id: str) -> bool:
        """Whether this node is adopting ``table_id`` now."""
        return table_id in self._adopting

    async def adopt_table(self, table_id: str) -> Table | None:
        """Serve a table of the store from now on: take its lease (a new epoch, so that its
        former owner can never write to it again) if it is this node's own, ownerless or
        its lease has passed, and rebuild it from its records. The table, or None if its
        lease cannot be taken now or its log is refused."""
        server = self.server
        if table_id in server.tables:
            return server.tables[table_id]
        if table_id in server.refused_logs or table_id in self._adopting:
            return None
        self._adopting.add(table_id)
        store = self.store
        try:
            def load():
                handle = store.adopt(table_id)
                return None if handle is None else self._table_from_store(handle)
            table = await store.call(load)
            if table is None:
                return None
            server.start_table(table)
        finally:
            self._adopting.discard(table_id)
        server.metrics.adoptions += 1
        log.info("table %s adopted from the store (epoch %d, %d records, seq %d%s)", table.id, table.logfile.epoch,
                 table.logfile.next_n, table.seq, ", game over" if table.finished else "", extra=about(table=table.id))
        if table.finished:
            # over already (its last owner stopped before marking it): nobody adopts it again
            server.nursery.start_soon(self.writer.release, table.logfile, OVER)
        return table

    async def _open_store(self) -> None:
        """Once this node joined the cluster (which gave it its id): its own finished tables
        that ended under keep_finished ago, read-only (as recovery loads them from files),
        and every table of the store it may take at start (its own after a restart,
        ownerless or expired ones), up to max_tables. A store away meanwhile is waited
        out, the whole step tried again (what it took already is not taken twice)."""
        adopted: list[str] = []

        async def take() -> None:
            server = self.server
            finished = [t for t in await self.store.call(self._finished_from_store) if t.id not in server.tables]
            for table in finished:
                server.start_table(table)
            if finished:
                log.info("loaded %d finished table(s) read-only", len(finished))
            ids = await self.store.call(self.store.adoptable, server.config.max_tables)
            for tid in ids:
                if not self.cluster.room():
                    break
                was = server.tables.get(tid)
                table = await self.adopt_table(tid)
                if table is not None and table is not was:
                    adopted.append(tid)
        try:
            await until_the_store_answers(self.server, self.store.dsn, "read this node's tables", take)
        except StoreError:
            raise
        except Exception as e:
            raise StoreError(f"cannot read the tables of the store {redact(self.store.dsn)}: {e}") from e
        if adopted:
            log.info("took %d table(s) from the store: %s", len(adopted), ", ".join(adopted))

    async def _keep_leases(self) -> None:
        """Renew this node's leases every third of their length; a table whose lease was
        not renewed (another node adopted it, or it passed: the store was out of reach, the
        node paused) steps down. Renewals the store does not answer are logged and tried
        again: the fence refuses any write after the lease anyway."""
        server = self.server
        period = self.store.lease_seconds / 3
        failing_since = said = None
        while True:
            await server.world.clock.sleep(period)
            running = [(t, t.logfile.epoch) for t in server.tables.values() if not t.finished]
            try:
                held = await self.store.call(self.store.renew)
            except Exception as e:
                server.metrics.lease_renewal_failures += 1
                server.metrics.store_error("lease_renewal")
                server.health.set_problem("store", f"the store does not answer ({first_line(e)})",
                                          "see that PostgreSQL runs and this node can reach it (--store)")
                now = trio.current_time()
                if failing_since is None:
                    failing_since = now
                if said is None or now - said >= 10:
                    said = now
                    log.warning("cannot renew this node's leases in the store (%s) for %.0f s; trying again every "
                                "%.1f s (once a lease passes, its table steps down; see that PostgreSQL runs and this node can reach "
                                "it)", first_line(e),
                                now - failing_since, period)
                continue
            server.metrics.lease_renewals += 1
            server.health.set_problem("store", None, "")
            if failing_since is not None:
                log.warning("leases renewed again after %.1f s", trio.current_time() - failing_since)
                failing_since = said = None
            for t, epoch in running:
                if held.get(t.id) != epoch and not t.finished:
                    t.lose_lease()

    async def close(self) -> None:
        """Every commit is written: give up this node's leases, so that another node may
        take its tables at once instead of after the lease (or this one, restarted)."""
        with self.server.world.clock.move_on_after(5):
            try:
                released = await self.store.call(self.store.release_leases)
            except Exception as e:
                log.warning("could not give up this node's leases in the store (%s): other nodes take its tables "
                            "once they pass", e)
            else:
                if released:
                    log.info("gave up the leases of %d table(s) in the store", released)
        await self.cluster.leave()
        # through the world (a worker thread; inline in the simulator, whose clock would
        # jump while a thread of its own ran)
        await self.server.world.run_sync(self.store.close)

