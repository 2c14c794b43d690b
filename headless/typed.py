"""The typed commands of a client (what the UIs submit): the command line parsed by the
game's words (headless/commands.py) and carried out through the core.

Why apart from headless/core.py: the core is the connection and what it receives; this is
what the player types, one command at a time, in the order typed (a bounded queue)."""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING, Any

import trio

from wildtable.protocol import messages as m

from . import commands as cmd
from . import notices as n
from .games import CommandError
from .hint import hint
from .net import NotConnected
from .notices import Notice
from .reducer import Reducer


class TypedCommands:
    """ClientCore's typed commands (a base class of it: headless/core.py)."""

    state: Reducer
    default_game: str
    bot_level: str | None
    bot_delay: float | None
    history: list[str]
    quit_requested: bool
    _cmd_send: trio.MemorySendChannel[str]
    _cmd_recv: trio.MemoryReceiveChannel[str]

    if TYPE_CHECKING:       # ClientCore's own, which these commands use (declared for the type checker)
        def notify(self, notice: Notice) -> None: ...

        async def _send(self, msg: Any) -> None: ...

        async def join(self, table: str, seat: int | None = None) -> Any: ...

        async def act(self, action: dict, label: str) -> int: ...

    def submit(self, text: str) -> None:
        """Queue a typed command (from the UI's side; never blocks)."""
        try:
            self._cmd_send.send_nowait(text)
        except trio.WouldBlock:
            self.notify(n.Problem(f"too many commands at once; {text!r} was dropped"))

    async def _command_loop(self) -> None:
        async for text in self._cmd_recv:
            await self.command(text)

    def command_words(self) -> dict[str, str]:
        """Every command word available now, with its help line."""
        return cmd.command_words(self.state, self.default_game)

    def command_word(self, word: str) -> str:
        """A typed command word through the aliases (``p`` -> ``play``), lower-cased."""
        return cmd.command_word(self.state, self.default_game, word)

    def help_text(self, word: str | None = None) -> str:
        return cmd.help_text(self.state, self.default_game, word)

    async def command(self, text: str) -> None:
        """Run one typed command; everything it leads to arrives as notices."""
        text = text.strip()
        if not text:
            return
        self.history.append(text)
        del self.history[:-200]

        def refused(code: str, why: str) -> None:
            self.notify(n.IntentRejected(None, code, why, text))
        try:
            words = shlex.split(text) if not text.lower().startswith("act ") else text.split(None, 1)
        except ValueError as e:
            refused("bad_command", str(e))
            return
        try:
            await self._run_command(cmd.parse(self.state, words, cmd.Defaults(
                self.default_game, self.bot_level, self.bot_delay)), text)
        except CommandError as e:
            refused("bad_command", str(e))
        except NotConnected as e:
            refused("not_connected", str(e))
        except trio.TooSlowError:
            refused("no_answer", "the server did not answer in time")
        except Exception as e:
            # a bug of ours in reading the command must not end the session: say so and go on
            refused("client_bug", f"the client failed on this command (our bug: {type(e).__name__}: {e}); "
                                  "nothing was sent, and the game goes on")

    async def _run_command(self, what: cmd.Command, text: str) -> None:
        if isinstance(what, cmd.Show):
            self.notify(what.notice)
        elif isinstance(what, cmd.Quit):
            self.quit_requested = True
            self.notify(n.QuitAsked())
        elif isinstance(what, cmd.Ask):
            if isinstance(what.msg, m.ListTables):
                self.state.asked_lists += 1
            else:
                self.state.join_created += 1
            await self._send(what.msg)
        elif isinstance(what, cmd.SendMsg):
            await self._send(what.msg)
        elif isinstance(what, cmd.JoinTable):
            await self.join(what.table, what.seat)
        elif isinstance(what, cmd.Hint):
            self.notify(await hint(what))       # headless/hint.py: a search off the event loop
        else:
            await self.act(what.action, text)
