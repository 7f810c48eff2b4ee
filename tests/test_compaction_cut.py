"""Safe cut (issue 4, point 1 / brief point 2): never between a tool call and its result, never on
a tool result, never summarizing the active turn's own user message."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings

from inspector.analysis.tokens import get_tokenizer
from inspector.compaction.cut import PathIndex, active_user, choose_tail
from inspector.compaction.execute import repair
from inspector.compaction.plan import Budgets, plan
from tests.compaction_helpers import Builder, Scripted, budgets_st, report_of, sessions, words


def _parallel_session() -> Builder:
    """Completed turns with parallel tool calls whose results are long, then a final answer."""
    b = Builder()
    for t in range(6):
        b.turn(
            words(20, t),
            [[("read", {"path": f"a{t}.py"}, words(150, t)), ("read", {"path": f"b{t}.py"}, words(120, t + 1))],
             [("bash", {"cmd": "pytest"}, words(200, t + 2))]],
            words(30, t),
        )
    return b


@pytest.mark.parametrize("fmt", ["pi", "native"])
def test_the_cut_never_lands_on_a_tool_result_nor_splits_a_call_from_its_result(fmt: str) -> None:
    r = report_of(_parallel_session().render(fmt))
    ix = PathIndex(r, get_tokenizer())
    naive_hits_a_result = False
    for keep in range(100, 3_000, 37):
        p = plan(r, "compact", Budgets(window=200_000, reserve=1_000, keep_recent=keep))
        cp = p.checkpoint
        assert cp is not None
        rec = ix.rec(cp.cut)
        assert rec.kind == "message" and rec.role in ("user", "assistant")
        assert ix.crossing[cp.cut] == 0
        # every call before the cut has its result before the cut, and vice versa
        for call, at in ix.call_at.items():
            res = ix.result_at.get(call)
            assert res is None or (at < cp.cut) == (res < cp.cut)
        if p.entry is not None and fmt == "pi":
            assert p.entry["firstKeptEntryId"] == rec.id
        # where a plain token walk would have cut: at least one of these budgets lands on a result
        msgs = ix.messages_in(0, ix.end)
        total = 0
        for q, n in zip(reversed(msgs), reversed(ix.context_tokens(msgs)), strict=True):
            if total + n > keep:
                break
            total += n
            first = q
        naive_hits_a_result |= ix.rec(first).role == "tool"
    assert naive_hits_a_result


def _active_turn_session(step_words: int = 200) -> Builder:
    b = Builder()
    for t in range(4):
        b.turn(words(20, t), [[("read", {"path": f"x{t}.py"}, words(100, t))]], words(20, t))
    b.user("Now migrate the exporter to the streaming writer and keep the CSV byte-identical.")
    for s in range(6):
        _, ids = b.assistant(words(10, s), [("edit", {"path": f"src/e{s}.py"})])
        b.tool(ids[0], words(step_words, s), "edit")
    return b


@pytest.mark.parametrize("fmt", ["pi", "native"])
def test_the_active_turns_own_request_is_never_summarized(fmt: str) -> None:
    data = _active_turn_session().render(fmt)
    r = report_of(data)
    ix = PathIndex(r, get_tokenizer())
    active = active_user(ix)
    assert active is not None and "streaming writer" in (ix.rec(active).message.text())  # type: ignore[union-attr]
    # keep-recent far below the active turn: a plain cut would land inside it
    p = plan(r, "compact", Budgets(window=200_000, reserve=1_000, keep_recent=400))
    cp = p.checkpoint
    assert cp is not None
    assert active in cp.retains
    for ch in p.requests:
        assert active not in ch.positions  # never sent to the summarizer
    assert not any(a <= active < b for a, b in cp.represents)
    if fmt == "pi":
        assert cp.cut == active and not cp.keep  # pi: contiguous tail from the request
    else:
        assert cp.keep == (active,) and cp.cut > active  # native: kept ahead of a recent window
    res = repair(p, Scripted())
    assert res.status == "built" and res.after is not None
    assert not [f for f in res.after.findings if f.code == "live_question_summarized"]
    assert res.after.holes == 0 and res.after.orphans == 0


def test_pi_quotes_an_active_request_whose_turn_outgrows_the_window() -> None:
    data = _active_turn_session(step_words=600).pi()
    r = report_of(data)
    p = plan(r, "compact", Budgets(window=3_000, reserve=300, keep_recent=400))
    cp = p.checkpoint
    assert cp is not None and cp.quote_active is not None
    res = repair(p, Scripted())
    assert res.status == "built" and res.summary is not None
    request = "Now migrate the exporter to the streaming writer and keep the CSV byte-identical."
    assert request in res.summary  # verbatim, so the instruction survives
    assert res.after is not None
    (live,) = [f for f in res.after.findings if f.code == "live_question_summarized"]
    assert live.severity == "warning" and "verbatim" in live.message


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sessions(), budgets_st)
def test_every_tail_starts_at_a_safe_cut(s: tuple[str, bytes, Builder], budgets: dict[str, int]) -> None:
    fmt, data, _ = s
    r = report_of(data)
    ix = PathIndex(r, get_tokenizer())
    active = active_user(ix)
    avail = budgets["window"] - budgets["reserve"]
    tail = choose_tail(ix, min(budgets["keep_recent"], avail // 2), avail - 200, active, contiguous_only=fmt == "pi")
    assert tail is not None
    rec = ix.rec(tail.cut)
    assert rec.role in ("user", "assistant") and ix.crossing[tail.cut] == 0
    if active is not None and tail.quote_active is None:
        assert tail.cut <= active or active in tail.keep
