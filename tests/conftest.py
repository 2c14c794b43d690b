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

import pytest


@pytest.fixture(autouse=True)
def private_state_dir(tmp_path_factory, monkeypatch):
    """Every test keeps client state (seat tokens) in a temporary dir of its own, never in
    the user's ~/.local/state/wildtable: the variable reaches subprocesses the test starts too."""
    path = tmp_path_factory.mktemp("state")
    monkeypatch.setenv("WILDTABLE_STATE_DIR", str(path))      # what client/seats.py reads
    return path
