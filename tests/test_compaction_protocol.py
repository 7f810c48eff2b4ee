"""Summary protocol (seed 004): essential sections, the marker, optional sections each closed; only
closed sections are installed; a cut before the marker is retried with strictly smaller input, at
most 3 calls, then deterministic recovery; the output budget derives from the installable space and
the summary is size-checked before it is installed."""

from __future__ import annotations

import pytest

from inspector.analysis.protocol import ESSENTIAL_MARKER, ESSENTIAL_SECTIONS, summary_completeness
from inspector.analysis.tokens import get_tokenizer
from inspector.compaction.execute import repair
from inspector.compaction.plan import Budgets, plan
from inspector.compaction.types import SummaryRequest, SummaryResult
from inspector.ledger.model import Usage
from tests.compaction_helpers import Builder, Scripted, protocol_summary, report_of, words

BUDGETS = Budgets(window=200_000, reserve=1_000, keep_recent=300)
CUT_EARLY = SummaryResult("truncated", "## Active request\nMigrate the exp", Usage(900, 400))


def _session(turns: int = 6) -> bytes:
    b = Builder()
    for t in range(turns):
        b.turn(f"request {t}: " + words(20, t), [[("read", {"path": f"m{t}.py"}, words(200, t))],
                                                [("edit", {"path": f"m{t}.py"}, words(40, t))]], words(30, t))
    return b.native()


def test_the_prompt_asks_for_essentials_then_the_marker_then_closed_optional_sections() -> None:
    s = Scripted()
    repair(plan(report_of(_session()), "resummarize", BUDGETS), s)
    prompt = s.requests[0].prompt
    positions = [prompt.index(f"## {name}") for name in ESSENTIAL_SECTIONS]
    assert positions == sorted(positions)
    assert prompt.index(ESSENTIAL_MARKER) > positions[-1]
    assert "<!-- end: NAME -->" in prompt
    assert "<conversation>" in prompt and "[User]: request 0" in prompt
    assert "summarization assistant" in s.requests[0].system


def test_only_closed_sections_are_installed() -> None:
    essentials = protocol_summary(SummaryRequest("", "[User]: x", 0))
    text = essentials + "## Decisions\n- stream in batches\n<!-- end: Decisions -->\n## Files\n- src/a.py\n- src/b"
    assert summary_completeness(text) == "optional_truncated"
    res = repair(plan(report_of(_session()), "resummarize", BUDGETS), Scripted([SummaryResult("truncated", text, Usage(1, 1))]))
    assert res.status == "built" and len(res.calls) == 1
    assert res.summary is not None and "## Decisions" in res.summary and "## Files" not in res.summary
    assert summary_completeness(res.summary) == "complete"
    assert res.truncated and res.essential_complete
    assert res.entry is not None and res.entry["details"]["truncated"] is True


def test_a_cut_before_the_marker_retries_with_strictly_smaller_input_then_recovers() -> None:
    tok = get_tokenizer()
    p = plan(report_of(_session()), "resummarize", BUDGETS)
    s = Scripted([CUT_EARLY] * 5)
    res = repair(p, s)
    assert len(s.requests) == 3  # at most three calls for one summary
    sizes = [tok.count(r.system) + tok.count(r.prompt) for r in s.requests]
    assert sizes[0] > sizes[1] > sizes[2]  # each retry strictly smaller
    assert [c.kind for c in res.calls] == ["initial", "retry", "retry"]
    assert res.status == "recovered" and res.failure_reason == "summary_budget"
    assert res.checkpoint is not None and res.checkpoint.shape == "recent_window"
    assert res.usage == Usage(2_700, 1_200)  # billed calls are summed even when they fail
    # the user's words are protected: every retry still carries every request of the range
    for req in s.requests:
        for t in range(5):
            assert f"[User]: request {t}:" in req.prompt


def test_a_retry_that_succeeds_reports_what_it_left_out() -> None:
    p = plan(report_of(_session()), "resummarize", BUDGETS)
    res = repair(p, Scripted([CUT_EARLY]))
    assert res.status == "built" and len(res.calls) == 2
    assert res.dropped and not res.complete
    ix = p.index
    assert {ix.rec(q).role for q in res.dropped} <= {"assistant", "tool"}
    assert res.after is not None and res.after.holes == len(res.dropped)  # shown as what they are


def test_no_call_is_made_with_input_that_is_not_smaller() -> None:
    b = Builder()
    for t in range(8):
        b.user(f"note {t}: " + words(60, t))  # nothing but the user's own words: nothing to drop
    b.assistant("ok")
    b.user("continue")
    p = plan(report_of(b.native()), "resummarize", BUDGETS)
    assert p.action == "summarize"
    s = Scripted([CUT_EARLY] * 3)
    res = repair(p, s)
    assert len(s.requests) == 1
    assert res.status == "recovered" and res.failure_reason == "summary_budget"


@pytest.mark.parametrize(("window", "reserve", "keep"), [(200_000, 16_384, 300), (6_000, 512, 1_500), (3_000, 256, 600)])
def test_the_output_budget_derives_from_the_installable_space(window: int, reserve: int, keep: int) -> None:
    p = plan(report_of(_session()), "resummarize", Budgets(window=window, reserve=reserve, keep_recent=keep))
    assert p.action == "summarize"
    assert p.target_tokens <= 4_000 and p.target_tokens <= p.installable_tokens
    assert p.max_output_tokens <= p.target_tokens * 1.1
    assert p.installable_tokens == p.budgets.available - p.checkpoint.tail_tokens  # type: ignore[union-attr]
    s = Scripted()
    repair(p, s)
    assert all(r.max_output_tokens == p.max_output_tokens for r in s.requests)
    if window == 200_000:
        assert p.target_tokens == 4_000 and p.max_output_tokens == 4_400


def test_an_oversized_summary_is_not_installed() -> None:
    p = plan(report_of(_session()), "resummarize", Budgets(window=6_000, reserve=512, keep_recent=1_500))
    huge = protocol_summary(SummaryRequest("", "[User]: x", 0), body=words(8_000, 1))
    res = repair(p, Scripted([SummaryResult("ok", huge, Usage(10, 8_000))]))
    assert res.status == "recovered" and res.failure_reason == "checkpoint_oversized"
    assert res.summary is not None and huge not in res.summary


def test_an_empty_answer_is_not_installed() -> None:
    p = plan(report_of(_session()), "resummarize", BUDGETS)
    res = repair(p, Scripted([SummaryResult("ok", "", Usage(5, 0))] * 3))
    assert res.status == "recovered" and res.failure_reason == "summary_provider"
