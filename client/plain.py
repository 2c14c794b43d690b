"""`wildtable play --plain`: the line mode, for scripts and screen readers.

Commands are read from stdin, one per line, with the same words as the full-screen UI.
Every line written to stdout starts with a tag word, so scripts can read it:

    info TEXT              lobby and seat facts       conn TEXT       connection dropped / back
    table N ID GAME ...    one lobby table (list)     event TEXT      one thing that happened
    flash TEXT             "Draw 3!", "Out!"          hand CARDS | pile N    your hand changed
    phase PHASE round R of N                          ok COMMAND      accepted (a hand line follows)
    rejected COMMAND :: CODE: REASON                  error TEXT      a server or command error
    over TEXT              the game ended             help / show     lines asked for
    turn NAME: N s, then the timer plays for NAME     the turn passed (tables with a turn timer)
"""

from __future__ import annotations

import os
import sys
from typing import TextIO

import trio

from wildtable.headless import notices
from wildtable.headless.core import CannotConnect, ClientCore
from wildtable.headless.notices import Notice
from wildtable.headless.words import lobby_row
from wildtable.headless.games import round_words
from .session import Launch, server_for, start_session


class PlainOutput:
    """Turns notices into tagged lines."""

    def __init__(self, core_ref, out: TextIO):
        self._core = core_ref
        self.out = out
        self._hand: tuple | None = None
        self._phase: tuple | None = None
        self._hand_due = False
        self._turn = None       # the seat whose countdown was last announced
        self._said_bye = False  # "info bye" is the last line: nothing is printed after it

    def line(self, tag: str, text: str = "") -> None:
        if self._said_bye:
            return
        self.out.write(f"{tag} {text}".rstrip() + "\n")
        self.out.flush()

    def bye(self) -> None:
        """The last line. The client's tasks are cancelled after it, but one already woken
        with a message (a player leaving) runs on to its next checkpoint: what it would
        print is dropped, so a script reading to ``info bye`` has read everything."""
        self.line("info", "bye")
        self._said_bye = True

    def __call__(self, n: Notice) -> None:
        """One notice as tagged lines, chosen by its type (headless/notices.py)."""
        if isinstance(n, notices.TableChanged):
            self._table_changed()
        elif isinstance(n, notices.IntentAccepted):
            self.line("ok", n.text)
            self._hand_due = True       # the table after it follows: print the hand even if unchanged
        elif isinstance(n, notices.IntentRejected):
            self.line("rejected", f"{n.text} :: {n.code}: {n.reason}")
        elif isinstance(n, (notices.HelpText, notices.TableText)):
            for text in n.text.splitlines():
                self.line(n.kind, text)
        elif isinstance(n, notices.TablesListed):
            if n.asked:
                self.line("tables", n.text)
                for i, t in enumerate(n.tables, 1):
                    r = lobby_row(t)
                    self.line("table", f"{i} {r.table} {r.game} {r.status} seats {r.seats} players {r.players}"
                                       + (f" name {r.name}" if r.name else ""))
        elif isinstance(n, notices.ConnectionNews):
            self.line("conn", n.text)
        elif not isinstance(n, (notices.IntentSent, notices.QuitAsked)):
            self.line(n.kind, n.text)       # info, event, flash, over, error: the tag is the kind

    def _table_changed(self) -> None:
        core = self._core()
        view = core.mirror.view
        if not core.at_table:
            self._hand = self._phase = None
            return
        phase = (view.get("phase"), view.get("round"))
        if phase != self._phase and view.get("phase") is not None:
            self._phase = phase
            rounds = f" {round_words(view['round'], view.get('rounds'))}" if view.get("round") else ""
            self.line("phase", f"{view['phase']}{rounds}")
        due, self._hand_due = self._hand_due, False
        if "hand" in view and view.get("phase") not in ("dealing", "deal"):    # nothing dealt yet
            # a rank turning wild changes the stars of Go Fish Wildcard's hand line
            hand = (tuple(sorted(view["hand"])), view.get("pile"), tuple(view.get("wild_ranks") or ()))
            if hand != self._hand or due:
                self._hand = hand
                by_view = getattr(core.plugin, "view_hand_labels", None)
                labels = getattr(core.plugin, "hand_labels", None)
                cards = " ".join(by_view(view) if by_view else labels(view["hand"]) if labels
                                 else map(str, view["hand"]))
                self.line("hand", cards + (f" | pile {view['pile']}" if "pile" in view else ""))
        self._announce_turn(core)

    def _announce_turn(self, core) -> None:
        """`turn NAME: N s, then the timer plays for NAME` when the turn passes to a seat
        (tables with a turn timer only)."""
        left = core.turn_left()
        seat = None if left is None else left[0]
        if seat != self._turn:
            self._turn = seat
            if left is not None:
                who = core.ctx.name(seat)
                self.line("turn", f"{who}: {left[1]} s, then the timer plays for {who}")


async def _read_lines(send: trio.MemorySendChannel, stdin: TextIO) -> None:
    """stdin in a worker thread (portable, works for pipes and terminals alike)."""
    async with send:
        while True:
            line = await trio.to_thread.run_sync(stdin.readline, abandon_on_cancel=True)
            if not line:
                return
            await send.send(line)


async def run_plain(launch: Launch, stdin: TextIO, stdout: TextIO) -> int:
    core_box: list[ClientCore] = []
    out = PlainOutput(lambda: core_box[0], stdout)
    async with server_for(launch) as url:
        core = ClientCore(url, launch.name, out, default_game=launch.game, bot_delay=launch.bot_delay,
                          seat_book=launch.seat_book(), bot_level=launch.level)
        core.logs_kept = not launch.local       # a private server's data dir goes when we quit
        core_box.append(core)
        async with trio.open_nursery() as nursery:
            try:
                await nursery.start(core.run)
            except CannotConnect as e:
                out.line("error", str(e))
                return 1
            if not await start_session(core, launch, nursery) and launch.table is not None:
                # a script asked for this table: without it there is nothing to do (the
                # reason is on the error line above)
                out.bye()
                nursery.cancel_scope.cancel()
                return 1
            send, recv = trio.open_memory_channel(16)
            nursery.start_soon(_read_lines, send, stdin)
            async with recv:
                async for line in recv:
                    await core.command(line)
                    if core.quit_requested:
                        break
            out.bye()
            nursery.cancel_scope.cancel()
    return 0


def plain_main(launch: Launch) -> int:
    try:
        return trio.run(run_plain, launch, sys.stdin, sys.stdout)
    except KeyboardInterrupt:
        return 130
    except BaseException as e:
        if not _only_broken_pipes(e):
            raise
        # whoever read our lines went away (a script's `| head`): stop quietly, and let
        # Python's own flush at exit write nowhere
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


def _only_broken_pipes(e: BaseException) -> bool:
    if isinstance(e, BaseExceptionGroup):
        return all(_only_broken_pipes(x) for x in e.exceptions)
    return isinstance(e, BrokenPipeError)
