"""`inspector plan --json` (inspector.plan/1) and `inspector repair --json` (inspector.repair/1):
docs/repair-json.md. Built as plain dicts by inspector/compaction/export.py (and the CLI, which
adds `backup`); these models state their shape and generate their JSON Schemas."""

from __future__ import annotations

from typing import Any, Literal

from inspector.analysis.sessions import FindingCounts, TokenUsage
from inspector.contracts.fields import Closed, Field, schema_key
from inspector.contracts.report import Coverage, Finding, MessageSet, RecordRef

RuntimeRecord = dict[str, Any]  # a line or row in the runtime's own record shape


class Represents(MessageSet):
    ranges: list[list[RecordRef]] = Field(description="[first, last] record of each range the summary stands for")


class Retains(MessageSet):
    kept_ahead: list[RecordRef] = Field(description="records kept raw ahead of the retained tail (the active request)")
    dropped: MessageSet = Field(description="messages of the window a recovery drops (error, aborted or deferred replies, results whose call is not kept)")


class CutBoundary(Closed):
    first_kept: RecordRef | None = Field(description="the first message kept raw")
    last_removed: RecordRef | None = Field(description="the last message taken out of the request")


class PlannedCheckpoint(Closed):
    """The checkpoint a plan would install, or a repair built (CHECKPOINT)."""

    kind: Literal["summary", "recovery", "carry"]
    boundary: CutBoundary
    removes: MessageSet = Field(description="what it takes out of the request")
    represents: Represents = Field(description="what its summary stands for")
    retains: Retains = Field(description="what it keeps raw")
    shape: str = Field(description="the retained tail's shape: recent_window or latest_user_message")
    failure_reason: str | None = Field(description="a recovery's reason, from the closed vocabulary (null for a summary)")
    summary_tokens: int | None
    tail_tokens: int = Field(description="tokens of the retained tail")
    size_tokens: int = Field(description="summary_tokens + tail_tokens")
    tail_budget_tokens: int = Field(description="what the retained tail was allowed")
    tokens_before: int = Field(description="the next request's size before the repair")
    quotes_active_request: RecordRef | None = Field(description="the active request, quoted verbatim in the summary (pi, when the tail cannot start at it)")
    read_files: list[str]
    modified_files: list[str]


class NextRequestSize(Closed):
    items: int
    tokens: int


class Outlook(Closed):
    """The session's state before or after the repair (OUTLOOK)."""

    coverage: Coverage
    holes: int
    orphans: int
    unanswered: int
    next_request: NextRequestSize
    findings: list[Finding] = Field(description="as in analyze --json")
    finding_counts: FindingCounts


class Budget(Closed):
    tokens: int | None
    source: str | None = Field(description="where the figure came from")


class Budgets(Closed):
    window: Budget
    reserve: Budget
    keep_recent: Budget
    request: Budget = Field(description="largest prompt of one summarizer request: window − the output budget")
    available: int = Field(description="window − reserve − the runtime's summary wrapper: what summary + retained tail may take")
    evidence: list[str]


class CarriedSummary(Closed):
    checkpoint: int = Field(description="the index of the checkpoint whose summary is carried")
    line: int
    tokens: int
    trusted: bool
    why_not: str | None = Field(description="why it is not trusted")
    represents: MessageSet


class Range(MessageSet):
    from_: RecordRef | None = Field(alias="from")
    to: RecordRef | None


class SummarizerRequest(MessageSet):
    index: int
    kind: Literal["initial", "update"]
    from_: RecordRef | None = Field(alias="from")
    to: RecordRef | None
    prompt_tokens: int = Field(description="exact for the request's text, with a carried chunk summary counted at its output budget")
    budget: int
    carried_tokens: int
    max_output_tokens: int
    file_list: bool = Field(description="the range's file list goes with this request (the last one)")
    clipped: list[RecordRef] = Field(description="messages whose text was clipped to fit")


class Output(Closed):
    target_tokens: int
    max_output_tokens: int
    installable_tokens: int


class ProvenSpan(Closed):
    route: str = Field(description="the summarizer's route: model @ connection")
    reply: RecordRef | None = Field(description="the newest reply this route produced")


class PlanDocument(Closed):
    """`inspector plan SESSION --json`."""

    schema_: Literal["inspector.plan/1"] = schema_key("inspector.plan/1")
    file: str
    format: str
    session_id: str | None
    strategy: Literal["compact", "resummarize", "recover"]
    action: Literal["summarize", "recover", "carry", "noop"]
    reason: str | None = Field(description="the failure_reason of recover / carry, or why nothing is done")
    budgets: Budgets
    active_request: RecordRef | None
    carried_summary: CarriedSummary | None
    range: Range | None
    requests: list[SummarizerRequest]
    output: Output
    checkpoint: PlannedCheckpoint | None
    fallback: PlannedCheckpoint | None = Field(description="what a failed summary would install")
    proven_span: ProvenSpan | None
    before: Outlook
    after: Outlook | None = Field(description="the planned record appended in memory, analysed")
    notes: list[str]
    records: list[RuntimeRecord] | None = Field(
        description="what it would append (lines) or insert (rows), in the runtime's own record shape (the summary a placeholder until the summarizer has written it)"
    )


class SummarizerCall(Closed):
    request: int = Field(description="the 1-based planned request")
    attempt: int = Field(description="the 1-based attempt at that request")
    kind: Literal["initial", "update", "retry", "retreat"]
    messages: int
    prompt_tokens: int
    max_output_tokens: int
    outcome: str
    status: int | None = Field(description="the provider's HTTP status")
    usage: TokenUsage | None
    attempts: int
    detail: str = Field(description="the provider's own words for the operator (never part of `entry`)")
    accepted: bool


class RepairDocument(Closed):
    """`inspector repair SESSION --json`."""

    schema_: Literal["inspector.repair/1"] = schema_key("inspector.repair/1")
    file: str
    format: str
    strategy: Literal["compact", "resummarize", "recover"]
    status: Literal["built", "recovered", "failed", "noop"]
    complete: bool
    outcome: str | None = Field(description="the last summarizer outcome")
    reason: str = Field(description="for the operator: the provider's own words on a failure")
    failure_reason: str | None = Field(description="closed vocabulary")
    calls: list[SummarizerCall]
    usage: TokenUsage | None = Field(description="summed over the calls")
    dropped: MessageSet = Field(description="messages left out after a truncation (holes in the result)")
    retreated: bool
    truncated: bool
    essential_complete: bool | None
    checkpoint: PlannedCheckpoint | None
    entry: RuntimeRecord | None = Field(description="the record appended (or null)")
    records: list[RuntimeRecord] | None = Field(description="every line or row appended with the entry, in order")
    out: str | None = Field(description="the file written (the --out copy, or the session itself with --write)")
    backup: str | None = Field(description="the backup file (--write)")
    before: Outlook
    after: Outlook | None
    after_source: Literal["written file", "simulated"] | None
    plan: PlanDocument
