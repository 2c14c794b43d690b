"""`wildtable serve` whose logs stop being writable mid-game (here a file size limit,
as a full disk would do): it stops with a sentence that names the cause, telling its
clients why, and every action it acknowledged is in the log. Found: the error escaped as
an OSError and was reported as "cannot listen on ... is another server running there?"."""

from __future__ import annotations

import resource
import subprocess
import sys

import trio

from wildtable.headless.net import connect
from wildtable.protocol import messages as m
from wildtable.protocol.logfmt import read_log

from proc import LineReader
from serverkit import create, join

LIMIT = 2_500           # bytes a file of the server's may grow to: reached by the accepted draws


def _limit_file_size():
    resource.setrlimit(resource.RLIMIT_FSIZE, (LIMIT, LIMIT))


async def test_a_log_that_cannot_be_written_stops_the_server_with_a_clear_sentence(tmp_path):
    data = tmp_path / "data"
    with trio.fail_after(60):
        proc = await trio.lowlevel.open_process(
            [sys.executable, "-m", "wildtable", "serve", "--port", "0", "--data-dir", str(data)],
            stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, preexec_fn=_limit_file_size)
        err = LineReader(proc.stderr, errors="replace")
        url = (await err.until(r"serving on (ws://\S+)", timeout=20)).group(1)
        accepted: list[int] = []
        goodbye = None
        async with connect(url, "ann") as ann, connect(url, "bob") as bob:
            table = await create(ann, "run-wild", 2)
            await join(ann, table, 0)
            await join(bob, table, 1)
            # every accepted draw is logged, so the log grows until it cannot (about 70 bytes
            # a draw; refusals alone would not do it: only a few a second are logged)
            intent = 0
            try:
                while goodbye is None:
                    for c in (ann, bob):
                        intent += 1
                        await c.send(m.Intent(intent, {"kind": "ready" if intent <= 2 else "draw"}))
                    for c in (ann, bob):
                        while True:
                            x = await c.receive()
                            if isinstance(x, m.Accepted):
                                accepted.append(x.seq)
                            if isinstance(x, m.Goodbye):
                                goodbye = x
                            if isinstance(x, (m.Accepted, m.Rejected, m.Goodbye)):
                                break
            except Exception:           # the connection closed under us: the server stopped
                pass
        assert await proc.wait() == 1
        text = await err.read_to_end()
        assert "Traceback" not in text, text[-3000:]
        assert "cannot listen" not in text, text[-3000:]
        assert "wildtable serve: cannot write the table logs: File too large; stopped." in text, text[-3000:]
        # the players were told why, not just cut off
        assert goodbye is not None and "cannot write the table logs" in goodbye.reason, goodbye
    # durable before told: every acknowledged seq is in the log (its torn tail cut)
    logged = {r.seq for r in read_log((data / f"{table}.wlog").read_bytes()).records if hasattr(r, "by")}
    assert accepted and set(accepted) <= logged, sorted(set(accepted) - logged)[:10]
