"""What a running server counts for its operator, and its Prometheus text exposition.

The hot path only adds to plain integers and dicts (no lock: everything runs in the one
Trio thread, except the writers' timings, which are handed over from their worker thread
by the writer task). Gauges (connections, tables, backlog bytes) are not kept at all:
they are read off the server when /metrics is asked, which the ops listener bounds
(server/opsport.py). The text follows the Prometheus exposition format 0.0.4; the tests
parse it with ``prometheus_client``'s own parser (docs/OPERATING.md, "Metrics").
"""

from __future__ import annotations

from bisect import bisect_left

import trio

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
# seconds: from a fast SSD's fsync (0.1 ms) to a disk or a store that stalls (over 1 s)
LATENCY_BUCKETS = (0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)
MAX_LABELS = 100        # distinct values of one label at most (the rest are counted as "other")


class Histogram:
    """Observations in fixed buckets (``le``: at most that many seconds), their sum and count."""

    __slots__ = ("bounds", "counts", "sum", "count")

    def __init__(self, bounds: tuple[float, ...] = LATENCY_BUCKETS):
        self.bounds = bounds
        self.counts = [0] * (len(bounds) + 1)       # the last: above every bound (+Inf only)
        self.sum = 0.0
        self.count = 0

    def observe(self, value: float) -> None:
        self.counts[bisect_left(self.bounds, value)] += 1
        self.sum += value
        self.count += 1


def _bump(counts: dict, key) -> None:
    """One more of ``key``; a label never seen before past MAX_LABELS is counted as "other"
    (codes come from our own code, but a bound costs nothing)."""
    if key not in counts and len(counts) >= MAX_LABELS:
        key = "other"
    counts[key] = counts.get(key, 0) + 1


class Metrics:
    """The server's counters. Tables, connections and the writers add to them; ``render``
    turns them (and the gauges read off the server) into the exposition text."""

    def __init__(self):
        self.connections_opened = 0
        self.closes: dict[int, int] = {}            # close code this server closed with -> count
        self.intents_accepted = 0
        self.refusals: dict[str, int] = {}          # refusal code -> count (rate_limited included)
        self.rate_limited = 0                       # messages dropped by the per-connection rate limit
        self.tables_created = 0
        self.group_commit = Histogram()             # seconds to make one group of commits durable
        self.fsync = Histogram()                    # seconds of one fsync round (files only)
        self.lease_renewals = 0
        self.lease_renewal_failures = 0
        self.adoptions = 0                          # tables taken from the store (lease passed, or at start)
        self.leases_lost = 0                        # tables this node stepped down from
        self.fenced_commits = 0                     # commits the store refused: the lease was another's
        self.redirects = 0                          # requests sent to another node of the cluster
        self.store_errors: dict[str, int] = {}      # where -> store errors (replays, renewals, writes)

    # ------------------------------------------------------------ what the server calls
    def refused(self, code: str) -> None:
        _bump(self.refusals, code)

    def closed(self, code: int) -> None:
        _bump(self.closes, code)

    def store_error(self, where: str) -> None:
        _bump(self.store_errors, where)

    # the writers' timings (LogWriter and PgWriter call these from their task)
    def group_committed(self, seconds: float) -> None:
        self.group_commit.observe(seconds)

    def synced(self, seconds: float) -> None:
        self.fsync.observe(seconds)

    # ------------------------------------------------------------ the exposition
    def render(self, gauges: "Gauges") -> bytes:
        out: list[str] = []
        counter(out, "wildtable_connections_opened", "WebSocket connections accepted (after the handshake)",
                self.connections_opened)
        counter(out, "wildtable_connection_closes", "connections this server closed, by WebSocket close code",
                self.closes, "code")
        counter(out, "wildtable_intents_accepted", "players' intents accepted and logged", self.intents_accepted)
        counter(out, "wildtable_intents_refused", "players' intents refused, by refusal code", self.refusals, "code")
        counter(out, "wildtable_rate_limited", "messages dropped by the per-connection rate limit (--rate-limit)",
                self.rate_limited)
        counter(out, "wildtable_tables_created", "tables created on this server", self.tables_created)
        histogram(out, "wildtable_group_commit_seconds", "time to make one group of log records durable",
                  self.group_commit)
        histogram(out, "wildtable_fsync_seconds", "time of one fsync round of the log files (data dir only)",
                  self.fsync)
        counter(out, "wildtable_lease_renewals", "renewals of this node's leases in the store", self.lease_renewals)
        counter(out, "wildtable_lease_renewal_failures", "renewals the store did not answer", self.lease_renewal_failures)
        counter(out, "wildtable_adoptions", "tables this node took from the store", self.adoptions)
        counter(out, "wildtable_leases_lost", "tables this node stepped down from (its lease was lost)",
                self.leases_lost)
        counter(out, "wildtable_fenced_commits", "commits the store refused because another node held the lease",
                self.fenced_commits)
        counter(out, "wildtable_redirects", "requests this node sent to another node of the cluster (redirect)",
                self.redirects)
        counter(out, "wildtable_store_errors", "errors from the store, by where they happened", self.store_errors,
                "where")
        gauge(out, "wildtable_connections", "open connections, by state", gauges.connections, "state")
        gauge(out, "wildtable_tables", "tables held, by status", gauges.tables, "status")
        gauge(out, "wildtable_backlog_bytes", "bytes waiting to be written to slow sockets, all connections",
              gauges.backlog_bytes)
        gauge(out, "wildtable_ready", "1 while /readyz answers 200", int(gauges.ready))
        return "".join(out).encode()


def count_store_error(metrics: Metrics, where: str) -> None:
    """``metrics.store_error(where)`` from a worker thread (in the Trio thread, so the
    counters need no lock), or from the Trio thread itself."""
    try:
        trio.from_thread.run_sync(metrics.store_error, where)
    except RuntimeError:            # not in a worker thread of a Trio run: this is the Trio thread
        metrics.store_error(where)


class Gauges:
    """What is read off the server at each scrape (nothing of it is kept between)."""

    __slots__ = ("connections", "tables", "backlog_bytes", "ready")

    def __init__(self, connections: dict, tables: dict, backlog_bytes: int, ready: bool):
        self.connections, self.tables, self.backlog_bytes, self.ready = connections, tables, backlog_bytes, ready


def read_gauges(server) -> Gauges:
    """Connections by state (hello: not yet named; lobby; seated; watching), tables by
    status and the bytes waiting in every connection's backlog. One pass over the
    connections and tables: bounded by --max-connections and --max-tables."""
    conns = {"hello": 0, "lobby": 0, "seated": 0, "watching": 0}
    backlog = 0
    for c in server.connections:
        state = "hello" if c.name is None else "lobby" if c.table is None else "seated" if c.seat is not None \
            else "watching"
        conns[state] += 1
        backlog += c.peer.backlog_bytes
    tables = {"waiting": 0, "playing": 0, "finished": 0}
    for t in server.tables.values():
        tables["finished" if t.finished else "playing" if t.started else "waiting"] += 1
    return Gauges(conns, tables, backlog, server.health.readiness().ready)


# ---------------------------------------------------------------- the text format

def _escape(value) -> str:
    return str(value).replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _head(out: list, name: str, help_: str, kind: str) -> None:
    out.append(f"# HELP {name} {help_}\n# TYPE {name} {kind}\n")


def counter(out: list, name: str, help_: str, value, label: str | None = None) -> None:
    _head(out, name + "_total", help_, "counter")
    _samples(out, name + "_total", value, label)


def gauge(out: list, name: str, help_: str, value, label: str | None = None) -> None:
    _head(out, name, help_, "gauge")
    _samples(out, name, value, label)


def _samples(out: list, name: str, value, label: str | None) -> None:
    if label is None:
        out.append(f"{name} {value}\n")
        return
    for key in sorted(value, key=str):
        out.append(f'{name}{{{label}="{_escape(key)}"}} {value[key]}\n')


def histogram(out: list, name: str, help_: str, h: Histogram) -> None:
    _head(out, name, help_, "histogram")
    running = 0
    for bound, n in zip(h.bounds, h.counts):
        running += n
        out.append(f'{name}_bucket{{le="{bound:g}"}} {running}\n')
    out.append(f'{name}_bucket{{le="+Inf"}} {h.count}\n{name}_sum {h.sum!r}\n{name}_count {h.count}\n')
