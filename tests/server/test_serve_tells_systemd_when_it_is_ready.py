"""Under systemd (Type=notify, docs/wildtable.service) `wildtable serve` sends READY=1 to
$NOTIFY_SOCKET once it accepts play (never before: /readyz answers 200 by then), and
STOPPING=1 on SIGTERM. A real process and a datagram socket standing in for systemd."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys

import trio

from adversarial_kit import DIE_WITH_PARENT
from opskit import http_get
from proc import LineReader


async def test_ready_then_stopping(tmp_path):
    path = str(tmp_path / "notify")
    sock = trio.socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    await sock.bind(path)
    proc = await trio.lowlevel.open_process(
        [sys.executable, str(DIE_WITH_PARENT), str(os.getpid()), sys.executable, "-m", "wildtable", "serve",
         "--port", "0", "--data-dir", str(tmp_path / "data")],
        stderr=subprocess.DEVNULL, stdout=subprocess.PIPE, env={**os.environ, "NOTIFY_SOCKET": path})
    out = LineReader(proc.stdout)
    try:
        with trio.fail_after(30):
            first = (await sock.recv(4096)).decode().split("\n")
            assert first[0] == "READY=1" and first[1].startswith("STATUS=serving on ws://127.0.0.1:"), first
            port = int(first[1].rsplit(":", 1)[1])
            assert (await out.until(r"serving on ws://\S+:(\d+)")).group(1) == str(port)
            status, _, body = await trio.to_thread.run_sync(http_get, port, "/readyz")
            assert status == 200, body
            proc.send_signal(signal.SIGTERM)
            second = (await sock.recv(4096)).decode().split("\n")
            assert second[0] == "STOPPING=1" and "SIGTERM" in second[1], second
            assert await proc.wait() == 0
    finally:
        if proc.returncode is None:
            proc.kill()
            with trio.CancelScope(shield=True):
                await proc.wait()
        sock.close()
