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
from wildtable.protocol.logfmt import FRAME_HEADER, SeatClaimed, encode_record, iter_frames, read_log
from wildtable.protocol.replay import replay

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
            Path(args.log).write_bytes(data)
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
        try:
            # 0600: a log holds every shuffle, as secret as the hands
            fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with open(fd, "wb") as f:
                f.write(data)
        except FileExistsError:
            print(f"wildtable export: {out} exists already; give another -o FILE (it is not overwritten)",
                  file=sys.stderr)
            return 2
        except OSError as e:
            print(f"wildtable export: cannot write {out}: {e.strerror or e}", file=sys.stderr)
            return 1
        where = sys.stdout
    note = f" ({live} and may be writing it: exported as written so far)" if live else ""
    print(f"table {args.table}: {records} records, {len(data)} bytes written to "
          f"{'stdout' if out == '-' else out}{note}", file=where)
    return 0


def replay_main(args) -> int:
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
    if not (args.verify or args.json):
        if live:
            print(f"note: {path}: {live} and may be writing this log: the viewer shows it as written so far",
                  file=sys.stderr)
        if args.web:
            from wildtable.server.replay_local import web_main
            return web_main(args, path, data)
        from wildtable.client.viewer import viewer_main
        return viewer_main(args, data)
    if getattr(args, "seat", None) is not None:
        # --verify and --json report the all-seeing state; a seat's view is the viewer's
        print("wildtable replay: --seat goes with the viewer or --plain, not with --verify or --json",
              file=sys.stderr)
        return 2
    try:
        contents = read_log(data)
        result = replay(contents, verify_hashes=True, upto=args.upto)
    except LogError as e:
        damage = f"; {live} and may be writing this log, but this is damage, not a record being written" if live else ""
        print(f"wildtable replay: {path}: {e}{damage}", file=sys.stderr)
        return 1
    game, state = result.game, result.state
    torn = contents.torn
    if torn is not None and getattr(args, "store", None):
        # a store's rows are whole records: a cut one is damage, never a write in progress
        print(f"wildtable replay: {path}: its last {torn.dropped} bytes (from byte offset {torn.offset}) are not a "
              "whole record; the log is damaged", file=sys.stderr)
        return 1
    if torn is not None:
        if (why := _not_a_torn_write(data, torn.offset)) is not None:
            damage = f" ({live} and may be writing this log, but this is not a record being written)" if live else ""
            print(f"wildtable replay: {path}: the last {torn.dropped} bytes (from byte offset {torn.offset}) are "
                  f"not a record cut mid-write{damage}: {why}; the log is damaged", file=sys.stderr)
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
                   "outcome": to_data(o), "state": _jsonable(game.snapshot(state))},
                  sys.stdout, indent=1)
        print()
        return 0
    print(f"{path}: OK - {game.TITLE}, table {contents.header.table}, {len(data)} bytes")
    if live:
        print(f"live: {live}")
    elif torn is not None:
        print(f"torn tail: the last record was cut mid-write: {torn.dropped} bytes at byte offset {torn.offset} "
              f"were dropped; the {torn.offset} bytes before them replay")
    print(f"records: {len(contents.records)}  seq: {result.seq}  actions: {result.actions}  "
          f"chance: {result.chances}  hashes checked: {result.hashes_checked}")
    shown = [f"{printable(n)} (seat {i})" if n else f"seat {i}" for i, n in enumerate(names)]
    won = ", ".join(shown[w] for w in o.winners) or "none"
    print(f"game over: {'yes' if o.over else 'no'}  scores: {list(o.scores)}  winners: {won}")
    print(f"players: {', '.join(shown)}")
    print(f"final hash: {state_hash(game, state).hex()}")
    return 0


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


_MAP_START = frozenset(range(0x80, 0x90)) | {0xDE, 0xDF}     # how a msgpack map (every record) starts


def _not_a_torn_write(data: bytes, offset: int) -> str | None:
    """Why the bytes the reader dropped at ``offset`` cannot be the start of one record
    whose write was cut short (None: they can). A torn write leaves the first bytes of a
    frame: its length runs past the end, and its payload starts a msgpack map."""
    tail = data[offset:]
    if len(tail) >= FRAME_HEADER:
        length = int.from_bytes(tail[:4], "little")
        if length == 0:
            return "a record of length 0"
        if len(tail) > FRAME_HEADER and tail[FRAME_HEADER] not in _MAP_START:
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
