"""The operator's view of a server in tests: `wildtable serve --metrics-port 0` as a real
subprocess (its ops port read from its log), and plain HTTP GETs of /healthz, /readyz and
/metrics (in a worker thread: the server may be answering in the test's own Trio run)."""

from __future__ import annotations

import http.client
import json
import os
import subprocess
import sys
from contextlib import asynccontextmanager

import trio
from prometheus_client.parser import text_string_to_metric_families

from adversarial_kit import DIE_WITH_PARENT
from proc import LineReader


def http_get(port: int, path: str) -> tuple[int, str, bytes]:
    """(status, content type, body) of GET ``path`` on 127.0.0.1:``port``."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request("GET", path)
        r = conn.getresponse()
        return r.status, r.getheader("Content-Type") or "", r.read()
    finally:
        conn.close()


async def get(port: int, path: str) -> tuple[int, str, bytes]:
    return await trio.to_thread.run_sync(http_get, port, path)


async def readyz(port: int) -> tuple[int, dict]:
    status, ctype, body = await get(port, "/readyz")
    assert ctype == "application/json", ctype
    return status, json.loads(body)


async def until_ready(port: int, ready: bool, timeout: float = 15) -> dict:
    """Ask /readyz until it answers 200 (``ready``) or 503 (not); the last body. Fails with
    the last answer if it never does within ``timeout`` s."""
    want = 200 if ready else 503
    last = None
    with trio.move_on_after(timeout):
        while True:
            last = await readyz(port)
            if last[0] == want:
                return last[1]
            await trio.sleep(0.05)
    raise AssertionError(f"/readyz did not answer {want} within {timeout} s; last: {last}")


async def scrape(port: int) -> dict:
    """{(sample name, labels as a sorted tuple): value}; the families' types checked."""
    status, ctype, body = await get(port, "/metrics")
    assert status == 200 and ctype.startswith("text/plain; version=0.0.4"), (status, ctype)
    out = {}
    for family in text_string_to_metric_families(body.decode()):
        assert family.type in ("counter", "gauge", "histogram"), family
        for s in family.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


def of(metrics: dict, name: str, **labels) -> float:
    return metrics.get((name, tuple(sorted(labels.items()))), 0.0)


class OpsServe:
    """A `wildtable serve --port 0 --metrics-port 0` subprocess; ``ops`` is its ops port,
    ``port`` its game port once it serves (``serving()``)."""

    def __init__(self, proc: trio.Process, stderr: LineReader, ops: int, nursery: trio.Nursery):
        self.proc, self.stderr, self.ops, self._nursery = proc, stderr, ops, nursery
        self.port: int | None = None

    async def serving(self, timeout: float = 30) -> int:
        """Its game port, once it says it serves; what it logs after that is read as it
        comes (into ``stderr.seen``), so that the pipe never fills."""
        found = await self.stderr.until(r"serving on ws://\S+:(\d+)", timeout=timeout)
        self.port = int(found.group(1))
        self._nursery.start_soon(self.stderr.read_to_end)
        return self.port


@asynccontextmanager
async def ops_serve(data_dir, *extra: str, env: dict | None = None):
    """``OpsServe`` once its ops port listens (before it recovers its tables); ``env``:
    variables for it besides ours. Ended at exit if it still runs: SIGTERM, then SIGKILL
    after 10 s."""
    proc = await trio.lowlevel.open_process(
        [sys.executable, str(DIE_WITH_PARENT), str(os.getpid()), sys.executable, "-m", "wildtable", "serve",
         "--port", "0", "--metrics-port", "0", "--data-dir", str(data_dir), *extra],
        stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, env={**os.environ, **(env or {})})
    stderr = LineReader(proc.stderr, errors="replace")
    try:
        async with trio.open_nursery() as nursery:
            found = await stderr.until(r"metrics on http://\S+:(\d+)/metrics", timeout=30)
            yield OpsServe(proc, stderr, int(found.group(1)), nursery)
            nursery.cancel_scope.cancel()
    finally:
        with trio.CancelScope(shield=True):
            if proc.returncode is None:
                proc.terminate()
                with trio.move_on_after(10):
                    await proc.wait()
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
