"""What `inspector hook claude-code` and `inspector hook pi` print (docs/hooks.md), built as plain
dicts by inspector/cli/hook.py; these models state their shape and generate their JSON Schemas.

Claude Code's PreCompact answer is plain text (Claude Code shows it and appends it to the
summarizer's instructions): it has no schema."""

from __future__ import annotations

from typing import Literal

from inspector.contracts.fields import Closed, Field, Severity, schema_key


class SessionStartContext(Closed):
    hookEventName: Literal["SessionStart"]
    additionalContext: str = Field(description="added to what the model receives next: what it lost and where to read it")


class ClaudeCodeSessionStartAnswer(Closed):
    """`inspector hook claude-code` on SessionStart (source compact or resume) when the session has
    something to say (else nothing is printed): Claude Code's SessionStart hook output."""

    systemMessage: str = Field(description="shown to the user: one clause per finding")
    hookSpecificOutput: SessionStartContext


class HookFinding(Closed):
    code: str
    severity: Severity
    message: str


class PiHookAnswer(Closed):
    """`inspector hook pi --event E --session FILE`: what the pi extension notifies and injects."""

    schema_: Literal["inspector.hook.pi/1"] = schema_key("inspector.hook.pi/1")
    event: Literal["session_compact", "session_start"]
    reason: str | None = Field(description="session_start: pi's event.reason")
    session: str = Field(description="the session file")
    checked: bool = Field(description="false for an event the check does not answer")
    findings: list[HookFinding]
    notify: str | None = Field(description="for ctx.ui.notify; null when there is nothing to say")
    notify_type: Literal["error", "warning"] | None = Field(description="the notify level: error when a finding is an error, else warning")
    context: str | None = Field(
        description="the message the extension injects before the next agent turn; null when there is nothing to say or the request already carries it"
    )
