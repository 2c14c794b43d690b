"""Which threads a piece of work ran in, as Python and as the OS name them (what
``top -H`` and ``ps -L`` show: /proc/self/task/TID/comm, where there is /proc)."""

from __future__ import annotations

import threading
from pathlib import Path


class ThreadsSeen:
    def __init__(self) -> None:
        self.threads: list[threading.Thread] = []
        self.os_names: set[str] = set()

    def note(self) -> None:
        """The calling thread did a piece of the work."""
        self.threads.append(threading.current_thread())
        comm = Path(f"/proc/self/task/{threading.get_native_id()}/comm")
        if comm.exists():
            self.os_names.add(comm.read_text().strip())

    def one_thread_of_its_own(self, name: str) -> threading.Thread:
        """Every piece ran in one thread, not the main one, called ``name`` in Python and
        by the OS, and ended by now; that thread."""
        (thread,) = set(self.threads)
        assert thread is not threading.main_thread()
        assert thread.name == name
        if Path("/proc/self/task").exists():
            assert self.os_names == {name}
        assert not thread.is_alive()             # ended with the work's run
        return thread
