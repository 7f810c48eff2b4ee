"""PathPositions: a seq's position on the active path, by bisection on a path in file order and
by a dict on one that is not; both answer as the dict of every position would."""

from __future__ import annotations

import random

import pytest

from inspector.analysis.engine import PathPositions


@pytest.mark.parametrize("shuffle", [False, True])
def test_positions_are_the_dicts(shuffle: bool) -> None:
    rng = random.Random(15)
    path = sorted(rng.sample(range(500), 200))
    if shuffle:
        rng.shuffle(path)
    pos, want = PathPositions(path), {s: i for i, s in enumerate(path)}
    assert (pos._at is None) is not shuffle
    for s in [*range(-2, 505), None, "x", 3.5]:
        assert (s in pos) == (s in want), s
        if s in want:
            assert pos[s] == want[s]
        elif isinstance(s, int):
            with pytest.raises(KeyError):
                pos[s]


def test_an_empty_path_holds_nothing() -> None:
    pos = PathPositions([])
    assert 0 not in pos and None not in pos
    with pytest.raises(KeyError):
        pos[0]
