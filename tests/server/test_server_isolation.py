"""Our own bug at one table must not take that table, or any other, down.

Fault injection: a copy of the real Run Wild engine whose ``apply`` fails (as a bug
would) on one kind of action. Everything else is the real server over real sockets."""

from __future__ import annotations

import types

import attrs
import trio

from wildtable.protocol import messages as m
from wildtable.protocol.games import REGISTRY, run_wild
from wildtable.protocol.logfmt import IntentRejected, read_log

from serverkit import ready_all, reply_to, running_server, seated


def _buggy_engine() -> types.ModuleType:
    g = types.ModuleType("buggy_run_wild")
    g.__dict__.update({k: v for k, v in vars(run_wild).items() if not k.startswith("__")})
    g.NAME = "buggy-run-wild"

    def apply(state, seat, action):
        if type(action) is run_wild.Stuck:
            raise ZeroDivisionError("a bug in the engine")
        return run_wild.apply(state, seat, action)
    g.apply = apply
    g.new_table = lambda config: run_wild.new_table(attrs.evolve(config, game=run_wild.NAME))
    return g


async def test_an_engine_bug_is_answered_as_ours_and_the_tables_go_on(tmp_path):
    REGISTRY["buggy-run-wild"] = _buggy_engine()
    try:
        with trio.fail_after(60):
            async with running_server(tmp_path / "data") as (server, url):
                async with seated(url, "buggy-run-wild", 2) as (bad_table, bad, _), \
                        seated(url, "run-wild", 2) as (good_table, good, _):
                    await ready_all(bad)
                    await ready_all(good)
                    await bad[0].send(m.Intent(1, {"kind": "stuck"}))
                    r = await reply_to(bad[0], 1)
                    assert isinstance(r, m.Rejected) and r.code == "internal_error"
                    assert "our bug" in r.reason
                    # the same table goes on
                    await bad[0].send(m.Intent(2, {"kind": "draw"}))
                    assert isinstance(await reply_to(bad[0], 2), m.Accepted)
                    # and so does the other one
                    await good[1].send(m.Intent(3, {"kind": "stuck"}))
                    assert isinstance(await reply_to(good[1], 3), m.Accepted)
    finally:
        del REGISTRY["buggy-run-wild"]


async def test_a_huge_refused_action_is_summarised_in_the_log(tmp_path):
    with trio.fail_after(30):
        async with running_server(tmp_path / "data") as (server, url):
            async with seated(url, "run-wild", 2) as (table, conns, _):
                await ready_all(conns)
                huge = {"kind": "meld", "cards": list(range(72)) * 7, "values": []}
                await conns[0].send(m.Intent(5, huge))
                r = await reply_to(conns[0], 5)
                assert isinstance(r, m.Rejected)
            path = server.tables[table].logfile.path
    rejected = [x for x in read_log(path.read_bytes()).records if type(x) is IntentRejected]
    assert rejected and rejected[-1].action["kind"] == "meld"
    assert rejected[-1].action["truncated_bytes"] > 512
    assert "cards" not in rejected[-1].action
