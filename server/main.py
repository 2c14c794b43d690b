"""`wildtable serve`: run the server headless until Ctrl-C or SIGTERM."""

from __future__ import annotations

import errno
import logging
import math
import os
import signal
import socket
import sys
from functools import partial

import attrs
import trio

from . import collector, wire
from .app import Server
from .config import MAX_CONNECTIONS, ServerConfig
from .datadir import DataDirError
from .forwarded import TrustedProxies
from .health import Phase
from .logwriter import MAX_OPEN_LOGS, StorageFailed
from .oplog import configure as configure_logs
from .sdnotify import notify
from .store_pg import StoreError, psycopg_module, redact

# File handles the server needs besides one per connection (and per connection in its
# opening handshake) and one per open log: stdio, the listening sockets, trio's wakeup
# socket pair and epoll, and the short-lived ones (reading logs at start, fsyncing and
# moving them). Measured: 11 at rest.
RESERVED_FDS = 32

log = logging.getLogger("wildtable.server")


async def serve_until_signalled(server: Server, host: str, port: int, drain: float = 0.0, *,
                                gc_base: collector.Baseline | None = None,
                                task_status=trio.TASK_STATUS_IGNORED) -> None:
    """Serve until SIGINT or SIGTERM (one while it starts stops it at once); with
    ``gc_base`` (``collector.start()`` was called), the cyclic collector's full passes
    when the heap has grown (server/collector.py)."""
    with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async with trio.open_nursery() as nursery:
            async with trio.open_nursery() as starting:     # (ends once its watcher let go of ``signals``)
                starting.start_soon(_stop_while_starting, signals, server, nursery.cancel_scope)
                port = await nursery.start(server.run, host, port)
                starting.cancel_scope.cancel()
            collecting = trio.CancelScope()
            if gc_base is not None:
                nursery.start_soon(_collect, collecting, gc_base, server.world.clock.sleep)
            # where it listens, plainly, on stdout (the port the OS chose, with --port 0),
            # --quiet or not: the log line on stderr says the same with the details
            print(f"serving on {wire.ws_url(host, port)}", flush=True)
            task_status.started(port)
            async for sig in signals:
                name = signal.Signals(sig).name
                logging.getLogger("wildtable.server").info("%s received", name)
                if drain > 0:
                    await drain_first(server, signals, name, drain)
                with trio.move_on_after(5):
                    await server.shutdown(f"server stopping ({name})")
                break
            collecting.cancel()


async def _stop_while_starting(signals, server: Server, scope: trio.CancelScope) -> None:
    """A signal before the server serves (it may be waiting for its store: server/storewait.py)
    stops it at once (``scope``): nothing is served yet, so there is nobody to tell or drain."""
    async for sig in signals:
        if server.health.state is not Phase.STARTING:
            signal.raise_signal(sig)        # it serves already: again, for the loop that drains and stops it
            return
        name = signal.Signals(sig).name
        log.info("%s received while starting: stopping", name)
        notify("STOPPING=1", f"STATUS=stopping ({name} received while starting)")
        scope.cancel()
        return


async def _collect(scope: trio.CancelScope, base: collector.Baseline, sleep) -> None:
    """The collector's loop, until ``scope`` is cancelled (the server has shut down: the
    nursery then waits for nothing of it)."""
    with scope:
        await collector.run(base, sleep)


async def drain_first(server: Server, signals, name: str, seconds: float) -> None:
    """Not ready (/readyz 503) but still serving for ``seconds``, or until another signal:
    a load balancer stops sending new players here before anyone is closed."""
    server.health.draining(f"{name} received")
    notify("STOPPING=1", f"STATUS=draining for {seconds:g} s ({name} received)")
    log.info("draining for %g s before stopping (/readyz answers 503; another signal stops at once)", seconds)
    with trio.move_on_after(seconds):
        async for _ in signals:
            break


def listen_problem(host: str, port: int, e: OSError) -> str:
    """The sentence for a listening socket that cannot be opened: the host's fault, the
    port's, or neither."""
    if isinstance(e, socket.gaierror):
        return (f"cannot listen on host {host!r}: {e.strerror or e} (--host wants an address or name of this "
                "machine: 127.0.0.1 for this machine only, 0.0.0.0 for every network interface)")
    if e.errno == errno.EADDRNOTAVAIL:
        return (f"cannot listen on host {host}: it is not an address of this machine (--host wants one of its "
                "addresses: 127.0.0.1 for this machine only, 0.0.0.0 for every network interface)")
    if e.errno == errno.EADDRINUSE:
        return (f"cannot listen on port {port} of {host}: the port is in use (is another server running there? "
                "pick another --port, or --port 0 for a free one)")
    if e.errno in (errno.EACCES, errno.EPERM):
        return (f"cannot listen on port {port} of {host}: not allowed for this user (ports below 1024 need "
                "privileges): pick another --port")
    return f"cannot listen on {host}:{port}: {e.strerror or e}"


def raise_open_files_limit(needed: int) -> int | None:
    """Raise the soft limit on open files toward the hard limit (to it, where the hard
    limit is a number; else to ``needed``); the soft limit then (None: unlimited)."""
    try:
        import resource
    except ImportError:         # not a Unix: nothing to raise
        return None
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return None
    target = hard if hard != resource.RLIM_INFINITY else max(soft, needed)
    for want in (target, needed):
        if want > soft:
            try:
                resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
                return want
            except (ValueError, OSError):
                continue        # (macOS caps it below an unlimited hard limit) try what is needed
    return soft


def default_open_logs(max_tables: int) -> int:
    """--max-open-logs left at its default: one file for every table that may be in play
    (--max-tables), so a commit never closes one table's file to open another's (at 1,000
    tables and a cap of 256, nearly every commit did: issue #25), and never fewer than
    MAX_OPEN_LOGS. The cap is against squatting, not play: --max-tables bounds the tables
    a stranger can hold open, and an idle file is closed after LOG_IDLE anyway."""
    return max(MAX_OPEN_LOGS, max_tables)


def fit_caps(conns: int, logs: int, *, conns_given: bool, logs_given: bool, fixed: int,
             soft: int | None) -> tuple[int, int] | None:
    """(connections, open logs) that ``soft`` open files hold beside ``fixed`` ones (None:
    they do not fit). A cap given on the command line is kept; one left at its default is
    lowered to fit: the logs to what the given connections leave, or to an eighth."""
    if soft is None or conns + logs + fixed <= soft:
        return conns, logs
    room = soft - fixed
    if not logs_given:
        logs = max(1, min(logs, max(room // 8, room - conns) if conns_given else room // 8))
    if not conns_given:
        conns = room - logs
    if conns >= 1 and conns + logs + fixed <= soft:
        return conns, logs
    return None


def file_budget(args) -> tuple[int, int] | str:
    """(max connections, max open logs) that the open-file limit can hold, after raising
    it where it may; or the sentence refusing caps it cannot hold. A cap left at its
    default is lowered to fit (with a warning); one given on the command line is not."""
    handshakes: int | None = getattr(args, "max_handshakes", None)
    if handshakes is None:
        handshakes = getattr(wire, "MAX_HANDSHAKES", 0)
    conns = MAX_CONNECTIONS if args.max_connections is None else args.max_connections
    default_logs = default_open_logs(getattr(args, "max_tables", 0))
    logs = default_logs if args.max_open_logs is None else args.max_open_logs
    fixed = handshakes + RESERVED_FDS
    soft = raise_open_files_limit(conns + logs + fixed)
    fit = fit_caps(conns, logs, conns_given=args.max_connections is not None,
                   logs_given=args.max_open_logs is not None, fixed=fixed, soft=soft)
    if fit is not None:
        if fit != (conns, logs):
            log.warning("the open-file limit (ulimit -n) is %d: serving at most %d connections with at most %d log "
                        "files open (raise the limit for the defaults, %d and %d)", soft, *fit, MAX_CONNECTIONS,
                        default_logs)
        return fit
    return (f"the open-file limit (ulimit -n) is {soft}, too low for --max-connections {conns}, --max-open-logs "
            f"{logs}, {handshakes} connections in their handshake and {RESERVED_FDS} for the server itself "
            f"({conns + logs + fixed} in all); lower --max-connections or --max-open-logs, or raise the limit")


def server_config(args, store: str | None) -> ServerConfig:
    """The one mapping from `serve`'s flags to the server's settings (server/config.py:
    each field is named as its flag; these are the flags that say it otherwise). Checked
    there: ConfigError (or ValueError from --trusted-proxy) with the sentence to print."""
    trusted = TrustedProxies.parse(getattr(args, "trusted_proxy", None) or (),
                                   getattr(args, "forwarded_header", None) or "X-Forwarded-For")
    given = {name: getattr(args, name) for name in _SAME_NAMED if getattr(args, name, None) is not None}
    return ServerConfig(**given, trusted_proxies=trusted, allow_origins=getattr(args, "allow_origin", None) or (),
                        proxy_protocol=bool(getattr(args, "proxy_protocol", False)), store=store,
                        # --waiting-expiry 0 and --abandoned-expiry 0 are "never"
                        waiting_expiry=args.waiting_expiry if args.waiting_expiry != 0 else math.inf,
                        abandoned_expiry=args.abandoned_expiry if args.abandoned_expiry != 0 else math.inf)


# the flags named as ServerConfig's fields; one not given (None) keeps the field's default
_SAME_NAMED = ("data_dir", "durability", "max_tables", "keep_finished", "max_waiting_per_address", "max_connections",
               "max_open_logs", "rate_limit", "max_fragments", "max_per_address", "max_handshakes", "lease_seconds",
               "public_url", "node_id", "metrics_host", "metrics_port", "max_bots_per_address")


def main(args) -> int:
    configure_logs(getattr(args, "log_format", "text"), args.quiet)
    drain = getattr(args, "drain_seconds", 0.0)
    if not (drain >= 0 and math.isfinite(drain)):
        print("wildtable serve: --drain-seconds wants seconds, 0 or more", file=sys.stderr)
        return 2
    if not 0 <= args.port <= 65535:
        print(f"wildtable serve: --port wants a port number, 1 to 65535 (or 0: any free port, printed), "
              f"not {args.port}", file=sys.stderr)
        return 2
    store = getattr(args, "store", None) or os.environ.get("WILDTABLE_STORE") or None
    try:
        config = server_config(args, store)
    except ValueError as e:         # ConfigError too: the sentence says what the flag wants
        print(f"wildtable serve: {e}", file=sys.stderr)
        return 2
    if store is not None and config.public_url is None and args.host in ("0.0.0.0", "::", ""):
        print(f"wildtable serve: with --store and --host {args.host or '(all)'}, give --public-url ws://HOST:PORT: "
              "the address other nodes send clients to (this one listens on every interface, which is no address "
              "to send anyone to)", file=sys.stderr)
        return 2
    if store is not None:
        try:
            psycopg_module()
        except StoreError as e:
            print(f"wildtable serve: {e}", file=sys.stderr)
            return 2
    budget = file_budget(args)
    if isinstance(budget, str):
        print(f"wildtable serve: {budget}", file=sys.stderr)
        return 2
    max_connections, max_open_logs = budget
    server = Server(attrs.evolve(config, max_connections=max_connections, max_open_logs=max_open_logs))
    gc_base = collector.start()        # no young passes in play (server/collector.py)
    failed: list[OSError] = []
    storage: list[StorageFailed] = []
    data_dir: list[DataDirError] = []
    unusable: list[StoreError] = []
    try:
        trio.run(partial(serve_until_signalled, server, args.host, args.port, drain, gc_base=gc_base))
    except* StoreError as group:
        unusable.extend(_leaves(group))
    except* StorageFailed as group:
        storage.extend(_leaves(group))
    except* DataDirError as group:
        data_dir.extend(_leaves(group))
    except* OSError as group:
        failed.extend(_leaves(group))
    if data_dir:
        print(f"wildtable serve: {data_dir[0]}", file=sys.stderr)
        return 1
    if unusable:
        print(f"wildtable serve: {unusable[0]}", file=sys.stderr)
        return 1
    if storage and store is not None:
        print(f"wildtable serve: {storage[0]}; stopped. Every action it acknowledged is in the store "
              f"({redact(store)}): mend it and start the server again to carry on", file=sys.stderr)
        return 1
    if storage:
        print(f"wildtable serve: {storage[0]}; stopped. Every action it acknowledged is in the logs: make room "
              f"(or mend {args.data_dir}) and start it again to carry on", file=sys.stderr)
        return 1
    if failed and getattr(failed[0], "ops_port", False):
        problem = listen_problem(config.metrics_host, config.metrics_port or 0, failed[0])
        print(f"wildtable serve: --metrics-port: {problem.replace('--port', '--metrics-port')}", file=sys.stderr)
        return 1
    if failed:
        print(f"wildtable serve: {listen_problem(args.host, args.port, failed[0])}", file=sys.stderr)
        return 1
    return 0


def _leaves(group: BaseExceptionGroup) -> list:
    out: list = []
    for e in group.exceptions:
        out.extend(_leaves(e) if isinstance(e, BaseExceptionGroup) else [e])
    return out
