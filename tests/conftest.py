import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "default", deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "ci", deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    derandomize=True,
)
settings.load_profile("ci" if os.environ.get("CI") else "default")

# The shared test kits (serverkit, rawclient, uikit, ...) live beside this file; the
# tests are filed by subject in protocol/, server/ and client/ below it.
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import shutil
import tempfile

import pytest

_SESSION_STATE: list[str] = []


def pytest_configure(config):
    """A state dir for the whole run, set before any test module is imported: a module
    that copies the environment when it is imported (``ENV = dict(os.environ)``) hands it
    to the clients it starts too. Each test then gets a dir of its own (below)."""
    path = tempfile.mkdtemp(prefix="wildtable-test-state-")
    _SESSION_STATE.append(path)
    os.environ["WILDTABLE_STATE_DIR"] = path


def pytest_unconfigure(config):
    for path in _SESSION_STATE:
        shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(autouse=True)
def private_state_dir(tmp_path_factory, monkeypatch):
    """Every test keeps client state (seat tokens) in a temporary dir of its own, never in
    the user's ~/.local/state/wildtable: the variable reaches subprocesses the test starts too."""
    path = tmp_path_factory.mktemp("state")
    monkeypatch.setenv("WILDTABLE_STATE_DIR", str(path))      # what client/seats.py reads
    return path


# the throwaway PostgreSQL of the store and cluster tests (started only by a test that asks)
from pgkit import pg_cluster, pg_dsn, pg_private  # noqa: E402,F401  (fixtures)
