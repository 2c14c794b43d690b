"""Cards as small integers, hands as bit masks: helpers the engines share.

Every physical card of a game has a stable id (docs/DECISIONS.md "All games"); engines keep
a hand as an int with bit ``id`` set, so drawing, playing and counting are integer
operations and a state stays cheap to copy."""

#: _BYTE_IDS[k][b]: the card ids of byte value ``b`` at byte ``k`` of a mask (ids 8k..8k+7),
#: for masks of up to 256 cards (every bundled deck has at most 108)
_BYTE_IDS = tuple(tuple(tuple(8 * k + i for i in range(8) if b >> i & 1) for b in range(256)) for k in range(32))


def ids_of(mask: int) -> list[int]:
    """The card ids in a bit mask, ascending."""
    if mask >> 256:
        return _ids_by_bit(mask)
    # a byte at a time from a table: 1.7 times the bit loop's speed for a hand of 12 of 108
    # cards, 6 times for a draw pile of 40 of 52 (views and snapshots list both)
    out: list[int] = []
    k = 0
    for b in mask.to_bytes((mask.bit_length() + 7) >> 3, "little"):
        if b:
            out += _BYTE_IDS[k][b]
        k += 1
    return out


def _ids_by_bit(mask: int) -> list[int]:
    """ids_of one bit at a time, for any size of mask."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def int_items(items: object, cap: int, lo: int, hi: int) -> tuple | None:
    """A list of ints as an action's decoder takes it (a msgpack array of at most ``cap``
    ints, each from ``lo`` to ``hi``: protocol/codec.py, a ``tuple[int, ...]`` field), as
    the tuple it decodes to; None for anything else. For the engines' steps from a log's
    maps (``RAW_ADVANCE``, protocol/engine.py), which must take no map the decoder refuses."""
    if type(items) is not list or len(items) > cap:
        return None
    for x in items:
        if type(x) is not int or not lo <= x <= hi:
            return None
    return tuple(items)
