"""The stable JSON contract of `analyze --json` and `context --json` (docs/report-json.md).

Plain dicts built from a Report; adding keys is allowed, renaming or removing them is not.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import chain, compress, islice, repeat
from operator import attrgetter, eq
from typing import Any

from inspector.analysis.engine import CheckpointView, ContextItem, Finding, Report
from inspector.analysis.findings import SEVERITY_RANK, fmt_roles, plural, role_counts
from inspector.analysis.numbers import count
from inspector.formats import registry
from inspector.ledger.model import Record

ANALYZE_SCHEMA = "inspector.analyze/1"
CONTEXT_SCHEMA = "inspector.context/1"
PREVIEW_CHARS = 160
_KIND = attrgetter("kind")
_ROLE = attrgetter("role")


def _ref(rec: Record) -> dict[str, Any]:
    return {"seq": rec.seq, "line": rec.line, "id": rec.id}


class PathCounts:
    """Messages by role along the active path: any range's counts by two bisections of each role's
    path positions (the messages' positions where the analysis read them, `engine.PathScan`)."""

    ROLES = ("system", "user", "assistant", "tool")

    def __init__(self, report: Report) -> None:
        records = report.ledger.records
        path = report.path
        self.report = report
        scan = report._scan
        if scan is not None and scan.path is path:
            at: list[int] = scan.msgs
        else:
            kinds = map(_KIND, map(records.__getitem__, path))
            at = list(compress(range(len(path)), map("message".__eq__, kinds)))
        # (every pass in C: the roles of the messages, then each role's positions among them)
        roles = list(map(_ROLE, map(records.__getitem__, map(path.__getitem__, at))))
        self.at: dict[str, list[int]] = {role: list(compress(at, map(eq, roles, repeat(role)))) for role in self.ROLES}
        self.msg_pos: list[int] = list(compress(at, map(frozenset(self.ROLES).__contains__, roles)))

    def span(self, ivs: list[tuple[int, int]], minus: frozenset[int] = frozenset(), plus: list[int] | None = None) -> dict[str, Any]:
        from bisect import bisect_left

        records = self.report.ledger.records
        path = self.report.path
        by_role = dict.fromkeys(self.ROLES, 0)
        lines: list[int] = []
        for lo, hi in ivs:
            for role, at in self.at.items():
                by_role[role] += bisect_left(at, hi) - bisect_left(at, lo)
            a = bisect_left(self.msg_pos, lo)
            b = bisect_left(self.msg_pos, hi) - 1
            if a <= b:
                lines += [records[path[self.msg_pos[a]]].line, records[path[self.msg_pos[b]]].line]
        for s in minus:
            r = records[s].role
            if r in by_role:
                by_role[r] -= 1
        for s in plus or []:
            r = records[s].role
            if r in by_role:
                by_role[r] += 1
            lines.append(records[s].line)
        out: dict[str, Any] = {"count": sum(by_role.values()), "by_role": {k: n for k, n in by_role.items() if n}}
        if lines:
            out["first_line"] = min(lines)
            out["last_line"] = max(lines)
        return out


@dataclass(frozen=True, slots=True)
class CheckpointStatus:
    """What a checkpoint is, in the words every view uses (CLI table, timeline, detail pane, JSON),
    and its tone: `error` when it left a hole or failed, `warning` when its summary is cut, `ok`."""

    words: str
    tone: str  # ok | neutral (stated, nothing wrong: an opaque summary) | warning | error


def checkpoint_status(report: Report, v: CheckpointView) -> CheckpointStatus:
    """A repair this tool wrote is named for what it did and judged on it (did it leave a hole?);
    a producer's own checkpoint by its summary (empty, carried forward, a fallback's reason)."""
    cp = v.checkpoint
    holes = sum(
        len(f.records) for f in report.findings if f.code == "hole" and (f.data or {}).get("checkpoint") == v.index
    )
    kept = len(v.retains)
    if v.repair:
        if cp.failure_reason:
            did = f"recovery ({cp.failure_reason}), kept {plural(kept, 'message')} raw"
            did += ", summary carried" if v.rep else ""
        elif v.carried_forward or not v.own:
            did = f"kept {plural(kept, 'message')} raw, summary carried"
        else:
            did = f"summarized {plural(len(v.own_range), 'message')}, kept {kept:,} raw"
        words = f"inspector repair: {did}"
        if holes:
            words += f"; left {plural(holes, 'message')} in a hole"
        tone = "error" if holes else "ok"
    elif v.empty_summary:
        words, tone = "empty summary", "error"
    elif cp.opaque_summary is not None:
        words, tone = f"opaque summary ({cp.opaque_summary})", "neutral"
    elif v.carried_forward:
        words, tone = "fallback: carried the previous summary forward (summarized nothing new)", "error"
    elif cp.failure_reason:
        words, tone = f"fallback: {cp.failure_reason}", "error"
    else:
        words, tone = "summarized", "ok"
    if cp.truncated:
        words += ", truncated"
        tone = "error" if tone == "error" else "warning"
    return CheckpointStatus(words, tone)


def checkpoint_json(report: Report, v: CheckpointView, counts: PathCounts | None = None) -> dict[str, Any]:
    counts = counts or PathCounts(report)
    cp = v.checkpoint
    status = checkpoint_status(report, v)
    records = report.ledger.records
    boundary: dict[str, Any] = {"first_kept_id": cp.first_kept_id, "explicit": cp.explicit_boundary, "found": v.first_kept_found}
    if v.first_kept_seq is not None:
        boundary["first_kept_line"] = records[v.first_kept_seq].line
    out: dict[str, Any] = {
        "index": v.index,
        **_ref(v.record),
        "boundary": boundary,
        "removes": counts.span([(0, v.cut)], minus=v.keep),
        "represents": counts.span(v.rep),
        "retains": {**counts.span([(v.cut, max(v.cut, v.pos))], plus=sorted(v.keep)), "shape": v.shape},
        "summarized_here": counts.span(v.own),
        "summary_chars": len(cp.summary),
        "fallback": v.fallback,
        "carried_forward": v.carried_forward,
        "repair": v.repair,
        "status": status.words,
        "status_tone": status.tone,
        "empty_summary": v.empty_summary,
        "failure_reason": cp.failure_reason,
        "usage": cp.usage.to_dict() if cp.usage else None,
        "tokens_before": cp.tokens_before,
        "trigger": cp.trigger,
        "truncated": cp.truncated,
        "essential_complete": cp.essential_complete,
        "from_hook": cp.from_hook,
    }
    if both := v.represented_and_retained:
        out["represented_and_retained"] = counts.span(both)  # the sets overlap (DESIGN §2)
    details_key = registry.get(report.ledger.format).details_key
    if details_key is not None:
        # ADK: the timestamp range, whether it survives, what its summarizer was handed (inferred).
        out[details_key] = cp.details
    if cp.replacement is not None:
        # Codex: the history sent after it, in order: records kept raw, or its own content.
        out["replacement"] = [
            {"role": h.role, "kind": h.kind, "kept_seq": h.seq, "line": records[h.seq].line if h.seq is not None else v.record.line, "id": h.id}
            for h in cp.replacement
        ]
    return out


def finding_json(report: Report, f: Finding) -> dict[str, Any]:
    out: dict[str, Any] = {
        "code": f.code,
        "severity": f.severity,
        "message": f.message,
        "records": [_ref(report.ledger.records[s]) for s in f.records],
    }
    if f.by_role is not None:
        out["by_role"] = f.by_role
    if f.data:
        out["data"] = f.data
    return out


# The findings that say the runtime sends nothing at all: the headline says so before the request.
STOPS = ("resume_refused", "request_fails")


def summary_line(report: Report, counts: dict[str, int] | None = None) -> str:
    """One sentence a person reads first. `counts`: `report.coverage_counts()`, when the caller has them."""
    counts = report.coverage_counts() if counts is None else counts
    errors = [f for f in report.findings if f.severity == "error"]
    warnings = [f for f in report.findings if f.severity == "warning"]
    holes = counts["hole"]
    hole_part = ""
    if holes:
        hs = [s for s, st in enumerate(report.states) if st == "hole"]
        hole_part = f"{plural(holes, 'message')} ({fmt_roles(role_counts(report, hs))}) fell into holes; "
    n_ctx = len(report.context)
    ctx = f"next request: {plural(n_ctx, 'item')}, about {count(report.context_tokens)} tokens"
    if report.window:
        ctx += f" of {count(report.window)}"
    stops = next((f.code for f in report.findings if f.code in STOPS), None)
    if stops is not None:  # (what it would send is still listed, as written: the finding says what to repair)
        ctx = f"{report.runtime.name} sends nothing ({stops}); {ctx.replace('next request', 'the request as written', 1)}"
    if errors:
        verdict = plural(len(errors), "error")
        if warnings:
            verdict += f", {plural(len(warnings), 'warning')}"
    elif warnings:
        verdict = plural(len(warnings), "warning")
    else:
        verdict = "healthy"
    return f"{verdict}: {hole_part}{plural(len(report.checkpoints), 'checkpoint')} on the active path; {ctx}"


def message_count(report: Report) -> int:
    """How many message records the ledger holds. Where the analysis read the path (`PathScan`)
    and the path is a run of seqs (a linear runtime's file), only the records off it are read."""
    records = report.ledger.records
    path = report.path
    scan = report._scan
    if scan is not None and scan.path is path and path and path[-1] - path[0] == len(path) - 1 and scan.in_order():
        off = chain(islice(records, 0, path[0]), islice(records, path[-1] + 1, None))
        return len(scan.msgs) + sum(map("message".__eq__, map(_KIND, off)))
    return sum(map("message".__eq__, map(_KIND, records)))


def analyze_json(report: Report) -> dict[str, Any]:
    led = report.ledger
    leaf = led.records[report.path[-1]] if report.path else None
    findings = sorted(report.findings, key=lambda f: SEVERITY_RANK[f.severity])
    counts = PathCounts(report)
    coverage = report.coverage_counts()
    return {
        "schema": ANALYZE_SCHEMA,
        "file": led.path,
        "format": led.format,
        "format_version": led.version,
        "migrated": led.migrated,
        "session_id": led.session_id,
        "at_line": led.upto_line,
        "summary": summary_line(report, coverage),
        "records": len(led.records),
        "messages": message_count(report),
        "active_path": {"length": len(report.path), "leaf": _ref(leaf) if leaf else None},
        "coverage": coverage,
        "checkpoints": [checkpoint_json(report, v, counts) for v in report.checkpoints],
        "findings": [finding_json(report, f) for f in findings],
        "finding_counts": {s: sum(1 for f in findings if f.severity == s) for s in ("error", "warning", "info")},
        "context": {
            "messages": len(report.context),
            "tokens": report.context_tokens,
            "window": report.window,
            "reserve": report.reserve,
            "tokens_source": report.tokens_source,
            "tokenizer": report.tokenizer,
            "tokenizer_offline": report.tokenizer_offline,
        },
        "diagnostics": [
            {"line": d.line, "problem": d.problem, "message": d.message, "recovered": d.recovered} for d in led.diagnostics
        ],
    }


def item_preview(report: Report, it: ContextItem, chars: int = PREVIEW_CHARS) -> str:
    if it.seq is None and not it.text and it.note:  # (sent by the runtime, its text not in the file)
        return f"({it.note})"[:chars]
    if it.kind == "summary" or it.seq is None or it.text:  # (its own text: what is sent)
        text = it.text
    else:
        m = it.sent if it.sent is not None else report.ledger.records[it.seq].message  # (rewritten: what is sent)
        text = m.text() if m is not None else ""
        if not text and m is not None:
            text = m.first_line()
    # Collapse whitespace in a head of the text only: splitting a 50 MB text builds millions of words.
    text = " ".join(text[: max(chars * 16, 4096)].split())
    return text[:chars]


def context_item_json(report: Report, it: ContextItem) -> dict[str, Any]:
    out: dict[str, Any] = {
        "index": it.index,
        "role": it.role,
        "kind": it.kind,
        "record_id": it.record_id,
        "line": it.line,
        "seq": it.seq,
        "synthetic": it.synthetic,
        "tokens": it.tokens,
        "tokens_from": it.tokens_from,
        "preview": item_preview(report, it),
    }
    if it.note:
        out["note"] = it.note
    if it.on_resume:
        out["on_resume"] = True
    if it.joined:
        out["joined"] = list(it.joined)
    if it.removed_results:
        out["removed_results"] = list(it.removed_results)
    if it.seq is not None and report.states[it.seq] == "retained" and report.summarized_by[it.seq]:
        out["also_summarized_by"] = report.summarized_by[it.seq]  # kept raw and represented too
    if it.role == "assistant":
        out["tool_call_ids"] = it.tool_call_ids
        if it.unanswered:
            out["unanswered"] = it.unanswered
    if it.role == "tool":
        out["tool_call_id"] = it.tool_result_id
        out["orphan"] = it.orphan
    return out


def context_json(report: Report) -> dict[str, Any]:
    led = report.ledger
    return {
        "schema": CONTEXT_SCHEMA,
        "file": led.path,
        "format": led.format,
        "session_id": led.session_id,
        "at_line": led.upto_line,
        "tokens": report.context_tokens,
        "window": report.window,
        "reserve": report.reserve,
        "tokens_source": report.tokens_source,
        "tokenizer": report.tokenizer,
        "messages": [context_item_json(report, it) for it in report.ensure_tokens()],
    }
