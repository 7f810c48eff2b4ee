"""Half-open integer intervals [lo, hi) over positions on the active path.

A checkpoint's sets are ranges of the path, and a long session has many checkpoints: storing them
as intervals keeps the analysis linear in the session's length instead of length x checkpoints.
"""

from __future__ import annotations

from bisect import bisect_right

Interval = tuple[int, int]


def merge(ivs: list[Interval]) -> list[Interval]:
    out: list[Interval] = []
    for lo, hi in sorted(ivs):
        if hi <= lo:
            continue
        if out and lo <= out[-1][1]:
            if hi > out[-1][1]:
                out[-1] = (out[-1][0], hi)
        else:
            out.append((lo, hi))
    return out


def contains(ivs: list[Interval], x: int) -> bool:
    """Is x inside one of the merged, sorted intervals?"""
    i = bisect_right(ivs, (x, float("inf"))) - 1
    return i >= 0 and ivs[i][0] <= x < ivs[i][1]


def subtract(base: Interval, ivs: list[Interval]) -> list[Interval]:
    """The parts of `base` not covered by the merged intervals `ivs`."""
    lo, hi = base
    out: list[Interval] = []
    cur = lo
    for a, b in ivs:
        if b <= cur:
            continue
        if a >= hi:
            break
        if a > cur:
            out.append((cur, min(a, hi)))
        cur = max(cur, b)
        if cur >= hi:
            break
    if cur < hi:
        out.append((cur, hi))
    return out


def clip(ivs: list[Interval], lo: int, hi: int) -> list[Interval]:
    return [(max(a, lo), min(b, hi)) for a, b in ivs if min(b, hi) > max(a, lo)]


def length(ivs: list[Interval]) -> int:
    return sum(b - a for a, b in ivs)
