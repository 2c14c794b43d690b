"""A node of a cluster restarted while its store is out of its reach waits for the store
and then joins (server/storewait.py), as a node booting before its PostgreSQL does.
Seeds 4663 and 5403 restarted a node whose store went away as it joined: its start
raised StoreError ("cannot register this node in the store: connection refused") and
the run crashed ("child exited without calling task_status.started()")."""

from wildtable.sim.run import replay_command, run


def test_a_node_restarted_while_its_store_is_away_joins_once_it_is_back():
    for seed in (4663, 5403):
        r = run(seed)
        assert r.cluster and r.store_outages and r.crashes, r
        assert r.ok, f"{r.violations}; {replay_command(seed)}"
