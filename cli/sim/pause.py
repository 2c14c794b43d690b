"""A node's process paused (docs/ARCHITECTURE.md, "Simulation"), as SIGSTOP or a long GC
pause would stop it: while it is paused none of its code runs. Every node's tasks share
one Trio run and its one clock, so the pause is made of two parts:

- ``NodeClock``, the node's server/world.py Clock: every wait of the server's code (its
  sleeps and deadlines) is a cancel scope the clock knows; a pause moves their deadlines
  to never, a resume puts them back, so the timers that came due meanwhile fire late,
  with the clock moved on (one microsecond apart, in the order they were due);
- ``gate()``, which the simulated world's inputs to the node (a link's message or its
  end, a new connection, a store call's answer, a disk call's return: net.py, node.py,
  store.py) pass before they reach the server's code: they wait in the "kernel" until
  the node runs again, then go on a microsecond apart in the order they came.

A real loop woken by SIGCONT finds the sockets readable and the deadlines passed at once
and runs them in one batch, in an order of its own (Trio's: reversed half the time); the
run's seed says which come first here, the late timers or the inputs that waited.

``PauseWatch`` checks it as the run goes: a Trio instrument (public API only) that,
while a node is paused, looks at every task step of that node's tasks and calls it a bug
when the code it resumes is the server's.
"""

from __future__ import annotations

import math
import os
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import trio

import wildtable.server

class SpawnOrder(trio.abc.Instrument):
    """Names each task by its place in the tree of spawns (its parent's place and how many
    tasks that parent had spawned before it): an order of tasks that does not come from
    Trio's scheduling, so long as each task's own steps are one run. NodeClock breaks ties
    between waits made at one instant with it (docs/ARCHITECTURE.md, "Determinism")."""

    def __init__(self):
        self.reset()

    def reset(self) -> None:
        """A fresh tree, for a new run."""
        self.places: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self.counts: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()    # spawns so far
        self.keys: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()      # keys taken so far
        self._top = 0

    def task_spawned(self, task: trio.lowlevel.Task) -> None:
        try:
            parent: trio.lowlevel.Task | None = trio.lowlevel.current_task()
        except RuntimeError:
            parent = None
        if parent is None or parent not in self.places:
            self._top += 1
            self.places[task] = (self._top,)
            return
        n = self.counts.get(parent, 0) + 1
        self.counts[parent] = n
        self.places[task] = self.places[parent] + (n,)

    def key(self) -> tuple:
        """The current task's place, and how many keys it took before this one."""
        task = trio.lowlevel.current_task()
        n = self.keys.get(task, 0) + 1
        self.keys[task] = n
        return (self.places.get(task, ()), n)


SPAWNS = SpawnOrder()     # installed by run.run for each run (trio.run(instruments=...))

STAGGER = 1e-6        # seconds between the overdue timers a resume fires (in the order they were due)
_SERVER = os.path.dirname(wildtable.server.__file__) + os.sep
_TRIO = os.path.dirname(trio.__file__) + os.sep


class NodeClock:
    """server/world.py's Clock for one incarnation of a node: Trio's waits, which stop
    while the node is paused."""

    def __init__(self, name: str):
        self.name = name
        self.paused = False
        self.dead = False                  # killed: its tasks are being cancelled
        self.paused_at = 0.0
        self.root: trio.lowlevel.Task | None = None    # the task the node's server runs under
        self._scopes: dict[trio.CancelScope, tuple[float, tuple]] = {}   # open waits: own deadline, number
        self._waiting: list[list] = []   # inputs held at the gate: [came at, number, goes on at]
        self._running = trio.Event()
        self._running.set()

    # ------------------------------------------------------------ the Clock
    @contextmanager
    def move_on_at(self, deadline: float) -> Iterator[trio.CancelScope]:
        scope = trio.CancelScope(deadline=math.inf if self.paused else deadline)
        self._scopes[scope] = (deadline, SPAWNS.key())
        try:
            with scope:
                yield scope
        finally:
            del self._scopes[scope]

    def move_on_after(self, seconds: float):
        return self.move_on_at(trio.current_time() + seconds)

    @contextmanager
    def fail_at(self, deadline: float) -> Iterator[trio.CancelScope]:
        with self.move_on_at(deadline) as scope:
            yield scope
        if scope.cancelled_caught:
            raise trio.TooSlowError

    def fail_after(self, seconds: float):
        return self.fail_at(trio.current_time() + seconds)

    async def sleep_until(self, deadline: float) -> None:
        with self.move_on_at(deadline):
            await trio.sleep_forever()

    async def sleep(self, seconds: float) -> None:
        await self.sleep_until(trio.current_time() + seconds)

    # ------------------------------------------------------------ the pause
    async def gate(self) -> None:
        """Where an input from outside reaches the node's code: it waits while the node is
        paused (no checkpoint otherwise: a run without pauses is scheduled as before), then
        goes on at a time of its own, in the order the inputs came (Trio runs the tasks
        ready at one instant in any order: docs/ARCHITECTURE.md, "Determinism")."""
        if not self.paused:
            return
        me = [trio.current_time(), SPAWNS.key(), math.inf]
        while True:
            if self.paused:
                if not any(w is me for w in self._waiting):
                    me[2] = math.inf
                    self._waiting.append(me)
                await self._running.wait()
            elif trio.current_time() < me[2]:
                await trio.sleep_until(me[2])
            else:
                return

    def pause(self) -> None:
        if self.paused or self.dead:
            return
        self.paused, self.paused_at = True, trio.current_time()
        self._running = trio.Event()
        for scope in self._scopes:
            scope.deadline = math.inf

    def resume(self, timers_first: bool = False) -> None:
        """Its waits get their deadlines back: those that passed fire now, a microsecond
        apart in the order they were due; its inputs go on, before the late timers or
        (``timers_first``) after them."""
        if not self.paused:
            return
        self.paused = False
        now = trio.current_time()
        overdue = sorted(((d, n, scope) for scope, (d, n) in self._scopes.items() if d <= now),
                         key=lambda x: (x[0], x[1]))
        inputs = sorted(self._waiting)
        self._waiting = []
        first = len(overdue) if timers_first else 0        # the inputs' first slot
        for i, w in enumerate(inputs):
            w[2] = now + (first + i) * STAGGER
        first = 0 if timers_first else len(inputs)         # the late timers' first slot
        for i, (_, _, scope) in enumerate(overdue):
            scope.deadline = now + (first + i) * STAGGER
        for scope, (d, _) in self._scopes.items():
            if d > now:
                scope.deadline = d
        self._running.set()

    def kill(self) -> None:
        """The process is gone: its tasks are cancelled (not resumed). Killed while
        paused, what waited for the pause to end is let go as at a resume: a wait the
        kill's cancel does not reach (the log writer's shielded group, server/logwriter.py)
        must not wait for ever, and it goes on as a node killed unpaused does: into a
        crashed disk, to end (seed 1484 hung here: the writer's group at the gate)."""
        self.resume()
        self.dead = True

    def runs(self, task: trio.lowlevel.Task) -> bool:
        """Whether ``task`` is one of this node's (under its root task)."""
        t: trio.lowlevel.Task | None = task
        while t is not None:
            if t is self.root:
                return True
            nursery = t.parent_nursery
            t = nursery.parent_task if nursery is not None else None
        return False


def resumes_in(task: trio.lowlevel.Task) -> tuple[str, int] | None:
    """Where ``task`` resumes outside Trio: the innermost frame it waits in that is not
    Trio's (file, line)."""
    where = None
    for frame, line in task.iter_await_frames():
        path = frame.f_code.co_filename
        if not path.startswith(_TRIO):
            where = (path, line)
    return where


class PauseWatch(trio.abc.Instrument):
    """While a node is paused: a step of one of its tasks that resumes the server's code
    (not the simulated world's, which models the kernel and the network) is a bug of the
    pause. Installed only while a node is paused (an instrument costs every task step)."""

    def __init__(self, on_bug: Callable[[str], None]):
        self.on_bug = on_bug
        self.paused: list[NodeClock] = []
        self.installed = False
        self.caught = 0

    def pause(self, clock: NodeClock) -> None:
        clock.pause()
        if clock.paused and clock not in self.paused:
            self.paused.append(clock)
        if self.paused and not self.installed:
            trio.lowlevel.add_instrument(self)
            self.installed = True

    def resume(self, clock: NodeClock, timers_first: bool = False) -> None:
        clock.resume(timers_first)
        self.forget(clock)

    def forget(self, clock: NodeClock) -> None:
        if clock in self.paused:
            self.paused.remove(clock)
        if not self.paused and self.installed:
            trio.lowlevel.remove_instrument(self)
            self.installed = False

    def before_task_step(self, task: trio.lowlevel.Task) -> None:
        now = trio.current_time()
        for clock in self.paused:
            # (the tasks ready at the instant it paused still run to their next wait)
            if clock.paused and now > clock.paused_at and clock.runs(task):
                where = resumes_in(task)
                if where is not None and where[0].startswith(_SERVER):
                    self.caught += 1
                    if self.caught <= 3:
                        self.on_bug(f"node {clock.name} ran while paused (since {clock.paused_at:.3f}): task "
                                    f"{task.name} resumed at {os.path.relpath(where[0], _SERVER)}:{where[1]}")
