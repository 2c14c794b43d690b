"""A real nginx (Debian's /usr/sbin/nginx) in front of a server, configured with the
``location /`` block docs/PLAYING.md documents ("TLS with a reverse proxy"), read from
the doc itself, on plain HTTP (the doc's TLS lines need a certificate and change nothing
the server sees).

It listens on a port the OS chose: the test binds the socket and hands it to nginx as
an inherited socket (the ``NGINX`` environment variable nginx reads for its binary
upgrades), so there is no race for a port. nginx's master runs in a process group of its
own under tests/die_with_parent.py, so its worker goes with it however the test ends.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
from contextlib import asynccontextmanager
from pathlib import Path

import trio

NGINX = Path("/usr/sbin/nginx")
PLAYING = Path(__file__).resolve().parents[1] / "docs" / "PLAYING.md"
DIE_WITH_PARENT = Path(__file__).resolve().parent / "die_with_parent.py"
DOC_UPSTREAM = "proxy_pass http://127.0.0.1:8765;"


def documented_location() -> list[str]:
    """The lines inside the ``location / { ... }`` of the nginx block in docs/PLAYING.md."""
    text = PLAYING.read_text()
    block = next(b for b in re.findall(r"```[a-z]*\n(.*?)```", text, re.S) if DOC_UPSTREAM in b)
    inside = re.search(r"location / \{\n(.*?)\n\s*\}", block, re.S)
    assert inside, "docs/PLAYING.md: no `location / { ... }` in its nginx block"
    return [line.strip() for line in inside.group(1).splitlines() if line.strip()]


def config(prefix: Path, port: int, upstream_port: int) -> str:
    location = "\n        ".join(line.replace(DOC_UPSTREAM, f"proxy_pass http://127.0.0.1:{upstream_port};")
                                for line in documented_location())
    user = "user root;" if os.geteuid() == 0 else ""       # its worker reads the temp prefix
    return f"""
daemon off;
{user}
worker_processes 1;
pid {prefix}/nginx.pid;
error_log {prefix}/error.log notice;
events {{ worker_connections 1024; }}
http {{
    access_log off;
    client_body_temp_path {prefix}/body;
    proxy_temp_path {prefix}/proxy;
    fastcgi_temp_path {prefix}/fastcgi;
    uwsgi_temp_path {prefix}/uwsgi;
    scgi_temp_path {prefix}/scgi;
    server {{
        listen 127.0.0.1:{port};
        location / {{
        {location}
        }}
    }}
}}
"""


@asynccontextmanager
async def running_nginx(prefix: Path, upstream_port: int):
    """nginx on 127.0.0.1 in front of 127.0.0.1:``upstream_port``; yields its port. Ended
    (SIGTERM, then SIGKILL to its group) at exit."""
    prefix.mkdir(parents=True, exist_ok=True)
    lsock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    lsock.bind(("127.0.0.1", 0))
    lsock.listen(1024)
    port = lsock.getsockname()[1]
    conf = prefix / "nginx.conf"
    conf.write_text(config(prefix, port, upstream_port))
    env = dict(os.environ, NGINX=f"{lsock.fileno()};")
    try:
        proc = await trio.lowlevel.open_process(
            [sys.executable, str(DIE_WITH_PARENT), str(os.getpid()), str(NGINX), "-p", str(prefix), "-c", str(conf),
             "-e", str(prefix / "error.log")],
            pass_fds=[lsock.fileno()], env=env, start_new_session=True,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    finally:
        lsock.close()           # nginx holds its own copy
    try:
        await _answering(port, proc, prefix)
        yield port
    finally:
        with trio.CancelScope(shield=True):
            if proc.returncode is None:
                proc.terminate()
            with trio.move_on_after(10):
                await proc.wait()
            try:
                os.killpg(proc.pid, 9)      # a worker left behind, if any
            except (ProcessLookupError, PermissionError):
                pass
            if proc.returncode is None:
                await proc.wait()


async def _answering(port: int, proc, prefix: Path) -> None:
    """Until nginx's worker accepts and answers (a connection waits in the inherited
    socket's queue meanwhile, so one try is enough)."""
    with trio.fail_after(15):
        sock = trio.socket.socket()
        with sock:
            await sock.connect(("127.0.0.1", port))
            await sock.send(b"GET /nginx-ready HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
            if not await sock.recv(1):
                log = (prefix / "error.log").read_text(errors="replace")[-2000:]
                raise AssertionError(f"nginx closed without answering (exit {proc.returncode}); its log:\n{log}")
