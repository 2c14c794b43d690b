"""The invariants (docs/ARCHITECTURE.md, "Simulation"), checked against what is durable:
the table's log as a restarted server would read it.

- Nothing acknowledged is lost: every seq a client was shown is in the log.
- Every view a client holds agrees with the replayed log: it is exactly the engine's
  ``view(state at that seq, seat)``; so no hidden card reached a seat (or a spectator)
  that may not see it.
- Fair order within its bound: every action ordered by send time was credited at most
  the table's cap (``fair_ms``): logged ``recv - sent`` at most the cap, its hold at
  most FAIR_LEGS times the cap.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from wildtable.protocol import engine
from wildtable.protocol.codec import packb, unpackb
from wildtable.protocol.errors import LogError
from wildtable.protocol.logfmt import ActionAccepted, ChanceRecorded, read_log
from wildtable.protocol.replay import initial_state, step

FAIR_LEGS = 2          # server/table.py: an intent's key is its arrival minus two delays
EPS = 1e-6


# Each game's view as the engine defines it, taken when this module is imported: a bug
# planted in the server's copy (plant.py) must not move what it is checked against.
_VIEWS = {}
for _g in engine.games().values():
    _pub, _priv = getattr(_g, "public_view", None), getattr(_g, "private_view", None)
    _VIEWS[_g.NAME] = ((lambda s, seat, p=_pub, q=_priv: {**p(s), **q(s, seat)}) if _pub and _priv else _g.view)


def find_log(data_dir: Path, table_id: str) -> bytes | None:
    for where in ("", "finished", "expired"):
        p = data_dir / where / f"{table_id}.wlog"
        if p.exists():
            return p.read_bytes()
    return None


def fair_cap_of(header) -> float:
    """The cap the table's settings name (not the server's idea of it: a planted bug may
    change that), in seconds."""
    if header.game != "run-wild":
        return 0.0
    ms = header.settings.get("fair_ms", 100)
    return ms / 1000.0 if ms > 0 else 0.0


def _fair_sentences(r, cap: float) -> tuple[str, ...]:
    """What is wrong with an action record's fair-order credit, without ``when``."""
    out = []
    if r.recv - r.sent > cap + EPS:
        out.append(f"seq {r.seq} was ordered as sent {r.recv - r.sent:.3f} s before it arrived, "
                   f"more than the table's cap of {cap:g} s (fair order credit unbounded)")
    if r.hold is not None and r.hold > FAIR_LEGS * cap + EPS:
        out.append(f"seq {r.seq} was held {r.hold:.3f} s, more than {FAIR_LEGS} x the cap of {cap:g} s")
    return tuple(out)


class Checker:
    """One table's log checked as it grows, at every check of a run. The states replayed
    are kept, so a check replays only the records added since the last one (from the
    first record that changed, if any did: a crash cut the log, another owner wrote it);
    a view shown is compared with the log once, its verdict kept while the state it was
    compared with stands. A check says what replaying the whole log would say, sentence
    for sentence and in the same order (``check``, below, is that replay)."""

    def __init__(self) -> None:
        self._good = b""                   # the log up to its last whole record, at the last check
        self._header: Any = None
        self._game: Any = None
        self._view: Any = None
        self._cap = 0.0
        self._start: Any = None            # the state before any record
        self._records: list = []           # the records replayed, in order
        self._states: list = []            # the state after each of them
        self._seqs: list[int | None] = []  # the seq each made (None: not state-changing)
        self._fair: list[tuple[str, ...]] = []   # each one's fair-order sentences
        self._any_fair = False
        self._at: dict[int, Any] = {}      # seq -> the state at it (its first record's)
        self._last_seq = 0
        self._oughts: dict = {}            # (seq, seat) -> (state, the view it gives)
        self._verdicts: dict = {}          # id(seen) -> (seen, state, keys that differ or None)

    def check(self, data: bytes, seen: list, when: str) -> list[str]:
        """What is wrong, as sentences (empty: nothing)."""
        try:
            contents = read_log(data)
        except LogError as e:        # a gap, a record twice: what a restarted server would refuse
            return [f"{when}: the log does not read back ({e}): an acknowledged record was lost or written twice"]
        self._advance(data, contents)
        at = self._at
        shown_wrong: dict[int, list[str]] = {}
        lost: dict[int, set[str]] = {}
        for s in seen:
            state = at.get(s.seq, _NONE)
            if state is _NONE:
                lost.setdefault(s.seq, set()).add(s.client)
                continue
            keys = self._verdict(s, state)
            if keys is not None:
                shown_wrong.setdefault(s.seq, []).append(
                    f"{when}: {s.client} was shown a view at seq {s.seq} (seat {s.seat}) that is not the "
                    f"log's: differs in {keys}")
        bad: list[str] = []
        if shown_wrong or self._any_fair:          # in the log's order, as a replay finds them
            bad += shown_wrong.pop(0, ())
            for seq, fair in zip(self._seqs, self._fair):
                if seq is not None and seq in shown_wrong:
                    bad += shown_wrong.pop(seq)
                bad += (f"{when}: {f}" for f in fair)
        for seq in sorted(lost):
            bad.append(f"{when}: seq {seq} was shown to {', '.join(sorted(lost[seq]))} but the log ends at "
                       f"seq {self._last_seq} (an acknowledged record was lost)")
        return bad

    def _verdict(self, s, state) -> list | None:
        """The keys in which the view ``s`` differs from the log's at its seq (None: none)."""
        v = self._verdicts.get(id(s))
        if v is not None and v[0] is s and v[1] is state:
            return v[2]
        o = self._oughts.get((s.seq, s.seat))
        if o is None or o[0] is not state:
            o = self._oughts[(s.seq, s.seat)] = (state, unpackb(packb(self._view(state, s.seat))))
        ought = o[1]
        keys = None
        if ought != s.view:
            keys = sorted(k for k in set(ought) | set(s.view) if ought.get(k) != s.view.get(k))
        self._verdicts[id(s)] = (s, state, keys)
        return keys

    def _advance(self, data: bytes, contents) -> None:
        """Replay the records the log holds beyond those replayed and unchanged."""
        records = contents.records
        same = len(self._records)
        if contents.header != self._header:
            same = 0
        elif not data.startswith(self._good):     # cut or written anew: keep what is unchanged
            same = 0
            for old, new in zip(self._records, records):
                if old != new:
                    break
                same += 1
        same = min(same, len(records))
        if same == 0 or contents.header != self._header:
            same = 0
            self._header = contents.header
            self._game, self._start = initial_state(contents.header)
            self._cap = fair_cap_of(contents.header)
            self._view = _VIEWS.get(self._game.NAME, self._game.view)
        if same < len(self._records) or not self._at:
            del self._records[same:], self._states[same:], self._seqs[same:], self._fair[same:]
            self._at = {0: self._start}
            self._last_seq = 0
            for seq, state in zip(self._seqs, self._states):
                if seq is not None:
                    self._at.setdefault(seq, state)
                    self._last_seq = seq
            self._any_fair = any(self._fair)
        game, cap = self._game, self._cap
        state = self._states[-1] if self._states else self._start
        for r in records[same:]:
            t = type(r)
            seq = None
            if t is ActionAccepted or t is ChanceRecorded:
                state = step(game, state, r)
                seq = self._last_seq = r.seq
                self._at.setdefault(seq, state)
            fair: tuple[str, ...] = ()
            if t is ActionAccepted and cap and r.sent is not None:
                fair = _fair_sentences(r, cap)
                self._any_fair = self._any_fair or bool(fair)
            self._records.append(r)
            self._states.append(state)
            self._seqs.append(seq)
            self._fair.append(fair)
        self._good = data[:contents.good_length]


_NONE = object()


def count_problems(server, node: str) -> list[str]:
    """The counts a node keeps of its open tables (server/open_tables.py) against a walk
    over every table it holds: a table started, finished, forgotten or stepped down from
    (a lease lost) and not counted so would let --max-tables or an address's share drift."""
    walked = [t for t in server.tables.values() if not t.finished]
    out = []
    if len(server.open_tables) != len(walked):
        out.append(f"{node} counts {len(server.open_tables)} open table(s), holds {len(walked)}")
    for address in {t.owner for t in walked if t.owner is not None}:
        kept = [t.id for t in server.open_tables.owned_by(address)]
        if kept != [t.id for t in walked if t.owner == address]:
            out.append(f"{node} counts {kept} as {address}'s open tables")
    return out


def check(data: bytes, seen: list, when: str) -> list[str]:
    """What is wrong with ``data`` as a whole, replayed from its start (a Checker of its own)."""
    return Checker().check(data, seen, when)
