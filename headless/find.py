"""Finding records in a timeline: a filter (by seat, by kind of action or record,
refused intents only, a text) and a search forward or back, shared by the replay
viewer's / ? n N f keys and `wildtable replay --plain/--json`'s filter flags
(docs/PLAYING.md "Replays"). Pure: indices in, indices out.

A view sees what it may see only: a refused intent of another seat is neither found by
its kind nor by its text, since neither is shown to that view (Timeline.hidden_from).
"""

from __future__ import annotations

from typing import Any

import attrs

from wildtable.protocol.logfmt import ActionAccepted, ChanceRecorded, IntentRejected, SeatClaimed, StateHashed

from .timeline import ALL, Timeline

#: the record kinds --kind takes besides the games' action kinds
RECORD_KINDS = {ActionAccepted: "action", ChanceRecorded: "chance", IntentRejected: "rejected",
                SeatClaimed: "seat", StateHashed: "hash", type(None): "header"}


@attrs.frozen
class Filter:
    """Which records to show; the default shows every one."""
    seat: int | None = None                 # records of this seat (actions, refusals, claims)
    kinds: frozenset[str] = frozenset()     # any of these action kinds or record kinds
    refused: bool = False                   # refused intents only
    text: str = ""                          # records whose text holds this (any case)

    @property
    def empty(self) -> bool:
        return self == Filter()

    def describe(self) -> str:
        parts = []
        if self.seat is not None:
            parts.append(f"seat {self.seat}")
        if self.kinds:
            parts.append("kind " + "/".join(sorted(self.kinds)))
        if self.refused:
            parts.append("refused only")
        if self.text:
            parts.append(f"text {self.text!r}")
        return ", ".join(parts) or "none"


def kinds_of(timeline: Timeline, i: int, perspective: Any = ALL) -> set[str]:
    """The kinds record ``i`` answers to: its record kind, and its action's kind."""
    r = timeline.steps[i].record
    out = {RECORD_KINDS.get(type(r), type(r).__name__)}
    if type(r) in (ActionAccepted, IntentRejected) and not timeline.hidden_from(r, perspective):
        kind = r.action.get("kind") if isinstance(r.action, dict) else None
        if isinstance(kind, str):
            out.add(kind)
    return out


def text_of(timeline: Timeline, i: int, perspective: Any = ALL) -> str:
    """What a search looks in: the record's line and what it did (its detail lines)."""
    return "\n".join(timeline.detail_lines(i, perspective))


def matches(timeline: Timeline, i: int, f: Filter, perspective: Any = ALL) -> bool:
    r = timeline.steps[i].record
    if f.refused and type(r) is not IntentRejected:
        return False
    if f.seat is not None and getattr(r, "seat", None) != f.seat:
        return False
    if f.kinds and not (f.kinds & kinds_of(timeline, i, perspective)):
        return False
    if f.text and f.text.casefold() not in text_of(timeline, i, perspective).casefold():
        return False
    return True


def matching(timeline: Timeline, f: Filter, perspective: Any = ALL, upto: int | None = None) -> list[int]:
    """The indices of the records ``f`` lets through, down to seq ``upto``."""
    out = []
    for i, s in enumerate(timeline.steps):
        if upto is not None and s.seq > upto:
            break
        if f.empty or matches(timeline, i, f, perspective):
            out.append(i)
    return out


def search(timeline: Timeline, text: str, start: int, *, backward: bool = False,
           perspective: Any = ALL, among: list[int] | None = None) -> int | None:
    """The first record after ``start`` (before it, ``backward``) whose text holds
    ``text``, among the indices ``among`` (default: every record); None if none does.
    The search does not wrap around: the viewer says so and Home/End start again."""
    f = Filter(text=text)
    pool = among if among is not None else range(len(timeline.steps))
    order = [i for i in pool if i < start][::-1] if backward else [i for i in pool if i > start]
    for i in order:
        if matches(timeline, i, f, perspective):
            return i
    return None


def parse_filter(words: str, seats: int) -> Filter:
    """The viewer's f prompt: 'seat 2', 'kind play', 'refused', 'text Draw-3', several
    at once ('seat 1 kind draw refused'), or nothing to clear. ValueError says what was
    wrong."""
    toks = words.split()
    seat, kinds, refused, text = None, set(), False, ""
    i = 0
    while i < len(toks):
        w = toks[i].lower()
        arg = toks[i + 1] if i + 1 < len(toks) else None
        if w == "refused":
            refused, i = True, i + 1
            continue
        if w not in ("seat", "kind", "text") or arg is None:
            raise ValueError(f"f wants seat N, kind KIND, refused or text WORDS (or nothing to clear), "
                             f"not {words.strip()[:40]!r}")
        if w == "seat":
            if not (arg.isascii() and arg.isdigit() and int(arg) < seats):
                raise ValueError(f"seat wants 0..{seats - 1}, not {arg[:10]!r}")
            seat = int(arg)
        elif w == "kind":
            kinds.add(arg.lower())
        else:
            text = " ".join(toks[i + 1:])
            break
        i += 2
    return Filter(seat, frozenset(kinds), refused, text)
