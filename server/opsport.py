"""The operator's port (`serve --metrics-port`): ``GET /metrics`` (Prometheus text),
``/healthz`` and ``/readyz``, plain HTTP/1.1, one request per connection.

Why a port of its own, on 127.0.0.1 unless told otherwise: the metrics say how many
players a server has, which tables exist and what fails; that is for its operator, not
for every visitor of the game port (docs/OPERATING.md, "Metrics"). /healthz and /readyz
are on the game port too (server/web.py), for load balancers that only see that one.

What a peer can make it hold is bounded: MAX_CLIENTS connections at once (the rest are
closed unanswered), a request head of at most HEAD_MAX bytes read within TIMEOUT seconds,
and one answer each. A scrape reads the counters and one pass over the connections and
tables (server/metrics.py).
"""

from __future__ import annotations

import logging

import trio

from .health import PATHS
from .metrics import CONTENT_TYPE, read_gauges

log = logging.getLogger("wildtable.server")

MAX_CLIENTS = 8             # connections to the ops port at once
HEAD_MAX = 8192             # bytes of request head at most
TIMEOUT = 5.0               # seconds for a request to arrive and its answer to go out

_PHRASES = {200: "OK", 400: "Bad Request", 404: "Not Found", 405: "Method Not Allowed", 503: "Service Unavailable"}


def respond(server, method: str, path: str) -> tuple[int, str, bytes]:
    """(status, content type, body) for one request; pure but for reading the server."""
    path = path.split("?", 1)[0]
    if method not in ("GET", "HEAD"):
        return 405, "text/plain; charset=utf-8", b"only GET and HEAD are served here\n"
    if path == "/metrics":
        return 200, CONTENT_TYPE, server.metrics.render(read_gauges(server))
    if path in PATHS:
        status, body = server.health.answer(path)
        return status, "application/json", body
    return 404, "text/plain; charset=utf-8", b"this is the operator's port of a wildtable server: /metrics, " \
        b"/healthz, /readyz\n"


def _response(status: int, ctype: str, body: bytes, head: bool) -> bytes:
    return (f"HTTP/1.1 {status} {_PHRASES.get(status, 'Error')}\r\nContent-Type: {ctype}\r\n"
            f"Content-Length: {len(body)}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n").encode() \
        + (b"" if head else body)


class OpsPort:
    def __init__(self, server):
        self.server = server
        self.clients = 0

    async def run(self, host: str, port: int, *, task_status=trio.TASK_STATUS_IGNORED) -> None:
        """Serve until cancelled; ``task_status.started`` gets the bound port."""
        try:
            listeners = await trio.open_tcp_listeners(port, host=host)
        except OSError as e:
            e.ops_port = True  # type: ignore[attr-defined]  # an OSError marked as ours; `serve` names --metrics-host/--metrics-port in its sentence (server/main.py)
            raise
        bound = listeners[0].socket.getsockname()[1]
        log.info("metrics on http://%s/metrics (and /healthz, /readyz)",
                 f"[{host}]:{bound}" if ":" in host else f"{host}:{bound}")
        async with trio.open_nursery() as nursery:
            task_status.started(bound)
            await trio.serve_listeners(self._one, listeners, handler_nursery=nursery)

    async def _one(self, stream: trio.SocketStream) -> None:
        if self.clients >= MAX_CLIENTS:
            await trio.aclose_forcefully(stream)
            return
        self.clients += 1
        try:
            with trio.move_on_after(TIMEOUT):
                head = b""
                while b"\r\n\r\n" not in head and b"\n\n" not in head:
                    chunk = await stream.receive_some(HEAD_MAX)
                    if not chunk:
                        return
                    head += chunk
                    if len(head) > HEAD_MAX:
                        await stream.send_all(_response(400, "text/plain", b"request head too long\n", False))
                        return
                parts = head.split(b"\r\n", 1)[0].split(b"\n", 1)[0].decode("latin-1").split()
                if len(parts) != 3 or not parts[2].startswith("HTTP/"):
                    await stream.send_all(_response(400, "text/plain", b"not an HTTP request\n", False))
                    return
                method, path = parts[0], parts[1]
                status, ctype, body = respond(self.server, method, path)
                await stream.send_all(_response(status, ctype, body, method == "HEAD"))
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
            pass
        finally:
            self.clients -= 1
            await trio.aclose_forcefully(stream)
