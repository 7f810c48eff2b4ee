"""Codex rollout JSONL (issue 6, part 2): real files load with the counts their SOURCES.md states,
and the next request we predict is the one the real Codex CLI sent.

`../shared/peers/codex/corpus/<name>.requests.jsonl` holds every Responses API request the real
Codex 0.169.0 made while writing `<name>.jsonl` (per input item: type, role, text head and length,
call id). For each one, `inspector context --json --at LINE`, LINE being the last line written
before its reply, must list the same items in the same order; and every item a compaction
dropped without the summarizer having read it must show as a `hole`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from inspector.analysis import analyze
from inspector.analysis.engine import Report
from inspector.cli.main import main
from inspector.formats import detect, load, load_bytes, registry
from inspector.formats.jsonl import parse_bytes
from tests.conftest import SHARED, app_reaches, need_shared

REAL = SHARED / "real_sessions" / "codex"
PEERS = SHARED / "peers" / "codex" / "corpus"
LOCALPUSH_COMPACT = REAL / "localpush__rollout-2026-02-23T12-54-34-019c8a59-e9dd-71f0-9ae3-4079fe9726a9.jsonl"
LOCALPUSH_DANGLING = REAL / "localpush__rollout-2026-02-23T12-47-42-019c8a53-a0dd-7130-bcd7-95445d84846a.jsonl"
SMALL = REAL / "agent-sessions__codex_small.jsonl"


def _need(path: Path) -> None:
    need_shared(path)


def _types(report: Report) -> dict[str, int]:
    out: dict[str, int] = {}
    for r in report.ledger.records:
        out[r.type] = out.get(r.type, 0) + 1
    return out


# ---------------------------------------------------------------------------------------- real files


def test_localpush_compacted_session_counts_and_server_side_compaction() -> None:
    _need(LOCALPUSH_COMPACT)
    led = load(str(LOCALPUSH_COMPACT))
    assert led.format == "codex" and not led.diagnostics
    report = analyze(led)
    t = _types(report)
    assert len(led.records) == 2722
    assert t["session_meta"] == 1 and t["turn_context"] == 286 and t["compacted"] == 1
    assert sum(n for k, n in t.items() if k.startswith("response_item:")) == 1302
    assert (t["response_item:message"], t["response_item:function_call"], t["response_item:function_call_output"]) == (346, 316, 316)
    assert (t["response_item:reasoning"], t["response_item:custom_tool_call"], t["response_item:custom_tool_call_output"]) == (219, 49, 49)
    assert t["response_item:web_search_call"] == 7
    assert sum(n for k, n in t.items() if k.startswith("event_msg:")) == 1132
    assert t["event_msg:token_count"] == 573 and t["event_msg:context_compacted"] == 1
    assert (t["event_msg:agent_message"], t["event_msg:agent_reasoning"], t["event_msg:user_message"]) == (255, 199, 38)
    assert (t["event_msg:task_started"], t["event_msg:task_complete"]) == (33, 33)
    # Every response item is a message; the event copies (agent_message, user_message) are not.
    assert sum(1 for r in led.records if r.kind == "message") == 1302
    # All 365 tool calls have their output: nothing unanswered, nothing orphaned.
    assert not [f for f in report.findings if f.code in ("unanswered_tool_call", "orphan_tool_result")]

    # Server-side compaction on line 1788: empty message, 40 replacement items, the encrypted item
    # stands for the summary. Nothing it removed is a hole. Of its 21 user + 15 assistant + 3
    # developer messages, all but one developer message (new content) repeat earlier records:
    # retained (four user messages with their image re-encoded by the server too).
    (v,) = report.checkpoints
    assert v.record.line == 1788
    repl = v.checkpoint.replacement or []
    assert len(repl) == 40
    assert [h.kind for h in repl].count("summary") == 1 and repl[-1].kind == "summary"
    assert v.checkpoint.summary.startswith("[REDACTED_ENCRYPTED_CONTENT len=13412")
    kept = [h.seq for h in repl if h.seq is not None]
    roles = [led.records[s].message.source_role for s in kept]  # type: ignore[union-attr]
    assert (roles.count("user"), roles.count("assistant"), roles.count("developer")) == (21, 15, 2)
    assert [(h.role, h.kind) for h in repl if h.seq is None] == [("system", "message"), ("user", "summary")]
    counts = report.coverage_counts()
    assert counts["hole"] == 0 and counts["retained"] == 38
    assert counts["summarized"] == len(v.removes) > 800
    # The next request: base instructions, then the 40 replacement items in order, then what followed.
    ctx = report.context
    assert ctx[0].role == "system" and ctx[0].seq is None
    assert [it.seq for it in ctx[1:41]] == [v.seq if h.kind == "summary" else h.seq for h in repl]
    assert ctx[40].kind == "summary" and ctx[34].text.startswith("[REDACTED_TEXT len=5841")
    assert all(it.seq is not None and it.seq > v.seq for it in ctx[41:] if not it.synthetic)
    # Usage: the last request before the compaction carried 209,950 input tokens of 258,400.
    assert led.settings.window == 258_400
    assert v.checkpoint.tokens_before == 209_950


def test_localpush_dangling_call_gets_codex_synthetic_output() -> None:
    _need(LOCALPUSH_DANGLING)
    report = analyze(load(str(LOCALPUSH_DANGLING)))
    t = _types(report)
    assert len(report.ledger.records) == 837
    assert (t["session_meta"], t["turn_context"]) == (1, 83)
    assert (t["response_item:function_call"], t["response_item:function_call_output"]) == (134, 133)
    assert (t["response_item:message"], t["response_item:reasoning"]) == (80, 78)
    assert (t["response_item:custom_tool_call"], t["response_item:custom_tool_call_output"]) == (10, 10)
    assert (t["event_msg:token_count"], t["event_msg:agent_reasoning"], t["event_msg:agent_message"]) == (166, 71, 52)
    assert (t["event_msg:task_started"], t["event_msg:user_message"], t["event_msg:task_complete"]) == (7, 7, 5)
    assert not report.checkpoints and report.coverage_counts()["hole"] == 0
    (f,) = [f for f in report.findings if f.code == "unanswered_tool_call"]
    assert f.severity == "warning" and report.ledger.records[f.records[0]].line == 826
    assert "call_BpTazJ89W9PntRqGPwDNfwEY" in f.message and '"aborted"' in f.message
    i = next(i for i, it in enumerate(report.context) if it.seq == f.records[0])
    after = report.context[i + 1]
    assert after.synthetic and after.text == "aborted" and after.tool_result_id == "call_BpTazJ89W9PntRqGPwDNfwEY"


def test_schema_coverage_fixture_unknown_types_kept_and_lines_codex_skips_named() -> None:
    _need(SMALL)
    led = load(str(SMALL))
    report = analyze(led)
    t = _types(report)
    assert len(led.records) == 118
    # Its six later session_meta lines (sub-agents' and other sessions') are each said for what they
    # are; six lines stitched from other versions (or trimmed to "[trimmed for fixture]") hold what
    # Codex 0.169 cannot read into its types, and Codex skips them (as the type probe shows it does).
    skipped = {
        6: "its payload's content[1]'s image_url is null, not a string",
        11: "its payload's output is an object, not a list",
        23: "its payload's content[1]'s image_url is null, not a string",
        26: "its replacement history's item 0's content[1]'s image_url is null, not a string",
        69: "its replacement history's item 1's phase is '[trimmed for fixture]', not one of Codex's phases",
        114: "its payload's arguments is null, not a string",
    }
    # And its first session_meta's history mode is "default", which Codex 0.169 refuses outright
    # ("invalid session metadata history_mode: unknown variant `default`", as the real binary says).
    assert [(d.line, d.problem, d.severity) for d in led.diagnostics] == [
        *sorted([(n, "repeated_session_meta", "info") for n in (29, 36, 37, 42, 94, 96)] + [(n, "skipped_by_runtime", "warning") for n in skipped]),
        (1, "resume_refused", "error"),
    ]
    assert led.diagnostics[-1].message == (
        "line 1: Codex refuses to resume this rollout (its session_meta's history_mode is 'default', not legacy or paginated):"
        " it stops with an error and sends nothing"
    )
    for d in led.diagnostics:
        if d.problem == "skipped_by_runtime":
            assert d.message == f"line {d.line}: Codex skips this line ({skipped[d.line]}): kept here, never sent"
    assert (t["turn_context"], t["session_meta"], t["compacted"], t["world_state"]) == (9, 7, 6, 5)
    assert t["inter_agent_communication_metadata"] == 1 and t["event_msg:context_compacted"] == 1
    # Line 81's replacement history: 26 user messages, 24 ghost snapshots (kept by Codex, never
    # sent) and the encrypted summary.
    (v81,) = [v for v in report.checkpoints if v.record.line == 81]
    assert [h.kind for h in v81.checkpoint.replacement or []] == ["message"] * 26 + ["summary"]
    # Never fatal, always shown: every line is a record, whatever its type; a skipped line too.
    assert sum(1 for r in led.records if r.kind == "header") == 1
    assert {(r.line, r.type) for r in led.records if r.kind == "unknown" and r.line in skipped} == {
        (6, "response_item:message"), (11, "response_item:function_call_output"), (23, "response_item:message"),
        (26, "compacted"), (69, "compacted"), (114, "response_item:function_call"),
    }
    assert {r.type for r in led.records if r.kind == "unknown" and r.line not in skipped} <= {"inter_agent_communication_metadata"}
    # The two skipped compactions are no checkpoints: four are left.
    assert [v.record.line for v in report.checkpoints] == [47, 81, 89, 111]
    # The fixture trimmed every encrypted summary to the same text: a checkpoint whose summary
    # repeats the previous one byte for byte represents only what that one did, so what it
    # removed since is a hole.
    holes = [f for f in report.findings if f.code == "hole"]
    assert [f.data["checkpoint"] for f in holes] == [2, 4]  # type: ignore[index]
    for f in holes:
        v = report.checkpoints[f.data["checkpoint"] - 1]  # type: ignore[index]
        assert v.carried_forward and v.checkpoint.summary == "[trimmed for fixture]"
    # Ghost snapshots are kept in the history but never sent.
    assert not any("ghost" in (it.text or "") for it in report.context)


# ---------------------------------------------------------------------------------------- peers


def _peer_cases() -> list[Path]:
    return sorted(p for p in PEERS.glob("*.requests.jsonl")) if PEERS.exists() else []


def _reply_line(rollout: list[dict[str, Any]], reply: dict[str, Any], after: int) -> int:
    """1-based line of the first item of a request's reply in the rollout (after `after`)."""
    for i, o in enumerate(rollout[after:], start=after):
        p = o.get("payload") or {}
        if o.get("type") != "response_item":
            continue
        if reply["type"] == "function_call" and p.get("type") == "function_call" and p.get("call_id") == reply["call_id"]:
            return i + 1
        if reply["type"] == "message" and p.get("type") == "message" and p.get("role") == "assistant":
            text = " ".join(c.get("text", "") for c in p.get("content") or [])
            if text.startswith(reply["text_head"]):
                return i + 1
    raise AssertionError(f"reply {reply} is not in the rollout after line {after}")


def _text(report: Report, seq: int | None, text: str) -> str:
    if seq is None:
        return text
    m = report.ledger.records[seq].message
    if m is None:  # a summary item points at its checkpoint
        return text
    return " ".join(b.text for b in m.blocks if b.type in ("text", "tool_result"))


# The corpus replaced the scratch directory's path (13 characters longer) with this one, in the
# rollout's full texts but in the requests' digests after cutting their 100-character heads.
_PSEUDONYM = "/home/user/codex-peer/"


def _ours(session: Path, line: int, capsys: pytest.CaptureFixture[str]) -> list[dict[str, Any]]:
    """Our next request at LINE, from the CLI's JSON, with each item's full text from the core."""
    assert main(["context", str(session), "--json", "--at", str(line)]) == 0
    items = json.loads(capsys.readouterr().out)["messages"]
    report = analyze(load(str(session), upto_line=line))
    assert len(items) == len(report.context)
    out: list[dict[str, Any]] = []
    for j, it in zip(items, report.context, strict=True):
        text = _text(report, it.seq, it.text)
        if j["role"] == "assistant" and j["tool_call_ids"]:
            out.append({"type": "function_call", "call_ids": j["tool_call_ids"]})
        elif j["role"] == "tool":
            out.append({"type": "function_call_output", "call_id": j["tool_call_id"], "text": text})
        else:
            out.append({"type": "message", "role": j["role"], "text": text})
    return out


def _item(report: Report, seq: int) -> dict[str, Any]:
    r = report.ledger.records[seq]
    text = _text(report, seq, "")
    if r.role == "assistant" and r.call_ids:
        return {"type": "function_call", "call_ids": list(r.call_ids)}
    if r.role == "tool":
        return {"type": "function_call_output", "call_id": r.result_id, "text": text}
    return {"type": "message", "role": r.role, "text": text}


def _same(ours: dict[str, Any], theirs: dict[str, Any], first: bool = False) -> bool:
    """Is our item the input item Codex sent (its digest: type, role, text head and length, call id)?
    `first`: the base instructions, whose length is compared too."""
    if ours["type"] != theirs["type"]:
        return False
    if theirs["type"] == "function_call":
        return ours["call_ids"] == [theirs["call_id"]]
    if theirs["type"] == "function_call_output":
        return ours["call_id"] == theirs["call_id"] and ours["text"].startswith(theirs["output_head"])
    role = "system" if theirs["role"] in ("developer", "system") else theirs["role"]
    text = ours["text"]
    if ours["role"] != role or not text.startswith(theirs["text_head"]):
        return False
    if role == "system" and not first:
        # Codex renders its developer messages at send time from what the rollout records: only
        # their heads are compared. The base instructions (first) are predicted as sent (0.169
        # leaves the update_plan tool's sections out when that tool is off), length and all.
        return True
    return theirs["len"] == len(text) + 13 * text.count(_PSEUDONYM)


def _check(ours: list[dict[str, Any]], theirs: list[dict[str, Any]], what: str) -> None:
    assert len(ours) == len(theirs), f"{what}: {len(ours)} items, Codex sent {len(theirs)}"
    for k, (a, b) in enumerate(zip(ours, theirs, strict=True)):
        assert _same(a, b, first=k == 0), f"{what}, item {k}: ours {str(a)[:300]} != sent {b}"


def test_peer_corpus_present() -> None:
    need_shared(PEERS)
    assert _peer_cases(), f"expected *.requests.jsonl in {PEERS}"


@pytest.mark.parametrize("requests_file", _peer_cases(), ids=[p.name.split(".")[0] for p in _peer_cases()])
def test_every_request_codex_sent_is_our_next_request(requests_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    session = requests_file.with_name(requests_file.name.replace(".requests.jsonl", ".jsonl"))
    rollout = [json.loads(x) for x in session.read_text().splitlines() if x.strip()]
    requests = [json.loads(x) for x in requests_file.read_text().splitlines() if x.strip()]
    after = 0
    compactions = 0
    for n, req in enumerate(requests, start=1):
        reply_at = _reply_line(rollout, req["reply"][0], after)
        line = reply_at - 1
        theirs = req["input"]
        if req["kind"] == "compact":
            # The summarizer's request is the history plus Codex's compaction prompt.
            assert theirs[-1]["text_head"].startswith("You are performing a CONTEXT CHECKPOINT COMPACTION")
            theirs = theirs[:-1]
            compactions += 1
        _check(_ours(session, line, capsys), theirs, f"request {n} ({req['kind']}), file at line {line}")
        after = reply_at
    assert compactions == sum(1 for o in rollout if o["type"] == "compacted") > 0


@pytest.mark.parametrize("requests_file", _peer_cases(), ids=[p.name.split(".")[0] for p in _peer_cases()])
def test_what_codex_dropped_unread_is_a_hole_and_nothing_else(requests_file: Path) -> None:
    """At each compaction: a message of the history that is not in the next main request was
    dropped; if the summarizer's request held it, it is represented (summarized), otherwise it
    must be a hole. Messages still in the next request are retained or live."""
    session = requests_file.with_name(requests_file.name.replace(".requests.jsonl", ".jsonl"))
    rollout = [json.loads(x) for x in session.read_text().splitlines() if x.strip()]
    requests = [json.loads(x) for x in requests_file.read_text().splitlines() if x.strip()]
    after = 0
    checked = 0
    earlier: dict[int, str] = {}
    for k, req in enumerate(requests):
        reply_at = _reply_line(rollout, req["reply"][0], after)
        after = reply_at
        if req["kind"] != "compact":
            continue
        summarizer_read = req["input"][:-1]
        nxt = requests[k + 1]
        line = _reply_line(rollout, nxt["reply"][0], reply_at) - 1
        sent_next = nxt["input"]
        report = analyze(load(str(session), upto_line=line))
        v = report.checkpoints[-1]
        for s in report.path:
            state = report.states[s]
            if state is None or s > v.seq:
                continue
            item = _item(report, s)
            where = report.ledger.records[s].line
            if state == "excluded":
                # Only a summarizer's own reply, which its checkpoint holds as its summary.
                text = report.ledger.records[s].message.text().strip()  # type: ignore[union-attr]
                assert any(text in c.checkpoint.summary for c in report.checkpoints), where
            elif any(_same(item, d) for d in sent_next):
                assert state == "retained", (where, state)
            elif any(_same(item, d) for d in summarizer_read):
                assert state == "summarized", (where, state)
            elif where in earlier:
                # Left at an earlier compaction: represented then (through the summary the
                # summarizer read this time) or a hole then, and still so.
                assert state == earlier[where], (where, state)
            else:
                assert state == "hole", (where, state)
            earlier[where] = state
            checked += 1
    assert checked > 0


# ---------------------------------------------------------------------------------------- rules


def _rollout(*lines: dict[str, Any]) -> bytes:
    return b"".join(json.dumps(o).encode() + b"\n" for o in lines)


# (the fields Codex 0.169 requires of a session_meta, `codex_lines.META_TEXTS`: without them it refuses the rollout)
META_FIELDS = {"timestamp": "t0", "originator": "codex_cli_rs", "cli_version": "0.169.0"}
META = {"timestamp": "t0", "type": "session_meta", "payload": {"id": "s1", "cwd": "/w", **META_FIELDS, "base_instructions": {"text": "BASE"}}}


def _msg(role: str, text: str, **extra: Any) -> dict[str, Any]:
    kind = "output_text" if role == "assistant" else "input_text"
    return {"timestamp": "t", "type": "response_item", "payload": {"type": "message", "role": role, "content": [{"type": kind, "text": text}], **extra}}


def _call(cid: str) -> dict[str, Any]:
    return {"timestamp": "t", "type": "response_item", "payload": {"type": "function_call", "name": "exec_command", "arguments": '{"cmd":"ls"}', "call_id": cid}}


def _out(cid: str, text: str = "ok") -> dict[str, Any]:
    return {"timestamp": "t", "type": "response_item", "payload": {"type": "function_call_output", "call_id": cid, "output": text}}


def _tokens(inp: int, out: int) -> dict[str, Any]:
    u = {"input_tokens": inp, "cached_input_tokens": 0, "output_tokens": out, "total_tokens": inp + out}
    return {"timestamp": "t", "type": "event_msg", "payload": {"type": "token_count", "info": {"last_token_usage": u, "total_token_usage": u, "model_context_window": 1000}}}


def test_detected_by_content_not_name_and_format_override() -> None:
    data = _rollout(META, _msg("user", "hi"))
    lines, _, _ = parse_bytes(data)
    assert detect(lines) == "codex"
    assert load_bytes(data, "session.txt").format == "codex"
    assert load_bytes(data, "x", fmt="codex").format == "codex"


def test_legacy_compaction_without_replacement_history_keeps_user_messages_and_summary() -> None:
    # Older Codex: `compacted` with only a message; Codex rebuilds the user messages + summary.
    data = _rollout(
        META,
        _msg("user", "<environment_context>cwd</environment_context>"),
        _msg("user", "first task"),
        _call("c1"),
        _out("c1"),
        _msg("assistant", "done"),
        _tokens(500, 20),
        _msg("assistant", "SUMMARY TEXT"),
        {"timestamp": "t", "type": "compacted", "payload": {"message": "prefix\nSUMMARY TEXT"}},
        _msg("user", "second task"),
    )
    report = analyze(load_bytes(data, "legacy.jsonl"))
    led = report.ledger
    states = {led.records[s].line: report.states[s] for s in report.path if report.states[s]}
    # The user message is kept, the env prefix, call, output and reply are summarized, the
    # summarizer's reply written before `compacted` is the summary itself (not counted twice).
    assert states == {2: "summarized", 3: "retained", 4: "summarized", 5: "summarized", 6: "summarized", 8: "excluded", 10: "live"}
    assert [(it.role, it.kind, it.text or led.records[it.seq].message.text()) for it in report.context] == [  # type: ignore[union-attr]
        ("system", "message", "BASE"),
        ("user", "message", "first task"),
        ("user", "summary", "prefix\nSUMMARY TEXT"),
        ("user", "message", "second task"),
    ]
    assert report.checkpoints[0].checkpoint.tokens_before == 500


def test_compaction_with_nothing_standing_for_the_history_leaves_holes() -> None:
    data = _rollout(
        META,
        _msg("user", "task"),
        _call("c1"),
        _out("c1"),
        {"timestamp": "t", "type": "compacted", "payload": {"message": "", "replacement_history": [
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "task"}]},
        ]}},
    )
    report = analyze(load_bytes(data, "empty.jsonl"))
    states = [report.states[s] for s in report.path if report.states[s]]
    assert states == ["retained", "hole", "hole"]
    (f,) = [f for f in report.findings if f.code == "hole"]
    assert f.by_role == {"assistant": 1, "tool": 1}


def test_parallel_calls_pair_across_lines_and_orphan_output_is_dropped() -> None:
    data = _rollout(META, _msg("user", "go"), _call("a"), _call("b"), _out("a"), _out("b"), _out("zz"), _tokens(300, 10))
    report = analyze(load_bytes(data, "par.jsonl"))
    got = [(it.role, it.tool_call_ids or it.tool_result_id) for it in report.context]
    assert got == [("system", None), ("user", None), ("assistant", ["a"]), ("assistant", ["b"]), ("tool", "a"), ("tool", "b")]
    assert not [f for f in report.findings if f.code in ("unanswered_tool_call", "orphan_tool_result")]
    # Usage from token_count lands on the reply; the window from model_context_window.
    assert report.ledger.records[3].message.usage.prompt == 300  # type: ignore[union-attr]
    assert report.window == 1000


def test_bad_lines_are_reported_and_the_rest_loads() -> None:
    data = _rollout(META, _msg("user", "a")) + b'{"type":"response_item","payload":\n' + _rollout(
        {"timestamp": "t", "type": "response_item", "payload": {"type": "brand_new_item", "x": 1}},
        {"timestamp": "t", "type": "future_line", "payload": {"y": 2}},
        {"timestamp": "t", "type": "compacted", "payload": "oops"},
        _msg("assistant", "b"),
    )
    led = load_bytes(data, "bad.jsonl")
    assert [d.line for d in led.diagnostics] == [3, 6]
    assert "line 6" in led.diagnostics[1].message
    kinds = [(r.line, r.kind, r.type) for r in led.records]
    assert (4, "unknown", "response_item:brand_new_item") in kinds and (5, "unknown", "future_line") in kinds
    report = analyze(led)
    assert [it.role for it in report.context] == ["system", "user", "assistant"]


def test_a_repair_without_a_writer_refuses_codex(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A plan writes nothing and works on every format; a repair needs the format's writer."""
    p = tmp_path / "rollout.jsonl"
    p.write_bytes(_rollout(META, _msg("user", "a"), _msg("assistant", "b")))
    before = p.read_bytes()
    main(["plan", str(p), "--strategy", "compact", "--window", "64000"])
    assert "Traceback" not in capsys.readouterr().err
    if registry.get("codex").writer is None:
        assert main(["repair", str(p), "--strategy", "compact", "--out", str(tmp_path / "o.jsonl")]) == 2
        assert "codex sessions are read only" in capsys.readouterr().err
    assert p.read_bytes() == before and not (tmp_path / "o.jsonl").exists()


# ---------------------------------------------------------------------------------------- the app


def test_default_place_is_searched_and_a_rollout_gets_its_row(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from inspector.formats.registry import places
    from inspector.tui.app import default_places
    from inspector.tui.triage import discover, summarize_session

    assert "~/.codex/sessions" in places()
    day = tmp_path / ".codex" / "sessions" / "2026" / "11" / "30"
    day.mkdir(parents=True)
    f = day / "rollout-2026-11-30T13-02-42-s1.jsonl"
    f.write_bytes(_rollout(META, _msg("user", "task"), _call("c1"), _out("c1"), _msg("assistant", "done")))
    monkeypatch.setenv("HOME", str(tmp_path))
    places = default_places()
    assert str(tmp_path / ".codex" / "sessions") in places
    _, files, _ = discover(places)
    assert files == [str(f)]
    row = summarize_session(str(f), "rollout.jsonl")
    assert row.error is None and row.format == "codex" and row.records == 5 and row.holes == 0


def test_session_view_shows_a_codex_session() -> None:
    _need(SMALL)
    import asyncio

    from inspector.tui.app import create_app
    from inspector.tui.context_view import NextRequestView

    app = create_app([str(SMALL)])

    async def body() -> None:
        async with app.run_test(size=(140, 40)) as pilot:
            await app_reaches(pilot, lambda: getattr(app.screen, "report", None) is not None)
            report = app.screen.report  # type: ignore[attr-defined]
            assert report is not None and report.ledger.format == "codex"
            holes = [s for s, st in enumerate(report.states) if st == "hole"]
            await pilot.press("n")  # next hole
            assert app.screen.query_one("Timeline").current_seq == holes[0]  # type: ignore[attr-defined]
            await pilot.press("3")  # the next request
            await pilot.pause(0.1)
            view = app.screen.query_one(NextRequestView)
            assert len(view.items) == len(report.context) > 0
            # Enter on an item of the last checkpoint's own (no record of its own) goes to the
            # `compacted` line that holds it.
            k = next(i for i, it in enumerate(view.items) if it.seq is None and not it.synthetic and it.line != 1)
            view.table.focus()
            view.table.move_cursor(row=k)
            await pilot.press("enter")
            timeline = app.screen.query_one("Timeline")
            cp_seq = report.checkpoints[-1].seq
            await app_reaches(pilot, lambda: timeline.current_seq == cp_seq)  # type: ignore[attr-defined]
            assert timeline.current_seq == cp_seq  # type: ignore[attr-defined]

    asyncio.run(body())


def test_rolled_back_turns_leave_the_request_and_show_as_inactive() -> None:
    rollback = {"timestamp": "t", "type": "event_msg", "payload": {"type": "thread_rolled_back", "num_turns": 1}}
    data = _rollout(META, _msg("user", "one"), _msg("assistant", "r1"), _msg("user", "two"), _call("c"), _out("c"), rollback, _msg("user", "three"))
    report = analyze(load_bytes(data, "rb.jsonl"))
    states = {report.ledger.records[s].line: st for s, st in enumerate(report.states) if st}
    assert states == {2: "live", 3: "live", 4: "inactive", 5: "inactive", 6: "inactive", 8: "live"}
    assert [it.seq and report.ledger.records[it.seq].line for it in report.context] == [None, 2, 3, 8]
    assert not report.findings


def test_replacement_items_of_its_own_are_sent_in_order_and_pair() -> None:
    # A replacement history holding a call and its output no line of the file has, then the
    # encrypted summary: all three are sent, in that order, after the kept user message.
    rh = [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "task"}]},
        {"type": "function_call", "name": "exec_command", "arguments": '{"cmd":"pwd"}', "call_id": "k1"},
        {"type": "function_call_output", "call_id": "k1", "output": "/w"},
        {"type": "ghost_snapshot", "ghost_commit": {"id": "g"}},
        {"type": "compaction", "encrypted_content": "ENC"},
    ]
    data = _rollout(META, _msg("user", "task"), _call("c1"), _out("c1"), {"timestamp": "t", "type": "compacted", "payload": {"message": "", "replacement_history": rh}}, _msg("user", "next"))
    report = analyze(load_bytes(data, "own.jsonl"))
    got = [(it.role, it.kind, it.seq is not None, it.tool_call_ids or it.tool_result_id, it.text) for it in report.context]
    assert got == [
        ("system", "message", False, None, "BASE"),
        ("user", "message", True, None, ""),
        ("assistant", "message", False, ["k1"], 'exec_command({"cmd": "pwd"})'),
        ("tool", "message", False, "k1", "/w"),
        ("user", "summary", True, None, "ENC"),
        ("user", "message", True, None, ""),
    ]
    assert not [f for f in report.findings if f.code in ("unanswered_tool_call", "hole")]
    states = [report.states[s] for s in report.path if report.states[s]]
    assert states == ["retained", "summarized", "summarized", "live"]


def test_detail_pane_lists_a_checkpoints_replacement_history() -> None:
    _need(PEERS / "auto_compact.jsonl")
    import asyncio

    from inspector.tui.app import create_app
    from inspector.tui.detail import DetailPane

    app = create_app([str(PEERS / "auto_compact.jsonl")])

    async def body() -> None:
        async with app.run_test(size=(140, 40)) as pilot:
            await app_reaches(pilot, lambda: getattr(app.screen, "report", None) is not None)
            second = app.screen.report.checkpoints[1]  # type: ignore[attr-defined]
            app.screen.go_to(second.seq)  # type: ignore[attr-defined]
            pane = app.screen.query_one(DetailPane)
            await app_reaches(pilot, lambda: pane.seq == second.seq and pane._pending is None)
            text = pane.plain
            assert "Replacement history · 6 items" in text
            assert "kept, line 8" in text and "kept, line 51" in text and "[C3] Tell me about rollouts." in text
            assert "summary" in text and "Another language model started" in text

    asyncio.run(body())


def test_analyze_json_lists_the_replacement_history(capsys: pytest.CaptureFixture[str]) -> None:
    _need(PEERS / "auto_compact.jsonl")
    assert main(["analyze", str(PEERS / "auto_compact.jsonl"), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["format"] == "codex" and out["coverage"]["hole"] == 0
    cp1, cp2 = out["checkpoints"]
    assert [(r["role"], r["kind"], r["line"]) for r in cp1["replacement"]] == [
        ("user", "message", 8), ("system", "message", 3), ("user", "message", 4), ("user", "message", 23), ("user", "summary", 37)
    ]
    assert [r["line"] for r in cp2["replacement"]] == [8, 23, 3, 4, 51, 64]
    assert cp1["usage"]["input"] == 6276 and cp1["tokens_before"] == 59911


def test_another_agents_message_is_model_input() -> None:
    iac = {"timestamp": "t", "type": "inter_agent_communication", "payload": {"author": "/root", "recipient": "/root/worker", "content": "look at a.txt"}}
    report = analyze(load_bytes(_rollout(META, iac, _msg("assistant", "ok")), "iac.jsonl"))
    assert [(it.role, it.seq) for it in report.context] == [("system", None), ("user", 1), ("assistant", 2)]
    assert report.ledger.records[1].message.text() == "look at a.txt"  # type: ignore[union-attr]


def _event(sub: str, **payload: Any) -> dict[str, Any]:
    return {"timestamp": "t", "type": "event_msg", "payload": {"type": sub, **payload}}


def test_events_without_response_items_say_why_the_request_is_empty() -> None:
    """Only UI events: Codex sends none of them, so the empty next request gets a word (issue 12, point 28)."""
    data = _rollout(META, _event("user_message", message="fix it"), _event("agent_message", message="done"), _event("token_count", info=None))
    report = analyze(load_bytes(data, "events.jsonl"))
    assert [it.seq for it in report.context if it.seq is not None] == []  # the base instructions only
    (f,) = [f for f in report.findings if f.code == "file_structure"]
    assert f.severity == "warning" and f.message.startswith("line 2: 3 event_msg lines, 2 of them user or agent messages")
    assert "no response_item line" in f.message
    # With the history there, the events are no news.
    ok = analyze(load_bytes(_rollout(META, _msg("user", "fix it"), _event("user_message", message="fix it")), "ok.jsonl"))
    assert not [f for f in ok.findings if f.code == "file_structure"]


def test_a_sub_agents_file_with_its_parents_session_meta_says_what_each_is() -> None:
    """A sub-agent's rollout: its own session_meta, then its parent's (the forked history follows)."""
    child = {"timestamp": "t0", "type": "session_meta", "payload": {
        "id": "c1", "parent_thread_id": "p1", "agent_nickname": "scout",
        "source": {"subagent": {"thread_spawn": {"parent_thread_id": "p1", "depth": 1}}}, "base_instructions": {"text": "BASE"}}}
    parent = {"timestamp": "t0", "type": "session_meta", "payload": {"id": "p1", "source": "cli"}}
    report = analyze(load_bytes(_rollout(child, parent, _msg("user", "look around"), _msg("assistant", "ok")), "sub.jsonl"))
    assert report.ledger.session_id == "c1"
    (f,) = [f for f in report.findings if f.code == "file_structure"]
    assert f.severity == "info" and report.ledger.records[f.records[0]].line == 2
    assert f.message == (
        "line 2: another session_meta, session 'p1': the parent this file's sub-agent was spawned from; the items after it "
        "are the parent's history, copied in as the sub-agent's own. This file's session is the first session_meta "
        "(line 1, sub-agent session 'c1' (scout), spawned by session 'p1')"
    )
    assert [it.role for it in report.context][-2:] == ["user", "assistant"]


# ------------------------------------------------------------------------------ base instructions

_MODEL_TEXT = (
    "You are a coding agent.\n\n"
    "## Planning\n\nYou have access to an `update_plan` tool which tracks steps.\n\nUse a plan when:\n\n- it is long\n\n"
    "## Sandbox\n\nRun commands.\n"
    "- Use the plan tool to track\n  long work\n"
    "- Keep going\n\n"
    "Progress visibility:\nIf update_plan is available, keep it current.\n\n"
    "## `update_plan`\n\nA tool named `update_plan` is available to you.\n"
    "# Output\n\n## Planning\n\nThink before you act.\n"
)
_SENT_TEXT = (
    "You are a coding agent.\n\n"
    "## Sandbox\n\nRun commands.\n"
    "- Keep going\n\n"
    "# Output\n\n## Planning\n\nThink before you act.\n"
)


def _instructions_sent(bi: Any) -> dict[str, Any]:
    meta = {"timestamp": "t0", "type": "session_meta", "payload": {"id": "s1", "cwd": "/w", "base_instructions": bi}}
    report = analyze(load_bytes(_rollout(meta, _msg("user", "hi")), "r.jsonl"))
    assert report.context[0].role == "system" and report.context[1].role == "user"
    return {"text": report.context[0].text, "note": report.context[0].note}


def test_model_instructions_are_sent_without_the_plan_tool_sections() -> None:
    """Codex 0.169 sends its model's own instructions without the update_plan tool's guidance
    (that tool is off by default): each such section, bullet and note goes; a `## Planning`
    that does not name the tool stays. The context item says how it was derived."""
    sent = _instructions_sent({"text": _MODEL_TEXT, "provenance": {"type": "model", "model": "gpt-x"}})
    assert sent["text"] == _SENT_TEXT
    assert sent["note"] and "update_plan" in sent["note"]


def test_custom_or_bare_instructions_are_sent_as_recorded() -> None:
    for bi in ({"text": _MODEL_TEXT, "provenance": {"type": "custom"}}, {"text": _MODEL_TEXT}, _MODEL_TEXT):
        assert _instructions_sent(bi) == {"text": _MODEL_TEXT, "note": None}, bi


def test_context_json_carries_the_instructions_note(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    meta = {"timestamp": "t0", "type": "session_meta", "payload": {"id": "s1", "cwd": "/w",
            "base_instructions": {"text": _MODEL_TEXT, "provenance": {"type": "model", "model": "gpt-x"}}}}
    f = tmp_path / "r.jsonl"
    f.write_bytes(_rollout(meta, _msg("user", "hi")))
    assert main(["context", str(f), "--json"]) == 0
    first, second = json.loads(capsys.readouterr().out)["messages"]
    assert "update_plan" in first["note"] and "note" not in second
