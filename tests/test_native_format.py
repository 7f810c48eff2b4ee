"""The native ledger format: adapter (inspector.formats.native), JSON Schema, detection, bad input."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from inspector.formats import detect, load, load_bytes, native
from inspector.formats.jsonl import parse_bytes
from inspector.ledger.model import Block, Route, Usage

ROOT = Path(__file__).resolve().parent.parent
SCHEMA_PATH = ROOT / "inspector" / "schemas" / "native-ledger.schema.json"
SAMPLES = sorted((ROOT / "sample_sessions" / "native").glob("*.jsonl"))

HEADER = {
    "type": "ledger",
    "format": "inspector-ledger",
    "version": 1,
    "id": "sess-1",
    "created": "2025-03-01T10:00:00Z",
    "producer": "hand-written test",
    "settings": {"window": 200000, "reserve": 16384, "keep_recent": 20000},
}
RUN = {
    "type": "run",
    "id": "r1",
    "ts": "2025-03-01T10:00:01Z",
    "model": "claude-x",
    "connection": "anthropic-main",
}
USER = {"type": "message", "id": "m1", "ts": 1740823202.5, "role": "user", "content": "fix the bug"}
ASSISTANT = {
    "type": "message",
    "id": "m2",
    "ts": "2025-03-01T10:00:03+00:00",
    "run": "r1",
    "role": "assistant",
    "content": [
        {"type": "thinking", "text": "look at the file"},
        {"type": "text", "text": "Reading it."},
        {"type": "tool_call", "id": "call-1", "name": "read", "args": {"path": "a.py"}},
    ],
    "stop_reason": "tool_use",
    "stop_reason_raw": "tool_calls",
    "usage": {"input": 100, "output": 20, "cache_read": 5, "cache_write": 7},
}
TOOL = {
    "type": "message",
    "id": "m3",
    "ts": "2025-03-01T10:00:04Z",
    "role": "tool",
    "content": [
        {"type": "tool_result", "call_id": "call-1", "is_error": True, "text": "no such file"},
        {"type": "image", "media_type": "image/png"},
    ],
}
FAILED = {
    "type": "message",
    "id": "m4",
    "ts": "2025-03-01T10:00:05Z",
    "run": "r1",
    "role": "assistant",
    "content": [],
    "stop_reason": "error",
    "error": "overloaded",
    "meta": True,
}
CHECKPOINT = {
    "type": "checkpoint",
    "id": "c1",
    "ts": "2025-03-01T10:00:06Z",
    "boundary": "m3",
    "represents": [["m1", "m2"]],
    "retains": ["m3"],
    "retained_tail_shape": "recent_window",
    "summary": "The user asked to fix a bug; a.py does not exist.",
    "tokens_before": 1234,
    "trigger": "auto",
    "details": {
        "failure_reason": "summary_provider",
        "usage": {"input": 900, "output": 80, "cache_read": 0, "cache_write": 0},
        "truncated": False,
        "essential_complete": True,
        "requests": 2,
        "budget_tokens": 4000,
    },
}
GOOD = [HEADER, RUN, USER, ASSISTANT, TOOL, FAILED, CHECKPOINT]


def jsonl(objs: list[Any]) -> bytes:
    return b"".join(json.dumps(o).encode() + b"\n" for o in objs)


def build(data: bytes):
    lines, _, _ = parse_bytes(data, "t.jsonl")
    return native.build(lines, "t.jsonl")


@pytest.fixture(scope="module")
def validator() -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(json.loads(SCHEMA_PATH.read_text()))


def problems(led, code: str) -> list:
    return [d for d in led.diagnostics if d.problem == code]


# ------------------------------------------------------------------------------------- round trip


def test_every_field_lands_in_the_model() -> None:
    led = build(jsonl(GOOD))
    assert led.format == "native"
    assert led.diagnostics == []
    assert led.session_id == "sess-1"
    assert led.version == 1
    assert led.header == HEADER
    assert (led.settings.window, led.settings.reserve, led.settings.keep_recent) == (200000, 16384, 20000)
    assert [r.kind for r in led.records] == [
        "header",
        "run",
        "message",
        "message",
        "message",
        "message",
        "checkpoint",
    ]
    assert [r.seq for r in led.records] == list(range(7))
    assert [r.line for r in led.records] == list(range(1, 8))
    assert led.leaf_seq == 6
    header, run, user, asst, tool, failed, cp = led.records

    assert header.type == "ledger" and header.timestamp == "2025-03-01T10:00:00Z"
    assert run.type == "run" and run.id == "r1" and run.timestamp == "2025-03-01T10:00:01Z"
    assert led.runs["r1"].id == "r1"
    assert led.runs["r1"].route == Route("claude-x", "anthropic-main")
    assert led.runs["r1"].seq == 1

    m = user.message
    assert user.id == "m1" and user.timestamp == 1740823202.5 and user.run_id is None
    assert m.role == "user" and m.source_role == "user" and m.blocks == [Block("text", "fix the bug")]
    assert m.route is None and m.usage is None and m.stop_reason is None and not m.never_sent

    m = asst.message
    assert asst.run_id == "r1"
    assert m.role == "assistant" and m.route == Route("claude-x", "anthropic-main")
    assert m.blocks[0] == Block("thinking", "look at the file")
    assert m.blocks[1] == Block("text", "Reading it.")
    assert m.blocks[2] == Block("tool_call", call_id="call-1", name="read", args={"path": "a.py"})
    assert m.stop_reason == "tool_use" and m.stop_reason_raw == "tool_calls"
    assert m.usage == Usage(100, 20, 5, 7)
    assert m.tool_call_ids() == ["call-1"]

    m = tool.message
    assert m.role == "tool"
    assert m.blocks[0] == Block("tool_result", "no such file", call_id="call-1", is_error=True)
    assert m.blocks[1].type == "image" and m.blocks[1].raw["media_type"] == "image/png"

    m = failed.message
    assert m.stop_reason == "error" and m.stop_reason_raw == "error"
    assert m.error_message == "overloaded" and m.never_sent is True and m.blocks == []

    assert cp.type == "checkpoint" and cp.id == "c1" and cp.message is None
    c = cp.checkpoint
    assert c.summary == CHECKPOINT["summary"]
    assert c.explicit_boundary == "m3"
    assert c.explicit_represents == [("m1", "m2")]
    assert c.explicit_retains == ["m3"]
    assert c.retained_tail_shape == "recent_window"
    assert c.tokens_before == 1234 and c.trigger == "auto"
    assert c.failure_reason == "summary_provider"
    assert c.usage == Usage(900, 80, 0, 0)
    assert c.truncated is False and c.essential_complete is True and c.budget_tokens == 4000
    assert c.details == CHECKPOINT["details"]
    assert c.first_kept_id is None
    assert all(r.extra is None for r in led.records)
    assert led.by_id()["m2"] == 3


def test_null_details_usage_differs_from_absent_usage_in_details() -> None:
    null_usage = {**CHECKPOINT, "id": "c2", "details": {"failure_reason": None, "usage": None}}
    no_usage = {**CHECKPOINT, "id": "c3", "details": {"failure_reason": None}}
    led = build(jsonl([HEADER, USER, null_usage, no_usage]))
    assert led.diagnostics == []
    a, b = led.records[2].checkpoint, led.records[3].checkpoint
    assert a.usage is None and b.usage is None and a.failure_reason is None
    assert "usage" in a.details and a.details["usage"] is None
    assert "usage" not in b.details


def test_boundary_null_and_minimal_checkpoint() -> None:
    cp = {
        "type": "checkpoint",
        "id": "c1",
        "ts": 0,
        "boundary": None,
        "represents": [],
        "retains": [],
        "summary": "",
    }
    led = build(jsonl([HEADER, cp]))
    assert led.diagnostics == []
    c = led.records[1].checkpoint
    assert c.explicit_boundary is None and c.explicit_represents == [] and c.explicit_retains == []
    assert c.details is None and c.usage is None and c.trigger is None and c.retained_tail_shape is None


def test_route_comes_from_a_run_written_after_the_message() -> None:
    led = build(jsonl([HEADER, ASSISTANT, RUN]))
    assert led.records[1].message.route == Route("claude-x", "anthropic-main")
    assert problems(led, "invalid_field") == []


def test_unknown_records_fields_and_blocks_are_kept() -> None:
    odd = {"type": "bookmark", "id": "b1", "label": "here"}
    msg = {
        **USER,
        "x-origin": "cli",
        "content": [{"type": "audio", "seconds": 3}, {"type": "text", "text": "hi", "lang": "en"}],
    }
    cp = {**CHECKPOINT, "note": "manual fix"}
    led = build(jsonl([{**HEADER, "cwd": "/w"}, msg, odd, cp]))
    assert led.diagnostics == []
    header, m, b, c = led.records
    assert header.extra == {"cwd": "/w"}
    assert m.extra == {"x-origin": "cli"}
    assert m.message.blocks[0] == Block("other", raw={"type": "audio", "seconds": 3})
    assert m.message.blocks[1].text == "hi" and m.message.blocks[1].raw["lang"] == "en"
    assert (b.kind, b.type, b.id, b.extra) == ("unknown", "bookmark", "b1", odd)
    assert c.extra == {"note": "manual fix"}


# ------------------------------------------------------------------------------------- schema


def test_schema_file_is_a_valid_draft_2020_12_schema() -> None:
    schema = json.loads(SCHEMA_PATH.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    # The adapter ships it as package data and hands out the same document.
    assert native.load_schema() == schema


def test_schema_accepts_the_hand_written_good_file(validator) -> None:
    for obj in [
        *GOOD,
        {**USER, "content": [{"type": "text", "text": "x"}]},
        {**CHECKPOINT, "boundary": None},
    ]:
        errors = list(validator.iter_errors(obj))
        assert errors == [], (obj, [e.message for e in errors])


def _without(d: dict, key: str) -> dict:
    return {k: v for k, v in d.items() if k != key}


@pytest.mark.parametrize(
    "bad",
    [
        pytest.param({**USER, "role": "robot"}, id="wrong-role"),
        pytest.param({**CHECKPOINT, "details": {"failure_reason": "gave_up"}}, id="unknown-failure-reason"),
        pytest.param(_without(CHECKPOINT, "summary"), id="missing-summary"),
        pytest.param(_without(CHECKPOINT, "boundary"), id="missing-boundary"),
        pytest.param({**CHECKPOINT, "represents": [["m1"]]}, id="represents-not-a-pair"),
        pytest.param({**CHECKPOINT, "trigger": "sometimes"}, id="unknown-trigger"),
        pytest.param({**CHECKPOINT, "retained_tail_shape": "everything"}, id="unknown-tail-shape"),
        pytest.param({**ASSISTANT, "stop_reason": "end_turn"}, id="raw-stop-reason-in-stop_reason"),
        pytest.param({**ASSISTANT, "stopReason": "stop"}, id="camelcase-typo"),
        pytest.param({**ASSISTANT, "usage": {"input": -1, "output": 0}}, id="negative-usage"),
        pytest.param(
            {**USER, "content": [{"type": "tool_call", "name": "x", "args": {}}]}, id="call-without-id"
        ),
        pytest.param({**USER, "ts": "yesterday"}, id="ts-not-iso"),
        pytest.param(_without(USER, "id"), id="missing-id"),
        pytest.param({**HEADER, "format": "pi"}, id="wrong-format"),
        pytest.param({**HEADER, "settings": {"window": "big"}}, id="settings-not-int"),
        pytest.param({"type": "bookmark", "id": "b1"}, id="unknown-record-type"),
    ],
)
def test_schema_rejects_bad_records(validator, bad) -> None:
    assert list(validator.iter_errors(bad)), bad


@pytest.mark.parametrize("path", SAMPLES, ids=[p.name for p in SAMPLES])
def test_every_native_sample_validates_line_by_line(validator, path: Path) -> None:
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines, f"{path.name} is empty"
    for n, text in enumerate(lines, 1):
        if not text.strip():
            continue
        obj = json.loads(text)
        errors = sorted(validator.iter_errors(obj), key=lambda e: list(e.absolute_path))
        assert not errors, f"{path.name} line {n}: " + "; ".join(
            f"{'/'.join(map(str, e.absolute_path)) or '<record>'}: {e.message}" for e in errors
        )
    # And the adapter reads it without complaint.
    led = load(str(path))
    assert led.format == "native"
    assert [d.message for d in led.diagnostics if d.severity == "error"] == []


# ------------------------------------------------------------------------------------- detection


def test_looks_like() -> None:
    assert native.looks_like(HEADER)
    assert native.looks_like(USER) and native.looks_like(RUN) and native.looks_like(CHECKPOINT)
    assert not native.looks_like({"type": "ledger", "format": "other"})
    assert not native.looks_like({"type": "session", "version": 3, "id": "x", "cwd": "/"})
    # a pi message nests its role in `message`
    assert not native.looks_like(
        {"type": "message", "id": "a", "parentId": None, "message": {"role": "user"}}
    )
    assert not native.looks_like(["type", "ledger"])


def test_load_detects_native_by_content(tmp_path: Path) -> None:
    p = tmp_path / "session.log"  # the name says nothing
    p.write_bytes(jsonl(GOOD))
    led = load(str(p))
    assert led.format == "native" and led.session_id == "sess-1" and len(led.records) == 7
    assert led.size == p.stat().st_size and led.sha256


def test_headerless_file_is_still_detected_as_native(tmp_path: Path) -> None:
    data = jsonl([RUN, USER, ASSISTANT])
    lines, _, _ = parse_bytes(data)
    assert detect(lines) == "native"
    p = tmp_path / "x.jsonl"
    p.write_bytes(data)
    assert load(str(p)).format == "native"


# ------------------------------------------------------------------------------------- bad input


def test_malformed_line_in_the_middle_loads_the_rest() -> None:
    data = jsonl([HEADER, USER]) + b'{"type":"message","id":"m9",\n' + jsonl([ASSISTANT, TOOL])
    led = load_bytes(data, "t.jsonl")
    assert [r.id for r in led.records if r.kind == "message"] == ["m1", "m2", "m3"]
    bad = problems(led, "malformed_json")
    assert len(bad) == 1 and bad[0].line == 3 and "line 3" in bad[0].message
    assert led.records[-1].line == 5


def test_glued_and_truncated_lines_are_reported_and_recovered() -> None:
    glued = json.dumps(USER) + json.dumps(ASSISTANT)
    data = jsonl([HEADER]) + glued.encode() + b"\n" + json.dumps(TOOL).encode()[:-5]
    led = build(data)
    g = problems(led, "glued_objects")
    assert len(g) == 1 and g[0].line == 2 and g[0].seqs == [1, 2]
    assert [r.id for r in led.records[1:]] == ["m1", "m2"]
    t = problems(led, "truncated_line")
    assert len(t) == 1 and t[0].line == 3


def test_missing_header_is_an_error_but_the_rest_loads() -> None:
    led = build(jsonl([RUN, USER, ASSISTANT]))
    (d,) = problems(led, "missing_header")
    assert d.severity == "error" and d.line == 1 and "line 1" in d.message
    assert [r.id for r in led.records] == ["r1", "m1", "m2"]
    assert led.header is None and led.session_id is None and led.version is None
    assert led.records[2].message.route == Route("claude-x", "anthropic-main")
    assert led.leaf_seq == 2


def test_header_not_first_is_reported_and_still_used() -> None:
    led = build(jsonl([USER, HEADER]))
    (d,) = problems(led, "missing_header")
    assert "line 2" in d.message
    assert led.session_id == "sess-1" and led.settings.window == 200000


def test_duplicate_ids_name_both_lines() -> None:
    again = {**USER, "content": "second"}
    led = build(jsonl([HEADER, USER, ASSISTANT, again]))
    (d,) = problems(led, "duplicate_id")
    assert d.line == 4 and "line 2" in d.message and "line 4" in d.message
    assert d.seqs == [1, 3]
    assert len([r for r in led.records if r.id == "m1"]) == 2
    assert led.by_id()["m1"] == 3


@pytest.mark.parametrize(
    ("record", "field"),
    [
        ({**USER, "role": "robot"}, "role"),
        ({**CHECKPOINT, "details": {"failure_reason": "gave_up"}}, "details.failure_reason"),
        (_without(CHECKPOINT, "summary"), "summary"),
        ({**CHECKPOINT, "trigger": "sometimes"}, "trigger"),
        ({**CHECKPOINT, "retained_tail_shape": "all"}, "retained_tail_shape"),
        ({**CHECKPOINT, "represents": [["m1"], ["m1", "m2"]]}, "represents[0]"),
        ({**ASSISTANT, "stop_reason": "end_turn"}, "stop_reason"),
        ({**ASSISTANT, "usage": {"input": "many", "output": 1}}, "usage.input"),
        ({**ASSISTANT, "run": "r-nowhere"}, "run"),
        ({**USER, "ts": "yesterday"}, "ts"),
        ({**USER, "content": [{"type": "tool_result", "text": "x"}]}, "content[0].call_id"),
        ({**USER, "content": 42}, "content"),
        (_without(USER, "id"), "id"),
    ],
)
def test_invalid_fields_are_diagnosed_and_the_record_still_loads(record: dict, field: str) -> None:
    led = build(jsonl([HEADER, RUN, record, TOOL]))
    diags = problems(led, "invalid_field")
    assert len(diags) == 1, [d.message for d in led.diagnostics]
    d = diags[0]
    assert d.line == 3 and "line 3" in d.message and repr(field) in d.message
    assert d.seqs == [2]
    assert led.records[2].kind == record["type"] and led.records[3].id == "m3"


def test_invalid_values_are_kept_or_normalized() -> None:
    robot = {**USER, "role": "robot"}
    odd_cp = {**CHECKPOINT, "trigger": "sometimes", "details": {"failure_reason": "gave_up", "usage": None}}
    led = build(jsonl([HEADER, RUN, robot, {**ASSISTANT, "stop_reason": "end_turn"}, odd_cp]))
    m = led.records[2].message
    assert m.role == "user" and m.source_role == "robot" and m.never_sent is True
    a = led.records[3].message
    assert a.stop_reason == "stop" and a.stop_reason_raw == "tool_calls"
    c = led.records[4].checkpoint
    assert c.trigger == "sometimes" and c.failure_reason == "gave_up"


def test_garbage_never_raises() -> None:
    objs: list[Any] = [
        {**HEADER, "version": 7, "settings": {"window": -1}, "id": 3},
        [1, 2],
        {"no": "type"},
        {
            "type": "message",
            "id": ["x"],
            "role": ["user"],
            "content": [None, {"type": ["text"]}, {"type": "image"}],
        },
        {
            "type": "checkpoint",
            "represents": "all",
            "retains": {"a": 1},
            "details": "x",
            "tokens_before": True,
        },
        {"type": "run"},
        {"type": "ledger", "format": "inspector-ledger"},
    ]
    led = build(jsonl(objs))
    codes = {d.problem for d in led.diagnostics}
    assert {"unsupported_version", "not_an_object", "invalid_field", "duplicate_header"} <= codes
    assert led.session_id is None and led.settings.window is None
    assert [r.kind for r in led.records] == ["header", "unknown", "message", "checkpoint", "run", "meta"]


def test_a_large_file_builds_every_record() -> None:
    """50k records, every one built, nothing to report. (How fast: `python -m benchmarks.formats
    --formats native`, never a timed unit test: these machines are noisy.)"""
    objs: list[Any] = [HEADER, RUN]
    for i in range(50_000):
        objs.append({**ASSISTANT, "id": f"a{i}"} if i % 2 else {**USER, "id": f"u{i}"})
    lines, _, _ = parse_bytes(jsonl(objs))
    led = native.build(lines, None)
    assert len(led.records) == 50_002 and led.diagnostics == []
    assert [r.id for r in led.records[2:6]] == ["u0", "a1", "u2", "a3"]
