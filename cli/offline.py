"""`wildtable selfplay` and the scripted forms of `wildtable replay` (--verify, --json)."""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

from wildtable.protocol.codec import to_data
from wildtable.protocol.engine import game as find_game, state_hash
from wildtable.protocol.errors import IllegalAction, LogError
from wildtable.protocol.logfmt import encode_record, read_log
from wildtable.protocol.replay import replay

from .selfplay import play


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


def replay_main(args) -> int:
    path = Path(args.log)
    try:
        data = path.read_bytes()
    except OSError as e:
        print(f"wildtable replay: cannot read {path}: {e.strerror}", file=sys.stderr)
        return 2
    if not (args.verify or args.json):
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
        print(f"wildtable replay: {path}: {e}", file=sys.stderr)
        return 1
    game, state = result.game, result.state
    if contents.torn is not None:
        print(f"warning: {path}: torn tail of {contents.torn.dropped} bytes at offset {contents.torn.offset} ignored",
              file=sys.stderr)
    if args.json:
        json.dump({"game": game.NAME, "table": contents.header.table, "seq": result.seq,
                   "outcome": to_data(game.outcome(state)), "state": _jsonable(game.snapshot(state))},
                  sys.stdout, indent=1)
        print()
        return 0
    o = game.outcome(state)
    print(f"{path}: OK - {game.TITLE}, table {contents.header.table}, {len(data)} bytes")
    print(f"records: {len(contents.records)}  seq: {result.seq}  actions: {result.actions}  "
          f"chance: {result.chances}  hashes checked: {result.hashes_checked}")
    print(f"game over: {'yes' if o.over else 'no'}  scores: {list(o.scores)}  winners: {list(o.winners)}")
    print(f"final hash: {state_hash(game, state).hex()}")
    return 0


def _jsonable(x):
    if isinstance(x, bytes):
        return x.hex()
    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    return x
