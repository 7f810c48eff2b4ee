"""`inspector simulate --json`: docs/simulate-json.md. Built as plain dicts by
inspector/analysis/simulate.py `simulation_json` (and the CLI, which adds
`recorded_policy_inferred_from`); these models state their shape and generate its JSON Schema."""

from __future__ import annotations

from typing import Literal

from inspector.contracts.fields import Absent, Closed, Field, omitted, schema_key


class PiPolicy(Closed):
    """pi's threshold compaction."""

    context_window: int
    reserve_tokens: int
    keep_recent_tokens: int


class AdkPolicy(Closed):
    """ADK's EventsCompactionConfig (and its "worth compacting" gate)."""

    compaction_interval: int | None
    overlap_size: int | None
    token_threshold: int | None
    event_retention_size: int | None
    progress_gate: bool


class NoPolicy(Closed):
    """The baseline's: `{}`."""


class Warning(Closed):
    code: str
    message: str


class LostQuestion(Closed):
    question_seq: int
    call_seq: int


class ModelCall(Closed):
    """One model call of a series."""

    seq: int = Field(description="the message the call produced")
    line: int = Field(description="that message's line")
    turn: int = Field(description="1-based")
    prompt_tokens: int
    raw_events: int = Field(description="raw events in the prompt")
    summaries: int = Field(description="summaries in the prompt")
    holes: list[int] = Field(description="seqs missing from this prompt, represented by nothing")
    live_question_lost: int | None = Field(description="the question's seq when this turn's question is not in the prompt raw")


class CompactionPoint(Closed):
    """One compaction of a series."""

    after_seq: int | None = Field(description="the event it was appended after")
    turn: int
    trigger: str = Field(
        description="threshold or overflow for pi; token_threshold / sliding_window for ADK; recorded in the baseline"
    )
    when: Literal["turn_end", "overflow", "pre_request", "post_invocation", "recorded"] = Field(
        description="turn_end or overflow (pi: the provider refused the prompt as too long, pi compacts at once and retries); pre_request or post_invocation (ADK); recorded"
    )
    summarized_seqs: list[int] = Field(description="what its summarizer was handed")
    seeded_from: int | None = Field(description="index of the earlier compaction whose summary it folded in")
    range_seqs: list[int] = Field(description="ADK: events whose timestamps its range spans; pi: what it removes")
    prompt_before: int
    prompt_after: int
    summary_tokens: int
    summarizer_requests: int


class Series(Closed):
    """What the session recorded (the baseline), or the replay."""

    label: str = Field(description="recorded, or the policy: pi, adk-sliding, adk-token, adk-both")
    policy: PiPolicy | AdkPolicy | NoPolicy = Field(description="the parameters; {} for the baseline")
    summarizer_calls: int = Field(description="summarizer requests (a pi split turn costs two)")
    compactions: int
    peak_prompt_tokens: int = Field(description="over the model calls")
    final_prompt_tokens: int = Field(description="over the model calls")
    coverage_known: bool = Field(
        description="false when the baseline's coverage after a recorded compaction is not modelled; holes, holes_in_next_request and live_questions_lost are then null"
    )
    holes: list[int] | None = Field(description="seqs of events that were missing from some call's prompt (or from the next request) and represented by no summary in it")
    holes_in_next_request: list[int] | None = Field(description="the same, for the request after the last event")
    live_questions_lost: list[LostQuestion] | None = Field(description="a call whose own turn's question was not in its prompt raw")
    calls: list[ModelCall] = Field(description="one per model call")
    compaction_points: list[CompactionPoint] = Field(description="one per compaction")
    warnings: list[Warning] = Field(description="the what-if's warnings ([] on the baseline)")


class SimulationDocument(Closed):
    """`inspector simulate SESSION --json`."""

    schema_: Literal["inspector.simulate/1"] = schema_key("inspector.simulate/1")
    session: str = Field(description="the path")
    format: str
    events: int = Field(description="messages replayed (ADK: events, content-less ones included)")
    turns: int = Field(description="turns (ADK: invocations)")
    summary_size: str = Field(description="how simulated summaries were sized")
    baseline: Series = Field(description="what the session recorded")
    whatif: Series = Field(description="the replay")
    warnings: list[Warning]
    recorded_policy_inferred_from: str | Absent = omitted("--policy recorded only: how the policy was inferred")
