"""How a table delivers what its core decided (server/arbiter_io.py's outputs), once the
group that made it is durable: each output is encoded into frames per connection, and
each connection gets the group's frames in one write, not one per frame (the sends were
a seventh of the flat-out profile). docs/ARCHITECTURE.md, "The arbiter: pure core, thin
shell"."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Mapping

from wildtable.protocol import messages as m

from .arbiter_io import Close, GameOver, Link, Output, PlayersChanged, SendTo, Update
from .delivery import UpdateFrames
from .interfaces import TableLog
from .oplog import about

if TYPE_CHECKING:
    from .arbiter import Arbiter

log = logging.getLogger("wildtable.server")


def _put(frames: dict, link: Link, data: bytes) -> None:
    got = frames.get(link)
    if got is None:
        frames[link] = [data]
    else:
        got.append(data)


class Sender:
    """Encodes and writes one table's outputs. ``logfile``: the table's log, whose name
    `game_over` tells; ``conns``: the connection each link stands for (the shell's)."""

    def __init__(self, core: Arbiter, logfile: TableLog, conns: Mapping[Link, Any]):
        self.core = core
        self.logfile = logfile
        self.conns = conns
        # patches against what each link received last (server/delivery.py)
        self._updates = UpdateFrames(core.game)

    def send(self, out: list[Output], now: float) -> None:
        frames: dict = {}
        for item in out:
            try:
                self._deliver(item, frames)
            except Exception:        # a view that raises: our bug; the others still hear
                log.exception("table %s: internal error delivering %s (our bug)", self.core.id, type(item).__name__, extra=about(table=self.core.id))
        conns = self.conns
        for link, data in frames.items():
            conns[link].send_frames(data)
        if self.core.fair:
            self.core.wrote(out, now)      # when each seq went to each socket (causality, server/fairorder.py)

    def _deliver(self, item: Output, frames: dict) -> None:
        """Encode one output into ``frames`` (link -> encoded messages)."""
        if type(item) is SendTo:
            _put(frames, item.link, self.conns[item.link].encode(item.message))
        elif type(item) is Update:
            self._update(item, frames)
        elif type(item) is Close:
            conn = self.conns[item.link]
            pending = frames.pop(item.link, None)
            if pending:             # what it is owed goes out before its close frame
                conn.send_frames(pending)
            conn.close_soon(item.code, item.reason)
        elif type(item) is PlayersChanged:
            players = tuple({"seat": i, "name": name, "connected": connected}
                            for i, (name, connected) in enumerate(item.players))
            data = m.encode(m.Players(self.core.id, players))
            for c in item.audience:
                _put(frames, c, data)
        elif type(item) is GameOver:
            core = self.core
            o = core.game.outcome(core.state)
            data = m.encode(m.GameOver(core.id, core.seq, tuple(o.scores), tuple(o.winners), self.logfile.name))
            for c in item.audience:
                _put(frames, c, data)

    def _update(self, item: Update, frames: dict) -> None:
        # a patch against what each link received last, or a whole view
        # (server/delivery.py; docs/PROTOCOL.md, "update")
        for c, data in self._updates.frames(item.seq, item.events, item.state, item.seats, item.spectators):
            got = frames.get(c)         # (_put, inline: five calls an update)
            if got is None:
                frames[c] = [data]
            else:
                got.append(data)
