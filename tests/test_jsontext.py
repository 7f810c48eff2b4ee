"""The text of a session's value however deep it nests (inspector/ledger/jsontext.py): the readers
take 1024 levels, orjson writes 254, Python's json, str and repr reach about 1000 from a shallow
stack. The fallback must give the very text the fast path gives, and leave the process as it was."""

from __future__ import annotations

import json
import sys

import orjson
import pytest

from inspector.ledger import jsontext


def _nested(depth: int) -> list[object]:
    v: list[object] = ["x", 1]
    for _ in range(depth - 1):
        v = [v, {"k": None}]
    return v


def _roomy(fn, *args, **kwargs):  # type: ignore[no-untyped-def]
    """`fn` with room to recurse (the expected texts: Python's json of the deepest values)."""
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(limit + 10_000)
    try:
        return fn(*args, **kwargs)
    finally:
        sys.setrecursionlimit(limit)


def _recursing(levels: int, fn, *args):  # type: ignore[no-untyped-def]
    """`fn(*args)` called `levels` frames down (a caller deep in its own stack, as the app's workers are)."""
    return fn(*args) if levels == 0 else _recursing(levels - 1, fn, *args)


@pytest.mark.parametrize("depth", [1, 200, 254, 255, 300, 1000, 1024])
def test_dumps_is_orjsons_text_at_every_depth_a_reader_takes(depth: int) -> None:
    v = _nested(depth)
    want = _roomy(json.dumps, v, separators=(",", ":"), ensure_ascii=False) if depth > 254 else orjson.dumps(v).decode()
    assert jsontext.dumps(v) == want.encode()
    assert jsontext.dumps_text(v) == want
    assert _roomy(lambda: orjson.loads(jsontext.dumps(v)) == v)
    assert jsontext.dumps(v, orjson.OPT_INDENT_2).decode() == (
        orjson.dumps(v, option=orjson.OPT_INDENT_2).decode() if depth <= 254 else _roomy(json.dumps, v, indent=2, ensure_ascii=False)
    )


def test_the_fast_paths_own_text_for_what_is_not_deep() -> None:
    v = {"b": [1, 2.5, None, True, "é\u2028"], "a": {"z": "x"}}
    for opt in (0, orjson.OPT_INDENT_2, orjson.OPT_SORT_KEYS, orjson.OPT_NON_STR_KEYS):
        assert jsontext.dumps(v, opt) == orjson.dumps(v, option=opt)


def test_what_orjson_cannot_write_for_another_reason_is_still_its_error() -> None:
    with pytest.raises(orjson.JSONEncodeError, match="64-bit"):
        jsontext.dumps({"n": 10**30})
    with pytest.raises(TypeError):
        jsontext.dumps({"s": {1, 2}})


def test_str_repr_and_json_from_deep_in_a_stack() -> None:
    v = _nested(1000)
    limit = sys.getrecursionlimit()
    assert _recursing(200, jsontext.py_str, v) == _roomy(str, v)
    assert _recursing(200, jsontext.deep, repr, v).startswith("[[[[")
    assert _recursing(200, jsontext.json_dumps, v) == _roomy(json.dumps, v)
    assert sys.getrecursionlimit() == limit  # (raised for the fallback only, and put back)
    with pytest.raises(RecursionError):
        _recursing(200, str, v)  # (what each call site hit)


def test_deep_runs_a_function_again_only_when_it_ran_out_of_stack() -> None:
    calls: list[int] = []

    def once(x: int) -> int:
        calls.append(x)
        return x + 1

    assert jsontext.deep(once, 1) == 2 and calls == [1]
    with pytest.raises(ValueError):
        jsontext.deep(int, "nope")
