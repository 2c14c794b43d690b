"""The log writer starts the next group in the step that acknowledged the last (issue #25).

Found at 4,000 players (bench/README.md, "The next group at once"): after acknowledging a
group, the writer waited for its next commit with ``receive()``, a schedule point even with
commits waiting, so every arbiter the acknowledgment had just woken (95 to 200 of them)
ran before the next group was handed to the thread; a commit waited for them as well as
for the group before it (mean 11-22 ms queued, p99 85-164 ms). Now a waiting commit is
taken at once (``groupcommit.next_commit``, which the store's PgWriter uses too)."""

from __future__ import annotations

import collections

import trio
import trio.testing

from wildtable.server.logwriter import LogFile, LogWriter


class _Steps(trio.abc.Instrument):
    """How many steps each task has begun."""

    def __init__(self) -> None:
        self.of: collections.Counter = collections.Counter()

    def before_task_step(self, task) -> None:
        self.of[task] += 1


async def test_a_commit_waiting_when_a_group_ends_is_written_in_the_same_step(tmp_path):
    a = LogFile(tmp_path / "a.wlog", -1, 0)
    b = LogFile(tmp_path / "b.wlog", -1, 0)
    for log in (a, b):
        log.path.write_bytes(b"")
    steps = _Steps()
    gate = trio.Event()
    calls: list[tuple[str, str, int]] = []     # (start or end, the function's name, the writer's step)

    async def run_sync(fn, *args):
        """The worker thread's call, inline; the first group's write takes until ``gate``."""
        me = trio.lowlevel.current_task()
        calls.append(("start", fn.__name__, steps.of[me]))
        if len(calls) == 1:
            await gate.wait()
        else:
            await trio.lowlevel.checkpoint()
        result = fn(*args)
        calls.append(("end", fn.__name__, steps.of[me]))
        return result

    writer = LogWriter("always", run_sync=run_sync)
    trio.lowlevel.add_instrument(steps)
    try:
        with trio.fail_after(10):
            async with trio.open_nursery() as n:
                await n.start(writer.run)
                try:
                    n.start_soon(writer.commit, a, b"first")
                    await trio.testing.wait_all_tasks_blocked()
                    assert [c[0] for c in calls] == ["start"], calls
                    n.start_soon(writer.commit, b, b"second")       # waits in the writer's queue
                    await trio.testing.wait_all_tasks_blocked()
                finally:
                    gate.set()      # (a failed check must not leave the shielded write waiting)
                await trio.testing.wait_all_tasks_blocked()
                writer.close()
    finally:
        trio.lowlevel.remove_instrument(steps)
    # the groups' writes (the writer's last call fsyncs and closes every file: ``_finish``)
    groups = [c for c in calls if c[1] != "_finish"]
    assert [c[0] for c in groups] == ["start", "end", "start", "end"], calls
    (_, _, first_done), (_, _, second_begun) = groups[1], groups[2]
    # the second group was handed on in the very step that finished the first
    assert second_begun == first_done, calls
    assert a.path.read_bytes() == b"first" and b.path.read_bytes() == b"second"
    assert writer.groups == 2
