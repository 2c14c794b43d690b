"""The server's settings: one frozen value, checked in one place (issue #23).

Every operator setting of `wildtable serve` (docs/OPERATING.md; `wildtable serve --help`)
is a field here, named as its flag (``--max-per-address`` is ``max_per_address``), with
the documented default; a few more are for tests and benches (``outbox``, timeouts).
`server/main.py` maps the flags onto it once; `Server(config)` reads it and nothing else
for its settings. A bad value is refused as the config is made (``ConfigError``: the
sentence `serve` prints, saying what the flag wants), so a Server never runs with one.
What the server runs on rather than what it is told (the world, a Store object, the
source of shuffles) stays a keyword argument of Server: those are not settings.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import attrs

from wildtable.headless.net import url_problem

from .botseats import MAX_BOTS_PER_ADDRESS
from .connection import HELLO_TIMEOUT, OUTBOX, OUTBOX_BYTES, SEND_TIMEOUT
from .forwarded import TrustedProxies
from .framebudget import MAX_FRAGMENTS
from .listener import HANDSHAKE_TIMEOUT, MAX_HANDSHAKES, MAX_PER_ADDRESS, Limits
from .logwriter import MAX_OPEN_LOGS
from .store_pg import LEASE_SECONDS

DATA_DIR = "./wildtable-data"   # serve --data-dir
DURABILITIES = ("always", "batch", "off")
MAX_TABLES = 1000               # open tables at most (serve --max-tables)
MAX_CONNECTIONS = 5000          # serve --max-connections, unless the open-file limit holds fewer
RATE_LIMIT = 50.0               # messages a second per connection (serve --rate-limit)
KEEP_FINISHED = 3600.0          # seconds a finished table stays listed and watchable
WAITING_EXPIRY = 600.0          # seconds a table waiting for players may have nobody at it (inf: never)
ABANDONED_EXPIRY = 86400.0      # seconds a game in play may have nobody at it (inf: never): a day, so
                                # a slow game's players can come back to it the next day
MAX_WAITING_PER_ADDRESS = 4     # tables waiting for players, or in play with nobody at them, that one
                                # address may have created (0: no cap)
LIST_REFRESH = 1.0              # seconds a list_tables answer may be reused when only seqs changed


class ConfigError(ValueError):
    """A setting the server cannot run with; ``str()`` says which flag, what it wants and
    (where it helps) what it got. ``field`` names the ServerConfig field."""

    def __init__(self, field: str, text: str):
        super().__init__(text)
        self.field = field


def _flag(a: attrs.Attribute) -> str:
    """How an operator knows the field: its flag, or its name for those with none."""
    return a.metadata.get("flag") or a.name


def _count(least: int, zero: str = ""):
    """A whole number, ``least`` or more (``zero``: what 0 means, said in the message)."""
    def check(_, a: attrs.Attribute, value: Any) -> None:
        if isinstance(value, bool) or not isinstance(value, int) or value < least:
            more = f"{least} ({zero}) or more" if zero else f"{least} or more"
            raise ConfigError(a.name, f"{_flag(a)} wants a count, {more}")
    return check


def _seconds(*, positive: bool = False, finite: bool = False):
    """Seconds: 0 or more (``positive``: more than 0); NaN never, inf unless ``finite``."""
    def check(_, a: attrs.Attribute, value: Any) -> None:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool) and (value > 0 if positive else value >= 0)
        if not ok or (finite and not math.isfinite(value)):
            raise ConfigError(a.name, f"{_flag(a)} wants seconds, {'more than 0' if positive else '0 or more'}")
    return check


def _rate(_, a: attrs.Attribute, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        raise ConfigError(a.name, f"{_flag(a)} wants a number of messages a second, more than 0")


def _durability(_, a: attrs.Attribute, value: Any) -> None:
    if value not in DURABILITIES:
        raise ConfigError(a.name, f"--durability wants always, batch or off, not {value!r}")


def _metrics_port(_, a: attrs.Attribute, value: Any) -> None:
    if value is not None and not (isinstance(value, int) and 0 <= value <= 65535):
        raise ConfigError(a.name, "--metrics-port wants a port number, 1 to 65535 (or 0: any free port, logged), "
                          f"not {value}")


def _node_id(_, a: attrs.Attribute, value: Any) -> None:
    if value is not None and not (isinstance(value, str) and value.strip() and value.isprintable()
                                  and len(value) <= 200):
        raise ConfigError(a.name, "--node-id wants a name of 1 to 200 printable characters")


def _public_url(_, a: attrs.Attribute, value: Any) -> None:
    if value is not None and (bad := url_problem(value)):
        raise ConfigError(a.name, f"--public-url: {bad}")


def _trusted(_, a: attrs.Attribute, value: Any) -> None:
    if not isinstance(value, TrustedProxies):
        raise ConfigError(a.name, "trusted_proxies wants a TrustedProxies (TrustedProxies.parse of the "
                          "--trusted-proxy values)")


def _path(value: Any) -> Path:
    return Path(value)


def _origins(value: Any) -> tuple[str, ...]:
    return (value,) if isinstance(value, str) else tuple(value)


@attrs.frozen
class ServerConfig:
    """Everything the server is told (see the module's doc). Defaults are serve's."""

    data_dir: Path = attrs.field(default=Path(DATA_DIR), converter=_path, metadata={"flag": "--data-dir"})
    # always: fsync before anyone hears of an action; batch: every 0.5 s; off: at shutdown
    durability: str = attrs.field(default="always", validator=_durability, metadata={"flag": "--durability"})
    max_tables: int = attrs.field(default=MAX_TABLES, validator=_count(0, "none"), metadata={"flag": "--max-tables"})
    keep_finished: float = attrs.field(default=KEEP_FINISHED, validator=_seconds(),
                                       metadata={"flag": "--keep-finished"})
    # serve's --waiting-expiry 0 (never) is inf here
    waiting_expiry: float = attrs.field(default=WAITING_EXPIRY, validator=_seconds(),
                                        metadata={"flag": "--waiting-expiry"})
    # serve's --abandoned-expiry 0 (never) is inf here
    abandoned_expiry: float = attrs.field(default=ABANDONED_EXPIRY, validator=_seconds(),
                                          metadata={"flag": "--abandoned-expiry"})
    max_waiting_per_address: int = attrs.field(default=MAX_WAITING_PER_ADDRESS, validator=_count(0, "no cap"),
                                               metadata={"flag": "--max-waiting-per-address"})
    # of the server's bots (seat_bots, server/botseats.py), those one address may have running
    max_bots_per_address: int = attrs.field(default=MAX_BOTS_PER_ADDRESS, validator=_count(0, "no cap"),
                                            metadata={"flag": "--max-bots-per-address"})
    max_connections: int = attrs.field(default=MAX_CONNECTIONS, validator=_count(1),
                                       metadata={"flag": "--max-connections"})
    # one file for every table that may be in play, so a commit never closes one table's
    # file to open another's (issue #25), and never fewer than MAX_OPEN_LOGS
    max_open_logs: int = attrs.field(validator=_count(1), metadata={"flag": "--max-open-logs"})
    rate_limit: float = attrs.field(default=RATE_LIMIT, validator=_rate, metadata={"flag": "--rate-limit"})
    # a connection's burst: twice its rate, at least 10 (serve has no flag for it)
    rate_burst: float = attrs.field(validator=_rate)
    max_fragments: int = attrs.field(default=MAX_FRAGMENTS, validator=_count(1), metadata={"flag": "--max-fragments"})
    max_per_address: int = attrs.field(default=MAX_PER_ADDRESS, validator=_count(0, "no cap"),
                                       metadata={"flag": "--max-per-address"})
    max_handshakes: int = attrs.field(default=MAX_HANDSHAKES, validator=_count(1), metadata={"flag": "--max-handshakes"})
    # --trusted-proxy and --forwarded-header, parsed (server/forwarded.py)
    trusted_proxies: TrustedProxies = attrs.field(default=TrustedProxies(), validator=_trusted,
                                                  metadata={"flag": "--trusted-proxy"})
    proxy_protocol: bool = attrs.field(default=False, metadata={"flag": "--proxy-protocol"})
    allow_origins: tuple[str, ...] = attrs.field(default=(), converter=_origins, metadata={"flag": "--allow-origin"})
    # the PostgreSQL store's DSN (serve --store, or WILDTABLE_STORE): None keeps the logs in
    # files in the data dir; with one, this node is one of a cluster (server/cluster.py)
    store: str | None = attrs.field(default=None, metadata={"flag": "--store"})
    lease_seconds: float = attrs.field(default=LEASE_SECONDS, validator=_seconds(positive=True, finite=True),
                                       metadata={"flag": "--lease-seconds"})
    public_url: str | None = attrs.field(default=None, validator=_public_url, metadata={"flag": "--public-url"})
    node_id: str | None = attrs.field(default=None, validator=_node_id, metadata={"flag": "--node-id"})
    metrics_host: str = attrs.field(default="127.0.0.1", metadata={"flag": "--metrics-host"})
    metrics_port: int | None = attrs.field(default=None, validator=_metrics_port, metadata={"flag": "--metrics-port"})
    # no flags: what tests and benches shorten
    outbox: int = attrs.field(default=OUTBOX, validator=_count(1))          # frames waiting before a client is slow
    outbox_bytes: int = attrs.field(default=OUTBOX_BYTES, validator=_count(1))  # bytes waiting (beyond one frame)
    hello_timeout: float = attrs.field(default=HELLO_TIMEOUT, validator=_seconds(positive=True))
    send_timeout: float = attrs.field(default=SEND_TIMEOUT, validator=_seconds(positive=True))
    handshake_timeout: float = attrs.field(default=HANDSHAKE_TIMEOUT, validator=_seconds(positive=True))
    list_refresh: float = attrs.field(default=LIST_REFRESH, validator=_seconds())
    # seeds this node's own random choices (the order a cluster node adopts expired
    # tables in, server/cluster.py); None: the OS's randomness. The simulator passes one so
    # that a seed replays a run exactly (docs/ARCHITECTURE.md, "The simulator")
    seed: int | None = None

    @max_open_logs.default
    def _open_logs(self) -> int:
        return max(MAX_OPEN_LOGS, self.max_tables)

    @rate_burst.default
    def _burst(self) -> float:
        return max(self.rate_limit * 2, 10)

    def __attrs_post_init__(self) -> None:
        """The checks that take two settings."""
        if self.store is None and (self.public_url or self.node_id):
            flag = "--public-url" if self.public_url else "--node-id"
            raise ConfigError("store", f"{flag} is for a node of a cluster: it needs --store (or the environment "
                              "variable WILDTABLE_STORE)")
        if self.proxy_protocol and not self.trusted_proxies.networks:
            raise ConfigError("proxy_protocol", "--proxy-protocol needs --trusted-proxy ADDR|CIDR: the proxies whose "
                              "PROXY header is believed (anyone else could name any address)")

    def limits(self) -> Limits:
        """What the listener admits (server/listener.py), from these settings."""
        return Limits(self.max_handshakes, self.max_per_address, self.handshake_timeout, self.allow_origins,
                      trusted=self.trusted_proxies, proxy_protocol=self.proxy_protocol)
