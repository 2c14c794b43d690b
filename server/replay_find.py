"""Search and filters of the web replay viewer (docs/PROTOCOL.md "Replays over HTTP"):
`find=TEXT` (with `back=1` backwards) moves to the next record whose line holds TEXT,
`only=refused|seat:N|kind:K` keeps the records the filter lets through, as the terminal
viewer's / ? n N and f keys do (headless/find.py holds the rules both share).

A search reads the records' lines only (what the list shows), never the states: a log of
26,000 records is searched in one pass of cheap lines, and a timeline that keeps one state
in 32 (server/replay_fold.py) folds nothing for it. A filter's records are kept per log for the
last few filters asked for (FILTERS_KEPT), so stepping through them costs a bisection.
"""

from __future__ import annotations

import bisect
from typing import Any, Iterable

from .replay_fold import AROUND, ReplayLog, ReplayRefused, shortened

FILTERS_KEPT = 4        # per log: the records of this many (filter, view) pairs
MAX_FIND = 100          # characters of a search


def parse_only(value: str | None, seats: int):
    """The `only` parameter as a headless.find.Filter (None: no filter); 400 if it is not one."""
    from wildtable.headless.find import Filter
    if not value:
        return None
    kind, _, arg = value.partition(":")
    if kind == "refused" and not arg:
        return Filter(refused=True)
    if kind == "seat" and arg.isascii() and arg.isdigit() and len(arg) <= 3 and int(arg) < seats:
        return Filter(seat=int(arg))
    if kind == "kind" and arg and len(arg) <= 40 and arg.isprintable():
        return Filter(kinds=frozenset({arg.lower()}))
    raise ReplayRefused(400, f"only wants refused, seat:N (0..{seats - 1}) or kind:KIND, not {shortened(value)!r}")


def shown(log: ReplayLog, f: Any, perspective: Any) -> list[int]:
    """The steps filter ``f`` lets through for this view, kept for the next requests."""
    from wildtable.headless.find import matching
    kept = log.filters
    key = (f, perspective)
    if key not in kept:
        if len(kept) >= FILTERS_KEPT:
            kept.pop(next(iter(kept)))
        kept[key] = matching(log.timeline, f, perspective)
    return kept[key]


def find(log: ReplayLog, text: str, start: int, backward: bool, perspective: Any,
         among: list[int] | None) -> int | None:
    """The first step after ``start`` (before it, ``backward``) whose line holds ``text``."""
    if len(text) > MAX_FIND:
        raise ReplayRefused(400, f"find wants at most {MAX_FIND} characters")
    want = text.casefold()
    tl = log.timeline
    pool = among if among is not None else range(len(tl))
    order: Iterable[int]
    if backward:
        order = reversed(pool[:bisect.bisect_left(pool, start)] if among is not None else range(start))
    else:
        order = pool[bisect.bisect_right(pool, start):] if among is not None else range(start + 1, len(tl))
    for i in order:
        if want in tl.record_line(i, perspective).casefold():
            return i
    return None


def answer(log: ReplayLog, step: int, perspective: Any, lobby: bool, q: dict) -> dict:
    """The step's answer, after a search if one is asked for, with the filter's neighbours."""
    f = parse_only((q.get("only") or [None])[-1], log.timeline.header.seats)
    among = shown(log, f, perspective) if f is not None else None
    text = (q.get("find") or [""])[-1].strip()
    found = None
    if text:
        found = find(log, text, step, (q.get("back") or ["0"])[-1] == "1", perspective, among)
        if found is not None:
            step = found
    out = log.answer(step, perspective, lobby)
    if text:
        out["found"] = found is not None
    if among is not None:
        i = out["step"]
        lo, hi = bisect.bisect_left(among, i), bisect.bisect_right(among, i)
        out["only"] = {"filter": f.describe(), "count": len(among),
                       "prev": among[lo - 1] if lo else None, "next": among[hi] if hi < len(among) else None}
        around = among[max(0, lo - AROUND):hi + AROUND]
        out["around"] = [log._line(k, perspective) for k in around]
    return out
