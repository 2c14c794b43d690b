"""Refused intents cannot fill the disk. Found: each refused intent was logged and
fsynced (about 600 B), so one connection could write about 2.6 GB a day and cost the
disk an fsync per refusal. Now refusals alone are written with no fsync of their own
(durable with the file's next one), and each connection has at most
REFUSALS_LOGGED_BURST refusals logged at once and REFUSALS_LOGGED_RATE a second after
that; the rest are answered as usual and only counted."""

from __future__ import annotations

import math

import trio

from wildtable.headless.net import connect
from wildtable.protocol import messages as m
from wildtable.protocol.logfmt import IntentRejected, read_log
from wildtable.server.table import REFUSALS_LOGGED_BURST, REFUSALS_LOGGED_RATE

from serverkit import create, join, reply_to, running_server, seated

FLOOD = 300


async def _flood(conn, first: int) -> list[m.Rejected]:
    for i in range(first, first + FLOOD):
        await conn.send(m.Intent(i, {"kind": "ready", "pad": "x" * 400}))
    return [await reply_to(conn, i) for i in range(first, first + FLOOD)]


def _rejected(path) -> list[IntentRejected]:
    return [r for r in read_log(path.read_bytes()).records if type(r) is IntentRejected]


async def test_a_flood_of_refusals_costs_no_fsync_and_logs_a_bounded_number(tmp_path):
    data = tmp_path / "data"
    with trio.fail_after(60):
        async with running_server(data) as (server, url):
            async with connect(url, "ann") as ann:
                a = await create(ann, "run-wild", 2)
                await join(ann, a, 0)                   # alone: every intent is refused (not_started)
                fsyncs, began = server.writer.fsyncs, trio.current_time()
                answers = await _flood(ann, 1)
                took = trio.current_time() - began
                assert all(isinstance(x, m.Rejected) and x.code == "not_started" for x in answers), answers[:3]
                assert server.writer.fsyncs == fsyncs, "a refusal cost an fsync"
                # hopping to another table does not give the connection a fresh budget
                await ann.send(m.Leave())
                await ann.receive_until(lambda x: isinstance(x, m.Left))
                b = await create(ann, "run-wild", 2)
                await join(ann, b, 0)
                fsyncs_b, began_b = server.writer.fsyncs, trio.current_time()
                answers = await _flood(ann, 10_000)
                took_b = trio.current_time() - began_b
                assert len(answers) == FLOOD
                assert server.writer.fsyncs == fsyncs_b
            allowed = REFUSALS_LOGGED_BURST + math.ceil((trio.current_time() - began) * REFUSALS_LOGGED_RATE)
        print(f"\n{2 * FLOOD} refusals in {took + took_b:.2f} s: {server.refusals.logged} logged, "
              f"{server.refusals.unlogged} only counted")
    logged_a, logged_b = _rejected(data / f"{a}.wlog"), _rejected(data / f"{b}.wlog")
    assert len(logged_a) >= REFUSALS_LOGGED_BURST                 # the first ones, for debugging races
    assert len(logged_a) + len(logged_b) <= allowed, (len(logged_a), len(logged_b), allowed)
    assert [r.intent for r in logged_a[:REFUSALS_LOGGED_BURST]] == list(range(1, REFUSALS_LOGGED_BURST + 1))
    assert server.refusals.logged + server.refusals.unlogged == 2 * FLOOD


async def test_refusals_are_durable_with_the_next_commit_and_answered_in_order(tmp_path):
    """A refusal is answered at once; its record is in the log, in order, once the next
    action has been acknowledged (that commit's fsync covers it)."""
    data = tmp_path / "data"
    with trio.fail_after(30):
        async with running_server(data) as (server, url):
            async with seated(url, "run-wild", 2) as (table, conns, _):
                await conns[0].send(m.Intent(1, {"kind": "fly"}))
                await conns[0].send(m.Intent(2, {"kind": "ready"}))
                r1, r2 = await reply_to(conns[0], 1), await reply_to(conns[0], 2)
                assert isinstance(r1, m.Rejected) and isinstance(r2, m.Accepted), (r1, r2)
                records = read_log((data / f"{table}.wlog").read_bytes()).records
                kinds = [(type(r).__name__, getattr(r, "intent", None)) for r in records]
                assert kinds.index(("IntentRejected", 1)) < kinds.index(("ActionAccepted", 2)), kinds
