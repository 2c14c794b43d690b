"""SIGTERM (or Ctrl-C) while `wildtable serve --store` waits for its store at start
(server/storewait.py: nothing listens for it on that port) stops it at once and cleanly,
exit 0 as any stop: it served nobody yet, so there is nobody to tell or drain. Before the
start could wait, a signal then was heard only once the server served."""

from __future__ import annotations

import signal

import pytest
import trio

from adversarial_kit import serve_subprocess
from pgkit import free_port


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
async def test_a_signal_while_waiting_for_the_store_stops_serve(tmp_path, sig):
    store = f"postgresql://nobody@127.0.0.1:{free_port()}/none"        # nothing listens there
    async with serve_subprocess(tmp_path / "data", "--store", store) as (proc, err):
        with trio.fail_after(30):
            await err.until(r"waiting for the store to make its tables .*; trying again")
            proc.send_signal(sig)
            await err.until(rf"{sig.name} received while starting: stopping")
            await err.read_to_end()
            assert await proc.wait() == 0, err.text
        assert "Traceback" not in err.text, err.text
