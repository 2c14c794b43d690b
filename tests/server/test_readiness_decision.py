"""Readiness is a pure decision (server/health.py ``decide``): the phase speaks first
(starting, draining), then the log writer, the data dir and the store, in that order;
ready only while serving with no problem. /readyz's body is that decision as JSON."""

from __future__ import annotations

import json

from wildtable.server.health import Phase, Readiness, decide


def test_the_phase_first_then_each_problem():
    assert decide(Phase.SERVING, "", None, None, None) == Readiness(True, Phase.SERVING)
    r = decide(Phase.STARTING, "", "disk full", None, None)
    assert not r.ready and r.state is Phase.STARTING and "starting" in r.reason
    r = decide(Phase.DRAINING, "SIGTERM received", None, None, "store gone")
    assert not r.ready and r.reason.startswith("draining (SIGTERM received)")
    assert decide(Phase.SERVING, "", "disk full", "writer failed", "store gone").reason == "writer failed"
    assert decide(Phase.SERVING, "", "disk full", None, "store gone").reason == "disk full"
    assert decide(Phase.SERVING, "", None, None, "store gone") == Readiness(False, Phase.SERVING, "store gone")


def test_the_body():
    assert json.loads(Readiness(True, Phase.SERVING).body()) == {"ready": True, "state": "serving"}
    assert json.loads(Readiness(False, Phase.SERVING, "disk full").body()) == {
        "ready": False, "state": "serving", "reason": "disk full"}
