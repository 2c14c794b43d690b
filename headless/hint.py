"""The hint command's search, off the event loop: the expert's choice for the player's own
seat (headless/appraise.py decides; this only runs it in a worker thread, with a timeout)."""

from __future__ import annotations

import random

import trio

from . import notices as n
from .appraise import appraise, hint_text
from .commands import Hint

HINT_TIMEOUT = 10.0          # seconds a hint's search may take (it takes tens of ms)


async def hint(what: Hint) -> n.Notice:
    """The expert's choice for this seat now, searched in a worker thread (the search is
    CPU-bound: the connection and the screen go on meanwhile)."""
    with trio.move_on_after(HINT_TIMEOUT):
        advice = await trio.to_thread.run_sync(appraise, what.game, what.view, what.memo, random.Random(),
                                               abandon_on_cancel=True)
        best = advice.best
        return n.Hint(hint_text(what.game, advice), best.action if best is not None else None)
    return n.Hint(f"no hint: the search took over {HINT_TIMEOUT:.0f} s")
