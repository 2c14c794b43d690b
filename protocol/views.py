"""A connection's view, rebuilt from the patches the server sends (docs/PROTOCOL.md, "update").

An update is either a whole view or a patch against the view of seq ``base``: the view
the same connection received last (in its ``joined``/``spectating`` snapshot or an
update). Patches never span connections, so every client keeps one ``ViewMirror`` per
connection and hands on updates whose ``view`` is whole: what reads them (the reducer,
the bots, the tests) sees the same messages as before patches.
"""

from __future__ import annotations

from typing import Any

from . import messages as m
from .errors import ProtocolError


def patched(view: dict, changed: dict | None, removed, items: dict | None = None) -> dict:
    """A new view: ``view`` with the keys of ``changed`` set, those of ``removed`` gone,
    and each list of ``items`` (``[length, index, item, index, item, ...]``) cut to its
    length with those items set (``view`` itself is left as it was, its lists too: a
    client may keep the view before)."""
    out = {**view, **changed} if changed else dict(view)
    for k in removed:
        out.pop(k, None)
    if items:
        for k, spec in items.items():
            n = spec[0]
            old = out.get(k)
            new = list(old[:n]) if type(old) is list else []
            new += [None] * (n - len(new))
            for j in range(1, len(spec) - 1, 2):
                new[spec[j]] = spec[j + 1]
            out[k] = new
    return out


class ViewMirror:
    """The last view one connection received, and its seq."""

    __slots__ = ("seq", "view")

    def __init__(self) -> None:
        self.seq: int | None = None
        self.view: dict | None = None

    def fill(self, msg: Any) -> Any:
        """``msg``, an update made whole if it was a patch; snapshots and leaving reset the
        base. A patch against a view this connection does not hold is a ProtocolError
        (``patch_base``): the client reconnects and takes its seat back (a resync)."""
        t = type(msg)
        if t is m.Update:
            if msg.view is not None:
                self.seq, self.view = msg.seq, msg.view
                return msg
            if self.view is None or msg.base != self.seq:
                raise ProtocolError("patch_base", f"an update patches the view of seq {msg.base}, but this "
                                    f"connection holds seq {self.seq}: reconnect to resync")
            view = patched(self.view, msg.changed, msg.removed, msg.items)
            self.seq, self.view = msg.seq, view
            return m.Update(msg.seq, msg.events, view)
        if t is m.Joined or t is m.Spectating:
            self.seq, self.view = msg.seq, msg.view
        elif t is m.Left:
            self.seq = self.view = None
        return msg
