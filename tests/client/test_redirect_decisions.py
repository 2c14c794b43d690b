"""headless/redirects.py: what a client does with a cluster's redirect, as a pure decision
(the redirect, when its node last failed to answer, and the time in; an action out).
The story it must tell: a node killed with SIGKILL still looks live to the others for a
few seconds, so they send its players back to it; the players wait where they are and
ask again, and a seat being taken back is never given up (docs/PROTOCOL.md, "Clusters")."""

from __future__ import annotations

from wildtable.headless.redirects import (ASK_AGAIN, FOLLOW_AGAIN_AFTER, MAX_REDIRECTS, PATIENCE, UNREACHABLE_KEPT,
                                        AskAgain, Chase, Follow, GiveUp, Unreachable, decide)
from wildtable.protocol import messages as m

DEAD = "ws://127.0.0.1:4001"
REJOIN = m.Redirect(DEAD, "rejoin", "t1", "table t1 is served by another node")
JOIN = m.Redirect(DEAD, "join", "t1", "table t1 is served by another node")


def three_hops(redirect: m.Redirect, patient: bool) -> Chase:
    """Three redirects to a node that answers, each followed."""
    chase = Chase(0.0)
    for hop in range(MAX_REDIRECTS):
        chase, action = decide(chase, redirect, None, 0.1 * hop, patient=patient)
        assert action == Follow(DEAD)
    return chase


def test_a_redirect_to_a_node_that_answers_is_followed_three_times_in_a_row():
    chase, action = decide(three_hops(JOIN, False), JOIN, None, 1.0, patient=False)
    assert isinstance(action, GiveUp) and action.error.code == "too_many_redirects", action
    assert action.error.ref == "join"


def test_a_seat_being_taken_back_never_gives_up_on_a_redirect_loop_it_waits_and_asks_again():
    chase, action = decide(three_hops(REJOIN, True), REJOIN, None, 1.0, patient=True)
    assert isinstance(action, AskAgain) and action.delay == ASK_AGAIN[0], action
    assert "asking again in 0.5 s" in action.why and DEAD in action.why
    # and then it follows again, three hops more
    chase, action = decide(chase, REJOIN, None, 2.0, patient=True)
    assert action == Follow(DEAD)


def test_a_node_that_did_not_answer_is_not_gone_to_again_the_client_asks_again_where_it_is():
    """The SIGKILL story: the node asked still thinks the dead owner live. Each redirect
    to it is answered by a wait here, longer each time up to 3 s, never a give-up."""
    chase, now, failed = Chase(0.0), 0.0, 0.0
    delays = []
    for _ in range(12):
        now += 0.01
        chase, action = decide(chase, REJOIN, failed, now, patient=True)
        assert isinstance(action, AskAgain), action
        assert f"table t1 is served by {DEAD}, which does not answer" in action.why
        delays.append(action.delay)
        now += action.delay
        failed = now - 0.01 if now - failed >= FOLLOW_AGAIN_AFTER else failed
    assert delays[:4] == list(ASK_AGAIN) and set(delays[4:]) == {ASK_AGAIN[-1]}


def test_a_node_that_did_not_answer_long_ago_is_tried_again():
    """It may have restarted at the same address: follow once more."""
    chase, action = decide(Chase(0.0), REJOIN, 1.0, 1.0 + FOLLOW_AGAIN_AFTER, patient=True)
    assert action == Follow(DEAD)
    chase, action = decide(Chase(0.0), REJOIN, 1.0, 1.0 + FOLLOW_AGAIN_AFTER - 0.1, patient=True)
    assert isinstance(action, AskAgain)


def test_waits_do_not_count_as_hops():
    """A wait between redirects starts the hop count again: waiting for a dead node and
    then meeting a short handover chain is no loop."""
    chase, _ = decide(Chase(0.0), JOIN, None, 0.0, patient=False)
    chase, _ = decide(chase, JOIN, None, 0.1, patient=False)
    chase, action = decide(chase, JOIN, 0.1, 0.2, patient=False)
    assert isinstance(action, AskAgain)
    for i in range(MAX_REDIRECTS):
        chase, action = decide(chase, JOIN, None, 1.0 + i, patient=False)
        assert action == Follow(DEAD)


def test_a_typed_message_is_answered_by_an_error_once_its_patience_is_spent():
    chase, action = decide(Chase(0.0), JOIN, PATIENCE - 2, PATIENCE - 1, patient=False)
    assert isinstance(action, AskAgain)
    chase, action = decide(chase, JOIN, PATIENCE - 0.5, PATIENCE, patient=False)
    assert isinstance(action, GiveUp) and action.error.code == "node_unreachable", action
    assert DEAD in action.error.message and "try again later" in action.error.message
    # a seat being taken back: still waiting, however long
    _, action = decide(Chase(0.0), REJOIN, 10 * PATIENCE, 10 * PATIENCE + 1, patient=True)
    assert isinstance(action, AskAgain)


def test_nodes_that_failed_are_remembered_until_they_answer_and_bounded():
    book = Unreachable()
    book.tried(DEAD, False, 1.0)
    assert book.get(DEAD) == 1.0
    book.tried(DEAD, True, 2.0)
    assert book.get(DEAD) is None
    for i in range(UNREACHABLE_KEPT + 5):
        book.tried(f"ws://h:{1000 + i}", False, float(i))
    assert book.get("ws://h:1000") is None and book.get(f"ws://h:{1000 + UNREACHABLE_KEPT + 4}") is not None
    assert sum(book.get(f"ws://h:{1000 + i}") is not None for i in range(UNREACHABLE_KEPT + 5)) == UNREACHABLE_KEPT
