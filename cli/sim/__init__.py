"""The deterministic simulator (docs/ARCHITECTURE.md, "Simulation"): the real server
code in a simulated world (network, clock, disk), real bot strategies as players,
faults on a seeded schedule, invariants checked at every crash and at the end.
``python -m wildtable.sim --seed N`` replays one run exactly."""
