"""The generated one-pass decoders share the value they built for equal fields
(protocol/codec.py, ``_fast_decoder``): what they return is what the strict path
(``_decode_fields_checked``) returns for the same map, or None where it refuses; a value
equal as a key but of another type (True for 1, 1.0 for 1) is never answered from the memo."""

from __future__ import annotations

import random

import pytest

from wildtable.protocol import codec
from wildtable.protocol.engine import games
from wildtable.protocol.errors import ProtocolError
from wildtable.selfplay import play


def strict(cls, obj, tag_key):
    try:
        return codec._decode_fields_checked(cls, obj, "$", tag_key)
    except ProtocolError:
        return None


def variants(rng: random.Random, obj: dict) -> list[dict]:
    """``obj`` and maps like it with one field swapped for an equal value of another type."""
    out = [obj]
    for k, v in obj.items():
        if type(v) is int:
            out += [{**obj, k: float(v)}, {**obj, k: v + 1}]
            if v in (0, 1):
                out.append({**obj, k: bool(v)})
        elif type(v) is list and v:
            out += [{**obj, k: [float(v[0])] + v[1:]}, {**obj, k: v[::-1]}]
    return out


@pytest.mark.parametrize("name", sorted(games()))
def test_fast_decoder_is_the_strict_path(name):
    g = games()[name]
    reg = g.ACTIONS
    rng = random.Random(11)
    seen: list = []
    play(g, g.MAX_PLAYERS, {"rounds": 1} if name == "run-wild" else {}, rng=rng,
         on_step=lambda before, after, action, seat, *_: seat is not None and seen.append(action))
    checked = 0
    for action in seen[:400]:
        obj = codec.to_data(action)         # the action's map, its kind included
        tag = obj[reg.tag_key]
        cls = reg.classes[tag]
        fast = reg.fast_decoder(tag)
        if fast is None:
            continue
        # the int form first, so that the memo holds it when its twins come
        for m in variants(rng, obj) * 2:
            got, want = fast(m), strict(cls, m, reg.tag_key)
            assert got == want or (got is None and want is not None), (m, got, want)
            if got is not None:
                assert codec.to_data(got) == codec.to_data(want)
                assert all(type(a) is type(b) for a, b in zip(codec.to_data(got).values(), codec.to_data(want).values()))
            checked += 1
    assert checked > 100
