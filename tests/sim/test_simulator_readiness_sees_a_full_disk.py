"""The server's health probe writes to its world's disk (server/health.py, Disk.probe), so
in the simulator /readyz sees the simulated disk: full, it answers 503 with the reason,
and ready again once there is room, as on a real disk. It wrote a real file beside the
logs before, which never filled: a simulated full disk paused play while /readyz said
ready (and a simulated day cost 43,201 real fsyncs)."""

import random

import trio
import trio.testing

from wildtable.server.health import PROBE_EVERY, data_dir_problem
from wildtable.sim.node import SimDisk
from wildtable.sim.pause import SPAWNS
from wildtable.sim.run import World


def test_the_probe_fails_as_the_simulated_disk_does(tmp_path):
    disk = SimDisk(random.Random(1))
    assert data_dir_problem(tmp_path, disk) is None
    assert not list(tmp_path.iterdir()), "the simulated probe makes no real file"
    disk.fill(100)
    assert "is full" in (data_dir_problem(tmp_path, disk) or "")
    disk.free()
    assert data_dir_problem(tmp_path, disk) is None
    disk.crash()
    assert "cannot write in the data dir" in (data_dir_problem(tmp_path, disk) or "")


def test_readyz_follows_the_simulated_disk(tmp_path):
    seen: list[tuple[bool, str]] = []

    async def main():
        world = World(3, tmp_path / "data", set())
        async with trio.open_nursery() as nursery:
            world.nursery = nursery
            nursery.start_soon(world.net.loop.run)
            await world.start_nodes(nursery)
            node = world.node
            health = node.server.health
            await trio.sleep(2 * PROBE_EVERY)
            seen.append((health.readiness().ready, health.disk or ""))
            node.disk.fill(0)
            await trio.sleep(2 * PROBE_EVERY)
            seen.append((health.readiness().ready, health.disk or ""))
            node.disk.free()
            await trio.sleep(2 * PROBE_EVERY)
            seen.append((health.readiness().ready, health.disk or ""))
            nursery.cancel_scope.cancel()

    SPAWNS.reset()
    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0), instruments=[SPAWNS])
    assert seen[0] == (True, "")
    assert not seen[1][0] and "is full" in seen[1][1], seen[1]
    assert seen[2] == (True, ""), seen[2]
