"""The table's pure core holds no connection object (issue #23; docs/ARCHITECTURE.md,
"The arbiter: pure core, thin shell"): every value that crosses it (requests, facts,
outputs, moves) is a frozen, slotted attrs value whose fields are ids, numbers, strings,
bytes, links or other such values; and what a game run through the core gives out holds
nothing else (a connection, a socket, a table) however deep one looks."""

from __future__ import annotations

import types
import typing

import attrs
import pytest

from arbiterkit import core_of, links
from wildtable.protocol import messages as m
from wildtable.protocol.codec import to_data
from wildtable.protocol.games import go_fish_wildcard as game
from wildtable.server import arbiter_io as io
from wildtable.server.arbiter_seats import Seat
from wildtable.server.fairorder import Reach

_L = io.new_link()
VALUES = (io.IntentReq(_L, m.Intent(1, {}), 0.0, 0.0), io.JoinReq(_L, None, "ann"), io.RejoinReq(_L, 0, "tok"),
          io.SpectateReq(_L), io.ReplyReq(_L, m.Left("t1")), io.LeaveReq(_L), io.WakeReq(),
          io.SendTo(_L, m.Left("t1")), io.Update(1, (), (), (_L, None), ()), io.PlayersChanged((_L,), (("ann", True),)),
          io.GameOver((_L,)), io.Close(_L, 1000, "bye"), io.Attach(_L, 0), io.Detach(_L),
          _L, io.Whereabouts(), io.Facts(), io.Timing(0.0, 0.0, 0.0), Seat())
ATOMS = (int, float, str, bytes, bool, type(None), io.Link, io.Whereabouts, Reach, m.Intent)
# the only fields typed Any: a wire message (a frozen attrs value of protocol/messages.py)
# and the engine's events and state (plain data); what they hold is checked by the run below
FREE = {(io.ReplyReq, "message"), (io.SendTo, "message"), (io.Update, "events"), (io.Update, "state")}


def _allowed(t) -> bool:
    origin = typing.get_origin(t)
    if origin in (types.UnionType, typing.Union):
        return all(_allowed(a) for a in typing.get_args(t))
    if origin is tuple:
        return all(_allowed(a) for a in typing.get_args(t) if a is not Ellipsis)
    if origin is typing.get_origin(typing.Mapping[int, int]):      # Facts.where: read-only, link -> value
        key, value = typing.get_args(t)
        return key is io.Link and _allowed(value)
    return t in ATOMS


def _frozen(x) -> bool:
    cls = type(x)
    if not (attrs.has(cls) and "__slots__" in cls.__dict__):
        return False
    try:
        setattr(x, attrs.fields(cls)[0].name, None)
    except attrs.exceptions.FrozenInstanceError:
        return True
    return False


@pytest.mark.parametrize("value", VALUES, ids=lambda v: type(v).__name__)
def test_each_value_is_frozen_slotted_and_made_of_values(value):
    cls = type(value)
    assert _frozen(value), f"{cls.__name__} is not a frozen, slotted attrs class"
    attrs.resolve_types(cls, globalns=vars(io) | {"Link": io.Link})
    for f in attrs.fields(cls):
        if (cls, f.name) in FREE:
            continue
        assert _allowed(f.type), f"{cls.__name__}.{f.name}: {f.type} is not a value type"


def _plain(x, path: str) -> None:
    """``x`` is data: builtins, links, frozen attrs values of ours, NamedTuple states."""
    if isinstance(x, (int, float, str, bytes, bool, type(None))):
        return
    if isinstance(x, (tuple, list, frozenset)):
        for i, v in enumerate(x):
            _plain(v, f"{path}[{i}]")
        return
    if isinstance(x, dict):
        for k, v in x.items():
            _plain(k, f"{path} key")
            _plain(v, f"{path}[{k!r}]")
        return
    cls = type(x)
    assert cls.__module__.startswith("wildtable."), f"{path}: a {cls.__module__}.{cls.__name__} in the core's output"
    if attrs.has(cls):
        assert _frozen(x), f"{path}: {cls.__name__} is not frozen"
        for f in attrs.fields(cls):
            _plain(getattr(x, f.name), f"{path}.{f.name}")
    else:
        assert isinstance(x, tuple), f"{path}: a {cls.__name__}, neither a value nor a NamedTuple state"


def test_a_game_through_the_core_gives_out_values_alone():
    core = core_of(game, 2)
    a, b, watcher, thief = links("a", "b", "w", "t")
    groups = [core.start(100.0), core.receive([io.JoinReq(a, None, "ann"), io.JoinReq(b, None, "bob"),
                                               io.SpectateReq(watcher)], 100.0)]
    for i in range(12):
        mover = game.to_move(core.state)[0]
        action = game.legal_actions(core.state, mover)[0]
        groups.append(core.receive([io.IntentReq((a, b)[mover], m.Intent(i, to_data(action)), 1.7e9 + i, 101.0 + i),
                                    io.IntentReq((a, b)[1 - mover], m.Intent(100 + i, to_data(action)), 1.7e9, 101.0 + i)],
                                   101.0 + i))
    groups.append(core.receive([io.RejoinReq(thief, 0, "token0"), io.LeaveReq(watcher)], 120.0))
    outputs = [o for g in groups for o in g.out + g.moves]
    kinds = {type(o) for o in outputs}
    assert {io.SendTo, io.Update, io.PlayersChanged, io.Close, io.Attach, io.Detach} <= kinds
    for n, o in enumerate(outputs):
        _plain(o, f"output {n} ({type(o).__name__})")
    # who is at the table, as the core keeps it: links alone
    assert core.at == {thief: 0, b: 1} and not core.spectators
    assert all(s.link in (None, thief, b) for s in core.seats)
