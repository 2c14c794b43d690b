"""docs/OPERATING.md tells the truth: its systemd unit passes `systemd-analyze verify` and
its command line is one `wildtable serve` accepts; every metric the server exposes is in
its table; and its cluster steps, followed command by command (the blocks marked
``<!-- tested: NAME -->``) against a PostgreSQL of the test's own, make a role and a
database, start two nodes on one machine that are both ready, and create a table on the
node chosen."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest
import trio

from wildtable.cli import build_parser
from wildtable.server.metrics import Gauges, Metrics

from adversarial_kit import DIE_WITH_PARENT
from pgkit import free_port
from proc import LineReader

DOCS = Path(__file__).resolve().parents[2] / "docs"
VENV_BIN = Path(sys.executable).parent


def block_of(name: str) -> list[str]:
    """The command lines of the ```sh block after ``<!-- tested: NAME -->``."""
    text = (DOCS / "OPERATING.md").read_text()
    found = re.search(r"<!-- tested: %s -->\n```sh\n(.*?)```" % re.escape(name), text, re.S)
    assert found, f"no tested block {name!r} in docs/OPERATING.md"
    return [line for line in found.group(1).splitlines() if line.strip() and not line.startswith("#")]


def test_the_unit_file_verifies_and_its_command_line_parses(tmp_path):
    unit = (DOCS / "wildtable.service").read_text()
    (exec_start,) = re.findall(r"^ExecStart=(.*)$", unit, re.M)
    argv = shlex.split(exec_start)
    assert argv[0] == "/opt/wildtable/venv/bin/wildtable"
    args = build_parser().parse_args(argv[1:])
    assert args.command == "serve" and args.metrics_port == 9465 and args.log_format == "json"
    if shutil.which("systemd-analyze") is None:
        pytest.skip("systemd-analyze is not installed here (the unit's command line was checked)")
    # the same unit, its program where this checkout's venv has it
    here = tmp_path / "wildtable.service"
    here.write_text(unit.replace("/opt/wildtable/venv/bin/", f"{VENV_BIN}/"))
    done = subprocess.run(["systemd-analyze", "verify", str(here)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and not done.stderr.strip(), done.stderr


def test_every_metric_is_in_the_table():
    text = Metrics().render(Gauges({"lobby": 0}, {"playing": 0}, 0, True)).decode()
    names = set(re.findall(r"^# TYPE (\S+) ", text, re.M))
    doc = (DOCS / "OPERATING.md").read_text()
    documented = set(re.findall(r"^\| `(wildtable_[a-z_]+)", doc, re.M))
    assert names == documented, (names - documented, documented - names)


def _as_operator(line: str, substitutions: dict[str, str]) -> list[str]:
    for old, new in substitutions.items():
        line = line.replace(old, new)
    argv = shlex.split(line)
    if argv[:3] == ["sudo", "-u", "postgres"]:
        argv = (["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []) + argv[3:]
    if argv[0] == "wildtable":
        argv[0] = str(VENV_BIN / "wildtable")
    return argv


async def test_the_cluster_steps_as_written(tmp_path, pg_private):
    ports = {p: str(free_port()) for p in ("8765", "8766", "9465", "9466")}
    subs = {"127.0.0.1:5432": f"127.0.0.1:{pg_private.port}", "/var/lib/wildtable": str(tmp_path)}
    subs.update({f" {p}": f" {q}" for p, q in ports.items()})
    subs.update({f":{p}": f":{q}" for p, q in ports.items()})
    env = {**os.environ, "PGHOST": "127.0.0.1", "PGPORT": str(pg_private.port),
           "PATH": f"{pg_private.bindir}:{os.environ['PATH']}"}
    with trio.fail_after(60):
        for line in block_of("postgres"):
            argv = _as_operator(line, subs)
            if argv[0] == "runuser":        # runuser resets nothing we need, but keep PATH for createuser
                argv = argv[:4] + ["env", f"PATH={env['PATH']}", "PGHOST=127.0.0.1", f"PGPORT={pg_private.port}",
                                   *argv[4:]]
            done = await trio.run_process(argv, env=env, capture_stdout=True, capture_stderr=True, check=False)
            assert done.returncode == 0, (line, done.stderr)
        nodes = []
        async with trio.open_nursery() as nursery:
            try:
                for line in block_of("nodes"):
                    proc = await trio.lowlevel.open_process(
                        [sys.executable, str(DIE_WITH_PARENT), str(os.getpid()), *_as_operator(line, subs)],
                        stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, env=env)
                    err = LineReader(proc.stderr, errors="replace")
                    nodes.append(proc)
                    await err.until(r"serving on ws://", timeout=30)
                    nursery.start_soon(err.read_to_end)
                made = None
                for line in block_of("use"):
                    done = await trio.run_process(_as_operator(line, subs), env=env, capture_stdout=True,
                                                  capture_stderr=True, check=False)
                    assert done.returncode == 0, (line, done.stdout, done.stderr)
                    if "readyz" in line:
                        assert b'"ready":true' in done.stdout, done.stdout
                    else:
                        made = done.stdout.decode().strip()
                assert made and re.fullmatch(r"t[0-9a-f]{8}", made), made
                dsn = f"postgresql://wt@127.0.0.1:{pg_private.port}/wildtable"
                with psycopg.connect(dsn) as db:
                    (owner,) = db.execute("SELECT owner FROM wt_tables WHERE table_id = %s", (made,)).fetchone()
                assert owner == "n2", owner          # on the node chosen
            finally:
                for proc in nodes:
                    proc.terminate()
                with trio.CancelScope(shield=True), trio.move_on_after(15):
                    for proc in nodes:
                        await proc.wait()
                for proc in nodes:
                    if proc.returncode is None:
                        proc.kill()
                nursery.cancel_scope.cancel()
        assert [p.returncode for p in nodes] == [0, 0]
