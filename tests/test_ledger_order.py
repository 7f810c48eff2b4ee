"""`ledger.order.non_decreasing` is the pairwise `le` it replaces, on every kind of list."""

from __future__ import annotations

import math
import random
from itertools import islice
from operator import le
from typing import Any

import pytest

from inspector.ledger.order import non_decreasing

_ITEMS: list[Any] = [0, 1, -1, 2**70, -(2**70), 10**400, 0.5, -0.0, 0.0, 1.0, math.inf, -math.inf, math.nan, True, False]


def _pairwise(xs: Any) -> Any:
    try:
        return all(map(le, xs, islice(xs, 1, None)))
    except Exception as e:  # (the same error, where the pairs meet one)
        return type(e)


def _ours(xs: Any) -> Any:
    try:
        return non_decreasing(xs)
    except Exception as e:
        return type(e)


def test_random_lists_of_numbers_read_as_their_pairs() -> None:
    rng = random.Random(15)
    for _ in range(20_000):
        n = rng.randrange(0, 7)
        xs = [rng.choice(_ITEMS) for _ in range(n)]
        if rng.random() < 0.5:
            xs.sort()  # (in order but for its NaNs, which sort anywhere)
        assert _ours(xs) == _pairwise(xs), xs


@pytest.mark.parametrize(
    "xs",
    [
        [], [1], [math.nan], [1, math.nan], [math.nan, 1], [1, math.nan, 2], [-math.inf, math.inf],
        [-math.inf, math.nan, math.inf], [1.0, 2, 2.0, 3], [None], [None, None], [2, 1, None], [1, 2, None],
        ["a", "b"], ["b", "a"], [10**400, 1.0], [1.0, 10**400], [(1,), (2,)], (1, 2), (2, 1),
    ],
)  # fmt: skip
def test_edge_lists_read_as_their_pairs(xs: Any) -> None:
    assert _ours(xs) == _pairwise(xs)
