"""The suite leaves the user's home alone: every test (and every client it starts) keeps
its seat tokens in a temporary state dir, not in ~/.local/state/wildtable."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

from wildtable.headless.seats import SeatBook

STATE_DIR_ENV = "WILDTABLE_STATE_DIR"      # headless/seats.py reads it
AT_IMPORT = dict(os.environ)                # as modules that copy the environment on import see it


def test_the_state_dir_of_a_test_is_a_temporary_one(tmp_path_factory):
    state = Path(os.environ[STATE_DIR_ENV]).resolve()
    assert state.is_relative_to(tmp_path_factory.getbasetemp().resolve())
    assert SeatBook().path.parent == state
    home_state = Path.home() / ".local" / "state" / "wildtable"
    assert not SeatBook().path.resolve().is_relative_to(home_state.resolve())


def test_a_client_subprocess_of_a_test_keeps_its_seats_in_the_temporary_dir():
    code = "from wildtable.headless.seats import SeatBook; print(SeatBook().path)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert Path(out.stdout.strip()).parent == Path(os.environ[STATE_DIR_ENV])


def test_an_environment_copied_when_test_modules_are_imported_has_a_temporary_state_dir():
    state = AT_IMPORT.get(STATE_DIR_ENV)
    assert state is not None, "a client started with this environment would write ~/.local/state/wildtable"
    assert not Path(state).resolve().is_relative_to(Path.home().resolve() / ".local")
    assert Path(state).resolve().is_relative_to(Path(tempfile.gettempdir()).resolve())
