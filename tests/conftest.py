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
    if not hasattr(config, "workerinput"):
        # the locks of pytest -n (below): made before the workers start, which inherit it
        locks = tempfile.mkdtemp(prefix="wildtable-test-locks-")
        _SESSION_STATE.append(locks)
        os.environ[_LOCK_DIR] = locks


def pytest_unconfigure(config):
    for path in _SESSION_STATE:
        shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(autouse=True)
def private_state_dir(tmp_path_factory, monkeypatch):
    """Every test keeps client state (seat tokens) in a temporary dir of its own, never in
    the user's ~/.local/state/wildtable: the variable reaches subprocesses the test starts too."""
    path = tmp_path_factory.mktemp("state")
    monkeypatch.setenv("WILDTABLE_STATE_DIR", str(path))      # what headless/seats.py reads
    return path


# the throwaway PostgreSQL of the store and cluster tests (started only by a test that asks)
from pgkit import files_or_store, pg_cluster, pg_dsn, pg_private  # noqa: E402,F401  (fixtures)



# ---------------------------------------------------------------- workers (pytest -n 4)
# The README's test command runs the suite on four workers (pytest-xdist) on CI's two
# cores: most tests wait on sockets, subprocesses and timers far more than they compute (at
# -n 2 a whole run kept the two cores some 40% busy). A test marked ``alone`` measures how
# soon the server answers (the steady player's p99 during an attack, fair order by send
# time, a play racing a timer), so it runs while no test of another worker does, but one
# other ``alone`` test (below, _SLOTS): every other test holds a shared lock on a file for
# its run (set-up and teardown included; a worker keeps it from one such test to its next,
# and lets it go before a worker's last teardown, which is the session's), an ``alone`` test
# an exclusive lock on one of two slots. On the workers the ``alone`` tests come last, so
# they run two at a time at the end instead of each waiting for the tests of the other
# workers to finish; and as pytest-xdist hands the tests out in order, every other test has
# been handed out when the first ``alone`` test starts to wait. A shared lock is granted
# while an exclusive one waits (fcntl's record locks on Linux), so the other workers run
# what they were handed meanwhile (before, a turnstile held them all up behind the waiting
# test: at -n 4 three workers idle while the fourth finished a long test). Without xdist
# (pytest without -n) none of this happens.
import fcntl  # noqa: E402

import attrs  # noqa: E402

from alonekit import ALONE_ENV, must_be_alone  # noqa: E402

_LOCK_DIR = "WILDTABLE_TEST_LOCK_DIR"


# The longest tests first (the order: `pytest -n 4 --durations=0` over the whole suite):
# pytest-xdist (--dist load) hands each worker a run of a quarter of its share of the
# tests in order at the start, then the rest in order to whichever worker runs short, so a
# long test that starts near the end keeps one worker busy while the others have nothing
# left to do. So the longest go first, and are spread over the first runs handed out (the
# i-th longest the i // n-th test of worker i % n's run): all at the head of one worker's
# run, they would keep that worker busy for minutes while the others ran everything else.
LONGEST_FIRST = (
    "tests/sim/test_simulator_seeds.py::test_every_seed_keeps_every_invariant",
    "tests/server/test_updates_leak_no_hidden_card.py::test_engine_streams",
    "tests/web/test_web_games_played_by_dragging.py",
    "tests/sim/test_simulator_seeds.py",
    "tests/sim/test_simulator_planted_bugs.py",
    "tests/server/test_sigkill_loses_no_acknowledged_action.py",
    "tests/web/test_web_turn_based_games_played_to_the_end.py",
    "tests/web/test_web_seated_again_after_a_node_is_killed.py",
    "tests/web/test_web_backs_off_from_a_dead_cluster_node.py",
    "tests/protocol/test_run_wild_playouts.py",
    "tests/web/test_web_two_browsers_and_a_terminal_see_the_same_table.py",
    "tests/server/test_store_restart_durability.py",
    "tests/server/test_table_list_cost.py",
    "tests/protocol/test_codec.py::test_the_one_pass_decoders",
)


def _first(item) -> int:
    """Where ``item`` comes in LONGEST_FIRST (after all of it if nowhere)."""
    for i, prefix in enumerate(LONGEST_FIRST):
        if item.nodeid.startswith(prefix):
            return i
    return len(LONGEST_FIRST)


# The short tests last: pytest-xdist hands the tests out in order, so the last handed out
# set when the workers finish together. In file order the browser tests came last (7 s
# each on average), and the workers ran out of them 38 s apart (a clean-clone run under
# load: 80 worker-seconds idle before the ``alone`` tests could start); the engines' and
# the replay's tests take 0.2 s on average.
SHORT_LAST = ("tests/protocol/", "tests/replay/")


def _last(item) -> bool:
    return item.nodeid.startswith(SHORT_LAST)


def _browser(item) -> bool:
    return item.nodeid.startswith("tests/web/")


def _spread(items: list, workers: int) -> list:
    """``items`` (the longest first, as LONGEST_FIRST has them) dealt over the first runs
    of tests pytest-xdist hands each of ``workers`` (its LoadScheduling: a quarter of each
    worker's share, at least 2, in order): the longest one each in turn, and the browser
    tests, longest first, split between the first two workers' runs. Handed out later,
    the browser tests went in the runs it gives a worker that runs short (up to an eighth
    of what is left): one such run kept a worker busy 33-56 s after the other three had
    run out (a clean-clone run on an idle machine); handed out one at a time instead, four
    Chromiums ran at once, and the browser tests took 380 worker-seconds instead of 220."""
    run = max(len(items) // workers // 4, 2)
    alone = [item for item in items if item.get_closest_marker("alone") is not None]
    longest = [item for item in items if _first(item) < len(LONGEST_FIRST) and not _browser(item)
               and item not in alone]
    browser = sorted((item for item in items if _browser(item) and item not in alone), key=_first)   # stable
    if workers < 2:
        return items
    heads: list[list] = [[] for _ in range(workers)]
    for i, item in enumerate(longest):
        heads[i % workers].append(item)
    heads[0] += browser[0::2]
    heads[1] += browser[1::2]
    if any(len(head) > run for head in heads) or run * workers > len(items):
        return items
    placed = {id(item) for head in heads for item in head}
    others = iter(item for item in items if id(item) not in placed)
    dealt = []
    for head in heads:
        dealt += head + [next(others) for _ in range(run - len(head))]
    return dealt + list(others)


def pytest_collection_modifyitems(config, items):
    """Every test that seats hostilekit's steady player is ``alone`` (tests/alonekit.py: a
    new attack test cannot forget it), and only those (and those marked so): the others of
    its module run beside other tests; on an xdist worker the longest tests go first
    (spread over the workers), the short ones after the rest, and the ``alone`` tests last."""
    for item in items:
        if item.get_closest_marker("alone") is None and must_be_alone(item):
            item.add_marker(pytest.mark.alone)
    if "PYTEST_XDIST_WORKER" in os.environ:
        items.sort(key=lambda item: (item.get_closest_marker("alone") is not None, _first(item), _last(item)))   # stable
        items[:] = _spread(items, int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")))


def _alone(item) -> bool:
    return item is not None and item.get_closest_marker("alone") is not None


# Two ``alone`` tests at once: what they measure is the server's answer beside an attack,
# and their CPU is a third of their wall time (45 tests, 70 s one after another on an idle
# machine, 21 s of CPU: they wait on their attacks' timers); the same bounds hold under two
# busy loops holding both cores (the README's five runs in a row), far more than a second
# attack beside them costs. So the lock is a POSIX record lock over two bytes of the file:
# any other test holds both bytes shared, an ``alone`` test one byte (a slot) exclusive, so
# two ``alone`` tests (one a slot) run beside each other and beside no other test.
_SLOTS = 2


@attrs.define
class _Held:
    """The lock this worker holds: the file's descriptor, and whether it is a slot of the
    ``alone`` tests (exclusive) or the other tests' shared lock."""
    fd: int
    alone: bool


# A shared lock is kept from one test to the next while the next is not ``alone``: let go
# between two tests, a waiting ``alone`` test of another worker took it in that moment, and
# this worker's remaining tests each waited for an ``alone`` test in turn (a clean-clone
# run: gaps of 5-11 s between 0.1 s tests at the end of the short tests, 94 s from the
# first ``alone`` test to the end).
_held: list[_Held] = []


def _let_go() -> None:
    if _held:
        os.close(_held.pop().fd)        # closing the file lets its record locks go


def _take(locks: str, alone: bool) -> _Held:
    """The other tests' shared lock, or a free slot of the ``alone`` tests (waiting for this
    worker's own slot when both are taken). fcntl's record locks are the process's, as the
    worker is one process; a new shared lock is granted while an exclusive one waits."""
    fd = os.open(os.path.join(locks, "machine"), os.O_RDWR | os.O_CREAT, 0o600)
    if not alone:
        fcntl.lockf(fd, fcntl.LOCK_SH, _SLOTS, 0)
        return _Held(fd, False)
    for slot in range(_SLOTS):
        try:
            fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, slot)
            return _Held(fd, True)
        except OSError:
            pass
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
    fcntl.lockf(fd, fcntl.LOCK_EX, 1, int(worker.removeprefix("gw") or 0) % _SLOTS)
    return _Held(fd, True)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item, nextitem):
    exclusive = _alone(item)
    os.environ[ALONE_ENV] = "1" if exclusive else "0"       # what the steady player checks
    locks = os.environ.get(_LOCK_DIR)
    if not locks or "PYTEST_XDIST_WORKER" not in os.environ:
        return (yield)
    if not _held or _held[0].alone or exclusive:
        _let_go()
        _held.append(_take(locks, exclusive))
    try:
        return (yield)
    finally:
        if exclusive or nextitem is None or _alone(nextitem):
            _let_go()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item, nextitem):
    """The worker's last test lets the lock go before its teardown: with no next test, the
    teardown is the session's too (the throwaway PostgreSQL stopped, the worker's Chromium
    closed: 5-11 s each under load), and an ``alone`` test holding the exclusive lock
    through it kept every other worker's ``alone`` tests waiting at the end of the run."""
    if nextitem is None:
        _let_go()
    return (yield)
