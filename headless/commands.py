"""The commands a player types, read into typed values before anything is sent.

Why apart from the connection (headless/core.py) and the mirror (headless/reducer.py):
reading a command is a decision on words and the table as the mirror holds it, with no
I/O; a command that cannot be carried out is refused here (CommandError, saying what was
wrong and what to type) and nothing goes to the server (docs/PLAYING.md, commands).
"""

from __future__ import annotations

import copy
import json
from typing import Any

import attrs

from wildtable.protocol import messages as m

from . import games
from . import notices as n
from .games import CommandError, is_number
from .reducer import Reducer

LOBBY_COMMANDS = {
    "list": "list  - the tables on this server (numbered: join 1 joins the first)",
    "create": "create [GAME] [PLAYERS] [NAME=VALUE...]  - a new table, which you join; e.g. create run-wild 3 rounds=2",
    "join": "join TABLE [SEAT]  - take a seat at a table (the first free one unless you name it)",
    "spectate": "spectate TABLE  - watch a table without playing",
    "leave": "leave  - leave the table; while the game is on, your seat is released for someone else",
    "bots": "bots N [LEVEL]  - seat N bots at this table (LEVEL easy, normal, hard or expert); the server runs them, so they play on if you leave",
    "show": "show  - the whole table as text",
    "hint": "hint  - the expert's choice for your seat now, from your own view (where the game has no expert: "
            "hard's; Run Wild, played in real time, has none)",
    "act": 'act {"kind": ...}  - send an action as raw JSON (any game; see docs/RULES.md)',
    "help": "help [COMMAND]  - all commands, or one",
    "quit": "quit  - close the client; a seat you did not leave stays yours: join that table again later",
}
LOBBY_ALIASES = {"ls": "list", "tables": "list", "watch": "spectate", "exit": "quit", "?": "help", "new": "create"}


# ---------------------------------------------------------------- what a command comes to
@attrs.frozen
class Show:
    """Show this to the player; nothing is sent."""
    notice: n.Notice


@attrs.frozen
class Quit:
    """The player asked to quit."""


@attrs.frozen
class Ask:
    """Send a lobby request whose answer the player waits to see (list, create)."""
    msg: Any


@attrs.frozen
class SendMsg:
    """Send this message; its answer comes as notices."""
    msg: Any


@attrs.frozen
class JoinTable:
    """Take a seat (the seat book's one first, if it holds one for this table)."""
    table: str
    seat: int | None


@attrs.frozen
class Hint:
    """Ask the expert what this seat should play now (a search: run off the event loop)."""
    game: str
    view: dict
    memo: dict


@attrs.frozen
class Act:
    """Send this action as an intent."""
    action: dict


Command = Show | Quit | Ask | SendMsg | JoinTable | Hint | Act


@attrs.frozen
class Defaults:
    """What the player chose when starting the client."""
    game: str = "run-wild"
    bot_level: str | None = None
    bot_delay: float | None = None


# ---------------------------------------------------------------- words and help
def _plugin(state: Reducer, default_game: str):
    return state.plugin if state.at_table else games.plugin_for(default_game)


def command_words(state: Reducer, default_game: str) -> dict[str, str]:
    """Every command word available now, with its help line."""
    words = dict(LOBBY_COMMANDS)
    words.update(_plugin(state, default_game).COMMANDS)
    return words


def command_word(state: Reducer, default_game: str, word: str) -> str:
    """A typed command word through the aliases (``p`` -> ``play``), lower-cased."""
    w = word.lower()
    return LOBBY_ALIASES.get(w, getattr(_plugin(state, default_game), "ALIASES", {}).get(w, w))


def help_text(state: Reducer, default_game: str, word: str | None = None) -> str:
    plugin = _plugin(state, default_game)
    if word:
        line = command_words(state, default_game).get(command_word(state, default_game, word))
        return line if line else f"no command {word!r}; help lists them all"
    lines = [f"{plugin.TITLE} commands:"]
    lines += ["  " + x for x in plugin.COMMANDS.values()]
    lines += [""] + plugin.HELP.splitlines() + ["", "Table and lobby commands:"]
    lines += ["  " + x for x in LOBBY_COMMANDS.values()]
    return "\n".join(lines)


# ---------------------------------------------------------------- reading one command
def parse(state: Reducer, words: list[str], defaults: Defaults) -> Command:
    """What the typed ``words`` (the first one through the lobby aliases) come to, or
    CommandError saying what was wrong."""
    mir = state.mirror
    word = LOBBY_ALIASES.get(words[0].lower(), words[0].lower())
    if word == "help":
        return Show(n.HelpText(help_text(state, defaults.game, words[1].lower() if len(words) > 1 else None)))
    if word == "quit":
        return Quit()
    if word == "list":
        _no_more_words(word, words)
        return Ask(m.ListTables())
    if word == "show":
        _no_more_words(word, words)
        if not state.at_table:
            raise CommandError("you are not at a table; list shows the tables")
        return Show(n.TableText("\n".join(state.plugin.render_text(mir.view, state.ctx))))
    if word == "create":
        if state.at_table:
            doing = "watching" if mir.seat is None else "at"
            raise CommandError(f"you are {doing} table {mir.table}: leave it first, then create a new one")
        game, seats, settings = parse_create(words[1:], defaults.game)
        return Ask(m.CreateTable(game, seats, settings))
    if word in ("join", "spectate"):
        if len(words) < 2:
            raise CommandError(f"{word} which table? e.g. {word} t1a2b3c4d (list shows them)")
        table = table_ref(state.tables, words[1])
        if word == "spectate":
            return SendMsg(m.Spectate(table))
        seat = None
        if len(words) > 2:
            if not is_number(words[2]):
                raise CommandError("a seat is a number: join TABLE 2")
            seat = int(words[2])
        return JoinTable(table, seat)
    if word == "hint":
        _no_more_words(word, words)
        _need_seat(state)
        if mir.over is not None:
            raise CommandError("the game is over: no more moves to hint at")
        # a copy of what the seat saw: the search reads it in a worker thread while updates come
        return Hint(str(mir.game), dict(mir.view), copy.deepcopy(state.memo))
    if word == "leave":
        _no_more_words(word, words)
        if not state.at_table:
            raise CommandError("you are not at a table")
        return SendMsg(m.Leave())
    if word == "bots":
        return SendMsg(_bots(state, words, defaults))
    if word == "act":
        _need_seat(state)
        from .games import generic
        return Act(generic.parse_act(["act"] + words[1:]))
    plugin = _plugin(state, defaults.game)
    known = set(plugin.COMMANDS) | set(getattr(plugin, "ALIASES", {}))
    if word not in known:
        if not state.at_table and any(word in p.COMMANDS or word in getattr(p, "ALIASES", {})
                                      for p in games.PLUGINS.values()):
            _need_seat(state)           # another game's command, typed in the lobby
        raise CommandError(f"unknown command {words[0]!r}; help lists the commands")
    _need_seat(state)
    if mir.over is not None:
        raise CommandError("the game is over: no more moves; show prints the final table, "
                           "leave goes back to the lobby")
    return Act(plugin.parse(words, mir.view))


def _no_more_words(word: str, words: list[str]) -> None:
    if len(words) > 1:
        raise CommandError(f"{word} takes nothing after it; usage: {LOBBY_COMMANDS[word]}")


def _need_seat(state: Reducer) -> None:
    if not state.at_table:
        raise CommandError("you are not at a table: join one first (list shows them)")
    if state.mirror.seat is None:
        raise CommandError("you are watching this table, not playing at it")


def table_ref(tables: list[dict], ref: str) -> str:
    """A table id, or its number in the last list (1 = the first). A number is always
    a place in the list (table ids start with a letter): one past its end is refused here."""
    if is_number(ref):
        count = len(tables)
        if 1 <= int(ref) <= count:
            return tables[int(ref) - 1]["table"]
        if count == 0:
            raise CommandError(f"there is no table {ref}: the list is empty (list shows the tables; "
                               f"create makes one)")
        which = "join 1" if count == 1 else f"1 to {count}"
        raise CommandError(f"there is no table {ref}: the list has {count} table{'s' if count != 1 else ''} "
                           f"({which}), or give a table's id; list shows them")
    return ref


def parse_create(args: list[str], default_game: str) -> tuple[str, int, dict]:
    from wildtable.protocol.engine import games as engine_games
    known = engine_games()
    game, seats, settings = default_game, None, {}
    for a in args:
        if "=" in a:
            k, v = a.split("=", 1)
            try:
                settings[k] = json.loads(v)
            except ValueError:
                settings[k] = v
        elif is_number(a):
            seats = int(a)
        elif a in known:
            game = a
        else:
            raise CommandError(f"{a!r} is neither a game ({', '.join(sorted(known))}), a number of players, "
                               f"nor NAME=VALUE")
    if seats is None:
        eng = known.get(game)
        seats = min(4, eng.MAX_PLAYERS) if eng is not None else 2
    return game, seats, settings


def _bots(state: Reducer, words: list[str], defaults: Defaults) -> m.SeatBots:
    """Ask the server to seat bots at this table: it runs them itself, so they play on
    after this client is gone (seat_bots, docs/PROTOCOL.md)."""
    from .levels import level_problem
    mir = state.mirror
    if not state.at_table:
        raise CommandError("join or create a table first; bots N then seats N bots at it")
    if mir.seat is None:
        raise CommandError("you are watching this table: only a player at the table can seat bots at it")
    if not games.has_bot(mir.game):
        raise CommandError(f"there is no bot for {mir.game} yet")
    if len(words) not in (2, 3) or not is_number(words[1]) or not 1 <= int(words[1]) <= 15:
        raise CommandError("bots wants how many, and a level if you like: e.g. bots 2, bots 2 easy")
    level = words[2].lower() if len(words) == 3 else defaults.bot_level
    if bad := level_problem(level):
        raise CommandError(bad)
    count = int(words[1])
    # a seat released mid-game keeps its player's name, shown offline like a seat whose
    # player only lost the connection: those may be free, and the server says which
    free = sum(1 for p in mir.players if not p.get("name") or (mir.seq > 0 and not p.get("connected")))
    if count > free:
        raise CommandError(f"only {free} seat(s) free at this table")
    return seat_bots(mir.table, count, level, defaults.bot_delay)  # type: ignore[arg-type]  # at_table: table set


def seat_bots(table: str, count: int, level: str | None, delay: float | None) -> m.SeatBots:
    """The request that has the server seat (and run) ``count`` bots at ``table``; a fixed
    ``delay`` (--bot-delay, seconds) goes in milliseconds, 60 s at most."""
    return m.SeatBots(table, count, level, None if delay is None else min(60_000, round(delay * 1000)))


# ---------------------------------------------------------------- completion
def split_for_completion(text: str) -> list[str]:
    """The words of a partly typed line; the last one is the word being typed ("" after a space)."""
    words = text.split()
    if not text or text[-1].isspace():
        words.append("")
    return words


def completions(core: Any, text: str) -> list[str]:
    """Candidates for the word being typed at the end of ``text``, best first (``core``:
    a ClientCore, read only)."""
    words = split_for_completion(text)
    partial = words[-1]
    if len(words) == 1:
        pool = list(core.command_words())
    else:
        cmd = LOBBY_ALIASES.get(words[0].lower(), words[0].lower())
        if cmd in ("join", "spectate") and len(words) == 2:
            pool = [t["table"] for t in core.tables]
        elif cmd == "create":
            from wildtable.protocol.engine import games as engine_games
            pool = sorted(engine_games())
        elif cmd == "help" and len(words) == 2:
            pool = list(core.command_words())
        else:
            # a game's words only while there is a game to play (not in the lobby, not
            # once it is over: a move would be refused)
            playing = core.at_table and core.mirror.over is None
            pool = core.plugin.complete(words, core.mirror.view) if playing else []
    low = partial.lower()
    return [c for c in pool if c.lower().startswith(low) and c.lower() != low] or \
        ([c for c in pool if c.lower() == low] if partial else [])


def complete_line(core: Any, text: str) -> str | None:
    """``text`` with its last word completed to the first candidate, or None."""
    cands = completions(core, text)
    if not cands:
        return None
    partial = split_for_completion(text)[-1]
    return text[:len(text) - len(partial)] + cands[0]
