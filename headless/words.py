"""Small text helpers the client's modules share: a peer's text made fit for one line, the
server's protocol words put as the player's commands, a lobby row. Apart from the notices
and the reducer so that each of those reads as one job (docs/ARCHITECTURE.md, "headless/ (wildtable.headless)")."""

from __future__ import annotations

from typing import Any

import attrs


def printable(text: Any) -> str:
    """Text that a peer chose (a player's or a table's name), fit for one line of a
    terminal: a character that is not printable (a control or escape character, a line
    break) shows as "?". Shown as plain text still, never read as markup."""
    text = str(text)
    return text if text.isprintable() else "".join(c if c.isprintable() else "?" for c in text)


# the protocol's words in the server's sentences -> the commands a player types
_USER_WORDS = (("list_tables", "list"), ("create_table", "create"))


def user_words(text: str) -> str:
    """A server's sentence with the protocol's message names put as the player's
    commands ("list_tables shows the open ones" -> "list shows the open ones")."""
    for wire, word in _USER_WORDS:
        text = text.replace(wire, word)
    return text


@attrs.frozen
class LobbyRow:
    """One table of the lobby list as the client shows it (full screen and line mode)."""
    table: str
    name: str           # the name its creator gave it, or ""
    game: str
    seats: str          # "taken/seats"
    status: str
    players: str        # "ann, -, bob" ("-": a free seat)


def lobby_row(t: dict) -> LobbyRow:
    players = t.get("players") or []
    taken = sum(1 for p in players if p)
    return LobbyRow(printable(t["table"]), printable(t.get("name") or ""), printable(t["game"]),
                    f"{taken}/{t['seats']}", printable(t["status"]),
                    ", ".join(printable(p) if p else "-" for p in players))


def turn_timer_of(view: dict) -> float:
    """The table's turn timer in seconds (0: none), from a turn-based game's view."""
    secs = view.get("turn_timer")
    if secs is None:
        secs = (view.get("settings") or {}).get("turn_timer")
    return float(secs) if isinstance(secs, (int, float)) and secs > 0 else 0.0
