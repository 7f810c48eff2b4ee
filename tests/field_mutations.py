"""Shared by the head-path equality tests (tests/test_native_heads.py, test_pi_heads.py, test_codex_heads.py):
copies of a JSON object with one field changed."""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any

REMOVE = object()  # in `values`: the field is taken out

# Numbers no double holds, as markers in `values` that `raw_numbers` writes raw into the JSON text:
# msgspec skips them where orjson refuses them (and the whole parse reads them with Python's json).
RAW_NUMBERS = {'"@1e400@"': "1e400", '"@-1e400@"': "-1e400", '"@1e-400@"': "1e-400", '"@digits@"': "9" * 30}
NUMBER_MARKERS = [m.strip('"') for m in RAW_NUMBERS]


def raw_numbers(text: str) -> str:
    """`text` (JSON written from values holding `NUMBER_MARKERS`) with each marker the raw number."""
    for marker, raw in RAW_NUMBERS.items():
        text = text.replace(marker, raw)
    return text


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
