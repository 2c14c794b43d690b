"""`serve --log-format json`: every line on stderr is one JSON object (time, level,
logger, message, event; table and peer where the line names them), from the start to
the end of a real process, warnings and tracebacks included (a JSON string holds a
traceback's newlines escaped)."""

from __future__ import annotations

import datetime
import http.client
import json
import signal

import trio

from wildtable.headless.net import connect

from opskit import get, ops_serve
from serverkit import create


def _foreign_page(port: int) -> int:
    """A WebSocket opened by a page of another site (refused, 403); the status."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request("GET", "/", headers={"Upgrade": "websocket", "Connection": "Upgrade",
                                          "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==",
                                          "Sec-WebSocket-Version": "13", "Origin": "https://evil.example"})
        return conn.getresponse().status
    finally:
        conn.close()


async def test_every_line_is_one_json_object(tmp_path):
    data = tmp_path / "data"
    data.mkdir(mode=0o755)          # open to others: the server narrows it, with a warning
    with trio.fail_after(60):
        async with ops_serve(data, "--log-format", "json") as sp:
            port = await sp.serving()
            async with connect(f"ws://127.0.0.1:{port}", "ann") as ann:
                table = await create(ann, "go-wild", 2)
            assert (await get(port, "/readyz"))[0] == 200
            assert await trio.to_thread.run_sync(_foreign_page, port) == 403     # a warning naming its peer
            sp.proc.send_signal(signal.SIGTERM)
            assert await sp.proc.wait() == 0
            while not sp.stderr.text.endswith("\n") or "stopped" not in sp.stderr.text:
                await trio.sleep(0.02)          # the last lines, read as they come
    lines = sp.stderr.text.splitlines()
    records = [json.loads(line) for line in lines]          # each line parses alone
    assert len(records) >= 5
    for r in records:
        assert {"time", "level", "logger", "message", "event"} <= set(r), r
        assert datetime.datetime.fromisoformat(r["time"].replace("Z", "+00:00")).tzinfo is not None
        assert r["level"] in ("debug", "info", "warning", "error", "critical"), r
    said = [r["message"] for r in records]
    assert any(m.startswith("serving on ws://") for m in said), said
    assert any(m.startswith("table ") and "created" in m for m in said), said
    warnings = [r for r in records if r["level"] == "warning"]
    assert any("narrowed" in r["message"] for r in warnings), warnings
    # an event names the kind of line, the same for every line of that kind
    created = [r for r in records if "created" in r["message"]]
    assert created[0]["event"] == "table %s created: %s for %d", created
    assert created[0]["table"] == table
    (refused,) = [r for r in warnings if "evil.example" in r["message"]]
    # the peer as every log line names it: its address and port (server/wire.py, host_port)
    assert refused["peer"].startswith("127.0.0.1:") and "--allow-origin" in refused["message"], refused
