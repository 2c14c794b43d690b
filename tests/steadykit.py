"""The well-behaved player of the attack tests (hostilekit's ``under_attack``, floodkit):
two seats at a Run Wild table of their own, our own client code, acting at a steady pace
during the attack; at exit it asserts that every intent was answered and that the p95 of
intent-to-update stayed under 50 ms (or 10 times what it was just before the attack).

Apart from hostilekit so that tests/steady_main.py, the player in a process of its own,
starts without importing the server and the attack kits (1-2 s on a loaded machine, which
every test with that player waited for, alone)."""

from __future__ import annotations

import gc
import json
import math
import os
import subprocess
import sys
import time
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

import trio

from wildtable.headless.net import connect
from wildtable.protocol import messages as m

from alonekit import ALONE_ENV
from proc import LineReader
from waitkit import wait_until

P99_LIMIT = 0.050       # seconds, intent sent to its update received
# Seconds between two intents of the steady player: 100 a second of the two seats, 50 each,
# what `serve`'s default --rate-limit allows (and bursts of 100 besides); a rate_limited
# answer fails the player (_run_wild_pair). At 25 ms the same counts of intents took 0.5 s
# more before and after each attack (20 in, 20 at least after; 100 after, of a process).
PACE = 0.010
# Before the attack the steady player plays CALM intents alone: what the machine allows
# now. On a machine others load (two busy loops, other suites), the scheduler alone delays
# an answer by 100-500 ms, attack or none; the bound is then CALM_FACTOR times what the
# same player saw just before, measured side by side. On an idle machine the calm figure
# is a few ms, and P99_LIMIT is the bound, as before.
# The figure judged is the 95th percentile, not the 99th: over 100 intents the p99 is one
# answer, and one scheduler hiccup of a loaded machine (a 104 ms answer beside a calm
# 10 ms, median 6 ms, in a CI run at load 13) failed a test no attack had slowed. The
# attacks these tests guard against move the whole distribution (issue #22: median 250-380
# ms, p99 405-490 ms under the ping flood), which the p95 shows as well.
CALM = 20
CALM_FACTOR = 10.0
JUDGED = 0.95


def seated_alone() -> None:
    """Fail a test that seats the steady player but is not ``alone`` (tests/alonekit.py:
    tests/conftest.py marks those it finds; this catches the rest): beside other tests it
    measures them, not the attack."""
    if os.environ.get(ALONE_ENV) == "0":
        raise AssertionError("this test seats the steady player, so it must be marked alone "
                             "(pytestmark = pytest.mark.alone; see tests/alonekit.py)")


def p99_bound(limit: float, calm: "Steady") -> float:
    """What the attack's p95 must stay under: ``limit``, or CALM_FACTOR times the calm p95."""
    return max(limit, CALM_FACTOR * calm.quantile(JUDGED))


@dataclass
class Steady:
    """What the steady player measured (seconds)."""
    latencies: list[float] = field(default_factory=list)
    unanswered: list[str] = field(default_factory=list)
    sent: int = 0

    def quantile(self, q: float) -> float:
        xs = sorted(self.latencies)
        return xs[max(0, math.ceil(len(xs) * q) - 1)] if xs else math.inf

    def p99(self) -> float:
        return self.quantile(0.99)

    def summary(self) -> str:
        xs = sorted(self.latencies)
        if not xs:
            return f"no intent answered of {self.sent}"
        return (f"{len(xs)} of {self.sent} intents answered; median {xs[len(xs) // 2] * 1000:.1f} ms, "
                f"p95 {self.quantile(0.95) * 1000:.1f} ms, p99 {self.p99() * 1000:.1f} ms, max {xs[-1] * 1000:.1f} ms")


class _Seat:
    """One of the steady player's seats: a reader task keeps its latest view and answers."""

    def __init__(self, conn, joined: m.Joined):
        self.conn, self.seat = conn, joined.seat
        self.view = joined.view
        self.seq = joined.seq
        self.changed = trio.Event()
        self.waiting: int | None = None     # the intent in flight
        self.want_seq: int | None = None    # its accepted seq, until that update comes
        self.done = trio.Event()
        self.outcome = None

    async def read(self) -> None:
        while True:
            msg = await self.conn.receive()
            t = type(msg)
            if t is m.Update:
                self.view, self.seq = msg.view, msg.seq
                if self.want_seq is not None and msg.seq >= self.want_seq:
                    self.want_seq = None
                    self.done.set()
                self.changed.set()
                self.changed = trio.Event()
            elif t is m.Accepted and msg.intent == self.waiting:
                self.outcome = msg
                if self.seq >= msg.seq:
                    self.done.set()
                else:
                    self.want_seq = msg.seq
            elif t is m.Rejected and msg.intent == self.waiting:
                self.outcome = msg
                self.done.set()

    def next_action(self) -> dict | None:
        """ready, draw until the pile is empty, then stuck: a Run Wild round with no end
        but the players' own, and an update for every intent."""
        v = self.view
        me = v["players"][self.seat]
        if not me["in_round"]:
            return None
        if v["phase"] == "ready":
            return None if me["ready"] else {"kind": "ready"}
        if v["phase"] == "playing":
            if me["pile"] > 0:
                return {"kind": "draw"}
            return None if me["stuck"] else {"kind": "stuck"}
        return None


@asynccontextmanager
async def _run_wild_pair(url: str, prefix: str, pace: float, stats: Steady, answer_within: float):
    """Two seats of a fresh Run Wild table (our own client code) that take turns acting
    every ``pace`` s (ready, draw, stuck; one intent in flight); yield (table, stop event,
    failures). ``stats`` gets each intent's intent-to-update time."""
    async with connect(url, f"{prefix}-a") as a, connect(url, f"{prefix}-b") as b:
        # fair_ms 0: its own delay probes and holds would be noise in what it measures
        await a.send(m.CreateTable("run-wild", 2, {"rounds": 100, "idle_timeout": 3600, "fair_ms": 0}, prefix))
        created = await a.receive_until(lambda x: isinstance(x, (m.TableCreated, m.Error)))
        assert isinstance(created, m.TableCreated), created
        seats = []
        for i, c in enumerate((a, b)):
            await c.send(m.Join(created.table, i))
            j = await c.receive_until(lambda x: isinstance(x, (m.Joined, m.Error)))
            assert isinstance(j, m.Joined), j
            seats.append(_Seat(c, j))
        stop = trio.Event()
        failed: list[BaseException] = []

        async def act() -> None:
            iid = 0
            turn = 0
            nxt = trio.current_time()
            while not stop.is_set():
                nxt += pace
                await trio.sleep_until(nxt)
                # the deal comes right after both joined: wait for a seat with something to do
                for k in range(2):
                    s = seats[(turn + k) % 2]
                    action = s.next_action()
                    if action is not None:
                        break
                else:
                    continue
                turn += 1
                iid += 1
                s.waiting, s.outcome, s.want_seq, s.done = iid, None, None, trio.Event()
                stats.sent += 1
                t0 = time.perf_counter()
                await s.conn.send(m.Intent(iid, action))
                with trio.move_on_after(answer_within):
                    await s.done.wait()
                if not s.done.is_set():
                    stats.unanswered.append(f"intent {iid} {action} of seat {s.seat}: {s.outcome!r}")
                    stop.set()          # the player gives up: a caller waiting for answers stops too
                    return
                if isinstance(s.outcome, m.Rejected) and s.outcome.code == "rate_limited":
                    # an answer, but not the server's judgement of the game: the pace is wrong
                    stats.unanswered.append(f"intent {iid} {action} of seat {s.seat} rate limited "
                                            f"(pace {pace:g} s): {s.outcome!r}")
                    stop.set()
                    return
                stats.latencies.append(time.perf_counter() - t0)
                s.waiting = None
                nxt = max(nxt, trio.current_time())

        async def guarded(fn) -> None:
            try:
                await fn()
            except Exception as e:      # the player's connection failing is a finding, not a crash of the test
                failed.append(e)
                stop.set()

        async with trio.open_nursery() as nursery:
            for s in seats:
                nursery.start_soon(guarded, s.read)
            nursery.start_soon(guarded, act)
            try:
                yield created.table, stop, failed
            finally:
                stop.set()
                nursery.cancel_scope.cancel()


@asynccontextmanager
async def steady_player(url: str, *, pace: float = PACE, limit: float = P99_LIMIT, answer_within: float = 5.0,
                        min_intents: int = 20):
    """Seat a well-behaved player (two seats of a Run Wild table of its own, our own
    client code) and act at a steady pace while the body runs (the attack). At exit:
    every intent was answered, and the p95 of intent-to-update is under ``limit`` (JUDGED). An
    attack over in a moment still waits for ``min_intents`` answers before the check: 20, so
    that the p95 is the second slowest answer at least (over 10 it was the slowest: one
    scheduler hiccup under two busy loops, 155.6 ms beside a calm 7 ms, failed a test).

    Intent-to-update: from sending an intent to receiving the update of the seq it was
    accepted at (or its rejection, which has no update). One intent in flight at a time;
    the seats take turns."""
    seated_alone()
    stats = Steady()
    # This process's own cyclic collections (a whole test session's objects) would show as
    # the server's delay: collect now, and not while measuring.
    gc.collect()
    gc.disable()
    try:
        async with _run_wild_pair(url, "steady", pace, stats, answer_within) as (table, stop, failed):
            await wait_until(lambda: len(stats.latencies) >= CALM or stop.is_set(), step=pace,
                             timeout=answer_within + CALM * pace * 4, what=f"{CALM} calm intents answered")
            calm = Steady(stats.latencies[:], [], len(stats.latencies))
            del stats.latencies[:]
            stats.sent -= calm.sent
            yield stats
            with trio.move_on_after(answer_within + min_intents * pace * 4):
                while len(stats.latencies) < min_intents and not stop.is_set():
                    await trio.sleep(pace)
    finally:
        gc.enable()
    assert not failed, f"the well-behaved player's connection failed during the attack: {failed!r}; {stats.summary()}"
    assert not stats.unanswered, f"unanswered: {stats.unanswered}; {stats.summary()}"
    assert len(stats.latencies) >= min_intents, f"too few intents to measure: {stats.summary()}"
    assert stats.quantile(JUDGED) < p99_bound(limit, calm), \
        f"the well-behaved player slowed down during the attack: {stats.summary()}; before it: {calm.summary()}"


@asynccontextmanager
async def steady_player_process(url: str, *, pace: float = PACE, limit: float = P99_LIMIT, min_intents: int = 100):
    """``steady_player`` in a process of its own (tests/steady_main.py): for attacks whose
    own traffic from this process would otherwise show in the measurement. The same
    checks at exit, over at least 100 intents (it plays on until it has them): over fewer,
    the p95 is one of the slowest few, and a hiccup of the machine fails a short attack."""
    seated_alone()
    proc = await trio.lowlevel.open_process(
        [sys.executable, str(Path(__file__).with_name("steady_main.py")), url, str(pace), str(min_intents)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    out = LineReader(proc.stdout)
    try:
        await out.until(r"^seated$", timeout=20)
        calm = Steady(json.loads((await out.until(r"^calm (.*)$", timeout=30))[1]), [], CALM)
        yield
        await proc.stdin.send_all(b"stop\n")
        line = await out.until(r"^\{.*\}$", timeout=30)
        got = json.loads(line.group(0))
    finally:
        with trio.CancelScope(shield=True):
            if proc.returncode is None:
                with trio.move_on_after(5):
                    await proc.wait()
                if proc.returncode is None:
                    proc.kill()
                    await proc.wait()
    stats = Steady(got["latencies"], got["unanswered"], got["sent"])
    assert not got["failed"], f"the well-behaved player's connection failed during the attack: {got['failed']}; {stats.summary()}"
    assert not stats.unanswered, f"unanswered: {stats.unanswered}; {stats.summary()}"
    assert len(stats.latencies) >= min_intents, f"too few intents to measure: {stats.summary()}"
    assert stats.quantile(JUDGED) < p99_bound(limit, calm), \
        f"the well-behaved player slowed down during the attack: {stats.summary()}; before it: {calm.summary()}"


@asynccontextmanager
async def busy_table(url: str, pace: float = 0.004):
    """A Run Wild table whose two players act every ``pace`` s (an update each time) while
    the body runs: a table that produces faster than a slow spectator reads. Yield (its id,
    the players' Steady: one answered intent per update made)."""
    stats = Steady()
    async with _run_wild_pair(url, "busy", pace, stats, 10.0) as (table, stop, failed):
        yield table, stats
    assert not failed and not stats.unanswered, (failed, stats.unanswered)
