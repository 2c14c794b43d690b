"""Where the tables' logs live: the one place that decides (issue #23).

Files in the data dir (server/local_tables.py), or a store that nodes share, this node
then one of a cluster (server/store_tables.py): a PostgreSQL store from config.store (a
DSN), or a Store object of another world's with its log sink (the simulator's,
server/world.py). The server asks its ``TableStorage`` and never which it is."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

import trio

from .interfaces import LogSink, Store
from .local_tables import LocalTables
from .store_pg import PgStore, PgWriter
from .store_tables import StoreTables
from .table import Table

if TYPE_CHECKING:
    from .app import Server
    from .cluster import Cluster


class TableStorage(Protocol):
    """What the server asks of where its tables' logs live."""

    @property
    def store(self) -> Store | None:
        """The store (None: files)."""
        ...

    @property
    def writer(self) -> LogSink[Any]:
        """The log sink every table's records go to."""
        ...

    @property
    def cluster(self) -> Cluster | None:
        """This node's part in a cluster (there is one with a store)."""
        ...

    def describe(self) -> str:
        """Where, in words, for the `serving on` line."""
        ...

    async def open(self) -> list[Table]:
        """Before the port opens: the tables to serve at once (recovered from files)."""
        ...

    async def serving(self, host: str, port: int, nursery: trio.Nursery) -> None:
        """Once the port is open: what runs beside the tables (a cluster node's loops)."""
        ...

    async def resume_bots(self) -> None:
        """The server-run bots of the tables served here, back at their seats."""
        ...

    def lobby_entries(self) -> list[tuple[int, bytes]]:
        """The list_tables entries, (rank, encoded entry), in creation order."""
        ...

    async def create(self, tid: str, game, seats: int, settings: dict, created: str, name: str,
                     address: str | None) -> Table:
        """A new table, its log made."""
        ...

    def forget(self, table: Table, where: str) -> None:
        """A forgotten table's log moved out of recovery's way (or marked so in the store)."""
        ...

    async def adopt_table(self, table_id: str) -> Table | None:
        """A table of the store served here from now on (files: never; None)."""
        ...

    def adopting(self, table_id: str) -> bool:
        """Whether this node is adopting ``table_id`` now."""
        ...

    async def close(self) -> None:
        """After the log writer stopped: a store's leases given up, files' stamps set."""
        ...


def choose_storage(server: Server, store: Store | None = None,
                   store_sink: LogSink[Any] | None = None) -> TableStorage:
    """Files, or a store: a Store object given (with ``store_sink``, the log sink that
    writes to it), else server.config.store (a DSN) if set."""
    config = server.config
    if store is not None:
        if store_sink is None:
            raise ValueError("a Store object needs its store_sink (the log sink that writes to it)")
        if isinstance(store_sink, PgWriter):        # (the simulator's is one; another world's may keep no timings)
            store_sink.timings = server.metrics
        return StoreTables(server, store, store_sink)
    if config.store:
        pg = PgStore(config.store, config.node_id or "", lease_seconds=config.lease_seconds)
        writer = PgWriter(pg, config.durability)
        writer.timings = server.metrics
        return StoreTables(server, pg, writer)
    return LocalTables(server)
