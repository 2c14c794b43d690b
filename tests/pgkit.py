"""A throwaway PostgreSQL cluster for the tests of the store (server/store_pg.py) and of
the nodes that share it (server/cluster.py).

Debian's ``postgresql`` package (``.ci/run`` installs it) puts its binaries under
/usr/lib/postgresql/VERSION/bin. PostgreSQL refuses to run as root, so when the tests run
as root the cluster belongs to the unprivileged ``postgres`` system user: its directory is
chowned to it and every server program runs through ``runuser -u postgres --``.

- ``pg_cluster`` (session): one cluster for the whole run, ``initdb`` once in a temporary
  dir, listening on 127.0.0.1 on a free port with fsync on (the store's promise is the
  disk's); ``pg_ctl stop -m immediate`` at the end and the dir removed.
- ``pg_dsn`` (per test): a fresh database in it (CREATE DATABASE), so tests never see each
  other's tables; its DSN is ``postgresql://postgres@127.0.0.1:PORT/NAME``.
- ``PgCluster.private()``: a cluster of a test's own (a copy of the session's initdb'd
  dir, started on another port) for tests that stop and start PostgreSQL.

PostgreSQL daemonizes (its parent is pid 1), so a pytest run that is killed leaves its
clusters running. Every cluster's dir therefore names its owner (``owner``: the pytest
process's pid and start time), and the session fixture first sweeps the
/tmp/wildtable-pg-* dirs whose owner is gone: ``pg_ctl stop -m immediate``, dir removed.
A dir whose owner still runs (another pytest, an xdist worker) is left alone.

If PostgreSQL is not installed the tests that ask for it FAIL with a sentence saying so;
nothing is skipped silently.
"""

from __future__ import annotations

import glob
import itertools
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

PG_USER = "postgres"           # the unprivileged system user that owns the cluster under root
START_TIMEOUT = 30             # seconds pg_ctl waits for the server to accept connections


def _installed(program: str) -> list[str]:
    """``program`` of every installed PostgreSQL, oldest version first."""
    return sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{program}"),
                  key=lambda p: int(Path(p).parent.parent.name) if Path(p).parent.parent.name.isdigit() else 0)


def pg_bindir() -> Path:
    """The newest installed PostgreSQL's bin dir (WILDTABLE_PG_BIN overrides it)."""
    forced = os.environ.get("WILDTABLE_PG_BIN")
    if forced:
        return Path(forced)
    found = _installed("initdb")
    if not found:
        pytest.fail("PostgreSQL is not installed (no /usr/lib/postgresql/*/bin/initdb): the store "
                    "tests need a real one; .ci/run installs Debian's `postgresql` package "
                    "(apt-get install postgresql), or set WILDTABLE_PG_BIN to its bin dir.",
                    pytrace=False)
    return Path(found[-1]).parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _as_owner(argv: list[str]) -> list[str]:
    """``argv`` run as the cluster's owner: the ``postgres`` user when we are root."""
    if os.geteuid() != 0:
        return argv
    return ["runuser", "-u", PG_USER, "--", *argv]


OWNER_FILE = "owner"            # in a cluster's base dir: "PID STARTTIME" of the pytest that made it
DIR_PREFIX = "wildtable-pg-"


def _start_time(pid: int) -> str | None:
    """The process's start time (clock ticks since boot, /proc/PID/stat field 22), which
    tells a reused pid from the owner; None if no such process."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rsplit(")", 1)[1].split()[19]


def _claim(base: Path) -> None:
    """Write this process as the owner of the cluster dir ``base``."""
    (base / OWNER_FILE).write_text(f"{os.getpid()} {_start_time(os.getpid())}\n")


def _owner_alive(base: Path) -> bool:
    """False only when ``base`` names an owner that is gone; a dir without an owner file
    (being made right now, or by an older kit) counts as owned."""
    try:
        pid, started = (base / OWNER_FILE).read_text().split()
    except (OSError, ValueError):
        return True
    return _start_time(int(pid)) == started


def sweep_orphans(tmpdir: Path | None = None) -> list[Path]:
    """Stop and remove the clusters left behind by pytest runs that were killed (see the
    module's doc); the dirs removed."""
    removed = []
    for base in sorted(Path(tmpdir or tempfile.gettempdir()).glob(DIR_PREFIX + "*")):
        if not base.is_dir() or _owner_alive(base):
            continue
        postgres = _installed("pg_ctl")
        if (base / "data" / "postmaster.pid").exists() and postgres:
            subprocess.run(_as_owner([postgres[-1], "stop", "-w", "-m", "immediate", "-D", str(base / "data")]),
                           capture_output=True, timeout=60)
        shutil.rmtree(base, ignore_errors=True)
        removed.append(base)
    return removed


def _chown_tree(path: Path) -> None:
    if os.geteuid() != 0:
        return
    pw = pwd.getpwnam(PG_USER)
    for root, dirs, files in os.walk(path):
        os.chown(root, pw.pw_uid, pw.pw_gid)
        for name in files:
            os.chown(os.path.join(root, name), pw.pw_uid, pw.pw_gid)


class PgCluster:
    """One PostgreSQL cluster in ``base`` (data dir ``base/data``, its socket and log beside
    it). ``start()``/``stop()`` may be called again (a test that takes the store away)."""

    def __init__(self, base: Path, bindir: Path, port: int | None = None):
        self.base, self.bindir = base, bindir
        self.data = base / "data"
        self.port = port or free_port()
        self.logfile = base / "server.log"
        self._dbs = itertools.count(1)

    @classmethod
    def initdb(cls, bindir: Path | None = None) -> "PgCluster":
        bindir = bindir or pg_bindir()
        base = Path(tempfile.mkdtemp(prefix=DIR_PREFIX))
        os.chmod(base, 0o700)
        _claim(base)
        _chown_tree(base)
        cluster = cls(base, bindir)
        try:
            cluster._run([str(bindir / "initdb"), "-D", str(cluster.data), "-U", "postgres",
                          "--auth=trust", "--encoding=UTF8", "--no-locale", "--no-instructions",
                          "--no-sync"])     # a throwaway: its own files need no fsync (the server's fsync is on)
        except BaseException:
            shutil.rmtree(base, ignore_errors=True)
            raise
        return cluster

    def private(self) -> "PgCluster":
        """A cluster of its own: a copy of this one's data dir (made while this one is
        stopped or before it started: call on a template), on another port."""
        base = Path(tempfile.mkdtemp(prefix=DIR_PREFIX))
        os.chmod(base, 0o700)
        _claim(base)
        shutil.copytree(self.template, base / "data", symlinks=True)
        os.chmod(base / "data", 0o700)
        _chown_tree(base)
        return PgCluster(base, self.bindir)

    @property
    def template(self) -> Path:
        """A stopped copy of the freshly initdb'd data dir (made at the first start)."""
        return self.base / "template"

    def _run(self, argv: list[str], timeout: float = 60) -> str:
        done = subprocess.run(_as_owner(argv), capture_output=True, text=True, timeout=timeout,
                              cwd=self.base)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(argv)} failed ({done.returncode}):\n{done.stdout}{done.stderr}")
        return done.stdout

    def start(self) -> None:
        if not self.template.exists() and (self.data / "PG_VERSION").exists() and not (self.data / "postmaster.pid").exists():
            shutil.copytree(self.data, self.template, symlinks=True)
        options = " ".join([
            f"-p {self.port}", "-c listen_addresses=127.0.0.1",
            f"-c unix_socket_directories={self.base}", "-c fsync=on", "-c max_connections=200",
            "-c shared_buffers=16MB", "-c log_min_messages=warning",
        ])
        self._run([str(self.bindir / "pg_ctl"), "start", "-w", "-t", str(START_TIMEOUT),
                   "-D", str(self.data), "-l", str(self.logfile), "-o", options],
                  timeout=START_TIMEOUT + 10)

    def stop(self, mode: str = "immediate") -> None:
        if (self.data / "postmaster.pid").exists():
            self._run([str(self.bindir / "pg_ctl"), "stop", "-w", "-m", mode, "-D", str(self.data)])

    def remove(self) -> None:
        try:
            self.stop()
        finally:
            shutil.rmtree(self.base, ignore_errors=True)

    def require_password(self, role: str, password: str) -> None:
        """Make the login role ``role`` with ``password``, which this cluster then asks it
        for over TCP (scram-sha-256: a pg_hba.conf line before the trust ones, reloaded);
        every other role is trusted still. For a cluster of a test's own (``private``)."""
        import psycopg

        with psycopg.connect(self.dsn(), autocommit=True, connect_timeout=10) as conn:
            conn.execute(f"CREATE ROLE \"{role}\" LOGIN PASSWORD '{password}'")
        hba = self.data / "pg_hba.conf"
        hba.write_text(f"host all {role} 127.0.0.1/32 scram-sha-256\n" + hba.read_text())
        self._run([str(self.bindir / "pg_ctl"), "reload", "-D", str(self.data)])
        # the postmaster reloads once it gets to it: until then the role is trusted
        given_up = time.monotonic() + START_TIMEOUT
        while time.monotonic() < given_up:
            try:
                psycopg.connect(self.dsn().replace("postgres@", f"{role}@"), connect_timeout=10,
                                passfile=os.devnull).close()
            except psycopg.OperationalError:
                return          # asked for a password: the new rule holds
            time.sleep(0.05)
        raise RuntimeError(f"pg_ctl reload: {role} still gets in without a password")

    def dsn(self, dbname: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{dbname}"

    def create_database(self) -> str:
        """A new empty database; its DSN."""
        import psycopg

        name = f"wt_test_{os.getpid()}_{next(self._dbs)}"
        with psycopg.connect(self.dsn(), autocommit=True, connect_timeout=10) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.dsn(name)

    def drop_database(self, dsn: str) -> None:
        """Drop the database ``dsn`` names (its connections ended first), if the cluster
        still runs (a test may have stopped it: its files go with the cluster)."""
        import psycopg

        if not (self.data / "postmaster.pid").exists():
            return
        name = dsn.rsplit("/", 1)[1]
        try:
            with psycopg.connect(self.dsn(), autocommit=True, connect_timeout=10) as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        except psycopg.OperationalError:
            pass        # the cluster is stopping or stopped: its removal takes the files

    def log_tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.logfile.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""


@pytest.fixture(scope="session")
def pg_cluster():
    """A PostgreSQL cluster for the whole test run (see the module's doc); the clusters of
    killed runs are swept first."""
    sweep_orphans()
    cluster = PgCluster.initdb()
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.remove()


@pytest.fixture
def pg_dsn(pg_cluster):
    """The DSN of a fresh, empty database of this test's own, dropped after the test: a
    database is ~12 MB of files, and a worker's 60 of them left to the cluster's removal
    made the last test's teardown take 3-9 s (deleting 700 MB), which the whole run
    waited for."""
    dsn = pg_cluster.create_database()
    yield dsn
    pg_cluster.drop_database(dsn)


@pytest.fixture
def pg_private(pg_cluster):
    """A started PostgreSQL cluster of this test's own (to stop and start it); removed after."""
    cluster = pg_cluster.private()
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.remove()


@pytest.fixture(params=["files", "store"])
def files_or_store(request) -> dict:
    """The server's keyword arguments for its tables' logs, one test run each: files in its
    data dir ({}), or a store in a fresh database of this test's own (node "a")."""
    if request.param == "files":
        return {}
    return {"store": request.getfixturevalue("pg_dsn"), "node_id": "a"}
