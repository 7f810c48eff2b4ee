"""Provider outcomes (DESIGN §5): `auth` and `network` are reported as themselves and install
nothing; other failures fall back to the recovery as `summary_provider`; the provider's own words
are shown, never persisted."""

from __future__ import annotations

import json

import pytest

from inspector.compaction.execute import repair
from inspector.compaction.plan import Budgets, plan
from inspector.compaction.types import OUTCOMES, SummaryResult, as_result
from inspector.ledger.model import Usage
from tests.compaction_helpers import Builder, Scripted, report_of, words

SECRET = "sk-live-0123456789 invalid x-api-key"


def _plan(fmt: str = "native"):  # type: ignore[no-untyped-def]
    b = Builder()
    for t in range(5):
        b.turn(f"turn {t}", [[("read", {"path": f"f{t}.py"}, words(150, t))]], words(20, t))
    return plan(report_of(b.render(fmt)), "resummarize", Budgets(window=200_000, reserve=1_000, keep_recent=300))


@pytest.mark.parametrize("outcome", ["auth", "network"])
@pytest.mark.parametrize("fmt", ["pi", "native"])
def test_auth_and_network_are_reported_as_themselves_and_install_nothing(outcome: str, fmt: str) -> None:
    s = Scripted([SummaryResult(outcome, status=401 if outcome == "auth" else None, detail=f"{outcome}: {SECRET}")] * 3)
    res = repair(_plan(fmt), s)
    assert res.status == "failed" and res.outcome == outcome
    assert len(s.requests) == 1  # no retry, no fallback: it would fail the same way
    assert SECRET in res.reason  # shown to the operator
    assert res.entry is None and res.checkpoint is None and res.failure_reason is None


@pytest.mark.parametrize("outcome", ["rate_limited", "overloaded", "server_error", "bad_request"])
def test_other_failures_fall_back_to_the_recovery_without_the_providers_words(outcome: str) -> None:
    s = Scripted([SummaryResult(outcome, status=500, detail=f"upstream said: {SECRET}", usage=Usage(10, 0))])
    res = repair(_plan(), s)
    assert res.status == "recovered" and res.failure_reason == "summary_provider" and res.outcome == outcome
    assert SECRET in res.reason
    assert res.entry is not None and SECRET not in json.dumps(res.entry)  # closed vocabulary only
    assert res.entry["details"]["failure_reason"] == "summary_provider"
    assert res.usage == Usage(10, 0)


def test_outcomes_are_a_closed_set() -> None:
    assert OUTCOMES == ("ok", "truncated", "input_too_large", "auth", "rate_limited", "overloaded", "network",
                        "bad_request", "server_error")

    class Foreign:  # a result from another package with the same fields
        outcome = "ok"
        text = "x"
        usage = None
        status = 200
        detail = ""
        attempts = 2

    assert as_result(Foreign()).attempts == 2 and as_result(Foreign()).outcome == "ok"
    Foreign.outcome = "teapot"
    assert as_result(Foreign()).outcome == "bad_request"


def test_the_providers_package_plugs_in() -> None:
    """A provider from the providers package is a Summarizer as it is (it uses the core's types)."""
    from inspector.providers import make_provider

    p = _plan("pi")
    summarizer = make_provider("extractive", model=None, base_url=None)
    res = repair(p, summarizer)
    assert res.status == "built" and res.calls[0].outcome == "ok"
    assert res.after is not None and res.after.holes == 0
