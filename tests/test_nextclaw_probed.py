"""What the real NextClaw sent, held as rules (docs/runtimes/nextclaw.md, "Checked against the real
runtime"). Each journal here was run through NextClaw's own kernel (Peiiii/nextclaw 001fb682, its
TypeScript sources) for one turn against a scripted OpenAI-compatible server, and the request it sent
was compared with inspector's prediction; each test holds one rule that comparison found, cited to
NextClaw's source at that commit (`K/` = packages/nextclaw-kernel/src/, `N/` =
packages/ncp-packages/nextclaw-ncp/src/, `T/` = packages/ncp-packages/nextclaw-ncp-toolkit/src/agent/)."""

from __future__ import annotations

from pathlib import Path

from inspector.analysis import analyze
from inspector.analysis.engine import Report
from inspector.formats import nextclaw
from tests.nextclaw_store import Journal, checkpoint, message, timeline, ts


def _analyze(path: Path) -> Report:
    return analyze(nextclaw.load(str(path), None, None))


def _compacted(summary: str) -> Journal:
    j = Journal()
    j.sent(message("u1", "user", "Summarise the report", ts(1)))
    j.completed(message("a1", "assistant", "It says X.", ts(2)))
    j.sent(timeline(checkpoint("ctx-1", summary, ts(2), ts(30))))
    j.sent(message("u2", "user", "And the appendix?", ts(31)))
    return j


def test_the_summary_block_is_sent_trimmed(tmp_path: Path) -> None:
    """The model input builder trims each block of its one system message before joining them
    (K/services/agent-run-model-input-builder.service.ts:32, :90-93): a summary's trailing
    whitespace never reaches the model (NextClaw sent "...\\n\\nReport summary." for "Report summary.\\n")."""
    rep = _analyze(_compacted("## Active Request\nReport summary.\n \u3000\n").write(tmp_path))
    assert rep.context[0].kind == "summary"
    assert rep.context[0].text == nextclaw.PREAMBLE + "\n\n## Active Request\nReport summary."
    assert [it.record_id for it in rep.context[1:]] == ["u2"]


def test_an_empty_summary_leaves_the_preamble_alone(tmp_path: Path) -> None:
    rep = _analyze(_compacted("  \n").write(tmp_path))
    assert rep.context[0].text == nextclaw.PREAMBLE
