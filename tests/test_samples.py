"""The sample sessions (sample_sessions/): each reproduces one incident from the seeds.

For every sample the analysis must report exactly the findings sample_sessions/README.md lists for
it (codes, severities, counts, the records they point at), the pi files must obey pi's own file
rules, the native files the JSON Schema, and `generate.py` must reproduce the committed files
byte for byte.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import Counter
from functools import cache
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from inspector.analysis import Report, analyze
from inspector.analysis.engine import CheckpointView, Finding
from inspector.analysis.findings import CODES
from inspector.analysis.protocol import summary_completeness
from inspector.formats import load
from inspector.formats import pi as pi_format
from inspector.formats.base import template_incomplete
from inspector.formats.native import load_schema

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "sample_sessions"
NAMES = (
    "adr0302_amnesiac_fallback",
    "truncated_summary_loop",
    "compaction_loop_nothing_summarized",
    "orphan_tool_result_after_cut",
    "live_question_summarized",
    "dangling_first_kept",
    "healthy_chained",
)
FORMATS = ("pi", "native")
FILES = [(fmt, name) for name in NAMES for fmt in FORMATS]


@cache
def report(fmt: str, name: str) -> Report:
    return analyze(load(str(SAMPLES / fmt / f"{name}.jsonl")))


def raw(fmt: str, name: str) -> list[dict]:
    return [json.loads(line) for line in (SAMPLES / fmt / f"{name}.jsonl").read_text().splitlines()]


def codes(r: Report) -> list[tuple[str, str]]:
    return sorted((f.code, f.severity) for f in r.findings)


def only(r: Report, code: str) -> Finding:
    found = [f for f in r.findings if f.code == code]
    assert len(found) == 1, [f.message for f in found]
    return found[0]


def path_messages(r: Report) -> list[int]:
    return [s for s in r.path if r.ledger.records[s].message is not None]


def role(r: Report, seq: int) -> str | None:
    return r.ledger.records[seq].role


def coverage(r: Report, **counts: int) -> dict[str, int]:
    return {state: counts.get(state, 0) for state in r.coverage_counts()}


def cps(r: Report) -> list[CheckpointView]:
    return r.checkpoints


# ---------------------------------------------------------------------------------------- files


def test_every_sample_exists_in_both_formats() -> None:
    written = {(p.parent.name, p.stem) for p in SAMPLES.glob("*/*.jsonl")}
    assert written == set(FILES)


@pytest.mark.parametrize(("fmt", "name"), FILES)
def test_loads_without_diagnostics(fmt: str, name: str) -> None:
    led = load(str(SAMPLES / fmt / f"{name}.jsonl"))
    assert led.format == fmt
    assert led.diagnostics == []
    assert not led.runtime_rejects_file


@pytest.mark.parametrize("name", NAMES)
def test_pi_file_follows_pi_rules(name: str) -> None:
    entries = raw("pi", name)
    header, body = entries[0], entries[1:]
    assert header["type"] == "session" and header["version"] == 3
    assert re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}", header["id"])
    ids = [e["id"] for e in body]
    assert all(re.fullmatch(r"[0-9a-f]{8}", i) for i in ids) and len(set(ids)) == len(ids)
    assert [e["parentId"] for e in body] == [None, *ids[:-1]]
    stamps = [e["timestamp"] for e in body]
    assert stamps == sorted(stamps) and header["timestamp"] <= stamps[0]
    by_id = {e["id"]: e for e in body}
    pending: list[str] = []  # calls of the last assistant message not yet answered
    for e in body:
        m = e.get("message")
        if m is not None and m["role"] == "toolResult":
            assert pending and m["toolCallId"] == pending.pop(0), (
                "a tool result must follow its call, in order"
            )
            continue
        assert not pending, "every tool call is answered before the next entry"
        if m is not None and m["role"] == "assistant":
            pending = [b["id"] for b in m["content"] if b["type"] == "toolCall"]
            assert (m["stopReason"] == "toolUse") == bool(pending)
            assert m["timestamp"] <= int(_ms(e["timestamp"]))
        if e["type"] == "compaction":
            kept = by_id.get(e["firstKeptEntryId"])
            if name == "dangling_first_kept":
                assert kept is None
            elif name == "orphan_tool_result_after_cut":
                assert kept["message"]["role"] == "toolResult"
            else:  # pi never cuts at a tool result
                assert kept["type"] == "message" and kept["message"]["role"] in ("user", "assistant")
    assert not pending


def _ms(iso: str) -> float:
    from datetime import datetime

    return datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp() * 1000


@pytest.mark.parametrize("name", NAMES)
def test_native_file_matches_schema(name: str) -> None:
    validator = Draft202012Validator(load_schema())
    records = raw("native", name)
    for n, rec in enumerate(records, 1):
        errors = [e.message for e in validator.iter_errors(rec)]
        assert not errors, f"line {n}: {errors}"
    ids = [r["id"] for r in records if "id" in r and r["type"] != "ledger"]
    assert len(set(ids)) == len(ids)
    known = set(ids)
    for cp in (r for r in records if r["type"] == "checkpoint"):
        refs = [x for pair in cp["represents"] for x in pair] + cp["retains"]
        assert set(refs) <= known
        assert cp["boundary"] is None or cp["boundary"] in known or name == "dangling_first_kept"


def test_regeneration_is_byte_identical(tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, str(SAMPLES / "generate.py"), "--out", str(tmp_path)],
        check=True,
        capture_output=True,
    )
    fresh = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file())
    committed = [
        p.relative_to(SAMPLES) for p in SAMPLES.rglob("*") if p.is_file() and p.name != "generate.py"
    ]
    assert fresh == sorted(p for p in committed if "__pycache__" not in p.parts)
    for rel in fresh:
        assert (tmp_path / rel).read_bytes() == (SAMPLES / rel).read_bytes(), rel


def test_readme_states_what_the_analysis_reports() -> None:
    lines = [ln for ln in (SAMPLES / "README.md").read_text().splitlines() if ln.startswith("- `")]
    assert len(lines) == len(FILES)
    for line in lines:
        fmt, name = re.match(r"- `(\w+)/(\w+)\.jsonl`", line).groups()  # type: ignore[union-attr]
        stated = {c for c in re.findall(r"`(\w+)`", line) if c in CODES}
        assert stated == {f.code for f in report(fmt, name).findings}, line


# ---------------------------------------------------------------------------------------- 1. ADR 0302


@pytest.mark.parametrize("fmt", FORMATS)
def test_adr0302_amnesiac_fallback(fmt: str) -> None:
    r = report(fmt, "adr0302_amnesiac_fallback")
    assert codes(r) == [
        ("amnesiac_fallback", "error"),
        ("hole", "error"),
        ("usage_missing", "warning"),
    ]
    c1, c2, c3 = cps(r)
    active = path_messages(r)[-1]
    # The active turn's request is the last message, and the checkpoint comes right after it.
    assert role(r, active) == "user" and r.path[-1] == c3.seq

    # The fallback: carried the 2nd summary forward, kept exactly the active user message.
    assert c3.fallback and c3.carried_forward and not c1.fallback and not c2.fallback
    assert c3.checkpoint.summary == c2.checkpoint.summary
    assert c3.retains == [active] and c3.shape == "latest_user_message"
    assert c3.represents == c2.represents
    assert c3.checkpoint.usage is None and c3.checkpoint.failure_reason is None
    assert c1.checkpoint.usage is not None and c2.checkpoint.usage is not None

    # The hole: everything c3 removed that c2 had not (c2's kept range and what came after it).
    lost = [s for s in c3.removes if s not in c2.removes]
    hole = only(r, "hole")
    assert hole.severity == "error" and hole.data == {"checkpoint": 3}
    assert hole.records == lost and len(lost) == 168
    assert hole.by_role == {"user": 3, "assistant": 34, "tool": 131}
    assert (
        role(r, lost[0]) == "user" and path_messages(r).index(active) == path_messages(r).index(lost[-1]) + 1
    )
    if fmt == "pi":
        assert lost[0] == c2.first_kept_seq
    assert "3 user / 34 assistant / 131 tool" in hole.message

    fallback = only(r, "amnesiac_fallback")
    assert fallback.severity == "error" and fallback.records == [c3.seq, active]
    assert "kept one user message raw; 168 messages" in fallback.message
    assert only(r, "usage_missing").records == [c3.seq]
    # One fallback that moved the boundary is not a loop: the hole and fallback findings say what it cost.
    assert not [f for f in r.findings if f.code == "compaction_loop"]

    assert r.coverage_counts() == coverage(r, hole=168, retained=1, summarized=len(c2.represents))
    assert len(c2.represents) == 54
    assert [(it.kind, it.role, it.seq) for it in r.context] == [
        ("summary", "user", c3.seq),
        ("message", "user", active),
    ]


def test_adr0302_pi_entries_are_the_reported_shape() -> None:
    entries = raw("pi", "adr0302_amnesiac_fallback")
    comps = [e for e in entries if e["type"] == "compaction"]
    assert len(comps) == 3
    second, third = comps[1], comps[2]
    assert third["summary"] == second["summary"]
    details = third["details"]
    assert details["usage"] is None and "failureReason" not in details
    assert details["retainedTailShape"] == "latest_user_message"
    assert details["readFiles"] and details["modifiedFiles"]
    assert all("retainedTailShape" not in c["details"] and c["details"]["usage"] for c in comps[:2])
    # firstKeptEntryId = the active turn's user message = the entry right before the compaction.
    ids = [e.get("id") for e in entries]
    before = entries[ids.index(third["id"]) - 1]
    assert third["firstKeptEntryId"] == before["id"] == third["parentId"]
    assert before["message"]["role"] == "user"
    between = [
        e["message"]
        for e in entries[ids.index(second["firstKeptEntryId"]) : ids.index(before["id"])]
        if e["type"] == "message"
    ]
    assert Counter(m["role"] for m in between) == {"user": 3, "assistant": 34, "toolResult": 131}
    # Parallel tool calls: 31 assistant messages carry the 131 calls, 3 are the turns' final answers.
    per_message = [
        sum(b["type"] == "toolCall" for b in m["content"]) for m in between if m["role"] == "assistant"
    ]
    assert sum(per_message) == 131 and per_message.count(0) == 3 and min(n for n in per_message if n) >= 4


# ---------------------------------------------------------------------------------------- 2. truncated loop


@pytest.mark.parametrize("fmt", FORMATS)
def test_truncated_summary_loop(fmt: str) -> None:
    r = report(fmt, "truncated_summary_loop")
    # pi: cut inside its template (partly lost: warning); native: cut before the essential marker,
    # so not installable (seed 004: error).
    sev = "warning" if fmt == "pi" else "error"
    assert codes(r) == [("compaction_loop", "error")] + [("truncated_summary", sev)] * 3
    views = cps(r)
    loop = only(r, "compaction_loop")
    assert loop.records == [v.seq for v in views] and "3 checkpoints in a row" in loop.message
    assert "same boundary" in loop.message
    truncated = [f for f in r.findings if f.code == "truncated_summary"]
    assert [f.records for f in truncated] == [[v.seq] for v in views]
    if fmt == "pi":
        assert len({v.first_kept_seq for v in views}) == 1
        stops = [template_incomplete(v.checkpoint.summary, pi_format.SUMMARY_FORMAT) for v in views]
        assert stops == [
            "its history part stops before '## Critical Context'",
            "its history part stops before '## Next Steps'",
            "its history part stops before '## Key Decisions'",
        ]
    else:
        assert len({v.checkpoint.explicit_boundary for v in views}) == 1
        assert all(v.checkpoint.truncated for v in views)
        assert all(summary_completeness(v.checkpoint.summary) == "essential_incomplete" for v in views)
        # The marked flag wins over the text: see the note in the final report about severity.
        assert all("marked truncated" in f.message for f in truncated)
    assert len({v.checkpoint.summary for v in views}) == 3  # cut at different places, never carried
    assert r.coverage_counts() == coverage(r, summarized=33, retained=16)


# ---------------------------------------------------------------------------------------- 3. nothing summarized


@pytest.mark.parametrize("fmt", FORMATS)
def test_compaction_loop_nothing_summarized(fmt: str) -> None:
    r = report(fmt, "compaction_loop_nothing_summarized")
    expected = [("compaction_loop", "error"), ("compaction_storm", "warning")]
    if fmt == "native":  # only the native ledger records the 4,096-token window
        expected.append(("over_budget", "error"))
    if fmt == "pi":  # its last reply is the model's context overflow: pi compacts once more first
        expected.append(("compacts_first", "warning"))
    assert codes(r) == expected
    views = cps(r)
    assert len(views) == 4
    assert all(v.removes == [] and v.represents == set() and v.own_range == [] for v in views)
    assert all(v.retains == [s for s in path_messages(r) if s < v.seq] for v in views)  # keeps everything
    loop, storm = only(r, "compaction_loop"), only(r, "compaction_storm")
    assert loop.records == storm.records == [v.seq for v in views]
    assert "4 checkpoints in a row" in loop.message and "4 checkpoints within one turn" in storm.message
    assert "same boundary" in loop.message
    # Five overflow errors, all dropped at send time; nothing is summarized, nothing lost.
    assert r.coverage_counts() == coverage(r, retained=11, excluded=5)
    if fmt == "native":
        assert all(v.checkpoint.failure_reason == "no_new_history" for v in views)
        budget = only(r, "over_budget")
        assert r.context_tokens > r.window == 4096 and budget.records == []


# ---------------------------------------------------------------------------------------- 4. orphan


@pytest.mark.parametrize("fmt", FORMATS)
def test_orphan_tool_result_after_cut(fmt: str) -> None:
    r = report(fmt, "orphan_tool_result_after_cut")
    assert codes(r) == [("orphan_tool_result", "error")]
    (cp,) = cps(r)
    first_kept = cp.retains[0]
    assert role(r, first_kept) == "tool"
    orphan = only(r, "orphan_tool_result")
    assert orphan.records == [first_kept]
    call_id = r.ledger.records[first_kept].message.tool_result_ids()[0]  # type: ignore[union-attr]
    caller = next(s for s in path_messages(r) if call_id in r.ledger.records[s].message.tool_call_ids())  # type: ignore[union-attr]
    assert caller in cp.removes and caller in cp.represents  # the call was summarized away
    assert [it.orphan for it in r.context] == [False, True, False, False, False, False, False]
    assert r.coverage_counts() == coverage(r, summarized=22, retained=6)


# ---------------------------------------------------------------------------------------- 5. live question


@pytest.mark.parametrize("fmt", FORMATS)
def test_live_question_summarized(fmt: str) -> None:
    r = report(fmt, "live_question_summarized")
    assert codes(r) == [("live_question_summarized", "error")]
    _, c2 = cps(r)
    users = [s for s in path_messages(r) if role(r, s) == "user"]
    request = users[-1]
    finding = only(r, "live_question_summarized")
    assert (
        finding.records == [request, c2.seq] and "was summarized out of the next request" in finding.message
    )
    assert request in c2.removes and request in c2.represents and r.states[request] == "summarized"
    # The turn is in progress: after the request only tool calls and results, no final answer.
    after = [s for s in path_messages(r) if s > request]
    assert {role(r, s) for s in after} == {"assistant", "tool"}
    assert all(r.ledger.records[s].message.tool_call_ids() for s in after if role(r, s) == "assistant")  # type: ignore[union-attr]
    assert role(r, r.path[-1]) == "tool"
    assert r.coverage_counts() == coverage(r, summarized=28, retained=2, live=2)
    if fmt == "pi":
        assert "**Turn Context (split turn):**" in c2.checkpoint.summary and c2.first_kept_seq > request


# ---------------------------------------------------------------------------------------- 6. dangling


def test_dangling_first_kept_pi() -> None:
    r = report("pi", "dangling_first_kept")
    assert codes(r) == [("dangling_first_kept", "error")]
    (cp,) = cps(r)
    assert cp.first_kept_found is False and cp.first_kept_seq is None and cp.retains == []
    assert only(r, "dangling_first_kept").records == [cp.seq]
    assert "pi keeps nothing raw: 33 messages before it leave the request" in r.findings[0].message
    assert [it.kind for it in r.context] == ["summary", "message", "message", "message", "message"]
    assert r.coverage_counts() == coverage(r, summarized=33, live=4)


def test_dangling_first_kept_native_shows_the_turn_no_summary_covers() -> None:
    r = report("native", "dangling_first_kept")
    assert codes(r) == [("dangling_first_kept", "error"), ("hole", "error")]
    (cp,) = cps(r)
    assert cp.first_kept_found is False and cp.retains == []
    hole = only(r, "hole")
    assert hole.by_role == {"user": 1, "assistant": 5, "tool": 6}
    assert hole.records == sorted(set(cp.removes) - cp.represents)
    assert r.coverage_counts() == coverage(r, summarized=21, hole=12, live=4)


# ---------------------------------------------------------------------------------------- 7. healthy


@pytest.mark.parametrize("fmt", FORMATS)
def test_healthy_chained_has_no_findings(fmt: str) -> None:
    r = report(fmt, "healthy_chained")
    assert not [f for f in r.findings if f.severity in ("error", "warning")]
    assert r.findings == []
    c1, c2 = cps(r)
    assert not c1.fallback and not c2.fallback
    assert set(c1.represents) < set(c2.represents)
    assert r.coverage_counts() == coverage(r, summarized=44, retained=10, live=4)
    if fmt == "pi":
        assert role(r, c1.first_kept_seq) == "assistant"  # a split turn
        assert c2.own_range[0] == c1.first_kept_seq  # the update re-summarizes from the first's cut
        assert all(template_incomplete(v.checkpoint.summary, pi_format.SUMMARY_FORMAT) is None for v in (c1, c2))
    else:
        assert all(summary_completeness(v.checkpoint.summary) == "complete" for v in (c1, c2))
        assert c1.checkpoint.usage is not None and c2.checkpoint.usage is not None
