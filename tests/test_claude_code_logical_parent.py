"""A compact boundary whose logicalParentUuid names no line of the transcript.

Claude Code writes a boundary with `parentUuid: null` and `logicalParentUuid` naming the last
message before it; its own chain stops at the boundary whatever that names, so what it sends does
not depend on it. We follow the logical parent to tell what the compaction summarized. A real
transcript (marot/spotter's test/fixtures/transcripts/4d5611e5-....jsonl, Claude Code 2.1.39) has a
boundary naming a uuid no line holds, written 87 s after the line before it (the summarizer's call):
read as a dangling parent, the 132 messages before it were reported a hole ("the chain Claude Code
sends stops here", an error) and the compaction one that summarized nothing (a compaction loop).
The real CLI resumed it as we predict, the summary first. Now the boundary is taken to follow the
main thread's newest line before it, with a note saying so.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from inspector.analysis import analyze
from inspector.analysis.export import context_json
from inspector.formats import load_bytes
from tests.test_claude_code import _boundary, _jsonl, _line, _summary
from tests.test_incremental import grow_and_compare


def _session(logical: str) -> list[dict[str, Any]]:
    objs = [
        _line("user", "u1", None, "build it", timestamp="2026-01-01T00:00:00Z"),
        _line("assistant", "a1", "u1", [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {}}], stop="tool_use"),
        _line("user", "r1", "a1", [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]),
        _line("assistant", "a2", "r1", [{"type": "text", "text": "built"}]),
        _line("user", "u2", "a2", "now test it"),
        _line("progress", "p1", "u2"),
    ]
    boundary = _boundary("b1", logical)
    boundary["timestamp"] = "2026-01-01T00:01:27Z"  # (87 s later: the summarizer's call)
    return [*objs, boundary, _summary("s1", "b1"), _line("user", "u3", "s1", "go on"), _line("assistant", "a3", "u3", [{"type": "text", "text": "ok"}])]


def test_a_boundary_naming_no_line_summarized_the_conversation_before_it() -> None:
    named = analyze(load_bytes(_jsonl(_session("u2")), "named.jsonl"))
    missing = analyze(load_bytes(_jsonl(_session("459e838f-0000-4000-8000-000000000000")), "missing.jsonl"))
    assert missing.coverage_counts() == named.coverage_counts()
    assert missing.coverage_counts()["hole"] == 0 and missing.coverage_counts()["summarized"] == 5
    assert not [f for f in missing.findings if f.severity in ("error", "warning")], [f.message for f in missing.findings]
    note = [f for f in missing.findings if f.data.get("problem") == "logical_parent_assumed"]
    assert len(note) == 1 and note[0].severity == "info" and "taken to end at line 5" in note[0].message
    # What is sent does not change: the summary, then what came after it.
    sent = [(m["record_id"], m["kind"]) for m in context_json(missing)["messages"]]
    assert sent == [(m["record_id"], m["kind"]) for m in context_json(named)["messages"]]
    assert sent == [("b1", "summary"), ("u3", "message"), ("a3", "message")]


def test_a_followed_transcript_with_such_a_boundary_reads_as_the_full_analysis(tmp_path: Path) -> None:
    """Including a line appended later that holds the uuid the boundary names (the full read then
    follows it: the follow reads in full)."""
    objs = _session("missing-1")
    objs += [_line("user", "missing-1", "a3", "late"), _line("assistant", "a4", "missing-1", [{"type": "text", "text": "x"}])]
    src = tmp_path / "logical.jsonl"
    src.write_bytes(_jsonl(objs))
    rng = random.Random(5)
    batches = sum(grow_and_compare(str(src), str(tmp_path), rng)[0] for _ in range(16))
    assert batches > 16
