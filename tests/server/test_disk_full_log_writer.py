"""The log writer on a file system that really fills (a small tmpfs): a group it has no
room for is cut back to the last whole record, nothing of it is acknowledged, the writer
pauses and retries, and once there is room the same group is written once and acknowledged
(docs/ARCHITECTURE.md "Disk full"). Found: the first write that failed for lack of room
stopped the writer for good (StorageFailed), and with it the whole server."""

from __future__ import annotations

import errno
import os

import trio

from wildtable.server.logwriter import LogFile, LogWriter, StorageFailed
from wildtable.server.world import OsDisk

from smallfs import fill, free_bytes, small_filesystem
from waitkit import wait_until


def record(i: int, size: int) -> bytes:
    return (f"<record {i}>".encode() * size)[:size]


class CountingDisk(OsDisk):
    """The real disk, counting the writes that found no room (the writer's tries)."""

    def __init__(self):
        super().__init__()
        self.full = 0

    def write(self, fd: int, data) -> int:
        try:
            return super().write(fd, data)
        except OSError as e:
            if e.errno == errno.ENOSPC:
                self.full += 1
            raise


async def test_a_full_disk_pauses_the_writer_and_room_resumes_it_with_every_record_once(tmp_path):
    with small_filesystem(tmp_path / "fs", 1 << 20) as fs:
        header = b"HEADER" * 10
        log = LogFile.create(fs / "t.wlog", header)
        disk = CountingDisk()
        writer = LogWriter(disk=disk)         # the defaults: durability always
        changes: list[bool] = []
        writer.on_pause = changes.append
        first, second = record(1, 3000), record(2, 6000)
        done = []
        with trio.fail_after(20):
            async with trio.open_nursery() as n:
                await n.start(writer.run)
                await writer.commit(log, first)
                filler = fill(fs, leave=4096)             # room for part of the next record only
                assert free_bytes(fs) < len(second)

                async def commit_second():
                    await writer.commit(log, second)
                    done.append(trio.current_time())
                n.start_soon(commit_second)
                await wait_until(lambda: writer.paused, what="the writer paused")
                # cut back to the last whole record, nothing of the group acknowledged
                assert (fs / "t.wlog").read_bytes() == header + first
                assert changes == [True] and not done
                # it goes on retrying (and cutting back) without acknowledging anything
                retried, tries = writer.paused_seconds, disk.full
                await wait_until(lambda: disk.full >= tries + 3, what="three more tries on the full disk")
                assert not done and writer.paused and (fs / "t.wlog").read_bytes() == header + first
                assert writer.paused_seconds == retried      # counted when the pause ends
                room_made = trio.current_time()
                filler.unlink()
                await wait_until(lambda: done, what="the group acknowledged once there was room")
                assert done[0] - room_made < 2.0, done[0] - room_made    # RETRY_MAX 1 s
                assert changes == [True, False] and not writer.paused and writer.pauses == 1
                assert writer.paused_seconds > 0.3     # three retries: 0.05 + 0.1 + 0.2 s
                await writer.commit(log, record(3, 100))
                writer.close()
        # every record once, whole, in order
        assert (fs / "t.wlog").read_bytes() == header + first + second + record(3, 100)


async def test_a_table_that_logs_after_the_writer_failed_waits_for_the_stop_instead_of_dying(tmp_path):
    """A failure that is not waited out (here EISDIR: the log's path became a directory)
    stops the server; a table that logs during the goodbye (a turn timer, a refused intent)
    must wait, acknowledging nothing, until the stop cancels it. Found: its commit raised
    trio.BrokenResourceError (the writer's channel was closed), which killed the table's
    task mid-goodbye and escaped `wildtable serve` as a traceback."""
    broken = LogFile.create(tmp_path / "broken.wlog", b"HEADER")
    healthy = LogFile.create(tmp_path / "healthy.wlog", b"HEADER")
    (tmp_path / "broken.wlog").unlink()
    (tmp_path / "broken.wlog").mkdir()
    writer = LogWriter()
    failed = []
    with trio.fail_after(10):
        async with trio.open_nursery() as n:
            async def run_writer(task_status=trio.TASK_STATUS_IGNORED):
                try:
                    await writer.run(task_status=task_status)
                except StorageFailed as e:
                    failed.append(e)
            await n.start(run_writer)
            n.start_soon(writer.commit, broken, b"record")
            await wait_until(lambda: failed, what="the writer stopped")
            assert "cannot write the table logs" in str(failed[0])
            # what tables do during the goodbye: nothing is acknowledged, nothing raises
            for call in (writer.commit(healthy, b"timer move"), writer.append(healthy, b"refusal"),
                         writer.release(healthy)):
                with trio.move_on_after(0.05) as waited:
                    await call
                assert waited.cancelled_caught
            assert writer.failed is failed[0]          # tables answer storage_error meanwhile
            n.cancel_scope.cancel()
    assert (tmp_path / "healthy.wlog").read_bytes() == b"HEADER"


async def test_a_failed_fsync_is_not_waited_out_it_stops_the_writer(tmp_path):
    """Only a write with no room pauses; a failed fsync stops (after one, the page cache
    cannot be trusted). Here the "log" is a FIFO: its write goes through and its fsync
    fails (EINVAL). A guard that stays true of the old code as well: a pause that swallowed
    fsync failures would make it fail."""
    fifo = tmp_path / "t.wlog"
    os.mkfifo(fifo, 0o600)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)     # so that the writer's open does not block
    try:
        writer = LogWriter()
        failed = []
        with trio.fail_after(10):
            async with trio.open_nursery() as n:
                async def run_writer(task_status=trio.TASK_STATUS_IGNORED):
                    try:
                        await writer.run(task_status=task_status)
                    except StorageFailed as e:
                        failed.append(e)
                await n.start(run_writer)
                n.start_soon(writer.commit, LogFile(fifo), b"record")
                await wait_until(lambda: failed, what="the writer stopped")
                n.cancel_scope.cancel()
        assert not writer.paused and writer.pauses == 0
        assert str(failed[0]) == "cannot write the table logs: Invalid argument", failed
    finally:
        os.close(reader)
