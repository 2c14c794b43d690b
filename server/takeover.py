"""What an operator reads while a dead node's tables move (docs/ARCHITECTURE.md,
"Scaling"): pure text and decisions, the facts and the time in.

A node killed with SIGKILL looks live to the others for up to LIVE (3 s): they send its
tables' players to it, and it does not answer. Then they wait for its leases and take
its tables over. Before this module the only line on the survivors was ``table ...
adopted from the store``, while the players could sit unseated (a client that gave up);
now each step says what happens, and whether the players came back.
"""

from __future__ import annotations

import attrs

BACK_WITHIN = 20.0          # seconds after a takeover by which its players should be back
                            # (a client waits at most 3 s between tries, a web page 10 s)
SUSPECT_AFTER = 1.5         # heartbeats missed (in heartbeat periods) before a live node is suspect
SAID_KEPT = 256             # keys of lines said once, remembered (the oldest forgotten)


def suspect(age: float, heartbeat: float) -> bool:
    """Whether a live node whose last heartbeat is ``age`` seconds old has missed one."""
    return age > SUSPECT_AFTER * heartbeat


def redirect_to_suspect(node: str, url: str, age: float, lease: float) -> str:
    return (f"cluster: node {node} ({url}) missed its heartbeats (the last {age:.1f} s ago) but still counts as "
            f"live: its tables' players are sent to it meanwhile; if it is down, they are told to wait, and its "
            f"tables move to a live node once their leases pass (at most {lease:g} s); if it is up, check its "
            f"connection to the store")


def waiting_for_lease(table: str, node: str, left: float) -> str:
    return (f"table {table}: its node {node} stopped heartbeating; requests for it wait {left:.1f} s for its "
            f"lease to pass, then this node takes it over")


@attrs.frozen
class Awaited:
    """A table just taken over, and the seats its players held then (seat, name)."""
    table: str
    since: float
    seats: tuple[tuple[int, str], ...]


def awaited(table: str, players: tuple[dict, ...], now: float) -> Awaited | None:
    """What to watch for after taking ``table`` over (its ``players()``): None if no seat
    is held by a player."""
    seats = tuple((p["seat"], p["name"]) for p in players if p.get("name"))
    return Awaited(table, now, seats) if seats else None


def comeback(w: Awaited, players: tuple[dict, ...], now: float, finished: bool) -> tuple[bool, str | None, bool]:
    """(done, the line to log or None, whether it is a warning): all players back, the
    game over, or BACK_WITHIN passed with some still away."""
    connected = {p["seat"] for p in players if p.get("connected")}
    away = [(s, n) for s, n in w.seats if s not in connected]
    took = now - w.since
    if not away:
        return True, (f"table {w.table}: all {len(w.seats)} player(s) back at their seats {took:.1f} s after "
                      "this node took it over"), False
    if finished:
        return True, None, False
    if took < BACK_WITHIN:
        return False, None, False
    names = ", ".join(f"seat {s} ({n})" for s, n in away)
    return True, (f"table {w.table}: {len(away)} of {len(w.seats)} player(s) not back {took:.0f} s after this "
                  f"node took it over: {names}; their clients have not sent rejoin (one that gave up, say with "
                  "too_many_redirects, needs its player to join the table again: its seat token takes the seat "
                  "back)"), True
