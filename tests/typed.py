"""``typed(v)``: a value with the type of every part in it, for comparing decoders.

1, 1.0 and True are equal in Python, but a shortcut that gave one for another would
change what a game sees; compare ``typed(a) == typed(b)`` to tell them apart."""

from __future__ import annotations

import attrs


def typed(v):
    if attrs.has(type(v)):
        return (type(v), tuple(typed(getattr(v, f.name)) for f in attrs.fields(type(v))))
    if isinstance(v, (list, tuple)):
        return (type(v), tuple(typed(x) for x in v))
    if isinstance(v, dict):
        return (dict, tuple((k, typed(x)) for k, x in v.items()))
    return (type(v), v)
