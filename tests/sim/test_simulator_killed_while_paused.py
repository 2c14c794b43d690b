"""A node killed while it is paused (wildtable/sim/pause.py ``NodeClock.kill``): what waited
for the pause to end is let go, so a wait the kill's cancel does not reach (the log
writer's shielded group) ends and the node stops. Seed 1484 of the simulator hung there
for ever: the run waited for the killed node, whose writer waited at its gate."""

import trio
import trio.testing

from wildtable.sim import pause
from wildtable.sim.run import run


def test_a_shielded_input_waiting_at_the_gate_goes_on_when_the_node_is_killed():
    reached: list[float] = []

    async def main():
        clock = pause.NodeClock("a")
        shield = trio.CancelScope(shield=True)

        async def shielded_input():
            with shield:
                await clock.gate()
                reached.append(trio.current_time())

        async with trio.open_nursery() as nursery:
            await trio.sleep(0.5)
            clock.pause()
            nursery.start_soon(shielded_input)
            await trio.sleep(3.0)
            assert reached == []                    # paused: the input waits
            clock.kill()
            await trio.sleep(0.1)
            if not reached:
                shield.shield = False               # (so that a failure fails, not hangs)
            nursery.cancel_scope.cancel()           # the process's tasks are cancelled
        assert clock.dead and not clock.paused

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
    assert reached == [3.5]


def test_the_seed_that_hung_runs_to_its_end():
    r = run(1484)
    assert r.ok, r.violations
    assert r.crashes >= 1
