"""One server per data dir (issue #15, item 2). Found: `wildtable serve --data-dir D`
twice, on two ports: both recovered the table, both gave out seat 1, both wrote the same
log, and the next start refused the table (`expected seq 3, found 1`): lost. Now a
server holds an OS lock (flock) on D/server.lock for its life: a second server says so
in one sentence and exits 1; a crashed server's lock goes with its process. `replay` of
a log in a dir a live server holds says so, and reads the log as written so far: every
whole record, and at most the first bytes of the one being written (left out, not
damage); anything else is damage (exit 1). Real `wildtable` subprocesses throughout."""

from __future__ import annotations

import signal
import subprocess
import sys

import trio

from wildtable.headless.net import connect
from wildtable.protocol import messages as m
from wildtable.protocol.logfmt import SeatClaimed, encode_record, read_log
from wildtable.protocol.replay import replay

from proc import LineReader
from serverkit import create, join

WILDTABLE = [sys.executable, "-m", "wildtable"]


async def serve(data, *extra):
    """A `wildtable serve` on a free port: the process, its url, a reader of its stderr."""
    proc = await trio.lowlevel.open_process([*WILDTABLE, "serve", "--port", "0", "--data-dir", str(data), *extra],
                                            stderr=subprocess.PIPE, stdout=subprocess.DEVNULL)
    err = LineReader(proc.stderr, errors="replace")
    try:
        url = (await err.until(r"serving on (ws://\S+)", timeout=30)).group(1)
    except BaseException:
        proc.kill()
        await proc.wait()
        raise
    return proc, url, err


async def stop(proc, sig=signal.SIGTERM) -> int:
    if proc.returncode is None:
        proc.send_signal(sig)
    with trio.move_on_after(15):
        return await proc.wait()
    proc.kill()
    return await proc.wait()


async def run(*argv, timeout=30) -> subprocess.CompletedProcess:
    """Run `wildtable ARGV` to its end (killed if it runs past ``timeout``, as a second
    server that starts serving would)."""
    with trio.move_on_after(timeout):
        return await trio.run_process([*WILDTABLE, *argv], capture_stdout=True, capture_stderr=True, check=False)
    raise AssertionError(f"wildtable {' '.join(argv)} still ran after {timeout} s (it was killed)")


async def test_a_second_server_on_the_data_dir_says_it_is_in_use_and_the_table_lives_on(tmp_path):
    data = tmp_path / "data"
    with trio.fail_after(90):
        proc, url, _ = await serve(data)
        try:
            async with connect(url, "ann") as ann, connect(url, "bob") as bob:
                table = await create(ann, "run-wild", 2)
                await join(ann, table)
                second = await run("serve", "--port", "0", "--data-dir", str(data))
                assert second.returncode == 1, second
                lines = second.stderr.decode().strip().splitlines()
                assert lines == [f"wildtable serve: data dir {data} is in use by another server (pid {proc.pid}, "
                                 f"serving on {url}): stop that one first, or give this one another --data-dir"], lines
                assert second.stdout == b""
                # the first server's table is whole: the next seat is seat 1, given once
                assert (await join(bob, table)).seat == 1
        finally:
            assert await stop(proc) == 0
        contents = read_log((data / f"{table}.wlog").read_bytes())
        assert contents.torn is None
        assert [(r.seat, r.name) for r in contents.records if type(r) is SeatClaimed] == [(0, "ann"), (1, "bob")]
        replay(contents)
        # and it starts again on the dir: the lock went with the server
        proc, url, err = await serve(data)
        assert await stop(proc) == 0
        assert "recovered 1 unfinished table" in await err.read_to_end()


async def test_a_crashed_servers_lock_goes_with_it(tmp_path):
    data = tmp_path / "data"
    with trio.fail_after(90):
        proc, url, _ = await serve(data)
        async with connect(url, "ann") as ann:
            table = await create(ann, "go-wild", 2)
            await join(ann, table)
        await stop(proc, signal.SIGKILL)           # no shutdown, no cleanup: a crash
        proc, url, err = await serve(data)
        try:
            async with connect(url, "bob") as bob:
                assert (await join(bob, table)).seat == 1
        finally:
            assert await stop(proc) == 0


async def test_replay_of_a_log_a_live_server_is_writing(tmp_path):
    data = tmp_path / "data"
    with trio.fail_after(120):
        proc, url, _ = await serve(data)
        try:
            async with connect(url, "ann") as ann, connect(url, "bob") as bob:
                table = await create(ann, "run-wild", 2)
                await join(ann, table)
                await join(bob, table)
                await ann.send(m.Intent(1, {"kind": "ready"}))
                await ann.receive_until(lambda x: isinstance(x, m.Accepted))
            log = data / f"{table}.wlog"
            whole = log.read_bytes()
            seq = replay(read_log(whole)).seq
            holds = f"a live server (pid {proc.pid}, serving on {url}) holds {data} and may be writing this log"

            # as written: every record is whole
            done = await run("replay", str(log), "--verify")
            assert done.returncode == 0, done
            out = done.stdout.decode()
            assert f"live: {holds}: replayed as written so far, up to seq {seq}\n" in out, out
            assert "torn" not in out and done.stderr == b"", done

            # caught in the middle of a write: the first bytes of the next record are there
            part = encode_record(SeatClaimed(1, "bob", b""))[:11]
            log.write_bytes(whole + part)
            done = await run("replay", str(log), "--verify")
            assert done.returncode == 0, done
            out = done.stdout.decode()
            assert (f"live: {holds}: replayed as written so far, up to seq {seq}; the last {len(part)} bytes (from "
                    f"byte offset {len(whole)}) are a record still being written, left out\n") in out, out
            done = await run("replay", str(log), "--json")
            assert done.returncode == 0 and done.stderr.decode().startswith(f"note: {log}: {holds}"), done

            # what no write in progress leaves: a record damaged in the middle
            bad = bytearray(whole)
            bad[len(whole) // 2] ^= 0xFF
            log.write_bytes(bytes(bad))
            done = await run("replay", str(log), "--verify")
            assert done.returncode == 1, done
            err = done.stderr.decode().strip().splitlines()
            assert len(err) == 1 and err[0].startswith(f"wildtable replay: {log}: "), err
            assert err[0].endswith(f"; {holds}, but this is damage, not a record being written"), err
            log.write_bytes(whole + part)
        finally:
            await stop(proc, signal.SIGKILL)

        # no server holds the dir now: the same bytes are a log cut mid-write, as before
        done = await run("replay", str(log), "--verify")
        assert done.returncode == 0, done
        assert "\nlive: " not in done.stdout.decode() and "\ntorn tail: " in done.stdout.decode(), done
