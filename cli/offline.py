"""`wildtable selfplay`, the scripted forms of `wildtable replay` (--verify, --json), and
`wildtable export` (a table of a PostgreSQL store as a .wlog file)."""

from __future__ import annotations

import json
import os
import re
import random
import sys
from pathlib import Path

from wildtable.protocol.codec import to_data
from wildtable.protocol.engine import game as find_game, state_hash
from wildtable.protocol.errors import IllegalAction, LogError
from wildtable.protocol.logfmt import FRAME_HEADER, MAP_START, SeatClaimed, encode_record, iter_frames
from wildtable.protocol.prefix import replay_prefix

from .selfplay import play


def _live(path: Path) -> str | None:
    """"a live server (pid 12, serving on ws://...) holds DIR" if one holds the data dir
    this log is in (it may be writing the log as we read it), else None."""
    from wildtable.server.datadir import holder
    who = holder(path.parent)
    if who is None:
        return None
    return f"a live server{f' ({who})' if who else ''} holds {path.parent}"


def _score_table(game, state) -> str:
    view = game.view(state, None)
    lines = []
    rounds = view.get("round_scores")
    totals = list(game.outcome(state).scores)
    head = ("round  " if rounds else "       ") + "  ".join(f"seat {i:<2d}" for i in range(len(totals)))
    lines.append(head)
    if rounds:
        for i, row in enumerate(rounds, 1):
            lines.append(f"{i:<5d}  " + "  ".join(f"{x if x is not None else '-':>7}" for x in row))
    lines.append("total  " + "  ".join(f"{x:>7}" for x in totals))
    return "\n".join(lines)


def selfplay_main(args) -> int:
    from wildtable.cli import parse_settings
    # without --seed, a seed of its own, printed, so that any run can be played again
    seed = args.seed if args.seed is not None else random.randrange(2 ** 32)
    try:
        game = find_game(args.game)
        result = play(game, args.players, parse_settings(args.set), seed=seed)
    except IllegalAction as e:
        print(f"wildtable selfplay: {e.reason}", file=sys.stderr)
        return 2
    print(f"{game.TITLE}: {args.players} players, seed {seed}, {result.steps} records")
    print(_score_table(game, result.state))
    o = game.outcome(result.state)
    print("winner" + ("s" if len(o.winners) != 1 else "") + ": " + ", ".join(f"seat {w}" for w in o.winners))
    if args.log:
        data = encode_record(result.header) + b"".join(encode_record(r) for r in result.records)
        try:
            # 0600, as the server writes every log: it holds every shuffle (docs/LOG-FORMAT.md)
            fd = os.open(args.log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with open(fd, "wb") as f:
                os.fchmod(fd, 0o600)        # a file that was there keeps no wider mode
                f.write(data)
        except OSError as e:
            print(f"wildtable selfplay: cannot write the log to {args.log}: {e.strerror or e}", file=sys.stderr)
            return 1
        print(f"log written to {args.log} ({len(data)} bytes)")
    return 0


_TABLE_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")


def _from_store(command: str, dsn: str, table: str) -> tuple[bytes, str | None] | int:
    """(the table's .wlog bytes, a note if a live node holds it and may be writing it)
    read from the store; or the exit status after saying why not."""
    from wildtable.server.store_pg import PgStore, StoreError, first_line, redact
    if not _TABLE_ID.fullmatch(table):
        print(f"wildtable {command}: {table!r} is not a table id (letters, digits, '-' and '_', as list_tables "
              "shows them)", file=sys.stderr)
        return 2
    try:
        store = PgStore(dsn)
    except StoreError as e:
        print(f"wildtable {command}: {e}", file=sys.stderr)
        return 2
    try:
        info = store.table_info(table)
        if info is None:
            known = store.table_ids()
            shown = ", ".join(known[-10:]) + (" (the last 10)" if len(known) > 10 else "")
            print(f"wildtable {command}: no table {table!r} in the store {redact(dsn)}"
                  + (f"; it holds {len(known)}: {shown}" if known else "; it holds no tables"), file=sys.stderr)
            return 2
        data = store.load_records(table)
    except StoreError as e:
        print(f"wildtable {command}: {e}", file=sys.stderr)
        return 1
    except Exception as e:
        print(f"wildtable {command}: cannot read the store {redact(dsn)}: {first_line(e)}", file=sys.stderr)
        return 2
    finally:
        store.close()
    live = None
    if info["owner"] and not info["finished"] and info["lease_left"] > 0:
        live = f"node {info['owner']} holds table {table} in the store"
    return data, live


def export_main(args) -> int:
    dsn = args.store or os.environ.get("WILDTABLE_STORE")
    if not dsn:
        print("wildtable export: which store? give --store DSN (e.g. postgresql://user@host/db) or set "
              "WILDTABLE_STORE", file=sys.stderr)
        return 2
    got = _from_store("export", dsn, args.table)
    if isinstance(got, int):
        return got
    data, live = got
    out = args.output or f"{args.table}.wlog"
    records = sum(1 for _ in iter_frames(data))
    if out == "-":
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
        where = sys.stderr
    else:
        failed = write_new_log("export", out, data, "give another -o FILE")
        if failed:
            return failed
        where = sys.stdout
    note = f" ({live} and may be writing it: exported as written so far)" if live else ""
    print(f"table {args.table}: {records} records (the header and {records - 1} more), {len(data)} bytes written to "
          f"{'stdout' if out == '-' else out}{note}", file=where)
    return 0


def write_new_log(command: str, out: str, data: bytes, instead: str) -> int:
    """Write ``data`` to a new file ``out``, 0600 (a log holds every shuffle, as secret as
    the hands: docs/LOG-FORMAT.md), never over an existing one; 0, or the exit status
    after saying why not (``instead``: what to do when it exists)."""
    try:
        fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with open(fd, "wb") as f:
            f.write(data)
    except FileExistsError:
        print(f"wildtable {command}: {out} exists already; {instead} (it is not overwritten)", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"wildtable {command}: cannot write {out}: {e.strerror or e}", file=sys.stderr)
        return 1
    return 0


def replay_main(args) -> int:
    if getattr(args, "diff", None):
        if args.log is not None or args.verify or args.json or args.plain or args.web or args.salvage:
            print("wildtable replay: --diff A B compares two logs: it goes alone (wildtable replay --diff A B)",
                  file=sys.stderr)
            return 2
        from .diff import diff_main
        return diff_main(args)
    if args.log is None:
        print("wildtable replay: which log? give a .wlog file (wildtable replay LOG), or --diff A B",
              file=sys.stderr)
        return 2
    if filtering(args) and not (args.plain or args.json):
        print("wildtable replay: --events, --by-seat, --kind, --refused and --find go with --plain or --json "
              "(in the viewer: / searches, f filters)", file=sys.stderr)
        return 2
    if filtering(args) and args.verify:
        print("wildtable replay: --verify checks the whole log: it goes without --events, --by-seat, --kind, "
              "--refused and --find", file=sys.stderr)
        return 2
    if getattr(args, "salvage", None) and (args.verify or args.json or args.plain or args.web):
        print("wildtable replay: --salvage OUT writes the good records as a new log: it goes alone",
              file=sys.stderr)
        return 2
    if getattr(args, "analyze", False) and (args.verify or args.plain or args.web or filtering(args)
                                             or getattr(args, "salvage", None)):
        print("wildtable replay: --analyze marks each decision of the log: it goes with --seat N and --json "
              "only", file=sys.stderr)
        return 2
    path: Path | str = Path(args.log)
    if getattr(args, "web", False) and (args.verify or args.json or args.plain):
        print("wildtable replay: --web is the viewer in a browser: it goes without --verify, --json and --plain",
              file=sys.stderr)
        return 2
    if getattr(args, "no_browser", False) and not args.web:
        print("wildtable replay: --no-browser goes with --web", file=sys.stderr)
        return 2
    # A log of a data dir that a live server holds may be growing as we read it. What we
    # read is then a consistent prefix: every whole record it holds, and at most the first
    # bytes of the one being written (a torn tail: left out, not damage). Anything else
    # is damage, live server or not (exit 1).
    if getattr(args, "store", None):
        # a table of a store: its rows are the log's frames; a live node may add more
        got = _from_store("replay", args.store, args.log)
        if isinstance(got, int):
            return got
        data, live = got
        path = f"table {args.log} of the store"     # what the messages below call it
    else:
        assert isinstance(path, Path)
        live = _live(path)
        try:
            data = path.read_bytes()
        except OSError as e:
            where = f" ({live}: a finished or expired game's log is moved to its finished/ or expired/)" \
                if live and isinstance(e, FileNotFoundError) else ""
            print(f"wildtable replay: cannot read {path}: {e.strerror}{where}", file=sys.stderr)
            return 2
    if getattr(args, "analyze", False):
        from .analyze import analyze_main
        return analyze_main(args, path, data)
    if getattr(args, "salvage", None):
        from .damage import salvage_main
        return salvage_main(args, path, data)
    if not (args.verify or args.json):
        if live:
            print(f"note: {path}: {live} and may be writing this log: the viewer shows it as written so far",
                  file=sys.stderr)
        if args.web:
            from wildtable.server.replay_local import web_main
            return web_main(args, path, data)
        from .replay_plain import viewer_main
        return viewer_main(args, data)
    if args.json and (getattr(args, "seat", None) is not None or filtering(args)):
        from .replay_json import json_main
        return json_main(args, path, data)
    if getattr(args, "seat", None) is not None:
        # --verify reports the all-seeing state; a seat's view is the viewer's, or --json's
        print("wildtable replay: --seat goes with the viewer, --plain or --json, not with --verify",
              file=sys.stderr)
        return 2
    from .damage import damage_lines, upto_note
    try:
        prefix = replay_prefix(data, upto=args.upto)
    except LogError as e:
        print(f"wildtable replay: {path}: {e}", file=sys.stderr)
        return 1
    contents, result, damage = prefix.contents, prefix.result, prefix.damage
    if damage is not None:
        # the same sentence as ever on stderr; the good prefix on stdout, then where it ends
        also = f"; {live} and may be writing this log, but this is damage, not a record being written" if live else ""
        print(f"wildtable replay: {path}: {damage}{also}", file=sys.stderr)
    elif prefix.later is not None:
        print(upto_note(path, prefix.later, args.upto), file=sys.stderr)
    game, state = result.game, result.state
    torn = contents.torn if damage is None and prefix.later is None else None
    if torn is not None and getattr(args, "store", None):
        # a store's rows are whole records: a cut one is damage, never a write in progress
        print(f"wildtable replay: {path}: its last {torn.dropped} bytes (from byte offset {torn.offset}) are not a "
              "whole record; the log is damaged", file=sys.stderr)
        return 1
    if torn is not None:
        if (why := _not_a_torn_write(data, torn.offset)) is not None:
            writing = f" ({live} and may be writing this log, but this is not a record being written)" if live else ""
            print(f"wildtable replay: {path}: the last {torn.dropped} bytes (from byte offset {torn.offset}) are "
                  f"not a record cut mid-write{writing}: {why}; the log is damaged", file=sys.stderr)
            return 1
        if not live:
            print(f"warning: {path}: torn tail of {torn.dropped} bytes at offset {torn.offset} ignored",
                  file=sys.stderr)
    if live:
        # the sentence says what was read: the log as written so far
        live = f"{live} and may be writing this log: replayed as written so far, up to seq {result.seq}" + (
            f"; the last {torn.dropped} bytes (from byte offset {torn.offset}) are a record still being "
            "written, left out" if torn is not None else "")
        if args.json:
            print(f"note: {path}: {live}", file=sys.stderr)
    names = seat_names(contents)
    o = game.outcome(state)
    if args.json:
        json.dump({"game": game.NAME, "table": contents.header.table, "seq": result.seq,
                   "players": names, "winner_names": [names[w] or f"seat {w}" for w in o.winners],
                   "outcome": to_data(o), "state": _jsonable(game.snapshot(state)),
                   "complete": damage is None and torn is None, "damage": damage_data(damage)},
                  sys.stdout, indent=1)
        print()
        return 0 if damage is None else 1
    # the status says what was read: OK, INCOMPLETE (a torn tail: the end is missing) or
    # DAMAGED (the records before the damage are reported, and no more); docs/LOG-FORMAT.md 5
    status = "DAMAGED" if damage is not None else "INCOMPLETE" if torn is not None and not live else "OK"
    print(f"{path}: {status} - {game.TITLE}, table {contents.header.table}, {len(data)} bytes")
    if live:
        print(f"live: {live}")
    elif torn is not None:
        print(f"torn tail: the last record was cut mid-write: {torn.dropped} bytes at byte offset {torn.offset} "
              f"were dropped; the {torn.offset} bytes before them replay. The log is incomplete: its game "
              "may have gone on after the cut")
    if damage is not None:
        for line in damage_lines(f"--store DSN {args.log}" if getattr(args, "store", None) else str(args.log), prefix):
            print(line)
    # the header is a record too (docs/LOG-FORMAT.md 1), as `export` and the store count them
    print(f"records: {1 + len(contents.records)} (the header and {len(contents.records)} more)  "
          f"seq: {result.seq}  actions: {result.actions}  "
          f"chance: {result.chances}  hashes checked: {result.hashes_checked}")
    shown = [f"{printable(n)} (seat {i})" if n else f"seat {i}" for i, n in enumerate(names)]
    won = ", ".join(shown[w] for w in o.winners) or "none"
    print(f"game over: {'yes' if o.over else 'no'}  scores: {list(o.scores)}  winners: {won}")
    print(f"players: {', '.join(shown)}")
    print(f"final hash: {state_hash(game, state).hex()}")
    return 0 if damage is None else 1


def damage_data(damage: LogError | None) -> dict | None:
    """The damage as --json puts it: null for a whole log."""
    if damage is None:
        return None
    return {"code": damage.code, "message": damage.message, "seq": damage.seq, "offset": damage.offset}


def filtering(args) -> bool:
    """Whether any filter flag (--by-seat, --kind, --refused, --find) or --events is given."""
    return (getattr(args, "by_seat", None) is not None or bool(getattr(args, "kind", None))
            or getattr(args, "refused", False) or bool(getattr(args, "find", None))
            or getattr(args, "events", False))


def seat_names(contents) -> list[str]:
    """Who sat where, from the log's seat claims (the last claim of a seat wins); ""
    for a seat nobody claimed (a selfplay log)."""
    names = [""] * contents.header.seats
    for r in contents.records:
        if type(r) is SeatClaimed and 0 <= r.seat < len(names):
            names[r.seat] = r.name
    return names


def printable(text: str) -> str:
    return "".join(c if c.isprintable() else "?" for c in text)


def _not_a_torn_write(data: bytes, offset: int) -> str | None:
    """Why the bytes the reader dropped at ``offset`` cannot be the start of one record
    whose write was cut short (None: they can). A torn write leaves the first bytes of a
    frame: its length runs past the end, and its payload starts a msgpack map."""
    tail = data[offset:]
    if len(tail) >= FRAME_HEADER:
        length = int.from_bytes(tail[:4], "little")
        if length == 0:
            return "a record of length 0"
        if len(tail) > FRAME_HEADER and tail[FRAME_HEADER] not in MAP_START:
            return "they do not start a record"
    return None


def _jsonable(x):
    if isinstance(x, bytes):
        return x.hex()
    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    return x
