"""A transcript whose first line continues another transcript.

Claude Code 1.0.x started the file of a continued session with a line whose parentUuid names the
last line of the session it continues, in another file. Two real transcripts never read before
(SWORDIntel/claude-backups, Claude Code 1.0.90: a7cf1760-....jsonl and a76fc974-....jsonl) begin
so. Their chain stops at that first line, as Claude Code's does, and nothing of the file is written
before it; we reported an error all the same ("the chain Claude Code sends stops here, so the 0
messages written before it are not sent"). The real CLI (2.1.328) resumed both exactly as we
predict, from that line on. Now it is an info note (file_structure); a line before it that is not
read (damaged, of a type Claude Code does not know) keeps the error.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from inspector.analysis import analyze
from inspector.analysis.export import context_json
from inspector.formats import load_bytes
from tests.test_claude_code import _jsonl, _line
from tests.test_incremental import grow_and_compare

ELSEWHERE = "9f1c2d3e-0000-4000-8000-000000000000"  # (the other transcript's last line)


def _session(first_parent: str | None) -> list[dict[str, Any]]:
    return [
        _line("user", "u1", first_parent, "carry on", timestamp="2026-01-01T00:00:00Z"),
        _line("assistant", "a1", "u1", [{"type": "text", "text": "on it"}]),
        _line("user", "u2", "a1", "and test it"),
        _line("assistant", "a2", "u2", [{"type": "text", "text": "tested"}]),
    ]


def test_a_first_line_continuing_another_transcript_loses_nothing() -> None:
    report = analyze(load_bytes(_jsonl(_session(ELSEWHERE)), "continued.jsonl"))
    assert not [f for f in report.findings if f.severity in ("error", "warning")], [f.message for f in report.findings]
    note = [f for f in report.findings if f.data.get("problem") == "chain_from_elsewhere"]
    assert len(note) == 1 and note[0].severity == "info" and note[0].code == "file_structure"
    assert "none is left out" in note[0].message
    # What is sent is what a transcript starting there sends: every line.
    root = analyze(load_bytes(_jsonl(_session(None)), "root.jsonl"))
    sent = [m["record_id"] for m in context_json(report)["messages"]]
    assert sent == [m["record_id"] for m in context_json(root)["messages"]] == ["u1", "a1", "u2", "a2"]


def test_an_unread_line_before_it_keeps_the_error() -> None:
    objs = [_line("user", "u0", None, "lost"), *_session("u0")]
    objs[0]["type"] = True  # (Claude Code holds no line of a type it does not know)
    report = analyze(load_bytes(_jsonl(objs), "damaged.jsonl"))
    assert any(f.severity == "error" and "the chain Claude Code sends stops here" in f.message for f in report.findings)


def test_a_followed_continued_transcript_reads_as_the_full_analysis(tmp_path: Path) -> None:
    src = tmp_path / "continued.jsonl"
    src.write_bytes(_jsonl(_session(ELSEWHERE)))
    rng = random.Random(7)
    assert sum(grow_and_compare(str(src), str(tmp_path), rng)[0] for _ in range(8)) > 8
