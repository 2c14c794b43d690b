"""Log format 3 (docs/LOG-FORMAT.md, 3): the hash records of a game with a compact form
(``packed_state``: Go Fish Wildcard) digest it, not the snapshot; every other game hashes
as in format 2. Old logs still replay with the hashes they were written with (a format 2
log of Go Fish Wildcard, written by the code before format 3: data/), every writer writes
its log's form (selfplay, headless matches, a table's arbiter, one recovered from an older
log too), every checker checks it (replay, the good prefix, the timeline), tampering still
fails, and the compact form covers every field of the state."""

from __future__ import annotations

import random
import zlib
from pathlib import Path

import pytest

from arbiterkit import core_of, links, records
from wildtable.headless.match import play_match
from wildtable.headless.timeline import Timeline
from wildtable.protocol import messages as m
from wildtable.protocol.codec import to_data
from wildtable.protocol.engine import games, hash_form, log_hash, state_hash
from wildtable.protocol.errors import LogError
from wildtable.protocol.games import go_fish_wildcard as gfw
from wildtable.protocol.logfmt import FORMAT_VERSION, FRAME_HEADER, StateHashed, encode_record, iter_frames, read_log
from wildtable.protocol.prefix import replay_prefix
from wildtable.protocol.replay import replay
from wildtable.selfplay import play
from wildtable.server import arbiter_io as io

#: a Go Fish Wildcard log of format 2, written by main 3dced4c's selfplay (3 seats, seed 5,
#: a hash every 8 records): its hashes are of the snapshot
OLD_LOG = (Path(__file__).parent / "data" / "go-fish-wildcard-format-2.wlog").read_bytes()


def _log(p) -> bytes:
    return encode_record(p.header) + b"".join(encode_record(r) for r in p.records)


def _tampered(data: bytes, k: int, edit) -> bytes:
    """``data`` with frame ``k``'s payload edited by ``edit`` and its CRC made right again:
    damage that only replay can find."""
    frames = list(iter_frames(data))
    out = []
    for j, (_, payload) in enumerate(frames):
        if j == k:
            payload = edit(payload)
        out.append(len(payload).to_bytes(4, "little") + zlib.crc32(payload).to_bytes(4, "little") + payload)
    return b"".join(out)


def test_an_old_go_fish_log_replays_with_its_snapshot_hashes():
    contents = read_log(OLD_LOG)
    assert contents.header.format == 2 and FORMAT_VERSION == 3
    result = replay(contents)
    assert result.hashes_checked >= 5 and gfw.outcome(result.state).over
    hashes = [r for r in contents.records if type(r) is StateHashed]
    assert hashes[-1].hash == state_hash(gfw, result.state) != log_hash(gfw, result.state, 3)
    assert replay_prefix(OLD_LOG).damage is None
    assert not any(s.problem for s in Timeline(contents).steps)


def test_a_new_go_fish_log_holds_compact_hashes_every_checker_checks():
    p = play(gfw, 3, {}, seed=5, hash_every=8)
    data = _log(p)
    contents = read_log(data)
    result = replay(contents)
    assert contents.header.format == FORMAT_VERSION == 3 and result.hashes_checked >= 5
    hashes = [r for r in contents.records if type(r) is StateHashed]
    assert hashes[-1].hash == log_hash(gfw, result.state, 3) != state_hash(gfw, result.state)
    assert replay_prefix(data).damage is None
    assert not any(s.problem for s in Timeline(contents).steps)
    # the same records under a format 2 header: the hashes are not of that format's form
    with pytest.raises(LogError) as info:
        replay(read_log(_tampered(data, 0, lambda b: encode_record(contents.header.__class__(
            2, p.header.game, p.header.table, p.header.seats, p.header.settings, p.header.rules))[FRAME_HEADER:])))
    assert info.value.code == "hash_mismatch"


@pytest.mark.parametrize("which", ["old", "new"])
def test_a_tampered_hash_or_action_fails_in_either_format(which):
    data = OLD_LOG if which == "old" else _log(play(gfw, 3, {}, seed=5, hash_every=8))
    contents = read_log(data)
    at = {type(r) for r in contents.records}
    assert StateHashed in at
    k_hash = 1 + next(i for i, r in enumerate(contents.records) if type(r) is StateHashed)
    flipped = _tampered(data, k_hash, lambda b: b[:-1] + bytes((b[-1] ^ 1,)))
    for check in (lambda d: replay(read_log(d)), lambda d: _raise(replay_prefix(d).damage)):
        with pytest.raises(LogError) as info:
            check(flipped)
        assert info.value.code == "hash_mismatch"
    # an ask's target changed to another seat: the state differs from the hash after it
    # (or the ask no longer applies)
    k_ask = 1 + next(i for i, r in enumerate(contents.decoded) if type(r) is dict and r["action"]["kind"] == "ask")
    seats = contents.header.seats
    target = contents.decoded[k_ask - 1]["action"]["target"]
    other = next(t for t in range(seats) if t not in (target, contents.decoded[k_ask - 1]["seat"]))
    changed = _tampered(data, k_ask, lambda b: b.replace(b"target" + bytes((target,)), b"target" + bytes((other,))))
    with pytest.raises(LogError) as info:
        replay(read_log(changed))
    assert info.value.code in ("hash_mismatch", "diverged")


def _raise(e):
    if e is not None:
        raise e


def test_only_a_game_with_a_compact_form_hashes_otherwise_in_format_3():
    for name, g in games().items():
        p = play(g, g.MIN_PLAYERS, {"rounds": 1} if name == "run-wild" else {}, seed=3, hash_every=16)
        result = replay(read_log(_log(p)))
        assert result.hashes_checked >= 1
        want = "packed_state" if name == "go-fish-wildcard" else "snapshot"
        assert hash_form(g, 3) == want and hash_form(g, 2) == hash_form(g, 1) == "snapshot"
        assert (log_hash(g, result.state, 3) == state_hash(g, result.state)) == (want == "snapshot")


def test_the_compact_form_covers_every_field():
    """Each field of a state changed alone (to another value of its kind) changes the compact
    form, as it changes the snapshot."""
    rng = random.Random(4)
    seen: list = []
    play(gfw, 4, {}, rng=rng, on_step=lambda before, after, *_: seen.append(after))
    st = next(s for s in seen if s.sets and len(s.history) > 3 and s.bonus == 0 and s.phase == "play")
    changes = {"n": 5, "dealer": (st.dealer + 1) % 4, "turn_timer": st.turn_timer + 1, "phase": "last_asks",
               "hands": (st.hands[1], st.hands[0]) + st.hands[2:], "pile": st.pile[1:] + st.pile[:1],
               "wild": st.wild ^ 1, "sets": st.sets[:-1], "scores": (st.scores[0] + 1,) + st.scores[1:],
               "turn": (st.turn + 1) % 4, "step": "again", "bonus": 1, "last_order": (1, 2),
               "drawer": 2, "history": st.history[:-1] + (gfw.ASK_ENTRY[0][1][2][0],)}
    assert set(changes) == set(gfw.State._fields)
    base = gfw.packed_state(st)
    for name, value in changes.items():
        changed = st._replace(**{name: value})
        assert gfw.snapshot(changed) != gfw.snapshot(st), name
        assert gfw.packed_state(changed) != base, name
    # a set's seat or its cards, an ask's counts
    s0, c0 = st.sets[0]
    assert gfw.packed_state(st._replace(sets=((s0 + 1, c0),) + st.sets[1:])) != base
    assert gfw.packed_state(st._replace(sets=((s0, c0[::-1]),) + st.sets[1:])) != base
    a = st.history[0]
    assert gfw.packed_state(st._replace(history=(a[:3] + (a[3] + 1, a[4]),) + st.history[1:])) != base


def _closing_hash(**kw) -> tuple:
    """A game of 2 played through a table's core to its end: the state and its closing hash
    record's hash."""
    core = core_of(gfw, 2, **kw)
    a, b = links("a", "b")
    groups = [core.start(100.0), core.receive([io.JoinReq(a, None, "ann"), io.JoinReq(b, None, "bob")], 100.0)]
    for i in range(400):
        if gfw.outcome(core.state).over:
            break
        mover = gfw.to_move(core.state)[0]
        action = gfw.legal_actions(core.state, mover)[0]
        groups.append(core.receive([io.IntentReq((a, b)[mover], m.Intent(i, to_data(action)), 1.7e9 + i, 101.0 + i)],
                                   101.0 + i))
    assert gfw.outcome(core.state).over
    hashed = [r for g in groups for r in records(g) if type(r) is StateHashed]
    return core.state, hashed[-1].hash


def test_a_table_writes_the_hashes_of_its_log_s_format():
    state, new = _closing_hash()
    assert new == log_hash(gfw, state, 3) != state_hash(gfw, state)
    # a table recovered from a format 2 log goes on writing that format's hashes
    state, old = _closing_hash(log_format=2)
    assert old == state_hash(gfw, state)


def test_headless_matches_write_format_3_hashes():
    played = play_match(gfw.NAME, ("easy", "easy"), 1, 2)
    contents = read_log(encode_record(played.header) + b"".join(encode_record(r) for r in played.records))
    result = replay(contents)
    assert contents.header.format == 3 and result.hashes_checked >= 1
    assert contents.records[-1].hash == log_hash(gfw, result.state, 3) != state_hash(gfw, result.state)
