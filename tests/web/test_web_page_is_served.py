"""`wildtable serve` serves the browser client on its own port: the page and its modules
with their content types, caching headers, a Content-Security-Policy that allows no inline
script, nosniff; 404 for any other path (no way out of the package's files); and the
WebSocket accepts the page's own Origin, and no other."""

from __future__ import annotations

import http.client
import json
import re
import socket

from hostilekit import new_key, upgrade_request
from wildtable.protocol.games import REGISTRY
from wildtable.server.web import WebFiles


def fetch(port: int, path: str, method: str = "GET", headers: dict | None = None):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        conn.request(method, path, headers=headers or {})
        r = conn.getresponse()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
    finally:
        conn.close()


def test_the_page_and_its_files_come_with_types_cache_and_csp(web_server):
    port = web_server.port
    status, headers, body = fetch(port, "/")
    assert status == 200
    assert headers["content-type"] == "text/html; charset=utf-8"
    csp = headers["content-security-policy"]
    directives = dict(d.strip().split(" ", 1) for d in csp.split(";"))
    assert directives["script-src"] == "'self'"             # no 'unsafe-inline', no other origin
    assert "unsafe" not in csp
    assert directives["default-src"] == "'none'"
    assert headers["x-content-type-options"] == "nosniff"
    assert headers["cache-control"] == "no-cache" and headers["etag"]
    html = body.decode()
    # no inline script: every <script> has a src and no body; no on...= handler attributes
    scripts = re.findall(r"<script\b([^>]*)>(.*?)</script>", html, re.S | re.I)
    assert scripts and all("src=" in attrs and not inner.strip() for attrs, inner in scripts), scripts
    assert not re.search(r"\son[a-z]+\s*=", html, re.I)

    # every file the page loads, with its own type; a second fetch with the ETag is a 304
    for path, ctype in [("/app/main.js", "text/javascript"), ("/vendor/msgpack/index.mjs", "text/javascript"),
                        ("/style.css", "text/css"), ("/favicon.svg", "image/svg+xml")]:
        status, h, body = fetch(port, path)
        assert status == 200 and h["content-type"].startswith(ctype), (path, status, h)
        assert h["content-security-policy"] == csp and h["x-content-type-options"] == "nosniff"
        assert int(h["content-length"]) == len(body) > 0
        status, h2, body2 = fetch(port, path, headers={"If-None-Match": h["etag"]})
        assert status == 304 and body2 == b"", (path, status)
    status, h, body = fetch(port, "/app/main.js", "HEAD")
    assert status == 200 and body == b"" and int(h["content-length"]) > 0


def test_any_other_path_is_a_404_and_cannot_leave_the_files(web_server):
    port = web_server.port
    for path in ["/index.html", "/nope", "/app/", "/app", "/../server/web.py", "/app/../../server/web.py",
                 "/app/%2e%2e/%2e%2e/server/web.py", "/__init__.py", "/vendor/msgpack/LICENSE", "//etc/passwd",
                 "/vendor/refresh.sh", "/app/main.js/", "/APP/MAIN.JS"]:
        # raw, so that no client library tidies the path first
        with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
            s.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
            head = s.recv(65536).split(b"\r\n", 1)[0]
        assert head.startswith(b"HTTP/1.1 404"), (path, head)
    assert fetch(port, "/", "POST")[0] == 405


def test_the_served_files_are_the_package_data(web_server):
    files = WebFiles().files
    assert {"/", "/app/main.js", "/app/net.js", "/app/games/run_wild.js", "/vendor/msgpack/index.mjs",
            "/style.css", "/games.json"} <= set(files)
    assert not [p for p in files if p.endswith(".py") or "/." in p or "/_" in p]


def test_the_games_and_their_settings_come_from_the_engines(web_server):
    status, headers, body = fetch(web_server.port, "/games.json")
    assert status == 200 and headers["content-type"] == "application/json"
    games = {g["name"]: g for g in json.loads(body)["games"]}
    assert set(games) == set(REGISTRY)
    for name, engine in REGISTRY.items():
        g = games[name]
        assert (g["title"], g["min_seats"], g["max_seats"]) == (engine.TITLE, engine.MIN_PLAYERS, engine.MAX_PLAYERS)
        assert {s["name"]: s["default"] for s in g["settings"]} == engine.default_settings()


def test_the_websocket_accepts_the_pages_origin_and_no_other(web_server):
    port = web_server.port
    host = f"127.0.0.1:{port}"

    def status_for(origin: str) -> bytes:
        with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
            s.sendall(upgrade_request(host, key=new_key(), origin=origin))
            return s.recv(65536).split(b"\r\n", 1)[0]

    assert b" 101 " in status_for(f"http://{host}")
    assert b" 403 " in status_for("http://evil.example")
    assert b" 403 " in status_for(f"http://127.0.0.1:{port + 1}")


def test_the_page_loads_in_chromium_and_connects(players):
    p = players("page").open()
    p.page.wait_for_selector("#name")
    p.enter("ann")
    assert "connected as ann" in p.page.inner_text("#conn")
    # the policy holds in the browser: an inline script injected now does not run
    ran = p.page.evaluate("""() => { const s = document.createElement('script');
        s.textContent = 'window.__inline_ran = true'; document.body.append(s); return !!window.__inline_ran; }""")
    assert ran is False
    p.problems[:] = [x for x in p.problems if "Content Security Policy" not in x]   # that refusal was ours
