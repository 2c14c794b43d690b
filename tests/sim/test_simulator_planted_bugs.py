"""Each planted bug (wildtable/sim/plant.py: a small, explicit patch of the real server
code) is found by the simulator within the seeds CI runs (test_simulator_seeds.py), and
the seed that finds it says what is wrong."""

import os

import pytest

from wildtable.sim.plant import planted
from wildtable.sim.run import CLUSTER_EVERY, run

SEEDS = int(os.environ.get("WILDTABLE_SIM_SEEDS", "1000"))

EXPECTED = {
    "ack_before_commit": "an acknowledged record was lost",
    "spectator_leak": "spec was shown a view",
    "fair_unbounded": "more than",
    "rejoin_ignored": "neither seated nor told why",
    # found by a cluster run (one seed in CLUSTER_EVERY): a node paused past its lease writes
    "lease_unchecked": "one owner writes a table",
    "fenced_acked": "a fenced write acknowledged",
    # found by a run whose disk fills (run.py, World.disk_full)
    "ack_while_full": "while the disk was full",
    # found by a cluster run whose node is paused past its lease (pause.py: a true pause;
    # its links and store calls held while its timers ran would not find it)
    "catch_up_told_first": "was shown",
}

# bugs only a cluster run can find: the single-node seeds are skipped (not run) for them
CLUSTER_ONLY = {"catch_up_told_first"}


@pytest.mark.parametrize("bug", sorted(EXPECTED))
def test_the_simulator_finds_a_planted_bug(bug):
    with planted(bug):
        for seed in range(SEEDS):
            if bug in CLUSTER_ONLY and seed % CLUSTER_EVERY != CLUSTER_EVERY - 1:
                continue
            r = run(seed, {bug})
            if not r.ok:
                break
        else:
            pytest.fail(f"{bug}: no seed of {SEEDS} found it")
    print(f"\n{bug}: found by seed {seed}: {r.violations[0]}")
    assert any(EXPECTED[bug] in v for v in r.violations), r.violations
    # and without the bug, that seed keeps every invariant
    assert run(seed).ok
