"""Claude Code's index-first loader (issue 15): a file read from disk keeps an index of each clean
line (its message's role, stop reason, calls and results) and reads the content and unknown fields
again when asked for; what it then gives is what parsing every line whole (`build`) gives."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from inspector.analysis import analyze
from inspector.analysis.export import context_json
from inspector.formats import claude_code, load
from inspector.formats.jsonl import read_lines
from inspector.ledger.model import UNREAD
from tests.test_incremental import corpus, format_of

INDEX_FIELDS = ("seq", "line", "kind", "type", "id", "parent_id", "timestamp", "offset", "length", "role",
                "stop_reason", "source_role", "call_ids", "result_id", "runtime_visible", "never_sent")  # fmt: skip


def transcripts() -> list[str]:
    return [f for f in corpus() if format_of(f) == "claude_code"]


def test_stream_reads_content_on_demand_and_equals_the_whole_parse():
    files = transcripts()
    assert len(files) >= 5
    lazy = messages = 0
    for path in files:
        led = load(path)
        lazy += sum(1 for r in led.records if r.kind == "message" and r._message is None)
        messages += sum(1 for r in led.records if r.kind == "message")
        whole = claude_code.build(read_lines(path)[0], path)
        assert [d.message for d in led.diagnostics] == [d.message for d in whole.diagnostics], path
        assert (led.leaf_seq, led.resolved_path, led.session_id) == (whole.leaf_seq, whole.resolved_path, whole.session_id)
        for r, w in zip(led.records, whole.records, strict=True):
            assert [getattr(r, k) for k in INDEX_FIELDS] == [getattr(w, k) for k in INDEX_FIELDS], (path, r.line)
            assert r.message == w.message, (path, r.line)
            assert r.extra == w.extra, (path, r.line)
            assert r.checkpoint == w.checkpoint, (path, r.line)
    assert lazy > messages // 2  # most messages were not materialized by the load


def _result_lines() -> list[dict[str, Any]]:
    """Tool lines with several results, an empty or missing tool_use_id first, text beside them."""
    base = {"type": "user", "sessionId": "s1", "timestamp": "2026-01-01T00:00:00.000Z"}
    call = {"type": "assistant", "uuid": "a1", "parentUuid": None, "sessionId": "s1", "timestamp": base["timestamp"],
            "message": {"id": "msg1", "role": "assistant", "content": [
                {"type": "tool_use", "id": c, "name": "read", "input": {}} for c in ("t1", "t2", "t3")]}}
    contents = [
        [{"type": "tool_result", "tool_use_id": "t1", "content": "a"}, {"type": "tool_result", "tool_use_id": "t2", "content": "b"}],
        [{"type": "tool_result", "tool_use_id": "", "content": "a"}, {"type": "tool_result", "tool_use_id": "t3", "content": "b"}],
        [{"type": "tool_result", "content": "a"}, {"type": "tool_result", "tool_use_id": "t1", "content": "b"}],
        [{"type": "text", "text": "x"}, {"type": "tool_result", "tool_use_id": "t2", "content": "b"}],
        [{"type": "tool_result", "tool_use_id": "t1", "content": "a"}],
        [{"type": "tool_result", "tool_use_id": 5, "content": "a"}, {"type": "tool_result", "tool_use_id": "t2"}],
    ]
    out: list[dict[str, Any]] = [call]
    for i, c in enumerate(contents):
        out.append({**base, "uuid": f"u{i}", "parentUuid": out[-1]["uuid"], "message": {"role": "user", "content": c}})
    return out


def test_the_results_a_tool_line_answers_are_indexed_as_its_message_gives_them(tmp_path: Path) -> None:
    """`_Source.result_ids` (what the analysis asks instead of reading a tool line's message,
    `RecordSource.result_ids`) is the message's `tool_result_ids()`, line by line, and the next
    request is what reading every message gives."""
    extra = tmp_path / "results.jsonl"
    extra.write_text("".join(json.dumps(o) + "\n" for o in _result_lines()))
    checked = 0
    for path in [*transcripts(), str(extra)]:
        led = load(path)
        indexed = {r.seq: r._source.result_ids(r) for r in led.records if r.role == "tool" and r._source is not None}
        rep = analyze(led)
        for seq, ids in indexed.items():
            m = led.records[seq].message
            if ids is not None:
                assert ids == (m.tool_result_ids() if m is not None else []), (path, seq)
                checked += 1
        whole = claude_code.build(read_lines(path)[0], path)
        assert context_json(rep) == context_json(analyze(whole)), path
    assert checked > 20


def test_uuid_checks_in_one_pass_give_the_record_by_record_pass_and_the_index(tmp_path: Path) -> None:
    """The loader runs `report_duplicate_ids` only when a uuid repeats (its count of uuids beside
    its index), and keeps its uuid index as `Ledger.by_id` only when every record is runtime-visible:
    the duplicates said are the record-by-record pass's, the index is `by_id`'s definition."""
    from inspector.ledger.model import Ledger, report_duplicate_ids

    lines = _result_lines()
    cases = {
        "clean": lines,
        "head repeats": [*lines, {**lines[2], "parentUuid": "u5"}],
        "parsed repeats": [*lines, {**lines[3], "uuid": "a1", "parentUuid": "u5", "unknownField": {"x": 1}}],
        # two objects glued on one line, the first reusing a uuid: both recovered, Claude Code skips them
        "skipped line": [*lines[:3], json.dumps({**lines[2], "uuid": "g1"}).encode() + json.dumps(lines[1]).encode(), *lines[3:]],
    }
    for name, objs in cases.items():
        f = tmp_path / f"{name}.jsonl"
        f.write_bytes(b"".join((o if isinstance(o, bytes) else json.dumps(o).encode()) + b"\n" for o in objs))
        for led in (load(str(f)), claude_code.build(read_lines(str(f))[0], str(f))):
            said = [d.message for d in led.diagnostics if d.problem == "duplicate_id"]
            again = Ledger(path=None, format="claude_code", session_id=None, header=None, records=led.records, diagnostics=[])
            report_duplicate_ids(again, " (references to it resolve to the last line written with it, as in Claude Code)", word="uuid")
            assert said == [d.message for d in again.diagnostics], name
            assert bool(said) == (name != "clean"), name
            assert led.by_id() == {r.id: r.seq for r in led.records if r.id is not None and r.runtime_visible}, name
        if name == "skipped line":
            assert any(not r.runtime_visible for r in led.records)


# One value of every JSON type for a block's text, thinking and content, which the head decoder
# skips unbuilt and `claude_code_heads.blocks_clean` checks by their first byte (issue 15).
_BLOCK_VALUES: list[Any] = [None, True, False, 0, -1.5, "", "x", "null", "[1]", [], [1], ["x"], {}, {"a": 1},
                            [{"type": "text", "text": "t"}], [{"type": 5}], [{"type": "text", "text": 7}], [None]]  # fmt: skip


def _skipped_field_lines() -> list[dict[str, Any]]:
    """An assistant, a user and a bookkeeping line per value of each skipped block field, in a
    chain, each block otherwise clean."""
    base = {"sessionId": "s1", "timestamp": "2026-01-01T00:00:00.000Z"}
    out: list[dict[str, Any]] = []
    blocks = {"text": {"type": "text", "text": "a"}, "thinking": {"type": "thinking", "thinking": "b"},
              "content": {"type": "tool_result", "tool_use_id": "t1", "content": "c"}}  # fmt: skip
    for key, block in blocks.items():
        for i, v in enumerate(_BLOCK_VALUES):
            for t, role in (("assistant", "assistant"), ("user", "user"), ("progress", "user")):
                uid = f"{t}-{key}-{i}"
                msg = {"role": role, "content": [{**block, key: v}]} | ({"id": f"m-{uid}"} if t == "assistant" else {})
                out.append({**base, "type": t, "uuid": uid, "parentUuid": out[-1]["uuid"] if out else None, "message": msg})
    return out


def test_a_block_field_left_unbuilt_by_the_head_is_judged_as_the_whole_parse_judges_it(tmp_path: Path) -> None:
    """A line whose block text, thinking or content has a type `fields.CLAUDE_CODE` does not take
    takes the general path (its diagnostic the whole parse's), the others load from their heads."""
    f = tmp_path / "s.jsonl"
    f.write_text("".join(json.dumps(o) + "\n" for o in _skipped_field_lines()))
    led, whole = load(str(f)), claude_code.build(read_lines(str(f))[0], str(f))
    assert sum(1 for r in led.records if r.kind == "message" and r._message is None) > 20  # most from heads
    assert [(d.line, d.message) for d in led.diagnostics] == [(d.line, d.message) for d in whole.diagnostics]
    assert len(whole.diagnostics) > 10
    for r, w in zip(led.records, whole.records, strict=True):
        assert [getattr(r, k) for k in INDEX_FIELDS] == [getattr(w, k) for k in INDEX_FIELDS], r.line
        assert (r.message, r.extra) == (w.message, w.extra), r.line


def _system_lines() -> list[dict[str, Any]]:
    """System lines of each shape `_record_of` maps (a local command with text content, with
    content of another type, a hook summary, no or a null subtype, an unknown field), replies
    without a message.id whose next lines skip a local command and a hook summary, and a compact
    boundary (general path)."""
    base = {"sessionId": "s1", "timestamp": "2026-01-01T00:00:00.000Z", "isSidechain": False}
    out: list[dict[str, Any]] = []

    def add(o: dict[str, Any]) -> None:
        out.append({**base, "uuid": f"u{len(out)}", "parentUuid": out[-1]["uuid"] if out else None, **o})

    def reply(mid: str | None, parent: str | None = None) -> dict[str, Any]:
        msg = {"role": "assistant", "content": [{"type": "text", "text": "x"}]} | ({"id": mid} if mid else {})
        return {"type": "assistant", "message": msg, "requestId": "req-1"} | ({"parentUuid": parent} if parent else {})

    add({"type": "user", "message": {"role": "user", "content": "hi"}})
    for content in ("<command-name>/mcp</command-name>", None, 5, ["x"], {"a": 1}, ""):
        add({"type": "system", "subtype": "local_command", "content": content, "level": "info", "isMeta": False})
    add({"type": "system", "subtype": "local_command", "level": "info"})  # (no content)
    add({"type": "system", "subtype": "stop_hook_summary", "hookCount": 1, "hookInfos": [{"command": "x"}], "level": "suggestion"})
    add({"type": "system", "content": "no subtype"})
    add({"type": "system", "subtype": None, "other": [1, 2]})
    for between in ({"subtype": "local_command", "content": "/cost"}, {"subtype": "stop_hook_summary"}):
        add(reply(None))
        first = out[-1]["uuid"]
        add({"type": "system", **between})
        add(reply(None, parent=first))  # (chained past the system line onto the reply's first line)
    add({"type": "system", "subtype": "compact_boundary", "content": "Conversation compacted",
         "compactMetadata": {"trigger": "manual", "preTokens": 10}})  # fmt: skip
    add({"type": "user", "message": {"role": "user", "content": "after"}})
    for t in ("progress", "progress", "a-type-of-its-own"):
        add({"type": t, "data": {"n": 1}})
    return out


def test_a_system_line_read_from_its_head_is_the_record_the_whole_parse_makes(tmp_path: Path) -> None:
    """System lines but compact boundaries load from their heads (issue 15: each line parsed whole
    is a transient buffer the allocator could not reuse, ~40 KB of heap a line on a 100 MB
    transcript): the records, their messages and unknown fields, the reply groups and the next
    request are what parsing every line whole gives."""
    f = tmp_path / "s.jsonl"
    f.write_text("".join(json.dumps(o) + "\n" for o in _system_lines()))
    led, whole = load(str(f)), claude_code.build(read_lines(str(f))[0], str(f))
    system = [r for r in led.records if r.type.startswith("system") and r.kind != "checkpoint"]
    assert len(system) == 12 and all(r._extra is UNREAD for r in system)  # all from heads
    assert [r.kind for r in system[:7]] == ["message", "meta", "meta", "meta", "meta", "message", "meta"]
    assert [(d.line, d.message) for d in led.diagnostics] == [(d.line, d.message) for d in whole.diagnostics]
    for r, w in zip(led.records, whole.records, strict=True):
        assert [getattr(r, k) for k in INDEX_FIELDS] == [getattr(w, k) for k in INDEX_FIELDS], r.line
        assert (r.message, r.extra) == (w.message, w.extra), r.line
    src, whole_src = led.records[0]._source, whole.records[0]._source
    assert (src.replies, src.merged) == (whole_src.replies, whole_src.merged)
    assert context_json(analyze(led)) == context_json(analyze(whole))
    a, b, other = led.records[-3:]
    assert a.type is b.type == "progress"  # (one string per known line type: `LineType`)
    assert (other.kind, other.type) == ("unknown", "a-type-of-its-own")  # (another: the general path)
    # A transcript of system lines alone is Claude Code's as the whole parse judges it (`looks_like`).
    f.write_text("".join(json.dumps(o) + "\n" for o in _system_lines() if o["type"] == "system" and "compactMetadata" not in o))
    led, whole = load(str(f), "claude_code"), claude_code.build(read_lines(str(f))[0], str(f))
    assert [d.message for d in led.diagnostics] == [d.message for d in whole.diagnostics]
