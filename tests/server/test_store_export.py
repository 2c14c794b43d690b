"""`wildtable export --store DSN TABLE` writes a table of the store as a .wlog file that
`wildtable replay --verify` verifies, and `wildtable replay --store DSN TABLE` reads the
same table straight from the store (--verify, --json, the plain viewer); wrong input is
said in a sentence, never a traceback."""

from __future__ import annotations

import json
import os

import psycopg
import pytest
import trio

from wildtable.cli import main

from scripted import play_all_to_end
from serverkit import running_server, seated, server_config


def _run(capsys, *argv) -> tuple[int, str, str]:
    """`wildtable ARGV` in this process (the command's own code, as the console script
    runs it): (exit status, stdout, stderr)."""
    capsys.readouterr()
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


async def _finished_game(data_dir, dsn) -> tuple[str, int]:
    with trio.fail_after(60):
        async with running_server(server_config(data_dir, store=dsn)) as (server, url):
            async with seated(url, "run-wild", 2, {"rounds": 1}) as (table, conns, joined):
                await play_all_to_end(conns, joined, timeout=45)
                return table, server.tables[table].seq


@pytest.fixture(scope="module")
def game(pg_cluster, tmp_path_factory):
    """A finished Run Wild game kept in a store: (DSN, table, its last seq)."""
    dsn = pg_cluster.create_database()
    table, seq = trio.run(_finished_game, tmp_path_factory.mktemp("store") / "data", dsn)
    return dsn, table, seq


def test_an_export_verifies_and_replay_reads_the_store_alike(tmp_path, game, capsys, monkeypatch):
    dsn, table, seq = game
    out = tmp_path / "exported.wlog"
    code, said, err = _run(capsys, "export", "--store", dsn, table, "-o", out)
    assert code == 0, err
    assert f"written to {out}" in said
    assert os.stat(out).st_mode & 0o777 == 0o600        # a log holds every shuffle
    with psycopg.connect(dsn) as db:
        rows = db.execute("SELECT data FROM wt_records WHERE table_id = %s ORDER BY n", (table,)).fetchall()
    assert out.read_bytes() == b"".join(r[0] for r in rows)

    code, from_file, err = _run(capsys, "replay", "--verify", out)
    assert code == 0, err
    assert f"seq: {seq}" in from_file and "game over: yes" in from_file
    # export and replay count the records alike, the header among them (issue #27: 53 and 52)
    assert f"table {table}: {len(rows)} records (the header and {len(rows) - 1} more)" in said, said
    assert f"records: {len(rows)} (the header and {len(rows) - 1} more)" in from_file, from_file
    code, from_store, err = _run(capsys, "replay", "--store", dsn, table, "--verify")
    assert code == 0, err
    final = [line for line in from_file.splitlines() if line.startswith("final hash:")]
    assert final and final[0] in from_store.splitlines()
    assert json.loads(_run(capsys, "replay", "--store", dsn, table, "--json")[1]) == \
        json.loads(_run(capsys, "replay", out, "--json")[1])
    code, plain, err = _run(capsys, "replay", "--store", dsn, table, "--plain")
    assert code == 0 and plain == _run(capsys, "replay", out, "--plain")[1]

    # the store from the environment; the default file name is the table's
    monkeypatch.setenv("WILDTABLE_STORE", dsn)
    monkeypatch.chdir(tmp_path)
    code, _, err = _run(capsys, "export", table)
    assert code == 0, err
    assert (tmp_path / f"{table}.wlog").read_bytes() == out.read_bytes()


def test_export_and_replay_say_what_is_wrong(tmp_path, game, capsys, monkeypatch):
    dsn, table, _ = game
    monkeypatch.delenv("WILDTABLE_STORE", raising=False)
    out = tmp_path / "there.wlog"
    out.write_bytes(b"mine")
    cases = [
        (("export", "--store", dsn, table, "-o", out), "exists already"),
        (("export", "--store", dsn, "t0000", "-o", tmp_path / "x.wlog"), "no table 't0000' in the store"),
        (("replay", "--store", dsn, "t0000", "--verify"), f"it holds 1: {table}"),
        (("replay", "--store", dsn, "../etc/passwd"), "is not a table id"),
        (("export", "--store", "postgresql://nobody@127.0.0.1:1/none", table), "cannot read the store"),
        (("export", table), "which store?"),
    ]
    for argv, said in cases:
        code, _, err = _run(capsys, *argv)
        assert code == 2, (argv, err)
        assert said in err, (argv, err)
    assert out.read_bytes() == b"mine"
