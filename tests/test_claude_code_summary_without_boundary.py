"""A compaction Claude Code 1.0.x wrote: a summary line and no compact boundary.

Claude Code 1.0.x (e.g. 1.0.90) wrote no `system` line of subtype `compact_boundary`: only a
`user` line marked `isCompactSummary`, `parentUuid: null`, its text "This session is being
continued from a previous conversation that ran out of context. The conversation is summarized
below: ...", starting a new chain in the same file. A real transcript (SWORDIntel/claude-backups,
e1ffaf02-....jsonl, Claude Code 1.0.90: the summary at line 134) read as "0 checkpoints" and its
109 main-thread messages before that line as inactive; the real CLI (2.1.328) resumed it sending
the summary line and what follows, as we predicted. Now the summary line is the checkpoint, and
what the main thread wrote before it is what it summarized. What is sent does not change.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from inspector.analysis import analyze
from inspector.analysis.export import context_json
from inspector.formats import load, load_bytes
from inspector.formats.claude_code_writer import summary_body
from tests.test_claude_code import _jsonl, _line
from tests.test_incremental import grow_and_compare

SUMMARY = (
    "This session is being continued from a previous conversation that ran out of context. "
    "The conversation is summarized below:\nAnalysis:\nThe user asked for a build.\n\n"
    "Summary:\n1. Primary Request and Intent:\n   Build it, then test it.\n"
    "Please continue the conversation from where we left it off without asking the user any further questions. "
    "Continue with the last task that you were asked to work on."
)


def _session(*, before: bool = True, sidechain: bool = False) -> list[dict[str, Any]]:
    """A 1.0-style transcript: a conversation, then its compaction (the summary line, a root),
    then the conversation going on from it."""
    objs = [
        _line("user", "u1", None, "build it"),
        _line("assistant", "a1", "u1", [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {}}], stop="tool_use"),
        _line("user", "r1", "a1", [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]),
        _line("assistant", "a2", "r1", [{"type": "text", "text": "built"}]),
        _line("user", "u2", "a2", "now test it"),
    ] if before else []
    if sidechain:
        objs += [
            _line("user", "x1", None, "a sub-agent's task", isSidechain=True),
            _line("assistant", "x2", "x1", [{"type": "text", "text": "done"}], isSidechain=True),
        ]
    return [
        *objs,
        _line("user", "s1", None, SUMMARY, isCompactSummary=True),
        _line("assistant", "a3", "s1", [{"type": "text", "text": "testing"}]),
        _line("user", "u3", "a3", "go on"),
        _line("assistant", "a4", "u3", [{"type": "text", "text": "tested"}]),
    ]


def test_the_summary_line_is_a_checkpoint_summarizing_the_main_thread_before_it() -> None:
    report = analyze(load_bytes(_jsonl(_session(sidechain=True)), "one-oh.jsonl"))
    (v,) = report.checkpoints
    assert v.record.id == "s1" and v.record.line == 8
    assert v.checkpoint.summary == SUMMARY
    counts = report.coverage_counts()
    assert counts["summarized"] == 5 and counts["hole"] == 0 and counts["live"] == 3
    assert counts["inactive"] == 2  # (the sub-agent's lines: not the main thread's)
    states = {report.ledger.records[s].id: report.states[s] for s in report.path if report.states[s]}
    assert all(states[u] == "summarized" for u in ("u1", "a1", "r1", "a2", "u2"))
    assert not [f for f in report.findings if f.severity in ("error", "warning")], [f.message for f in report.findings]


def test_what_is_sent_does_not_change() -> None:
    report = analyze(load_bytes(_jsonl(_session()), "one-oh.jsonl"))
    sent = context_json(report)["messages"]
    assert [(m["record_id"], m["kind"]) for m in sent] == [("s1", "summary"), ("a3", "message"), ("u3", "message"), ("a4", "message")]
    # The same items, text for text, as a transcript holding only the summary's chain.
    alone = context_json(analyze(load_bytes(_jsonl(_session(before=False)), "alone.jsonl")))["messages"]
    assert [(m["record_id"], m["tokens"], m["preview"]) for m in sent] == [(m["record_id"], m["tokens"], m["preview"]) for m in alone]


def test_a_summary_line_with_nothing_before_it_stays_a_message() -> None:
    report = analyze(load_bytes(_jsonl(_session(before=False)), "alone.jsonl"))
    assert not report.checkpoints
    assert report.context[0].kind == "message" and report.context[0].record_id == "s1"


def test_a_summary_line_after_its_boundary_is_still_the_boundarys() -> None:
    objs = _session()
    boundary = _line(
        "system", "b1", None, subtype="compact_boundary", content="Conversation compacted", logicalParentUuid="u2",
        compactMetadata={"trigger": "auto", "preTokens": 1000},
    )
    objs.insert(5, boundary)
    report = analyze(load_bytes(_jsonl(objs), "two-one.jsonl"))
    (v,) = report.checkpoints
    assert v.record.id == "b1" and v.checkpoint.summary == SUMMARY


def test_read_from_its_file_and_followed_it_reads_the_same(tmp_path: Path) -> None:
    src = tmp_path / "one-oh.jsonl"
    src.write_bytes(_jsonl(_session(sidechain=True)))
    on_disk = analyze(load(str(src)))
    assert [v.record.id for v in on_disk.checkpoints] == ["s1"]
    assert on_disk.coverage_counts() == analyze(load_bytes(src.read_bytes(), "one-oh.jsonl")).coverage_counts()
    rng = random.Random(11)
    assert sum(grow_and_compare(str(src), str(tmp_path), rng)[0] for _ in range(8)) > 8


def test_its_summary_is_the_answer_inside_the_1_0_wrapper() -> None:
    assert summary_body(SUMMARY) == "1. Primary Request and Intent:\n   Build it, then test it."
    assert summary_body(SUMMARY.replace("Analysis:\nThe user asked for a build.\n\nSummary:\n", "")) == (
        "1. Primary Request and Intent:\n   Build it, then test it."
    )


def test_an_empty_1_0_summary_leaves_what_it_removed_a_hole() -> None:
    objs = _session()
    empty = SUMMARY.split("Analysis:")[0] + "\n" + SUMMARY.split("\n")[-1]
    objs[5]["message"]["content"] = empty
    report = analyze(load_bytes(_jsonl(objs), "empty.jsonl"))
    (hole,) = [f for f in report.findings if f.code == "hole"]
    assert hole.severity == "error" and hole.by_role == {"user": 2, "assistant": 2, "tool": 1}
    assert report.context[0].kind == "summary" and report.context[0].text == empty  # (sent all the same)
