"""What the repair engine exchanges with a summarizer (DESIGN §5): one request in, one classified
result out.

The engine never handles HTTP, keys or retries. It builds a `SummaryRequest`, hands it to whatever
`Summarizer` the shell passed in (the providers package, or a scripted one in tests) and decides
from the `SummaryResult.outcome` alone, a closed set. `detail` carries the provider's own words for
the operator's screen; it is never written into a ledger (the closed `failure_reason` vocabulary is).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from inspector.ledger.model import Route, Usage

OUTCOMES: tuple[str, ...] = (
    "ok",
    "truncated",
    "input_too_large",
    "auth",
    "rate_limited",
    "overloaded",
    "network",
    "bad_request",
    "server_error",
)

# Outcomes that are reported as themselves and install nothing (DESIGN §5): a retry or a fallback
# cannot fix a missing key or an unreachable host, and calling it "summary failed" would hide it.
REPORTED_AS_THEMSELVES: frozenset[str] = frozenset({"auth", "network"})
# Outcomes after which the engine installs the deterministic recovery (ADR 0302: a failed summary
# keeps the recent window), recorded as `summary_provider`.
PROVIDER_FAILURES: frozenset[str] = frozenset({"rate_limited", "overloaded", "bad_request", "server_error"})


@dataclass(frozen=True, slots=True)
class SummaryRequest:
    system: str
    prompt: str
    max_output_tokens: int
    model: str | None = None  # overrides the summarizer's model for this request only


@dataclass(frozen=True, slots=True)
class SummaryResult:
    outcome: str  # one of OUTCOMES
    text: str = ""  # the summary ("" unless ok / truncated)
    usage: Usage | None = None
    status: int | None = None  # HTTP status, for the report only
    detail: str = ""  # the provider's own words: shown, never persisted
    attempts: int = 1  # HTTP requests made for this call, the provider's own retries included

    def __post_init__(self) -> None:
        if self.outcome not in OUTCOMES:
            raise ValueError(f"unknown outcome {self.outcome!r}")


class Summarizer(Protocol):
    """Anything that turns a SummaryRequest into a SummaryResult. `route` is the (model,
    connection) its requests are dispatched on: the retreat of seed 002 trusts only spans this
    same route has accepted."""

    name: str
    route: Any  # Route, a (model_id, connection_id) pair, or None

    def summarize(self, req: SummaryRequest) -> SummaryResult: ...


def route_of(summarizer: Any) -> Route | None:
    """The summarizer's route as a Route, whatever shape it was given in."""
    r = getattr(summarizer, "route", None)
    if r is None:
        return None
    if isinstance(r, Route):
        return r
    if isinstance(r, (tuple, list)) and len(r) == 2:
        return Route(r[0], r[1])
    model = getattr(r, "model_id", None)
    conn = getattr(r, "connection_id", None)
    if model is not None or conn is not None:
        return Route(model, conn)
    return None


def as_result(raw: Any) -> SummaryResult:
    """A SummaryResult from any object with the same fields (the providers package defines its
    own class with this shape). Unknown outcomes are a bad request: the engine never guesses."""
    if isinstance(raw, SummaryResult):
        return raw
    outcome = getattr(raw, "outcome", None)
    usage = getattr(raw, "usage", None)
    if usage is not None and not isinstance(usage, Usage):
        usage = Usage(
            int(getattr(usage, "input", 0) or 0),
            int(getattr(usage, "output", 0) or 0),
            int(getattr(usage, "cache_read", 0) or 0),
            int(getattr(usage, "cache_write", 0) or 0),
        )
    return SummaryResult(
        outcome if outcome in OUTCOMES else "bad_request",
        str(getattr(raw, "text", "") or ""),
        usage,
        getattr(raw, "status", None),
        str(getattr(raw, "detail", "") or ("" if outcome in OUTCOMES else f"unknown outcome {outcome!r}")),
        int(getattr(raw, "attempts", 1) or 1),
    )
