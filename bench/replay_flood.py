"""Does asking the replay viewer step after step slow everyone else's table? (server/replays.py)

    python bench/replay_flood.py [--flooders 2] [--tables 250] [--pace 2] [--seconds 20] [--repeat 2]
                                 [--logs DIR] [--games 105] [--rounds 40]

Runs ``wildtable serve`` (this checkout's) under bench/loadgen.py's load (Run Wild tables
of 4 bots, an action every ``--pace`` s each), twice a repeat: alone, then with
``--flooders`` HTTP clients beside it, each asking ``/replay/TABLE.json?step=N&view=V``
again and again, one at a time, as fast as the answers come (what anybody who reaches the
game port may do). They ask as an attacker would: every finished game in turn (together
more bytes of log than the server keeps timelines for, so each one is folded again), a far
step, and the views in turn (all, spectator, each seat). Prints the load's last-update
p50 / p99 / max and accepted intents/s for each, and the replay answers/s.

The finished games are the server's own: once, into ``--logs`` (kept for the next runs;
~24 MiB, over the 16 MiB of log whose timelines the server keeps), ``--games`` Run Wild
games of ``--rounds`` rounds are played to their end by 4 easy bots each
(headless/bots.py, no delay) on a server of this checkout; every measured run gets its
own server and temporary data dir with copies of those logs in its finished/.
"""

from __future__ import annotations

import argparse
import http.client
import random
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

import trio

from beside_load import beside_load, load_args, row    # (bench/: the script's own folder is on the path)
from load import LOAD_CAPS, start, stop

from wildtable.headless.bots import Bot
from wildtable.headless.net import connect
from wildtable.protocol import messages as m

VIEWS = ("all", "spectator", "0", "1", "2", "3")


async def _one_game(url: str, rounds: int, k: int) -> None:
    async with connect(url, f"host{k}") as host:
        await host.send(m.CreateTable("run-wild", 4, {"rounds": rounds, "fair_ms": 0}))
        table = (await host.receive_until(lambda x: isinstance(x, m.TableCreated))).table
    async with trio.open_nursery() as nursery:
        for i in range(4):
            nursery.start_soon(Bot(url, table, f"g{k}b{i}", delay=0.0, level="easy", verbose=False).run)


def make_logs(logs: Path, games: int, rounds: int, parallel: int) -> None:
    """``games`` more finished Run Wild games, played on a server of this checkout, into ``logs``."""
    with tempfile.TemporaryDirectory() as tmp:
        _make_logs(Path(tmp), logs, games, rounds, parallel)


def _make_logs(tmp: Path, logs: Path, games: int, rounds: int, parallel: int) -> None:
    data = tmp / "data"
    server, url = start([sys.executable, "-m", "wildtable", "serve", "--port", "0", "--data-dir", str(data),
                         *LOAD_CAPS], tmp / "server.log")

    async def main() -> None:
        limit = trio.CapacityLimiter(parallel)

        async def one(k: int) -> None:
            async with limit:
                await _one_game(url, rounds, k)
        async with trio.open_nursery() as nursery:
            for k in range(games):
                nursery.start_soon(one, k)
    try:
        t0 = time.monotonic()
        trio.run(main)
    finally:
        stop(server, 60)
    for f in sorted(data.glob("*.wlog")) + sorted(data.glob("finished/*.wlog")):
        shutil.copy2(f, logs / f.name)
    print(f"  {games} games of {rounds} rounds played in {time.monotonic() - t0:.0f} s", flush=True)


def _flooder(port: int, tables: list[tuple[str, int]], k: int, until: float, answers: dict) -> None:
    rng = random.Random(k)
    i = k * len(tables) // 2
    while time.monotonic() < until:
        table, steps = tables[i % len(tables)]
        step = rng.randrange(steps // 2, steps)         # far: from the last state kept, 31 records at most
        view = VIEWS[(i + k) % len(VIEWS)]
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        try:
            conn.request("GET", f"/replay/{table}.json?step={step}&view={view}")
            r = conn.getresponse()
            r.read()
            answers[r.status] = answers.get(r.status, 0) + 1
        finally:
            conn.close()
        i += 1


def _flood(port: int, tables: list[tuple[str, int]], flooders: int, seconds: float) -> dict:
    answers: dict = {}
    until = time.monotonic() + seconds
    threads = [threading.Thread(target=_flooder, args=(port, tables, k, until, answers)) for k in range(flooders)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return answers


def run(args, flooders: int, logs: list[Path]) -> dict:
    def data(path: Path) -> None:
        finished = path / "finished"
        finished.mkdir(parents=True, mode=0o700)
        for f in logs:
            shutil.copy2(f, finished / f.name)

    def beside(url: str) -> dict:
        tables = [(f.name[:-len(".wlog")], args.steps[f.name]) for f in logs]
        port = int(url.rsplit(":", 1)[1])
        return _flood(port, tables, flooders, args.warmup + args.seconds) if flooders else {}

    load, answers, _ = beside_load(args, beside, data)
    return {"flooders": flooders, **load, "answers": answers,
            "answers_per_s": sum(answers.values()) / (args.warmup + args.seconds)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--flooders", type=int, default=2, help="clients asking replay step after step (2)")
    load_args(ap)
    ap.add_argument("--logs", type=Path, default=Path(tempfile.gettempdir()) / "wildtable-replay-flood",
                    help="where the finished games' logs are kept between runs (made if missing)")
    ap.add_argument("--games", type=int, default=105, help="finished games: played into --logs if it has fewer (105)")
    ap.add_argument("--rounds", type=int, default=40, help="rounds of each of those games (40)")
    ap.add_argument("--parallel", type=int, default=10, help="games played at once while making them (10)")
    args = ap.parse_args(argv)
    args.logs.mkdir(parents=True, exist_ok=True)
    missing = args.games - len(list(args.logs.glob("*.wlog")))
    if missing > 0:
        make_logs(args.logs, missing, args.rounds, args.parallel)
    logs = sorted(args.logs.glob("*.wlog"))
    from wildtable.protocol.logfmt import read_log
    args.steps = {f.name: len(read_log(f.read_bytes()).records) + 1 for f in logs}
    total = sum(f.stat().st_size for f in logs)
    print(f"{len(logs)} finished games, {total / 2**20:.1f} MiB of log; {args.tables} tables x 4 players at pace "
          f"{args.pace:g} s, {args.seconds:g} s measured; last-update p50 / p99 / max ms, accepted intents/s, "
          "replay answers/s (their statuses)")
    for _ in range(args.repeat):
        for k in (0, args.flooders):
            r = run(args, k, logs)
            print(row(f"{k} flooders", r, f"  {r['answers_per_s']:.1f} answers/s {r['answers']}" if k else ""), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
