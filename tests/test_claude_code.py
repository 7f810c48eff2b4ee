"""Claude Code transcripts (issue 6): every line type, the parentUuid tree across compact
boundaries, replies merged by message.id, and the next request checked against what the real
Claude Code 2.1.328 sent (`../shared/peers/claude_code/`)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from inspector.analysis import analyze
from inspector.analysis.engine import Report
from inspector.formats import FORMATS, load, load_bytes
from tests.conftest import REPO, SHARED

REAL = SHARED / "real_sessions" / "claude_code"
PEERS = SHARED / "peers" / "claude_code" / "corpus"
SESSIONS = sorted(p.name.removesuffix(".requests.jsonl") for p in PEERS.glob("*.requests.jsonl")) if PEERS.exists() else []


def _need(path: Path) -> None:
    if not path.exists():
        print(f"skipped: {path} is missing (the checkout expects ../shared next to it)")
        pytest.skip(f"{path} is missing (the checkout expects ../shared next to it)")


# ------------------------------------------------------------------------------------------ real files


def _raw_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


def _blocks_as_written(path: Path) -> Counter[str]:
    c: Counter[str] = Counter()
    for o in _raw_lines(path):
        m = o.get("message")
        if isinstance(m, dict) and isinstance(m.get("content"), list):
            c.update(b.get("type") for b in m["content"] if isinstance(b, dict))
    return c


# From SOURCES.md: lines, line types (system lines by subtype), content blocks.
EXPECTED: dict[str, dict[str, Any]] = {
    "spotter__8463c716__agent-acompact-f46190.jsonl": {
        "lines": 7,
        "types": {"user": 6, "assistant": 1},
        "blocks": {"text": 1},
        "meta": 5,
        "compactions": 0,
    },
    "spotter__subagent.jsonl": {
        "lines": 96,
        "types": {"progress": 44, "assistant": 28, "user": 20, "file-history-snapshot": 3, "system:stop_hook_summary": 1},
        "blocks": {"tool_use": 16, "tool_result": 16, "text": 10, "thinking": 4},
        "meta": 1,
        "compactions": 0,
    },
    "spotter__tool_heavy.jsonl": {
        "lines": 39,
        "types": {"user": 13, "progress": 10, "assistant": 9, "file-history-snapshot": 3, "queue-operation": 2, "system:local_command": 2},
        "blocks": {"tool_use": 6, "tool_result": 6, "text": 4, "thinking": 1},
        "meta": 1,
        "compactions": 0,
    },
    "agent-sessions__claude_small.jsonl": {
        "lines": 89,
        "types": {
            "attachment": 38, "user": 10, "assistant": 10,
            "system:api_error": 4, "system:compact_boundary": 2, "system:session_start": 1, "system:stop_hook_summary": 1,
            "system:api_refusal": 1, "system:error": 1, "system:turn_duration": 1, "system:model_refusal_fallback": 1,
            "worktree-state": 2, "summary": 1, "progress": 1, "queue-operation": 1, "file-history-snapshot": 1,
            "agent-name": 1, "custom-title": 1, "ai-title": 1, "last-prompt": 1, "permission-mode": 1, "mode": 1,
            "frame-link": 1, "pr-link": 1, "started": 1, "result": 1, "relocated": 1, "bridge-session": 1, "atis-latch": 1,
        },
        "blocks": {"text": 9, "thinking": 6, "tool_use": 3, "tool_result": 3, "image": 1, "fallback": 1},
        "compactions": 2,
    },
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_real_file_loads_with_the_counts_sources_states(name: str) -> None:
    path = REAL / name
    _need(path)
    exp = EXPECTED[name]
    led = load(str(path))
    assert led.format == "claude_code"
    assert len(led.records) == exp["lines"] and max(r.line for r in led.records) == exp["lines"]
    assert Counter(r.type for r in led.records) == exp["types"]
    # Our blocks (replies merged across their lines, summaries folded into checkpoints) are the
    # blocks as written, each once.
    assert _blocks_as_written(path) == exp["blocks"]
    ours: Counter[str] = Counter()
    for r in led.records:
        if r.message is not None:
            ours.update({"tool_call": "tool_use"}.get(b.type, b.type) if b.type != "other" else b.raw.get("type") for b in r.message.blocks)
    for t in ("tool_use", "tool_result", "thinking", "image", "fallback"):
        assert ours[t] == exp["blocks"].get(t, 0), t
    assert len([r for r in led.records if r.kind == "checkpoint"]) == exp["compactions"]
    if "meta" in exp:
        assert sum(1 for r in led.records if (r.extra or {}).get("isMeta") is True and r.type == "user") == exp["meta"]
    report = analyze(led)  # and the analysis runs on it
    assert report.findings is not None


def test_replies_written_block_by_block_are_one_message_with_usage_once() -> None:
    path = REAL / "spotter__subagent.jsonl"
    _need(path)
    report = analyze(load(str(path)))
    led = report.ledger
    # Lines 6-12 are one reply (message.id ...3xEieBJx): text, thinking, text, four tool calls.
    first = next(r for r in led.records if r.line == 6)
    assert first.kind == "message" and first.extra["merged_lines"] == [6, 7, 8, 9, 10, 11, 12]
    m = first.message
    assert [b.type for b in m.blocks] == ["text", "thinking", "text"] + ["tool_call"] * 4
    assert all(led.records[s].kind == "meta" and led.records[s].extra["merged_into_line"] == 6 for s in range(6, 12))
    raw = _raw_lines(path)[5]["message"]["usage"]
    assert m.usage.input == raw["input_tokens"] and m.usage.cache_read == raw["cache_read_input_tokens"]
    # Each API reply is one item of the next request; all 16 calls are answered in it.
    calls = [c for it in report.context for c in it.tool_call_ids]
    answered = [it.tool_result_id for it in report.context if it.role == "tool"]
    assert len(calls) == 16 and sorted(calls) == sorted(answered)
    assert not [f for f in report.findings if f.code in ("orphan_tool_result", "unanswered_tool_call")]


def test_parallel_results_off_the_parent_chain_are_still_sent() -> None:
    """spotter__subagent lines 77-86: two calls of one reply; the next reply hangs off the second
    result (line 86), so the first result (line 82) is not on the parentUuid chain, yet it is sent."""
    path = REAL / "spotter__subagent.jsonl"
    _need(path)
    report = analyze(load(str(path)))
    lines = [it.line for it in report.context]
    assert lines.index(77) < lines.index(82) < lines.index(86) < lines.index(87)
    rec82 = next(r for r in report.ledger.records if r.line == 82)
    assert report.states[rec82.seq] == "live"
    assert rec82.extra["parentUuid"] == _raw_lines(path)[81]["parentUuid"]  # as written, kept


def test_small_fixture_is_reported_not_fatal() -> None:
    path = REAL / "agent-sessions__claude_small.jsonl"
    _need(path)
    report = analyze(load(str(path)))
    codes = {f.code for f in report.findings}
    # Its ids are "[trimmed for fixture]" over and over: reported, the rest still loads.
    assert "duplicate_id" in codes
    cycle = [d for d in report.ledger.diagnostics if d.problem == "parent_cycle"]
    assert cycle and "line 89" in cycle[0].message
    cps = [r for r in report.ledger.records if r.kind == "checkpoint"]
    assert cps[0].line == 21 and cps[0].checkpoint.summary == "Summary of prior context."
    assert cps[1].checkpoint.details["preservedSegment"] and cps[1].checkpoint.trigger is not None


# ------------------------------------------------------------------------------------------ detection / CLI


def test_detected_by_content_not_name(tmp_path: Path) -> None:
    path = PEERS / "manual_compact.jsonl"
    _need(path)
    odd = tmp_path / "whatever.log"
    odd.write_bytes(path.read_bytes())
    assert load(str(odd)).format == "claude_code"
    assert load_bytes(path.read_bytes()).format == "claude_code"
    assert "claude_code" in FORMATS


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "inspector", *args], capture_output=True, text=True, cwd=REPO)


def test_cli_format_override_and_context_json() -> None:
    path = PEERS / "manual_compact.jsonl"
    _need(path)
    p = _cli("context", str(path), "--json", "--format", "claude_code")
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert doc["format"] == "claude_code"
    # Forcing another format is honoured (and this file is no pi session).
    p = _cli("analyze", str(path), "--json", "--format", "pi")
    assert p.returncode in (0, 1, 2)
    if p.returncode != 2:
        assert json.loads(p.stdout)["format"] == "pi"


def test_plan_and_repair_refuse_clearly() -> None:
    path = PEERS / "manual_compact.jsonl"
    _need(path)
    for cmd in (
        ("plan", str(path), "--strategy", "recover"),
        ("repair", str(path), "--strategy", "recover", "--out", "/tmp/never-written.jsonl"),
    ):
        p = _cli(*cmd)
        assert p.returncode == 2, (cmd, p.stdout, p.stderr)
        assert "not available for claude_code sessions" in p.stderr
    assert not Path("/tmp/never-written.jsonl").exists()


# ------------------------------------------------------------------------------------------ peers


def _requests(name: str) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (PEERS / f"{name}.requests.jsonl").read_text().splitlines() if x.strip()]


def _session_files(name: str) -> list[Path]:
    """The main transcript and its sub-agents' transcripts."""
    return [PEERS / f"{name}.jsonl", *sorted((PEERS / f"{name}.subagents").glob("subagents/*.jsonl"))]


def _reply_at(files: list[Path], req: dict[str, Any]) -> tuple[Path, int]:
    """Which file and line hold the reply to this request (the request was sent just before)."""
    first = req["reply_blocks"][0]
    for f in files:
        for i, o in enumerate(_raw_lines(f), start=1):
            m = o.get("message")
            if o.get("type") != "assistant" or not isinstance(m, dict) or not isinstance(m.get("content"), list):
                continue
            for b in m["content"]:
                if first["type"] == "tool_use" and b.get("type") == "tool_use" and b.get("id") == first["id"]:
                    return f, i
                if first["type"] == "text" and b.get("type") == "text" and b.get("text", "").startswith(first["text_head"]):
                    return f, i
    raise AssertionError(f"no transcript line holds the reply to request {req['n']}")


def _our_blocks(report: Report) -> list[tuple[str, str, str | None]]:
    """Our next request, block by block: (kind, content key, record uuid)."""
    out: list[tuple[str, str, str | None]] = []
    led = report.ledger
    for it in report.context:
        if it.kind == "summary":
            cp = led.records[it.seq]
            out.append(("text", it.text, cp.extra.get("summary_uuid")))
            continue
        if it.synthetic:
            out.append(("tool_result", it.tool_result_id or "", None))
            continue
        rec = led.records[it.seq]
        for b in rec.message.blocks:
            if b.type == "text":
                out.append(("text", b.text, rec.id))
            elif b.type == "tool_call":
                out.append(("tool_use", b.call_id, rec.id))
            elif b.type == "tool_result":
                out.append(("tool_result", b.call_id, rec.id))
    return out


def _their_blocks(req: dict[str, Any]) -> list[tuple[str, str, int]]:
    """What Claude Code sent, block by block (system-role messages are its own instructions)."""
    out: list[tuple[str, str, int]] = []
    for m in req["messages"]:
        if m["role"] == "system":
            continue
        for b in m["blocks"]:
            if b["type"] in ("text", "str"):
                out.append(("text", b["text_head"], b["len"]))
            elif b["type"] == "tool_use":
                out.append(("tool_use", b["id"], 0))
            elif b["type"] == "tool_result":
                out.append(("tool_result", b["tool_use_id"], 0))
    return out


def _injected(block: tuple[str, str, int]) -> bool:
    """Context Claude Code adds at send time from no transcript message (git status, attribution,
    attachments turned into reminders, the compaction prompt)."""
    kind, head, _ = block
    return kind == "text" and (head.startswith("<system-reminder>") or head.startswith("CRITICAL: Respond with TEXT ONLY"))


def _same(ours: tuple[str, str, str | None], theirs: tuple[str, str, int]) -> bool:
    if ours[0] != theirs[0]:
        return False
    if ours[0] != "text":
        return ours[1] == theirs[1]
    text, head, n = ours[1], theirs[1], theirs[2]
    if text[:100] == head or text[:100].rstrip() == head.rstrip():
        return True
    # A background task's notification is sent wrapped in a system notification.
    return text.startswith("<task-notification>") and head.startswith("<system-reminder>") and n > len(text)


def _align(ours: list[tuple[str, str, str | None]], theirs: list[tuple[str, str, int]]) -> list[str]:
    """Problems matching our blocks, in order, to the sent ones; skipped sent blocks must be
    injections."""
    problems: list[str] = []
    j = 0
    for o in ours:
        k = j
        while k < len(theirs) and not _same(o, theirs[k]):
            k += 1
        if k == len(theirs):
            problems.append(f"ours not sent: {o[0]} {o[1][:60]!r} ({o[2]})")
            continue
        problems += [f"sent, not ours: {t[0]} {t[1][:60]!r}" for t in theirs[j:k] if not _injected(t)]
        j = k + 1
    problems += [f"sent, not ours: {t[0]} {t[1][:60]!r}" for t in theirs[j:] if not _injected(t)]
    return problems


def test_peer_corpus_present() -> None:
    _need(PEERS)
    assert {"manual_compact", "subagent"} <= set(SESSIONS)


@pytest.mark.parametrize("name", SESSIONS)
def test_every_request_claude_code_sent_is_our_next_request_then(name: str) -> None:
    """For every model call, `context --at LINE` (LINE = the line before its reply) lists what
    Claude Code sent, block by block, in order; compaction calls are checked separately."""
    files = _session_files(name)
    checked = 0
    for req in _requests(name):
        if req["kind"] != "main":
            continue
        f, line = _reply_at(files, req)
        report = analyze(load(str(f), upto_line=line - 1))
        problems = _align(_our_blocks(report), _their_blocks(req))
        assert not problems, f"request {req['n']} ({f.name} --at {line - 1}): {problems}"
        # And nothing the request carried from the transcript is missing from ours.
        uuids = {u for _, _, u in _our_blocks(report)}
        assert set(req["transcript_uuids_in_request"]) <= uuids | _merged_uuids(report)
        checked += 1
    assert checked == sum(1 for r in _requests(name) if r["kind"] == "main") > 0


def _merged_uuids(report: Report) -> set[str]:
    return {r.id for r in report.ledger.records if r.id and "merged_into_line" in (r.extra or {})}


@pytest.mark.parametrize("name", SESSIONS)
def test_compaction_represents_what_its_request_summarized_and_holes_are_what_was_dropped(name: str) -> None:
    """The compaction call's transcript messages are exactly what the checkpoint's summary
    represents; a message that left the requests without being in a compaction call is a hole,
    and only such messages are holes."""
    reqs = _requests(name)
    report = analyze(load(str(PEERS / f"{name}.jsonl")))
    led = report.ledger
    by_uuid = {r.id: r for r in led.records if r.id}
    summarized: set[str] = set()
    for i, req in enumerate(reqs):
        if req["kind"] != "compact":
            continue
        sent = set(req["transcript_uuids_in_request"])
        summarized |= sent
        after = next(r for r in reqs[i + 1 :] if r["kind"] == "main")
        (v,) = [v for v in report.checkpoints if v.record.extra.get("summary_uuid") in after["transcript_uuids_in_request"]]
        represented = {led.records[s].id for s in v.represents}
        merged = {u for u in sent if "merged_into_line" in (by_uuid[u].extra or {})}
        assert represented == sent - merged
        retained = {led.records[s].id for s in v.retains}
        assert retained == set(v.checkpoint.details["preservedMessages"]["uuids"])
    main = [r for r in reqs if r["kind"] == "main"]
    ever = set().union(*(set(r["transcript_uuids_in_request"]) for r in main))
    last = set(main[-1]["transcript_uuids_in_request"])
    dropped = {u for u in ever - last if "merged_into_line" not in (by_uuid[u].extra or {})}
    holes = {led.records[s].id for s in report.path if report.states[s] == "hole"}
    assert holes == dropped - summarized
    for u in dropped & summarized:
        assert report.states[by_uuid[u].seq] == "summarized"
