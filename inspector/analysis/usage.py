"""Usage and cost across sessions (issue 18 point 4): pure arithmetic over recorded usage.

A price table (the pinned `inspector/prices.json`, or the user's) gives each model's price per
million tokens of fresh input, output, cache reads and cache writes. A model the table does not
price has an unknown cost, never a cost of 0: a group holding any of its tokens says so.
Sub-agents count towards their parent session and are shown apart too: a transcript of their own
(Claude Code `subagents/`, a Codex child rollout) or an agent inside the session (ADK).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from importlib import resources
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from inspector.analysis import GROUPINGS as GROUPINGS  # (the groupings, re-exported)
from inspector.formats.jsonl import open_regular
from inspector.ledger.model import Usage

Grouping = Literal["day", "project", "session", "model"]
PER = 1_000_000  # prices are per million tokens


class ModelPrice(BaseModel):
    model_config = ConfigDict(extra="forbid")
    input: float = Field(ge=0, description="per million fresh input tokens")
    output: float = Field(ge=0, description="per million output tokens")
    cache_read: float = Field(ge=0, description="per million tokens read from the prompt cache")
    cache_write: float = Field(ge=0, description="per million tokens written to the prompt cache")
    aliases: list[str] = Field(default_factory=list, description="other names the same model is recorded under")
    source: str | None = Field(None, description="where these figures were read, and when")


class PriceTable(BaseModel):
    model_config = ConfigDict(extra="forbid")
    source: str = Field(min_length=1, description="where the prices come from")
    date: str = Field(pattern=r"^\d{4}-\d{2}-\d{2}$", description="when they were taken (YYYY-MM-DD)")
    currency: str = "USD"
    models: dict[str, ModelPrice]

    def lookup(self) -> dict[str, ModelPrice]:
        """Every name a price answers to, normalized (see `model_key`)."""
        out: dict[str, ModelPrice] = {}
        for name, price in self.models.items():
            for n in (name, *price.aliases):
                out[model_key(n)] = price
        return out


class PriceTableError(ValueError):
    """A price table that is not one: the message names the file and the field."""


def parse_price_table(data: bytes | str, name: str) -> PriceTable:
    try:
        return PriceTable.model_validate_json(data)
    except ValidationError as e:
        first = e.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(top level)"
        raise PriceTableError(f"{name}: {where}: {first['msg']}") from None


def load_prices(path: str | None = None) -> PriceTable:
    """The price table shipped with the package (`inspector/prices.json`), or the one at `path`.
    Raises PriceTableError naming the file."""
    if path is None:
        data = resources.files("inspector").joinpath("prices.json").read_bytes()
        return parse_price_table(data, "inspector/prices.json")
    try:
        with open_regular(path) as f:  # (a named pipe: refused, never waited on)
            data = f.read()
    except OSError as e:
        raise PriceTableError(f"{path}: cannot read ({e.strerror or e})") from None
    return parse_price_table(data, path)


_DATED = re.compile(r"(-\d{8}|-\d{4}-\d{2}-\d{2}|@\d{8}|-latest)$")


def model_key(model: str) -> str:
    """A recorded model name as the table knows it: lower case, without a provider prefix
    (`anthropic/…`, `models/…`) or a release date (`-20250929`, `@20250929`)."""
    key = model.strip().lower().rsplit("/", 1)[-1]
    return _DATED.sub("", key)


def cost_of(usage: Usage, price: ModelPrice) -> float:
    return (
        usage.input * price.input
        + usage.output * price.output
        + usage.cache_read * price.cache_read
        + usage.cache_write * price.cache_write
    ) / PER


@dataclass(slots=True)
class UsageItem:
    """One session's usage on one day by one model (what the index returns)."""

    session: str  # the session file
    parent: str | None  # its parent session, for a sub-agent transcript
    project: str | None
    day: str | None
    model: str | None
    usage: Usage
    requests: int
    agent: str | None = None  # a sub-agent inside the session (ADK); None: the session's own agent

    @property
    def subagent(self) -> str | None:
        """The sub-agent this usage is, by name: a transcript of its own (its file), or an agent
        inside the session (`FILE#agent`); None for the session's own agent."""
        if self.agent is not None:
            return f"{self.session}#{self.agent}"
        return self.session if self.parent is not None else None


@dataclass(slots=True)
class UsageGroup:
    key: str
    usage: Usage = field(default_factory=Usage)
    requests: int = 0
    sessions: set[str] = field(default_factory=set)  # top-level sessions (a sub-agent counts as its parent)
    subagents: set[str] = field(default_factory=set)
    subagent_usage: Usage = field(default_factory=Usage)
    cost_known: float = 0.0
    unpriced_models: set[str] = field(default_factory=set)

    @property
    def cost(self) -> float | None:
        """The cost, None (unknown) when any of the group's tokens is priced by no table entry."""
        return None if self.unpriced_models else self.cost_known


UNKNOWN = "(unknown)"


def cost_text(g: UsageGroup, currency: str) -> str:
    """A group's cost in words: `$1.23`; `unknown` when no token of it is priced; `$1.23 +
    unknown` when some are not (never 0 for a model the table does not price)."""
    sign = "$" if currency == "USD" else currency + " "
    if not g.unpriced_models:
        return f"{sign}{g.cost_known:,.2f}"
    if g.cost_known == 0:
        return "unknown"
    return f"{sign}{g.cost_known:,.2f} + unknown"


def group_usage(items: Iterable[UsageItem], by: Grouping, prices: PriceTable) -> list[UsageGroup]:
    """Usage and cost by day, project, session or model; a sub-agent's usage counts towards its
    parent session (and the parent's project). Largest total first (days: in date order)."""
    items = list(items)
    table = prices.lookup()
    project_of = {i.session: i.project for i in items if i.parent is None}
    groups: dict[str, UsageGroup] = {}
    for it in items:
        top = it.parent or it.session
        if by == "day":
            key = it.day or UNKNOWN
        elif by == "project":
            key = (project_of.get(top) if it.parent else it.project) or it.project or UNKNOWN
        elif by == "session":
            key = top
        else:
            key = it.model or UNKNOWN
        g = groups.get(key)
        if g is None:
            g = groups[key] = UsageGroup(key)
        g.usage = g.usage + it.usage
        g.requests += it.requests
        g.sessions.add(top)
        sub = it.subagent
        if sub is not None:
            g.subagents.add(sub)
            g.subagent_usage = g.subagent_usage + it.usage
        price = table.get(model_key(it.model)) if it.model else None
        if price is None:
            if it.usage.total:
                g.unpriced_models.add(it.model or UNKNOWN)
        else:
            g.cost_known += cost_of(it.usage, price)
    out = list(groups.values())
    if by == "day":
        out.sort(key=lambda g: g.key)
    else:
        out.sort(key=lambda g: (-g.usage.total, g.key))
    return out


def session_costs(items: Iterable[UsageItem], prices: PriceTable) -> dict[str, UsageGroup]:
    """Each session file's usage and cost, by its path: a parent session's includes its
    sub-agents' (as `group_usage(by="session")` rolls them up), a sub-agent transcript's is its own."""
    items = list(items)
    out = {g.key: g for g in group_usage(items, "session", prices)}
    own = [dataclasses.replace(i, parent=None) for i in items if i.parent is not None]
    out.update((g.key, g) for g in group_usage(own, "session", prices))
    return out
