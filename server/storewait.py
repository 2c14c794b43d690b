"""A store away at start is waited out (docs/ARCHITECTURE.md, "Store away at start"): a
node commonly boots before its PostgreSQL (under systemd, say), or is restarted while
the store is out of its reach. Each step of a start that needs the store (its schema,
joining the cluster, taking this node's tables) goes through ``until_the_store_answers``:
an error that waiting may mend (store_pg.waitable: the store unreachable) is said and
the step tried again, as the log writer retries a group; any other (a login refused, a
privilege missing, another node with this node's id) stops the start."""

from __future__ import annotations

import logging
from typing import Awaitable, Callable, TypeVar

import trio

from .sdnotify import notify
from .store_pg import RETRY_FIRST, RETRY_MAX, UNREACHABLE_LOG_EVERY, first_line, redact, waitable

log = logging.getLogger("wildtable.server")

T = TypeVar("T")


async def until_the_store_answers(server, dsn: str, doing: str, step: Callable[[], Awaitable[T]]) -> T:
    """``await step()`` until it returns, ``doing`` saying what it does ("register this
    node"). While it fails with an error waiting may mend, it is tried again after 0.05 s
    doubling to 2 s (store_pg's RETRY_FIRST, RETRY_MAX), on the server's clock (the
    simulator's drives it: server/world.py); the log says so at once and every 10 s
    (UNREACHABLE_LOG_EVERY), and so do systemd's STATUS= and /readyz (not ready while it
    starts anyway). Any other error is raised as it came."""
    delay = RETRY_FIRST
    since = said = None
    while True:
        try:
            result = await step()
        except Exception as e:
            if not waitable(e):
                raise
            now = trio.current_time()
            since = now if since is None else since
            if said is None or now - said >= UNREACHABLE_LOG_EVERY:
                said = now
                waited = f" (for {now - since:.0f} s)" if now > since else ""
                log.warning("waiting for the store to %s (%s)%s: %s; trying again (see that PostgreSQL runs there "
                            "and this node can reach it)", doing, redact(dsn), waited, first_line(e))
                notify(f"STATUS=waiting for the store to {doing}: {first_line(e)}")
            # on /readyz, which strangers may read on the game port: neither the DSN nor the
            # error's text (it names the database's host and port); the log has both
            server.health.waiting_for = f"waiting for the store to {doing}"
            await server.world.clock.sleep(delay)
            delay = min(delay * 2, RETRY_MAX)
            continue
        if since is not None:
            server.health.waiting_for = None
            log.warning("the store answers after %.1f s of waiting: starting", trio.current_time() - since)
            notify("STATUS=starting")
        return result
