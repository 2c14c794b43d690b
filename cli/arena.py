"""`wildtable arena`: whole games between bots, offline, and what they show with 95% intervals.

    wildtable arena GAME --seats L,L,L,L [--rotate] --games N [--seed S] [--workers W]
                         [--json OUT] [--logs DIR] [--set NAME=VALUE]

Each game is headless/match.py: the real engine and the real bots' decisions, each bot fed
its own seat's view as the wire carries it, Run Wild in simulated time at each level's
reaction times. ``--rotate`` plays every deal once per rotation of the seats (the
duplicate format: each entry of --seats holds every hand once, so the luck of the deal
cancels). Game k's deal and its bots' generators are drawn from (--seed, k) alone, so the
same seed gives the same games, and the same figures, whatever --workers.

Figures (docs/PLAYING.md "Bot levels"; bench/README.md has runs): per entry of --seats,
its share of the wins (a win shared by k counts 1/k) and in Go Fish Wildcard its share
of the asks received; per level, the win share of one seat at that level and how long a
decision took (ms, p50 and p90). Each with its 95% interval, over games (over deals with
--rotate: a deal's rotations are not independent of one another).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import random
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import attrs

from wildtable.headless import games, levels as bot_levels
from wildtable.headless.match import MatchError, play_match
from wildtable.headless.tally import mean_ci, percentile, ratio_ci
from wildtable.protocol.engine import TableConfig, game as find_game
from wildtable.protocol.errors import IllegalAction
from wildtable.protocol.logfmt import encode_record

MAX_GAMES = 1_000_000
MAX_WORKERS = 64


@attrs.frozen
class Plan:
    """What to play: the same Plan and game number always give the same game."""
    game: str
    lineup: tuple[str, ...]           # --seats: a level per entry
    rotate: bool
    seed: int
    settings: dict = attrs.field(factory=dict)
    logs: str | None = None

    def seats_of(self, k: int) -> tuple[str, ...]:
        """The level at each seat in game ``k``: entry j of the lineup sits at seat (j + r) % n,
        r = k's rotation (0 without --rotate)."""
        n = len(self.lineup)
        r = k % n if self.rotate else 0
        return tuple(self.lineup[(s - r) % n] for s in range(n))

    def deal(self, k: int) -> int:
        """Game ``k``'s deal number: the rotations of one deal share it."""
        return k // len(self.lineup) if self.rotate else k


@attrs.frozen
class Result:
    """One game, by lineup entry (not by seat): wins (1/k each), asks received, decision ms."""
    k: int
    wins: tuple[float, ...]
    asked: tuple[int, ...]
    move_ms: tuple[tuple[float, ...], ...]


def _seed(*parts) -> int:
    """A 64-bit seed from the parts (stable across runs, processes and Python versions)."""
    return int.from_bytes(hashlib.sha256(" ".join(map(str, parts)).encode()).digest()[:8], "big")


def play_one(plan: Plan, k: int) -> Result:
    """Play game ``k`` of ``plan`` (in a worker process or here) and write its log if asked."""
    n = len(plan.lineup)
    played = play_match(plan.game, plan.seats_of(k), _seed("deal", plan.seed, plan.deal(k)),
                        _seed("bots", plan.seed, k), plan.settings)
    if plan.logs is not None:
        data = encode_record(played.header) + b"".join(encode_record(r) for r in played.records)
        # 0600, as the server writes every log: it holds every shuffle (docs/LOG-FORMAT.md)
        fd = os.open(Path(plan.logs) / f"game-{k + 1:06d}.wlog", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with open(fd, "wb") as f:
            os.fchmod(fd, 0o600)
            f.write(data)
    r = k % n if plan.rotate else 0
    seat = [(j + r) % n for j in range(n)]      # the seat entry j sat at
    share = 1 / len(played.winners) if played.winners else 0.0
    return Result(k, tuple(share if seat[j] in played.winners else 0.0 for j in range(n)),
                  tuple(played.asked[seat[j]] for j in range(n)),
                  tuple(played.move_ms[seat[j]] for j in range(n)))


def _play_chunk(plan: Plan, ks: list[int]) -> list[Result]:
    return [play_one(plan, k) for k in ks]


def summary(plan: Plan, results: list[Result]) -> dict:
    """The figures of the games played (the JSON --json writes; the table is made of it)."""
    n = len(plan.lineup)
    units: dict[int, list[Result]] = {}
    for res in results:
        units.setdefault(plan.deal(res.k), []).append(res)
    groups = list(units.values())
    asks = plan.game == "go-fish-wildcard"
    by_seat = []
    for j, level in enumerate(plan.lineup):
        row: dict = {"seat": j, "level": level,
                     "win_share": list(mean_ci([sum(r.wins[j] for r in g) / len(g) for g in groups]))}
        if asks:
            row["asked_share"] = list(ratio_ci([sum(r.asked[j] for r in g) for g in groups],
                                               [sum(sum(r.asked) for r in g) for g in groups]))
        by_seat.append(row)
    by_level = {}
    for level in dict.fromkeys(plan.lineup):
        js = [j for j in range(n) if plan.lineup[j] == level]
        per_unit = [sum(r.wins[j] for r in g for j in js) / (len(g) * len(js)) for g in groups]
        ms = [x for r in results for j in js for x in r.move_ms[j]]
        by_level[level] = {"seats": len(js), "win_share": list(mean_ci(per_unit)),
                           "move_ms": {"p50": percentile(ms, 0.5), "p90": percentile(ms, 0.9),
                                       "decisions": len(ms)}}
    return {"game": plan.game, "games": len(results), "deals": len(groups), "seed": plan.seed,
            "rotate": plan.rotate, "seats": list(plan.lineup), "settings": plan.settings,
            "by_seat": by_seat, "by_level": by_level}


def _finite(v):
    """``v`` with every NaN or infinity (no games, one deal) as null: JSON has neither."""
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if isinstance(v, dict):
        return {k: _finite(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_finite(x) for x in v]
    return v


def _pct(pair) -> str:
    mean, half = pair
    if math.isnan(mean):
        return "-"
    return f"{100 * mean:5.1f} ± {100 * half:.1f}" if math.isfinite(half) else f"{100 * mean:5.1f}"


def table(s: dict) -> list[str]:
    """The summary as the lines the command prints."""
    head = (f"{s['game']}: {s['games']} games" + (f" ({s['deals']} deals, each once per rotation)" if s["rotate"]
                                                 else "") + f", seed {s['seed']}; shares in %, with 95% intervals")
    asks = any("asked_share" in r for r in s["by_seat"])
    lines = [head, "", "seat  level    wins" + ("              asks received" if asks else "")]
    for r in s["by_seat"]:
        line = f"{r['seat']:<4}  {r['level']:<7}  {_pct(r['win_share']):<16}"
        if asks:
            line += f"  {_pct(r['asked_share'])}"
        lines.append(line.rstrip())
    lines += ["", "level    seats  wins per seat      move ms p50 / p90"]
    for level, r in s["by_level"].items():
        ms = r["move_ms"]
        lines.append(f"{level:<7}  {r['seats']:<5}  {_pct(r['win_share']):<16}   {ms['p50']:.2f} / {ms['p90']:.2f}")
    return lines


def _progress(done: int, total: int, started: float, tty: bool, last: list) -> None:
    """A progress bar on stderr (a terminal); a line per 10% otherwise."""
    if tty:
        width = 30
        fill = width * done // total
        sys.stderr.write(f"\r[{'#' * fill}{'.' * (width - fill)}] {done}/{total} games, "
                         f"{time.monotonic() - started:.0f} s")
        if done == total:
            sys.stderr.write("\n")
        sys.stderr.flush()
    elif done * 10 // total > last[0] or done == total:
        last[0] = done * 10 // total
        print(f"{done}/{total} games, {time.monotonic() - started:.0f} s", file=sys.stderr, flush=True)


def run(plan: Plan, games_n: int, workers: int, progress=None) -> list[Result]:
    """Play games 0..games_n-1 of ``plan`` on ``workers`` processes; results in game order."""
    progress = progress or (lambda done: None)
    chunk = max(1, min(50, games_n // (workers * 8) or 1))
    batches = [list(range(i, min(i + chunk, games_n))) for i in range(0, games_n, chunk)]
    out: list[Result] = []
    if workers <= 1:
        for b in batches:
            out += _play_chunk(plan, b)
            progress(len(out))
        return out
    with ProcessPoolExecutor(max_workers=workers) as pool:
        try:
            for got in pool.map(_play_chunk, [plan] * len(batches), batches):
                out += got
                progress(len(out))
        except BaseException:
            pool.shutdown(wait=False, cancel_futures=True)
            raise
    return out


def _problem(args) -> str | None:
    """Why these arguments cannot be played (a sentence saying what to do), or None."""
    from wildtable.protocol.engine import games as engines
    known = sorted(engines())
    if args.game not in known:
        return f"there is no game {args.game[:40]!r}; choose one of {', '.join(known)}"
    if not games.has_bot(args.game):
        return f"there is no bot for {args.game}"
    lineup = [x.strip() for x in args.seats.split(",")]
    for level in lineup:
        if not level:
            return "--seats wants a level per seat, comma-separated, e.g. --seats hard,hard,normal,easy"
        if bad := bot_levels.level_problem(level):
            return f"--seats: {bad}"
    engine = engines()[args.game]
    if not engine.MIN_PLAYERS <= len(lineup) <= engine.MAX_PLAYERS:
        return (f"--seats names {len(lineup)} seat(s); {args.game} is for {engine.MIN_PLAYERS} to "
                f"{engine.MAX_PLAYERS} players: one level per seat, e.g. --seats hard,hard,normal,easy")
    if not 1 <= args.games <= MAX_GAMES:
        return f"--games wants 1 to {MAX_GAMES} games"
    if args.rotate and args.games % len(lineup):
        return (f"--rotate plays each deal once per rotation of the {len(lineup)} seats: --games must be a "
                f"multiple of {len(lineup)} (e.g. {args.games - args.games % len(lineup) or len(lineup)})")
    if not 1 <= args.workers <= MAX_WORKERS:
        return f"--workers wants 1 to {MAX_WORKERS} processes (this machine has {os.cpu_count()} cores)"
    if args.logs is not None and Path(args.logs).exists() and not Path(args.logs).is_dir():
        return f"--logs {args.logs}: not a directory"
    return None


def arena_main(args) -> int:
    from wildtable.cli import parse_settings
    if bad := _problem(args):
        print(f"wildtable arena: {bad}", file=sys.stderr)
        return 2
    seed = args.seed if args.seed is not None else random.randrange(2 ** 32)
    if args.logs is not None:
        try:
            os.makedirs(args.logs, mode=0o700, exist_ok=True)
        except OSError as e:
            print(f"wildtable arena: cannot make --logs {args.logs}: {e.strerror or e}", file=sys.stderr)
            return 1
    plan = Plan(args.game, tuple(x.strip() for x in args.seats.split(",")), args.rotate, seed,
                parse_settings(args.set), args.logs)
    try:        # settings are checked here, once, not in every worker
        find_game(plan.game).new_table(TableConfig(plan.game, len(plan.lineup), plan.settings))
    except IllegalAction as e:
        print(f"wildtable arena: --set: {e.reason}", file=sys.stderr)
        return 2
    started, tty, last = time.monotonic(), sys.stderr.isatty(), [0]
    try:
        results = run(plan, args.games, args.workers,
                      lambda done: _progress(done, args.games, started, tty, last))
    except KeyboardInterrupt:
        print("\nwildtable arena: interrupted", file=sys.stderr)
        return 130
    except (IllegalAction, MatchError) as e:
        print(f"wildtable arena: {getattr(e, 'reason', None) or e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"wildtable arena: cannot write a log to {args.logs}: {e.strerror or e}", file=sys.stderr)
        return 1
    s = summary(plan, results)
    print("\n".join(table(s)))
    if args.logs is not None:
        print(f"logs written to {args.logs} (game-000001.wlog ...; wildtable replay LOG --verify checks one)")
    if args.json:
        try:
            Path(args.json).write_text(json.dumps(_finite(s), indent=1) + "\n")
        except OSError as e:
            print(f"wildtable arena: cannot write --json {args.json}: {e.strerror or e}", file=sys.stderr)
            return 1
    return 0
