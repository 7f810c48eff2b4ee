"""Deterministic recovery (ADR 0302): carried summary + recovery notice + the newest contiguous
messages of every role within keep-recent and the budget; error / aborted / deferred replies and
results whose call is outside dropped; the active request kept ahead; `recent_window`; a closed
failure reason; never invented text, and a provider-valid request."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings

from inspector.analysis.engine import summary_substance
from inspector.compaction.execute import repair
from inspector.compaction.plan import Budgets, plan
from inspector.compaction.prompts import recovery_notice
from inspector.formats import load_bytes
from inspector.ledger.model import FAILURE_REASONS
from tests.compaction_helpers import Builder, budgets_st, report_of, sessions, words

REQUEST = "Finish the streaming exporter; never touch the INVOICER_* variables."


def _session(aborted_call: bool = True) -> Builder:
    b = Builder()
    for t in range(5):
        b.turn(f"turn {t} " + words(15, t), [[("read", {"path": f"f{t}.py"}, words(120, t))]], words(25, t))
    b.user(REQUEST)
    for s in range(5):
        _, ids = b.assistant(f"step {s}", [("edit", {"path": f"src/s{s}.py"})])
        b.tool(ids[0], words(150, s))
    b.assistant("", stop="error")  # a failed reply in the window
    if aborted_call:
        _, ids = b.assistant("", [("bash", {"cmd": "make"})], stop="aborted")  # aborted mid-tool
        b.tool(ids[0], "partial output")  # its result: the call will not be in the request
    _, ids = b.assistant("step 5", [("bash", {"cmd": "pytest"})])
    b.tool(ids[0], words(40, 9))
    return b


def test_native_recovery_keeps_the_recent_window_and_the_active_request_ahead() -> None:
    r = report_of(_session().native())
    p = plan(r, "recover", Budgets(window=200_000, reserve=1_000, keep_recent=700))
    ix = p.index
    cp = p.checkpoint
    assert p.action == "recover" and cp is not None and not p.requests
    assert cp.shape == "recent_window" and cp.failure_reason in FAILURE_REASONS
    active = [q for q in ix.msg_pos if ix.rec(q).role == "user" and ix.rec(q).message.text() == REQUEST]  # type: ignore[union-attr]
    assert cp.keep == tuple(active) and cp.retains[0] == active[0]  # ahead of the window
    window = cp.retains[1:]
    assert window == sorted(window) and window[0] == cp.cut
    dropped_roles = sorted((ix.rec(q).role, ix.rec(q).stop_reason) for q in cp.dropped)
    assert dropped_roles == [("assistant", "aborted"), ("assistant", "error"), ("tool", None)]
    assert sum(ix.context_tokens(window)) <= 700  # bounded by keep-recent
    res = repair(p)
    assert res.status == "recovered" and res.usage is None and not res.calls
    assert res.after is not None and res.after.orphans == 0 and res.after.unanswered == 0
    assert not [f for f in res.after.findings if f.code == "live_question_summarized"]
    assert res.entry is not None
    assert res.entry["retained_tail_shape"] == "recent_window"
    assert res.entry["details"]["failure_reason"] == cp.failure_reason and res.entry["details"]["usage"] is None


def test_pi_recovery_window_is_contiguous_from_the_active_request_when_it_fits() -> None:
    r = report_of(_session(aborted_call=False).pi())
    p = plan(r, "recover", Budgets(window=200_000, reserve=1_000, keep_recent=700))
    ix = p.index
    cp = p.checkpoint
    assert cp is not None and not cp.keep
    assert ix.rec(cp.cut).message.text() == REQUEST  # type: ignore[union-attr]
    assert cp.retains == ix.messages_in(cp.cut, ix.end)  # pi keeps [firstKept, compaction)
    res = repair(p)
    assert res.entry is not None and res.entry["firstKeptEntryId"] == ix.rec(cp.cut).id
    assert res.after is not None and res.after.orphans == 0
    assert not [f for f in res.after.findings if f.code == "live_question_summarized"]


def test_pi_recovery_quotes_the_active_request_when_the_window_cannot_hold_it() -> None:
    r = report_of(_session(aborted_call=False).pi())
    p = plan(r, "recover", Budgets(window=1_200, reserve=256, keep_recent=700))
    cp = p.checkpoint
    assert cp is not None and cp.quote_active is not None
    assert p.summary is not None and REQUEST in p.summary


def test_pi_window_starts_after_a_result_whose_call_is_never_sent() -> None:
    # The aborted reply is dropped at send time, so its result would be sent without its call:
    # pi keeps a contiguous tail, so the window starts after it (and quotes the request).
    r = report_of(_session().pi())
    p = plan(r, "recover", Budgets(window=200_000, reserve=1_000, keep_recent=700))
    ix = p.index
    assert p.checkpoint is not None and ix.orphan_results and p.checkpoint.cut > ix.orphan_results[-1]
    res = repair(p)
    assert res.after is not None and res.after.orphans == 0
    assert p.summary is not None and REQUEST in p.summary


def test_a_recovery_that_would_remove_nothing_is_not_made() -> None:
    """Every message sent raw, none summarized, lost or orphaned (a real OpenClaw session looping on
    compactions that removed nothing): a recovery checkpoint would only add its notice, making the
    loop one longer; the plan does nothing and says why."""
    b = Builder()
    for t in range(3):
        b.turn(f"turn {t}", [[("read", {"path": f"f{t}.py"}, words(30, t))]], words(10, t))
    for _ in range(3):  # compactions that kept everything
        b.pi_compaction("## Goal\n- nothing yet", b.items[0]["id"])
    r = report_of(b.pi())
    assert r.coverage_counts()["summarized"] == 0 and any(f.code == "compaction_loop" for f in r.findings)
    p = plan(r, "recover", Budgets(window=200_000, reserve=1_000, keep_recent=20_000))
    assert (p.action, p.checkpoint) == ("noop", None)
    assert any("would remove nothing" in n for n in p.notes)
    assert repair(p).status == "noop"


def test_recovery_carries_the_previous_summary_and_the_notice() -> None:
    b = Builder()
    for t in range(4):
        b.turn(f"turn {t}", [[("read", {"path": f"f{t}.py"}, words(100, t))]], words(20, t))
    summary = "## Goal\n- ship the exporter\n\n## Progress\n- read the modules"
    first_kept = b.items[-1]["id"]
    b.pi_compaction(summary, first_kept)
    for t in range(4, 7):
        b.turn(f"turn {t}", [[("read", {"path": f"g{t}.py"}, words(100, t))]], words(20, t))
    r = report_of(b.pi())
    p = plan(r, "recover", Budgets(window=200_000, reserve=1_000, keep_recent=300))
    assert p.summary is not None
    assert p.summary.startswith(summary_substance(summary))
    assert "## Recovery notice" in p.summary and "<!-- end: Recovery notice -->" in p.summary


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sessions(), budgets_st)
def test_recovery_never_invents_text_and_is_provider_valid(s: tuple[str, bytes, Builder], budgets: dict[str, int]) -> None:
    fmt, data, _ = s
    r = report_of(data)
    p = plan(r, "recover", Budgets(**budgets))
    res = repair(p)
    if p.action == "noop":  # (a recovery that would change nothing: every message sent raw already)
        cov = r.coverage_counts()
        assert res.status == "noop" and cov["summarized"] == cov["hole"] == 0 and not any(it.orphan for it in r.context)
        return
    assert res.status == "recovered" and res.entry is not None and res.summary is not None
    assert res.failure_reason in FAILURE_REASONS
    # Provider-valid: nothing orphaned, nothing unanswered that the runtime would not answer.
    after = res.after
    assert after is not None and after.orphans == 0
    if fmt == "native":
        assert after.unanswered == 0
    # Every retained message equals its source: the written file is the source plus one record,
    # and each raw item of the next request is a source record with identical content.
    src = load_bytes(data, "src.jsonl")
    out_led = load_bytes(data + (b"" if data.endswith(b"\n") else b"\n") + __import__("orjson").dumps(res.entry) + b"\n", "out.jsonl")
    by_id = {rec.id: rec for rec in src.records if rec.id is not None}
    for it in after.report.context:
        if it.kind == "message" and not it.synthetic:
            rec = out_led.records[it.seq]  # type: ignore[index]
            assert rec.id in by_id
            a, b = rec.message, by_id[rec.id].message
            assert a is not None and b is not None and a.blocks == b.blocks and a.role == b.role
    # The checkpoint's text is only the carried summary, the notice, a verbatim request, file lists.
    ix = p.index
    allowed = set()
    if p.carry is not None:
        allowed |= set(p.carry.text.splitlines())
    for q in ix.msg_pos:
        m = ix.rec(q).message
        if m is not None:
            allowed |= set(m.text().splitlines())
            for blk in m.blocks:
                if blk.type == "tool_call" and isinstance(blk.args, dict):
                    allowed |= {v for v in blk.args.values() if isinstance(v, str)}
    template = set(recovery_notice("X", 1, 2).splitlines())
    for line in res.summary.splitlines():
        if not line.strip() or line in allowed:
            continue
        if line.startswith(("## Recovery notice", "## Active request (verbatim", "<!-- end: ")) or line in (
            "<read-files>", "</read-files>", "<modified-files>", "</modified-files>"
        ):
            continue
        assert line.startswith("No summary of the older history could be installed"), line
        assert any(t[:40] in line for t in template)


@pytest.mark.parametrize("fmt", ["pi", "native"])
def test_recovery_records_a_reason_from_the_closed_vocabulary(fmt: str) -> None:
    r = report_of(_session().render(fmt))
    res = repair(plan(r, "recover", Budgets(window=200_000, reserve=1_000, keep_recent=500)))
    assert res.entry is not None
    d = res.entry["details"]
    reason = d["failureReason"] if fmt == "pi" else d["failure_reason"]
    shape = d["retainedTailShape"] if fmt == "pi" else res.entry["retained_tail_shape"]
    assert reason in FAILURE_REASONS and shape == "recent_window"
