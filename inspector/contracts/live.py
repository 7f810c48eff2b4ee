"""`inspector watch --json` (and `--exec CMD`'s stdin): one object per event, built as plain
dicts by inspector/live/sessions.py `changes`; docs/watch-json.md. These models state their shape
and generate its JSON Schema."""

from __future__ import annotations

from typing import Literal

from pydantic import RootModel

from inspector.contracts.fields import Closed, Field, Severity, schema_key


class _Event(Closed):
    schema_: Literal["inspector.watch/1"] = schema_key("inspector.watch/1")
    file: str = Field(description="the session file")
    format: str = Field(description="its format (empty when it was never read)")
    records: int = Field(description="its records at the last report")
    message: str = Field(description="the line the live view prints for it")


class FindingEvent(_Event):
    """The session gained a finding at or above `--fail-on`."""

    event: Literal["finding"]
    code: str
    severity: Severity
    line: int = Field(description="the finding's first line (0: it points at no record)")


class FileEvent(_Event):
    """The file was deleted, can no longer be read, or can be read again."""

    event: Literal["deleted", "unreadable", "readable"]


class WatchEvent(RootModel[FindingEvent | FileEvent]):
    """One `watch --json` line: a finding event or a file event (`event` says which)."""
