"""What the flood benchmarks share (hint_flood.py, bot_flood.py, replay_flood.py): a
server of this checkout under bench/loadgen.py's load (Run Wild tables of 4 bots), with
something else at work beside it, and the load's own figures from the same run."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Callable, TypeVar

from load import LOAD_CAPS, pct, start, stop    # (bench/: the script's own folder is on the path)

HERE = Path(__file__).resolve().parent
T = TypeVar("T")


def load_args(ap: argparse.ArgumentParser) -> None:
    """The load's options, and how many times each pair of runs is made."""
    ap.add_argument("--tables", type=int, default=250, help="Run Wild tables of 4 bots in the load (250)")
    ap.add_argument("--pace", type=float, default=2.0, help="seconds between one bot's actions (2)")
    ap.add_argument("--seconds", type=float, default=20.0, help="measured seconds (20)")
    ap.add_argument("--warmup", type=float, default=8.0)
    ap.add_argument("--ramp", type=float, default=4.0)
    ap.add_argument("--repeat", type=int, default=2)


def beside_load(args, beside: Callable[[str], T], data: Callable[[Path], None] | None = None,
                flags: tuple[str, ...] = ()) -> tuple[dict, T, list[str]]:
    """Run a server (its data dir first filled by ``data``, if given; ``flags``: serve's
    besides the load's caps) under the load of
    ``args``, and ``beside(url)`` while it runs (it returns when the load's warm-up and
    measured seconds are over). Returns the load's figures (accepted intents/s,
    last-update p50 / p99 / max ms), what ``beside`` returned, and the server's warnings
    and errors once it was serving."""
    with tempfile.TemporaryDirectory() as tmp:
        if data is not None:
            data(Path(tmp) / "data")
        server, url = start([sys.executable, "-m", "wildtable", "serve", "--port", "0", "--data-dir", f"{tmp}/data",
                             *LOAD_CAPS, *flags], Path(tmp) / "server.log")
        try:
            with tempfile.TemporaryFile() as out:
                gen = subprocess.Popen([sys.executable, str(HERE / "loadgen.py"), "--url", url, "--tables",
                                        str(args.tables), "--pace", str(args.pace), "--seconds", str(args.seconds),
                                        "--warmup", str(args.warmup), "--ramp", str(args.ramp)], stdout=out)
                got = beside(url)
                gen.wait()
                out.seek(0)
                load = json.loads(out.read())
        finally:
            stop(server, 30)
            log = (Path(tmp) / "server.log").read_text(errors="replace").split("serving on", 1)[-1].splitlines()
    upd = load["update_lat"]
    figures = {"accepted_per_s": load["accepted"] / load["elapsed"],
               "last_update_ms": {q: pct(upd, p) * 1000 for q, p in (("p50", .5), ("p99", .99), ("max", 1.0))}}
    return figures, got, [line for line in log if " WARNING " in line or " ERROR " in line]


def row(label: str, r: dict, extra: str = "") -> str:
    """One run's line as the three benchmarks print it: the load's last-update p50 / p99 /
    max ms and accepted intents/s, then what the flood did (``extra``)."""
    u = r["last_update_ms"]
    return f"  {label}: {u['p50']:7.1f} / {u['p99']:7.1f} / {u['max']:7.1f}  {r['accepted_per_s']:6.0f}/s{extra}"
