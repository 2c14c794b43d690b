"""The counts a new table is checked against, kept as tables change rather than walked.

`Server.create_table` asks two things at every create: how many tables are open (not
finished: `--max-tables`) and which of the asking address's tables count against its
`--max-waiting-per-address`. Both were a walk over every table the server holds, and it
holds a finished table for `--keep-finished` (an hour by default): the walk grew with
every game played in the last hour (0.8 ms a create with 10,000 tables held, on the
event loop, refused creates too). Here a table is counted when it starts, uncounted when
it finishes and when it is forgotten (evicted, or its lease lost), so each answer costs
what it counts.
"""

from __future__ import annotations

from typing import Generic, Protocol, TypeVar


class Counted(Protocol):
    """What is read of a table here (server/table.py's Table)."""

    @property
    def finished(self) -> bool: ...

    id: str
    owner: str | None


T = TypeVar("T", bound=Counted)


class OpenTables(Generic[T]):
    """Tables not finished, and the same by the address that created them."""

    def __init__(self) -> None:
        self._open: set[T] = set()
        # address -> its open tables, in the order they were made (the refusal names them)
        self._owned: dict[str, dict[T, None]] = {}

    def __len__(self) -> int:
        return len(self._open)

    def started(self, table: T) -> None:
        """A table joins the server's (made, loaded at start or adopted)."""
        if table.finished:
            return
        self._open.add(table)
        if table.owner is not None:
            self._owned.setdefault(table.owner, {})[table] = None

    def finished(self, table: T) -> None:
        """Its game ended, or it is forgotten: it counts against nothing any more."""
        self._open.discard(table)
        owner = table.owner
        if owner is None:
            return
        owned = self._owned.get(owner)
        if owned is not None:
            owned.pop(table, None)
            if not owned:
                del self._owned[owner]

    forgotten = finished

    def owners(self) -> dict[str, str]:
        """{table id: its maker's address} of every open table with a maker."""
        return {t.id: address for address, owned in self._owned.items() for t in owned}

    def owned_by(self, address: str) -> list[T]:
        """The address's open tables, oldest first."""
        return list(self._owned.get(address, ()))
