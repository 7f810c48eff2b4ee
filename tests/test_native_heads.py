"""Native ledgers read index first (issue 15): a message line whose head decodes clean
(`native_heads`) becomes its record from the head, its content read when asked for; every field,
diagnostic and route is what the whole build of the same lines gives."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inspector.formats import load, native
from inspector.formats.jsonl import parse_bytes

SAMPLES = Path(__file__).parent.parent / "sample_sessions" / "native"


def _fields_of(led: object) -> list[tuple[object, ...]]:
    out = []
    for r in led.records:  # type: ignore[attr-defined]
        own = tuple(getattr(r, f) for f in r.__struct_fields__ if f not in ("_source", "_message", "_extra"))
        out.append((*own, r.message, r.extra))
    return out


def _same_as_whole_build(path: Path) -> object:
    led = load(str(path))
    whole = native.build(parse_bytes(path.read_bytes())[0], None)
    assert _fields_of(led) == _fields_of(whole)
    assert [(d.line, d.problem, d.message, d.seqs) for d in led.diagnostics] == [
        (d.line, d.problem, d.message, d.seqs) for d in whole.diagnostics
    ]
    assert (led.header, led.settings, led.runs, led.leaf_seq) == (whole.header, whole.settings, whole.runs, whole.leaf_seq)
    return led


@pytest.mark.parametrize("path", sorted(SAMPLES.glob("*.jsonl")), ids=lambda p: p.name)
def test_a_sample_ledger_read_from_its_heads_is_its_whole_build(path: Path) -> None:
    _same_as_whole_build(path)


def _msg(mid: str, **fields: object) -> dict[str, object]:
    return {"type": "message", "id": mid, "ts": "2026-01-05T09:00:10.043Z", "role": "user", "content": "hi", **fields}


HEADER = {"type": "ledger", "format": "inspector-ledger", "version": 1, "id": "s1", "created": "2026-01-05T09:00:00Z"}
CLEAN = [
    _msg("m1", content=[{"type": "text", "text": "hello ✓"}], extra_field=1),
    _msg(
        "m2",
        role="assistant",
        run="run-1",  # defined after it
        content=[
            {"type": "thinking", "text": "hm"},
            {"type": "tool_call", "id": "c1", "name": "ls", "args": None},
            {"type": "tool_call", "id": "c2", "name": "cat", "args": {"p": 1}},
            {"type": "mystery", "foo": 5},
        ],
        stop_reason="tool_use",
        stop_reason_raw={"any": "thing"},
        usage={"input": 10, "output": 2},
    ),
    _msg("m3", role="tool", content=[{"type": "tool_result", "call_id": "c1", "text": "a", "is_error": True}, {"type": "tool_result", "call_id": "c2", "text": "b"}]),
    _msg("m4", ts=1767603610.5, meta=True, content=[{"type": "image", "media_type": "image/png"}]),
    {"type": "run", "id": "run-1", "ts": "2026-01-05T09:00:07Z", "model": "m", "connection": "c"},
    _msg("m1"),  # a duplicate id
]
DIAGNOSED = [
    _msg(""),
    _msg("d1", ts="yesterday"),
    _msg("d2", role="robot"),
    {"type": "message", "id": "d3", "ts": "2026-01-05T09:00:10Z", "role": "user"},
    _msg("d4", content=[{"type": "tool_call", "id": "c3", "name": "x"}]),
    _msg("d5", content=[{"type": "tool_call", "id": "c4", "name": None, "args": {}}]),
    _msg("d6", content=[{"type": "tool_result", "call_id": "c1", "text": "t", "is_error": None}]),
    _msg("d7", content=[{"type": "text"}]),
    _msg("d8", usage={"input": 1}),
    _msg("d9", usage={"input": 1, "output": -1}),
    _msg("d10", stop_reason="weird"),
    _msg("d11", run=""),
    _msg("d12", run="no-such-run"),
    _msg("d14", content=None),
    _msg("d15", content=["bare"]),
]
# Read whole though nothing is wrong with it: epoch seconds past 64 bits (orjson reads a float).
WHOLE = [_msg("w1", ts=123456789012345678901234567890)]


def _write(tmp_path: Path, objs: list[dict[str, object]]) -> Path:
    f = tmp_path / "ledger.jsonl"
    f.write_text("\n".join(json.dumps(o, ensure_ascii=False) for o in objs) + "\n")
    return f


def test_a_ledger_read_from_its_heads_maps_as_the_whole_build_does(tmp_path: Path) -> None:
    led = _same_as_whole_build(_write(tmp_path, [HEADER, *CLEAN, *DIAGNOSED, *WHOLE]))
    fresh = load(str(tmp_path / "ledger.jsonl"))
    assert [r.seq for r in fresh.records if r.kind == "message" and r._message is None] == [1, 2, 3, 4, 6, 19]  # read from the head
    assert led.records[2].message.route.model_id == "m"  # type: ignore[attr-defined]
    assert led.records[2].call_ids == ("c1", "c2") and led.records[3].result_id == "c1"  # type: ignore[attr-defined]
    assert len({d.line for d in led.diagnostics if d.problem == "invalid_field"}) == len(DIAGNOSED)  # type: ignore[attr-defined]


def test_a_ledger_without_its_header_read_from_its_heads_says_so(tmp_path: Path) -> None:
    led = _same_as_whole_build(_write(tmp_path, [*CLEAN[:2], HEADER]))
    assert "missing_header" in [d.problem for d in led.diagnostics]  # type: ignore[attr-defined]
