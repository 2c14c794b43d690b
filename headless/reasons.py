"""Why a connection failed, as one sentence for the player, and whether a failure is the
network's (retried) rather than a bug of ours (raised). Apart from the connection layer
(headless/core.py) so that it keeps to moving bytes (docs/ARCHITECTURE.md, "headless/ (wildtable.headless)")."""

from __future__ import annotations

import os

import trio

from .net import NotOurServer, ServerError
from .wire import ConnectionClosed, ConnectionRejected, HandshakeError
from .words import printable


def is_network_error(e: BaseException) -> bool:
    """A dropped or refused connection (possibly wrapped in a group), not a bug of ours."""
    if isinstance(e, BaseExceptionGroup):
        return all(is_network_error(x) for x in e.exceptions)
    return isinstance(e, (ConnectionClosed, HandshakeError, OSError, trio.TooSlowError,
                          trio.BrokenResourceError, trio.ClosedResourceError, ServerError, NotOurServer))


def reason(e: BaseException) -> str:
    if isinstance(e, BaseExceptionGroup):
        return reason(e.exceptions[0])
    if isinstance(e, ConnectionRejected):
        return _rejected(e)
    if isinstance(e, ConnectionClosed):
        if e.code == 1006:
            return e.reason or "connection lost"
        return f"closed by the server ({e.code}{': ' + e.reason if e.reason else ''})" if e.code else "connection closed"
    if isinstance(e, OSError):
        text = e.strerror or str(e) or type(e).__name__
        # trio's "all attempts to connect to HOST:PORT failed" keeps why in its cause
        why = e.__cause__
        if not e.strerror and isinstance(why, BaseExceptionGroup) and isinstance(why.exceptions[0], OSError):
            code = why.exceptions[0].errno
            if code:
                text = f"{text} ({os.strerror(code)})"
        return text
    if isinstance(e, trio.TooSlowError):
        return "timed out"
    return str(e) or type(e).__name__


def _rejected(e: ConnectionRejected) -> str:
    """One sentence for a WebSocket handshake answered with plain HTTP. A wildtable server
    refuses with a short plain-text sentence (full, too many connections, a refused origin):
    that is shown; anything else (a web page, a redirect) means another kind of server."""
    headers = {k.lower(): v for k, v in e.headers}
    kind = headers.get("content-type", "").split(";")[0].strip().lower()
    body = e.body
    text = body.decode("utf-8", "replace").strip()
    if kind == "text/plain" and text and len(text) <= 300 and "\n" not in text and text.isprintable():
        return f"the server refused the connection (HTTP {e.status_code}): {text}"
    served = headers.get("server", "")
    what = "a web page" if kind == "text/html" else f"{kind} content" if kind else "no WebSocket"
    return (f"it is not a wildtable server: it answered with HTTP {e.status_code}"
            f"{' from ' + printable(served[:60]) if served else ''} and {what}, not a WebSocket")
