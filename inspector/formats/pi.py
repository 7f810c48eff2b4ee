"""pi / OpenClaw session JSONL, versions 1-3 (DESIGN §3).

Read-only mapping into the ledger model. v1/v2 files are migrated in memory exactly the way pi's
`migrateSessionEntries` does (ids and parents for v1, `firstKeptEntryIndex` -> id, `hookMessage` ->
`custom`); the input file is never written. Lines pi's own parser would skip (two JSON objects glued
on one line) are recovered but marked `runtime_visible=False`, so the effective context follows pi
while the analysis can say what pi lost.
"""

from __future__ import annotations

from typing import Any

from inspector.formats.jsonl import RawLine
from inspector.ledger.model import (
    Block,
    Checkpoint,
    Diagnostic,
    Ledger,
    Message,
    Record,
    Route,
    Usage,
    normalize_stop_reason,
)

FORMAT = "pi"
CURRENT_VERSION = 3

# Text pi wraps around a compaction / branch summary when it sends it (pi messages.js).
COMPACTION_SUMMARY_PREFIX = (
    "The conversation history before this point was compacted into the following summary:\n\n<summary>\n"
)
COMPACTION_SUMMARY_SUFFIX = "\n</summary>"
BRANCH_SUMMARY_PREFIX = "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n"
BRANCH_SUMMARY_SUFFIX = "</summary>"

ENTRY_TYPES = (
    "session",
    "message",
    "compaction",
    "branch_summary",
    "custom_message",
    "custom",
    "model_change",
    "thinking_level_change",
    "label",
    "session_info",
)

_BASE_KEYS = frozenset({"type", "id", "parentId", "timestamp"})
_KNOWN_KEYS: dict[str, frozenset[str]] = {
    "session": frozenset({"type", "version", "id", "timestamp", "cwd", "parentSession", "provider", "modelId", "thinkingLevel", "branchedFrom"}),
    "message": _BASE_KEYS | {"message"},
    "compaction": _BASE_KEYS
    | {"summary", "firstKeptEntryId", "firstKeptEntryIndex", "tokensBefore", "details", "fromHook"},
    "branch_summary": _BASE_KEYS | {"summary", "fromId", "details", "fromHook"},
    "custom_message": _BASE_KEYS | {"customType", "content", "display", "details"},
    "custom": _BASE_KEYS | {"customType", "data"},
    "model_change": _BASE_KEYS | {"provider", "modelId"},
    "thinking_level_change": _BASE_KEYS | {"thinkingLevel"},
    "label": _BASE_KEYS | {"targetId", "label"},
    "session_info": _BASE_KEYS | {"name"},
}
_MSG_KEYS: dict[str, frozenset[str]] = {
    "user": frozenset({"role", "content", "timestamp"}),
    "assistant": frozenset(
        {"role", "content", "api", "provider", "model", "usage", "stopReason", "timestamp", "responseId", "errorMessage"}
    ),
    "toolResult": frozenset({"role", "toolCallId", "toolName", "content", "isError", "timestamp", "details"}),
    "bashExecution": frozenset(
        {"role", "command", "output", "exitCode", "cancelled", "truncated", "fullOutputPath", "excludeFromContext", "timestamp"}
    ),
    "custom": frozenset({"role", "customType", "content", "display", "details", "timestamp"}),
}


def looks_like(obj: Any) -> bool:
    """Content sniffing: a pi header, or a pi entry (type + id/parentId or a pi message)."""
    if not isinstance(obj, dict):
        return False
    t = obj.get("type")
    if t == "session":
        return "cwd" in obj or "version" in obj or "id" in obj
    if t == "message" and isinstance(obj.get("message"), dict):
        return True
    return t in ENTRY_TYPES and ("parentId" in obj or "firstKeptEntryId" in obj or "firstKeptEntryIndex" in obj)


# ---------------------------------------------------------------------------------------- blocks


def _blocks_from_content(content: Any) -> list[Block]:
    if isinstance(content, str):
        return [Block("text", content)]
    if not isinstance(content, list):
        return []
    out: list[Block] = []
    for b in content:
        if not isinstance(b, dict):
            out.append(Block("other", str(b), raw=b))
            continue
        t = b.get("type")
        if t == "text":
            out.append(Block("text", b.get("text") or ""))
        elif t == "thinking":
            out.append(Block("thinking", b.get("thinking") or "", raw=b if b.get("redacted") or b.get("thinkingSignature") else None))
        elif t == "toolCall":
            out.append(Block("tool_call", "", call_id=b.get("id"), name=b.get("name"), args=b.get("arguments")))
        elif t == "image":
            out.append(Block("image", "", raw={"mimeType": b.get("mimeType")}))
        else:
            out.append(Block("other", "", raw=b))
    return out


def _usage(u: Any) -> Usage | None:
    if not isinstance(u, dict):
        return None
    try:
        return Usage(
            int(u.get("input") or 0),
            int(u.get("output") or 0),
            int(u.get("cacheRead") or 0),
            int(u.get("cacheWrite") or 0),
        )
    except (TypeError, ValueError):
        return None


def bash_execution_text(m: dict[str, Any]) -> str:
    """pi's bashExecutionToText: what the model sees for a `!command` the user ran."""
    text = f"Ran `{m.get('command')}`\n"
    if m.get("output"):
        text += f"```\n{m.get('output')}\n```"
    else:
        text += "(no output)"
    if m.get("cancelled"):
        text += "\n\n(command cancelled)"
    elif m.get("exitCode") not in (None, 0):
        text += f"\n\nCommand exited with code {m.get('exitCode')}"
    if m.get("truncated") and m.get("fullOutputPath"):
        text += f"\n\n[Output truncated. Full output: {m.get('fullOutputPath')}]"
    return text


def _message(m: dict[str, Any]) -> Message:
    role = m.get("role")
    if role == "assistant":
        blocks = _blocks_from_content(m.get("content"))
        raw_stop = m.get("stopReason")
        model = m.get("model")
        provider = m.get("provider")
        return Message(
            "assistant",
            blocks,
            stop_reason=normalize_stop_reason(raw_stop),
            stop_reason_raw=raw_stop,
            usage=_usage(m.get("usage")),
            route=Route(model, provider) if (model or provider) else None,
            error_message=m.get("errorMessage"),
            source_role="assistant",
        )
    if role == "toolResult":
        content = m.get("content")
        text_parts: list[str] = []
        extra_blocks: list[Block] = []
        if isinstance(content, str):
            text_parts.append(content)
        elif isinstance(content, list):
            for b in content:
                if isinstance(b, dict) and b.get("type") == "text":
                    text_parts.append(b.get("text") or "")
                elif isinstance(b, dict) and b.get("type") == "image":
                    extra_blocks.append(Block("image", "", raw={"mimeType": b.get("mimeType")}))
        block = Block(
            "tool_result",
            "".join(text_parts),
            call_id=m.get("toolCallId"),
            name=m.get("toolName"),
            is_error=bool(m.get("isError")),
        )
        return Message("tool", [block, *extra_blocks], source_role="toolResult")
    if role == "bashExecution":
        return Message(
            "user",
            [Block("text", bash_execution_text(m))],
            source_role="bashExecution",
            never_sent=bool(m.get("excludeFromContext")),
        )
    if role in ("custom", "hookMessage"):
        return Message("user", _blocks_from_content(m.get("content")), source_role="custom")
    if role == "user":
        return Message("user", _blocks_from_content(m.get("content")), source_role="user")
    if role == "compactionSummary":
        return Message(
            "user",
            [Block("text", COMPACTION_SUMMARY_PREFIX + str(m.get("summary") or "") + COMPACTION_SUMMARY_SUFFIX)],
            source_role="compactionSummary",
        )
    if role == "branchSummary":
        return Message(
            "user",
            [Block("text", BRANCH_SUMMARY_PREFIX + str(m.get("summary") or "") + BRANCH_SUMMARY_SUFFIX)],
            source_role="branchSummary",
        )
    # Unknown role: pi's convertToLlm drops it; we keep and show it.
    return Message("user", _blocks_from_content(m.get("content")), source_role=str(role), never_sent=True)


def _checkpoint(o: dict[str, Any]) -> Checkpoint:
    details = o.get("details")
    d = details if isinstance(details, dict) else {}
    usage_raw = d.get("usage")
    usage = None
    if isinstance(usage_raw, dict):
        usage = _usage(
            {
                "input": usage_raw.get("input", usage_raw.get("inputTokens")),
                "output": usage_raw.get("output", usage_raw.get("outputTokens")),
                "cacheRead": usage_raw.get("cacheRead"),
                "cacheWrite": usage_raw.get("cacheWrite"),
            }
        )
    fr = d.get("failureReason")
    summary = o.get("summary")
    return Checkpoint(
        summary=summary if isinstance(summary, str) else "",
        first_kept_id=o.get("firstKeptEntryId") if isinstance(o.get("firstKeptEntryId"), str) else None,
        tokens_before=o.get("tokensBefore") if isinstance(o.get("tokensBefore"), int) else None,
        trigger=d.get("trigger") if isinstance(d.get("trigger"), str) else None,
        failure_reason=fr if isinstance(fr, str) else None,
        usage=usage,
        truncated=d.get("truncated") if isinstance(d.get("truncated"), bool) else None,
        essential_complete=d.get("essentialComplete") if isinstance(d.get("essentialComplete"), bool) else None,
        retained_tail_shape=d.get("retainedTailShape") if isinstance(d.get("retainedTailShape"), str) else None,
        from_hook=o.get("fromHook") if isinstance(o.get("fromHook"), bool) else None,
        details=details,
        budget_tokens=d.get("retainedTailBudgetTokens") if isinstance(d.get("retainedTailBudgetTokens"), int) else None,
    )


def _extra(o: dict[str, Any], known: frozenset[str]) -> dict[str, Any] | None:
    unknown = o.keys() - known
    if not unknown:
        return None
    return {k: o[k] for k in unknown}


# ---------------------------------------------------------------------------------------- load


def build(lines: list[RawLine], path: str | None) -> Ledger:
    records: list[Record] = []
    diagnostics: list[Diagnostic] = []
    header: dict[str, Any] | None = None
    seq = 0
    # v1 index -> record, over the entries pi's parser keeps (header at index 0).
    pi_entries: list[Record | None] = []
    first_obj_seen = False
    header_valid = False
    for rl in lines:
        if rl.diagnostic is not None:
            diagnostics.append(rl.diagnostic)
        for o in rl.objects:
            if not isinstance(o, dict):
                diagnostics.append(
                    Diagnostic(rl.line, "not_an_object", f"line {rl.line}: a JSON {type(o).__name__}, not an entry object; ignored")
                )
                continue
            t = o.get("type")
            visible = not rl.runtime_skips
            if visible and not first_obj_seen:
                first_obj_seen = True
                header_valid = t == "session" and isinstance(o.get("id"), str)
            if t == "session" and header is None and visible:
                header = o
                rec = Record(seq, rl.line, "header", "session", id=None, timestamp=o.get("timestamp"), offset=rl.offset, length=rl.length)
                rec.extra = _extra(o, _KNOWN_KEYS["session"])
                records.append(rec)
                pi_entries.append(None)
                seq += 1
                if rl.diagnostic is not None:
                    rl.diagnostic.seqs.append(rec.seq)
                continue
            rec = _record(o, seq, rl)
            if not visible:
                rec.runtime_visible = False
            records.append(rec)
            if rl.diagnostic is not None:
                rl.diagnostic.seqs.append(rec.seq)
            if visible:
                pi_entries.append(rec)
            seq += 1

    version = None
    if header is not None:
        v = header.get("version")
        version = v if isinstance(v, int) else 1
    led = Ledger(
        path=path,
        format=FORMAT,
        session_id=header.get("id") if header and isinstance(header.get("id"), str) else None,
        header=header,
        records=records,
        diagnostics=diagnostics,
        version=version,
    )
    if not records:
        return led
    if not header_valid:
        led.runtime_rejects_file = True
        first = lines[0].line if lines else 1
        diagnostics.append(
            Diagnostic(
                first,
                "missing_header",
                f"line {first}: no session header (a first line like "
                '{"type":"session","id":...}); pi ignores such a file entirely and starts a new session',
                severity="error",
            )
        )
    if (version is not None and version < CURRENT_VERSION) or (header is None and not any(r.id for r in records)):
        _migrate_v1(led, pi_entries, lines)
        led.migrated = True
    _check_ids(led)
    # pi's leaf: the last entry in file order that its parser kept.
    for r in reversed(records):
        if r.kind != "header" and r.runtime_visible:
            led.leaf_seq = r.seq
            break
    return led


def _record(o: dict[str, Any], seq: int, rl: RawLine) -> Record:
    t = o.get("type")
    rid = o.get("id") if isinstance(o.get("id"), str) else None
    pid = o.get("parentId") if isinstance(o.get("parentId"), str) else None
    ts = o.get("timestamp")
    if t == "message":
        m = o.get("message")
        if isinstance(m, dict):
            msg = _message(m)
            rec = Record(seq, rl.line, "message", "message", rid, pid, ts, message=msg, offset=rl.offset, length=rl.length)
            extra = _extra(o, _KNOWN_KEYS["message"])
            known_m = _MSG_KEYS.get(m.get("role"))  # type: ignore[arg-type]
            if known_m is not None:
                mx = _extra(m, known_m)
                if mx:
                    extra = {**(extra or {}), "message": mx}
            rec.extra = extra
            return rec
        return Record(seq, rl.line, "unknown", "message", rid, pid, ts, extra=o, offset=rl.offset, length=rl.length)
    if t == "compaction":
        rec = Record(seq, rl.line, "checkpoint", "compaction", rid, pid, ts, checkpoint=_checkpoint(o), offset=rl.offset, length=rl.length)
        rec.extra = _extra(o, _KNOWN_KEYS["compaction"])
        return rec
    if t == "custom_message":
        content = o.get("content")
        msg = Message("user", _blocks_from_content(content), source_role="custom")
        rec = Record(seq, rl.line, "message", "custom_message", rid, pid, ts, message=msg, offset=rl.offset, length=rl.length)
        rec.extra = _extra(o, _KNOWN_KEYS["custom_message"])
        return rec
    if t == "branch_summary":
        summary = o.get("summary")
        if isinstance(summary, str) and summary:
            msg = Message("user", [Block("text", BRANCH_SUMMARY_PREFIX + summary + BRANCH_SUMMARY_SUFFIX)], source_role="branchSummary")
            rec = Record(seq, rl.line, "message", "branch_summary", rid, pid, ts, message=msg, offset=rl.offset, length=rl.length)
        else:
            rec = Record(seq, rl.line, "meta", "branch_summary", rid, pid, ts, offset=rl.offset, length=rl.length)
        rec.extra = _extra(o, _KNOWN_KEYS["branch_summary"])
        return rec
    if t == "model_change":
        rec = Record(seq, rl.line, "run", "model_change", rid, pid, ts, offset=rl.offset, length=rl.length)
        rec.extra = _extra(o, _KNOWN_KEYS["model_change"] - {"provider", "modelId"})
        return rec
    if t in _KNOWN_KEYS:
        rec = Record(seq, rl.line, "meta", str(t), rid, pid, ts, offset=rl.offset, length=rl.length)
        rec.extra = _extra(o, _BASE_KEYS)
        return rec
    # Unknown entry type: kept whole and shown; pi keeps it on the path but sends nothing for it.
    return Record(seq, rl.line, "unknown", str(t), rid, pid, ts, extra=o, offset=rl.offset, length=rl.length)


def _migrate_v1(led: Ledger, pi_entries: list[Record | None], lines: list[RawLine]) -> None:
    """pi's migrateV1ToV2, in memory: sequential ids, parent = previous entry, index -> id.

    Ids are deterministic (`v1-<line>`; pi invents random ones). Records pi's parser skips (glued
    lines) get ids too and hang off the previous record, so the recovered truth has a path.
    """
    prev_visible: str | None = None
    for r in led.records:
        if r.kind == "header":
            continue
        if r.id is None:
            r.id = f"v1-{r.line}" if r.runtime_visible else f"v1-{r.line}-{r.seq}"
        if r.runtime_visible:
            if (led.version is not None and led.version < 2) or r.parent_id is None:
                r.parent_id = prev_visible
            prev_visible = r.id
        else:
            r.parent_id = prev_visible
    # firstKeptEntryIndex indexes pi's parsed entries (header included, skipped lines excluded).
    for rl in lines:
        for o in rl.objects:
            if isinstance(o, dict) and o.get("type") == "compaction" and isinstance(o.get("firstKeptEntryIndex"), int):
                rec = next((r for r in led.records if r.line == rl.line and r.kind == "checkpoint" and r.checkpoint), None)
                if rec is None or rec.checkpoint is None or rec.checkpoint.first_kept_id is not None:
                    continue
                idx = o["firstKeptEntryIndex"]
                if 0 <= idx < len(pi_entries) and pi_entries[idx] is not None:
                    rec.checkpoint.first_kept_id = pi_entries[idx].id  # type: ignore[union-attr]
                else:
                    rec.checkpoint.first_kept_id = f"index:{idx}"
                if rec.extra is None:
                    rec.extra = {}
                rec.extra["firstKeptEntryIndex"] = idx


def _check_ids(led: Ledger) -> None:
    seen: dict[str, Record] = {}
    for r in led.records:
        if r.id is None or not r.runtime_visible:
            continue
        if r.id in seen:
            first = seen[r.id]
            led.diagnostics.append(
                Diagnostic(
                    r.line,
                    "duplicate_id",
                    f"line {r.line}: id {r.id!r} was already used on line {first.line}; pi resolves it to line {r.line}",
                    seqs=[first.seq, r.seq],
                )
            )
        seen[r.id] = r
