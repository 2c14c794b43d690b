"""`wildtable replay LOG --json --seat N [--upto S]`: what seat N (or a spectator) was
sent at seq S, as data; and `--json` with --events or a filter: the records as data
(docs/PLAYING.md "Replays"). A damaged log gives its good prefix and names the
damage, as every mode does (exit 1 unless --upto stops before it)."""

from __future__ import annotations

import json
import sys

from wildtable.headless.find import Filter, kinds_of, matching
from wildtable.headless.timeline import ALL, SPECTATOR, Timeline, parse_perspective, raw
from wildtable.protocol.codec import to_data
from wildtable.protocol.errors import IllegalAction, LogError
from wildtable.protocol.logfmt import ActionAccepted, ChanceRecorded, IntentRejected, read_prefix
from wildtable.protocol.prefix import damage_after


def json_main(args, path, data: bytes) -> int:
    try:
        contents = read_prefix(data)
        timeline = Timeline(contents)
    except (LogError, IllegalAction) as e:
        print(f"wildtable replay: {path}: {e}", file=sys.stderr)
        return 1
    seats = contents.header.seats
    try:
        perspective = parse_perspective(args.seat, seats)
    except ValueError as e:
        print(f"wildtable replay: {e}", file=sys.stderr)
        return 2
    if args.by_seat is not None and not 0 <= args.by_seat < seats:
        print(f"wildtable replay: --by-seat wants 0..{seats - 1}, not {args.by_seat}", file=sys.stderr)
        return 2
    damage = contents.damage
    if damage_after(damage, args.upto):
        print(f"note: {path}: damaged later ({damage}); --upto {args.upto} stops before it", file=sys.stderr)
        damage = None
    elif damage is not None:
        print(f"wildtable replay: {path}: {damage}; what is before it is given", file=sys.stderr)
    hurt = None if damage is None else {"code": damage.code, "message": damage.message, "seq": damage.seq,
                                        "offset": damage.offset}
    upto = None if args.upto is None else max(args.upto, 0)
    from .offline import _jsonable, filtering
    if filtering(args):
        filt = Filter(args.by_seat, frozenset(k.lower() for k in args.kind), args.refused, args.find or "")
        shown = matching(timeline, filt, perspective, upto)
        out = {"game": timeline.game.NAME, "table": contents.header.table, "view_as": _as(perspective),
               "records": [_record(timeline, i, perspective, args.events) for i in shown], "damage": hurt}
    else:
        i = len(timeline) - 1 if upto is None else timeline.index_of_seq(upto)
        step = timeline.step(i)
        seat = None if perspective in (SPECTATOR, ALL) else perspective
        g = timeline.game
        view = g.snapshot(step.state) if perspective == ALL else g.view(step.state, seat)
        # the update the server sends a seat (or spectator) after a record: its seq, that
        # record's events, and the view (docs/PROTOCOL.md "update"), as JSON
        out = {"game": g.NAME, "table": contents.header.table, "seq": step.seq, "view_as": _as(perspective),
               "players": list(step.names), "events": [_jsonable(to_data(e)) for e in step.events],
               "view": _jsonable(to_data(view)), "damage": hurt}
    json.dump(out, sys.stdout, indent=1)
    print()
    return 0 if damage is None else 1


def _as(perspective) -> str | int:
    return perspective if isinstance(perspective, int) else str(perspective)


def _record(timeline: Timeline, i: int, perspective, brief: bool) -> dict:
    """One record as data: what the filters look at, and its text as --plain prints it."""
    r = timeline.steps[i].record
    out = {"index": i, "seq": timeline.steps[i].seq, "kind": sorted(kinds_of(timeline, i, perspective)),
           "seat": getattr(r, "seat", None), "line": timeline.record_line(i, perspective)}
    if not brief:
        out["detail"] = timeline.detail_lines(i, perspective)
        if type(r) in (ActionAccepted, ChanceRecorded, IntentRejected) and not timeline.hidden_from(r, perspective):
            out["record"] = json.loads(raw(to_data(r)))
    return out
