"""pi's write-back (DESIGN §3): one `compaction` entry pi accepts (peers/pi/README.md, "pi compaction
behaviour", point 11): a fresh 8-hex id, `parentId` = the current leaf, `firstKeptEntryId` on the
active path and never a toolResult, `tokensBefore`, `summary`, `details`, `fromHook: true`. pi keeps
the entries from `firstKeptEntryId` up to the compaction, so the retained tail is contiguous on the
path. `details.represents` states what the summary stands for as [first id, last id] ranges (pi
ignores it; this tool reads it back, so a summary rebuilt from source is not mistaken for a rolled one).

Pure: builds dicts from a `CheckpointDraft`. Writing them is the store's job (`inspector.store`).
"""

from __future__ import annotations

from typing import Any

from inspector.formats.base import FAILS_ON_OPEN, CheckpointDraft
from inspector.ledger.model import Ledger, Usage


def refusal(led: Ledger) -> str | None:
    """What keeps an appended compaction from being read by pi, or None."""
    if led.version is not None and led.version < 2:
        return (
            "this is a pi v1 session (no entry ids): pi gives its entries random ids when it loads it, "
            "so an appended compaction cannot name the entry it keeps from; open it once in pi to migrate it"
        )
    if led.runtime_rejects_file:
        return "pi ignores this file (no valid session header): an appended compaction would be lost"
    if led.leaf_seq is None or led.records[led.leaf_seq].id is None:
        return "the session has no current leaf with an id to hang a compaction under"
    return _stops_opening(led)


def _stops_opening(led: Ledger) -> str | None:
    """Why pi cannot open this session whatever is appended (a line that is JSON null; a message
    entry without a message on the path a compaction would extend: `pi_sending`), or None."""
    for d in led.diagnostics:
        if d.problem == "resume_refused":
            return f"pi cannot open this session whatever is appended ({d.message})"
    stops = {s: d for d in led.diagnostics if d.problem == FAILS_ON_OPEN for s in d.seqs}
    if not stops:
        return None
    by_id, records, seen = led.by_id(), led.records, set()
    s: int | None = led.leaf_seq
    while s is not None and s not in seen:  # (the path a compaction hung under the leaf extends)
        seen.add(s)
        if s in stops:
            return f"pi cannot open this session while the entry stays on its path, and a compaction keeps it there ({stops[s].message})"
        pid = records[s].parent_id
        s = by_id.get(pid) if pid is not None else None
    return None


def _usage(u: Usage | None) -> dict[str, int] | None:
    if u is None:
        return None
    return {"input": u.input, "output": u.output, "cacheRead": u.cache_read, "cacheWrite": u.cache_write}


def compaction_entry(d: CheckpointDraft) -> dict[str, Any]:
    details: dict[str, Any] = {
        "readFiles": d.read_files,
        "modifiedFiles": d.modified_files,
        "retainedTailShape": d.shape,
        "failureReason": d.failure_reason,
        "usage": _usage(d.usage),
        "requests": d.requests,
        "represents": d.represents,
        "trigger": "manual",
        "truncated": d.truncated,
        "essentialComplete": d.essential_complete,
        "retainedTailBudgetTokens": d.budget_tokens,
        "producer": d.producer,
    }
    if d.essential_complete is None:
        del details["essentialComplete"]
    return {
        "type": "compaction",
        "id": d.entry_id,
        "parentId": d.leaf_id,
        "timestamp": d.timestamp,
        "summary": d.summary,
        "firstKeptEntryId": d.first_kept_id,
        "tokensBefore": d.tokens_before,
        "details": details,
        "fromHook": True,
    }
