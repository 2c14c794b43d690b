"""`wildtable serve`'s flags for a node of a cluster say what is wrong in a sentence:
--public-url and --node-id without a store, a public URL that is no ws:// address, a
node listening on every interface with no public URL to send clients to, and a node id
another live node already has (it would take that node's tables from under it)."""

from __future__ import annotations

import subprocess
import sys

import pytest
import trio

from clusterkit import cluster

SERVE = [sys.executable, "-m", "wildtable", "serve", "--port", "0", "--quiet"]


def _serve(tmp_path, *argv) -> subprocess.CompletedProcess:
    return subprocess.run(SERVE + ["--data-dir", str(tmp_path / "data"), *argv], capture_output=True, text=True,
                          timeout=60)


@pytest.mark.parametrize("flag", [["--node-id", "n1"], ["--public-url", "ws://127.0.0.1:9"]])
def test_node_flags_need_a_store(tmp_path, flag):
    done = _serve(tmp_path, *flag)
    assert done.returncode == 2
    assert f"{flag[0]} is for a node of a cluster: it needs --store" in done.stderr, done.stderr


def test_a_public_url_is_a_websocket_address(tmp_path):
    done = _serve(tmp_path, "--store", "postgresql://nobody@127.0.0.1:1/none", "--public-url", "http://example.org")
    assert done.returncode == 2 and "--public-url: bad server address" in done.stderr, done.stderr


def test_a_node_on_every_interface_needs_a_public_url(tmp_path):
    done = _serve(tmp_path, "--store", "postgresql://nobody@127.0.0.1:1/none", "--host", "0.0.0.0")
    assert done.returncode == 2 and "give --public-url" in done.stderr, done.stderr


async def test_a_node_id_in_use_by_a_live_node_is_refused(tmp_path, pg_dsn):
    with trio.fail_after(60):
        async with cluster(tmp_path, pg_dsn, 1) as (n1,):
            done = await trio.to_thread.run_sync(lambda: _serve(
                tmp_path, "--store", pg_dsn, "--node-id", "n1"))
            assert done.returncode == 1
            assert "another live node is known to the store as 'n1'" in done.stderr, done.stderr
            assert "Traceback" not in done.stderr
            assert n1.proc.returncode is None
