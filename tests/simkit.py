"""Scenes in the simulator (wildtable.sim; docs/ARCHITECTURE.md, "Simulation"): one node
running the real server on a simulated network, clock and disk, and clients a test
moves by hand, so that a server's timer is tried at its DEFAULT length (a simulated day
costs seconds) rather than shortened."""

from __future__ import annotations

import random
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, AsyncIterator, Awaitable, Callable

import trio
import trio.testing

from wildtable.protocol import messages as m
from wildtable.sim.cluster import ClusterWorld
from wildtable.sim.pause import SPAWNS
from wildtable.sim.players import Client
from wildtable.sim.run import World


def simulate(main: Callable[[], Awaitable[None]]) -> None:
    """Run ``main`` on the simulator's clock (time jumps whenever every task waits)."""
    SPAWNS.reset()
    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0), instruments=[SPAWNS])


@asynccontextmanager
async def one_node(data: Path, game: str, seats: int, settings: dict[str, Any], seed: int = 1) -> AsyncIterator[World]:
    """A node serving ``data`` (its ServerConfig: serve's defaults) and one table of
    ``game`` on it, made by a host who then hangs up (``world.table_id``)."""
    async with _serving(World(seed, data, set()), game, seats, settings) as world:
        yield world


@asynccontextmanager
async def cluster_nodes(data: Path, game: str, seats: int, settings: dict[str, Any],
                        seed: int = 7) -> AsyncIterator[ClusterWorld]:
    """As ``one_node``, with two or three nodes (as the seed draws) on the simulated
    store, each at serve's defaults; the host makes the table where the cluster places
    it (``world.nodes``)."""
    async with _serving(ClusterWorld(seed, data, set()), game, seats, settings) as world:
        yield world


@asynccontextmanager
async def _serving(world, game: str, seats: int, settings: dict[str, Any]):
    world.game, world.seats, world.settings = game, seats, settings
    async with trio.open_nursery() as nursery:
        world.nursery = nursery
        nursery.start_soon(world.net.loop.run)
        await world.start_nodes(nursery)
        await world.create_table()
        yield world
        nursery.cancel_scope.cancel()


async def joined(world: World, name: str, seed: int) -> Client:
    """A client seated at the world's table."""
    c = Client(world, name, random.Random(seed))
    assert await c.connect()
    c.send(m.Join(world.table_id, None))
    while type(await c.next()) is not m.Joined:
        pass
    return c


async def held_then_forgotten(world: World, since: float, seconds: float, slack: float, what: str,
                              node=None) -> None:
    """The node (``node``, else the world's first) still holds the world's table
    ``slack`` s before ``since + seconds`` (simulated time), and forgets it (its log put
    away) within ``slack`` s after."""
    server, table = (node or world.node).server, world.table_id
    await trio.sleep_until(since + seconds - slack)
    assert table in server.tables, f"forgotten {slack:g} s before {what} ({seconds:g} s) had passed"
    with trio.move_on_at(since + seconds + slack):
        while table in server.tables or table in server._moving:
            await trio.sleep(1.0)
    assert table not in server.tables and table not in server._moving, f"still held {slack:g} s after {what} ({seconds:g} s)"
