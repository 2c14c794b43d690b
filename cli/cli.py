"""The `wildtable` command: serve, create, play, bots, selfplay, arena, replay, export."""

from __future__ import annotations

import argparse
import json
import os
import sys

from wildtable import __version__


def _games() -> list[str]:
    from wildtable.protocol.engine import games
    return sorted(games())


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="wildtable", description="Real-time card games over WebSocket: "
                                "Run Wild, Go Wild!, Wild Shots and Go Fish Wildcard.")
    p.add_argument("--version", action="version", version=f"wildtable {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    s = sub.add_parser("serve", help="run the server headless", description="Run the game server until Ctrl-C or SIGTERM.")
    s.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1; 0.0.0.0 for a LAN)")
    s.add_argument("--port", type=int, default=8765, help="port, 1 to 65535 (default 8765; 0 picks a free one). Once "
                   "it listens the server prints 'serving on ws://HOST:PORT' on stdout")
    s.add_argument("--data-dir", default="./wildtable-data", help="where table logs live (default ./wildtable-data); "
                   "one server at a time: a running server locks it")
    s.add_argument("--durability", choices=("always", "batch", "off"), default="always",
                   help="always: fsync before anyone hears of an action (default); batch: fsync every 0.5 s; off: at shutdown")
    s.add_argument("--max-tables", type=int, default=1000, help="open tables at most (default 1000)")
    s.add_argument("--keep-finished", type=float, default=3600.0, metavar="SECONDS",
                   help="how long a finished game stays listed and watchable (default 3600); then, once nobody "
                   "is at it, the server forgets it and moves its log to DATA_DIR/finished/")
    s.add_argument("--waiting-expiry", type=float, default=600.0, metavar="SECONDS",
                   help="a table waiting for players that nobody is at (no seated player connected, no "
                   "spectator) for this long is forgotten and its log moved to DATA_DIR/expired/ (default 600; "
                   "0: never)")
    s.add_argument("--abandoned-expiry", type=float, default=86400.0, metavar="SECONDS",
                   help="a game in play that nobody is at (no seated player connected, no spectator) for this "
                   "long is given up: forgotten, without an outcome, and its log moved to DATA_DIR/expired/ "
                   "(default 86400, a day; 0: never)")
    s.add_argument("--max-waiting-per-address", type=int, default=4, metavar="N",
                   help="tables waiting for players, or in play with nobody at them, that one IP address may have "
                   "created at once (default 4; 0: no cap). Behind a reverse proxy, see --trusted-proxy")
    s.add_argument("--max-bots-per-address", type=int, default=8, metavar="N",
                   help="of the bots the server runs for its players (seat_bots, 24 at most at once), those one IP "
                   "address may have running at once (default 8: the largest table filled alone, 5, and a "
                   "four-seat one, 3; 0: no cap). Behind a reverse proxy, see --trusted-proxy")
    s.add_argument("--max-connections", type=int, default=None,
                   help="connections at most (default 5000, or what the open-file limit holds)")
    s.add_argument("--max-open-logs", type=int, default=None, metavar="N",
                   help="table log files open at once at most (default: --max-tables, at least 256, or what the "
                   "open-file limit holds); "
                   "idle and finished tables' files are closed and opened again when written")
    s.add_argument("--rate-limit", type=float, default=50.0, help="messages per second per connection (default 50; "
                   "frames of any kind, pings and fragments included: 200 a second, bursts of 400, or twice the "
                   "message rate and burst if more; over that a connection is closed, 1008)")
    s.add_argument("--max-fragments", type=int, default=64, metavar="N",
                   help="frames one client message may come in (default 64); a message in more is closed with 1008")
    s.add_argument("--max-per-address", type=int, default=32, metavar="N",
                   help="connections from one IP address at once (default 32; 0: no cap). Behind a reverse "
                   "proxy, see --trusted-proxy")
    s.add_argument("--max-handshakes", type=int, default=128, metavar="N",
                   help="connections still in their opening handshake at once (default 128); each has 10 s")
    s.add_argument("--trusted-proxy", action="append", default=[], metavar="ADDR|CIDR",
                   help="a reverse proxy in front of this server (e.g. 127.0.0.1, 10.0.0.0/8); repeat for more. "
                   "Connections from it are the client's that its --forwarded-header names (the right-most "
                   "address there not itself trusted): every per-address cap and log line uses that address. "
                   "From other peers the header is ignored. Default: none (every connection is its peer's)")
    s.add_argument("--forwarded-header", default="X-Forwarded-For", metavar="NAME",
                   help="with --trusted-proxy: the header the proxy sets, X-Forwarded-For (default) or Forwarded "
                   "(RFC 7239); the other is ignored, as a client could send it through the proxy")
    s.add_argument("--proxy-protocol", action="store_true",
                   help="with --trusted-proxy: connections from those proxies begin with a PROXY protocol header "
                   "(v1 or v2: HAProxy's send-proxy, nginx stream's proxy_protocol on) naming the client; one "
                   "without it is dropped. Other peers' connections are read as they are")
    s.add_argument("--allow-origin", action="append", default=[], metavar="ORIGIN",
                   help="a web page origin (scheme://host[:port]) allowed to open WebSockets to this server, "
                   "besides the server's own host; repeat for more. Browsers' other pages are refused (403)")
    s.add_argument("--store", default=None, metavar="DSN",
                   help="keep the tables in PostgreSQL instead of files in the data dir, e.g. "
                   "postgresql://user@host/db (default: the environment variable WILDTABLE_STORE; unset: files). "
                   "Needs the postgres extra: pip install -c constraints.txt '.[postgres]' (docs/OPERATING.md)")
    s.add_argument("--lease-seconds", type=float, default=5.0, metavar="SECONDS",
                   help="with --store: how long a node's hold on its tables lasts unless renewed (every third "
                   "of it); a node that stops renewing loses its tables at most this long after its last renewal, "
                   "so a pause under two thirds of it never does (default 5)")
    s.add_argument("--public-url", default=None, metavar="URL",
                   help="with --store: the address clients reach this node at, ws://HOST:PORT (default: the listen "
                   "address; needed with --host 0.0.0.0 or ::). Other nodes redirect clients here")
    s.add_argument("--node-id", default=None, metavar="ID",
                   help="with --store: this node's name in the store (default: its public URL); one live node per id")
    s.add_argument("--quiet", action="store_true", help="log warnings and errors only")
    # what an operator runs it with (docs/OPERATING.md)
    s.add_argument("--metrics-port", type=int, default=None, metavar="PORT",
                   help="serve /metrics (Prometheus), /healthz and /readyz on this port of --metrics-host (0: a free "
                   "one, logged); default: no metrics port (/healthz and /readyz are on the game port too)")
    s.add_argument("--metrics-host", default="127.0.0.1", metavar="HOST",
                   help="the address of --metrics-port (default 127.0.0.1: this machine only)")
    s.add_argument("--log-format", choices=("text", "json"), default="text",
                   help="stderr as text lines (the default) or one JSON object a line")
    s.add_argument("--drain-seconds", type=float, default=0.0, metavar="SECONDS",
                   help="on SIGTERM, answer /readyz 503 and go on serving this long before closing, so that a "
                   "load balancer sends new players elsewhere first (default 0; a second signal cuts it short)")

    cr = sub.add_parser("create", help="create a table on a server (a chosen node of a cluster); print its id",
                        description="Create a table on the server (or the node of a cluster) at URL and print its "
                        "id. Nobody sits at it: players join it; with nobody at it, it expires after the server's "
                        "--waiting-expiry.")
    cr.add_argument("url", help="the server or node, e.g. ws://10.0.0.2:8765")
    cr.add_argument("game", help="the game: " + ", ".join(_games()))
    cr.add_argument("--seats", type=int, default=None, help="seats at the table (default: the game's fewest)")
    cr.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", help="a setting of the table")
    cr.add_argument("--name", default="", help="the table's name in the lobby")

    pl = sub.add_parser("play", help="play in the terminal (full-screen, or --plain line mode)",
                        description="Connect to a server and play. With --bots and no URL, starts a private "
                        "server in this process and seats bots with you.")
    pl.add_argument("url", nargs="?", default=None, help="server address, e.g. ws://127.0.0.1:8765 "
                    "(omit with --bots to play alone against bots)")
    pl.add_argument("--name", default=None, help="your name at the table (default: your login name)")
    pl.add_argument("--game", default="run-wild", help="game for a new table (default run-wild)")
    pl.add_argument("--bots", type=int, default=None, metavar="N", help="seat N bots with you at a new table")
    pl.add_argument("--players", type=int, default=None, help="with --bots: seats at the new table, within the game's "
                    "player range (default: bots + 1)")
    pl.add_argument("--table", default=None, help="join this table straight away")
    pl.add_argument("--seat", type=int, default=None, help="with --table: the seat to take")
    pl.add_argument("--spectate", action="store_true", help="with --table: watch instead of playing")
    pl.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", help="a setting for a new table")
    pl.add_argument("--plain", action="store_true", help="line mode for scripts and screen readers: "
                    "commands on stdin, one line per event on stdout")
    pl.add_argument("--bot-delay", type=float, default=None, help="bots' reaction delay in seconds "
                    "(a fixed one instead of the level's)")
    pl.add_argument("--level", default=None, metavar="LEVEL", help="the bots' level: easy, normal (the default), "
                    "hard or expert (a search, in the turn-based games): how quickly they react and how well they play")

    bt = sub.add_parser("bots", help="seat bots at a table on a server")
    bt.add_argument("url", help="server address, e.g. ws://127.0.0.1:8765")
    bt.add_argument("--table", required=True, help="the table to join")
    bt.add_argument("--count", type=int, default=1, help="how many bots (default 1)")
    bt.add_argument("--delay", type=float, default=None, help="reaction delay in seconds (default: the level's)")
    bt.add_argument("--level", default=None, metavar="LEVEL", help="easy, normal (the default), hard or expert "
                    "(a search, in Wild Shots; elsewhere as hard): how quickly the bots react and how well they play")
    bt.add_argument("--name", default="bot", help="name prefix (default bot)")

    sp = sub.add_parser("selfplay", help="play a whole game offline between random players and write its log")
    sp.add_argument("game", help="the game: " + ", ".join(_games()))
    sp.add_argument("--players", type=int, default=4, help="number of players (default 4)")
    sp.add_argument("--seed", type=int, default=None,
                    help="seed for players and shuffles (repeatable runs; default: a random one, printed)")
    sp.add_argument("--log", default=None, help="write the action log to this file")
    sp.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                    help="a table setting, e.g. --set rounds=2 (value parsed as JSON when it can be)")

    ar = sub.add_parser("arena", help="play whole games between bots offline and show who wins, with 95%% intervals",
                        description="Whole games between bots, offline: the real engine and the real bots, each "
                        "fed only its own seat's view (Run Wild in simulated time at each level's reaction times). "
                        "Prints each seat's and each level's share of the wins (Go Fish Wildcard: of the asks "
                        "received too) with 95%% confidence intervals, and how long the bots took per move.")
    ar.add_argument("game", help="the game: " + ", ".join(_games()))
    ar.add_argument("--seats", required=True, metavar="L,L,L,L",
                    help="a bot level per seat, comma-separated (easy, normal, hard, expert), e.g. "
                    "expert,hard,hard,hard")
    ar.add_argument("--rotate", action="store_true", help="play every deal once per rotation of the seats "
                    "(duplicate format: the luck of the deal cancels); --games must be a multiple of the seats")
    ar.add_argument("--games", type=int, required=True, help="how many games")
    ar.add_argument("--seed", type=int, default=None, help="the seed of every deal and every bot (the same seed, "
                    "the same games whatever --workers; default: a random one, printed)")
    ar.add_argument("--workers", type=int, default=1, help="processes playing games at once (default 1)")
    ar.add_argument("--json", default=None, metavar="OUT", help="also write the figures as JSON to this file")
    ar.add_argument("--logs", default=None, metavar="DIR",
                    help="write each game's log to DIR (game-000001.wlog...; replay reads them)")
    ar.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                    help="a table setting, e.g. --set rounds=2 (value parsed as JSON when it can be)")

    r = sub.add_parser("replay", help="replay an action log: --verify checks it, --json prints the final state; "
                       "without them, the interactive viewer",
                       epilog="Exit status: 0 the log read to its end (or to --upto), a torn tail left out "
                       "(INCOMPLETE); 1 the log is damaged (the records before the damage are still shown, and "
                       "the damage named) or is not a wildtable log; 2 a usage error or a file that cannot be "
                       "read. --diff: 0 equal, 1 different, 2 a log that cannot be read.")
    r.add_argument("log", nargs="?", default=None, help="the .wlog file (with --store: the table's id)")
    r.add_argument("--store", default=None, metavar="DSN", help="read table LOG straight from this PostgreSQL "
                   "store (a DSN, e.g. postgresql://user@host/db) instead of a file")
    r.add_argument("--verify", action="store_true", help="check every CRC and state hash; print counts, scores and the final hash")
    r.add_argument("--json", action="store_true", help="print the final all-seeing state as JSON; with --seat, "
                   "that seat's view as the server sent it; with a filter or --events, the records as JSON")
    r.add_argument("--upto", type=int, default=None, help="stop at this seq (a damaged log: read as if it ended "
                   "there, when the damage is after it)")
    r.add_argument("--plain", action="store_true", help="print every record and the state it produced, as text")
    r.add_argument("--seat", default=None, metavar="SEAT", help="viewer, --plain, --json: see the game as this "
                   "seat (a number), 'spectator', or 'all' (the all-seeing view, default)")
    r.add_argument("--events", action="store_true", help="with --plain or --json: one line (item) per record, "
                   "no states")
    r.add_argument("--by-seat", type=int, default=None, metavar="N", help="with --plain or --json: only the "
                   "records of seat N (its actions, refused intents and seat claims)")
    r.add_argument("--kind", action="append", default=[], metavar="KIND", help="with --plain or --json: only "
                   "records of this kind: an action kind (draw, play, ...) or action, chance, rejected, seat, "
                   "hash, header; repeat for several")
    r.add_argument("--refused", action="store_true", help="with --plain or --json: only the refused intents")
    r.add_argument("--find", default=None, metavar="TEXT", help="with --plain or --json: only the records whose "
                   "text holds TEXT (any case)")
    r.add_argument("--salvage", default=None, metavar="OUT", help="write the log's good records, up to any "
                   "damage or torn tail, as a new log OUT (0600; never over an existing file)")
    r.add_argument("--diff", nargs=2, default=None, metavar=("A", "B"), help="compare two logs: the first record "
                   "where they differ (header, action, chance outcome or state), exit 0 when they are equal")
    r.add_argument("--analyze", action="store_true", help="mark each decision of a seat (--seat N; default every "
                   "seat) with the expert's value of the move made against its best move, judged from that seat's "
                   "view at that moment (no hindsight): ?! an inaccuracy, ? a mistake, ?? a blunder; a summary per "
                   "seat at the end; with --json, as data. The turn-based games with an expert only (Wild Shots): "
                   "Run Wild, played in real time, is exempt")
    r.add_argument("--web", action="store_true", help="the viewer in a web browser: serve it on 127.0.0.1 (a free "
                   "port) until Ctrl-C, print its address, and open a browser where one can be opened")
    r.add_argument("--no-browser", action="store_true", help="with --web: print the address only")

    ex = sub.add_parser("export", help="write a table of a PostgreSQL store as a .wlog file (replay reads it)",
                        description="Write the log of a table kept in a PostgreSQL store (serve --store) as a "
                        ".wlog file: its records, in order, are the file's bytes.")
    ex.add_argument("table", help="the table's id (as list_tables shows it)")
    ex.add_argument("--store", default=None, metavar="DSN", help="the store, e.g. postgresql://user@host/db "
                    "(default: the environment variable WILDTABLE_STORE)")
    ex.add_argument("-o", "--output", default=None, metavar="FILE", help="the file to write (default TABLE.wlog; "
                    "'-' for stdout); an existing file is not overwritten")
    return p


def parse_settings(pairs: list[str]) -> dict:
    out = {}
    for pair in pairs:
        if "=" not in pair:
            print(f"wildtable: --set wants NAME=VALUE (e.g. --set rounds=2), got {pair!r}", file=sys.stderr)
            raise SystemExit(2)     # a usage problem, like argparse's own
        k, v = pair.split("=", 1)
        try:
            out[k] = json.loads(v)
        except ValueError:
            out[k] = v
    return out


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:2] == ["replay", "diff"] and len(argv) >= 4 and not os.path.exists("diff"):
        argv[1] = "--diff"      # `wildtable replay diff A B`, the spelling of --diff A B
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    if args.command == "serve":
        from wildtable.server.main import main as serve_main
        return serve_main(args)
    if args.command == "create":
        from .create import create_main
        return create_main(args)
    if args.command == "play":
        from wildtable.client.play import play_main
        return play_main(args)
    if args.command == "bots":
        from wildtable.headless.bots import bots_main
        return bots_main(args)
    if args.command == "selfplay":
        from wildtable.offline import selfplay_main
        return selfplay_main(args)
    if args.command == "arena":
        from wildtable.arena import arena_main
        return arena_main(args)
    if args.command == "replay":
        from wildtable.offline import replay_main
        return replay_main(args)
    if args.command == "export":
        from wildtable.offline import export_main
        return export_main(args)
    parser.error(f"unknown command {args.command}")
    return 2


def run() -> int:
    """Console-script entry: a closed pipe (`wildtable replay x --json | head`) is not an error."""
    try:
        return main()
    except BrokenPipeError:
        sys.stderr.close()
        return 0


if __name__ == "__main__":
    sys.exit(run())
