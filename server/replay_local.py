"""`wildtable replay LOG --web`: the web replay viewer for one log file, served on this
machine only (127.0.0.1, a port the OS picks) by the same code as `wildtable serve`'s
(server/web.py for the page, server/replays.py for the steps), until Ctrl-C.

It prints the address; it opens a browser too where one can be opened (a desktop
session) unless told not to (``--no-browser``). It serves no games: a WebSocket to it
is closed with a sentence saying so.
"""

from __future__ import annotations

import os
import signal
import sys
import webbrowser
from pathlib import Path

import trio

from wildtable.headless.timeline import parse_perspective
from wildtable.protocol.errors import LogError
from wildtable.protocol.logfmt import read_prefix

from . import listener, wire
from .replays import TABLE_ID, OneLog, ReplayRefused, Replays
from .web import WebFiles

HOST = "127.0.0.1"      # the log holds every hand: this machine only


def can_open_browser() -> bool:
    """A browser would open where the user sees it: a desktop session (macOS, Windows, or
    an X11/Wayland display), and a person at the terminal."""
    if not sys.stdout.isatty():
        return False
    return sys.platform in ("darwin", "win32") or bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


async def _no_games(peer: wire.Peer) -> None:
    await peer.close(1008, "this is wildtable replay --web: it shows one replay and serves no games")


async def serve_log(replays: Replays, url_of, open_browser: bool, *, task_status=trio.TASK_STATUS_IGNORED) -> None:
    """Fold the log (ReplayRefused if it does not replay), then serve until SIGINT or
    SIGTERM; ``task_status.started`` gets the port."""
    await replays.prepare(replays.source.table_id)
    with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async with trio.open_nursery() as nursery:
            port = await nursery.start(lambda task_status: listener.serve(
                _no_games, HOST, 0, http=WebFiles(replays=replays), task_status=task_status))
            url = url_of(port)
            print(f"replay at {url}", flush=True)
            print("Ctrl-C stops it", flush=True)
            task_status.started(port)
            if open_browser:
                opened = await trio.to_thread.run_sync(webbrowser.open, url, abandon_on_cancel=True)
                if not opened:
                    print("no browser could be opened here: open the address above in one", flush=True)
            async for _ in signals:
                break
            nursery.cancel_scope.cancel()


def web_main(args, path: Path | str, data: bytes) -> int:
    """Check the log (the same errors as the terminal viewer, exit 1), then serve it."""
    try:
        contents = read_prefix(data)       # a damaged log: shown up to the damage, as in the terminal
        header = contents.header
        table = header.table if TABLE_ID.fullmatch(header.table) else "log"
    except LogError as e:
        print(f"wildtable replay: {path}: {e}", file=sys.stderr)
        return 1
    try:
        seat = parse_perspective(args.seat, header.seats) if args.seat is not None else None
    except ValueError as e:
        print(f"wildtable replay: {e}", file=sys.stderr)
        return 2
    if contents.damage is not None:
        print(f"wildtable replay: {path}: {contents.damage}; the viewer shows the records before it "
              f"(--salvage OUT keeps them as a log that verifies)", file=sys.stderr)
    # its steps worked out in a process of its own, as a server's, which folds it first
    replays = Replays(OneLog(table, path, data))
    # where the page starts: --seat's view, --upto's seq
    start = f"#replay={table}" + (f"&view={seat}" if seat is not None else "") + (
        f"&seq={max(args.upto, 0)}" if args.upto is not None else "")
    browser = can_open_browser() and not args.no_browser
    try:
        trio.run(serve_log, replays, lambda port: f"http://{HOST}:{port}/{start}", browser)
    except ReplayRefused as e:          # it does not replay: said before serving
        print(f"wildtable replay: {path}: {e.message}", file=sys.stderr)
        return 1
    except OSError as e:
        print(f"wildtable replay: cannot listen on {HOST}: {e.strerror or e}", file=sys.stderr)
        return 1
    finally:
        replays.close()
    return 0
