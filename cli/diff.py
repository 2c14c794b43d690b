"""`wildtable replay --diff A B`: the first place two logs differ (their header, an
action, a chance outcome, or the state a record left), both records side by side, and
what differs in the state there (docs/PLAYING.md "Replays").

Logs of one seed from two versions, a server's log and a client's expectation, a log and
its hand-edited copy: the answer is the first seq where they part. Only what decides the
game is compared, and the state hashes each log's writer logged (another version's rules
show there); the table id, creation time, receive times, intent ids, seat claims and
refused intents are information (a different table id is said, not counted). Exit 0 when
the logs are equal, 1 when they differ, 2 when one cannot be read.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from wildtable.headless.timeline import Timeline
from wildtable.protocol.codec import to_data
from wildtable.protocol.engine import hash_form, state_hash
from wildtable.protocol.errors import IllegalAction, LogError
from wildtable.protocol.logfmt import ActionAccepted, ChanceRecorded, StateHashed, read_prefix

#: header fields that decide the game (the table id and creation time do not)
_HEADER_FIELDS = ("game", "seats", "settings", "rules", "format")
#: state differences listed at most
SHOWN = 8


def _load(name: str) -> Timeline | str:
    try:
        data = Path(name).read_bytes()
    except OSError as e:
        return f"cannot read {name}: {e.strerror or e}"
    try:
        return Timeline(read_prefix(data))
    except (LogError, IllegalAction) as e:
        return f"{name}: {e}"


def _key(r: Any) -> tuple:
    """What of a state-changing record decides the game."""
    if type(r) is ActionAccepted:
        return ("action", r.seat, r.action, r.by)
    return ("chance", r.purpose, tuple(r.permutation))


def state_paths(a: Any, b: Any, path: str = "") -> list[str]:
    """Where two plain-data states differ, as paths (players[1].hand), leaves first found."""
    if type(a) is not type(b):
        return [path or "(the whole state)"]
    if isinstance(a, dict):
        out = []
        for k in list(a) + [k for k in b if k not in a]:
            if k not in a or k not in b:
                out.append(f"{path}.{k}".lstrip(".") + (" (only in B)" if k not in a else " (only in A)"))
            elif a[k] != b[k]:
                out.extend(state_paths(a[k], b[k], f"{path}.{k}".lstrip(".")))
        return out
    if isinstance(a, (list, tuple)):
        if len(a) != len(b):
            return [f"{path} (A has {len(a)} items, B {len(b)})"]
        out = []
        for i, (x, y) in enumerate(zip(a, b)):
            if x != y:
                out.extend(state_paths(x, y, f"{path}[{i}]"))
        return out
    return [] if a == b else [path or "(the whole state)"]


def _value(snap: Any, path: str) -> str:
    """The value at a path state_paths gave, short, for the side-by-side lines."""
    cur = snap
    for part in path.replace("[", ".[").split("."):
        if not part:
            continue
        try:
            cur = cur[int(part[1:-1])] if part.startswith("[") else cur[part]
        except (KeyError, IndexError, TypeError, ValueError):
            return "?"
    text = repr(cur)
    return text if len(text) <= 60 else text[:57] + "..."


def diff(a: Timeline, b: Timeline) -> tuple[bool, list[str]]:
    """(equal, the lines that say where and how they differ)."""
    lines: list[str] = []
    ha, hb = a.header, b.header
    header_diff = [f for f in _HEADER_FIELDS if getattr(ha, f) != getattr(hb, f)]
    for f in header_diff:
        lines.append(f"header: {f} differs: A {getattr(ha, f)!r}, B {getattr(hb, f)!r}")
    if ha.table != hb.table:
        lines.append(f"(the table ids differ, {ha.table!r} and {hb.table!r}: not compared)")
    if "game" in header_diff or "seats" in header_diff:
        lines.append("different games or tables: their records are not compared")
        return False, lines
    sa = [i for i, s in enumerate(a.steps) if type(s.record) in (ActionAccepted, ChanceRecorded)]
    sb = [i for i, s in enumerate(b.steps) if type(s.record) in (ActionAccepted, ChanceRecorded)]
    g = a.game
    # the hashes each log's writer logged: the same records under other rules hash otherwise
    logged_a, logged_b = _logged_hashes(a), _logged_hashes(b)
    # (a log of format 3 may hash a state in a form a format 2 log does not: engine.log_hash)
    same_form = hash_form(a.game, ha.format) == hash_form(b.game, hb.format)
    for ia, ib in zip(sa, sb):
        ra, rb = a.steps[ia].record, b.steps[ib].record
        seq = ra.seq
        if _key(ra) != _key(rb):
            what = "chance outcome" if type(ra) is ChanceRecorded and type(rb) is ChanceRecorded else (
                "action" if type(ra) is type(rb) else "kind of record")
            lines.append(f"first difference at seq {seq}: the {what} (record {ia} of A, record {ib} of B)")
            lines.append(f"  A: {a.record_line(ia)}")
            lines.append(f"  B: {b.record_line(ib)}")
            lines.extend(_state_lines(a, b, ia, ib, seq))
            return False, lines
        if state_hash(g, a.steps[ia].state) != state_hash(b.game, b.steps[ib].state):
            lines.append(f"first difference at seq {seq}: the same record, yet the state after it differs "
                         f"(record {ia} of A, record {ib} of B): the rules differ" + (
                             " (the header's rules version differs)" if "rules" in header_diff else ""))
            lines.append(f"  A and B: {a.record_line(ia)}")
            lines.extend(_state_lines(a, b, ia, ib, seq))
            return False, lines
        if seq in logged_a and seq in logged_b and logged_a[seq] != logged_b[seq] and same_form:
            lines.append(f"first difference at seq {seq}: the same records, but the state hashes the two logs "
                         f"hold for it differ (A {logged_a[seq].hex()[:12]}, B {logged_b[seq].hex()[:12]}): "
                         "their writers played other rules (a rules change, or another version)")
            lines.append(f"  A and B: {a.record_line(ia)}")
            return False, lines
    if len(sa) != len(sb):
        short, long_, tl, ids = ("A", "B", b, sb) if len(sa) < len(sb) else ("B", "A", a, sa)
        n = min(len(sa), len(sb))
        last = a.steps[sa[n - 1]].seq if n else 0
        lines.append(f"first difference after seq {last}: {short} ends there; {long_} goes on to seq "
                     f"{tl.steps[ids[-1]].seq}")
        lines.append(f"  {long_}: {tl.record_line(ids[n])}")
        return False, lines
    for t, name in ((a, "A"), (b, "B")):
        if t.contents.damage is not None:
            lines.append(f"note: {name} is damaged after seq {t.steps[-1].seq} ({t.contents.damage}): its good "
                         "prefix was compared")
    if header_diff:
        return False, lines
    last = a.steps[sa[-1]].seq if sa else 0
    lines.append(f"equal: the same {len(sa)} actions and chance outcomes, seq 1 to {last}, and the same state "
                 f"after each")
    return True, lines


def _logged_hashes(t: Timeline) -> dict[int, bytes]:
    return {s.record.seq: s.record.hash for s in t.steps if type(s.record) is StateHashed}


def _state_lines(a: Timeline, b: Timeline, ia: int, ib: int, seq: int) -> list[str]:
    snap_a = to_data(a.game.snapshot(a.steps[ia].state))
    snap_b = to_data(b.game.snapshot(b.steps[ib].state))
    paths = state_paths(snap_a, snap_b)
    if not paths:
        return [f"state after seq {seq}: the same"]
    out = [f"state after seq {seq} differs in {len(paths)} place{'s' if len(paths) != 1 else ''}"
           + (f" (the first {SHOWN})" if len(paths) > SHOWN else "") + ":"]
    for p in paths[:SHOWN]:
        # a path state_paths said more of ("(only in A)", "(A has 3 items, B 4)") stands alone
        out.append(f"  {p}" if p.endswith(")") else f"  {p}: A {_value(snap_a, p)}, B {_value(snap_b, p)}")
    return out


def diff_main(args) -> int:
    name_a, name_b = args.diff
    a, b = _load(name_a), _load(name_b)
    if isinstance(a, str) or isinstance(b, str):     # a sentence: why a log cannot be read
        print(f"wildtable replay --diff: {a if isinstance(a, str) else b}", file=sys.stderr)
        return 2
    equal, lines = diff(a, b)
    print(f"A: {name_a}\nB: {name_b}")
    for line in lines:
        print(line)
    return 0 if equal else 1
