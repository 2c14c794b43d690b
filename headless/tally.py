"""Means with confidence intervals, for the arena's figures (pure arithmetic).

Games are the independent units: a share of all asks (a ratio of sums) gets its interval
from each game's own numbers (the delta method, clustered by game), never as if every
ask were independent of the others in its game. With ``--rotate`` the unit is a deal and
its rotations (their results are not independent: the same cards went round).
"""

from __future__ import annotations

import math
from typing import Sequence

Z95 = 1.959964


def mean_ci(values: Sequence[float], z: float = Z95) -> tuple[float, float]:
    """(mean, half width of the interval at ``z`` standard errors); (nan, nan) if empty."""
    n = len(values)
    if not n:
        return math.nan, math.nan
    mean = sum(values) / n
    if n < 2:
        return mean, math.inf
    var = sum((x - mean) ** 2 for x in values) / (n - 1)
    return mean, z * math.sqrt(var / n)


def ratio_ci(parts: Sequence[float], wholes: Sequence[float], z: float = Z95) -> tuple[float, float]:
    """sum(parts) / sum(wholes) with its half width, each (part, whole) pair one unit."""
    n = len(parts)
    total = sum(wholes)
    if not n or not total:
        return math.nan, math.nan
    r = sum(parts) / total
    if n < 2:
        return r, math.inf
    mean_whole = total / n
    resid = [p - r * w for p, w in zip(parts, wholes)]
    var = sum(e * e for e in resid) / (n * (n - 1)) / (mean_whole ** 2)
    return r, z * math.sqrt(var)


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q`` quantile (0..1) of ``values`` by linear interpolation; nan if empty."""
    xs = sorted(values)
    if not xs:
        return math.nan
    pos = q * (len(xs) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)
