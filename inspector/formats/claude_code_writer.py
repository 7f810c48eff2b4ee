"""Claude Code's write-back (issue 14 §2; docs/runtimes/claude_code.md): the two lines Claude Code
2.1.328 itself appends when it compacts, so that `claude --resume` continues from our checkpoint.

1. A `system` line, subtype `compact_boundary`: `parentUuid` null, `logicalParentUuid` = the
   current leaf, `compactMetadata{trigger: "manual", preTokens, ...}`. Where the repair keeps a
   recent window verbatim, `compactMetadata.preservedSegment{headUuid, anchorUuid, tailUuid}` and
   `preservedMessages{anchorUuid, uuids, allUuids}` name its lines (every line of each kept
   message, in path order), anchored on the summary line, as Claude Code's own compaction writes
   them (its `zVr`). On resume Claude Code relinks exactly those lines after the summary and drops
   every other line written before the last boundary (its `w_r`); without a preserved segment it
   keeps nothing written before the boundary.
2. The summary: a `user` line with `isCompactSummary: true, isVisibleInTranscriptOnly: true`,
   `parentUuid` = the boundary, holding the summary in Claude Code's own wrapper (its `xye`), the
   text the peer corpus's `manual_compact.jsonl` line 53 shows.

Our own bookkeeping goes into `compactMetadata` beside Claude Code's fields (it keeps the object as
written): `represents` ([first id, last id] ranges the summary stands for, read back by the
analysis as pi's `details.represents` is), the files, the tail shape, the summarizer's outcome.

Pure: builds dicts from a `CheckpointDraft`. Writing them is the store's job (`inspector.store`).
"""

from __future__ import annotations

from typing import Any

from inspector.formats.base import CheckpointDraft
from inspector.ledger.model import Ledger, Record, Usage

# A fresh uuid is this prefix and 8 hex digits: the shape of a version-4 uuid, as Claude Code's own.
ID_PREFIX = "1c5ec7ed-0000-4000-8000-0000"
PLANNED_ID = ID_PREFIX + "00000000"
# The summary line's uuid: the boundary's with this group in place of its fourth.
_SUMMARY_GROUP = ("-8000-", "-8001-")

# Claude Code 2.1.328's summary wrapper (its `xye` with a transcript path and follow-up questions
# suppressed, as /compact writes it; `s6n` adds the last paragraph when messages are kept).
SUMMARY_OPENING = (
    "This session is being continued from a previous conversation that ran out of context. "
    "The summary below covers the earlier portion of the conversation."
)
TRANSCRIPT_NOTE = (
    "If you need specific details from before compaction (like exact code snippets, error messages, "
    "or content you generated), read the full transcript at: "
)
CONTINUE_NOTE = (
    "Continue the conversation from where it left off without asking the user any further questions. "
    "Resume directly \u2014 do not acknowledge the summary, do not recap what was happening, do not preface "
    'with "I\'ll continue" or similar. Pick up the last task as if the break never happened.'
)
KEPT_NOTE = (
    "The messages after this summary are the most recent messages from before compaction, kept verbatim. "
    "The summary was written without seeing them, so something it says has not happened yet may already "
    "have happened in them."
)
# Fields every line Claude Code writes carries, copied from the session's newest line that has them.
_SESSION_FIELDS = ("userType", "entrypoint", "cwd", "sessionId", "version", "gitBranch", "slug")


# Claude Code 1.0.x's wrapper, around the summarizer's answer ("Analysis: ... Summary: ..."), as a
# real 1.0.90 transcript has it (SWORDIntel/claude-backups e1ffaf02-....jsonl, line 134).
OPENING_1_0 = (
    "This session is being continued from a previous conversation that ran out of context. "
    "The conversation is summarized below:\n"
)
CONTINUE_NOTE_1_0 = (
    "Please continue the conversation from where we left it off without asking the user any further questions. "
    "Continue with the last task that you were asked to work on."
)

_BODY_START = "\nSummary:\n"
_BODY_ENDS = (
    f"\n{TRANSCRIPT_NOTE}", "\nContinue the conversation from where it left off", f"\n{KEPT_NOTE}", f"\n{CONTINUE_NOTE_1_0}",
)  # fmt: skip


def summary_body(text: str) -> str:
    """The summary itself inside Claude Code's wrapper (the text after "Summary:" up to the notes
    Claude Code appends; in 1.0.x's, the answer when it has no "Summary:"); a text not in a wrapper
    is all summary."""
    if SUMMARY_OPENING in text and _BODY_START in text:
        return _up_to_notes(text.split(_BODY_START, 1)[1])
    if OPENING_1_0 in text:
        answer = "\n" + text.split(OPENING_1_0, 1)[1]
        return _up_to_notes(answer.split(_BODY_START, 1)[1] if _BODY_START in answer else answer)
    return text


def _up_to_notes(summary: str) -> str:
    body = "\n" + summary  # an empty summary: the first note follows at once
    cuts = [body.find(end) for end in _BODY_ENDS if end in body]
    return (body[: min(cuts)] if cuts else body).strip()


def summary_uuid(boundary_uuid: str) -> str:
    return boundary_uuid.replace(*_SUMMARY_GROUP)


def refusal(led: Ledger) -> str | None:
    """What keeps appended compaction lines from being what `claude --resume` continues from, or None."""
    if led.leaf_seq is None or led.records[led.leaf_seq].id is None:
        return "the session has no current leaf with a uuid to hang a compaction under"
    leaf = led.records[led.leaf_seq]
    if (leaf.extra or {}).get("isSidechain") is True:
        return (
            "this is a sub-agent's transcript (every line is a sidechain): Claude Code resumes the main session, "
            "not this file, so a compaction appended here would never be read"
        )
    if led.resolved_path is not None:
        return (
            "the session's parent links do not walk (a cycle or reused uuids): Claude Code's resume and this "
            "tool's reading of it may differ, so a compaction appended to it cannot be promised to be read"
        )
    return None


def _usage(u: Usage | None) -> dict[str, int] | None:
    if u is None:
        return None
    return {"input": u.input, "output": u.output, "cacheRead": u.cache_read, "cacheWrite": u.cache_write}


def boundary_entry(d: CheckpointDraft) -> dict[str, Any]:
    """The `compact_boundary` line (the checkpoint record); `lines` completes it with what only
    the session knows (every line of the kept messages, the session's own fields)."""
    meta: dict[str, Any] = {
        "trigger": "manual",
        "preTokens": d.tokens_before,
        "represents": d.represents,
        "readFiles": d.read_files,
        "modifiedFiles": d.modified_files,
        "retainedTailShape": d.shape,
        "retainedTailBudgetTokens": d.budget_tokens,
        "failureReason": d.failure_reason,
        "usage": _usage(d.usage),
        "requests": d.requests,
        "truncated": d.truncated,
        "producer": d.producer,
    }
    if d.essential_complete is not None:
        meta["essentialComplete"] = d.essential_complete
    if d.retains:
        anchor = summary_uuid(d.entry_id)
        meta["preservedSegment"] = {"headUuid": d.retains[0], "anchorUuid": anchor, "tailUuid": d.retains[-1]}
        meta["preservedMessages"] = {"anchorUuid": anchor, "uuids": list(d.retains), "allUuids": list(d.retains)}
    return {
        "parentUuid": None,
        "logicalParentUuid": d.leaf_id,
        "isSidechain": False,
        "type": "system",
        "subtype": "compact_boundary",
        "content": "Conversation compacted",
        "isMeta": False,
        "timestamp": d.timestamp,
        "uuid": d.entry_id,
        "level": "info",
        "compactMetadata": meta,
    }


def summary_text(summary: str, tools: list[str], transcript: str | None, kept: bool) -> str:
    """The summary in Claude Code's own wrapper."""
    used = f"<system-reminder>\n<tools-used-before-summary>{', '.join(tools)}</tools-used-before-summary>\n</system-reminder>"
    text = f"{SUMMARY_OPENING}\n\n{used}\nSummary:\n{summary.strip()}"
    if transcript:
        text += f"\n\n{TRANSCRIPT_NOTE}{transcript}"
    text += f"\n{CONTINUE_NOTE}"
    if kept:
        text += f"\n\n{KEPT_NOTE}"
    return text


def summary_wrapper(led: Ledger) -> str:
    """The wrapper a repair writes around its summary in this session, the summary left out, at
    its longest: every tool the session called named, the transcript note, the kept-messages note."""
    return summary_text("", _tools_before(led, set()), led.path, kept=True)


def compaction_lines(entry: dict[str, Any], d: CheckpointDraft, led: Ledger) -> list[dict[str, Any]]:
    """The boundary (completed in place: the kept messages' continuation lines, the session's
    fields) and the summary line after it."""
    session = _session_fields(led)
    entry.update(session)
    kept = _kept_lines(led, d.retains)
    meta = entry["compactMetadata"]
    if kept:
        meta["preservedSegment"]["tailUuid"] = kept[-1]
        meta["preservedMessages"]["uuids"] = kept
        meta["preservedMessages"]["allUuids"] = list(kept)
    summary = {
        "parentUuid": entry["uuid"],
        "isSidechain": False,
        "type": "user",
        "message": {"role": "user", "content": summary_text(d.summary, _tools_before(led, set(d.retains)), led.path, bool(kept))},
        "isVisibleInTranscriptOnly": True,
        "isCompactSummary": True,
        "uuid": summary_uuid(entry["uuid"]),
        "timestamp": d.timestamp,
        **session,
    }
    return [entry, summary]


def _session_fields(led: Ledger) -> dict[str, Any]:
    """The session's own fields as its newest conversation line states them (bookkeeping lines
    carry only the sessionId)."""
    for r in reversed(led.records):
        e = r.extra or {}
        if r.id is not None and isinstance(e.get("sessionId"), str) and e.get("isSidechain") is not True:
            return {k: e[k] for k in _SESSION_FIELDS if k in e}
    return {"sessionId": led.session_id} if led.session_id else {}


def _kept_lines(led: Ledger, retains: list[str]) -> list[str]:
    """The uuids of every line of the kept messages, in order: a reply Claude Code wrote one
    content block per line is kept whole (a line left out is dropped on resume)."""
    by_line: dict[int, Record] = {r.line: r for r in led.records}
    by_id = led.by_id()
    out: list[str] = []
    for uid in retains:
        rec = led.records[by_id[uid]] if uid in by_id else None
        if rec is None:
            continue
        lines = (rec.extra or {}).get("merged_lines") or [rec.line]
        for ln in lines:
            r = by_line.get(ln)
            if r is not None and r.id is not None and r.id not in out:
                out.append(r.id)
    return out


def _tools_before(led: Ledger, kept: set[str]) -> list[str]:
    """The tools called in the messages the summary replaces, in first-use order."""
    names: list[str] = []
    for r in led.records:
        if r.kind != "message" or r.id in kept or r.message is None:
            continue
        for b in r.message.blocks:
            if b.type == "tool_call" and isinstance(b.name, str) and b.name not in names:
                names.append(b.name)
    return names
