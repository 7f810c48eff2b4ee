"""Issue 16 point 4: what a Claude Code 2.1.328 summary represents follows what its summarizer was
given, so a message it was given and also kept verbatim is both represented and retained
(DESIGN §2: the three sets may overlap), shown so in `--json` and in the app.

The sessions are the real CLI's (tests/peers/claude_code_resume/sessions/, made by its harness):
`cc_live_question_summarized` auto-compacts in the middle of a tool loop, at the turn's first
round, and keeps that round (the call and its result) after the summary; the differential
campaign's summarizer requests show such a round is in what the summarizer was given
(tests/differential/fixtures/cc-s1-0003). `cc_parallel_then_compact`'s `/compact` between turns
keeps the last reply without showing it to the summarizer: retained only.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inspector.analysis import analyze
from inspector.analysis.export import checkpoint_json
from inspector.cli.main import main
from inspector.formats import load
from inspector.tui.model import state_label
from tests.conftest import REPO

SESSIONS = REPO / "tests" / "peers" / "claude_code_resume" / "sessions"
MID_LOOP = SESSIONS / "cc_live_question_summarized.jsonl"
BETWEEN_TURNS = SESSIONS / "cc_parallel_then_compact.jsonl"


def _preserved(path: Path) -> list[str]:
    for raw in path.read_text().splitlines():
        o = json.loads(raw)
        if o.get("subtype") == "compact_boundary":
            return o["compactMetadata"]["preservedMessages"]["uuids"]
    raise AssertionError(f"{path} has no boundary")


def test_a_round_kept_mid_loop_that_the_summarizer_saw_is_represented_and_retained() -> None:
    report = analyze(load(str(MID_LOOP)))
    led = report.ledger
    kept = [led.by_id()[u] for u in _preserved(MID_LOOP)]
    assert [led.records[s].role for s in kept] == ["assistant", "tool"]  # the call and its result
    (view,) = report.checkpoints
    assert set(kept) <= view.represents and kept == view.retains
    assert set(kept) <= set(view.own_range)  # given to its own summarizer call
    assert all(report.states[s] == "retained" and report.summarized_by[s] == 1 for s in kept)
    j = checkpoint_json(report, view)
    assert j["represented_and_retained"]["count"] == 2
    assert j["represents"]["count"] == j["removes"]["count"] + 2  # the sets overlap
    assert all(
        state_label(report, led.records[s]) == "retained, and summarized by checkpoint 1" for s in kept
    )


def test_context_json_names_the_retained_messages_a_summary_also_stands_for(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["context", str(MID_LOOP), "--json"]) == 0
    items = json.loads(capsys.readouterr().out)["messages"]
    kept = set(_preserved(MID_LOOP))
    marked = [m for m in items if m.get("also_summarized_by") == 1]
    assert {m["record_id"] for m in marked} == kept
    assert all(m["kind"] == "message" for m in marked)


def test_the_reply_a_compact_between_turns_keeps_unseen_is_retained_only() -> None:
    report = analyze(load(str(BETWEEN_TURNS)))
    led = report.ledger
    kept = [led.by_id()[u] for u in _preserved(BETWEEN_TURNS)]
    view = report.checkpoints[0]
    assert kept == view.retains and not set(kept) & view.represents
    assert "represented_and_retained" not in checkpoint_json(report, view)
