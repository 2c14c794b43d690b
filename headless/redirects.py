"""What the client does with a cluster's ``redirect`` (docs/PROTOCOL.md, "Clusters"):
a pure decision, the redirect, what is known of the node it names and the time in, one
action out. headless/core.py does what it says.

Why it is more than a hop count: a node sends a table's messages on to its owner while
that owner's heartbeat looks live (up to 3 s after the owner died), and only then waits
for the owner's lease (5 s by default) and takes the table over. A client whose seat was
at a node killed with SIGKILL bounced between the dead owner (refused) and a live node
(redirect) in milliseconds, counted each bounce as a redirect and gave up with
``too_many_redirects`` long before the table moved: its player sat unseated. A redirect
to a node that did not answer is therefore not followed again at once: the client stays
where it is and asks again after a pause, until the node asked serves the table itself.
"""

from __future__ import annotations

from typing import Any

import attrs

from wildtable.protocol import messages as m

MAX_REDIRECTS = 3           # redirects to nodes that answer, in a row, for one message
ASK_AGAIN = (0.5, 1.0, 2.0, 3.0)    # seconds before asking again where we are, growing
FOLLOW_AGAIN_AFTER = 10.0   # a node that did not answer is tried again after this (restarted?)
UNREACHABLE_KEPT = 16       # nodes remembered as not answering (the newest)
PATIENCE = 30.0             # a message the player typed is answered by an error after this;
                            # a seat being taken back is never given up (it waits, and says why)


@attrs.frozen
class Follow:
    """Connect to ``url`` and send the message again there."""
    url: str


@attrs.frozen
class AskAgain:
    """Stay on this node; send the message again here after ``delay`` seconds (``why``
    says so to the player)."""
    delay: float
    why: str


@attrs.frozen
class GiveUp:
    """Stop: ``error`` (made by the client) answers the message."""
    error: m.Error


Action = Follow | AskAgain | GiveUp


@attrs.frozen
class Chase:
    """The redirects of one message, from when it was first sent (``since``) until an
    answer that is not a redirect."""
    since: float
    hops: int = 0           # redirects followed in a row to nodes that answered
    waits: int = 0          # times asked again where we were


def decide(chase: Chase, redirect: m.Redirect, failed_at: float | None, now: float, *,
           patient: bool) -> tuple[Chase, Action]:
    """The next step after ``redirect``. ``failed_at``: when a connection to the node it
    names last failed (None: it answered since, or was never tried); ``patient``: a seat
    (or a spectator's place) being taken back, which is never given up."""
    what = f"table {redirect.table}" if redirect.table else f"the {redirect.ref}"
    delay = ASK_AGAIN[min(chase.waits, len(ASK_AGAIN) - 1)]
    waited = now - chase.since
    if failed_at is not None and now - failed_at < FOLLOW_AGAIN_AFTER:
        if not patient and waited >= PATIENCE:
            return chase, GiveUp(m.Error("node_unreachable", (
                f"the cluster still sends {what} to {redirect.url}, which has not answered for {waited:.0f} s; "
                "try again later (its operator may need to know)"), None, redirect.ref))
        return Chase(chase.since, 0, chase.waits + 1), AskAgain(delay, (
            f"{what} is served by {redirect.url}, which does not answer; the cluster moves it to a node that "
            f"does within seconds (once that node's lease passes): asking again in {delay:g} s"))
    if chase.hops >= MAX_REDIRECTS:
        if not patient:
            return chase, GiveUp(too_many_redirects(redirect))
        return Chase(chase.since, 0, chase.waits + 1), AskAgain(delay, (
            f"the cluster sent {what} on {MAX_REDIRECTS} times (the last: {redirect.url}); it may be moving "
            f"the table: asking again in {delay:g} s"))
    return Chase(chase.since, chase.hops + 1, chase.waits), Follow(redirect.url)


def too_many_redirects(last: m.Redirect) -> m.Error:
    """The error made here for a message the cluster sent on more than MAX_REDIRECTS times."""
    return m.Error("too_many_redirects", f"the server sent {last.ref} on to another node {MAX_REDIRECTS} times "
                   f"(the last: {last.url}); the cluster may be moving the table: try again in a moment",
                   None, last.ref)


def sent_again(msg: Any) -> Any:
    """A message as sent again at the node a redirect named: a create_table says ``here``
    ("create it on this node", docs/PROTOCOL.md, "Clusters")."""
    return attrs.evolve(msg, here=True) if isinstance(msg, m.CreateTable) else msg


class Unreachable:
    """When a connection to each node last failed (``get``: decide's ``failed_at``);
    forgotten once it answers; the newest UNREACHABLE_KEPT kept."""

    def __init__(self) -> None:
        self._at: dict[str, float] = {}

    def tried(self, url: str, answered: bool, now: float) -> None:
        self._at.pop(url, None)
        if not answered:
            self._at[url] = now
            while len(self._at) > UNREACHABLE_KEPT:
                del self._at[next(iter(self._at))]

    def get(self, url: str) -> float | None:
        return self._at.get(url)
