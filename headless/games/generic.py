"""The fallback for a game with no client module yet: its view as readable text, and
``act {"kind": ...}`` to send a raw action map (the game's own kinds, docs/RULES.md)."""

from __future__ import annotations

import json


from ..levels import TURN_BASED
from . import CommandError, Ctx, compact

NAME = "generic"
TITLE = "Game"
BOT_PACE = TURN_BASED
COMMANDS = {
    "act": 'act {"kind": ..., ...}  - send one action as JSON, e.g. act {"kind": "play", "cards": [3, 7]}',
}
HELP = "This game has no table screen yet: its view is shown as it comes from the server.\n" \
       "Send actions as JSON with act; each game's actions are listed in docs/RULES.md."


def parse_act(words: list[str]) -> dict:
    """``act {json}``: the JSON object is the action map (it must have a string "kind")."""
    raw = " ".join(words[1:]).strip()
    if not raw:
        raise CommandError('act wants a JSON object, e.g. act {"kind": "draw"}')
    try:
        action = json.loads(raw)
    except json.JSONDecodeError as e:
        raise CommandError(f"act wants a JSON object: {e.msg} at column {e.colno}") from None
    except ValueError as e:         # e.g. a number of more than 4300 digits
        raise CommandError(f"act wants a JSON object: {e}") from None
    except RecursionError:
        raise CommandError("act wants a JSON object: this one is nested too deeply") from None
    if not isinstance(action, dict) or not isinstance(action.get("kind"), str):
        raise CommandError('act wants a JSON object with a string "kind", e.g. act {"kind": "draw"}')
    return action


def parse(words: list[str], view: dict) -> dict:
    if words and words[0] == "act":
        return parse_act(words)
    raise CommandError(f"unknown command {words[0]!r} for this game: use act {{\"kind\": ...}} (help lists commands)")


def complete(words: list[str], view: dict) -> list[str]:
    return []


def _lines(value, indent: int = 0) -> list[str]:
    """Nested plain data as indented "key: value" lines, short lists kept on one line."""
    pad = "  " * indent
    out: list[str] = []
    if isinstance(value, dict):
        for k, v in value.items():
            if isinstance(v, (dict, list)) and v and len(json.dumps(v)) > 60:
                out.append(f"{pad}{k}:")
                out.extend(_lines(v, indent + 1))
            else:
                out.append(f"{pad}{k}: {json.dumps(v)}")
    elif isinstance(value, list):
        for v in value:
            if isinstance(v, (dict, list)) and len(json.dumps(v)) > 60:
                out.append(f"{pad}-")
                out.extend(_lines(v, indent + 1))
            else:
                out.append(f"{pad}- {json.dumps(v)}")
    else:
        out.append(f"{pad}{json.dumps(value)}")
    return out


def render_text(view: dict, ctx: Ctx) -> list[str]:
    names = ", ".join(f"{i}: {ctx.seat_label(i)}" for i in range(len(ctx.names)))
    head = [f"{view.get('game', 'game')} - seat {ctx.me if ctx.me is not None else '(watching)'}"
            + (f" - players {names}" if names else "")]
    return head + _lines(view)


def render_snapshot(snapshot: dict, ctx: Ctx) -> list[str]:
    return ["all-seeing state:"] + _lines(snapshot, 1)


def describe(event: dict, ctx: Ctx) -> str | None:
    rest = {k: v for k, v in event.items() if k != "event"}
    who = ""
    if isinstance(rest.get("seat"), int):
        who = ctx.name(rest.pop("seat")) + ": "
    what = str(event.get("event", "event")).replace("_", " ")
    return who + what + (" " + compact(rest) if rest else "")


def flash(event: dict, ctx: Ctx) -> str | None:
    return None
