"""PostgreSQL daemonizes, so a pytest run that is killed leaves its test clusters running
(tests/pgkit.py). The session fixture sweeps them: a cluster whose owning pytest is gone is
stopped and its dir removed; one whose owner still runs is left alone."""

import subprocess
from pathlib import Path

import psycopg
import pytest

from pgkit import OWNER_FILE, sweep_orphans


def _postmaster(cluster) -> int:
    return int((cluster.data / "postmaster.pid").read_text().split()[0])


def _running(pid: int) -> bool:
    """The process exists and has not ended (an ended daemon may linger as a zombie of
    pid 1 until it is reaped)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def test_a_killed_runs_cluster_is_stopped_and_removed(pg_cluster):
    orphan, kept = pg_cluster.private(), pg_cluster.private()
    try:
        orphan.start()
        pid = _postmaster(orphan)
        gone = subprocess.Popen(["true"])
        gone.wait()                                     # a pid whose process has ended
        (orphan.base / OWNER_FILE).write_text(f"{gone.pid} 1\n")

        removed = sweep_orphans(Path(pg_cluster.base).parent)

        assert orphan.base in removed and not orphan.base.exists()
        assert not _running(pid)
        with pytest.raises(psycopg.OperationalError):
            psycopg.connect(orphan.dsn(), connect_timeout=3).close()
        for mine in (kept.base, pg_cluster.base):       # this run's own clusters stay
            assert mine not in removed and mine.exists()
        psycopg.connect(pg_cluster.dsn(), connect_timeout=3).close()
    finally:
        orphan.remove()
        kept.remove()
