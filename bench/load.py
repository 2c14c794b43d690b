"""Load: wildtable's server under N Run Wild tables of bots, beside the bare stack.

    python bench/load.py --tables 250 --pace 2 --seconds 60            # 1,000 players, one action / 2 s each
    python bench/load.py --tables 50 --pace 0 --seconds 20             # flat out
    python bench/load.py --tables 10 --seconds 5 --json /tmp/load.json  # a quick look
    python bench/load.py --tables 50 --pace 0 --store auto              # files, then PostgreSQL

1. Starts `wildtable serve` as a subprocess (its own data dir, `--durability` as given).
2. Starts load-generator processes (bench/loadgen.py), each driving its share of the
   tables over real WebSockets on 127.0.0.1, while this process samples the server's
   CPU and RSS (and the generators' CPU, to show they are not the bottleneck).
3. Stops the server with SIGTERM and reads every table's log: every seq a client saw
   accepted must be there ("actions lost" counts those that are not).
   With --store, steps 1 to 3 run again with the tables in PostgreSQL (`serve --store`;
   `--store auto` starts a throwaway PostgreSQL cluster as the tests do, tests/pgkit.py),
   and each row says its store's group-commit latency (from the log writer's summary).
4. Runs the same connections and pace against bench/bare_server.py (the bare
   trio-websocket fan-out, same frame sizes) three ways: trio-websocket's send from a
   writer task per connection, the same send awaited by the receiving task, and writing
   exactly as our server does (server/wire.py); reports our figures beside each.

Prints a table and writes the figures as JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# (bench/: the script's own folder is on the path)
from procs import cpu_seconds, cpu_wait_seconds, migrations, pin, rss_bytes, split_cpus
from scraper import Scraper

HERE = Path(__file__).resolve().parent
# what a load generator's thousands of connections from one address need of `wildtable
# serve` (everything else at serve's defaults); every bench/ script that starts one uses it
LOAD_CAPS = ["--rate-limit", "1000", "--max-connections", "10000", "--max-tables", "100000",
             "--max-per-address", "0", "--max-waiting-per-address", "0"]


# (row name, bare_server.py --writes)
BARE_ROWS = (("bare stack", "per-frame"), ("bare direct", "direct"), ("bare on wire", "wire"))
RATIO_KEYS = {"bare stack": "ratio_intents_per_s", "bare direct": "ratio_to_bare_direct",
              "bare on wire": "ratio_to_bare_on_wire"}


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    s = sorted(values)
    return s[min(len(s) - 1, int(q * len(s)))]


def start(cmd: list[str], log_path: Path) -> tuple[subprocess.Popen, str]:
    log = open(log_path, "wb")  # noqa: SIM115 - kept open for the child
    proc = subprocess.Popen(cmd, stderr=log, stdout=subprocess.DEVNULL)
    deadline = time.time() + 20
    while time.time() < deadline:
        found = re.search(rb"serving on (ws://\S+)", log_path.read_bytes())
        if found:
            return proc, found.group(1).decode()
        if proc.poll() is not None:
            raise SystemExit(f"{cmd[0]} exited: {log_path.read_text()}")
        time.sleep(0.05)
    stop(proc, 5)
    raise SystemExit(f"server did not start: {log_path.read_text()}")


def stop(proc: subprocess.Popen, timeout: float = 60) -> None:
    """Stop a server started by ``start`` (bench/fairness.py, commit_path.py, cpu_parts.py and
    side_by_side.py too): SIGTERM, not SIGINT (a background job may have it ignored), and
    SIGKILL if it has not ended within ``timeout`` s."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def drive(urls: str | list[str], args, bare: bool, server_pids: int | list[int], intent_bytes: int = 40) -> dict:
    """The load on the server at ``urls`` (one, or the nodes of a cluster: each generator
    drives one node, in turn, and creates its tables there with `here`); CPU and RSS are
    the sums over ``server_pids``."""
    urls = [urls] if isinstance(urls, str) else urls
    pids = [server_pids] if isinstance(server_pids, int) else server_pids
    count = max(args.generators, len(urls))
    per = [args.tables // count + (1 if i < args.tables % count else 0) for i in range(count)]
    gens = []
    for i, n in enumerate(per):
        url = urls[i % len(urls)]
        cmd = [sys.executable, str(HERE / "loadgen.py"), "--url", url, "--tables", str(n), "--pace", str(args.pace),
               "--seconds", str(args.seconds), "--warmup", str(args.warmup), "--seed", str(args.seed + i),
               "--ramp", str(args.ramp),
               "--group-base", str(i * 100_000), "--intent-bytes", str(intent_bytes)]
        if args.fair_ms is not None:
            cmd += ["--fair-ms", str(args.fair_ms)]
        if bare:
            cmd.append("--bare")
        if len(urls) > 1:
            cmd.append("--here")
        # results go to a file: a pipe would fill up and stall the generator
        out = tempfile.TemporaryFile()
        err = tempfile.TemporaryFile()
        gen = subprocess.Popen(cmd, stdout=out, stderr=err)
        if args.pinned:
            pin(gen.pid, split_cpus()[1])
        gens.append((gen, out, err))
    procs = [g for g, _, _ in gens]

    def rss_sum() -> int:
        return sum(rss_bytes(p) for p in pids)

    def cpu_sum() -> float:
        return sum(cpu_seconds(p) for p in pids)

    def wait_sum() -> float:
        return sum(cpu_wait_seconds(p) for p in pids)

    def moves() -> int:
        return sum(migrations(p) for p in pids)
    rss0 = rss_sum()
    cpu0 = cpu_sum()
    wait0 = wait_sum()
    moves0 = moves()
    gcpu0 = [cpu_seconds(g.pid) for g in procs]
    gcpu_last = list(gcpu0)
    gwait0 = [cpu_wait_seconds(g.pid) for g in procs]
    gwait_last = list(gwait0)
    t0 = time.time()
    peak_rss = rss0
    window = None          # (time, server cpu, generators' cpu, server wait, generators' wait) when measuring starts
    last = None            # the same at the last sample of the measured window
    while any(g.poll() is None for g in procs):
        time.sleep(0.5)
        now = time.time()
        peak_rss = max(peak_rss, rss_sum())
        for i, g in enumerate(procs):
            try:
                gcpu_last[i] = cpu_seconds(g.pid)
                gwait_last[i] = cpu_wait_seconds(g.pid) or gwait_last[i]
            except (FileNotFoundError, ProcessLookupError):
                pass
        sample = (now, cpu_sum(), list(gcpu_last), wait_sum(), list(gwait_last), moves())
        if now - t0 >= args.warmup:
            if window is None:
                window = sample
            elif now - t0 <= args.warmup + args.seconds:
                last = sample
    if window is None or last is None:
        window = (t0, cpu0, gcpu0, wait0, gwait0, moves0)
        last = (time.time(), cpu_sum(), gcpu_last, wait_sum(), gwait_last, moves())
    wall = last[0] - window[0]
    cpu = last[1] - window[1]
    results = []
    for g, out, err in gens:
        g.wait()
        out.seek(0)
        err.seek(0)
        if g.returncode != 0:
            raise SystemExit(f"load generator failed:\n{err.read().decode()[-3000:]}")
        results.append(json.loads(out.read()))
    gen_cpu = [max(0.0, c - c0) for c, c0 in zip(last[2], window[2])]
    gen_wait = [max(0.0, c - c0) for c, c0 in zip(last[4], window[4])]
    elapsed = max(r["elapsed"] for r in results)
    merged = {"result_lat": [], "update_lat": [], "accepted": 0, "rejected": {}, "errors": {}, "updates": 0,
              "update_bytes": 0, "accepted_seqs": {}, "games_finished": 0}
    for r in results:
        merged["result_lat"] += r["result_lat"]
        merged["update_lat"] += r["update_lat"]
        for k in ("accepted", "updates", "update_bytes", "games_finished"):
            merged[k] += r[k]
        for code, n in r["rejected"].items():
            merged["rejected"][code] = merged["rejected"].get(code, 0) + n
        for code, n in r["errors"].items():
            merged["errors"][code] = merged["errors"].get(code, 0) + n
        merged["accepted_seqs"].update(r["accepted_seqs"])
    answered = merged["accepted"] + sum(merged["rejected"].values())
    return {
        "players": args.tables * 4, "tables": args.tables, "pace": args.pace, "seconds": elapsed,
        "intents_per_s": answered / elapsed, "accepted_per_s": merged["accepted"] / elapsed,
        "updates_per_s": merged["updates"] / elapsed,
        "avg_update_bytes": merged["update_bytes"] / max(1, merged["updates"]),
        "result_ms": {q: pct(merged["result_lat"], p) * 1000 for q, p in
                      (("p50", .5), ("p95", .95), ("p99", .99), ("max", 1.0))},
        "last_update_ms": {q: pct(merged["update_lat"], p) * 1000 for q, p in
                           (("p50", .5), ("p95", .95), ("p99", .99), ("max", 1.0))},
        "rejected": merged["rejected"], "errors": merged["errors"],
        "server_cpu_share": cpu / wall, "server_rss_mb": peak_rss / 1e6,
        "server_rss_idle_mb": rss0 / 1e6,
        "rss_per_connection_kb": (peak_rss - rss0) / max(1, args.tables * 4) / 1e3,
        "generator_cpu_share": [c / wall for c in gen_cpu],
        "server_cpu_wait_share": max(0.0, last[3] - window[3]) / wall,
        "generator_cpu_wait_share": [c / wall for c in gen_wait],
        # the server's main thread moved from one CPU to another (its cache left behind)
        "server_migrations_per_s": max(0, last[5] - window[5]) / wall,
        "pinned": args.pinned,
        "games_finished": merged["games_finished"],
        # the figure a loaded machine moves least: CPU the server spent per intent answered
        "server_cpu_us_per_intent": (cpu / wall) / max(1e-9, answered / elapsed) * 1e6,
        "_accepted_seqs": merged["accepted_seqs"],
    }


def lost_actions(data_dir: Path, accepted: dict, store: str | None = None) -> tuple[int, int]:
    from wildtable.protocol.logfmt import ActionAccepted, read_log
    pg = None
    if store is not None:
        from wildtable.server.store_pg import PgStore
        pg = PgStore(store)
    lost = checked = 0
    for table, seqs in accepted.items():
        if pg is not None:
            data = pg.load_records(table) if pg.table_exists(table) else b""
        else:
            path = data_dir / f"{table}.wlog"
            if not path.exists():                   # a finished game the server has forgotten
                path = data_dir / "finished" / f"{table}.wlog"
            data = path.read_bytes() if path.exists() else b""
        logged = {r.seq for r in read_log(data).records if type(r) is ActionAccepted} if data else set()
        for s in seqs:
            checked += 1
            lost += s not in logged
    if pg is not None:
        pg.close()
    return lost, checked


GROUP_COMMITS = re.compile(r"group commits: mean ([\d.]+) ms, max ([\d.]+) ms \((\d+)\)")


def run_node(args, tmp: Path, name: str, store: str | None = None, nodes: int = 1) -> dict:
    """One `wildtable serve` (on files in its own data dir, or on ``store``), or ``nodes``
    of them sharing ``store`` (a cluster: each with its own data dir and node id, each
    load generator on one node), under the load; its row: the load's figures (CPU and RSS
    summed over the nodes), actions lost, and the group-commit latency of the log writers."""
    servers, urls, logs = [], [], []
    try:
        for k in range(nodes):
            suffix = f"{name}-{k + 1}" if nodes > 1 else name
            log_path = tmp / f"server-{suffix}.log"
            cmd = [sys.executable, "-m", "wildtable", "serve", "--port", "0", "--data-dir", str(tmp / f"data-{suffix}"),
                   "--durability", args.durability, *LOAD_CAPS]
            if args.scrape:
                cmd += ["--metrics-port", "0"]
            if store is not None:
                cmd += ["--store", store]
                if nodes > 1:
                    cmd += ["--node-id", f"{name}-{k + 1}"]
            server, url = start(cmd, log_path)
            servers.append(server)
            if args.pinned:
                pin(server.pid, split_cpus()[0])
            urls.append(url)
            logs.append(log_path)
        scraper = Scraper(logs, args.scrape) if args.scrape else None
        try:
            row = drive(urls, args, False, [p.pid for p in servers])
        finally:
            if scraper is not None:
                row_scrapes = scraper.stop()
        if scraper is not None:
            row["scrapes"] = row_scrapes
    finally:
        for server in servers:
            server.send_signal(signal.SIGTERM)
        for server in servers:
            server.wait(timeout=60)
    # the server's full cyclic-GC passes (server/collector.py logs each), with when
    row["gc_full_passes"] = [found for p in logs for found in re.findall(r"(\d\d:\d\d:\d\d)[,.]\d+ \w+ cyclic GC: (.*)",
                                                                          p.read_text())]
    lines = [re.findall(r"log writer: (.*)", p.read_text()) for p in logs]
    lines = [found[-1] for found in lines if found]
    row["log_writer"] = " | ".join(lines) if lines else None
    commits = [GROUP_COMMITS.search(line) for line in lines]
    commits = [(float(f.group(1)), float(f.group(2)), int(f.group(3))) for f in commits if f]
    if commits:
        groups = sum(c[2] for c in commits)
        row["group_commit_ms"] = {"mean": sum(c[0] * c[2] for c in commits) / max(1, groups),
                                  "max": max(c[1] for c in commits), "groups": groups}
    else:
        row["group_commit_ms"] = None
    row["store"] = "postgresql" if store is not None else "files"
    row["nodes"] = nodes
    data = tmp / f"data-{name}"
    lost, checked = lost_actions(data, row.pop("_accepted_seqs"), store)
    row["actions_lost"], row["actions_checked"] = lost, checked
    row["server_exit_code"] = max(server.returncode for server in servers)
    return row


def throwaway_postgres():
    """A PostgreSQL cluster of our own for --store auto (tests/pgkit.py: Debian's
    postgresql, run as the postgres user when we are root); (cluster, DSN)."""
    sys.path.insert(0, str(HERE.parent / "tests"))
    from pgkit import PgCluster
    cluster = PgCluster.initdb()
    try:
        cluster.start()
        return cluster, cluster.create_database()
    except BaseException:
        cluster.remove()
        raise


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tables", type=int, default=250, help="Run Wild tables of 4 bots (default 250 = 1,000 players)")
    ap.add_argument("--players", type=int, default=None, metavar="N",
                    help="N players: N/4 tables (--players 4000 is --tables 1000, the goal of issue #25)")
    ap.add_argument("--pace", type=float, default=2.0, help="seconds between one player's actions, on average; 0 = flat out")
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--ramp", type=float, default=5.0, help="seconds over which tables open")
    ap.add_argument("--warmup", type=float, default=10.0,
                    help="seconds before measuring (tables open, seats fill, first deals); default 10")
    ap.add_argument("--durability", default="always", choices=("always", "batch", "off"))
    ap.add_argument("--generators", type=int, default=1, help="load-generator processes (default 1)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--skip-bare", action="store_true", help="do not run the bare-stack comparison")
    ap.add_argument("--fair-ms", type=int, default=None,
                    help="the Run Wild tables' fair_ms (default: the game's default; 0 = arrival order, no 5 s pings)")
    ap.add_argument("--bare-writes", choices=("all", "per-frame", "direct", "wire"), default="all",
                    help="which bare stacks to run: trio-websocket's per-frame send from a writer task, "
                         "trio-websocket's send awaited by the receiving task, our server's way of writing, or all (default)")
    ap.add_argument("--store", default=None, metavar="DSN",
                    help="also run one node on this PostgreSQL store (serve --store), after the one on files; "
                         "'auto': a throwaway PostgreSQL cluster started for the run (as the tests do)")
    ap.add_argument("--nodes", type=int, default=1, metavar="N",
                    help="with --store and N above 1: also N nodes sharing the store (a cluster on this machine), "
                         "the tables split between them")
    ap.add_argument("--scaling", action="store_true",
                    help="with --store: one run of flat out (--flat-tables tables, pace 0) and 1,000 players (250 "
                         "tables, pace 2) on 1 node on files, 1 node on PostgreSQL and --nodes nodes on PostgreSQL "
                         "(default 2); one table of intents/s, p99, CPU and group-commit latency (no bare stack)")
    ap.add_argument("--flat-tables", type=int, default=50, help="with --scaling: tables of the flat-out load (50)")
    ap.add_argument("--scrape", type=float, default=0.0, metavar="SECONDS",
                    help="serve --metrics-port 0 and GET /metrics every SECONDS during the load (the metrics' cost; "
                    "docs/OPERATING.md)")
    ap.add_argument("--repeat", type=int, default=1, metavar="N",
                    help="run the load N times, one after another (each as without --repeat), and end with "
                         "every run's CPU per intent and p99 side by side: at a load near what the server can "
                         "take, one run's p99 says little (bench/README.md)")
    ap.add_argument("--pin", choices=("off", "on", "both"), default="off",
                    help="on: the server (and each bare server) on a CPU of its own, the load generators on the "
                         "others, as an operator keeps a server on its own core (docs/OPERATING.md); both: each "
                         "run twice, unpinned then pinned, side by side (bench/README.md, \"A core of its own\")")
    ap.add_argument("--json", default="bench/load.json")
    args = ap.parse_args(argv)
    if args.repeat < 1:
        ap.error("--repeat wants 1 or more")
    if args.repeat > 1 and args.scaling:
        ap.error("--repeat is for one load; --scaling runs six")
    if args.scaling and args.store is None:
        ap.error("--scaling wants --store DSN (or auto)")
    if args.nodes < 1:
        ap.error("--nodes wants 1 or more")
    if args.pin != "off" and (args.nodes > 1 or args.scaling):
        ap.error("--pin is for one node: a cluster's nodes would share the one core")
    if args.pin != "off":
        split_cpus()            # two CPUs or more, or a sentence
    args.pinned = args.pin == "on"
    if args.players is not None:
        if args.players < 4 or args.players % 4:
            ap.error(f"--players wants a multiple of 4 (4 players a table), not {args.players}")
        args.tables = args.players // 4

    cluster = None
    store = args.store
    if store == "auto":
        cluster, store = throwaway_postgres()
    runs = []
    try:
        if args.scaling:
            rows = run_scaling(args, store)
        else:
            ways = (False, True) if args.pin == "both" else (args.pinned,)
            for i in range(args.repeat):
                for args.pinned in ways:
                    if args.repeat * len(ways) > 1:
                        print(f"run {i + 1} of {args.repeat}{', pinned' if args.pinned else ''}", flush=True)
                    rows = run_all(args, store)
                    report(args, rows)
                    runs.append(rows)
    finally:
        if cluster is not None:
            cluster.remove()
    if args.scaling:
        report_scaling(args, rows)
    elif len(runs) > 1:
        report_runs(args, runs)
    return 0


def report_runs(args, runs: list[dict]) -> None:
    """Every run's wildtable row side by side, and how many had a last-update p99 under
    50 ms (issue #25's goal at 4,000 players)."""
    print(f"\n{len(runs)} runs, wildtable: intents/s, server CPU, CPU per intent, last-update p99 ms, lost, "
          f"the server's moves between CPUs a second")
    under = {False: [0, 0], True: [0, 0]}
    for i, rows in enumerate(runs, 1):
        w = rows["wildtable"]
        p99 = w["last_update_ms"]["p99"]
        under[w["pinned"]][0] += p99 < 50
        under[w["pinned"]][1] += 1
        print(f"  run {i}{' pinned' if w['pinned'] else '':7}: {w['intents_per_s']:7,.0f} {w['server_cpu_share']:5.0%} "
              f"{w['server_cpu_us_per_intent']:5.0f} us {p99:8.1f} {w['actions_lost']} {w['server_migrations_per_s']:7.0f}")
    for pinned, (n, of) in under.items():
        if of:
            print(f"last-update p99 under 50 ms in {n} of {of} runs{' pinned' if pinned else ''}")
    print(f"load average now {os.getloadavg()[0]:.1f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"args": {k: v for k, v in vars(args).items() if k != "store"}, "python": interpreter(),
                       "runs": runs}, f, indent=1)
        print(f"every run written to {args.json}")


def run_scaling(args, store: str) -> dict:
    """Flat out and 1,000 players, each on one node on files, one node on PostgreSQL and
    ``--nodes`` (2 unless given) nodes on PostgreSQL."""
    nodes = args.nodes if args.nodes > 1 else 2
    loads = (("flat out", args.flat_tables, 0.0), ("1,000 players", 250, 2.0))
    configs = (("1 node, files", None, 1), ("1 node, pg", store, 1), (f"{nodes} nodes, pg", store, nodes))
    rows = {}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        for load, tables, pace in loads:
            for config, where, count in configs:
                run = argparse.Namespace(**{**vars(args), "tables": tables, "pace": pace})
                name = f"{load} / {config}"
                print(f"running {name} ...", file=sys.stderr, flush=True)
                tag = f"{'flat' if pace == 0 else 'k'}-{'files' if where is None else 'pg'}-{count}"
                rows[name] = run_node(run, tmp, tag, where, count)
                rows[name]["load"], rows[name]["config"] = load, config
    return rows


def write_json(args, rows: dict) -> None:
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"args": {k: v for k, v in vars(args).items() if k != "store"}, "python": interpreter(),
                       "rows": rows}, f, indent=1)
        print(f"written to {args.json}")


def report_scaling(args, rows: dict) -> None:
    print(f"{args.seconds:g} s measured after {args.warmup:g} s warm-up, durability {args.durability}, "
          f"{os.cpu_count()} cores")
    head = (f"{'':<30}{'intents/s':>10}{'last-update p50/p99 ms':>24}{'cpu':>7}{'lost':>6}{'gen cpu':>9}"
            f"{'commit mean/max ms':>20}")
    print(head)
    print("-" * len(head))
    for name, r in rows.items():
        upd = r["last_update_ms"]
        gc = r.get("group_commit_ms")
        print(f"{name:<30}{r['intents_per_s']:>10,.0f}{upd['p50']:>14.1f}/{upd['p99']:<9.1f}"
              f"{r['server_cpu_share']:>7.0%}{r['actions_lost']:>6}"
              f"{'+'.join(f'{c:.0%}' for c in r['generator_cpu_share']):>9}"
              + (f"{gc['mean']:>12.2f}/{gc['max']:<7.1f}" if gc else ""))
    flat = {r["config"]: r for r in rows.values() if r["load"] == "flat out"}
    one, many = flat.get("1 node, pg"), next((r for c, r in flat.items() if c.endswith("nodes, pg")), None)
    if one and many:
        print(f"flat out, {many['nodes']} nodes / 1 node on PostgreSQL: {many['intents_per_s'] / one['intents_per_s']:.2f}x "
              f"(server CPU {many['server_cpu_share']:.0%} against {one['server_cpu_share']:.0%}; the load "
              f"generators took {sum(many['generator_cpu_share']):.0%} of a core)")
    write_json(args, rows)


def run_all(args, store: str | None) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        rows = {"wildtable": run_node(args, tmp, "files")}
        if store is not None:
            rows["1 node pg"] = run_node(args, tmp, "pg", store)
            if args.nodes > 1:
                rows[f"{args.nodes} nodes pg"] = run_node(args, tmp, "pgn", store, args.nodes)
        if not args.skip_bare:
            # the bare stack, three ways of writing (bench/bare_server.py): "bare stack" is
            # trio-websocket's own per-frame send from a writer task per connection; "bare
            # direct", the same send awaited by the receiving task itself; "bare on wire"
            # writes exactly as our server does (server/wire.py)
            for name, writes in BARE_ROWS:
                if args.bare_writes not in ("all", writes):
                    continue
                bare, burl = start([sys.executable, str(HERE / "bare_server.py"), "--port", "0", "--update-bytes",
                                    str(int(rows["wildtable"]["avg_update_bytes"])), "--writes", writes], tmp / f"bare-{writes}.log")
                if args.pinned:
                    pin(bare.pid, split_cpus()[0])      # on the core ours had: like with like
                try:
                    b = drive(burl, args, True, bare.pid)
                finally:
                    stop(bare, 30)
                b.pop("_accepted_seqs")
                b["writes"] = writes
                rows[name] = b
    return rows


def interpreter() -> str:
    """The Python every process of the run runs on: its version and build, and the
    interpreter the venv stands on (which build it is: pyenv's, the distribution's)."""
    return f"Python {sys.version.replace(chr(10), ' ')}, {os.path.realpath(sys.executable)}"


def report(args, rows: dict) -> None:
    print(f"{args.tables} tables x 4 players, pace {args.pace or 'flat out'} s, {args.seconds:g} s measured "
          f"after {args.warmup:g} s warm-up, durability {args.durability}")
    # the interpreter's build moves every figure (bench/README.md, "An optimized Python")
    print(f"every server and generator on {interpreter()}")
    if args.pinned:
        server, others = split_cpus()
        print(f"pinned: the server on CPU {min(server)}, the load generators on CPU {', '.join(map(str, sorted(others)))}")
    head = (f"{'':<13}{'intents/s':>10}{'result p50/p99 ms':>20}{'last-update p50/p95/p99/max ms':>34}{'cpu':>6}"
            f"{'rss MB':>8}{'lost':>6}{'gen cpu':>9}{'commit mean/max ms':>20}")
    print(head)
    print("-" * len(head))
    for name, r in rows.items():
        res, upd = r["result_ms"], r["last_update_ms"]
        print(f"{name:<13}{r['intents_per_s']:>10,.0f}{res['p50']:>10.1f}/{res['p99']:<9.1f}"
              f"{upd['p50']:>12.1f}/{upd['p95']:.1f}/{upd['p99']:.1f}/{upd['max']:<8.1f}"
              f"{r['server_cpu_share']:>6.0%}{r['server_rss_mb']:>8.0f}{str(r.get('actions_lost', '-')):>6}"
              f"{'+'.join(f'{c:.0%}' for c in r['generator_cpu_share']):>9}"
              + (f"{gc['mean']:>12.2f}/{gc['max']:<7.1f}" if (gc := r.get("group_commit_ms")) else ""))
    print()
    for name, _ in BARE_ROWS:
        if name in rows:
            ratio = rows["wildtable"]["intents_per_s"] / max(1e-9, rows[name]["intents_per_s"])
            print(f"wildtable / {name} ({rows[name]['writes']} writes), intents per second: {ratio:.0%}")
            rows[RATIO_KEYS[name]] = ratio
    w = rows["wildtable"]
    if w.get("scrapes"):
        sc = w["scrapes"]
        print(f"/metrics scraped {sc['count']} times, every {sc['every_s']:g} s: {sc['mean_bytes']} bytes, "
              f"{sc['mean_ms']:.1f} ms each on average")
    print(f"rejections by code: {w['rejected'] or 'none'}; errors: {w['errors'] or 'none'}; "
          f"actions checked in the logs: {w['actions_checked']}, lost: {w['actions_lost']}")
    print(f"server RSS {w['server_rss_mb']:.0f} MB peak ({w['rss_per_connection_kb']:.0f} kB per connection); "
          f"load generator CPU share: {', '.join(f'{c:.0%}' for c in w['generator_cpu_share'])}")
    waits = [f"{name} {r['server_cpu_wait_share']:.0%} (its generator "
             f"{'+'.join(f'{c:.0%}' for c in r['generator_cpu_wait_share'])})"
             for name, r in rows.items() if isinstance(r, dict) and "server_cpu_wait_share" in r]
    if waits:
        # a server runnable for cpu + wait of the window close to 100% wants a whole core
        print(f"waiting for a CPU (runnable, not running: the main thread's run-queue delay in "
              f"/proc/PID/schedstat, share of the window): {'; '.join(waits)}; load average now "
              f"{os.getloadavg()[0]:.1f}")
    cpu = [f"{name} {r['server_cpu_us_per_intent']:.0f}" for name, r in rows.items()
           if isinstance(r, dict) and "server_cpu_us_per_intent" in r]
    print(f"server CPU per intent (us; share of a core over intents/s, the figure a loaded machine moves "
          f"least): {', '.join(cpu)}")
    moved = [f"{name} {r['server_migrations_per_s']:.0f}" for name, r in rows.items()
             if isinstance(r, dict) and "server_migrations_per_s" in r]
    print(f"the server's main thread moved between CPUs, times a second (/proc/PID/sched; each move leaves "
          f"its cache behind): {', '.join(moved)}")
    print(f"bytes sent per update per seat: {w['avg_update_bytes']:.0f} (the update message; the WebSocket "
          f"header adds 2-4)")
    for name, r in rows.items():
        if not isinstance(r, dict):
            continue            # a ratio stored beside the rows above (RATIO_KEYS), not a row
        for at, line in r.get("gc_full_passes", ()):
            print(f"cyclic GC ({name}) at {at}: {line}")
        if r.get("log_writer"):
            print(f"log writer ({name}, {r['store']}): {r['log_writer']}")
        if r.get("store") == "postgresql":
            print(f"actions checked in the store ({name}): {r['actions_checked']}, lost: {r['actions_lost']}")
    write_json(args, rows)


if __name__ == "__main__":
    sys.exit(main())
