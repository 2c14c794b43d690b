"""Seats in the table's pure core (server/arbiter.py): join, rejoin, spectate, leave
(docs/PROTOCOL.md). Where a connection is, is the shell's to do (``Attach``/``Detach``,
at once: server/arbiter_io.py); the core knows who is at its table (``core.at``) and,
of a join, rejoin or spectate, where else the connection is (the call's ``Facts``)."""

from __future__ import annotations

import hashlib
import hmac
from typing import TYPE_CHECKING

import attrs

from wildtable.protocol import messages as m
from wildtable.protocol.logfmt import SeatClaimed, encode_record

from .arbiter_io import Attach, Close, Detach, Group, JoinReq, LeaveReq, Link, PlayersChanged, RejoinReq, SendTo, SpectateReq

if TYPE_CHECKING:
    from .arbiter import Arbiter

_ABSENT = object()


def token_hash(token: str) -> bytes:
    return hashlib.sha256(token.encode()).digest()


@attrs.frozen
class Seat:
    name: str = ""
    token_hash: bytes = b""      # empty: free (never claimed, or released by leave)
    link: Link | None = None     # the connection holding it now, if any


def _where(core: Arbiter, link: Link) -> str | None:
    """The id of the table ``link`` is at (this one or another), or None."""
    return core.id if link in core.at else core.facts.of(link).elsewhere


def _sit(core: Arbiter, link: Link, seat: int | None, g: Group) -> None:
    core.at[link] = seat
    if seat is None:
        core.spectators[link] = None
    core._lobby_changed = True
    g.moves.append(Attach(link, seat))


def _claim(core: Arbiter, seat: int, name: str, link: Link, g: Group) -> str:
    token = core.new_token()
    th = token_hash(token)
    core.seats[seat] = Seat(name, th, link)
    g.records.append(encode_record(SeatClaimed(seat, name, th)))
    _sit(core, link, seat, g)
    return token


def join(core: Arbiter, req: JoinReq, g: Group, now: float) -> None:
    link = req.link
    where = _where(core, link)
    if where is not None:
        g.out.append(SendTo(link, m.Error("already_at_table", f"you are already at table {where}; send leave first", ref="join")))
        return
    if core.finished:
        g.out.append(SendTo(link, m.Error("game_over", "this game is over; spectate it or create a new table", ref="join")))
        return
    free = [i for i, s in enumerate(core.seats) if not s.token_hash]
    if req.seat is not None:
        if req.seat >= len(core.seats):
            g.out.append(SendTo(link, m.Error("no_such_seat", f"this table has seats 0..{len(core.seats) - 1}", path="$.seat", ref="join")))
            return
        if req.seat not in free:
            g.out.append(SendTo(link, m.Error("seat_taken", f"seat {req.seat} is taken; free seats: {free or 'none'}", path="$.seat", ref="join")))
            return
        seat = req.seat
    elif not free:
        g.out.append(SendTo(link, m.Error("table_full", f"table {core.id} is full; spectate it or create another table", ref="join")))
        return
    else:
        seat = free[0]
    was_started = core.started
    token = _claim(core, seat, req.name, link, g)
    g.out.append(SendTo(link, m.Joined(core.id, core.game.NAME, seat, token, core.seq,
                                       core.game.view(core.state, seat), core.players())))
    g.out.append(_players_changed(core))
    if not was_started and core.started:
        core.last_activity = now
        core._settle(g, now)


def rejoin(core: Arbiter, req: RejoinReq, g: Group) -> None:
    link = req.link
    where = _where(core, link)
    if where is not None:
        g.out.append(SendTo(link, m.Error("already_at_table", f"you are already at table {where}; send leave first", ref="rejoin")))
        return
    if req.seat >= len(core.seats):
        g.out.append(SendTo(link, m.Error("no_such_seat", f"this table has seats 0..{len(core.seats) - 1}", path="$.seat", ref="rejoin")))
        return
    s = core.seats[req.seat]
    if not s.token_hash or not hmac.compare_digest(s.token_hash, token_hash(req.token)):
        # at a finished table no seat can be joined: point to what does work
        todo = "the game is over: spectate it to see the result" if core.finished else "join a free seat instead"
        g.out.append(SendTo(link, m.Error("bad_token", f"that token does not hold seat {req.seat} at table {core.id}; {todo}", path="$.token", ref="rejoin")))
        return
    old = s.link
    if old is not None and old is not link:
        # told (and closed) in turn, after what this group already owes it, such as
        # the answer to an intent it sent just before
        del core.at[old]
        g.moves.append(Detach(old))
        g.out.append(SendTo(old, m.Error("seat_taken_over", "your seat was resumed from another connection", ref="rejoin")))
        g.out.append(Close(old, 1000, "seat resumed elsewhere"))
    core.seats[req.seat] = attrs.evolve(s, link=link)
    _sit(core, link, req.seat, g)
    g.out.append(SendTo(link, m.Joined(core.id, core.game.NAME, req.seat, req.token, core.seq,
                                       core.game.view(core.state, req.seat), core.players())))
    core._over_to(link, g)
    g.out.append(_players_changed(core))


def spectate(core: Arbiter, req: SpectateReq, g: Group) -> None:
    link = req.link
    where = _where(core, link)
    if where is not None and link not in core.spectators:
        # also a player at this very table: as a spectator too it would get every update twice
        g.out.append(SendTo(link, m.Error("already_at_table", f"you are already at table {where}; send leave first", ref="spectate")))
        return
    _sit(core, link, None, g)
    g.out.append(SendTo(link, m.Spectating(core.id, core.game.NAME, core.seq,
                                           core.game.view(core.state, None), core.players())))
    core._over_to(link, g)


def leave(core: Arbiter, req: LeaveReq, g: Group) -> None:
    link = req.link
    core._lobby_changed = True
    core.spectators.pop(link, None)
    for i, s in enumerate(core.seats):
        if s.link is link:
            core.seats[i] = attrs.evolve(s, link=None)
            if req.notify and not core.finished:
                # An explicit leave releases the seat: its token stops working and
                # anyone may join it (the seat keeps its cards, docs/DECISIONS.md "All games").
                # Not once the game is over: nobody can join it then, and voiding the
                # token only shut its player out of the final view (and wrote to a
                # finished game's log), unlike the same table after a restart.
                core.seats[i] = Seat(s.name, b"", None)
                g.records.append(encode_record(SeatClaimed(i, s.name, b"")))
    if core.at.pop(link, _ABSENT) is not _ABSENT:
        g.moves.append(Detach(link))
    if req.notify:
        g.out.append(SendTo(link, m.Left(core.id)))
    g.out.append(_players_changed(core))


def forget(core: Arbiter, link: Link) -> None:
    """The shell's last resort, when the table's inbox stayed full for 5 s after
    ``link`` closed (server/connection.py): the table forgets it without a request (no
    state or log changes; the seat stays held by its token)."""
    for i, s in enumerate(core.seats):
        if s.link is link:
            core.seats[i] = attrs.evolve(s, link=None)
    core.spectators.pop(link, None)
    core.at.pop(link, None)


def _players_changed(core: Arbiter) -> PlayersChanged:
    """`players` to everyone at the table, as the seats are now (PlayersChanged)."""
    return PlayersChanged(core.audience(), tuple((core._shown(s), s.link is not None) for s in core.seats))
