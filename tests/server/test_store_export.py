"""`wildtable export --store DSN TABLE` writes a table of the store as a .wlog file that
`wildtable replay --verify` verifies, and `wildtable replay --store DSN TABLE` reads the
same table straight from the store (--verify, --json, the plain viewer); wrong input is
said in a sentence, never a traceback."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import psycopg
import trio

from scripted import play_all_to_end
from serverkit import running_server, seated

WILDTABLE = [sys.executable, "-m", "wildtable"]


def _run(*argv, env=None) -> subprocess.CompletedProcess:
    return subprocess.run(WILDTABLE + [str(a) for a in argv], capture_output=True, text=True, timeout=60,
                          env=env)


async def _finished_game(tmp_path, dsn) -> tuple[str, int]:
    with trio.fail_after(60):
        async with running_server(tmp_path / "data", store=dsn) as (server, url):
            async with seated(url, "run-wild", 2, {"rounds": 1}) as (table, conns, joined):
                await play_all_to_end(conns, joined, timeout=45)
                return table, server.tables[table].seq


async def test_an_export_verifies_and_replay_reads_the_store_alike(tmp_path, pg_dsn):
    table, seq = await _finished_game(tmp_path, pg_dsn)
    out = tmp_path / "exported.wlog"
    done = _run("export", "--store", pg_dsn, table, "-o", out)
    assert done.returncode == 0, done.stderr
    assert f"written to {out}" in done.stdout
    assert os.stat(out).st_mode & 0o777 == 0o600        # a log holds every shuffle
    with psycopg.connect(pg_dsn) as db:
        rows = db.execute("SELECT data FROM wt_records WHERE table_id = %s ORDER BY n", (table,)).fetchall()
    assert out.read_bytes() == b"".join(r[0] for r in rows)

    from_file = _run("replay", "--verify", out)
    assert from_file.returncode == 0, from_file.stderr
    assert f"seq: {seq}" in from_file.stdout and "game over: yes" in from_file.stdout
    from_store = _run("replay", "--store", pg_dsn, table, "--verify")
    assert from_store.returncode == 0, from_store.stderr
    final = [line for line in from_file.stdout.splitlines() if line.startswith("final hash:")]
    assert final and final[0] in from_store.stdout.splitlines()
    assert json.loads(_run("replay", "--store", pg_dsn, table, "--json").stdout) == \
        json.loads(_run("replay", out, "--json").stdout)
    plain = _run("replay", "--store", pg_dsn, table, "--plain")
    assert plain.returncode == 0 and plain.stdout == _run("replay", out, "--plain").stdout

    # the store from the environment; the default file name is the table's
    env = dict(os.environ, WILDTABLE_STORE=pg_dsn)
    done = subprocess.run(WILDTABLE + ["export", table], capture_output=True, text=True, timeout=60,
                          env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / f"{table}.wlog").read_bytes() == out.read_bytes()


async def test_export_and_replay_say_what_is_wrong(tmp_path, pg_dsn):
    table, _ = await _finished_game(tmp_path, pg_dsn)
    out = tmp_path / "there.wlog"
    out.write_bytes(b"mine")
    cases = [
        (("export", "--store", pg_dsn, table, "-o", out), "exists already"),
        (("export", "--store", pg_dsn, "t0000", "-o", tmp_path / "x.wlog"), f"no table 't0000' in the store"),
        (("replay", "--store", pg_dsn, "t0000", "--verify"), f"it holds 1: {table}"),
        (("replay", "--store", pg_dsn, "../etc/passwd"), "is not a table id"),
        (("export", "--store", "postgresql://nobody@127.0.0.1:1/none", table), "cannot read the store"),
    ]
    env = {k: v for k, v in os.environ.items() if k != "WILDTABLE_STORE"}
    for argv, said in cases:
        done = _run(*argv, env=env)
        assert done.returncode == 2, (argv, done.stdout, done.stderr)
        assert said in done.stderr and "Traceback" not in done.stderr, (argv, done.stderr)
    assert out.read_bytes() == b"mine"
    done = _run("export", table, env=env)
    assert done.returncode == 2 and "which store?" in done.stderr
