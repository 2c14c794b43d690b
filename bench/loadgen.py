"""Load generator: one process driving many Run Wild tables of bot players over real
WebSockets, started by bench/load.py (run it alone for debugging).

Each player acts every ``--pace`` seconds on average (uniform jitter, 0..2x), or flat
out (``--pace 0``: the next intent leaves the moment the last one is answered). The
bots play from their own views with the client's cheap Run Wild strategy
(``quick_candidates``; ``--strategy bot`` for the full bot, which thinks too hard for
a thousand players in one process). For every intent we
record intent-to-result (accepted/rejected reaches the sender) and, for accepted ones,
intent-to-last-seat-update (the update of that seq has reached every seat of the table).

``--bare`` drives bench/bare_server.py instead: the same connections, pace and frame
sizes, but the server only fans frames out; the figures are the stack's own limit.

Prints one JSON object on stdout when done.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time

import msgpack
import trio
import trio_websocket

from wildtable.client.games import run_wild as strategy
from wildtable.protocol import messages as m

SEATS = 4


class Stats:
    """Figures of the measured window only (after the warm-up: tables opened, seats taken)."""

    def __init__(self):
        self.measure_from = 0.0
        self.result_lat: list[float] = []
        self.update_lat: list[float] = []
        self.accepted = 0
        self.rejected: dict[str, int] = {}
        self.accepted_seqs: dict[str, list[int]] = {}
        self.updates = 0
        self.update_bytes = 0
        self.games_finished = 0
        self.errors: dict[str, int] = {}
        self.tables_joined: list[float] = []     # when each table had all its players


class TableRun:
    """Bookkeeping for one table: when each accepted seq reached each seat."""

    def __init__(self, stats: Stats):
        self.stats = stats
        self.table: str | None = None
        self.pending: dict[int, list] = {}     # seq -> [t_sent, seats still to hear]

    def sent_accepted(self, seq: int, t_sent: float, heard: set) -> None:
        entry = self.pending.setdefault(seq, [t_sent, set(range(SEATS))])
        entry[0] = t_sent
        self._check(seq, entry)

    def heard(self, seq: int, seat: int) -> None:
        entry = self.pending.setdefault(seq, [None, set(range(SEATS))])
        entry[1].discard(seat)
        self._check(seq, entry)

    def _check(self, seq, entry) -> None:
        if not entry[1] and entry[0] is not None:
            if entry[0] >= self.stats.measure_from:
                self.stats.update_lat.append(time.perf_counter() - entry[0])
            del self.pending[seq]
        elif not entry[1] and entry[0] is None:
            del self.pending[seq]        # a table action or chance: nobody's intent


async def player(url: str, run: TableRun, seat: int, pace: float, until: float, rng: random.Random,
                 ready: trio.Event, counter: list, choose) -> None:
    stats = run.stats
    async with trio_websocket.open_websocket_url(url, max_message_size=8 << 20) as ws:
        async def send(msg):
            await ws.send_message(m.encode(msg))

        async def recv():
            data = await ws.get_message()
            return m.decode(data)

        await send(m.Hello(m.PROTOCOL_VERSION, f"load{seat}"))
        while not isinstance(await recv(), m.Welcome):
            pass
        if seat == 0:
            await send(m.CreateTable("run-wild", SEATS, {"idle_timeout": 30.0, "rounds": 100}))
            while True:
                msg = await recv()
                if isinstance(msg, m.TableCreated):
                    run.table = msg.table
                    ready.set()
                    break
                if isinstance(msg, m.Error):
                    raise RuntimeError(f"create_table: {msg.code} {msg.message}")
        await ready.wait()
        await send(m.Join(run.table, seat))
        view = None
        while view is None:
            msg = await recv()
            if isinstance(msg, m.Joined):
                view = msg.view
            elif isinstance(msg, m.Error):
                raise RuntimeError(f"join: {msg.code} {msg.message}")
        counter[0] += 1
        if counter[0] == SEATS:
            stats.tables_joined.append(time.perf_counter())
        # no waiting for the others here: a player must keep reading (a socket nobody reads
        # stops answering pings); the strategy does nothing until the deal anyway
        next_id = 1
        inflight: dict[int, tuple[float, dict]] = {}
        refused: set[str] = set()
        refused_at = -1
        seq = 0
        next_at = time.perf_counter() + (rng.uniform(0, 2 * pace) if pace else 0)

        async def act():
            nonlocal next_id, next_at
            action = None
            for a in choose(view):
                key = strategy.action_key(a)
                if key not in refused:
                    action = a
                    break
            if action is None:
                return False
            iid = next_id
            next_id += 1
            inflight[iid] = (time.perf_counter(), action)
            await ws.send_message(msgpack.packb({"type": "intent", "id": iid, "action": action}))
            return True

        need_seq = 0     # after an acceptance, act again only on the view that includes it
        unpack = msgpack.unpackb
        while time.perf_counter() < until:
            now = time.perf_counter()
            if not inflight and now >= next_at and seq >= need_seq:
                if await act():
                    next_at = now + (rng.uniform(0, 2 * pace) if pace else 0)
            timeout = max(0.0, next_at - time.perf_counter()) if not inflight else 1.0
            with trio.move_on_after(max(0.0, min(timeout or 1.0, until - time.perf_counter()))):
                data = await ws.get_message()
                # plain msgpack, not the strict codec: the generator must stay cheaper than the server
                msg = unpack(data)
                kind = msg["type"]
                t = time.perf_counter()
                measured = t >= stats.measure_from
                if kind == "update":
                    stats.updates += measured
                    stats.update_bytes += len(data) * measured
                    seq, view = msg["seq"], msg["view"]
                    run.heard(seq, seat)
                    if seq != refused_at:
                        refused.clear()
                elif kind == "accepted":
                    t0, _ = inflight.pop(msg["intent"])
                    stats.accepted_seqs.setdefault(run.table, []).append(msg["seq"])
                    run.sent_accepted(msg["seq"], t0, set())
                    need_seq = msg["seq"]
                    if t0 >= stats.measure_from:
                        stats.result_lat.append(t - t0)
                        stats.accepted += 1
                elif kind == "rejected":
                    t0, action = inflight.pop(msg["intent"])
                    if t0 >= stats.measure_from:
                        stats.result_lat.append(t - t0)
                        stats.rejected[msg["code"]] = stats.rejected.get(msg["code"], 0) + 1
                    refused.add(strategy.action_key(action))
                    refused_at = seq
                elif kind == "game_over":
                    stats.games_finished += 1
                    return
                elif kind == "error":
                    stats.errors[msg["code"]] = stats.errors.get(msg["code"], 0) + 1
        # let answers in flight arrive, without counting new work
        with trio.move_on_after(2):
            while inflight:
                msg = unpack(await ws.get_message())
                if msg["type"] in ("accepted", "rejected") and msg["intent"] in inflight:
                    inflight.pop(msg["intent"])
                    if msg["type"] == "accepted":
                        stats.accepted_seqs.setdefault(run.table, []).append(msg["seq"])


async def bare_player(url: str, group: int, seat: int, pace: float, until: float, rng: random.Random,
                      stats: Stats, runs: dict, intent_bytes: int) -> None:
    """The same pace against the bare fan-out server: intents are opaque padded frames."""
    run = runs.setdefault(group, TableRun(stats))
    async with trio_websocket.open_websocket_url(url, max_message_size=8 << 20) as ws:
        await ws.send_message(msgpack.packb({"group": group, "seat": seat}))
        await ws.get_message()
        next_id = 1
        inflight: dict[int, float] = {}
        next_at = time.perf_counter() + (rng.uniform(0, 2 * pace) if pace else 0)
        pad = b"x" * max(0, intent_bytes - 30)
        while time.perf_counter() < until:
            now = time.perf_counter()
            if not inflight and now >= next_at:
                iid = next_id
                next_id += 1
                inflight[iid] = now
                await ws.send_message(msgpack.packb({"id": iid, "pad": pad}))
                next_at = now + (rng.uniform(0, 2 * pace) if pace else 0)
            timeout = max(0.0, next_at - time.perf_counter()) if not inflight else 1.0
            with trio.move_on_after(max(0.0, min(timeout or 1.0, until - time.perf_counter()))):
                data = await ws.get_message()
                t = time.perf_counter()
                msg = msgpack.unpackb(data)
                if "seq" in msg:
                    stats.updates += t >= stats.measure_from
                    stats.update_bytes += len(data) * (t >= stats.measure_from)
                    run.heard(msg["seq"], seat)
                else:
                    t0 = inflight.pop(msg["id"])
                    if t0 >= stats.measure_from:
                        stats.result_lat.append(t - t0)
                        stats.accepted += 1
                    run.sent_accepted(msg["ack"], t0, set())


async def main_async(args) -> dict:
    choose = strategy.candidates if args.strategy == "bot" else strategy.quick_candidates
    stats = Stats()
    rng = random.Random(args.seed)
    start = time.perf_counter()
    stats.measure_from = start + args.warmup
    until = start + args.warmup + args.seconds
    async with trio.open_nursery() as n:
        if args.bare:
            runs: dict = {}
            for t in range(args.tables):
                for s in range(SEATS):
                    n.start_soon(bare_player, args.url, args.group_base + t, s, args.pace, until,
                                 random.Random(rng.random()), stats, runs, args.intent_bytes)
        else:
            for t in range(args.tables):
                run = TableRun(stats)
                ready, counter = trio.Event(), [0]
                for s in range(SEATS):
                    n.start_soon(player, args.url, run, s, args.pace, until, random.Random(rng.random()),
                                 ready, counter, choose)
                await trio.sleep(args.ramp / max(1, args.tables))
    elapsed = time.perf_counter() - stats.measure_from
    return {
        "tables": args.tables, "players": args.tables * SEATS, "pace": args.pace, "elapsed": elapsed,
        "accepted": stats.accepted, "rejected": stats.rejected, "errors": stats.errors,
        "result_lat": stats.result_lat, "update_lat": stats.update_lat, "updates": stats.updates,
        "update_bytes": stats.update_bytes, "games_finished": stats.games_finished,
        "accepted_seqs": stats.accepted_seqs,
        "all_joined_after": (max(stats.tables_joined) - start) if stats.tables_joined else None,
        "tables_joined": len(stats.tables_joined),
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--url", required=True)
    ap.add_argument("--tables", type=int, default=10)
    ap.add_argument("--pace", type=float, default=2.0, help="seconds between a player's actions on average; 0 = flat out")
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--warmup", type=float, default=0.0)
    ap.add_argument("--ramp", type=float, default=2.0, help="seconds over which tables are opened")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--bare", action="store_true")
    ap.add_argument("--strategy", choices=("quick", "bot"), default="quick",
                    help="quick: the client's cheap strategy (default); bot: the full bot, ~1 ms a decision")
    ap.add_argument("--group-base", type=int, default=0)
    ap.add_argument("--intent-bytes", type=int, default=40)
    args = ap.parse_args(argv)
    out = trio.run(main_async, args)
    json.dump(out, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
