"""Readiness is a pure decision (server/health.py ``decide``): the phase speaks first
(starting, draining), then the log writer, the data dir and the store, in that order;
ready only while serving with no problem. /readyz's body is that decision as JSON."""

from __future__ import annotations

import json

from wildtable.server.health import Readiness, decide


def test_the_phase_first_then_each_problem():
    assert decide("serving", "", None, None, None) == Readiness(True, "serving")
    r = decide("starting", "", "disk full", None, None)
    assert not r.ready and r.state == "starting" and "starting" in r.reason
    r = decide("draining", "SIGTERM received", None, None, "store gone")
    assert not r.ready and r.reason.startswith("draining (SIGTERM received)")
    assert decide("serving", "", "disk full", "writer failed", "store gone").reason == "writer failed"
    assert decide("serving", "", "disk full", None, "store gone").reason == "disk full"
    assert decide("serving", "", None, None, "store gone") == Readiness(False, "serving", "store gone")


def test_the_body():
    assert json.loads(Readiness(True, "serving").body()) == {"ready": True, "state": "serving"}
    assert json.loads(Readiness(False, "serving", "disk full").body()) == {
        "ready": False, "state": "serving", "reason": "disk full"}
