"""Shared by the head-path equality tests (tests/test_native_heads.py, tests/test_pi_heads.py):
copies of a JSON object with one field changed."""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any

REMOVE = object()  # in `values`: the field is taken out


def mutated(obj: dict[str, Any], places: Iterable[tuple[tuple[Any, ...], str]], values: list[Any]) -> list[dict[str, Any]]:
    """For each (path, key) place, a copy of `obj` with the field at path/key set to each value in
    `values`, and one with it removed (where it is there to remove)."""
    out: list[dict[str, Any]] = []
    for path, key in places:
        for value in [*values, REMOVE]:
            o = copy.deepcopy(obj)
            target: Any = o
            for p in path:
                target = target[p]
            if value is REMOVE:
                if key not in target:
                    continue
                del target[key]
            else:
                target[key] = value
            out.append(o)
    return out
