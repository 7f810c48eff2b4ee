"""The JSON contract of `plan --json` and `repair --json` (docs/repair-json.md).

Plain dicts; adding keys is allowed, renaming or removing them is not. A record is referred to as
{seq, line, id}; a set of messages as {count, by_role, first_line, last_line}.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from inspector.analysis.export import finding_json
from inspector.analysis.findings import SEVERITY_RANK
from inspector.compaction.cut import PathIndex
from inspector.compaction.entries import CheckpointSpec
from inspector.compaction.execute import RepairResult
from inspector.compaction.plan import Outlook, RepairPlan

PLAN_SCHEMA = "inspector.plan/1"
REPAIR_SCHEMA = "inspector.repair/1"
_ROLES = ("system", "user", "assistant", "tool")


def ref(ix: PathIndex, pos: int) -> dict[str, Any]:
    r = ix.rec(pos)
    return {"seq": r.seq, "line": r.line, "id": r.id}


def span(ix: PathIndex, positions: list[int]) -> dict[str, Any]:
    c: Counter[str] = Counter(ix.rec(p).role or "?" for p in positions)
    out: dict[str, Any] = {"count": len(positions), "by_role": {k: c[k] for k in _ROLES if c[k]}}
    if positions:
        lines = [ix.rec(p).line for p in positions]
        out["first_line"] = min(lines)
        out["last_line"] = max(lines)
    return out


def checkpoint_json(ix: PathIndex, spec: CheckpointSpec, summary_tokens: int | None) -> dict[str, Any]:
    rep_positions = [p for a, b in spec.represents for p in ix.messages_in(a, b)]
    removed = [p for p in ix.messages_in(0, spec.cut) if p not in set(spec.keep)]
    ranges = []
    for a, b in spec.represents:
        ms = ix.messages_in(a, b)
        if ms:
            ranges.append([ref(ix, ms[0]), ref(ix, ms[-1])])
    return {
        "kind": spec.kind,
        "boundary": {
            "first_kept": ref(ix, spec.cut) if ix.is_message(spec.cut) else None,
            "last_removed": ref(ix, removed[-1]) if removed else None,
        },
        "removes": span(ix, removed),
        "represents": {**span(ix, rep_positions), "ranges": ranges},
        "retains": {
            **span(ix, spec.retains),
            "kept_ahead": [ref(ix, p) for p in spec.keep],
            "dropped": span(ix, spec.dropped),
        },
        "shape": spec.shape,
        "failure_reason": spec.failure_reason,
        "summary_tokens": summary_tokens,
        "tail_tokens": spec.tail_tokens,
        "size_tokens": (summary_tokens or 0) + spec.tail_tokens,
        "tail_budget_tokens": spec.budget_tokens,
        "tokens_before": spec.tokens_before,
        "quotes_active_request": ref(ix, spec.quote_active) if spec.quote_active is not None else None,
        "read_files": spec.read_files,
        "modified_files": spec.modified_files,
    }


def outlook_json(o: Outlook | None) -> dict[str, Any] | None:
    if o is None:
        return None
    findings = sorted(o.findings, key=lambda f: SEVERITY_RANK[f.severity])
    return {
        "coverage": o.coverage,
        "holes": o.holes,
        "orphans": o.orphans,
        "unanswered": o.unanswered,
        "next_request": {"items": o.items, "tokens": o.context_tokens},
        "findings": [finding_json(o.report, f) for f in findings],
        "finding_counts": {s: sum(1 for f in findings if f.severity == s) for s in ("error", "warning", "info")},
    }


def plan_json(p: RepairPlan) -> dict[str, Any]:
    ix = p.index
    led = p.report.ledger
    b = p.budgets
    src = b.sources
    carry = p.carry
    requests = []
    for k, ch in enumerate(p.requests, 1):
        requests.append(
            {
                "index": k,
                "kind": "update" if ch.carry_tokens else "initial",
                "from": ref(ix, ch.positions[0]) if ch.positions else None,
                "to": ref(ix, ch.positions[-1]) if ch.positions else None,
                **span(ix, ch.positions),
                "prompt_tokens": ch.prompt_tokens,
                "budget": ch.budget,
                "carried_tokens": ch.carry_tokens,
                "max_output_tokens": p.max_output_tokens,
                "file_list": ch.file_list,
                "clipped": [ref(ix, q) for q in ch.clipped],
            }
        )
    summary_tokens = ix.tok.count(p.summary) if p.summary is not None else (p.target_tokens or None)
    rng = None
    if p.range is not None:
        ms = ix.messages_in(*p.range)
        rng = {"from": ref(ix, ms[0]) if ms else None, "to": ref(ix, ms[-1]) if ms else None, **span(ix, ms)}
    return {
        "schema": PLAN_SCHEMA,
        "file": led.path,
        "format": led.format,
        "session_id": led.session_id,
        "strategy": p.strategy,
        "action": p.action,
        "reason": p.reason,
        "budgets": {
            "window": {"tokens": b.window, "source": src.get("window")},
            "reserve": {"tokens": b.reserve, "source": src.get("reserve")},
            "keep_recent": {"tokens": b.keep_recent, "source": src.get("keep_recent")},
            "request": {"tokens": b.request, "source": src.get("request")},
            "available": b.available,
            "evidence": b.evidence,
        },
        "active_request": ref(ix, p.active) if p.active is not None else None,
        "carried_summary": None
        if carry is None
        else {
            "checkpoint": carry.view.index,
            "line": carry.view.record.line,
            "tokens": carry.tokens,
            "trusted": carry.trusted,
            "why_not": carry.why_not,
            "represents": span(ix, [q for a, z in carry.represents for q in ix.messages_in(a, z)]),
        },
        "range": rng,
        "requests": requests,
        "output": {
            "target_tokens": p.target_tokens,
            "max_output_tokens": p.max_output_tokens,
            "installable_tokens": p.installable_tokens,
        },
        "checkpoint": checkpoint_json(ix, p.checkpoint, summary_tokens) if p.checkpoint is not None else None,
        "fallback": None
        if p.recovery is None or p.action == "recover"
        else checkpoint_json(ix, p.recovery.spec, ix.tok.count(p.recovery.summary)),
        "proven_span": None
        if p.route is None
        else {"route": p.route.label(), "reply": ref(ix, p.proven) if p.proven is not None else None},
        "before": outlook_json(p.before),
        "after": outlook_json(p.after),
        "notes": p.notes,
        # What it would append (lines) or insert (rows), in the runtime's own record shape (the
        # summary a placeholder until the summarizer has written it).
        "records": p.lines,
    }


def result_json(res: RepairResult, out: str | None = None, written: Outlook | None = None) -> dict[str, Any]:
    p = res.plan
    ix = p.index
    calls = [
        {
            "request": c.request,
            "attempt": c.attempt,
            "kind": c.kind,
            "messages": c.messages,
            "prompt_tokens": c.prompt_tokens,
            "max_output_tokens": c.max_output_tokens,
            "outcome": c.outcome,
            "status": c.status,
            "usage": c.usage.to_dict() if c.usage is not None else None,
            "attempts": c.attempts,
            "detail": c.detail,
            "accepted": c.accepted,
        }
        for c in res.calls
    ]
    summary_tokens = ix.tok.count(res.summary) if res.summary is not None else None
    return {
        "schema": REPAIR_SCHEMA,
        "file": p.report.ledger.path,
        "format": p.report.ledger.format,
        "strategy": p.strategy,
        "status": res.status,
        "complete": res.complete,
        "outcome": res.outcome,
        "reason": res.reason,
        "failure_reason": res.failure_reason,
        "calls": calls,
        "usage": res.usage.to_dict() if res.usage is not None else None,
        "dropped": span(ix, res.dropped),
        "retreated": res.retreated,
        "truncated": res.truncated,
        "essential_complete": res.essential_complete,
        "checkpoint": checkpoint_json(ix, res.checkpoint, summary_tokens) if res.checkpoint is not None else None,
        "entry": res.entry,
        "records": res.lines,
        "out": out,
        "before": outlook_json(p.before),
        "after": outlook_json(written or res.after),
        "after_source": "written file" if written is not None else ("simulated" if res.after is not None else None),
        "plan": plan_json(p),
    }
