"""The next request of a runtime whose checkpoints replace the whole history (Codex, DESIGN §3).

Codex sends its base instructions, then the history: after a `compacted` record that is the
checkpoint's replacement history, in its own order (records kept raw interleaved with items only
the checkpoint holds: its summary, re-injected instructions), then every message written after
it. Before sending, Codex normalizes the history (codex-rs `context_manager` normalize): a call
with no output anywhere gets a synthetic "aborted" output right after it, and an output whose
call is not in the history is removed. One call or output per line, so pairing spans the whole
request, not one assistant message.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from inspector.formats.base import Runtime
from inspector.ledger.model import Ledger

if TYPE_CHECKING:
    from inspector.analysis.engine import CheckpointView, ContextItem


def replacement_context(led: Ledger, path: list[int], views: list[CheckpointView], rt: Runtime) -> list[ContextItem]:
    from inspector.analysis.engine import ContextItem

    records = led.records
    header_line = next((r.line for r in records if r.kind == "header"), None)
    entries: list[int | ContextItem] = []
    if views:
        last = views[-1]
        for h in last.checkpoint.replacement or []:
            if h.seq is not None:
                if records[h.seq].runtime_visible:  # not rolled back since
                    entries.append(h.seq)
                continue
            is_summary = h.kind == "summary"
            entries.append(
                ContextItem(
                    0,
                    h.role,
                    "summary" if is_summary else "message",
                    last.seq if is_summary else None,
                    h.id,
                    last.record.line,
                    False,
                    h.text,
                    tool_call_ids=[h.call_id] if h.role == "assistant" and h.call_id else [],
                    tool_result_id=h.call_id if h.role == "tool" else None,
                )
            )
        entries += [s for s in path[last.pos + 1 :] if records[s].kind == "message"]
    else:
        entries = [s for s in path if records[s].kind == "message"]
    entries = [e for e in entries if not isinstance(e, int) or not records[e].never_sent]

    calls: set[str] = set()
    answered: set[str] = set()
    for e in entries:
        if isinstance(e, int):
            calls.update(records[e].call_ids)
            rid = records[e].result_id if records[e].role == "tool" else None
            m = records[e].message if rt.many_results_per_message and rid is not None else None
            answered.update(m.tool_result_ids() if m is not None else ())
        else:
            calls.update(e.tool_call_ids)
            rid = e.tool_result_id
        if rid is not None:
            answered.add(rid)

    items: list[ContextItem] = []
    if led.instructions:
        items.append(ContextItem(0, "system", "message", None, None, header_line, False, led.instructions, note=led.instructions_note))
    for e in entries:
        if isinstance(e, int):
            rec = records[e]
            if rec.role == "tool":
                if rec.result_id is None or rec.result_id not in calls:
                    continue  # Codex removes an output whose call is not in the history
                item = ContextItem(0, "tool", "message", e, rec.id, rec.line, False, "", tool_result_id=rec.result_id)
            elif rec.role == "assistant":
                item = ContextItem(0, "assistant", "message", e, rec.id, rec.line, False, "", tool_call_ids=list(rec.call_ids))
            elif rec.role is not None:
                item = ContextItem(0, rec.role, "message", e, rec.id, rec.line, False, "")
            else:
                continue
        else:
            item = e
            if item.role == "tool" and (item.tool_result_id is None or item.tool_result_id not in calls):
                continue
        items.append(item)
        missing = [c for c in item.tool_call_ids if c not in answered]
        if missing:
            item.unanswered = missing
            for c in missing if rt.synthesize_missing_results else ():
                items.append(ContextItem(0, "tool", "message", None, None, None, True, rt.synthetic_result_text, tool_result_id=c))
    for i, it in enumerate(items):
        it.index = i
    return items
