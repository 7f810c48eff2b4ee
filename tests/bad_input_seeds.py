"""Small, well-formed sessions of every format, and the mutations the bad-input tests apply to
them (issue 11): every field each adapter reads, with every other JSON type in its place."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from typing import Any

T0 = "2026-01-01T00:00:00Z"

PI: list[dict[str, Any]] = [
    {"type": "session", "version": 3, "id": "s1", "timestamp": T0, "cwd": "/w"},
    {"type": "model_change", "id": "e0", "parentId": None, "timestamp": T0, "provider": "p", "modelId": "m"},
    {"type": "message", "id": "e1", "parentId": "e0", "timestamp": T0,
     "message": {"role": "user", "content": [{"type": "text", "text": "read a.py"}], "timestamp": 1}},
    {"type": "message", "id": "e2", "parentId": "e1", "timestamp": T0,
     "message": {"role": "assistant", "content": [
         {"type": "thinking", "thinking": "hmm", "thinkingSignature": "sig"},
         {"type": "text", "text": "reading"},
         {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "a.py"}}],
         "api": "x", "provider": "p", "model": "m", "stopReason": "toolUse", "errorMessage": "e",
         "usage": {"input": 10, "output": 5, "cacheRead": 1, "cacheWrite": 1}, "timestamp": 2}},
    {"type": "message", "id": "e3", "parentId": "e2", "timestamp": T0,
     "message": {"role": "toolResult", "toolCallId": "c1", "toolName": "read",
                 "content": [{"type": "text", "text": "print(1)"}, {"type": "image", "mimeType": "image/png"}],
                 "isError": False, "timestamp": 3}},
    {"type": "compaction", "id": "e4", "parentId": "e3", "timestamp": T0, "summary": "## Goal\nread a.py",
     "firstKeptEntryId": "e3", "tokensBefore": 100, "fromHook": False,
     "details": {"trigger": "auto", "usage": {"input": 3, "output": 2}, "truncated": False}},
    {"type": "message", "id": "e5", "parentId": "e4", "timestamp": T0,
     "message": {"role": "bashExecution", "command": "ls", "output": "a.py", "exitCode": 0, "timestamp": 4}},
    {"type": "custom_message", "id": "e6", "parentId": "e5", "timestamp": T0, "customType": "x", "content": "note"},
    {"type": "branch_summary", "id": "e7", "parentId": "e6", "timestamp": T0, "summary": "branch", "fromId": "e1"},
    {"type": "message", "id": "e8", "parentId": "e7", "timestamp": T0,
     "message": {"role": "user", "content": "and b.py", "timestamp": 5}},
]

NATIVE: list[dict[str, Any]] = [
    {"type": "ledger", "format": "inspector-ledger", "version": 1, "id": "n1", "created": T0, "settings": {"keep_recent": 200}},
    {"type": "run", "id": "r1", "ts": T0, "model": "m", "connection": "c"},
    {"type": "message", "id": "m1", "ts": T0, "role": "user", "content": [{"type": "text", "text": "read a.py"}]},
    {"type": "message", "id": "m2", "ts": T0, "run": "r1", "role": "assistant", "content": [
        {"type": "text", "text": "reading"}, {"type": "tool_call", "id": "c1", "name": "read", "args": {"path": "a.py"}}],
     "stop_reason": "tool_use", "usage": {"input": 10, "output": 5, "cache_read": 0, "cache_write": 0}},
    {"type": "message", "id": "m3", "ts": T0, "role": "tool", "content": [{"type": "tool_result", "call_id": "c1", "text": "print(1)"}]},
    {"type": "checkpoint", "id": "k1", "ts": T0, "boundary": "m2", "represents": [["m1", "m2"]], "retains": ["m3"],
     "summary": "read a.py", "trigger": "auto", "tokens_before": 100},
    {"type": "message", "id": "m4", "ts": T0, "role": "user", "content": "and b.py"},
]

CLAUDE_CODE: list[dict[str, Any]] = [
    {"type": "user", "uuid": "u1", "parentUuid": None, "sessionId": "s1", "timestamp": T0, "isSidechain": False,
     "message": {"role": "user", "content": "read a.py"}},
    {"type": "assistant", "uuid": "u2", "parentUuid": "u1", "sessionId": "s1", "timestamp": T0, "requestId": "q1",
     "message": {"id": "msg1", "role": "assistant", "model": "claude-x", "stop_reason": "tool_use",
                 "content": [{"type": "thinking", "thinking": "hmm"}, {"type": "text", "text": "reading"},
                             {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file": "a.py"}}],
                 "usage": {"input_tokens": 10, "output_tokens": 5, "cache_read_input_tokens": 1, "cache_creation_input_tokens": 1}}},
    {"type": "user", "uuid": "u3", "parentUuid": "u2", "sessionId": "s1", "timestamp": T0,
     "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "is_error": False,
                                                "content": [{"type": "text", "text": "print(1)"}]}]},
     "toolUseResult": {"agentId": "a1"}},
    {"type": "system", "subtype": "compact_boundary", "uuid": "u4", "parentUuid": None, "logicalParentUuid": "u3",
     "sessionId": "s1", "timestamp": T0,
     "compactMetadata": {"trigger": "auto", "preTokens": 100, "preservedSegment": {"headUuid": "u3", "tailUuid": "u3"}}},
    {"type": "user", "uuid": "u5", "parentUuid": "u4", "sessionId": "s1", "timestamp": T0, "isCompactSummary": True,
     "message": {"role": "user", "content": "Summary: read a.py"}},
    {"type": "user", "uuid": "u6", "parentUuid": "u5", "sessionId": "s1", "timestamp": T0,
     "message": {"role": "user", "content": [{"type": "text", "text": "and b.py"}]}},
    {"type": "summary", "leafUuid": "u6", "summary": "x"},
]

CODEX: list[dict[str, Any]] = [
    {"timestamp": T0, "type": "session_meta", "payload": {"id": "s1", "timestamp": T0, "cwd": "/w", "originator": "codex_cli_rs",
                                                          "cli_version": "0.169.0", "model_provider": "openai",
                                                          "base_instructions": {"text": "BASE"}}},
    {"timestamp": T0, "type": "turn_context", "payload": {"model": "gpt-x"}},
    {"timestamp": T0, "type": "response_item", "payload": {"type": "message", "role": "user", "id": "i1",
                                                           "content": [{"type": "input_text", "text": "read a.py"}]}},
    {"timestamp": T0, "type": "response_item", "payload": {"type": "reasoning", "summary": [{"type": "summary_text", "text": "hmm"}]}},
    {"timestamp": T0, "type": "response_item", "payload": {"type": "function_call", "name": "exec", "arguments": "{\"cmd\":\"ls\"}", "call_id": "c1"}},
    {"timestamp": T0, "type": "response_item", "payload": {"type": "function_call_output", "call_id": "c1", "output": [{"type": "input_text", "text": "ok"}]}},
    {"timestamp": T0, "type": "event_msg", "payload": {"type": "token_count", "info": {
        "last_token_usage": {"input_tokens": 10, "cached_input_tokens": 1, "output_tokens": 5}, "model_context_window": 1000}}},
    {"timestamp": T0, "type": "response_item", "payload": {"type": "message", "role": "assistant",
                                                           "content": [{"type": "output_text", "text": "done"}]}},
    {"timestamp": T0, "type": "compacted", "payload": {"message": "summary of it", "replacement_history": [
        {"type": "message", "role": "user", "id": "i1", "content": [{"type": "input_text", "text": "read a.py"}]},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "summary of it"}]}]}},
    {"timestamp": T0, "type": "event_msg", "payload": {"type": "thread_rolled_back", "num_turns": 1}},
    {"timestamp": T0, "type": "response_item", "payload": {"type": "message", "role": "user",
                                                           "content": [{"type": "input_text", "text": "and b.py"}]}},
]


def _event(i: int, author: str, parts: list[dict[str, Any]], **kw: Any) -> dict[str, Any]:
    e: dict[str, Any] = {"id": f"ev{i}", "invocation_id": "inv1", "author": author, "timestamp": 1000.0 + i,
                         "content": {"role": "user" if author == "user" else "model", "parts": parts},
                         "actions": {"state_delta": {}}}
    e.update(kw)
    return e


ADK: dict[str, Any] = {
    "app_name": "app", "user_id": "u", "id": "s1", "last_update_time": 1010.0, "state": {},
    "events": [
        _event(1, "user", [{"text": "read a.py"}]),
        _event(2, "agent", [{"text": "hmm", "thought": True}, {"function_call": {"id": "f1", "name": "read", "args": {"p": "a"}}}],
               usage_metadata={"prompt_token_count": 10, "candidates_token_count": 5, "cached_content_token_count": 1}),
        _event(3, "agent", [{"function_response": {"id": "f1", "name": "read", "response": {"result": "print(1)"}}}]),
        _event(4, "agent", [{"text": "done"}], finish_reason="STOP"),
        {"id": "ev5", "invocation_id": "inv2", "author": "user", "timestamp": 1005.0,
         "actions": {"compaction": {"start_timestamp": 1001.0, "end_timestamp": 1003.0,
                                    "compacted_content": {"role": "model", "parts": [{"text": "summary"}]}},
                     "transfer_to_agent": "agent"}},
        _event(6, "user", [{"text": "and b.py"}]),
    ],
}

SEEDS: dict[str, Any] = {"pi": PI, "native": NATIVE, "claude_code": CLAUDE_CODE, "codex": CODEX, "adk": ADK}

# Every JSON type, the wrong one in a field's place (a huge int overflows 64 bits).
JSON_VALUES: dict[str, Any] = {
    "null": None,
    "bool": True,
    "int": 7,
    "float": 2.5,
    "huge_int": 10**30,
    "string": "x",
    "list": ["x", 1],
    "object": {"x": 1},
}


def _kind(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, int):
        return "int"
    return {float: "float", str: "string", list: "list", dict: "object"}[type(v)]


def field_paths(v: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every key and list index under `v`, depth first (the value itself excluded)."""
    if isinstance(v, dict):
        for k, x in v.items():
            yield (*path, k)
            yield from field_paths(x, (*path, k))
    elif isinstance(v, list):
        for i, x in enumerate(v):
            yield (*path, i)
            yield from field_paths(x, (*path, i))


def _get(v: Any, path: tuple[Any, ...]) -> Any:
    for k in path:
        v = v[k]
    return v


def substituted(seed: Any, path: tuple[Any, ...], value: Any) -> Any:
    out = copy.deepcopy(seed)
    _get(out, path[:-1])[path[-1]] = copy.deepcopy(value)
    return out


def type_cases(fmt: str) -> Iterator[tuple[str, Any]]:
    """(label, mutated session) for every field of the seed and every JSON type it does not hold."""
    seed = SEEDS[fmt]
    roots = [("events", i) for i in range(len(seed["events"]))] if fmt == "adk" else [(i,) for i in range(len(seed))]
    for root in roots:
        for sub in field_paths(_get(seed, root)):
            path = (*root, *sub)
            have = _kind(_get(seed, path))
            for kind, value in JSON_VALUES.items():
                if kind != have:
                    yield f"{'.'.join(map(str, path))}={kind}", substituted(seed, path, value)


def encode(fmt: str, session: Any) -> bytes:
    if fmt == "adk":
        return json.dumps(session).encode()
    return b"".join(json.dumps(o).encode() + b"\n" for o in session)


def exercise(led: Any) -> None:
    """Everything a command or the app does with a loaded session, in-process: analyze (and its
    JSON), the next request counted, every record's first line and text, plan for each strategy,
    simulate under the recorded and the pi policy, the exported reports. Raises only on a bug."""

    from inspector.analysis import analyze
    from inspector.analysis import simulate as sim
    from inspector.analysis.export import analyze_json, context_json
    from inspector.cli.output import json_bytes
    from inspector.compaction.plan import STRATEGIES, PlanError, plan

    for r in led.records:
        m = r.message
        if m is not None:
            m.first_line()
            m.text()
        r.raw()
        _ = r.extra
    report = analyze(led)
    report.ensure_tokens()
    json_bytes(analyze_json(report))  # (as the CLI writes them: a lone surrogate escaped)
    json_bytes(context_json(report))
    for s in STRATEGIES:
        try:
            p = plan(report, s)
        except PlanError:
            continue
        assert p is not None
    sess = sim.prepare(led)
    policy, _ = sim.recorded_policy(led, sess)
    for pol in (policy, sim.PiPolicy(2000, 200, 300)):
        if pol is not None:
            res = sim.simulate(led, pol, session=sess)
            json_bytes(sim.simulation_json(res) if hasattr(sim, "simulation_json") else None)
    from inspector.analysis.report_export import html_report, markdown_report

    for render in (markdown_report, html_report):  # (the report reads every message, as the app's detail does)
        render(report, "inspector test", redact=False)
