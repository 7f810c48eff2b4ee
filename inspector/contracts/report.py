"""`inspector analyze --json` (inspector.analyze/1) and `inspector context --json`
(inspector.context/1): docs/report-json.md. The documents are built as plain dicts by
inspector/analysis/export.py; these models state their shape and generate their JSON Schemas."""

from __future__ import annotations

from typing import Any, Literal

from inspector.analysis.sessions import FindingCounts, TokenUsage
from inspector.contracts.fields import Absent, Closed, Field, Severity, omitted, schema_key


class RecordRef(Closed):
    """A record: `{seq, line, id}`."""

    seq: int = Field(description="the 0-based position in file order")
    line: int = Field(description="the 1-based line it came from (two records share a line when objects were glued on one; OpenClaw: the row's seq)")
    id: str | None = Field(description="the producer's id (null where the format has none; pi v1 files get v1-<line>)")


class ByRole(Closed):
    """Messages counted by role; a role with none is left out."""

    system: int | Absent = omitted()
    user: int | Absent = omitted()
    assistant: int | Absent = omitted()
    tool: int | Absent = omitted()


class MessageSet(Closed):
    """A set of messages: `{count, by_role, first_line, last_line}`."""

    count: int = Field(description="messages in the set")
    by_role: ByRole
    first_line: int | Absent = omitted("the first line of its messages (left out when the set is empty)")
    last_line: int | Absent = omitted("the last line of its messages (left out when the set is empty)")


class RetainedSet(MessageSet):
    shape: str | None = Field(description="the retained tail's shape: recent_window / latest_user_message")


class Boundary(Closed):
    first_kept_id: str | None = Field(description="the first record kept raw, as the checkpoint names it")
    first_kept_line: int | Absent = omitted("that record's line, when it is in the file")
    explicit: str | None = Field(description="an explicit boundary (native: the id of the last removed record)")
    found: bool | None = Field(description="false: the boundary names a record not on the active path (dangling)")


class AdkDetails(Closed):
    """ADK only: the range it spans; whether it survives; the raw events whose timestamps it spans;
    the previous summary folded in as a seed; what its summarizer was handed (not stored by ADK:
    inferred, `inference` says how) and so represents; the events it drops unsummarized."""

    start_timestamp: float | None
    end_timestamp: float | None
    timestamp: float | None
    invocation_id: str | None
    branch: str | None
    surviving: bool = Field(description="whether it survives (a later range containing it drops it)")
    subsumed_by: str | None = Field(description="the compaction whose range contains it")
    range_event_ids: list[str | None] = Field(description="the raw events whose timestamps it spans (`removes`)")
    seed_compaction_id: str | None = Field(description="the previous summary folded in as a seed")
    summarizer_input_ids: list[str | None] = Field(description="what its summarizer was handed (inferred)")
    represents: list[list[str | None]] = Field(description="[first id, last id] ranges its summary stands for")
    in_range_not_summarized_ids: list[str | None] = Field(description="the events it drops unsummarized")
    inference: str = Field(description="how the summarizer's input was inferred")
    summarizer_prompt_tokens: int | None
    estimated_prompt_tokens: int | None


class ReplacementItem(Closed):
    """Codex only: one item of the history a checkpoint installs in place of everything before it."""

    role: str
    kind: str
    kept_seq: int | None = Field(description="the record kept raw (null for the checkpoint's own content: its summary, re-injected instructions)")
    line: int = Field(description="the kept record's line (the checkpoint's own for its own content)")
    id: str | None


class Checkpoint(Closed):
    """A checkpoint on the active path, oldest first."""

    index: int = Field(description="1-based position among the checkpoints on the path")
    seq: int
    line: int
    id: str | None
    boundary: Boundary = Field(description="where it cuts; `found: false` = dangling")
    removes: MessageSet = Field(description="what it takes out of the request")
    represents: MessageSet = Field(description="what its summary stands for")
    retains: RetainedSet = Field(description="what it keeps raw")
    summarized_here: MessageSet = Field(description="what its own summarizer call covered")
    represented_and_retained: MessageSet | Absent = omitted("messages it both represents and keeps raw (the sets overlap)")
    summary_chars: int
    fallback: bool = Field(description="a fallback checkpoint")
    carried_forward: bool = Field(description="one that carried the previous summary forward")
    repair: bool = Field(description="a checkpoint this tool's repair wrote (its details name `producer: \"inspector\"`)")
    status: str = Field(description="what the checkpoint is, in the words the CLI table, the timeline and the detail pane use")
    status_tone: Literal["ok", "neutral", "warning", "error"] = Field(
        description="ok, neutral (stated, nothing wrong: an opaque summary), warning or error (a repair is error only when it left a hole)"
    )
    empty_summary: bool = Field(description="one whose summary says nothing")
    failure_reason: str | None = Field(description="no_new_history, summary_budget, summary_provider, checkpoint_oversized or null")
    usage: TokenUsage | None = Field(description="as recorded")
    tokens_before: int | None = Field(description="as recorded")
    trigger: str | None = Field(description="as recorded")
    truncated: bool | None = Field(description="as recorded")
    essential_complete: bool | None = Field(description="as recorded")
    from_hook: bool | None = Field(description="as recorded")
    adk: AdkDetails | Absent = omitted("ADK only: the format's details of the compaction event")
    replacement: list[ReplacementItem] | Absent = omitted(
        "Codex only: the history it installs in place of everything before it, sent in this order after the base instructions"
    )


class Finding(Closed):
    """`{code, severity, message, records, by_role?, data?}`."""

    code: str
    severity: Severity
    message: str
    records: list[RecordRef] = Field(description="the records it points at")
    by_role: ByRole | Absent = omitted("for `hole`: the messages by role")
    data: dict[str, Any] | Absent = omitted("what the finding is about, in its own terms (e.g. `data.problem`)")


class ActivePath(Closed):
    length: int
    leaf: RecordRef | None


class Coverage(Closed):
    """Messages per coverage state."""

    live: int = Field(description="after the latest checkpoint")
    retained: int = Field(description="kept raw by it")
    summarized: int = Field(description="represented by its summary")
    excluded: int = Field(description="never sent by design: errored/aborted replies, records marked never-sent")
    hole: int = Field(description="removed and represented by nothing, or unreadable by the runtime")
    inactive: int = Field(description="on another branch of the tree")


class NextRequest(Closed):
    """The next request: item count, tokens, the window when known."""

    messages: int
    tokens: int
    window: int | None
    reserve: int | None
    tokens_source: str = Field(description="usage+tiktoken or tiktoken")
    tokenizer: str = Field(description="the encoding")
    tokenizer_offline: bool = Field(description="the offline copy of the encoding was used")


class Diagnostic(Closed):
    """What could not be read as written."""

    line: int
    problem: str
    message: str
    recovered: str


class AnalyzeDocument(Closed):
    """`inspector analyze FILE --json`."""

    schema_: Literal["inspector.analyze/1"] = schema_key("inspector.analyze/1")
    file: str = Field(description="the input")
    format: str = Field(description="the detected format (pi, native, claude_code, codex, adk, openclaw, ...)")
    format_version: int | None = Field(description="its version as written (ADK: 1 or 0 for a DatabaseSessionService schema, null otherwise)")
    migrated: bool = Field(description="whether it was migrated in memory")
    session_id: str | None
    at_line: int | None = Field(description="set by `--at LINE`: the file as it stood when that line was the last written")
    summary: str = Field(description="the one-line verdict the human report starts with")
    records: int = Field(description="records in the file (recovered ones included)")
    messages: int = Field(description="of which messages")
    active_path: ActivePath = Field(description="the path the runtime walks (pi: from the last entry in file order)")
    coverage: Coverage = Field(description="messages per coverage state")
    checkpoints: list[Checkpoint] = Field(description="each checkpoint on the active path, oldest first")
    findings: list[Finding] = Field(description="errors first")
    finding_counts: FindingCounts
    context: NextRequest = Field(description="the next request: item count, tokens, the window when known")
    diagnostics: list[Diagnostic] = Field(description="what could not be read as written")


class ContextItem(Closed):
    """One item of what the runtime sends next, in order."""

    index: int = Field(description="position in the request")
    role: Literal["system", "user", "assistant", "tool"] = Field(description="the role the model sees")
    kind: Literal["summary", "message"] = Field(description="summary (a checkpoint's summary, wrapped as the runtime wraps it) or message")
    record_id: str | None = Field(description="the source record's id")
    line: int | None = Field(description="the source record's line")
    seq: int | None = Field(description="the source record; null for items the runtime synthesizes, and for content a line holds that is no record of its own")
    synthetic: bool = Field(description="true for items the runtime makes up")
    tokens: int | None
    tokens_from: Literal["usage", "tiktoken"] = Field(description="usage (the provider's output count for that reply) or tiktoken")
    preview: str = Field(description="the first 160 characters of its text")
    note: str | Absent = omitted("how the runtime derives this item from the file, when not as written")
    on_resume: bool | Absent = omitted(
        "true for an item the runtime adds (or, not synthetic, changes) when it resumes the session, not while it runs (Claude Code's "
        "reply to a turn it finds unfinished; OpenClaw's trailing user message, which it moves into the new prompt's message)"
    )
    joined: list[int] | Absent = omitted(
        "the seqs of the records the runtime sends in this item's message after the item's own record (OpenClaw merges adjacent "
        "answers, and adjacent user messages, into one); tokens counts them all"
    )
    removed_results: list[str] | Absent = omitted(
        "the tool results of this item's line the runtime removes from the request, pairing them with no call in it "
        "(Claude Code, google-adk); the rest of the line is sent (finding `dropped_tool_result`)"
    )
    also_summarized_by: int | Absent = omitted("a retained item a checkpoint's summary also represents: that checkpoint's index")
    tool_call_ids: list[str] | Absent = omitted("assistant items: the calls it makes")
    unanswered: list[str] | Absent = omitted("assistant items: the calls with no result in the request")
    tool_call_id: str | Absent | None = omitted("tool items: the call it answers")
    orphan: bool | Absent = omitted("tool items: whether that call is missing from the request")


class ContextDocument(Closed):
    """`inspector context FILE --json`."""

    schema_: Literal["inspector.context/1"] = schema_key("inspector.context/1")
    file: str
    format: str
    session_id: str | None
    at_line: int | None
    tokens: int
    window: int | None
    reserve: int | None
    tokens_source: str
    tokenizer: str
    messages: list[ContextItem] = Field(description="what the runtime sends next, in order")
