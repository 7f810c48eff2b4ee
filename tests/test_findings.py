"""Findings not covered by the sample sessions: unanswered calls, over budget, storms."""

from __future__ import annotations

import json
from pathlib import Path

from inspector.analysis import analyze
from inspector.formats import load
from tests.conftest import SHARED

KILLED = SHARED / "peers" / "pi" / "corpus" / "killed_mid_tool.jsonl"


def test_unanswered_tool_call_while_pi_was_killed_mid_tool() -> None:
    r = analyze(load(str(KILLED), upto_line=71))
    (f,) = [f for f in r.findings if f.code == "unanswered_tool_call"]
    assert f.severity == "warning"  # pi sends a synthetic error result: valid, but the model sees no output
    assert "call_k04_1_0" in f.message and "No result provided" in f.message
    assert r.ledger.records[f.records[0]].line == 31
    # After the compaction that summarized the orphan call, nothing is unanswered any more.
    r2 = analyze(load(str(KILLED)))
    assert not [f for f in r2.findings if f.code == "unanswered_tool_call"]


def test_over_budget_against_window_and_reserve() -> None:
    r = analyze(load(str(KILLED)))
    total = r.context_tokens
    assert not [f for f in analyze(load(str(KILLED)), window=total * 2, reserve=10).findings if f.code == "over_budget"]
    (warn,) = [f for f in analyze(load(str(KILLED)), window=total + 100, reserve=200).findings if f.code == "over_budget"]
    assert warn.severity == "warning"
    (err,) = [f for f in analyze(load(str(KILLED)), window=total - 1).findings if f.code == "over_budget"]
    assert err.severity == "error" and f"{total:,}" in err.message


def _entry(i: int, parent: int | None, **kw: object) -> dict:
    return {"id": f"{i:08x}", "parentId": f"{parent:08x}" if parent is not None else None, "timestamp": "t", **kw}


def test_compaction_storm_within_one_turn(tmp_path: Path) -> None:
    objs: list[dict] = [{"type": "session", "version": 3, "id": "s", "timestamp": "t", "cwd": "/"}]
    objs.append(_entry(1, None, type="message", message={"role": "user", "content": "fix the tests"}))
    n = 1
    for step in range(4):
        n += 1
        objs.append(
            _entry(n, n - 1, type="message", message={
                "role": "assistant", "stopReason": "toolUse",
                "content": [{"type": "toolCall", "id": f"c{step}", "name": "bash", "arguments": {"cmd": "pytest"}}]})
        )
        n += 1
        objs.append(_entry(n, n - 1, type="message", message={
            "role": "toolResult", "toolCallId": f"c{step}", "toolName": "bash", "content": [{"type": "text", "text": "1 failed"}]}))
        n += 1
        objs.append(_entry(n, n - 1, type="compaction", summary=f"## Goal\nfix tests (pass {step})", firstKeptEntryId=f"{n - 2:08x}", tokensBefore=9000))
    f = tmp_path / "s.jsonl"
    f.write_text("".join(json.dumps(o) + "\n" for o in objs))
    r = analyze(load(str(f)))
    (storm,) = [x for x in r.findings if x.code == "compaction_storm"]
    assert len(storm.records) == 4 and "line 2" in storm.message
