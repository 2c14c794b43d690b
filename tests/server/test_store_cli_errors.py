"""`wildtable serve --store` given what it cannot use says so in a sentence and stops,
never a traceback: the driver not installed (and how to install it), a store nobody
answers at, a lease that is not a positive number of seconds."""

from __future__ import annotations

import os
import subprocess
import sys

SERVE = [sys.executable, "-m", "wildtable", "serve", "--port", "0", "--quiet"]


def _serve(tmp_path, *argv, env=None) -> subprocess.CompletedProcess:
    return subprocess.run(SERVE + ["--data-dir", str(tmp_path / "data"), *argv], capture_output=True, text=True,
                          timeout=60, env=env)


def test_without_the_driver_serve_store_says_how_to_install_it(tmp_path):
    # this interpreter cannot import psycopg (as where the postgres extra is not installed)
    hide = ("import sys; sys.modules['psycopg'] = None; from wildtable.cli import run; "
            "sys.argv[0] = 'wildtable'; sys.exit(run())")
    done = subprocess.run([sys.executable, "-c", hide, "serve", "--port", "0", "--data-dir", str(tmp_path / "d"),
                           "--store", "postgresql://127.0.0.1/x"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, done.stderr
    assert "pip install 'wildtable[postgres]'" in done.stderr and "Traceback" not in done.stderr


def test_a_store_nobody_answers_at_stops_serve_with_a_sentence(tmp_path):
    done = _serve(tmp_path, "--store", "postgresql://nobody@127.0.0.1:1/none")
    assert done.returncode == 1
    assert "cannot use the store" in done.stderr and "is PostgreSQL running there" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


def test_the_store_comes_from_the_environment_too(tmp_path):
    env = dict(os.environ, WILDTABLE_STORE="postgresql://nobody@127.0.0.1:1/none")
    done = _serve(tmp_path, env=env)
    assert done.returncode == 1 and "cannot use the store" in done.stderr, done.stderr


def test_a_lease_must_be_some_seconds(tmp_path):
    for bad in ("0", "nan"):
        done = _serve(tmp_path, "--store", "postgresql://127.0.0.1:1/x", "--lease-seconds", bad)
        assert done.returncode == 2 and "--lease-seconds wants seconds" in done.stderr, (bad, done.stderr)
