"""/readyz says whether a `wildtable serve` process accepts play, and why not: 503
"starting" while it recovers its tables, 200 once it serves, 503 "draining" from SIGTERM
on (with --drain-seconds it goes on serving meanwhile, so a load balancer can send new
players elsewhere first). /healthz is 200 all along. Both on the game port and the ops
port (--metrics-port); /metrics only on the ops port."""

from __future__ import annotations

import os
import signal

import trio

from wildtable.headless.net import connect
from wildtable.protocol import messages as m

from opskit import get, ops_serve, readyz, until_ready


async def test_starting_serving_draining(tmp_path):
    data = tmp_path / "data"
    data.mkdir(mode=0o700)
    # a log that recovery cannot read until the test writes it: the server is starting
    # for as long as the test likes (a slow disk, a big data dir)
    fifo = data / "tslow.wlog"
    os.mkfifo(fifo, 0o600)
    with trio.fail_after(60):
        async with ops_serve(data, "--drain-seconds", "60") as sp:
            status, body = await readyz(sp.ops)
            assert status == 503 and body["state"] == "starting" and not body["ready"], body
            assert "starting" in body["reason"]
            assert (await get(sp.ops, "/healthz"))[0] == 200

            def unblock():
                with open(fifo, "wb") as f:
                    f.write(b"not a log")           # refused by recovery, with an error: not the server's end
            await trio.to_thread.run_sync(unblock)
            port = await sp.serving()
            for p in (sp.ops, port):
                assert await until_ready(p, True, timeout=5) == {"ready": True, "state": "serving"}
                assert (await get(p, "/healthz"))[0] == 200
            assert (await get(port, "/metrics"))[0] == 404         # not for every visitor of the game port
            assert (await get(sp.ops, "/metrics"))[0] == 200

            async with connect(f"ws://127.0.0.1:{port}", "ann") as ann:
                sp.proc.send_signal(signal.SIGTERM)
                for p in (sp.ops, port):
                    body = await until_ready(p, False, timeout=10)
                    assert body["state"] == "draining" and "SIGTERM" in body["reason"], body
                # still serving while it drains: a player already here plays on
                await ann.send(m.ListTables())
                assert isinstance(await ann.receive_until(lambda x: isinstance(x, m.TableList)), m.TableList)
                sp.proc.send_signal(signal.SIGTERM)       # a second signal: stop now
                with trio.fail_after(15):
                    assert await sp.proc.wait() == 0
