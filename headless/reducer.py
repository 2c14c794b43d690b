"""The client's pure core: server messages in, the mirror of the table and typed notices out.

Why apart from the connection (headless/core.py): what a message means for the player (an
intent accepted once the mirror holds its seq, the move the turn timer made for us, a seat
taken back after a reconnect, an update older than the mirror) is decided here without a
socket or a clock of its own, so it is tested with values (tests/client/test_reducer.py)
and the UIs get typed notices (headless/notices.py). Time comes in as ``now``; what needs
I/O (a seat token to keep or forget, a message to send) goes out as an effect for the
shell to carry out (docs/ARCHITECTURE.md, "headless/ (wildtable.headless)").
"""

from __future__ import annotations

from typing import Any

import attrs

from wildtable.protocol import messages as m

from . import games
from . import notices as n
from .games import Ctx
from .net import Mirror
from .words import user_words, turn_timer_of

# events a chance outcome (a draw by lot) makes, which may name a seat without its acting
CHANCE_EVENTS = frozenset(("leader_chosen", "starter_chosen", "first_player_chosen", "dealer_chosen"))
MINE_KEPT = 64          # seqs of our own accepted intents kept (to tell the timer's moves apart)
# A rejoin (or spectate) refused for a reason that passes is "not yet", never "gone": the
# table's node is still taking it over or cannot reach its store (storage_error), its disk
# is full (storage_full), every node is full (too_many_tables), or we asked too fast
# (rate_limited). The seat's token is kept and the seat asked for again after each of these
# delays, the last one repeated (docs/PROTOCOL.md, "Clusters").
NOT_YET = frozenset(("storage_error", "storage_full", "too_many_tables", "rate_limited"))
NOT_YET_DELAYS = (1.0, 2.0, 4.0, 8.0, 15.0)


# ---------------------------------------------------------------- effects for the shell
@attrs.frozen
class Remember:
    """Keep this seat's token in the seat book (docs/PROTOCOL.md, rejoin)."""
    table: str
    seat: int
    token: str


@attrs.frozen
class Forget:
    """The seat book's token for this table no longer holds a seat."""
    table: str


@attrs.frozen
class Send:
    """Send this message (after the notices of the same step)."""
    msg: Any


@attrs.frozen
class GoBackLater:
    """Ask for the seat (or the spectator's place) back again in ``delay`` seconds, on the
    same connection (a new one asks by itself), if it is still not taken back then."""
    delay: float


Effect = Remember | Forget | Send | GoBackLater


@attrs.frozen
class Step:
    """What one message led to, in order: notices to show, then effects to carry out."""
    notices: tuple[n.Notice, ...] = ()
    effects: tuple[Effect, ...] = ()


class Reducer:
    """One player's (or spectator's) view of the server: the mirror, the lobby list, the
    intents under way. No I/O: every method takes values (and ``now``) and returns values."""

    def __init__(self, name: str):
        self.name = name
        self.mirror = Mirror()
        self.tables: list[dict] = []
        self.pending: dict[int, str] = {}       # intent id -> the command that sent it
        self.next_intent = 1
        self.turn_clock: tuple[int, float, float] | None = None   # (seat to move, deadline, seconds)
        self.rejoining = False      # a rejoin (or spectate) after a reconnect is under way
        self.resuming = False       # a rejoin with a token from the seat book is under way
        self.not_yet = 0            # rejoins refused "not yet" since the seat was last held
        self.asked_lists = 0        # list_tables the player asked for, not yet answered
        self.join_created = 0       # create_tables to join once made
        self._accepted_later: list[tuple[int, int, str]] = []   # (seq, intent, command) awaiting their update
        self._mine: set[int] = set()            # seqs of our own accepted intents (recent ones)
        self._over_line: str | None = None      # the game's own words for its end (its game_over event)
        self.logs_kept = True       # False: a private server's, whose logs go when it stops
        # what this seat saw of the table, as a bot in its place keeps it (the game's
        # bot_watch): what the hint's expert reads besides the view (headless/appraise.py)
        self.memo: dict = {}

    # ---------------------------------------------------------------- reading
    @property
    def plugin(self):
        return games.plugin_for(self.mirror.game)

    @property
    def ctx(self) -> Ctx:
        return games.ctx_from(self.mirror.players, self.mirror.seat)

    @property
    def at_table(self) -> bool:
        return self.mirror.table is not None

    def turn_left(self, now: float) -> tuple[int, int] | None:
        """(seat to move, whole seconds left before the timer plays for it), or None."""
        clock = self.turn_clock
        if clock is None or not self.at_table:
            return None
        return clock[0], max(0, int(clock[1] - now + 0.999))

    # ---------------------------------------------------------------- our intents
    def intent(self, command: str) -> int:
        """A new intent id, waiting for its answer under ``command``."""
        iid = self.next_intent
        self.next_intent += 1
        self.pending[iid] = command
        return iid

    def unsent(self, iid: int) -> None:
        """The intent could not be written: nothing waits for its answer."""
        self.pending.pop(iid, None)

    def sent(self, iid: int) -> tuple[n.Notice, ...]:
        """The write of intent ``iid`` returned: "sent" unless its answer came meanwhile."""
        return (n.IntentSent(iid, self.pending[iid]),) if iid in self.pending else ()

    def connection_ended(self) -> tuple[n.Notice, ...]:
        """The connection dropped: what was accepted is accepted (its update may never
        come on this connection); what was unanswered is lost with it."""
        out: list[n.Notice] = [n.IntentAccepted(iid, seq, label) for seq, iid, label in self._accepted_later]
        self._accepted_later.clear()
        out += [n.IntentRejected(iid, "connection_lost", "the connection dropped before the server answered; "
                                 "the table shows whether it happened", label)
                for iid, label in sorted(self.pending.items())]
        self.pending.clear()
        return tuple(out)

    def resume_message(self) -> Any:
        """After a reconnect: the message that takes the seat (or the spectator's place)
        back, or None if there is none to take back."""
        mir = self.mirror
        if mir.table is None or mir.over is not None:
            return None
        if mir.seat is not None and mir.token:
            self.rejoining = True
            return m.Rejoin(mir.table, mir.seat, mir.token)
        if mir.seat is None:
            self.rejoining = True
            return m.Spectate(mir.table)
        return None

    # ---------------------------------------------------------------- server messages
    def absorb(self, msg: Any, now: float) -> Step:
        """Fold one server message into the mirror; what to show and do because of it."""
        handler = _HANDLERS.get(type(msg))
        return handler(self, msg, now) if handler is not None else Step()

    def _update(self, msg: m.Update, now: float) -> Step:
        mir = self.mirror
        if msg.seq <= mir.seq:
            return Step()           # stale: the mirror holds it already (a resync's overlap)
        before = mir.view
        mir.absorb(msg)
        self._watch(now)
        ctx, plugin = self.ctx, self.plugin
        by_timer = self._timer_played_for_me(before, msg)
        out: list[n.Notice] = []
        for ev in msg.events:
            line = plugin.describe(ev, ctx)
            if isinstance(ev, dict) and ev.get("event") in ("game_over", "game_ended"):     # Run Wild's: game_ended
                # said once, by the GameOver notice that follows (with the scores and the log)
                self._over_line = line
                continue
            if line and ev is by_timer:
                out.append(n.Flash("Timer!", ev))
                out.append(n.TimerPlayed(line, ev, turn_timer_of(before)))
            elif line:
                out.append(n.GameEvent(line, ev))
            word = plugin.flash(ev, ctx)
            if word:
                out.append(n.Flash(word, ev))
        self._set_turn_clock(now)
        while self._accepted_later and self._accepted_later[0][0] <= mir.seq:
            seq, iid, label = self._accepted_later.pop(0)
            out.append(n.IntentAccepted(iid, seq, label))
        out.append(n.TableChanged())
        return Step(tuple(out))

    def _accepted(self, msg: m.Accepted, now: float) -> Step:
        label = self.pending.pop(msg.intent, None)
        if label is None:
            return Step()           # not ours (an earlier connection's, already reported)
        self._mine.add(msg.seq)
        if len(self._mine) > MINE_KEPT:
            self._mine.discard(min(self._mine))
        if msg.seq > self.mirror.seq:
            # The update of that seq follows its acceptance: say "ok" once the mirror
            # holds it, so whoever reads on acts on the new table.
            self._accepted_later.append((msg.seq, msg.intent, label))
            return Step()
        return Step((n.IntentAccepted(msg.intent, msg.seq, label), n.TableChanged()))

    def _rejected(self, msg: m.Rejected, now: float) -> Step:
        label = self.pending.pop(msg.intent, f"intent {msg.intent}")
        reason = user_words(msg.reason)
        as_shown = getattr(self.plugin, "reason_text", None)      # the game's cards as the player types them
        return Step((n.IntentRejected(msg.intent, msg.code, as_shown(reason) if as_shown else reason, label),))

    def _players(self, msg: m.Players, now: float) -> Step:
        if msg.table != self.mirror.table:
            return Step()
        out = self._players_changed(self.mirror.players, msg.players)
        self.mirror.absorb(msg)
        return Step(out + (n.TableChanged(),))

    def _watch(self, now: float) -> None:
        """Note what this seat was just sent, as its bot would (the hint's memory)."""
        watch = getattr(self.plugin, "bot_watch", None)
        if watch is not None and self.mirror.seat is not None and self.mirror.view:
            watch(self.mirror.view, now, self.memo)

    def _seated(self, msg: m.Joined | m.Spectating, now: float) -> Step:
        if msg.table != self.mirror.table:
            self.memo = {}          # another table: nothing seen there yet
        self.mirror.absorb(msg)
        self._watch(now)
        self._set_turn_clock(now)
        plugin = self.plugin
        title = plugin.TITLE if plugin.NAME != "generic" else msg.game
        effects = (Remember(msg.table, msg.seat, msg.token),) if isinstance(msg, m.Joined) else ()
        note: n.Notice
        if self.rejoining:
            note = n.BackAtTable(msg.table, msg.seat if isinstance(msg, m.Joined) else None, msg.seq)
        elif isinstance(msg, m.Joined):
            note = n.Joined(msg.table, title, msg.seat, self.name, msg.seq, resumed=self.resuming)
        else:
            note = n.Watching(msg.table, title)
        self.rejoining = False
        self.not_yet = 0
        return Step((note, n.TableChanged()), effects)

    def _bots_seated(self, msg: m.BotsSeated, now: float) -> Step:
        return Step((n.BotsSeated(msg.level, tuple(msg.names), tuple(msg.seats)),))

    def _table_created(self, msg: m.TableCreated, now: float) -> Step:
        effects: tuple[Effect, ...] = ()
        if self.join_created:
            self.join_created -= 1
            effects = (Send(m.Join(msg.table, None)),)
        return Step((n.TableCreated(msg.table, msg.game, msg.seats),), effects)

    def _table_list(self, msg: m.TableList, now: float) -> Step:
        self.tables = [dict(x) for x in msg.tables]
        asked = self.asked_lists > 0
        if asked:
            self.asked_lists -= 1
        return Step((n.TablesListed(tuple(self.tables), asked, msg.omitted),))

    def _game_over(self, msg: m.GameOver, now: float) -> Step:
        self.mirror.absorb(msg)
        self.turn_clock = None
        ctx = self.ctx
        scores = ", ".join(f"{ctx.seat_label(i)} {s}" for i, s in enumerate(msg.scores))
        won = " and ".join(ctx.seat_label(w) for w in msg.winners) or "nobody"
        said, self._over_line = self._over_line, None
        said = said or f"game over: {won} {'wins' if len(msg.winners) == 1 else 'win'}"
        # the game's words name the winner; every seat's score comes here, once. A private
        # server's log (play alone) is deleted when the player quits: not named
        return Step((n.GameOver(said, scores, msg, self.logs_kept), n.TableChanged()), (Forget(msg.table),))

    def _left(self, msg: m.Left, now: float) -> Step:
        self.mirror = Mirror()
        return Step((n.LeftTable(msg.table), n.TableChanged()), (Forget(msg.table), Send(m.ListTables())))

    def _error(self, msg: m.Error, now: float) -> Step:
        if msg.ref == "rejoin" and self.resuming and msg.code != "already_at_table":
            return Step()       # join() asks again ("not yet") or for a new seat (the token no longer holds it)
        if msg.ref in ("rejoin", "spectate") and self.rejoining and msg.code in NOT_YET:
            delay = NOT_YET_DELAYS[min(self.not_yet, len(NOT_YET_DELAYS) - 1)]
            self.not_yet += 1
            return Step((n.NotBackYet(msg, delay),), (GoBackLater(delay),))
        if msg.ref in ("rejoin", "spectate") and self.rejoining:
            self.rejoining = False
            self.mirror = Mirror()
            return Step((n.CannotGoBack(msg), n.TableChanged()))
        if msg.code == "seat_taken_over":
            self.mirror = Mirror()
            return Step((n.SeatTakenOver(msg), n.TableChanged()))
        return Step((n.ServerError(msg),))

    def _goodbye(self, msg: m.Goodbye, now: float) -> Step:
        return Step((n.Goodbye(msg.reason),))

    def _notice(self, msg: m.Notice, now: float) -> Step:
        # play paused (the server's disk is full) or resumed (docs/PROTOCOL.md `notice`)
        return Step((n.PlayPaused(msg) if msg.code == "storage_full" else n.PlayResumed(msg),))

    # ---------------------------------------------------------------- helpers
    def _timer_played_for_me(self, before: dict, msg: m.Update) -> dict | None:
        """The event of ``msg`` that the table's turn timer made for this seat, or None.

        The server answers an intent of ours with `accepted` before the update of its seq
        (on this connection, in order). So an update whose first event is an action of our
        seat, made when it was our turn, with no `accepted` of ours for its seq, is the move
        the turn timer made for us (the log records it as `by: timer`)."""
        me = self.mirror.seat
        if me is None or not msg.events or before.get("turn") != me or not turn_timer_of(before):
            return None
        if msg.seq in self._mine:
            return None
        ev = msg.events[0]
        if isinstance(ev, dict) and ev.get("seat") == me and ev.get("event") not in CHANCE_EVENTS:
            return ev
        return None

    def _set_turn_clock(self, now: float) -> None:
        """The countdown of the seat whose turn it is, from the table's `turn_timer` setting
        (in the view). The server counts it from the table's last accepted action, which is
        when the last update came; after a reconnect it may be due sooner than shown."""
        view, mir = self.mirror.view, self.mirror
        secs = turn_timer_of(view)
        turn = view.get("turn")
        if mir.over is not None or not secs or not isinstance(turn, int) or view.get("winners"):
            self.turn_clock = None
        else:
            self.turn_clock = (turn, now + secs, secs)

    def _players_changed(self, old, new) -> tuple[n.Notice, ...]:
        before = {p["seat"]: p for p in old or ()}
        out: list[n.Notice] = []
        for p in new:
            b = before.get(p["seat"], {})
            name = p.get("name")
            if p["seat"] == self.mirror.seat or not name:
                continue
            if b.get("name") != name:
                out.append(n.SeatTaken(name, p["seat"]))
            elif b.get("connected") and not p.get("connected") and self.mirror.over is not None:
                out.append(n.PlayerLeft(name))          # the game is over: nobody waits for them
            elif b.get("connected") and not p.get("connected"):
                out.append(n.PlayerLost(name))
            elif not b.get("connected") and p.get("connected"):
                out.append(n.PlayerBack(name))
        return tuple(out)


_HANDLERS: dict[type, Any] = {
    m.Update: Reducer._update, m.Accepted: Reducer._accepted, m.Rejected: Reducer._rejected,
    m.Players: Reducer._players, m.Joined: Reducer._seated, m.Spectating: Reducer._seated,
    m.BotsSeated: Reducer._bots_seated, m.TableCreated: Reducer._table_created,
    m.TableList: Reducer._table_list, m.GameOver: Reducer._game_over, m.Left: Reducer._left,
    m.Error: Reducer._error, m.Goodbye: Reducer._goodbye, m.Notice: Reducer._notice,
}
