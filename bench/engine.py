"""Engine and replay speed, per game.

    python bench/engine.py [--games run-wild,...] [--seconds 3] [--clock cpu|wall] [--json bench/engine.json]

For each game: random legal play (actions applied per second, engine only: the time in
``apply``), then the log of those games replayed three ways:
  frames   CRC check + msgpack decode of every frame (the floor: no rules at all);
  decode   frames + record/action decoding into typed values;
  replay   the full fold: decode, apply every record, check every state hash;
  % floor  replay actions/s over frames records/s (issue #25 asks for 40%).
Each of the three is the best of five whole passes over the logs, the three kinds of pass
taken in turn (frames, decode, replay, frames, ...), so that the floor and replay are timed
in the same stretch of the run (bench/README.md, "Replay: round starts and game ends in the
runs").
Prints a table and writes the same figures as JSON. Times are this process's CPU time
(``--clock wall``: the wall clock), so that other work on the same cores skews them less.
The script uses only the package's public functions: run with another checkout's Python
(its venv), it measures that checkout's code, for before/after pairs.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time

import attrs

from wildtable.protocol.codec import unpackb
from wildtable.protocol.engine import games
from wildtable.protocol.logfmt import ActionAccepted, encode_record, iter_frames, read_log
from wildtable.protocol.replay import replay
from wildtable.selfplay import play


def passes(game, logs: list[bytes], actions: list | None = None) -> tuple:
    """The three passes over ``logs`` (bench/engine_noise.py times them too): the floor (CRC
    and msgpack of every frame), decoding (records and actions typed), and replay (each
    pass's actions and chances counted into ``actions[0]``)."""
    count = actions if actions is not None else [0]

    def frames():
        for d in logs:
            for _, payload in iter_frames(d):
                unpackb(payload, max_size=1 << 24)

    def decode():
        for d in logs:
            for r in read_log(d).records:
                if type(r) is ActionAccepted:
                    game.ACTIONS.decode(r.action)

    def full():
        count[0] = 0
        for d in logs:
            res = replay(read_log(d))
            count[0] += res.actions + res.chances

    return frames, decode, full


def server_record(r, k: int):
    """Action record ``r`` (the ``k``th of its log) with what a server's carries at a table
    ordering by send time: the intent's id, its receive time, delay, send time and hold (a
    seat's), or who acted (the table's); docs/LOG-FORMAT.md, 2a. Other records as they are."""
    if type(r) is not ActionAccepted:
        return r
    if r.seat is None:
        return attrs.evolve(r, by="table")
    t = 1_796_000_000.0 + k / 10
    return attrs.evolve(r, intent=k, recv=t, delay=1e-5 * (k % 7), sent=t - 1e-5 * (k % 7), hold=2e-5)


def bench_game(game, seconds: float, seed: int, clock=time.process_time, server: bool = False) -> dict:
    rng = random.Random(seed)
    apply_time = 0.0
    applied = 0
    logs = []
    deadline = clock() + seconds
    n_games = 0
    while clock() < deadline or n_games == 0:
        seats = rng.randint(game.MIN_PLAYERS, game.MAX_PLAYERS)
        timer = [0.0, 0]

        def on_step(before, after, action, seat, req, events):
            # time one more apply of the same step, on the same state: the engine alone
            t0 = clock()
            game.apply(before, seat, action)
            timer[0] += clock() - t0
            timer[1] += 1

        p = play(game, seats, {}, rng=rng, on_step=on_step)
        apply_time += timer[0]
        applied += timer[1]
        records = [server_record(r, k) for k, r in enumerate(p.records)] if server else p.records
        logs.append(encode_record(p.header) + b"".join(encode_record(r) for r in records))
        n_games += 1
    data_records = sum(len(read_log(d).records) for d in logs)
    total_bytes = sum(len(d) for d in logs)

    def timed(fns, repeat=5):
        # each figure the best of ``repeat`` passes, the three kinds of pass in turn: the
        # machine's speed drifts over seconds, and the floor and replay timed in separate
        # stretches put that drift into their ratio (a whole pass is 0.1 to 0.3 s)
        best = [float("inf")] * len(fns)
        for _ in range(repeat):
            for k, fn in enumerate(fns):
                t0 = clock()
                fn()
                best[k] = min(best[k], clock() - t0)
        return best

    actions = [0]
    frames, decode, full = passes(game, logs, actions)
    t_frames, t_decode, t_replay = timed((frames, decode, full))
    steps = actions[0]
    return {
        "game": game.NAME, "games": n_games, "steps": steps, "records": data_records, "log_bytes": total_bytes,
        "engine_actions_per_s": applied / apply_time if apply_time else 0.0,
        "frames_records_per_s": data_records / t_frames,
        "decode_records_per_s": data_records / t_decode,
        "replay_actions_per_s": steps / t_replay,
        "replay_mb_per_s": total_bytes / t_replay / 1e6,
        # what issue #25 asks to reach 40%: replayed actions/s against frame records/s
        "replay_vs_floor": (steps / t_replay) / (data_records / t_frames),
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--games", default=",".join(sorted(games())))
    ap.add_argument("--seconds", type=float, default=3.0, help="random play per game (default 3)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", default="bench/engine.json")
    ap.add_argument("--clock", choices=("cpu", "wall"), default="cpu",
                    help="time with this process's CPU time (default: other work on the same cores does not "
                         "count) or with the wall clock")
    ap.add_argument("--server-fields", action="store_true",
                    help="log each action record with the fields a server adds (intent id, receive time, and a "
                         "fair table's delay, send time and hold), as the logs of `wildtable serve` are")
    args = ap.parse_args(argv)
    clock = time.process_time if args.clock == "cpu" else time.perf_counter
    rows = [bench_game(games()[name], args.seconds, args.seed, clock, args.server_fields)
            for name in args.games.split(",")]
    head = f"{'game':<18}{'games':>6}{'steps':>9}{'engine act/s':>14}{'frames rec/s':>14}{'decode rec/s':>14}{'replay act/s':>14}{'% floor':>9}"
    print(head)
    print("-" * len(head))
    for r in rows:
        print(f"{r['game']:<18}{r['games']:>6}{r['steps']:>9}{r['engine_actions_per_s']:>14,.0f}"
              f"{r['frames_records_per_s']:>14,.0f}{r['decode_records_per_s']:>14,.0f}{r['replay_actions_per_s']:>14,.0f}"
              f"{r['replay_vs_floor']:>9.0%}")
    out = {"python": sys.version.split()[0], "clock": args.clock, "rows": rows}
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)
        print(f"\nwritten to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
