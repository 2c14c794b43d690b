"""SIGTERM and SIGHUP end the full-screen client as Ctrl-C does: the network side is
stopped and Textual restores the terminal (normal screen, mouse tracking off, cursor
shown). Python's default for both is to die at once, leaving the terminal in the
alternate screen with mouse tracking on, so that the shell needed `reset`.

If that graceful way hangs, the process still ends: a SIGHUP usually means the terminal
is gone, and Textual's shutdown once blocked for good writing to it (its writer thread's
queue; seen as a client left running 30 minutes after its tmux was killed). So the signal's
own default comes back at once (a second one ends the process as Python's default would),
and a watchdog raises the signal again GRACE seconds later: the process ends of it, which
a shell reports as 128 + its number, as for the graceful exit."""

from __future__ import annotations

import asyncio
import signal
import threading
from typing import Callable

SIGNALS = tuple(s for s in (getattr(signal, "SIGTERM", None), getattr(signal, "SIGHUP", None)) if s is not None)
STOP_TIMEOUT = 3.0      # seconds for the network side (a private server too) to stop before the exit
GRACE = STOP_TIMEOUT + 2.0      # seconds after the signal before the watchdog ends the process


def quit_on_signals(app, loop: asyncio.AbstractEventLoop) -> Callable[[], None]:
    """From now on SIGTERM and SIGHUP make ``app`` stop its Trio side (``app.stop_trio``)
    and exit with 128 + the signal's number, as a shell reports a process it killed.
    Returns what puts the former handlers back.

    A Python-level handler that wakes the loop with ``call_soon_threadsafe``, not the
    loop's ``add_signal_handler``: that one learns of a signal through the signal wakeup fd,
    which Trio's guest run takes over for itself."""
    def on_signal(sig: int, frame) -> None:
        signal.signal(sig, signal.SIG_DFL)
        watchdog = threading.Timer(GRACE, signal.raise_signal, (sig,))
        watchdog.daemon = True          # a clean exit before it does not wait for it
        watchdog.start()
        loop.call_soon_threadsafe(lambda: loop.create_task(_quit(app, sig)))

    former = {}
    for sig in SIGNALS:
        try:
            former[sig] = signal.signal(sig, on_signal)
        except ValueError:
            pass        # not the main thread (a test's app): the defaults stay

    def restore() -> None:
        for sig, handler in former.items():
            signal.signal(sig, handler if handler is not None else signal.SIG_DFL)
        former.clear()
    return restore


async def _quit(app, sig: int) -> None:
    await app.stop_trio(STOP_TIMEOUT)
    app.exit(return_code=128 + sig)
