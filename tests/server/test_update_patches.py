"""Updates are patches against what each connection received last (issue #25;
docs/PROTOCOL.md, "update"): a client that applies them (protocol/views.py) holds exactly
the view the engine gives its seat after every update, in every game, for seats that stay,
a seat whose connection drops and comes back, and spectators (one from the start, one who
comes later); and a client of the protocol before patches is refused."""

from __future__ import annotations

import random

import msgpack
import pytest
import trio
from wsproto.events import BytesMessage, CloseConnection

from wildtable.selfplay import play
from wildtable.protocol import messages as m
from wildtable.protocol.engine import games
from wildtable.protocol.errors import ProtocolError
from wildtable.server.delivery import FULL_EVERY, UpdateFrames
from wildtable.protocol.views import ViewMirror

from rawclient import RawClient
from serverkit import running_server

GAMES = ["run-wild", "go-wild", "go-fish-wildcard", "wild-shots"]


def same(a, b) -> bool:
    """Equal values of equal types all the way down (msgpack tells 1 from True)."""
    if type(a) is not type(b):
        return False
    if type(a) is dict:
        return a.keys() == b.keys() and all(same(v, b[k]) for k, v in a.items())
    if type(a) in (list, tuple):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b


def _steps(game, seats: int, seed: int) -> list:
    """The states and events of seeded games played one after another (past a few whole
    views at the default FULL_EVERY)."""
    out: list = []
    rng = random.Random(seed)
    while len(out) < 3 * FULL_EVERY:
        play(game, seats, {}, rng=rng,
             on_step=lambda before, after, action, seat, req, events: out.append((after, tuple(events))))
    return out


class Conn:
    """A connection as the test sees it: its mirror, its seat (None: a spectator)."""

    def __init__(self, seat):
        self.seat = seat
        self.views = ViewMirror()
        self.whole = self.patches = 0


@pytest.mark.parametrize("name", GAMES)
@pytest.mark.parametrize("seed", [1, 2])
def test_a_mirror_built_from_patches_is_the_whole_view_after_every_update(name, seed):
    game = games()[name]
    seats = min(4, game.MAX_PLAYERS)
    steps = _steps(game, seats, seed)
    assert len(steps) > FULL_EVERY, len(steps)
    frames = UpdateFrames(game)
    conns: list[Conn | None] = [Conn(i) for i in range(seats)]
    specs = [Conn(None)]
    gone_from, back_at = len(steps) // 4, len(steps) // 4 + 5     # seat 1's connection drops, a new one rejoins
    late = len(steps) // 3                                          # a spectator comes then
    for seq, (state, events) in enumerate(steps, 1):
        if seq == gone_from:
            conns[1] = None
        if seq == back_at or seq == late:
            new = Conn(1 if seq == back_at else None)
            (specs.append if new.seat is None else lambda c: conns.__setitem__(1, c))(new)
            before = steps[seq - 2][0]              # the snapshot: the view of the seq before
            snap = (m.Joined("t", name, 1, "tok", seq - 1, game.view(before, 1)) if new.seat is not None
                    else m.Spectating("t", name, seq - 1, game.view(before, None)))
            new.views.fill(m.decode(m.encode(snap)))
        out = frames.frames(seq, events, state, conns, specs)
        assert [c for c, _ in out] == [c for c in conns if c is not None] + specs
        for c, data in out:
            msg = m.decode(data)
            assert type(msg) is m.Update and msg.seq == seq and list(msg.events) == list(events)
            if msg.view is None:
                assert c.whole or c.patches, "a newcomer's first update is a whole view"
                c.patches += 1
            else:
                c.whole += 1
            got = c.views.fill(msg)
            want = game.view(state, c.seat)
            assert same(got.view, want), (seq, c.seat, got.view, want)
            assert c.views.view is got.view and c.views.seq == seq
        # what patches rely on: a view's public and private keys are apart
        assert not game.public_view(state).keys() & game.private_view(state, 0).keys()
    # a whole view on the first update, every FULL_EVERY and to each newcomer; else patches
    wholes = 1 + len(steps) // FULL_EVERY
    assert all(c.whole == wholes for c in conns if c is not None and c.seat != 1)
    assert conns[1] is not None and conns[1].whole >= 1 and conns[1].patches > 0
    assert all(c.patches > 0 for c in specs) and specs[0].whole == wholes
    assert frames.patches > 10 * frames.fulls, (frames.patches, frames.fulls)


# patch bytes / whole-view bytes per seat at 4 seats, at most: Run Wild (bench/load.py's
# game) 0.23, Go Wild! 0.49 (small views; its events, sent either way, are an eighth of
# them), Go Fish Wildcard 0.26, Wild Shots 0.28 (bench/README.md, "Updates are patches")
AT_MOST = {"run-wild": 0.3, "go-wild": 0.55, "go-fish-wildcard": 0.35, "wild-shots": 0.35}


class Keys:
    """A game whose views gain and lose keys and whose lists grow and shrink (no bundled
    game's does much of either): states are ints."""
    @staticmethod
    def public_view(s: int) -> dict:
        return {"n": s, **({"odd": True} if s % 2 else {}), "list": [s // 7, *range(s % 5)],
                "flag": s % 3 == 0, "num": 1 if s % 4 else True}

    @staticmethod
    def private_view(s: int, seat) -> dict:
        return {"seat": seat, **({"mine": [s]} if seat is not None and s % 3 == seat % 3 else {})}

    @staticmethod
    def view(s: int, seat) -> dict:
        return {**Keys.public_view(s), **Keys.private_view(s, seat)}


class WholeOnly:
    """A game with ``view`` alone (no public and private parts)."""
    view = staticmethod(Keys.view)


@pytest.mark.parametrize("game", [Keys, WholeOnly])
def test_keys_that_come_and_go_and_lists_that_grow_and_shrink(game):
    frames = UpdateFrames(game)     # type: ignore[arg-type]
    conns = [Conn(0), Conn(1)]
    specs = [Conn(None)]
    for seq in range(1, 3 * FULL_EVERY):
        for c, data in frames.frames(seq, ({"event": "tick"},), seq, conns, specs):
            got = c.views.fill(m.decode(data))
            assert same(got.view, game.view(seq, c.seat)), (seq, c.seat, got.view)
    assert frames.patches > 10 * frames.fulls


@pytest.mark.parametrize("name", GAMES)
def test_patches_at_four_seats_cost_a_fraction_of_whole_views(name):
    game = games()[name]
    steps = _steps(game, 4, 3)
    frames = UpdateFrames(game)
    conns = [object() for _ in range(4)]
    patched = whole = 0
    for seq, (state, events) in enumerate(steps, 1):
        patched += sum(len(d) for _, d in frames.frames(seq, events, state, conns, ()))
        whole += sum(len(m.encode(m.Update(seq, events, game.view(state, i)))) for i in range(4))
    assert patched < AT_MOST[name] * whole, (name, patched, whole)


def test_a_patch_of_a_view_not_held_is_refused():
    mirror = ViewMirror()
    mirror.fill(m.Update(5, (), {"a": 1, "b": 2}))
    assert mirror.fill(m.Update(6, (), None, 5, {"a": 3}, ("b",))).view == {"a": 3}
    with pytest.raises(ProtocolError) as e:
        mirror.fill(m.Update(8, (), None, 7, {"a": 4}))
    assert e.value.code == "patch_base", e.value
    assert mirror.seq == 6 and mirror.view == {"a": 3}          # kept as it was


async def test_a_client_of_the_protocol_before_patches_is_refused(tmp_path):
    assert m.PROTOCOL_VERSION == 2
    with trio.fail_after(20):
        async with running_server(tmp_path / "data") as (server, url):
            raw = await RawClient.open(int(url.rsplit(":", 1)[1]))
            try:
                frame = msgpack.packb({"type": "hello", "version": 1, "name": "ann"}, use_bin_type=True)
                await raw.stream.send_all(raw.ws.send(BytesMessage(frame)))
                error = m.decode(await raw.event())
                close = await raw.event()
                await raw.stream.send_all(raw.ws.send(close.response()))
            finally:
                await raw.stream.aclose()
    assert isinstance(error, m.Error) and error.code == "version_mismatch", error
    assert "version 2" in error.message and "version 1" in error.message and "upgrade the client" in error.message
    assert isinstance(close, CloseConnection) and close.code == 1008
