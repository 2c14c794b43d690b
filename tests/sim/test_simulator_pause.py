"""A node's process paused in the simulator (wildtable/sim/pause.py; docs/ARCHITECTURE.md,
"Simulation"): its waits stop while the other nodes' go on, what came due fires late,
in the order it was due, before or after the inputs that waited; and the watch that
checks a paused node runs nothing catches a pause that lets its code run."""

import trio
import trio.testing

from wildtable.server.world import TRIO_CLOCK
from wildtable.sim import pause
from wildtable.sim.run import run


def _run(main):
    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))


def test_a_paused_node_waits_and_its_timers_fire_late_in_their_order():
    fired: list[tuple[str, float]] = []

    async def main():
        a, b = pause.NodeClock("a"), pause.NodeClock("b")

        async def sleeper(clock, name, seconds):
            await clock.sleep(seconds)
            fired.append((name, trio.current_time()))

        async def deadline(clock, name, seconds):
            try:
                with clock.fail_after(seconds):
                    await trio.sleep_forever()
            except trio.TooSlowError:
                fired.append((name, trio.current_time()))

        async def reader(clock):
            await clock.gate()
            fired.append(("a input", trio.current_time()))

        async with trio.open_nursery() as nursery:
            nursery.start_soon(sleeper, a, "a 2s", 2.0)
            nursery.start_soon(deadline, a, "a 1s", 1.0)
            nursery.start_soon(sleeper, b, "b 2s", 2.0)
            await trio.sleep(0.5)
            a.pause()
            nursery.start_soon(sleeper, a, "a 0s", 0.0)      # started while paused: waits too
            nursery.start_soon(reader, a)
            await trio.sleep(5.0)
            assert [n for n, _ in fired] == ["b 2s"]       # only the other node's timer ran
            a.resume(timers_first=True)

    _run(main)
    names = [n for n, _ in fired]
    # in the order they were due (the one started while paused was due at 0.5), then the input
    assert names == ["b 2s", "a 0s", "a 1s", "a 2s", "a input"], fired
    times = dict(fired)
    assert times["b 2s"] == 2.0
    assert 5.5 <= times["a 0s"] < times["a 1s"] < times["a 2s"] < times["a input"] < 5.5 + 1e-3


def test_inputs_first_resume_and_an_unpaused_gate_does_not_yield():
    order: list[str] = []

    async def main():
        a = pause.NodeClock("a")
        await a.gate()                                 # running: no checkpoint, nothing waits
        async with trio.open_nursery() as nursery:
            async def timer():
                await a.sleep(1.0)
                order.append("timer")

            async def reader():
                await a.gate()
                order.append("input")
            nursery.start_soon(timer)
            await trio.sleep(0.1)
            a.pause()
            nursery.start_soon(reader)
            await trio.sleep(3.0)
            a.resume()

    _run(main)
    assert order == ["input", "timer"]


def test_the_real_clock_is_trios_own_functions():
    assert TRIO_CLOCK.sleep is trio.sleep
    assert TRIO_CLOCK.move_on_at is trio.move_on_at
    assert TRIO_CLOCK.fail_after is trio.fail_after


SEED = 5        # a single node paused once (0.44 s in), with a table and players on it


def test_the_watch_catches_a_node_that_runs_while_paused(monkeypatch):
    """The pause holds in the CI seeds (test_simulator_seeds.py) because the watch finds
    nothing; here it must find the node's code running when the inputs are not gated."""
    clean = run(SEED)
    assert clean.ok and clean.pauses, clean

    async def open_gate(self):
        pass
    monkeypatch.setattr(pause.NodeClock, "gate", open_gate)
    leaky = run(SEED)
    assert any("ran while paused" in v for v in leaky.violations), leaky.violations
