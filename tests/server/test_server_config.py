"""The server's settings as one frozen value (server/config.py; issue #23): its defaults
are the documented ones and `serve`'s, a bad value is refused as the config is made with
the sentence `serve` prints, it cannot change once made, and Server takes its settings
from it alone. Its seed orders a cluster node's adoption pass (server/cluster.py), so
that the simulator replays a run from its seed."""

from __future__ import annotations

import math
import random
import re
from pathlib import Path

import attrs
import pytest
import trio

from wildtable.cli import build_parser
from wildtable.server.app import Server
from wildtable.server.cluster import Cluster
from wildtable.server.config import ConfigError, ServerConfig
from wildtable.server.forwarded import TrustedProxies
from wildtable.server.main import server_config
from wildtable.server.open_tables import OpenTables
from wildtable.server.world import RealWorld

ROOT = Path(__file__).resolve().parents[2]


def serve_args(*flags: str):
    return build_parser().parse_args(["serve", *flags])


def test_the_defaults_are_serves_and_the_readmes():
    config = ServerConfig()
    # `wildtable serve` with no flags runs with exactly these (the one flag mapping)
    assert server_config(serve_args(), None) == config
    # what README.md says of each flag: "`--max-tables` (1000)", "`--keep-finished` seconds (3600)"
    readme = " ".join((ROOT / "README.md").read_text().split())
    said = {flag: float(n) for flag, n in re.findall(r"`(--[a-z-]+)`[^`()]{0,60}?\((\d+)", readme)}
    fields = {a.metadata["flag"]: a.name for a in attrs.fields(ServerConfig) if "flag" in a.metadata}
    checked = {flag: n for flag, n in said.items() if flag in fields}
    assert set(checked) >= {"--max-tables", "--max-connections", "--rate-limit", "--keep-finished",
                            "--waiting-expiry", "--max-waiting-per-address", "--max-handshakes",
                            "--max-per-address", "--max-bots-per-address", "--abandoned-expiry"}, said
    for flag, n in checked.items():
        assert getattr(config, fields[flag]) == n, (flag, n)
    # the rest, as README.md and docs/OPERATING.md word them
    assert config.data_dir == Path("./wildtable-data") and config.durability == "always"
    assert config.max_open_logs == max(256, config.max_tables)     # "one for each of --max-tables, at least 256"
    assert config.lease_seconds == 5.0 and config.max_fragments == 64 and config.metrics_host == "127.0.0.1"
    assert (config.outbox, config.outbox_bytes) == (512, 1 << 20)   # "512 frames or 1 MiB"
    assert config.hello_timeout == config.send_timeout == config.handshake_timeout == 10.0
    assert config.rate_burst == 2 * config.rate_limit
    assert (config.store, config.node_id, config.public_url, config.metrics_port, config.seed) == (None,) * 5
    assert config.trusted_proxies == TrustedProxies() and not config.proxy_protocol and config.allow_origins == ()


def test_flags_map_onto_the_fields():
    args = serve_args("--data-dir", "/srv/wt", "--durability", "batch", "--max-tables", "7", "--waiting-expiry", "0",
                      "--rate-limit", "3", "--allow-origin", "https://a.example", "--trusted-proxy", "10.0.0.0/8",
                      "--proxy-protocol", "--max-per-address", "0", "--metrics-port", "0", "--max-bots-per-address", "3",
                      "--abandoned-expiry", "0")
    config = server_config(args, "postgresql://wt@db/wt")
    assert config.data_dir == Path("/srv/wt") and config.durability == "batch" and config.max_tables == 7
    assert config.waiting_expiry == config.abandoned_expiry == math.inf     # 0: never
    assert (config.rate_limit, config.rate_burst) == (3, 10)    # twice the rate, at least 10
    assert config.allow_origins == ("https://a.example",) and config.proxy_protocol
    assert config.trusted_proxies == TrustedProxies.parse(["10.0.0.0/8"])
    assert config.max_per_address == 0 and config.metrics_port == 0 and config.store == "postgresql://wt@db/wt"
    assert config.max_open_logs == 256                      # max(256, --max-tables)
    assert config.max_bots_per_address == 3


@pytest.mark.parametrize("change, said", [
    (dict(keep_finished=-1.0), "--keep-finished wants seconds, 0 or more"),
    (dict(waiting_expiry=math.nan), "--waiting-expiry wants seconds, 0 or more"),
    (dict(abandoned_expiry=-1.0), "--abandoned-expiry wants seconds, 0 or more"),
    (dict(max_per_address=-1), "--max-per-address wants a count, 0 (no cap) or more"),
    (dict(max_bots_per_address=-1), "--max-bots-per-address wants a count, 0 (no cap) or more"),
    (dict(max_connections=0), "--max-connections wants a count, 1 or more"),
    (dict(max_fragments=0), "--max-fragments wants a count, 1 or more"),
    (dict(lease_seconds=math.inf), "--lease-seconds wants seconds, more than 0"),
    (dict(durability="sometimes"), "--durability wants always, batch or off, not 'sometimes'"),
    (dict(metrics_port=70000), "--metrics-port wants a port number, 1 to 65535 (or 0: any free port, logged), "
                               "not 70000"),
    (dict(rate_limit=0.0), "--rate-limit wants a number of messages a second, more than 0"),
    (dict(outbox=0), "outbox wants a count, 1 or more"),
    (dict(send_timeout=0.0), "send_timeout wants seconds, more than 0"),
    (dict(node_id="n1"), "--node-id is for a node of a cluster: it needs --store (or the environment variable "
                         "WILDTABLE_STORE)"),
    (dict(store="postgresql://db/wt", public_url="http://x"), "--public-url: bad server address 'http://x': it must "
                                                              "start with ws:// or wss://"),
    (dict(proxy_protocol=True), "--proxy-protocol needs --trusted-proxy ADDR|CIDR"),
])
def test_a_bad_value_is_refused_with_a_sentence(change, said):
    with pytest.raises(ConfigError) as e:
        ServerConfig(**change)
    assert str(e.value).startswith(said), str(e.value)
    # evolving a good config checks the same
    with pytest.raises(ConfigError):
        attrs.evolve(ServerConfig(), **change)


def test_the_config_is_frozen_and_server_takes_settings_only_from_it(tmp_path):
    config = ServerConfig(data_dir=tmp_path, max_per_address=3)
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        config.max_tables = 5       # type: ignore[misc]
    assert not hasattr(config, "__dict__")          # slotted
    server = Server(config)
    assert server.config is config and server.data_dir == tmp_path and server.limits.max_per_address == 3
    assert server.store is None and server.cluster is None
    with pytest.raises(TypeError):
        Server(config, max_tables=5)                # type: ignore[call-arg]  (settings go in the config)


class _Store:
    lease_seconds = 5.0

    def __init__(self, ids):
        self.ids = ids

    async def call(self, fn, *args):
        return fn(*args)

    def expired_tables(self, limit):
        return list(self.ids)


class _Storage:
    def __init__(self):
        self.order: list[str] = []

    async def adopt_table(self, tid):
        self.order.append(tid)


class _Server:
    def __init__(self, seed):
        self.config = ServerConfig(seed=seed)
        self.tables: dict = {}
        self.open_tables = OpenTables()
        self.connections: set = set()
        self.storage = _Storage()
        self.world = RealWorld()        # the cluster waits through its world's clock


def adoption_order(seed: int | None, global_seed: int) -> list[str]:
    server = _Server(seed)
    cluster = Cluster(server, _Store([f"t{i:02d}" for i in range(30)]))
    random.seed(global_seed)        # whatever else in the process drew from the global generator
    trio.run(cluster._adopt_pass)
    return server.storage.order


def test_the_adoption_order_comes_from_the_configs_seed():
    first = adoption_order(7, global_seed=1)
    assert sorted(first) == [f"t{i:02d}" for i in range(30)] and first != sorted(first)
    assert adoption_order(7, global_seed=2) == first        # the global generator plays no part
    assert adoption_order(8, global_seed=1) != first        # another seed, another order
