"""The text of a session's value however deep it nests (inspector/ledger/jsontext.py): the readers
take 1024 levels, orjson writes 254, Python's json, str and repr reach about 1000 from a shallow
stack. The fallback must give the very text the fast path gives, and leave the process as it was."""

from __future__ import annotations

import json
import shutil
import subprocess
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


# Node reads each JSON text with JSON.parse and writes it back with JSON.stringify (and its
# strings' UTF-16 lengths); Python reads it with json (which, as JSON.parse, keeps a lone
# surrogate's escape) and writes it with `js_stringify`.
_STRINGIFY_JS = """
const texts = JSON.parse(require('fs').readFileSync(0, 'utf8'));
process.stdout.write(JSON.stringify(texts.map((t) => JSON.stringify(JSON.parse(t)))));
"""
_STRINGIFY_CASES = [
    "[1e16, 1e21, 1e-7, 1.0, 1e400, -1e400, 123456789012345678901234, 9007199254740993, 0.1, -0.0, 5e-324, 1e-6, 2.5e-5]",
    '{"b": 1, "10": 2, "2": 3, "a": 4, "01": 5, "4294967295": 6, "4294967294": 7, "-1": 8, "\\u0661": 9}',
    '{"s": "a\\ud800b", "\\udfff": ["\\ud83d\\ude00", "\\ude00\\ud83d", "\\u2028\\u007f\\u0001\\t\\"\\\\/"]}',
    '{"k": "dup", "k": "last", "n": null, "t": true, "f": false, "e": {}, "l": [[], {}]}',
    '"\\u00e9t\\u00e9 \\ud83d\\ude00"',
    "[" * 1000 + "1" + "]" * 1000,
    '{"a":' * 1000 + "1" + "}" * 1000,
]


@pytest.mark.skipif(shutil.which("node") is None, reason="node not installed")
def test_js_stringify_writes_what_javascript_writes() -> None:
    out = subprocess.run(["node", "-e", _STRINGIFY_JS], input=json.dumps(_STRINGIFY_CASES), capture_output=True, text=True, check=True).stdout
    expected = json.loads(out)
    got = [jsontext.js_stringify(_roomy(json.loads, t)) for t in _STRINGIFY_CASES]
    for text, ours, theirs in zip(_STRINGIFY_CASES, got, expected, strict=True):
        assert ours == theirs, text[:80]
