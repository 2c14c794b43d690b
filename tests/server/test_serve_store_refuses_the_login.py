"""A store that refuses this node's login (a wrong password, none given where PostgreSQL
asks for one) is no store away: waiting would not mend it, so `wildtable serve --store`
stops at once with a sentence saying what and what to do (exit 1), never a traceback and
never the password (server/store_pg.py ``login_refused``). A real PostgreSQL that asks
the role for its password."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

SERVE = [sys.executable, "-m", "wildtable", "serve", "--port", "0", "--quiet"]


@pytest.mark.parametrize("password", ["not-its-password", None])
def test_a_login_refused_stops_serve_with_a_sentence(tmp_path, pg_private, password):
    pg_private.require_password("wt", "its-password")
    dsn = pg_private.dsn().replace("postgres@", "wt:not-its-password@" if password else "wt@")
    done = subprocess.run(SERVE + ["--data-dir", str(tmp_path / "data"), "--store", dsn], capture_output=True,
                          text=True, timeout=60, env=dict(os.environ, PGPASSFILE=os.devnull))
    assert done.returncode == 1, done.stderr
    assert "wildtable serve: cannot use the store" in done.stderr, done.stderr
    assert ("password authentication failed" if password else "no password supplied") in done.stderr, done.stderr
    assert "does PostgreSQL let this user in there" in done.stderr
    assert "waiting for the store" not in done.stderr and "Traceback" not in done.stderr
    assert "not-its-password" not in done.stderr
