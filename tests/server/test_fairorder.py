"""Fair order's rule (server/fairorder.py, issue #24) on a fake clock, no sockets: every
bound, for honest clients and for liars. The adversary is a client that holds its pongs
(its ping bound grows as long as it likes), holds its intents, or names what it was
never shown; the rule must give it no more credit than its real distance."""

from __future__ import annotations

import struct

import pytest

from wildtable.server import fairorder as fo
from wildtable.server.fairorder import Limit, Reach, Touched, WriteTimes

CAP = 0.100           # Run Wild's default fair_ms


def race(a_delay: float, a_reach: Reach, b_delay: float, b_reach: Reach, reaction_a: float,
         reaction_b: float, written: float = 10.0) -> str:
    """Who goes first of two players who both saw a state the server wrote at ``written``
    (each one delay later), reacted, and sent (arriving one delay later): 'a' or 'b'."""
    arrive_a = written + 2 * a_delay + reaction_a
    arrive_b = written + 2 * b_delay + reaction_b
    key_a = fo.place(a_reach, CAP, arrive_a, written).key
    key_b = fo.place(b_reach, CAP, arrive_b, written).key
    return "a" if key_a < key_b else "b"


def honest(delay: float) -> Reach:
    """What the server measures of an honest client at one-way ``delay``."""
    return Reach(ping=delay + 0.0002, kernel=delay)


def test_honest_players_at_any_distance_tie_on_equal_reactions():
    # the nearer one no longer wins by its distance: the faster reaction wins
    assert race(0.002, honest(0.002), 0.060, honest(0.060), 0.200, 0.199) == "b"
    assert race(0.002, honest(0.002), 0.060, honest(0.060), 0.199, 0.200) == "a"
    c = fo.credit(honest(0.060), CAP, 10.0 + 0.12 + 0.2, 10.0)
    assert c.value == pytest.approx(0.060) and c.limit is Limit.KERNEL


@pytest.mark.parametrize("pong_hold", [0.2, 1.0], ids=["pongs-200ms", "pongs-1s"])
def test_late_pongs_earn_nothing_the_kernel_bound(pong_hold):
    # a liar at 2 ms holding its pongs: its ping bound is huge, the kernel's is not
    liar = Reach(ping=0.002 + pong_hold / 2, kernel=0.002)
    c = fo.credit(liar, CAP, 10.3, 10.0)
    assert c.value == pytest.approx(0.002) and c.limit is Limit.KERNEL
    # so against an honest player at the same distance the faster reaction wins, not the liar
    assert race(0.002, liar, 0.002, honest(0.002), 0.150, 0.149) == "b"
    # the old rule (the ping bound alone) gave it the cap: it beat a reaction 190 ms faster
    old = Reach(ping=liar.ping, kernel=float("inf"))
    assert race(0.002, old, 0.002, honest(0.002), 0.340, 0.150) == "a"


def test_pongs_never_sent_earn_nothing_more_nor_less_than_the_truth():
    # no ping sample at all: the kernel's bound alone, what an honest client there gets
    liar = Reach(ping=None, kernel=0.002)
    c = fo.credit(liar, CAP, 10.3, 10.0)
    assert c.value == pytest.approx(0.002) and c.limit is Limit.KERNEL
    assert liar.value() == 0.002
    assert race(0.002, liar, 0.002, honest(0.002), 0.150, 0.149) == "b"
    assert race(0.002, liar, 0.002, honest(0.002), 0.149, 0.150) == "a"
    # no kernel measure (a platform without TCP_INFO): no credit, whatever the pongs say
    c = fo.credit(Reach(ping=0.05, kernel=None), CAP, 10.3, 10.0)
    assert c == fo.Credit(0.0, 0.0, Limit.UNMEASURED)
    assert Reach(ping=0.05, kernel=None).value() == 0.0


def test_the_cap_bounds_an_honest_far_player():
    c = fo.credit(honest(0.300), CAP, 11.0, 10.0)
    assert (c.value, c.limit) == (CAP, Limit.CAP)
    assert c.bound == pytest.approx(0.300)
    assert fo.hold([0.300, 0.01], CAP) == pytest.approx(2 * CAP)
    assert fo.hold([0.03, 0.01], CAP) == pytest.approx(0.06)
    assert fo.hold([], CAP) == 0.0


def test_the_causality_bound_holds_a_kernel_liar_to_the_state_it_acted_on():
    # a client that tampers with its kernel too (both measures say 100 ms; it is at 2 ms)
    # still cannot be placed before the server wrote the state its intent needs
    liar = Reach(ping=0.100, kernel=0.100)
    written, arrival = 10.0, 10.0 + 0.004 + 0.030          # it reacted in 30 ms
    c = fo.credit(liar, CAP, arrival, written)
    assert c.limit is Limit.CAUSALITY and c.value == pytest.approx(0.017)
    assert fo.place(liar, CAP, arrival, written).key == pytest.approx(written)
    # an honest far player is not cut by it: its arrival is at least 2 delays after the write
    far = honest(0.060)
    assert fo.credit(far, CAP, written + 0.120 + 0.0, written).value == pytest.approx(0.060)


def test_an_intent_before_the_write_it_needs_gets_no_credit():
    assert fo.credit(honest(0.05), CAP, 10.0, 10.5).value == 0.0
    w = WriteTimes()
    w.wrote(7, 10.5)
    assert w.seen_at(7, 10.0) == 10.0          # named what it had not been shown: seen "at arrival"
    assert fo.credit(honest(0.05), CAP, 10.0, w.seen_at(7, 10.0)).value == 0.0


def test_a_connections_requests_keep_their_order():
    p = fo.place(honest(0.05), CAP, 10.0, None, after=9.95)
    assert p.key == 9.95                      # not before its previous request's 9.95
    assert fo.place(honest(0.05), CAP, 10.0, None, after=9.0).key == pytest.approx(9.9)


def test_write_times_are_bounded_and_give_the_first_write_of_a_seq_at_or_after_k():
    w = WriteTimes()
    assert w.seen_at(3, 100.0) is None        # nothing written yet: unknown
    w.wrote(3, 1.0)                           # a snapshot at seq 3 (joined)
    w.wrote(5, 2.0)
    w.wrote(5, 2.5)                           # written again: the first write counts
    w.wrote(9, 3.0)
    assert w.seen_at(4, 100.0) == 2.0         # seq 4 reached it inside seq 5's update
    assert w.seen_at(5, 100.0) == 2.0
    assert w.seen_at(3, 100.0) == 1.0
    assert w.seen_at(2, 100.0) is None        # older than what is kept: no bound
    assert w.seen_at(None, 100.0) is None
    for seq in range(10, 10 + 5 * fo.WRITES_KEPT):
        w.wrote(seq, float(seq))
    assert len(w._seqs) == fo.WRITES_KEPT
    w.wrote(1, 500.0)                         # another table's seq: the old ones are dropped
    assert w.seen_at(1, 600.0) == 500.0 and len(w._seqs) == 1


def test_touched_derives_k_from_the_events_not_the_client():
    t = Touched()
    t.changed(4, [{"event": "meld_played", "seat": 0, "meld": 2, "kind": "set", "cards": [4, 16, 28, 40], "values": []}])
    t.changed(6, [{"event": "card_taken", "seat": 1, "meld": 2, "card": 40}])
    t.changed(8, [{"event": "card_added", "seat": 1, "meld": 2, "card": 40, "value": None}])
    t.changed(9, [{"event": "card_taken", "seat": 0, "meld": 2, "card": 16}])     # elsewhere in the meld
    assert t.last({"kind": "take", "meld": 2, "card": 40}) == 8      # since card 40 is back
    assert t.last({"kind": "take", "meld": 2, "card": 4}) == 4
    assert t.last({"kind": "add", "meld": 2, "card": 41}) == 4       # the meld, since it was played
    t.changed(10, [{"event": "card_swapped", "seat": 0, "meld": 2, "took": 4, "gave": 64, "value": 5}])
    assert t.last({"kind": "swap", "meld": 2, "take": 64, "give": 3}) == 10
    # what it names that the table does not know, or a map that names nothing: no bound
    assert t.last({"kind": "take", "meld": 99, "card": 40}) is None
    assert t.last({"kind": "draw"}) is None
    assert t.last({"kind": "take", "meld": "2", "card": 40}) is None
    assert t.last(["not", "a", "map"]) is None
    for k in range(fo.NAMES_KEPT + 10):
        t.changed(100 + k, [{"event": "card_added", "meld": 3, "card": k}])
    assert len(t._since) == fo.NAMES_KEPT


def test_kernel_round_trip_from_tcp_info_bytes():
    info = bytearray(232)
    struct.pack_into("=I", info, 68, 2400)       # tcpi_rtt: 2.4 ms smoothed
    struct.pack_into("=I", info, 148, 2000)      # tcpi_min_rtt: 2 ms
    assert fo.half_kernel_rtt(bytes(info)) == pytest.approx(0.001)
    struct.pack_into("=I", info, 148, 0xFFFFFFFF)    # no sample of the minimum yet
    assert fo.half_kernel_rtt(bytes(info)) == pytest.approx(0.0012)
    assert fo.half_kernel_rtt(bytes(info[:104])) == pytest.approx(0.0012)    # an old kernel's struct
    assert fo.half_kernel_rtt(bytes(232)) is None
    assert fo.half_kernel_rtt(b"") is None


def test_reach_is_the_smaller_measured_bound():
    assert Reach(0.05, 0.002).value() == 0.002
    assert Reach(0.001, 0.002).value() == 0.001
    assert Reach().value() == 0.0
    assert Reach(None, 0.003).value() == 0.003
