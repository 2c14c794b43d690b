"""Where replay's time goes, per record and per step, measured so that a busy machine
skews it less than bench/engine.py's three whole passes.

    python bench/replay_parts.py [--games go-wild,wild-shots] [--tables 200] [--repeat 15]

For each game: ``--tables`` seeded selfplay games, their logs, then four parts timed
chunk by chunk (``--chunk`` logs at a time, the parts in turn), each chunk's time the
minimum of ``--repeat`` runs, summed over the chunks:
  frame     CRC check + msgpack decode of every frame (bench/engine.py's floor)
  read      read_log: frames + the typed records
  fold      replay's fold over the records read (decode each action and advance, or
            the game's step from the map where it has one, RAW_ADVANCE; chance records;
            hashes; LogContents.decoded, where the checkout has it, as replay folds)
  advance   the engine alone: the game's advance (apply(...)[0] where it has none) over
            the decoded steps of the same logs
and the share of the floor that read + fold reach (issue #25 asks for 40%). Only public
functions: run by another checkout's venv Python, it measures that checkout's code.
"""

from __future__ import annotations

import argparse
import random
import sys
import time

from wildtable.protocol.codec import unpackb
from wildtable.protocol.engine import ChanceOutcome, games
from wildtable.protocol.logfmt import ActionAccepted, ChanceRecorded, encode_record, iter_frames, read_log
from wildtable.protocol.replay import fold, initial_state
from wildtable.selfplay import play


def parts(game, tables: int, repeat: int, chunk: int, seed: int) -> dict:
    rng = random.Random(seed)
    logs = []
    for _ in range(tables):
        p = play(game, rng.randint(game.MIN_PLAYERS, game.MAX_PLAYERS), {}, rng=rng)
        logs.append(encode_record(p.header) + b"".join(encode_record(r) for r in p.records))
    contents = [read_log(d) for d in logs]
    records = sum(len(c.records) for c in contents)
    advance = getattr(game, "advance", None)
    if advance is None:     # a checkout from before advance
        def advance(state, seat, action, apply=game.apply):
            return apply(state, seat, action)[0]
    # the steps of each log, decoded, for the engine alone
    runs = []
    for c in contents:
        _, state = initial_state(c.header)
        # (c.records types every record, built here once, outside the timed parts)
        steps = []
        for r in c.records:
            if type(r) is ActionAccepted:
                steps.append((r.seat, game.ACTIONS.decode(r.action)))
            elif type(r) is ChanceRecorded:
                steps.append((None, ChanceOutcome(r.purpose, r.permutation)))
        runs.append((state, steps))
    n_steps = sum(len(s) for _, s in runs)

    def frame(i, j):
        for d in logs[i:j]:
            for _, payload in iter_frames(d):
                unpackb(payload, max_size=1 << 24)

    def read(i, j):
        for d in logs[i:j]:
            read_log(d)

    def folded(i, j):
        for c in contents[i:j]:
            g, state = initial_state(c.header)
            # what replay folds: the records as read (``decoded``, where a checkout has it)
            fold(g, state, c.decoded if hasattr(c, "decoded") else c.records)

    def engine(i, j):
        for state, steps in runs[i:j]:
            for seat, action in steps:
                state = advance(state, seat, action)

    clock = time.process_time
    fns = {"frame": frame, "read": read, "fold": folded, "advance": engine}
    total = dict.fromkeys(fns, 0.0)
    for i in range(0, len(logs), chunk):
        best = dict.fromkeys(fns, float("inf"))
        for _ in range(repeat):
            for name, fn in fns.items():
                t0 = clock()
                fn(i, i + chunk)
                best[name] = min(best[name], clock() - t0)
        for name in fns:
            total[name] += best[name]
    per_rec = {k: total[k] / records * 1e6 for k in ("frame", "read")}
    per_step = {k: total[k] / n_steps * 1e6 for k in ("fold", "advance")}
    return {"game": game.NAME, "records": records, "steps": n_steps, **{f"{k}_us": v for k, v in per_rec.items()},
            **{f"{k}_us": v for k, v in per_step.items()},
            "floor": (n_steps / (total["read"] + total["fold"])) / (records / total["frame"])}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--games", default="go-wild,wild-shots")
    ap.add_argument("--tables", type=int, default=200, help="selfplay games per game (default 200)")
    ap.add_argument("--repeat", type=int, default=15, help="runs of each chunk, the fastest counted (default 15)")
    ap.add_argument("--chunk", type=int, default=10, help="logs per timed chunk (default 10)")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    print(f"{'game':<18}{'records':>8}{'steps':>8}{'frame us/rec':>14}{'read us/rec':>13}{'fold us/step':>14}"
          f"{'advance us/step':>17}{'% floor':>9}")
    for name in args.games.split(","):
        r = parts(games()[name], args.tables, args.repeat, args.chunk, args.seed)
        print(f"{r['game']:<18}{r['records']:>8}{r['steps']:>8}{r['frame_us']:>14.2f}{r['read_us']:>13.2f}"
              f"{r['fold_us']:>14.2f}{r['advance_us']:>17.2f}{r['floor']:>9.1%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
