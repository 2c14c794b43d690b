"""Run a command that is SIGKILLed when the process that started it dies, however it dies
(a test run killed with SIGKILL cleans nothing up): the `wildtable serve` subprocesses of
the test kits (adversarial_kit.start_serve) are not left running, orphaned.

    python tests/die_with_parent.py PARENT_PID PROGRAM [ARG...]

It runs at the start of the child: a watchdog is forked off, then PROGRAM is exec'd in
this same process (so its pid, its pipes and the signals a test sends it are the
command's own). The watchdog waits on pidfds of PARENT_PID and of the command: the parent
gone first, it SIGKILLs the command; the command gone first, it exits.

Not prctl(PR_SET_PDEATHSIG): that fires when the parent *thread* ends, and
trio.lowlevel.open_process forks from a worker thread of Trio's thread cache, which ends
after 10 s idle, so the server was killed 10 s after it started. A pidfd is of the whole
process. Where there are no pidfds (Linux before 5.3), the command runs unguarded.
"""

from __future__ import annotations

import os
import select
import signal
import sys


def main(argv: list[str]) -> None:
    parent, command = int(argv[1]), argv[2:]
    try:
        watch_parent = os.pidfd_open(parent)
        watch_me = os.pidfd_open(os.getpid())
    except (AttributeError, OSError):
        watch_parent = None
    if watch_parent is not None:
        if os.getppid() != parent:      # the parent died before its pidfd was opened
            sys.exit(f"{argv[0]}: the process that started this one ({parent}) is gone")
        me = os.getpid()
        if os.fork() == 0:
            watchdog(watch_parent, watch_me, me)
        os.close(watch_parent)
        os.close(watch_me)
    os.execv(command[0], command)


def watchdog(watch_parent: int, watch_me: int, me: int) -> None:
    """(In the forked child.) Hold nothing of the command's: no pipe of its stays open
    here (a reader of its stderr sees its end when it ends); Ctrl-C is for the test.
    A command started as the leader of a process group of its own (``start_new_session``)
    goes with its whole group: nginx's worker processes outlive a killed master."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    keep = sorted({watch_parent, watch_me})
    os.closerange(3, keep[0])
    os.closerange(keep[0] + 1, keep[1])
    os.closerange(keep[1] + 1, os.sysconf("SC_OPEN_MAX"))
    ready, _, _ = select.select([watch_parent, watch_me], [], [])
    if watch_parent in ready and watch_me not in ready:
        try:
            signal.pidfd_send_signal(watch_me, signal.SIGKILL)
        except ProcessLookupError:
            pass
        if os.getpgid(0) == me:
            os.killpg(me, signal.SIGKILL)       # this watchdog too, last
    os._exit(0)


if __name__ == "__main__":
    main(sys.argv)
