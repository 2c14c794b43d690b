"""`wildtable serve --store` given what it cannot use says so in a sentence and stops,
never a traceback: the driver not installed (and how to install it), a lease that is not
a positive number of seconds. The store may come from the environment (a store nobody
answers at is waited for: test_serve_waits_for_its_store_at_start.py; one that refuses
the login stops it: test_serve_store_refuses_the_login.py)."""

from __future__ import annotations

import subprocess
import sys

import trio

from adversarial_kit import serve_subprocess

SERVE = [sys.executable, "-m", "wildtable", "serve", "--port", "0", "--quiet"]


def _serve(tmp_path, *argv) -> subprocess.CompletedProcess:
    return subprocess.run(SERVE + ["--data-dir", str(tmp_path / "data"), *argv], capture_output=True, text=True,
                          timeout=60)


def test_without_the_driver_serve_store_says_how_to_install_it(tmp_path):
    # this interpreter cannot import psycopg (as where the postgres extra is not installed)
    hide = ("import sys; sys.modules['psycopg'] = None; from wildtable.cli import run; "
            "sys.argv[0] = 'wildtable'; sys.exit(run())")
    done = subprocess.run([sys.executable, "-c", hide, "serve", "--port", "0", "--data-dir", str(tmp_path / "d"),
                           "--store", "postgresql://127.0.0.1/x"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, done.stderr
    assert "pip install 'wildtable[postgres]'" in done.stderr and "Traceback" not in done.stderr


async def test_the_store_comes_from_the_environment_too(tmp_path):
    # nobody answers there: the server waits for it (server/storewait.py), naming it
    env = {"WILDTABLE_STORE": "postgresql://nobody@127.0.0.1:1/none"}
    async with serve_subprocess(tmp_path / "data", env=env) as (proc, err):
        with trio.fail_after(30):
            said = await err.until(r"waiting for the store to make its tables \(([^)]*)\)")
            assert {"user=nobody", "host=127.0.0.1", "port=1", "dbname=none"} <= set(said.group(1).split()), said
            proc.terminate()
            assert await proc.wait() == 0


def test_a_lease_must_be_some_seconds(tmp_path):
    for bad in ("0", "nan"):
        done = _serve(tmp_path, "--store", "postgresql://127.0.0.1:1/x", "--lease-seconds", bad)
        assert done.returncode == 2 and "--lease-seconds wants seconds" in done.stderr, (bad, done.stderr)
