"""Chunked re-summarization (ADR 0302): contiguous chunks that each fit the request budget, at most
16 requests, each carrying the previous chunk's summary through the update prompt, the file list on
the last one, usage summed; only an empty range or more than 16 requests falls back on budget
grounds (`summary_budget`)."""

from __future__ import annotations

import itertools
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inspector.analysis.tokens import get_tokenizer
from inspector.compaction.chunks import MAX_REQUESTS
from inspector.compaction.execute import repair
from inspector.compaction.plan import Budgets, PlanError, RepairPlan, plan
from inspector.compaction.types import SummaryRequest, SummaryResult
from inspector.ledger.model import Usage
from tests.compaction_helpers import (
    Builder,
    Scripted,
    budgets_st,
    protocol_summary,
    report_of,
    sessions,
    words,
)


def _long_session() -> Builder:
    b = Builder()
    for t in range(12):
        b.turn(
            f"task {t}: " + words(25, t),
            [[("read", {"path": f"src/mod{t}.py"}, words(300, t))], [("edit", {"path": f"src/mod{t}.py"}, words(60, t + 1))]],
            words(40, t),
        )
    return b


def _assert_partition(p: RepairPlan) -> None:
    assert p.range is not None
    lo, hi = p.range
    chunks = p.requests
    assert chunks[0].lo == lo and chunks[-1].hi == hi
    for a, b in itertools.pairwise(chunks):
        assert a.hi == b.lo
    covered = [q for ch in chunks for q in ch.positions]
    expected = [q for q in p.index.messages_in(lo, hi) if q not in (p.checkpoint.keep if p.checkpoint else ())]
    assert covered == expected  # every message of the range, exactly once, in order
    for ch in chunks:
        assert ch.prompt_tokens <= ch.budget
        assert all(ch.lo <= q < ch.hi for q in ch.positions)


@pytest.mark.parametrize("fmt", ["pi", "native"])
def test_a_range_too_large_for_one_request_is_summarized_in_chunks(fmt: str) -> None:
    r = report_of(_long_session().render(fmt))
    p = plan(r, "resummarize", Budgets(window=200_000, reserve=1_000, keep_recent=300, request=2_500))
    assert p.action == "summarize" and 2 <= len(p.requests) <= MAX_REQUESTS
    _assert_partition(p)
    assert [ch.file_list for ch in p.requests] == [False] * (len(p.requests) - 1) + [True]
    usages = [(100 + k, 20 + k) for k in range(len(p.requests))]
    outputs = [protocol_summary(SummaryRequest("", "", 0), body=f"CHUNK-{k}") for k in range(len(p.requests))]
    s = Scripted([SummaryResult("ok", outputs[k], Usage(*usages[k])) for k in range(len(p.requests))])
    res = repair(p, s)
    assert res.status == "built" and len(s.requests) == len(p.requests)
    tok = get_tokenizer()
    for k, req in enumerate(s.requests):
        assert req.max_output_tokens == p.max_output_tokens
        assert tok.count(req.system) + tok.count(req.prompt) <= p.requests[k].budget  # as sent, not only as planned
        has_files = "<read-files>" in req.prompt or "<modified-files>" in req.prompt
        assert has_files == (k == len(s.requests) - 1)  # the file list rides on the last request
        if k:
            prev = re.search(r"<previous-summary>\n(.*?)\n</previous-summary>", req.prompt, re.S)
            assert prev is not None and f"CHUNK-{k - 1}" in prev.group(1)  # the update prompt carries it
            assert "NEW messages" in req.prompt
    assert res.usage == Usage(sum(u[0] for u in usages), sum(u[1] for u in usages))
    assert res.summary is not None and f"CHUNK-{len(p.requests) - 1}" in res.summary
    assert res.after is not None and res.after.holes == 0 and res.after.orphans == 0
    entry = res.entry
    assert entry is not None
    details = entry["details"]
    assert details["requests"] == len(p.requests)
    used = details["usage"]
    assert (used["input"], used["output"]) == (res.usage.input, res.usage.output)


def test_more_than_16_requests_falls_back_with_summary_budget() -> None:
    r = report_of(_long_session().native())
    p = plan(r, "resummarize", Budgets(window=200_000, reserve=1_000, keep_recent=300, request=700))
    assert p.action == "recover" and p.reason == "summary_budget"
    assert len(p.requests) > MAX_REQUESTS  # shown, not made
    res = repair(p, Scripted())
    assert res.status == "recovered" and res.failure_reason == "summary_budget" and not res.calls
    assert res.entry is not None and res.entry["details"]["failure_reason"] == "summary_budget"


def test_an_empty_range_over_budget_falls_back_with_summary_budget() -> None:
    b = Builder()
    b.user("Read the export and tell me what is wrong with it.")
    _, ids = b.assistant("Reading it.", [("read", {"path": "export.csv"})])
    b.tool(ids[0], words(2_500, 3))
    r = report_of(b.native())
    p = plan(r, "compact", Budgets(window=2_000, reserve=200, keep_recent=500))
    assert p.action == "recover" and p.reason == "summary_budget"
    assert p.checkpoint is not None and p.checkpoint.failure_reason == "summary_budget"


def test_a_range_that_fits_one_request_is_one_request() -> None:
    r = report_of(_long_session().pi())
    p = plan(r, "resummarize", Budgets(window=200_000, reserve=1_000, keep_recent=300))
    assert len(p.requests) == 1 and p.requests[0].file_list


def test_request_budget_too_small_for_anything_is_a_budget_fallback() -> None:
    r = report_of(_long_session().pi())
    with pytest.raises(PlanError):
        plan(r, "resummarize", Budgets(window=300, reserve=100))
    p = plan(r, "resummarize", Budgets(window=200_000, reserve=1_000, keep_recent=300, request=50))
    assert p.action == "recover" and p.reason == "summary_budget"


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sessions(), budgets_st, st.sampled_from([None, 800, 1_500, 4_000]), st.sampled_from(["compact", "resummarize"]))
def test_the_plan_covers_its_range_exactly_once_and_each_chunk_fits(
    s: tuple[str, bytes, Builder], budgets: dict[str, int], request: int | None, strategy: str
) -> None:
    _, data, _ = s
    r = report_of(data)
    try:
        p = plan(r, strategy, Budgets(request=request, **budgets))
    except PlanError:
        return
    if p.action == "summarize":
        assert 1 <= len(p.requests) <= MAX_REQUESTS
        _assert_partition(p)
    elif p.requests:  # a fallback that shows the requests it would have needed
        _assert_partition(p)


def test_targets_that_cannot_fit_are_not_counted_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    """When the range needs more than 16 requests at every target tried, only the attempt the plan
    shows has its requests' prompts counted whole (a 20 MB OpenClaw plan spent 8 of its 10 s
    counting the prompts of eight attempts it then threw away), and it is the attempt counting
    them all picks: the fewest requests, at the largest target."""
    from inspector.compaction import plan as plan_module

    r = report_of(_long_session().native())
    budgets = Budgets(window=200_000, reserve=1_000, keep_recent=300, request=700)
    whole = {"n": 0}
    exact = plan_module._RangeRequests.exact

    def counted(self: object, texts: list[str], carries: bool, file_list: bool) -> int:
        whole["n"] += bool(texts)
        return exact(self, texts, carries, file_list)  # type: ignore[arg-type]

    monkeypatch.setattr(plan_module._RangeRequests, "exact", counted)
    p = plan(r, "resummarize", budgets)
    assert p.action == "recover" and len(p.requests) > MAX_REQUESTS
    assert whole["n"] <= 2 * len(p.requests)  # (the shown attempt's requests, and its exact check's splits)
    mine = [(ch.lo, ch.hi, ch.prompt_tokens) for ch in p.requests], p.target_tokens
    # Every attempt counted whole, as before: the same attempt is shown.
    monkeypatch.setattr(plan_module, "least_requests", lambda *a, **k: 0)
    whole["n"] = 0
    q = plan(r, "resummarize", budgets)
    assert ([(ch.lo, ch.hi, ch.prompt_tokens) for ch in q.requests], q.target_tokens) == mine
    assert whole["n"] > 2 * len(p.requests)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(300, 3_000))
def test_the_fewest_requests_are_the_ones_counting_every_attempt_finds(request: int) -> None:
    from inspector.compaction import plan as plan_module

    r = report_of(_long_session().native())
    budgets = Budgets(window=200_000, reserve=1_000, keep_recent=300, request=request)
    p = plan(r, "resummarize", budgets)
    least = plan_module.least_requests
    try:
        plan_module.least_requests = lambda *a, **k: 0  # type: ignore[assignment]
        q = plan(r, "resummarize", budgets)
    finally:
        plan_module.least_requests = least  # type: ignore[assignment]
    assert (p.action, p.reason, p.target_tokens, [(ch.lo, ch.hi, ch.prompt_tokens) for ch in p.requests]) == (
        q.action, q.reason, q.target_tokens, [(ch.lo, ch.hi, ch.prompt_tokens) for ch in q.requests])  # fmt: skip


def test_the_attempt_shown_is_the_first_with_the_fewest_requests(monkeypatch: pytest.MonkeyPatch) -> None:
    """Floors and whole counts scripted per target: none fits, two tie on the fewest, one makes no
    request at all; the one shown is the first of the tie, counted whole."""
    from types import SimpleNamespace

    from inspector.compaction import plan as plan_module

    targets = plan_module._targets(8_000)
    assert len(targets) >= 5
    floors = [20, None, 18, 17, 30] + [40] * (len(targets) - 5)
    wholes = [21, None, 18, 18, 31] + [41] * (len(targets) - 5)
    counted: list[int] = []

    def at(target: int) -> int:
        return targets.index(target)

    monkeypatch.setattr(plan_module, "least_requests", lambda *a, **k: floors[at(a[5])])

    def chunk_range(*a: object, **k: object) -> list[object] | None:
        counted.append(at(a[5]))  # type: ignore[arg-type]
        n = wholes[at(a[5])]  # type: ignore[arg-type]
        return None if n is None else [object()] * n

    monkeypatch.setattr(plan_module, "chunk_range", chunk_range)
    d = SimpleNamespace(rb=SimpleNamespace(request=None, window=100_000), ix=None, lo=0, carried_text="")
    tail = SimpleNamespace(cut=10, keep=())
    t, _, _, chunks = plan_module._fewest_chunks(d, tail=tail, target=8_000, read=[], modified=[])  # type: ignore[arg-type]
    assert t == targets[2] and chunks is not None and len(chunks) == 18
    assert sorted(counted) == [2, 3]  # (the floor 17 counted first: 18 whole; then the first 18)
