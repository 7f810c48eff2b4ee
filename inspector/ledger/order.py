"""Whether a list of numbers is in order, found in C at a third of the cost of comparing each pair."""

from __future__ import annotations

from itertools import islice
from operator import le
from typing import Any


def non_decreasing(xs: list[Any]) -> bool:
    """`all(map(le, xs, islice(xs, 1, None)))`: no item less than the one before it. Where the items
    are numbers, none NaN, by one sort, which finds a list in order one run (a comparison an item,
    in C, specialized to the items' type: `le` called on each pair costs three times as much); else
    by the pairs. (A list the sort reorders holds a pair out of order, or a NaN, which no pair
    with it is `le`; one it leaves as it is, in order but for a NaN, which its sum finds.)"""
    if type(xs) is list:
        try:
            if xs != sorted(xs):
                return False
            total = sum(xs)
        except (TypeError, OverflowError):
            pass
        else:
            if total == total:
                return True
    return all(map(le, xs, islice(xs, 1, None)))
