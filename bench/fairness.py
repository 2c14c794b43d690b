"""Fairness: who wins a Run Wild race, by arrival order and by fair order (issues #16, #24).

    python bench/fairness.py                          # honest: 2 vs 60 ms, 2/30/60/90 ms; then each liar vs an honest player
    python bench/fairness.py --delays 2,60 --races 300
    python bench/fairness.py --delays 2:pong200,2     # one run: a liar holding pongs 200 ms vs an honest player, both 2 ms away
    python bench/fairness.py --legs 1                 # order by send time alone (see below)

A player is DELAY[:LIE], its one-way delay in ms and how it lies (issue #24's cheats; the
server sees exactly the bytes such a modified client sends):
    pong200, pong1s   every pong held 200 ms, 1 s (the proxy holds its pong frames)
    nopong            no pong ever (the child server's pong timeout is raised for it, else
                      it is closed after 15 s: that is the defence at the default)
    batch             pongs held 200 ms, and its intents sent two at a time (the take
                      twice, back to back)
    hold50            pongs held 200 ms, and its intents held 50 ms then sent two at a
                      time: arriving later stretches the causality bound, the late pongs
                      the ping bound (under the rule before issue #24 it won ~90%)
The default runs each liar against an honest player at the same distance (2 ms): a rule
no client can game gives it the honest share, 50% (less for hold50, whose hold costs it
50 ms: it may gain nothing from it).

Bots with the same reaction-time distribution (normal, --reaction-ms mean, --reaction-sd
spread) race for the same card: the spare of a four-card set on the table (seat 0 is
dealt the four 5s by a scripted deck and melds them). Every bot, on seeing the set whole
in an update, waits its reaction time and sends `take`; the server accepts one and
refuses the others; the winner adds the card back, which starts the next race.

Each player's connection goes through a delaying TCP proxy on 127.0.0.1 (tests/delayproxy.py)
that forwards each direction's bytes a fixed one-way delay late: the server's WebSocket
ping measures that delay as it would over a network (this machine's kernel has no netem,
so no kernel-level delay is possible, and the kernel's own TCP round trip would not see a
proxy's delay: the proxy stands for that network the way netem would, see
tests/delayproxy.py `kernel_delay`). The server runs in a child process
(`--serve`, with the scripted deck) and plays every table of both modes at once:
half the tables with fair_ms 0 (arrival order), half with --fair-ms (fair order), so both
modes see the same machine.

Printed per player: its one-way delay, its share of the races by arrival and by fair
order (the fair share is 1/players), and its intent-to-result time (from sending `take`
to reading the answer) p50/p99 in each mode.

`--legs 1` runs the server with fairorder.LEGS = 1: intents ordered by their send time
alone (arrival - delay), which leaves the nearer player the head start of the way out
(it saw the set one delay earlier); the default 2 orders by arrival - 2 x delay.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
from contextlib import AsyncExitStack
from pathlib import Path

import trio

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))       # tests/delayproxy.py

FIVES = (4, 16, 28, 40)      # card ids of the four 5s; the race is for 40
CARD = 40
LIES = {"": 0.0, "pong200": 0.2, "pong1s": 1.0, "nopong": float("inf"), "batch": 0.2, "hold50": 0.2}   # -> pong hold (s)
INTENT_HOLD = {"batch": 0.0, "hold50": 0.050}     # a batching liar's intents: held (s), then sent two at a time


def scripted(size: int) -> tuple[int, ...]:
    """The chance source of the child server: seat 0 deals; each deck gives seat 0 the
    four 5s (deck positions 1, 3, 5, 7 go to seat 0's hand at a table of two; at four,
    positions 3, 7, 11, 15)."""
    if size != 72:
        return tuple(range(size))
    return _deck


_deck: tuple[int, ...] = tuple(range(72))


def deck_for(seats: int) -> tuple[int, ...]:
    """Round 1's deck: seat 0's hand gets the four 5s (seat 0 deals, the deal goes round
    from its left, so seat 0 takes every ``seats``-th card, the last of each round)."""
    positions = [seats * (k + 1) - 1 for k in range(4)]
    rest = iter(c for c in range(72) if c not in FIVES)
    fives = iter(FIVES)
    return tuple(next(fives) if pos in positions else next(rest) for pos in range(72))


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    s = sorted(values)
    return s[min(len(s) - 1, int(q * len(s)))]


# ------------------------------------------------------------------ the child server

def serve(args) -> int:
    import wildtable.server.connection as connection_mod
    from wildtable.server.app import Server
    try:
        from wildtable.server.config import ServerConfig
    except ImportError:
        ServerConfig = None
    global _deck
    connection_mod.PONG_TIMEOUT = args.pong_timeout
    _deck = deck_for(args.seats)
    if args.old:
        # the tree before issue #24 (bench this file from it with --old): no kernel hook
        import wildtable.server.table as table_mod
        table_mod.FAIR_LEGS = args.legs
        hook = {}
    else:
        from wildtable.server import fairorder
        from delayproxy import kernel_delay
        fairorder.LEGS = args.legs
        hook = {"kernel_delay": kernel_delay}

    settings = dict(rate_limit=1000.0, rate_burst=1000.0, max_per_address=0, max_waiting_per_address=0,
                    durability=args.durability)

    async def run():
        if ServerConfig is None:        # --old: a tree from before ServerConfig (issue #23) took them as keywords
            server = Server(args.data, chance=scripted, **settings, **hook)
        else:
            server = Server(ServerConfig(data_dir=args.data, **settings), chance=scripted, **hook)
        async with trio.open_nursery() as nursery:
            port = await nursery.start(server.run, "127.0.0.1", 0)
            print(f"serving on ws://127.0.0.1:{port}", file=sys.stderr, flush=True)
    trio.run(run)
    return 0


# ------------------------------------------------------------------ the races

class Stats:
    def __init__(self, seats: int):
        self.wins = [0] * seats
        self.races = 0
        self.latency: list[list[float]] = [[] for _ in range(seats)]


def _whole(view: dict, meld_id: int | None) -> dict | None:
    for md in view.get("melds", ()):
        if (meld_id is None or md["id"] == meld_id) and sorted(md["cards"]) == sorted(FIVES):
            return md
    return None


async def run_table(urls: list[str], names: list[str], fair_ms: int, races: int, stats: Stats, rng: random.Random,
                    args, lies: list[str]) -> None:
    from wildtable.headless.net import connect
    from wildtable.protocol import messages as m

    seats = len(urls)
    async with AsyncExitStack() as stack:
        conns = [await stack.enter_async_context(connect(url, name)) for url, name in zip(urls, names)]
        await conns[0].send(m.CreateTable("run-wild", seats, {"fair_ms": fair_ms, "idle_timeout": 3600}))
        made = await conns[0].receive_until(lambda x: isinstance(x, (m.TableCreated, m.Error)))
        assert isinstance(made, m.TableCreated), made
        for i, c in enumerate(conns):
            await c.send(m.Join(made.table, i))
            j = await c.receive_until(lambda x: isinstance(x, (m.Joined, m.Error)))
            assert isinstance(j, m.Joined), j
        next_id = [1] * seats

        async def act(i: int, action: dict):
            iid = next_id[i]
            next_id[i] += 1
            await conns[i].send(m.Intent(iid, action))
            return await conns[i].receive_until(lambda x: isinstance(x, (m.Accepted, m.Rejected)) and x.intent == iid,
                                                timeout=30)

        for i in range(seats):
            a = await act(i, {"kind": "ready"})
            assert isinstance(a, m.Accepted), a
        for c in conns:
            await c.receive_until(lambda x: isinstance(x, m.Update) and x.view.get("phase") == "playing", timeout=30)
        await trio.sleep(args.settle)        # the server's delay estimates (5 pings 0.1 s apart on sitting down)
        a = await act(0, {"kind": "meld", "cards": list(FIVES)})
        assert isinstance(a, m.Accepted), a
        # Every bot reads its connection all the time, so its reaction starts when the
        # update reaches it (not when another bot's answer came). The winner of a race adds
        # the card back once every bot has its answer: that update starts the next race.
        results = [[None] * seats for _ in range(races)]
        answered = [trio.Event() for _ in range(races)]

        async def bot(i: int):
            start = a.seq
            for k in range(races):
                u = await conns[i].receive_until(
                    lambda x: isinstance(x, m.Update) and x.seq >= start and _whole(x.view, None) is not None,
                    timeout=60)
                start = u.seq + 1
                meld_id = _whole(u.view, None)["id"]
                await trio.sleep(max(0.0, rng.gauss(args.reaction_ms, args.reaction_sd) / 1000))
                t0 = trio.current_time()
                take = {"kind": "take", "meld": meld_id, "card": CARD}
                if lies[i] in INTENT_HOLD:
                    # held, then sent twice back to back
                    await trio.sleep(INTENT_HOLD[lies[i]])
                    first = next_id[i]
                    next_id[i] += 2
                    await conns[i].send(m.Intent(first, take))
                    await conns[i].send(m.Intent(first + 1, take))
                    got = []
                    while len(got) < 2:
                        got.append(await conns[i].receive_until(
                            lambda x: isinstance(x, (m.Accepted, m.Rejected)) and x.intent in (first, first + 1),
                            timeout=30))
                    won = any(isinstance(x, m.Accepted) for x in got)
                else:
                    won = isinstance(await act(i, take), m.Accepted)
                results[k][i] = (won, trio.current_time() - t0)
                if all(r is not None for r in results[k]):
                    answered[k].set()
                if won and k + 1 < races:
                    await answered[k].wait()
                    added = await act(i, {"kind": "add", "meld": meld_id, "card": CARD})
                    assert isinstance(added, m.Accepted), added

        async with trio.open_nursery() as bots:
            for i in range(seats):
                bots.start_soon(bot, i)
        # Leave before closing: no more pings then. (A ping that reaches a client while
        # it closes is ignored by headless/wire.py; trio-websocket, the client's transport
        # before, failed on it: LocalProtocolError in LOCAL_CLOSING, its issue #184.)
        for c in conns:
            await c.send(m.Leave())
            await c.receive_until(lambda x: isinstance(x, m.Left), timeout=30)
        for res in results:
            won = [i for i, r in enumerate(res) if r[0]]
            assert len(won) == 1, res
            stats.races += 1
            stats.wins[won[0]] += 1
            for i, r in enumerate(res):
                stats.latency[i].append(r[1])


async def bench(args, url: str) -> dict:
    from delayproxy import DelayProxy

    delays = args.delays
    port = int(url.rsplit(":", 1)[1])
    modes = {"arrival": Stats(len(delays)), "fair": Stats(len(delays))}
    rng = random.Random(args.seed)
    async with trio.open_nursery() as nursery:
        urls = []
        for d, lie in zip(delays, args.lies):
            p = await nursery.start(DelayProxy(port, d / 1000, LIES[lie]).run)
            urls.append(f"ws://127.0.0.1:{p}")
        per_table = -(-args.races // args.tables)
        async with trio.open_nursery() as tables:
            for k in range(args.tables):
                # the player of each delay sits at a different seat at each table, so no
                # seat (seat 0 melds, the deal) is tied to one delay
                shift = k % len(delays)
                order = urls[shift:] + urls[:shift]
                lies = args.lies[shift:] + args.lies[:shift]
                for mode, fair_ms in (("arrival", 0), ("fair", args.fair_ms)):
                    st = Stats(len(delays))
                    tables.start_soon(_one, order, lies, fair_ms, per_table, st, modes[mode], shift,
                                      random.Random(rng.random()), args)
        nursery.cancel_scope.cancel()
    for mode, s in modes.items():         # every table played to the end
        assert s.races == per_table * args.tables, (mode, s.races)
    return modes


async def _one(order, lies, fair_ms, races, st: Stats, into: Stats, shift: int, rng, args) -> None:
    n = len(order)
    names = [f"d{(seat + shift) % n}" for seat in range(n)]      # d<index of its delay>
    await run_table(order, names, fair_ms, races, st, rng, args, lies)
    for seat in range(n):
        player = (seat + shift) % n           # the delay index of who sat there
        into.wins[player] += st.wins[seat]
        into.latency[player].extend(st.latency[seat])
    into.races += st.races


def estimates(data: Path, players: int) -> list[float]:
    """From the fair tables' logs: the median delay estimate (ms) the server logged with
    each player's intents (the log names the player of each seat: d<index of its delay>)."""
    from wildtable.protocol.logfmt import ActionAccepted, IntentRejected, SeatClaimed, read_log
    got: list[list[float]] = [[] for _ in range(players)]
    for path in data.glob("*.wlog"):
        contents = read_log(path.read_bytes())
        who = {}
        for r in contents.records:
            if type(r) is SeatClaimed and r.name.startswith("d"):
                who[r.seat] = int(r.name[1:])
            elif type(r) in (ActionAccepted, IntentRejected) and r.delay is not None and r.seat in who:
                got[who[r.seat]].append(r.delay * 1000)
    return [pct(g, 0.5) for g in got]


def _label(delay: float, lie: str) -> str:
    return f"{delay:g} ms {lie or 'honest'}"


def report(args, modes: dict, measured: list[float]) -> dict:
    n = len(args.delays)
    fair_share = 1 / n
    print(f"{n} players, {', '.join(_label(d, lie) for d, lie in zip(args.delays, args.lies))}; fair_ms {args.fair_ms}, "
          f"legs {args.legs}; reaction N({args.reaction_ms:g}, {args.reaction_sd:g}) ms; "
          f"{modes['arrival'].races} races by arrival, {modes['fair'].races} by fair order; {args.tables} tables of each")
    head = (f"{'player':>13}{'measured':>10}{'wins arrival':>14}{'wins fair':>11}{'fair share':>12}"
            f"{'result p50/p99 arrival ms':>28}{'result p50/p99 fair ms':>25}")
    print(head)
    print("-" * len(head))
    out = {"players": []}
    for i, d in enumerate(args.delays):
        row = {"delay_ms": d, "lie": args.lies[i] or "honest", "measured_ms": measured[i]}
        for mode in ("arrival", "fair"):
            s = modes[mode]
            row[f"share_{mode}"] = s.wins[i] / max(1, s.races)
            lat = s.latency[i]
            row[f"p50_{mode}_ms"], row[f"p99_{mode}_ms"] = pct(lat, 0.5) * 1000, pct(lat, 0.99) * 1000
        out["players"].append(row)
        print(f"{_label(d, args.lies[i]):>13}{measured[i]:>10.1f}{row['share_arrival']:>14.1%}{row['share_fair']:>11.1%}{fair_share:>12.1%}"
              f"{row['p50_arrival_ms']:>15.0f}/{row['p99_arrival_ms']:<12.0f}"
              f"{row['p50_fair_ms']:>12.0f}/{row['p99_fair_ms']:<12.0f}")
    worst = max(abs(r["share_fair"] - fair_share) for r in out["players"])
    worst_arrival = max(abs(r["share_arrival"] - fair_share) for r in out["players"])
    print(f"largest distance from the fair share: fair order {worst * 100:.1f} points, arrival order "
          f"{worst_arrival * 100:.1f} points")
    out.update(races={k: v.races for k, v in modes.items()}, worst_fair_points=worst * 100,
               worst_arrival_points=worst_arrival * 100)
    return out


def run_config(args) -> dict:
    with tempfile.TemporaryDirectory(prefix="wildtable-fair-") as tmp:
        log_path = Path(tmp) / "server.log"
        cmd = [sys.executable, str(Path(__file__).resolve()), "--serve", "--data", str(Path(tmp) / "data"),
               "--legs", str(args.legs), "--seats", str(len(args.delays)), "--durability", args.durability,
               "--pong-timeout", str(3600.0 if "nopong" in args.lies else 15.0)] + (["--old"] if args.old else [])
        sys.path.insert(0, str(HERE))
        from load import start, stop
        proc, url = start(cmd, log_path)
        try:
            modes = trio.run(bench, args, url)
        finally:
            stop(proc, 10)
        measured = estimates(Path(tmp) / "data", len(args.delays))
    return report(args, modes, measured)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--delays", help="the players, comma-separated, each DELAY[:LIE] (one-way delay in ms; "
                    f"lies: {', '.join(k for k in LIES if k)}); default: seven runs, 2,60 and 2,30,60,90 honest, "
                    "then 2:LIE,2 for each lie")
    ap.add_argument("--races", type=int, default=400, help="races per mode and run")
    ap.add_argument("--tables", type=int, default=4, help="tables per mode, played at once")
    ap.add_argument("--fair-ms", type=int, default=100, help="fair_ms of the fair tables")
    ap.add_argument("--legs", type=int, default=2, choices=(1, 2), help="fairorder.LEGS of the server")
    ap.add_argument("--reaction-ms", type=float, default=200.0)
    ap.add_argument("--reaction-sd", type=float, default=50.0)
    ap.add_argument("--settle", type=float, default=3.0, help="seconds for the delay estimates before racing")
    ap.add_argument("--durability", default="always")
    ap.add_argument("--seed", type=int, default=16)
    ap.add_argument("--json", help="write the figures here")
    ap.add_argument("--old", action="store_true", help="run a tree from before issue #24 (no kernel bound hook)")
    ap.add_argument("--pong-timeout", type=float, default=15.0, help=argparse.SUPPRESS)
    ap.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--data", help=argparse.SUPPRESS)
    ap.add_argument("--seats", type=int, default=2, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.serve:
        return serve(args)
    runs = [args.delays] if args.delays else ["2,60", "2,30,60,90", "2:pong200,2", "2:pong1s,2", "2:nopong,2",
                                              "2:batch,2", "2:hold50,2"]
    results = []
    for delays in runs:
        players = [(p.split(":") + [""])[:2] for p in delays.split(",")]
        for _, lie in players:
            if lie not in LIES:
                ap.error(f"{lie!r} is not a lie this bench knows: {', '.join(k for k in LIES if k)}")
        args.delays = [float(d) for d, _ in players]
        args.lies = [lie for _, lie in players]
        results.append(run_config(args))
        print()
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"args": {k: v for k, v in vars(args).items() if k not in ("serve", "data", "seats")},
                       "runs": results}, f, indent=1)
        print(f"written to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
