"""`wildtable replay LOG` without --json or --verify: the interactive viewer in a terminal
(client/viewer.py, Textual), or `--plain` (and any run not at a terminal) printing the
records as text. The plain printer lives here, apart from the viewer, so that a
`replay --plain` (scripts, pipes, the suite's ~30 runs of it) never imports Textual."""

from __future__ import annotations

import sys
from typing import Any

from wildtable.headless.find import Filter, matching
from wildtable.headless.timeline import Timeline, parse_perspective
from wildtable.protocol.errors import IllegalAction, LogError
from wildtable.protocol.logfmt import ActionAccepted, ChanceRecorded, read_prefix
from wildtable.protocol.prefix import damage_after

_NO_FILTER = Filter()     # every record


def print_plain(timeline: Timeline, perspective: Any, upto: int | None, out=None,
                filt: Filter = _NO_FILTER, events: bool = False) -> int:
    """Every record ``filt`` lets through, then the state after it (indented), down to
    seq ``upto``; with ``events``, one line per record and no states. Returns how many
    records were printed."""
    out = out or sys.stdout         # looked up now: a test's capture replaces it
    if upto is not None:
        upto = max(upto, 0)         # as --json and --verify: below 0 is the table before any record
    shown = matching(timeline, filt, perspective, upto)
    for i in shown:
        step = timeline.steps[i]
        if events:
            out.write(f"[{i:>4}] {timeline.record_line(i, perspective)}\n")
            continue
        for line in timeline.detail_lines(i, perspective):
            out.write(f"[{i:>4}] {line}\n")
        if i == 0 or type(step.record) in (ActionAccepted, ChanceRecorded):
            for line in timeline.state_lines(i, perspective):
                out.write(f"       | {line}\n")
    return len(shown)



def damage_sentence(log: str, damage: LogError, last_seq: int) -> str:
    """Where a damaged log ends early, why, and what to do (docs/LOG-FORMAT.md 5)."""
    return (f"DAMAGED: the log ends early, after seq {last_seq}: {damage} [{damage.code}]; the records before "
            f"it are all shown. wildtable replay {log} --salvage OUT keeps them as a log that verifies")


def viewer_main(args, data: bytes) -> int:
    """The viewer, or --plain: the good prefix of a damaged log, then where it ends (exit 1)."""
    try:
        contents = read_prefix(data)
        timeline = Timeline(contents)
    except (LogError, IllegalAction) as e:
        print(f"wildtable replay: {args.log}: {e}", file=sys.stderr)
        return 1
    try:
        perspective = parse_perspective(getattr(args, "seat", None), contents.header.seats)
    except ValueError as e:
        print(f"wildtable replay: {e}", file=sys.stderr)
        return 2
    damage = contents.damage
    if damage_after(damage, args.upto):
        print(f"note: {args.log}: damaged later ({damage}); --upto {args.upto} stops before it, so the records "
              "shown are all good", file=sys.stderr)
        damage = None
    if contents.torn is not None:
        print(f"warning: {args.log}: torn tail of {contents.torn.dropped} bytes ignored: the log is incomplete, "
              "its game may have gone on after the cut", file=sys.stderr)
    said = damage_sentence(str(args.log), damage, timeline.steps[-1].seq) if damage is not None else None
    if said:
        print(f"wildtable replay: {args.log}: {damage}", file=sys.stderr)
    if args.plain or not (sys.stdin.isatty() and sys.stdout.isatty()):
        filt = Filter(getattr(args, "by_seat", None), frozenset(k.lower() for k in getattr(args, "kind", [])),
                      getattr(args, "refused", False), getattr(args, "find", None) or "")
        if filt.seat is not None and not 0 <= filt.seat < contents.header.seats:
            print(f"wildtable replay: --by-seat wants 0..{contents.header.seats - 1}, not {filt.seat}",
                  file=sys.stderr)
            return 2
        print_plain(timeline, perspective, args.upto, filt=filt, events=getattr(args, "events", False))
        if said:
            print(said)
        return 1 if said else 0
    start = timeline.index_of_seq(args.upto) if args.upto is not None else 0
    note = said
    if note is None and contents.torn is not None:      # not damage (exit 0), but said
        note = (f"INCOMPLETE: the last record was cut mid-write ({contents.torn.dropped} bytes at byte offset "
                f"{contents.torn.offset} left out): the game may have gone on after it")
    from wildtable.client.viewer import ViewerApp      # Textual: only for the interactive viewer
    ViewerApp(timeline, str(args.log), perspective, start, damage=note).run()
    return 1 if said else 0
