"""Cancelling a repair (issue 5, point 6): `repair(..., cancel=)` is asked before every summarizer
call; once it is true the run ends as failed, cancelled, with nothing to install."""

from __future__ import annotations

import threading

from inspector.analysis import analyze
from inspector.compaction.execute import repair
from inspector.compaction.plan import Budgets, plan
from inspector.formats import load
from inspector.providers import make_provider
from tests.conftest import SAMPLES

ADR = SAMPLES / "pi" / "adr0302_amnesiac_fallback.jsonl"


def _plan():  # type: ignore[no-untyped-def]
    # A window small enough that the holes take several requests.
    p = plan(analyze(load(str(ADR))), "resummarize", Budgets(window=32_000, request=2_500))
    assert p.action == "summarize" and len(p.requests) >= 3
    return p


class Counting:
    """The extractive provider, counting its calls and cancelling after the `stop_after`-th."""

    def __init__(self, stop: threading.Event, stop_after: int) -> None:
        self.inner = make_provider("extractive", model=None, base_url=None)
        self.name = self.inner.name
        self.route = self.inner.route
        self.stop = stop
        self.stop_after = stop_after
        self.calls = 0

    def summarize(self, req):  # type: ignore[no-untyped-def]
        self.calls += 1
        if self.calls == self.stop_after:
            self.stop.set()  # the operator presses cancel while this call is in flight
        return self.inner.summarize(req)


def test_cancel_between_requests_installs_nothing() -> None:
    p = _plan()
    stop = threading.Event()
    s = Counting(stop, stop_after=2)
    seen: list[tuple[int, int]] = []
    res = repair(p, s, cancel=stop.is_set, progress=lambda i, n, _label: seen.append((i, n)))
    assert res.status == "failed" and res.cancelled
    assert res.entry is None and res.checkpoint is None and res.after is None
    assert s.calls == 2 and len(res.calls) == 2  # the call in flight finished; no third was made
    assert seen == [(1, len(p.requests)), (2, len(p.requests))]
    assert "cancelled" in res.reason and "nothing installed" in res.reason
    assert res.usage is not None  # what was spent is still reported


def test_cancel_before_start_makes_no_call() -> None:
    p = _plan()
    s = Counting(threading.Event(), stop_after=0)
    res = repair(p, s, cancel=lambda: True)
    assert res.status == "failed" and res.cancelled and res.entry is None and s.calls == 0


def test_an_unused_cancel_changes_nothing() -> None:
    p = _plan()
    never = threading.Event()
    a = repair(p, Counting(never, 0), entry_id="abcd1234", timestamp="2026-01-01T00:00:00.000Z", cancel=never.is_set)
    b = repair(p, Counting(never, 0), entry_id="abcd1234", timestamp="2026-01-01T00:00:00.000Z")
    assert a.status == b.status == "built" and not a.cancelled
    assert a.entry == b.entry and len(a.calls) == len(p.requests)
