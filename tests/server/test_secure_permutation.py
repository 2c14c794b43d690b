"""The server's shuffles (chance outcomes written to the log) come from
``secure_permutation``: each must be a permutation, and every order equally likely."""

from __future__ import annotations

import collections
import itertools

import pytest

from wildtable.server.table import secure_permutation


@pytest.mark.parametrize("size", [0, 1, 2, 3, 52, 108, 1000])
def test_is_a_permutation(size):
    for _ in range(20):
        assert sorted(secure_permutation(size)) == list(range(size))


def test_every_order_is_about_equally_likely():
    # 4 items: 24 orders, 48,000 shuffles, 2,000 expected each. A chi-square of 23
    # degrees of freedom above 70 has odds of about 1 in a million for a fair shuffle;
    # an off-by-one in Fisher-Yates (j below i rather than up to i) never gives the
    # identity, and a modulo bias of the size of the draws would show far more.
    n = 48_000
    counts = collections.Counter(secure_permutation(4) for _ in range(n))
    assert set(counts) == set(itertools.permutations(range(4)))
    expected = n / 24
    chi2 = sum((c - expected) ** 2 / expected for c in counts.values())
    assert chi2 < 70, chi2


def test_each_card_lands_anywhere():
    # the position of card 0 in a 108-card deck, over 10,800 shuffles: 100 expected at
    # each position, none left empty
    where = collections.Counter(secure_permutation(108).index(0) for _ in range(10_800))
    assert len(where) == 108
    assert max(where.values()) < 200
