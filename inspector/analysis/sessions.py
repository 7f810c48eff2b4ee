"""Across sessions (issue 18, DESIGN §6): what one session contributes to `scan`, `usage` and
`search`, computed once from its ledger and report and kept in the index.

Pure: a Ledger and its Report in, small values out. `ScanRow` is the stable JSON contract of
`inspector scan --json` (docs/scan-json.md); its JSON Schema is generated from the model.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from inspector.analysis.engine import Report
from inspector.analysis.findings import SEVERITY_RANK
from inspector.formats import registry
from inspector.ledger.jsontext import printable
from inspector.ledger.model import Ledger, Usage
from inspector.ledger.times import epoch_seconds

SCAN_SCHEMA = "inspector.scan/1"
Severity = Literal["error", "warning", "info"]
# A document longer than this is indexed by its start: tool results can hold whole files, and the
# index should stay a fraction of the sessions' size.
DOC_CHARS = 32_000


class TokenUsage(BaseModel):
    """Tokens the providers recorded (DESIGN §2 usage), summed."""

    model_config = ConfigDict(extra="forbid")
    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0


class FindingCounts(BaseModel):
    model_config = ConfigDict(extra="forbid")
    error: int = 0
    warning: int = 0
    info: int = 0


class CodeCount(BaseModel):
    """How many findings of one code a session has."""

    model_config = ConfigDict(extra="forbid")
    severity: Severity
    code: str
    count: int


class ScanRow(BaseModel):
    """One session as `inspector scan` reports it. Fields are added, never renamed or removed.
    Everything but `path`, `parent`, `size` and `error` is null when the file could not be read."""

    model_config = ConfigDict(extra="forbid")

    schema_: Literal["inspector.scan/1"] = Field(SCAN_SCHEMA, alias="schema", description="this contract's name and version")
    path: str = Field(description="the session file, absolute (a store of several sessions, ADK / OpenClaw SQLite / maka: FILE#SESSION, one row each)")
    format: str | None = Field(None, description="the producer's format (native, pi, claude_code, codex, adk, openclaw)")
    format_version: int | None = Field(None, description="the format version the file was written in, when it says")
    session_id: str | None = None
    project: str | None = Field(None, description="the working directory the session ran in (or its app), when recorded")
    parent: str | None = Field(None, description="a sub-agent transcript's parent session file")
    parent_session_id: str | None = Field(
        None, description="the session id of the session that spawned this one (a Codex child rollout's session_meta)"
    )
    first_activity: str | None = Field(None, description="the session's oldest record time, ISO-8601 UTC (not the file's mtime)")
    last_activity: str | None = Field(None, description="the session's newest record time, ISO-8601 UTC")
    records: int | None = None
    messages: int | None = None
    context_tokens: int | None = Field(None, description="tokens of the next request")
    window: int | None = Field(None, description="the context window, when known")
    window_share: float | None = Field(None, description="context_tokens / window, when the window is known")
    checkpoints: int | None = Field(None, description="checkpoints on the active path")
    holes: int | None = Field(None, description="messages in holes (removed, represented by nothing)")
    worst_severity: Severity | None = None
    worst_code: str | None = Field(None, description="the code of the most severe finding")
    worst_message: str | None = None
    findings: FindingCounts | None = None
    codes: list[CodeCount] | None = Field(None, description="findings by code, most severe first")
    usage: TokenUsage | None = Field(None, description="tokens the runtime recorded for this session's own requests")
    models: list[str] | None = Field(None, description="models that answered, by first use")
    size: int | None = Field(None, description="bytes of the file")
    error: str | None = Field(None, description="why the file could not be read or analysed")

    @field_validator("*")
    @classmethod
    def _printable(cls, value: Any) -> Any:
        """A lone surrogate in a session's text (its id, project, a finding quoting it) or a file
        name's undecodable byte is kept as its `\\udXXX` escape: a row is JSON, printed and stored."""
        if isinstance(value, str):
            return printable(value)
        if isinstance(value, list):
            return [printable(v) if isinstance(v, str) else v for v in value]
        return value


def scan_row_schema() -> dict[str, object]:
    """The JSON Schema of one `scan --json` line (docs/scan-json.md, inspector/schemas/)."""
    schema = ScanRow.model_json_schema(by_alias=True)
    schema["$id"] = "https://inspector.invalid/schemas/scan-row.schema.json"
    schema["title"] = "inspector scan --json line (" + SCAN_SCHEMA + ")"
    return schema


def iso_utc(secs: float | None) -> str | None:
    if secs is None:
        return None
    try:
        d = _dt.datetime.fromtimestamp(secs, _dt.UTC)
    except (OverflowError, OSError, ValueError):
        return None
    return d.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def activity_span(led: Ledger) -> tuple[float | None, float | None]:
    """(oldest, newest) record time in epoch seconds; (None, None) when no record has one."""
    lo: float | None = None
    hi: float | None = None
    for r in led.records:
        t = epoch_seconds(r.timestamp)
        if t is None:
            continue
        if lo is None or t < lo:
            lo = t
        if hi is None or t > hi:
            hi = t
    return lo, hi


_PROJECT_KEYS = ("cwd", "app_name", "appName", "project")


def session_project(led: Ledger) -> str | None:
    """Where the session ran: its header's working directory (pi, Codex), the first record that
    names one (Claude Code writes `cwd` on each line), or the app (ADK)."""
    if isinstance(led.header, dict):
        for key in _PROJECT_KEYS:
            v = led.header.get(key)
            if isinstance(v, str) and v:
                return v
    for r in led.records[:50]:
        extra = r.extra
        if isinstance(extra, dict):
            for key in _PROJECT_KEYS:
                v = extra.get(key)
                if isinstance(v, str) and v:
                    return v
    return None


def spawning_session_id(led: Ledger) -> str | None:
    """The id of the session that spawned this one: a Codex child rollout's session_meta names it
    as `source.subagent.thread_spawn.parent_thread_id` (older builds: `sub_agent`; some also write
    a top-level `parent_thread_id`)."""
    h = led.header
    if not isinstance(h, dict):
        return None
    src = h.get("source")
    if isinstance(src, dict):
        for key in ("subagent", "sub_agent"):
            sub = src.get(key)
            spawn = sub.get("thread_spawn") if isinstance(sub, dict) else None
            pid = spawn.get("parent_thread_id") if isinstance(spawn, dict) else None
            if isinstance(pid, str) and pid:
                return pid
    pid = h.get("parent_thread_id")
    return pid if isinstance(pid, str) and pid and pid != led.session_id else None


# The tool output Codex writes after the copy of a parent's history when it spawns a forked
# sub-agent (codex-rs core `agent/control.rs`, FORKED_SPAWN_AGENT_OUTPUT_MESSAGE): it ends the copy.
_FORKED_OUTPUT_START = "You are the newly spawned agent. The prior conversation history was forked from your parent agent."


def _meta_id(extra: object) -> str | None:
    if not isinstance(extra, dict):
        return None
    sid = extra.get("id") or extra.get("session_id")
    return sid if isinstance(sid, str) and sid else None


def forked_from_parent(led: Ledger) -> set[int]:
    """The records of a Codex child rollout that are its parent's history, copied in when the
    child was forked from it: from the parent's own session_meta line (the header names the
    parent as `forked_from_id` or its spawner) through the spawn output that ends the copy, or,
    without one, the lines written in the same instant as that session_meta (Codex persists the
    copy in one batch at the child's start). Their usage is the parent's: Codex seeds the child's
    token totals with the copy's last `token_count` and counts only what follows as the child's
    (codex-rs core `record_initial_history`, `InitialHistory::Forked`)."""
    h = led.header
    if not registry.get(led.format).forks_copy_parent_history or not isinstance(h, dict):
        return set()
    parents = {p for p in (h.get("forked_from_id"), spawning_session_id(led)) if isinstance(p, str) and p}
    if not parents:
        return set()
    start = next(
        (i for i, r in enumerate(led.records) if r.kind == "meta" and r.type == "session_meta" and _meta_id(r.extra) in parents),
        None,
    )
    if start is None:
        return set()
    rest = led.records[start:]
    end = next(
        (i for i, r in enumerate(rest) if r.kind == "message" and r.message is not None and r.message.role == "tool"
         and r.message.text().startswith(_FORKED_OUTPUT_START)),
        None,
    )
    if end is not None:
        return {r.seq for r in rest[: end + 1]}
    stamp = rest[0].timestamp
    copied: set[int] = set()
    for r in rest:
        if stamp is None or r.timestamp != stamp:
            break
        copied.add(r.seq)
    return copied


@dataclass(slots=True)
class UsageEntry:
    """Usage recorded on one day (UTC) by one model in one session."""

    day: str | None  # YYYY-MM-DD; None when the message has no time
    model: str | None
    usage: Usage
    requests: int
    agent: str | None = None  # a sub-agent of the session that answered (ADK); None: the session's own agent


def _author(extra: object) -> str | None:
    a = extra.get("author") if isinstance(extra, dict) else None
    return a if isinstance(a, str) and a else None


def root_agent(led: Ledger) -> str | None:
    """The agent a session's user talks to (ADK: the author of the first event not the user's);
    an event another agent authored is a sub-agent's. None when the records name no author."""
    for r in led.records:
        a = _author(r.extra)
        if a is not None and a != "user":
            return a
    return None


def usage_entries(led: Ledger) -> list[UsageEntry]:
    """The session's recorded usage by (day, model, sub-agent): each message's Usage as the adapter
    gave it (already de-duplicated where a runtime writes one reply over several lines); a reply
    another agent of the session authored (ADK sub-agents) is that agent's. A Codex child's copy of
    its parent's history is the parent's usage, not the child's (`forked_from_parent`)."""
    root = root_agent(led)
    copied = forked_from_parent(led)
    out: dict[tuple[str | None, str | None, str | None], UsageEntry] = {}
    for r in led.records:
        if r.kind != "message" or r.role != "assistant" or r.seq in copied:
            continue
        m = r.message
        if m is None or m.usage is None:
            continue
        stamp = iso_utc(epoch_seconds(r.timestamp))
        day = stamp[:10] if stamp else None
        model = m.route.model_id if m.route is not None else None
        author = _author(r.extra)
        agent = author if root is not None and author not in (None, root, "user") else None
        key = (day, model, agent)
        e = out.get(key)
        if e is None:
            out[key] = UsageEntry(day, model, Usage() + m.usage, 1, agent)
        else:
            e.usage = e.usage + m.usage
            e.requests += 1
    return list(out.values())


@dataclass(slots=True)
class SearchDocument:
    """One searchable piece of a session: a message's text, a tool call's name, a summary."""

    line: int
    role: str  # the message's role; "checkpoint" for a summary
    kind: str  # text | tool | summary
    text: str


def search_documents(led: Ledger) -> Iterator[SearchDocument]:
    led.load_messages([r.seq for r in led.records if r.kind == "message"])
    for r in led.records:
        if r.kind == "checkpoint" and r.checkpoint is not None and r.checkpoint.summary:
            yield SearchDocument(r.line, "checkpoint", "summary", r.checkpoint.summary[:DOC_CHARS])
            continue
        if r.kind != "message":
            continue
        m = r.message
        if m is None:
            continue
        text = m.text()
        if text.strip():
            yield SearchDocument(r.line, m.role, "text", text[:DOC_CHARS])
        names = [b.name for b in m.blocks if b.type == "tool_call" and b.name]
        if names:
            yield SearchDocument(r.line, m.role, "tool", " ".join(names))


def scan_row(report: Report, path: str, size: int | None = None, parent: str | None = None) -> ScanRow:
    """The row of one analysed session."""
    led = report.ledger
    first, last = activity_span(led)
    counts = report.coverage_counts()
    worst = min(report.findings, key=lambda f: SEVERITY_RANK[f.severity], default=None)
    total = Usage()
    models: list[str] = []
    for e in usage_entries(led):
        total = total + e.usage
    for r in led.records:
        if r.kind == "message" and r.role == "assistant":
            m = r.message
            mid = m.route.model_id if m is not None and m.route is not None else None
            if mid and mid not in models:
                models.append(mid)
    findings = FindingCounts()
    by_code: dict[tuple[str, str], int] = {}
    for f in report.findings:
        setattr(findings, f.severity, getattr(findings, f.severity) + 1)
        by_code[(f.severity, f.code)] = by_code.get((f.severity, f.code), 0) + 1
    # The report lists findings most important first within a severity: keep that order.
    ranked = sorted(by_code.items(), key=lambda kv: SEVERITY_RANK[kv[0][0]])
    codes = [CodeCount(severity=sev, code=code, count=n) for (sev, code), n in ranked]  # type: ignore[arg-type]
    return ScanRow(
        path=path,
        format=led.format,
        format_version=led.version,
        session_id=led.session_id,
        project=session_project(led),
        parent=parent,
        parent_session_id=spawning_session_id(led),
        first_activity=iso_utc(first),
        last_activity=iso_utc(last),
        records=len(led.records),
        messages=sum(1 for r in led.records if r.kind == "message"),
        context_tokens=report.context_tokens,
        window=report.window,
        window_share=round(report.context_tokens / report.window, 4) if report.window else None,
        checkpoints=len(report.checkpoints),
        holes=counts["hole"],
        worst_severity=worst.severity if worst else None,  # type: ignore[arg-type]
        worst_code=worst.code if worst else None,
        worst_message=worst.message if worst else None,
        findings=findings,
        codes=codes,
        usage=TokenUsage(**total.to_dict()),
        models=models,
        size=size if size is not None else led.size,
    )
