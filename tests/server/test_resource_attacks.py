"""Attacks on what a stranger can make the server hold, sent as raw bytes from another
address (127.0.0.3) to a real `wildtable serve` process with its default caps: a table
squat, a flood of list_tables, a flood of refused intents. Through each, a well-behaved
player at another table plays on with its p99 intent-to-update under 50 ms
(hostilekit.steady_player_process), and what the attacker could pin stays bounded.

The server runs in a process of its own so that the attacker's work in this process
does not share the server's event loop, and the steady player runs in a process of its
own so that it measures the server, not the attacker's traffic."""

from __future__ import annotations

import trio

from wildtable.protocol.logfmt import IntentRejected, read_log
from wildtable.server.table import REFUSALS_LOGGED_BURST, REFUSALS_LOGGED_RATE

from contextlib import asynccontextmanager

from hostilekit import Raw, binary, port_of, said_hello, serve_process, steady_player_process
from waitkit import wait_until

ATTACKER = "127.0.0.3"


@asynccontextmanager
async def attacked(data_dir, *flags):
    """`wildtable serve` with ``flags`` and the steady player at a table of its own for the
    whole attack, measuring from a process of its own; yield the port."""
    async with serve_process(data_dir, *flags) as srv, steady_player_process(srv.url):
        yield port_of(srv.url)


async def _answers(raw: Raw, n: int, within: float = 20) -> list[dict]:
    out = []
    with trio.fail_after(within):
        while len(out) < n:
            out.append(await raw.read_message())
    return out


async def test_a_table_squat_holds_a_few_waiting_tables_which_expire(tmp_path):
    """Ten connections from one address each ask for 100 tables: the address gets four,
    every other create is refused with a sentence, a player elsewhere can still create
    one, and once the squatters are gone their tables expire."""
    with trio.fail_after(60):
        async with attacked(tmp_path / "data", "--waiting-expiry", "2") as port:
            squatters = [await said_hello(port, f"squat{i}", source=ATTACKER) for i in range(10)]
            try:
                async def squat(raw: Raw) -> list[str]:
                    for _ in range(100):
                        await raw.send(binary({"type": "create_table", "game": "run-wild", "seats": 4}))
                    return [a["type"] if a["type"] != "error" else a["code"] for a in await _answers(raw, 100)]

                results: list[list[str]] = []

                async def one(raw: Raw) -> None:
                    results.append(await squat(raw))
                async with trio.open_nursery() as n:
                    for raw in squatters:
                        n.start_soon(one, raw)
                got = [code for r in results for code in r]
                # the rate limit answers some of the 100 (burst 100, then 50/s): either way no table
                assert got.count("table_created") == 4, {c: got.count(c) for c in set(got)}
                assert set(got) <= {"table_created", "too_many_waiting_tables", "rate_limited"}, set(got)
                # someone else still gets a table
                other = await said_hello(port, "host")
                with other:
                    await other.send(binary({"type": "create_table", "game": "go-wild", "seats": 2}))
                    assert (await other.read_message())["type"] == "table_created"
            finally:
                for raw in squatters:
                    raw.close()
            # nobody is at the squatters' tables: they expire (2 s here; 600 s by default)
            expired = tmp_path / "data" / "expired"
            await wait_until(lambda: len(list(expired.glob("*.wlog")) if expired.exists() else []) >= 4,
                             step=0.2, timeout=15, what="the four squatted tables expired")


async def test_a_list_tables_flood_does_not_slow_the_tables(tmp_path):
    """With 200 tables on the server, connections from one address ask for the list as
    fast as the rate limit lets them (a burst, then 40 a second): the answer is encoded
    once per change, so each costs the server one write; the players elsewhere do not feel
    it. A connection that asks faster than it reads is a slow consumer and is let go
    (1013); one that keeps up is served every list."""
    with trio.fail_after(90):
        async with attacked(tmp_path / "data", "--max-waiting-per-address", "0") as port:
            create = binary({"type": "create_table", "game": "run-wild", "seats": 4,
                             "name": "a table with a long enough name to weigh"})
            hosts = [await said_hello(port, f"host{i}") for i in range(4)]
            for host in hosts:              # 50 each: within the rate limit's burst
                await host.send(create * 50)
                kinds = {a["type"] for a in await _answers(host, 50, within=30)}
                assert kinds == {"table_created"}, kinds
            for host in hosts[1:]:
                host.close()
            with hosts[0] as host:
                await host.send(binary({"type": "list_tables"}))
                one = await host.read_message()
                assert one["type"] == "table_list" and len(one["tables"]) >= 200
            flooders = [await said_hello(port, f"lister{i}", source=ATTACKER) for i in range(5)]
            try:
                async def flood(raw: Raw) -> tuple[int, int]:
                    """(lists asked, bytes taken)"""
                    taken = 0
                    done = trio.Event()

                    async def drain() -> None:
                        nonlocal taken
                        while not done.is_set():
                            with trio.move_on_after(0.5):
                                chunk = await raw.sock.recv(1 << 20)
                                if not chunk:
                                    return          # let go as a slow consumer (the server's backlog bound)
                                taken += len(chunk)
                    asked = 0
                    async with trio.open_nursery() as n:
                        n.start_soon(drain)
                        list_tables = binary({"type": "list_tables"})
                        await raw.send(list_tables * 20)
                        asked += 20
                        end = trio.current_time() + 3
                        while trio.current_time() < end:
                            await trio.sleep(0.1)
                            await raw.send(list_tables * 4)
                            asked += 4
                        await trio.sleep(1)
                        done.set()
                    return asked, taken

                results: list[tuple[int, int]] = []

                async def one(raw: Raw) -> None:
                    results.append(await flood(raw))
                async with trio.open_nursery() as n:
                    for raw in flooders:
                        n.start_soon(one, raw)
            finally:
                for raw in flooders:
                    raw.close()
            # they were served (200 entries of some 60+ bytes each per list), at the rate limit
            assert sum(taken for _, taken in results) >= sum(asked for asked, _ in results) * 200 * 60 // 2, results


async def test_a_flood_of_refused_intents_writes_a_bounded_log_without_fsyncs(tmp_path):
    """A seated stranger sends intents its table can only refuse, as fast as the rate limit
    lets it (a burst of 100, then 40 a second), for 3 s: each is answered, and the log
    keeps only a bounded sample of them (a burst, then one a second; that they cost no
    fsync is tests/server/test_refusal_disk_budget.py's)."""
    data = tmp_path / "data"
    with trio.fail_after(60):
        async with attacked(data) as port:
            raw = await said_hello(port, "filler", source=ATTACKER)
            with raw:
                await raw.send(binary({"type": "create_table", "game": "run-wild", "seats": 2}))
                table = (await raw.read_message())["table"]
                await raw.send(binary({"type": "join", "table": table, "seat": 0}))
                with trio.fail_after(5):
                    while (await raw.read_message())["type"] != "joined":
                        pass
                size0 = (data / f"{table}.wlog").stat().st_size
                began = trio.current_time()
                sent = refused = 0
                batch = 90                         # the burst (hello, create and join took 3), then 40 a second
                while trio.current_time() < began + 3:
                    for _ in range(batch):
                        sent += 1
                        await raw.send(binary({"type": "intent", "id": sent, "action": {"kind": "draw"}}))
                    answered = 0
                    with trio.fail_after(10):
                        while answered < batch:
                            a = await raw.read_message()
                            if a["type"] == "rejected":
                                answered += 1
                                refused += a["code"] == "not_started"
                    await trio.sleep(0.5 if batch == 90 else 0.1)      # the bucket refills, then 40 a second
                    batch = 4
                took = trio.current_time() - began
                assert refused == sent
    logged = [r for r in read_log((data / f"{table}.wlog").read_bytes()).records if type(r) is IntentRejected]
    allowed = REFUSALS_LOGGED_BURST + int(took * REFUSALS_LOGGED_RATE) + 1
    assert len(logged) <= allowed, (len(logged), allowed, sent)
    grew = (data / f"{table}.wlog").stat().st_size - size0
    assert grew < allowed * 1000, grew
