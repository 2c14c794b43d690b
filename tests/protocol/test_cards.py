"""protocol/cards.py: ids_of lists exactly the set bits of a mask, in order, at any size
(its byte table covers 256 cards; a bigger mask goes one bit at a time)."""

from hypothesis import given, settings, strategies as st

from wildtable.protocol.cards import ids_of


def bits(mask: int) -> list[int]:
    return [i for i in range(mask.bit_length()) if mask >> i & 1]


@settings(max_examples=400, deadline=None)
@given(st.sets(st.integers(min_value=0, max_value=300)))
def test_ids_of_is_the_set_bits_in_order(ids):
    mask = sum(1 << i for i in ids)
    assert ids_of(mask) == bits(mask) == sorted(ids)


def test_ids_of_at_the_edges_of_its_table():
    assert ids_of(0) == []
    assert ids_of((1 << 256) - 1) == list(range(256))
    assert ids_of(1 << 255 | 1) == [0, 255]
    assert ids_of(1 << 256 | 1 << 7) == [7, 256]
