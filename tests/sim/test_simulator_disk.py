"""The simulator's disk keeps fsync's promise and no more (docs/ARCHITECTURE.md,
"Simulation"): after a crash a file holds what was synced, plus at most a torn part of
what was not; an fsync counts only once the call that made it has settled."""

import random

import trio
import trio.testing

from wildtable.sim.node import EPOCH, SimDisk


def test_a_crash_keeps_what_was_synced_and_at_most_part_of_the_rest(tmp_path):
    path = tmp_path / "t.wlog"
    path.write_bytes(b"header")

    async def main():
        cut = []
        for seed in range(30):
            path.write_bytes(b"header")
            disk = SimDisk(random.Random(seed))
            fd = disk.open_append(path)
            disk.write(fd, memoryview(b"a" * 100))
            disk.fsync(fd)
            await disk.settle()                  # durable: 106 bytes
            disk.write(fd, memoryview(b"b" * 50))
            disk.fsync(fd)                       # under way, not settled: not durable yet
            lost = disk.crash()
            data = path.read_bytes()
            assert data.startswith(b"header" + b"a" * 100) and len(data) <= 156
            assert set(data[106:]) <= {ord("b")} and lost.get(str(path), 0) == 156 - len(data)
            cut.append(len(data))
            try:
                disk.write(fd, memoryview(b"c"))
            except OSError:
                pass
            else:
                raise AssertionError("a crashed disk took a write")
        assert min(cut) < 156 and max(cut) > 106, "some crashes tear the tail, some keep more of it"

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))


def test_a_files_time_is_the_simulated_wall_clocks(tmp_path):
    """Recovery takes a table's age from when its log was last written (Disk.mtime), and
    the shutdown stamps it (Disk.stamp). The simulated disk keeps those times on the
    simulated wall clock, across a crash and the node's next life: the real files'
    mtimes are real time, weeks from the simulated one, and every unfinished table
    recovered after a crash looked older than its expiry and was given up unread."""
    path = tmp_path / "t.wlog"
    path.write_bytes(b"header")
    times: dict[str, float] = {}

    async def main():
        disk = SimDisk(random.Random(1), times=times)
        assert disk.mtime(path) == EPOCH + trio.current_time()     # never written through it: now
        await trio.sleep(3600)
        fd = disk.open_append(path)
        disk.write(fd, memoryview(b"a"))
        assert disk.mtime(path) == EPOCH + 3600
        disk.crash()
        await trio.sleep(7200)
        again = SimDisk(random.Random(2), times=times)              # the node's next life
        assert again.mtime(path) == EPOCH + 3600
        again.stamp(path, EPOCH + 5000)
        assert again.mtime(path) == EPOCH + 5000

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
