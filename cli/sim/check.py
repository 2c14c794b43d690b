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


def check(data: bytes, seen: list, when: str) -> list[str]:
    """What is wrong, as sentences (empty: nothing)."""
    bad: list[str] = []
    try:
        contents = read_log(data)
    except LogError as e:        # a gap, a record twice: what a restarted server would refuse
        return [f"{when}: the log does not read back ({e}): an acknowledged record was lost or written twice"]
    game, state = initial_state(contents.header)
    cap = fair_cap_of(contents.header)
    view = _VIEWS.get(game.NAME, game.view)
    want: dict[int, list] = {}
    for s in seen:
        want.setdefault(s.seq, []).append(s)
    seq = 0

    def compare(seq, state):
        for s in want.pop(seq, ()):
            ought = unpackb(packb(view(state, s.seat)))
            if ought != s.view:
                keys = sorted(k for k in set(ought) | set(s.view) if ought.get(k) != s.view.get(k))
                bad.append(f"{when}: {s.client} was shown a view at seq {seq} (seat {s.seat}) that is not the "
                           f"log's: differs in {keys}")
    compare(0, state)
    for r in contents.records:
        t = type(r)
        if t is ActionAccepted or t is ChanceRecorded:
            state = step(game, state, r)
            seq = r.seq
            compare(seq, state)
        if t is ActionAccepted and cap and r.sent is not None:
            if r.recv - r.sent > cap + EPS:
                bad.append(f"{when}: seq {r.seq} was ordered as sent {r.recv - r.sent:.3f} s before it arrived, "
                           f"more than the table's cap of {cap:g} s (fair order credit unbounded)")
            if r.hold is not None and r.hold > FAIR_LEGS * cap + EPS:
                bad.append(f"{when}: seq {r.seq} was held {r.hold:.3f} s, more than {FAIR_LEGS} x the cap of {cap:g} s")
    for lost in sorted(want):
        names = sorted({s.client for s in want[lost]})
        bad.append(f"{when}: seq {lost} was shown to {', '.join(names)} but the log ends at seq {seq} "
                   "(an acknowledged record was lost)")
    return bad
