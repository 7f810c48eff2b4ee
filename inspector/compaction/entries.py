"""The record a repair appends, in the session's own format (DESIGN §3, write-back column).

- pi: one `compaction` entry pi accepts (peers/pi/README.md, "pi compaction behaviour", point 11):
  a fresh 8-hex id, `parentId` = the current leaf, `firstKeptEntryId` on the active path and never
  a toolResult, `tokensBefore`, `summary`, `details`, `fromHook: true`. pi keeps the entries from
  `firstKeptEntryId` up to the compaction, so the retained tail is contiguous on the path.
  `details.represents` states what the summary stands for as [first id, last id] ranges (pi ignores
  it; this tool reads it back, so a summary rebuilt from source is not mistaken for a rolled one).
- native: a `checkpoint` record with explicit boundary / represents / retains
  (docs/native-format.md).

Pure: builds dicts and bytes. Writing them is the store's job (`inspector.store`).
"""

from __future__ import annotations

import dataclasses
import secrets
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import orjson

from inspector.analysis.engine import REPAIR_PRODUCER
from inspector.analysis.intervals import Interval
from inspector.formats import native as native_format
from inspector.formats import pi as pi_format
from inspector.formats.jsonl import RawLine
from inspector.ledger.model import Ledger, Record, Usage

PRODUCER = REPAIR_PRODUCER


class WriteError(Exception):
    """The session cannot take an appended checkpoint as it is (the operator must act first)."""


@dataclass(slots=True)
class CheckpointSpec:
    """The checkpoint a repair installs, in path positions (see `inspector.compaction.cut`)."""

    kind: str  # summary | recovery | carry
    cut: int  # first position of the retained tail [cut, end)
    keep: tuple[int, ...]  # positions kept raw ahead of the tail (native only)
    retains: list[int]  # positions retained raw, in path order
    represents: list[Interval]  # positions the summary stands for
    shape: str  # recent_window | latest_user_message
    failure_reason: str | None
    tail_tokens: int
    budget_tokens: int  # what the retained tail was allowed
    tokens_before: int
    read_files: list[str] = field(default_factory=list)
    modified_files: list[str] = field(default_factory=list)
    quote_active: int | None = None  # position of an active request quoted in the summary
    dropped: list[int] = field(default_factory=list)  # positions dropped from the window (recovery)


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def fresh_id(led: Ledger, rng: Any = None) -> str:
    """An id no record of the file uses: 8 hex digits (pi's shape), `cp-` + 8 hex for native."""
    used = {r.id for r in led.records if r.id is not None}
    while True:
        h = rng.getrandbits(32).to_bytes(4, "big").hex() if rng is not None else secrets.token_hex(4)
        i = h if led.format == "pi" else f"cp-{h}"
        if i not in used:
            return i


# Formats a repair can append to (DESIGN §3, write-back column); the others are read only for now.
WRITABLE_FORMATS: tuple[str, ...] = ("pi", "native")


def check_writable(led: Ledger) -> None:
    """Refuse what an appended record cannot express."""
    if led.format not in WRITABLE_FORMATS:
        raise WriteError(
            f"{led.format} sessions are read only for now: this tool cannot write a checkpoint {led.format} "
            "would read (analyze, context and simulate work)"
        )
    if led.format == "pi":
        if led.version is not None and led.version < 2:
            raise WriteError(
                "this is a pi v1 session (no entry ids): pi gives its entries random ids when it loads it, "
                "so an appended compaction cannot name the entry it keeps from; open it once in pi to migrate it"
            )
        if led.runtime_rejects_file:
            raise WriteError("pi ignores this file (no valid session header): an appended compaction would be lost")
        if led.leaf_seq is None or led.records[led.leaf_seq].id is None:
            raise WriteError("the session has no current leaf with an id to hang a compaction under")
    if led.upto_line is not None:
        raise WriteError("the session was read only up to a line (--at): a repair appends to the whole file")


def _id_ranges(ix: Any, ivs: list[Interval]) -> list[list[str]]:
    out: list[list[str]] = []
    for a, b in ivs:
        ids = [ix.rec(i).id for i in ix.messages_in(a, b) if ix.rec(i).id is not None]
        if ids:
            out.append([ids[0], ids[-1]])
    return out


def _usage_pi(u: Usage | None) -> dict[str, int] | None:
    if u is None:
        return None
    return {"input": u.input, "output": u.output, "cacheRead": u.cache_read, "cacheWrite": u.cache_write}


def build_entry(
    ix: Any,
    spec: CheckpointSpec,
    summary: str,
    *,
    entry_id: str,
    timestamp: str,
    usage: Usage | None,
    requests: int,
    truncated: bool,
    essential_complete: bool | None,
) -> dict[str, Any]:
    """The JSON object to append, for the ledger's format. `ix` is the PathIndex of the report
    the spec was planned on."""
    led: Ledger = ix.report.ledger
    represents = _id_ranges(ix, spec.represents)
    if led.format == "pi":
        if spec.keep:
            raise WriteError("pi keeps a contiguous tail: a message kept ahead of it cannot be expressed")
        leaf = led.records[led.leaf_seq] if led.leaf_seq is not None else None
        first_kept = ix.rec(spec.cut)
        details: dict[str, Any] = {
            "readFiles": spec.read_files,
            "modifiedFiles": spec.modified_files,
            "retainedTailShape": spec.shape,
            "failureReason": spec.failure_reason,
            "usage": _usage_pi(usage),
            "requests": requests,
            "represents": represents,
            "trigger": "manual",
            "truncated": truncated,
            "essentialComplete": essential_complete,
            "retainedTailBudgetTokens": spec.budget_tokens,
            "producer": PRODUCER,
        }
        if essential_complete is None:
            del details["essentialComplete"]
        return {
            "type": "compaction",
            "id": entry_id,
            "parentId": leaf.id if leaf is not None else None,
            "timestamp": timestamp,
            "summary": summary,
            "firstKeptEntryId": first_kept.id,
            "tokensBefore": spec.tokens_before,
            "details": details,
            "fromHook": True,
        }
    last = ix.last_message()
    boundary = ix.rec(last).id if last is not None else None
    native_details: dict[str, Any] = {
        "failure_reason": spec.failure_reason,
        "usage": usage.to_dict() if usage is not None else None,
        "truncated": truncated,
        "requests": requests,
        "budget_tokens": spec.budget_tokens,
        "read_files": spec.read_files,
        "modified_files": spec.modified_files,
        "producer": PRODUCER,
    }
    if essential_complete is not None:  # the schema has a boolean or nothing
        native_details["essential_complete"] = essential_complete
    return {
        "type": "checkpoint",
        "id": entry_id,
        "ts": timestamp,
        "boundary": boundary,
        "represents": represents,
        "retains": [ix.rec(i).id for i in spec.retains if ix.rec(i).id is not None],
        "retained_tail_shape": spec.shape,
        "summary": summary,
        "tokens_before": spec.tokens_before,
        "trigger": "manual",
        "details": native_details,
    }


def entry_line(entry: dict[str, Any]) -> bytes:
    return orjson.dumps(entry) + b"\n"


def appended_bytes(original: bytes, entry: dict[str, Any]) -> bytes:
    """What the session file becomes: its bytes, a newline if the last line lacks one, the entry."""
    sep = b"" if not original or original.endswith(b"\n") else b"\n"
    return original + sep + entry_line(entry)


def _next_line(led: Ledger) -> int:
    last = max((r.line for r in led.records), default=0)
    last = max([last, *(d.line for d in led.diagnostics)])
    return last + 1


def entry_record(led: Ledger, entry: dict[str, Any]) -> Record:
    """The entry read back by the format's own mapping, as the record it will be once written."""
    seq = len(led.records)
    line = _next_line(led)
    length = len(entry_line(entry))
    if led.format == "pi":
        return pi_format._record(entry, seq, line, led.size, length)
    return native_format._Builder().checkpoint(entry, RawLine(line, led.size, length, [entry]), seq)


def with_entry(led: Ledger, entry: dict[str, Any]) -> Ledger:
    """An in-memory copy of the ledger with the entry appended (records are shared, not copied)."""
    rec = entry_record(led, entry)
    return dataclasses.replace(
        led,
        records=[*led.records, rec],
        diagnostics=list(led.diagnostics),
        runs=dict(led.runs),
        leaf_seq=rec.seq,
        _by_id=None,
    )
