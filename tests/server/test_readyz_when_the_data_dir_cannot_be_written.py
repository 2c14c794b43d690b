"""/readyz answers 503 with the reason while the data dir cannot be written (its disk
full, the directory gone), and 200 again once it can, without a restart; the server
serves on meanwhile (a table whose log cannot be written stops it: docs/OPERATING.md).
Real `wildtable serve` processes; the full disk is a small tmpfs (root only: skipped
where mounting is not allowed)."""

from __future__ import annotations

import errno
import shutil
import subprocess

import pytest
import trio

from opskit import get, ops_serve, until_ready


async def test_the_data_dir_gone_and_back(tmp_path):
    data = tmp_path / "data"
    with trio.fail_after(60):
        async with ops_serve(data) as sp:
            port = await sp.serving()
            await until_ready(port, True)
            shutil.move(data, tmp_path / "elsewhere")
            body = await until_ready(port, False)
            assert body["state"] == "serving" and "cannot write in the data dir" in body["reason"], body
            assert str(data) in body["reason"]
            assert (await get(port, "/healthz"))[0] == 200          # alive all the same
            shutil.move(tmp_path / "elsewhere", data)
            await until_ready(port, True)
            await until_ready(sp.ops, True)
    log = sp.stderr.text
    assert "not ready (/readyz answers 503): cannot write in the data dir" in log and "make room" in log, log
    assert "ready again (/readyz answers 200): the data dir can be written again" in log


def _fill(path) -> None:
    """Write zeros to ``path`` until the disk is full."""
    with open(path, "wb", buffering=0) as f:
        block = bytes(65536)
        while True:
            try:
                f.write(block)
            except OSError as e:
                assert e.errno == errno.ENOSPC, e
                return


async def test_a_full_disk_and_room_made(tmp_path):
    disk = tmp_path / "disk"
    disk.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m,mode=0700", "tmpfs", str(disk)],
                             capture_output=True)
    if mounted.returncode:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode().strip()}")
    try:
        data = disk / "data"
        with trio.fail_after(60):
            async with ops_serve(data) as sp:
                port = await sp.serving()
                await until_ready(port, True)
                await trio.to_thread.run_sync(_fill, disk / "filler")
                body = await until_ready(port, False)
                assert "is full" in body["reason"] and str(data) in body["reason"], body
                (disk / "filler").unlink()
                await until_ready(port, True)
    finally:
        subprocess.run(["umount", "-l", str(disk)], capture_output=True)
