"""The server's cost of one update's frames, per way of building them (issue #25).

    python bench/delivery.py [--game run-wild] [--steps 3000] [--seats 4] [--repeat 15] [--json FILE]
    python bench/delivery.py --tables 1000 --steps 60000 --repeat 5    # the working set's cost

Random play of a game (each has public_view) gives the states of real updates; for each, the frames of every seat
and one spectator are built three ways, the way server/table.py delivers:
  whole    each view built and encoded whole (a game without public_view: all but
           Run Wild before issue #25);
  shared   the public part built and encoded once, each private part for every seat
           (messages.SharedUpdate.frame: the delivery before issue #25);
  kept     the same, each seat's encoded private part kept while its private_key is
           unchanged (server/delivery.py PrivateParts: whole views now);
  rebuilt  a patch against the update before for every seat and the spectator
           (server/delivery.py UpdateFrames, a whole view every FULL_EVERY, protocol
           version 2), the public view built whole at every update (before issue
           #25's public_view_from);
  patches  the same, the public view built from the last one where the game can
           (public_view_from: Run Wild), sharing what did not change: the delivery now.
With ``--tables K`` (K > 1) the updates are cut into K tables' runs of consecutive
updates, and their patches built two more ways: ``one by one`` (each table's run whole,
then the next's) and ``interleaved`` (an update of each table in turn, as a server with
K tables in play builds them): the same frames, the difference is what the K tables'
views cost when they no longer stay in the CPU's caches (bench/README.md, "Where #25
stands, the tenth session").
Times are the thread's CPU time (best of --repeat, alternating the ways), so other
processes on the machine slow the figures little. Also prints the bytes per update per
seat, whole and patched.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
import types

from wildtable.protocol.engine import games
from wildtable.protocol.messages import SharedUpdate, Update, encode
from wildtable.selfplay import play
from wildtable.server.delivery import PrivateParts, UpdateFrames


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--game", default="run-wild", help="run-wild (default), go-wild, go-fish-wildcard, wild-shots")
    ap.add_argument("--steps", type=int, default=3000, help="updates (states of random play) to build (3000)")
    ap.add_argument("--seats", type=int, default=4)
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--tables", type=int, default=1,
                    help="also build the patches of K tables' runs of updates one by one and interleaved (1: not)")
    ap.add_argument("--json", default="")
    args = ap.parse_args(argv)
    game = games()[args.game]
    steps: list = []
    rng = random.Random(args.seed)
    while len(steps) < args.steps:
        play(game, args.seats, {}, rng=rng,
             on_step=lambda before, after, action, seat, req, events: steps.append((after, tuple(events))))
    audience = (*range(args.seats), None)

    def whole() -> int:
        n = 0
        for seq, (state, events) in enumerate(steps):
            for seat in audience:
                n += len(encode(Update(seq, events, game.view(state, seat))))
        return n

    def shared() -> int:
        n = 0
        for seq, (state, events) in enumerate(steps):
            s = SharedUpdate(seq, events, game.public_view(state))
            for seat in audience:
                n += len(s.frame(game.private_view(state, seat)))
        return n

    def kept() -> int:
        n = 0
        parts = PrivateParts(game)
        for seq, (state, events) in enumerate(steps):
            s = SharedUpdate(seq, events, game.public_view(state))
            for seat in audience:
                n += len(s.frame_encoded(parts.part(state, seat)))
        return n

    conns = [object() for _ in range(args.seats)]
    spectators = [object()]

    # the game without public_view_from: its public view built whole at every update
    rebuilt_game = types.ModuleType(game.__name__)
    rebuilt_game.__dict__.update({k: v for k, v in vars(game).items() if k != "public_view_from"})

    def patching(g):
        def run() -> int:
            n = 0
            frames = UpdateFrames(g)
            for seq, (state, events) in enumerate(steps, 1):
                for _, data in frames.frames(seq, events, state, conns, spectators):
                    n += len(data)
            return n
        return run

    rebuilt, patches = patching(rebuilt_game), patching(game)

    ways = {"whole": whole, "shared": shared, "kept": kept, "rebuilt": rebuilt, "patches": patches}
    if args.tables > 1:
        k = args.tables
        per = len(steps) // k
        if per < 2:
            ap.error(f"--steps {args.steps} gives {k} tables fewer than 2 updates each: ask for more steps")
        runs = [steps[i * per:(i + 1) * per] for i in range(k)]
        table_conns = [[object() for _ in range(args.seats)] for _ in range(k)]

        def tables(order):
            def run() -> int:
                n = 0
                frames = [UpdateFrames(game) for _ in range(k)]
                for t, i in order:
                    state, events = runs[t][i]
                    for _, data in frames[t].frames(i + 1, events, state, table_conns[t], spectators):
                        n += len(data)
                return n
            return run

        ways["one by one"] = tables([(t, i) for t in range(k) for i in range(per)])
        ways["interleaved"] = tables([(t, i) for i in range(per) for t in range(k)])
    best = {k: float("inf") for k in ways}
    sizes = {}
    for _ in range(args.repeat):
        for name, fn in ways.items():
            t0 = time.thread_time()
            sizes[name] = fn()
            best[name] = min(best[name], time.thread_time() - t0)
    patched = sizes.pop("patches")
    assert sizes.pop("rebuilt") == patched, "public_view_from changed the patches"
    if args.tables > 1:
        assert sizes.pop("one by one") == sizes.pop("interleaved"), "the order of the tables changed the frames"
    assert len(set(sizes.values())) == 1, sizes       # the same bytes every way but patches
    counted = {"one by one": per * args.tables, "interleaved": per * args.tables} if args.tables > 1 else {}
    per_update = {k: v / counted.get(k, len(steps)) * 1e6 for k, v in best.items()}
    per_seat_bytes = sizes["kept"] / len(steps) / len(audience)
    per_seat_patched = patched / len(steps) / len(audience)
    print(f"{game.NAME}, {args.seats} seats and a spectator, {len(steps)} updates of random play; CPU us per update "
          f"(all {len(audience)} frames), best of {args.repeat}:")
    for name, us in per_update.items():
        print(f"  {name:<12}{us:8.1f} us   {per_update['whole'] / us:5.2f}x whole"
              + (f" ({args.tables} tables' patches)" if name in counted else ""))
    print(f"bytes per update per seat: whole {per_seat_bytes:.0f}, patches {per_seat_patched:.0f} "
          f"({per_seat_patched / per_seat_bytes:.2f})")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"args": vars(args), "us_per_update": per_update, "bytes_per_update_per_seat": per_seat_bytes,
                       "patched_bytes_per_update_per_seat": per_seat_patched},
                      f, indent=1)
        print(f"written to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
