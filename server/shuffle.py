"""The permutations a table's chance records hold: uniform, from the operating system's
secure source (docs/ARCHITECTURE.md, "Chance is an action")."""

from __future__ import annotations

import os


def secure_permutation(size: int) -> tuple[int, ...]:
    """A uniformly random permutation from the operating system's secure source.

    Fisher-Yates over 32-bit draws taken from one ``os.urandom`` read (SystemRandom's
    shuffle makes a syscall per card, 1.5% of the flat-out profile). Each choice among
    ``n`` is a draw below the largest multiple of ``n`` under 2**32, modulo ``n``: draws
    above it are thrown away, so every choice is exactly uniform."""
    p = list(range(size))
    draws = _draws(size)
    for i in range(size - 1, 0, -1):
        n = i + 1
        limit = _SPAN - _SPAN % n
        v = next(draws)
        while v >= limit:
            v = next(draws)
        j = v % n
        p[i], p[j] = p[j], p[i]
    return tuple(p)


_SPAN = 1 << 32


def _draws(size: int):
    """Uniform 32-bit draws from the OS's secure source, read in blocks."""
    while True:
        yield from memoryview(os.urandom(4 * size + 64)).cast("I")
