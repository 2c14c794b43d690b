"""The browser client's files, served by `wildtable serve` on its own port.

listener.py hands every plain HTTP request (one without ``Upgrade: websocket``) to a handler;
``WebFiles`` is that handler. The files are the package data of ``wildtable.web`` (the
repository's ``web/`` folder), read once when the server starts and kept in memory (a few
tens of kB). A path is looked up in that fixed table, never joined to a directory, so no
request can reach another file: ``/`` is ``index.html``; ``/app/lobby.js`` is
``app/lobby.js``; everything else is 404.

``/games.json`` is made from the engines themselves (protocol/games): each game's name,
title, seat range and settings with their defaults, so the lobby's "new table" form offers
exactly the settings the game has.

``/healthz`` and ``/readyz`` say whether the server lives and accepts play (server/health.py).

``/replays.json`` and ``/replay/TABLE.json`` are the replay viewer's (server/replays.py):
finished games, stepped through by the engines on the server; given no ``replays``, 404.

Every answer carries a strict Content-Security-Policy (no inline script, no other
origin; the WebSocket to this server only), ``X-Content-Type-Options: nosniff`` and
``Cache-Control: no-cache`` with an ETag (the file's hash): a browser keeps its copy and
asks each time whether it is still current (304), so a new server version is never mixed
with old files.
"""

from __future__ import annotations

import functools
import hashlib
import json
from importlib import resources
from importlib.resources.abc import Traversable

from websockets.datastructures import Headers
from websockets.http11 import Request, Response

from .health import PATHS as HEALTH_PATHS
from .replays import FinishedGames, Replays, StoreGames

PACKAGE = "wildtable.web"

# What a file may be served as, by its extension; any other file of the package is not served.
CONTENT_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".mjs": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".ico": "image/x-icon",
    ".txt": "text/plain; charset=utf-8",
    ".json": "application/json",
}

# No inline script or style attribute, nothing from another origin, no plugins, no framing;
# the page connects only to its own server (ws: and wss: of the same host: 'self' covers
# them in current browsers, the explicit form is for older ones).
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
       "connect-src 'self' ws: wss:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")

_PHRASES = {200: "OK", 400: "Bad Request", 403: "Forbidden", 404: "Not Found", 409: "Conflict",
            410: "Gone", 413: "Content Too Large", 422: "Unprocessable Content", 503: "Service Unavailable"}

SECURITY_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cross-Origin-Opener-Policy": "same-origin",
}


def _served(body: bytes, ctype: str) -> tuple[bytes, str, str]:
    """A file as served: (body, content type, etag)."""
    return body, ctype, '"' + hashlib.sha256(body).hexdigest()[:32] + '"'


def _read_tree(node: Traversable, prefix: str = "") -> dict[str, tuple[bytes, str, str]]:
    """Every file under ``node`` that may be served (CONTENT_TYPES), by URL path."""
    files: dict[str, tuple[bytes, str, str]] = {}
    for item in node.iterdir():
        name = item.name
        if name.startswith((".", "_")):
            continue
        if item.is_dir():
            files.update(_read_tree(item, f"{prefix}/{name}"))
            continue
        ctype = CONTENT_TYPES.get(name[name.rfind("."):] if "." in name else "")
        if ctype is not None:
            files[f"{prefix}/{name}"] = _served(item.read_bytes(), ctype)
    return files


@functools.cache
def _package_files() -> dict[str, tuple[bytes, str, str]]:
    """The package's own files, read and hashed once per process (a node of the simulator
    starts hundreds of servers: 1.4 ms each); they are part of the installed code, which a
    running process does not reload either. Callers copy it (WebFiles.files)."""
    return _read_tree(resources.files(PACKAGE))


class WebFiles:
    """The HTTP handler for listener.serve: ``(Request, address) -> Response | None`` (the address as the listener's per-address caps key it: a replay request's share of the line)."""

    def __init__(self, root: Traversable | None = None, replays: Replays | None = None, health=None):
        self.replays = replays
        self.health = health            # /healthz and /readyz (server/health.py), if given
        self.files: dict[str, tuple[bytes, str, str]] = {}     # URL path -> (body, content type, etag)
        self.files.update(_package_files() if root is None else _read_tree(root))
        if "/index.html" in self.files:
            self.files["/"] = self.files.pop("/index.html")
        lobby = replays is None or replays.source.lobby
        self._add("/games.json", games_schema(lobby), CONTENT_TYPES[".json"])

    @classmethod
    def for_server(cls, server) -> "WebFiles":
        """The files, and the replays of ``server``'s finished games."""
        source = StoreGames(server) if server.store is not None else FinishedGames(server)
        replays = Replays(source)
        server.closers.append(replays.close)        # its replay process ends with it (server/app.py)
        return cls(replays=replays, health=server.health)

    def _add(self, path: str, body: bytes, ctype: str) -> None:
        self.files[path] = _served(body, ctype)

    @property
    def total_bytes(self) -> int:
        return sum(len(body) for body, _, _ in self.files.values())

    async def __call__(self, request: Request, address: str | None = None) -> Response | None:
        if _looks_like_websocket(request):
            return None         # a broken WebSocket handshake: listener.py says what is wrong with it
        path, _, query = request.path.split("#", 1)[0].partition("?")
        if request.method not in ("GET", "HEAD"):
            return _answer(405, "Method Not Allowed", b"only GET and HEAD are served here\n",
                           "text/plain; charset=utf-8", extra={"Allow": "GET, HEAD"})
        if self.health is not None and path in HEALTH_PATHS:
            status, body = self.health.answer(path)
            return _answer(status, _PHRASES[status], body, CONTENT_TYPES[".json"],
                           extra={"Cache-Control": "no-store"}, head=request.method == "HEAD")
        if self.replays is not None and Replays.serves(path):
            status, body = await self.replays.answer(path, query, address)
            return _answer(status, _PHRASES.get(status, "Error"), body, CONTENT_TYPES[".json"],
                           extra={"Cache-Control": "no-store"}, head=request.method == "HEAD")
        entry = self.files.get(path)
        if entry is None:
            return _answer(404, "Not Found", b"no such page on this wildtable server; the game is at /\n",
                           "text/plain; charset=utf-8", head=request.method == "HEAD")
        body, ctype, etag = entry
        cache = {"Cache-Control": "no-cache", "ETag": etag}
        if etag in [t.strip() for t in (request.headers.get("If-None-Match") or "").split(",")]:
            return _answer(304, "Not Modified", b"", None, extra=cache)
        return _answer(200, "OK", body, ctype, extra=cache, head=request.method == "HEAD")


def games_schema(lobby: bool = True) -> bytes:
    """The games as the lobby offers them: ``{"games": [{name, title, min_seats, max_seats,
    settings: [{name, type, default}]}], "lobby": bool}``, type one of bool, int, float, str,
    map (its default gives its keys, and the type of each value). Values are checked by the
    engine when the table is created (``bad_settings`` names what is wrong). ``lobby`` is
    false where there are no games, only a replay (`wildtable replay LOG --web`)."""
    from wildtable.protocol.games import REGISTRY

    def kind(v) -> str:
        for t, name in ((bool, "bool"), (int, "int"), (float, "float"), (str, "str")):
            if isinstance(v, t):
                return name
        return "map"

    games = [{"name": name, "title": g.TITLE, "min_seats": g.MIN_PLAYERS, "max_seats": g.MAX_PLAYERS,
              "settings": [{"name": k, "type": kind(v), "default": v} for k, v in g.default_settings().items()]}
             for name, g in REGISTRY.items()]
    return json.dumps({"games": games, "lobby": lobby}, separators=(",", ":")).encode()


def _looks_like_websocket(request: Request) -> bool:
    """A request that means to open a WebSocket but lacks ``Upgrade: websocket`` (or has it
    spelt wrongly): it gets the WebSocket layer's own refusal, not a page."""
    if "Sec-WebSocket-Key" in request.headers:
        return True
    return any("upgrade" in v.lower() for v in request.headers.get_all("Connection"))


def _answer(status: int, phrase: str, body: bytes, ctype: str | None, *, extra: dict | None = None,
            head: bool = False) -> Response:
    headers = Headers()
    if ctype is not None:
        headers["Content-Type"] = ctype
    if status != 304:
        headers["Content-Length"] = str(len(body))
    for k, v in SECURITY_HEADERS.items():
        headers[k] = v
    for k, v in (extra or {}).items():
        headers[k] = v
    headers["Connection"] = "close"
    return Response(status, phrase, headers, b"" if head or status == 304 else body)
