"""`inspector usage --json` (inspector.usage/1) and `inspector search --json` (inspector.search/1):
docs/usage-json.md and docs/search-json.md. Built as plain dicts by inspector/cli/usage.py and inspector/cli/search.py;
these models state their shape and generate their JSON Schemas."""

from __future__ import annotations

from typing import Literal

from inspector.analysis.sessions import TokenUsage
from inspector.contracts.fields import Closed, Field, schema_key


class PricesUsed(Closed):
    """The price table the costs come from."""

    source: str = Field(description="where the prices come from")
    date: str = Field(description="when they were taken (YYYY-MM-DD)")
    currency: str
    file: str | None = Field(description="--prices FILE, or null for inspector/prices.json")


class UsageGroup(Closed):
    key: str = Field(description="the day (UTC), project, session file or model")
    sessions: int
    subagents: int = Field(description="sub-agent sessions counted in this group")
    subagent_names: list[str]
    requests: int
    usage: TokenUsage = Field(description="tokens the runtimes recorded, sub-agents included")
    subagent_usage: TokenUsage = Field(description="the sub-agents' part of usage")
    cost: float | None = Field(description="null when some of its tokens come from a model the table does not price")
    cost_known: float = Field(description="the cost of the priced models' tokens")
    unpriced_models: list[str]


class UsageDocument(Closed):
    """`inspector usage PATH... --json`."""

    schema_: Literal["inspector.usage/1"] = schema_key("inspector.usage/1")
    by: Literal["day", "project", "session", "model"]
    prices: PricesUsed
    groups: list[UsageGroup]


class SearchHit(Closed):
    path: str = Field(description="the session file")
    line: int
    role: str = Field(description="the record's role (checkpoint for a summary)")
    kind: str = Field(description="text, tool or summary")
    snippet: str
    marks: list[list[int]] = Field(description="[start, end) character offsets of the matched words in snippet")
    session_id: str | None
    format: str | None


class SearchDocument(Closed):
    """`inspector search QUERY PATH... --json`."""

    schema_: Literal["inspector.search/1"] = schema_key("inspector.search/1")
    query: str
    hits: list[SearchHit]
