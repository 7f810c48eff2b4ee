"""The record a repair appends, in the session's own format (DESIGN §3, write-back column).

The format's `Writer` (inspector.formats.base) spells it: pi's `compaction` entry
(inspector/formats/pi_writer.py), native's `checkpoint` record (docs/native-format.md). Here the
planned `CheckpointSpec` (path positions) becomes the writer's `CheckpointDraft` (record ids).

Pure: builds dicts and bytes. Writing them is the store's job (`inspector.store`).
"""

from __future__ import annotations

import dataclasses
import secrets
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from inspector.analysis.engine import REPAIR_PRODUCER
from inspector.analysis.intervals import Interval
from inspector.formats import native as native_format
from inspector.formats import registry
from inspector.formats.base import CheckpointDraft, Unwritable, Writer
from inspector.formats.jsonl import RawLine
from inspector.ledger.jsontext import dumps
from inspector.ledger.model import Ledger, Record, Usage

PRODUCER = REPAIR_PRODUCER


class WriteError(Exception):
    """The session cannot take an appended checkpoint as it is (the operator must act first)."""


@dataclass(slots=True)
class CheckpointSpec:
    """The checkpoint a repair installs, in path positions (see `inspector.compaction.cut`)."""

    kind: str  # summary | recovery | carry
    cut: int  # first position of the retained tail [cut, end)
    keep: tuple[int, ...]  # positions kept raw ahead of the tail (not where Runtime.contiguous_tail)
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


def writer_of(led: Ledger) -> Writer:
    """The session format's writer. A read-only format's plan is previewed (never written) as
    this tool's own native checkpoint, which states its sets explicitly."""
    w = registry.get(led.format).writer
    return w if w is not None else native_format.WRITER


def fresh_id(led: Ledger, rng: Any = None) -> str:
    """An id no record of the file uses: the writer's prefix and 8 hex digits (pi's shape)."""
    used = {r.id for r in led.records if r.id is not None}
    prefix = writer_of(led).id_prefix
    while True:
        h = rng.getrandbits(32).to_bytes(4, "big").hex() if rng is not None else secrets.token_hex(4)
        i = prefix + h
        if i not in used:
            return i


def check_writable(led: Ledger) -> None:
    """Refuse what an appended record cannot express."""
    fmt = registry.get(led.format)
    w = fmt.writer
    if w is None:
        raise WriteError(
            f"{led.format} sessions are read only for now: "
            + (fmt.read_only_reason or f"this tool cannot write a checkpoint {led.format} would read")
            + " (plan, analyze, context and simulate work)"
        )
    why = w.refusal(led)
    if why is not None:
        raise WriteError(why)
    if led.upto_line is not None:
        raise WriteError("the session was read only up to a line (--at): a repair appends to the whole file")


def _id_ranges(ix: Any, ivs: list[Interval]) -> list[list[str]]:
    out: list[list[str]] = []
    for a, b in ivs:
        ids = [ix.rec(i).id for i in ix.messages_in(a, b) if ix.rec(i).id is not None]
        if ids:
            out.append([ids[0], ids[-1]])
    return out


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
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(the checkpoint entry, every line to append with it) for the ledger's format. `ix` is the
    PathIndex of the report the spec was planned on."""
    led: Ledger = ix.report.ledger
    rt = ix.report.runtime
    if spec.keep and rt.contiguous_tail:
        raise WriteError(f"{rt.name} keeps a contiguous tail: a message kept ahead of it cannot be expressed")
    leaf = led.records[led.leaf_seq] if led.leaf_seq is not None else None
    last = ix.last_message()
    draft = CheckpointDraft(
        entry_id=entry_id,
        timestamp=timestamp,
        summary=summary,
        leaf_id=leaf.id if leaf is not None else None,
        first_kept_id=ix.rec(spec.cut).id if spec.cut < ix.end else None,
        boundary_id=ix.rec(last).id if last is not None else None,
        keeps_ahead=bool(spec.keep),
        represents=_id_ranges(ix, spec.represents),
        retains=[ix.rec(i).id for i in spec.retains if ix.rec(i).id is not None],
        shape=spec.shape,
        failure_reason=spec.failure_reason,
        tokens_before=spec.tokens_before,
        budget_tokens=spec.budget_tokens,
        read_files=spec.read_files,
        modified_files=spec.modified_files,
        usage=usage,
        requests=requests,
        truncated=truncated,
        essential_complete=essential_complete,
        producer=PRODUCER,
    )
    return spell(led, draft)


def spell(led: Ledger, draft: CheckpointDraft) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(the checkpoint entry, every line appended with it, in order) in the format's words."""
    w = writer_of(led)
    try:
        entry = w.entry(draft)
        return entry, (w.lines(entry, draft, led) if w.lines is not None else [entry])
    except Unwritable as e:
        raise WriteError(f"{led.format} cannot read this checkpoint back: {e}") from None


def record_id(entry: dict[str, Any]) -> str | None:
    """The id the appended checkpoint record carries: pi's and native's `id`, Claude Code's `uuid`."""
    for key in ("id", "uuid"):
        if isinstance(entry.get(key), str):
            return entry[key]
    return None


def entry_line(entry: dict[str, Any]) -> bytes:
    return dumps(entry) + b"\n"


def lines_bytes(lines: list[dict[str, Any]]) -> bytes:
    return b"".join(entry_line(o) for o in lines)


def appended_bytes(original: bytes, entry: dict[str, Any], lines: list[dict[str, Any]] | None = None) -> bytes:
    """What the session file becomes: its bytes, a newline if the last line lacks one, the lines
    written with the checkpoint (the entry alone by default)."""
    sep = b"" if not original or original.endswith(b"\n") else b"\n"
    return original + sep + lines_bytes(lines if lines is not None else [entry])


def _next_line(led: Ledger) -> int:
    last = max((r.line for r in led.records), default=0)
    last = max([last, *(d.line for d in led.diagnostics)])
    return last + 1


def entry_record(led: Ledger, entry: dict[str, Any]) -> Record:
    """The entry read back by the format's own mapping, as the record it will be once written."""
    return appended_records(led, [entry])[0]


def appended_records(led: Ledger, lines: list[dict[str, Any]]) -> list[Record]:
    """The lines read back by the format's own mapping, as the records they will be once written."""
    w = writer_of(led)
    if w.reread is not None:
        try:
            return w.reread(led, lines)
        except Unwritable as e:
            raise WriteError(f"{led.format} cannot read this checkpoint back: {e}") from None
    seq, line, offset = len(led.records), _next_line(led), led.size
    out: list[Record] = []
    for o in lines:
        length = len(entry_line(o))
        out.append(w.read_back(o, RawLine(line, offset, length, [o]), seq))
        seq, line, offset = seq + 1, line + 1, offset + length
    if w.fold is not None:
        w.fold(out, lines)
    return out


def with_entry(led: Ledger, entry: dict[str, Any], lines: list[dict[str, Any]] | None = None) -> Ledger:
    """An in-memory copy of the ledger with the checkpoint's lines appended (records are shared,
    not copied; the format's `Writer.rebuild` reads them all again where it has one)."""
    w = writer_of(led)
    if w.rebuild is not None:
        try:
            new = w.rebuild(led, lines if lines is not None else [entry])
        except Unwritable as e:
            raise WriteError(f"{led.format} cannot read this checkpoint back: {e}") from None
        return dataclasses.replace(
            led, records=new.records, header=new.header, diagnostics=new.diagnostics, leaf_seq=new.leaf_seq,
            sent_history=new.sent_history, runs=dict(new.runs), _by_id=None,
        )  # fmt: skip
    recs = appended_records(led, lines if lines is not None else [entry])
    return dataclasses.replace(
        led,
        records=[*led.records, *recs],
        diagnostics=list(led.diagnostics),
        runs=dict(led.runs),
        leaf_seq=recs[-1].seq,
        _by_id=None,
    )
