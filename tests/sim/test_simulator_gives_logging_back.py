"""A run of the simulator silences the server's logger while it runs (thousands of
simulated faults would log) and gives the caller back the level it found: else, in the
process of the suite, a later test waiting for a server's warning (caplog) hears nothing
(tests/server/test_finished_dir_as_found.py did, on a worker after the seeds)."""

from __future__ import annotations

import logging

from wildtable.sim.run import run


def test_a_run_leaves_the_wildtable_loggers_level_as_found():
    logger = logging.getLogger("wildtable")
    before = logger.level
    try:
        logger.setLevel(logging.INFO)
        result = run(0)
        assert not result.violations, result.violations
        assert logger.level == logging.INFO
    finally:
        logger.setLevel(before)
