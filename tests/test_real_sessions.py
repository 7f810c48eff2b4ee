"""Every real pi session in ../shared/real_sessions/pi/ loads with the counts its SOURCES.md states."""

from __future__ import annotations

from collections import Counter

import pytest

from inspector.analysis import analyze
from inspector.formats import load
from tests.conftest import SHARED

PI = SHARED / "real_sessions" / "pi"

# From SOURCES.md: lines, malformed lines, entry types, roles, stop reasons.
EXPECTED = {
    "pi-mono__large-session.jsonl": {
        "lines": 1019,
        "malformed": 0,
        "types": {"message": 914, "thinking_level_change": 103, "model_change": 1},
        "roles": {"user": 88, "assistant": 453, "toolResult": 373},
        "stops": {"toolUse": 366, "stop": 65, "aborted": 21, "error": 1},
        "tool_errors": 19,
    },
    "pi-mono__session@d5dde00d.jsonl": {
        "lines": 463,
        "malformed": 1,
        "types": {"message": 452, "thinking_level_change": 8, "compaction": 1},
        "roles": {"user": 43, "assistant": 219, "toolResult": 189, "bashExecution": 1},
        "stops": {"toolUse": 178, "stop": 35, "aborted": 6},
        "tool_errors": 12,
    },
    "pi-mono__compact@705ba5d4.jsonl": {
        "lines": 1013,
        "malformed": 1,
        "types": {"message": 1010, "compaction": 1},
        "roles": {"user": 77, "assistant": 503, "toolResult": 429, "bashExecution": 1},
        "stops": {"toolUse": 429, "stop": 64, "aborted": 10},
        "tool_errors": 17,
    },
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_counts_match_sources(name: str) -> None:
    exp = EXPECTED[name]
    led = load(str(PI / name))
    # SOURCES.md counts what a plain json.loads per line parses: the runtime-visible records.
    visible = [r for r in led.records if r.runtime_visible and r.kind != "header"]
    assert Counter(r.type for r in visible) == exp["types"]
    assert Counter(r.message.source_role for r in visible if r.message) == exp["roles"]
    stops = Counter(r.message.stop_reason_raw for r in visible if r.message and r.message.role == "assistant")
    assert stops == exp["stops"]
    tool_errors = sum(1 for r in visible if r.message and r.message.role == "tool" and r.message.blocks[0].is_error)
    assert tool_errors == exp["tool_errors"]
    assert max(r.line for r in led.records) == exp["lines"]
    bad = [d for d in led.diagnostics if d.problem in ("glued_objects", "malformed_json", "truncated_line")]
    assert len(bad) == exp["malformed"]
    assert led.version == 1 and led.migrated
    analyze(led)  # and the analysis runs on it


def test_glued_compaction_that_pi_loses_is_recovered_and_reported() -> None:
    led = load(str(PI / "pi-mono__compact@705ba5d4.jsonl"))
    line = [r for r in led.records if r.line == 1013]
    assert [r.type for r in line] == ["message", "compaction"]
    assert all(not r.runtime_visible for r in line)
    glued_cp = line[1].checkpoint
    assert glued_cp is not None and glued_cp.tokens_before == 131140
    report = analyze(led)
    # The effective context follows pi: only the line-670 compaction is in force.
    assert [v.record.line for v in report.checkpoints] == [670]
    assert report.context[0].kind == "summary" and report.context[0].line == 670
    assert all(it.line != 1013 for it in report.context)
    f = [f for f in report.findings if f.code == "malformed_line"]
    assert len(f) == 1 and f[0].severity == "error"
    assert "line 1013" in f[0].message and "compaction never takes effect" in f[0].message
    holes = [f for f in report.findings if f.code == "hole"]
    assert holes and holes[0].by_role == {"assistant": 1}


def test_v1_first_kept_index_counts_entries_pi_parsed() -> None:
    led = load(str(PI / "pi-mono__session@d5dde00d.jsonl"))
    report = analyze(led)
    (cp,) = report.checkpoints
    # firstKeptEntryIndex 355 indexes pi's parsed entries, header = 0: line 356.
    assert cp.first_kept_found and led.records[cp.first_kept_seq].line == 356
    # The glued line 440 holds an assistant reply and a user message pi never sees.
    holes = [f for f in report.findings if f.code == "hole"]
    assert holes[0].by_role == {"user": 1, "assistant": 1}
