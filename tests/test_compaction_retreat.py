"""Retreat (seed 002): on `input_too_large`, retreat once to the proven span of the summarizer's
own route; another route's span proves nothing; a second rejection or no proven span fails open
with the provider's own reason, installing nothing and persisting nothing."""

from __future__ import annotations

import pytest

from inspector.compaction.execute import repair
from inspector.compaction.plan import Budgets, plan
from inspector.compaction.types import SummaryResult
from inspector.ledger.model import Route
from tests.compaction_helpers import Builder, Scripted, report_of, words

A = ("model-a", "conn-a")
B = ("model-b", "conn-b")
TOO_LARGE = SummaryResult("input_too_large", status=400, detail="400 context_length_exceeded: 9000 > 8192 tokens")


def _mixed_routes(newest_a: bool = True) -> tuple[Builder, str, str]:
    """Turns answered on route A, then on route B (the newest reply), then a new request. Returns
    the builder, the id of A's newest reply and of B's newest reply."""
    b = Builder()
    a_reply = ""
    for t in range(3):
        b.user(words(30, t))
        _, ids = b.assistant(words(10, t), [("read", {"path": f"a{t}.py"})], route=A if newest_a else B)
        b.tool(ids[0], words(250, t))
        a_reply, _ = b.assistant(f"REPLY-A{t} " + words(40, t), route=A if newest_a else B)
    b_reply = ""
    for t in range(3, 6):
        b.user(words(30, t))
        _, ids = b.assistant(words(10, t), [("read", {"path": f"b{t}.py"})], route=B)
        b.tool(ids[0], words(250, t))
        b_reply, _ = b.assistant(f"REPLY-B{t} " + words(40, t), route=B)
    b.user("Next: wire the batch size into the upload.")
    return b, a_reply, b_reply


BUDGETS = Budgets(window=200_000, reserve=1_000, keep_recent=200)


@pytest.mark.parametrize("fmt", ["pi", "native"])
def test_input_too_large_retreats_to_this_routes_own_newest_reply(fmt: str) -> None:
    b, a_reply, b_reply = _mixed_routes()
    r = report_of(b.render(fmt))
    p = plan(r, "resummarize", BUDGETS, route=Route(*A))
    ix = p.index
    assert p.proven is not None and ix.rec(p.proven).id == a_reply
    s = Scripted([TOO_LARGE], route=Route(*A))
    res = repair(p, s)
    assert res.status == "built" and res.retreated
    assert [c.kind for c in res.calls] == ["initial", "retreat"]
    # The retried fold ends where A's newest reply begins: that reply and everything after it
    # stays raw. Not B's nearer reply, which proves nothing about model-a on conn-a.
    assert res.checkpoint is not None and ix.rec(res.checkpoint.cut).id == a_reply
    assert ix.rec(res.checkpoint.cut).id != b_reply
    second = s.requests[1].prompt
    assert "REPLY-A2" not in second and "REPLY-A1" in second  # A's newest reply is not folded
    assert "REPLY-A2" in s.requests[0].prompt
    assert len(s.requests[1].prompt) < len(s.requests[0].prompt)
    assert res.after is not None and res.after.holes == 0 and res.after.orphans == 0


@pytest.mark.parametrize("fmt", ["pi", "native"])
def test_no_reply_from_this_route_fails_open_without_a_retry(fmt: str) -> None:
    b, _, _ = _mixed_routes(newest_a=False)  # only model-b ever answered
    r = report_of(b.render(fmt))
    p = plan(r, "resummarize", BUDGETS, route=Route(*A))
    assert p.proven is None
    s = Scripted([TOO_LARGE, TOO_LARGE], route=Route(*A))
    res = repair(p, s)
    assert res.status == "failed" and res.outcome == "input_too_large"
    assert len(s.requests) == 1
    assert "context_length_exceeded" in res.reason  # the provider's own reason, shown
    assert res.entry is None and res.checkpoint is None  # nothing installed, nothing persisted


def test_a_second_rejection_fails_open_with_the_providers_reason() -> None:
    b, _, _ = _mixed_routes()
    r = report_of(b.native())
    p = plan(r, "resummarize", BUDGETS, route=Route(*A))
    again = SummaryResult("input_too_large", status=413, detail="413 request entity too large")
    s = Scripted([TOO_LARGE, again], route=Route(*A))
    res = repair(p, s)
    assert res.status == "failed" and len(s.requests) == 2
    assert res.reason.startswith("413 request entity too large")
    assert res.entry is None


def test_a_summarizer_without_a_route_has_no_proven_span() -> None:
    b, _, _ = _mixed_routes()
    r = report_of(b.pi())
    p = plan(r, "resummarize", BUDGETS)
    res = repair(p, Scripted([TOO_LARGE]))
    assert res.status == "failed" and "no proven span" in res.reason
