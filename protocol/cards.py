"""Cards as small integers, hands as bit masks: helpers the engines share.

Every physical card of a game has a stable id (docs/DECISIONS.md "All games"); engines keep
a hand as an int with bit ``id`` set, so drawing, playing and counting are integer
operations and a state stays cheap to copy."""


def ids_of(mask: int) -> list[int]:
    """The card ids in a bit mask, ascending."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out

