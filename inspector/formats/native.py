"""Native ledger format: this project's own JSONL (DESIGN §3, docs/native-format.md).

One JSON object per line: a `ledger` header, then `run`, `message` and `checkpoint` records. Unlike
the producers' formats, a native checkpoint states its three sets (boundary, represents, retains)
explicitly; they land in `Checkpoint.explicit_*` untouched, and the analysis interprets them.

Mapping is hand-written (no pydantic, no jsonschema) because a ledger may hold 100k records. Bad
input never raises: every problem becomes a Diagnostic naming the line (and the field), and the
record is still loaded with what could be read. `inspector/schemas/native-ledger.schema.json`
states the same rules for producers; `load_schema()` returns it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, KeysView
from importlib import resources
from itertools import islice
from typing import Any, BinaryIO

import msgspec

from inspector.formats import appended, heads, native_heads
from inspector.formats.base import CheckpointDraft, Format, Runtime, Writer
from inspector.formats.bounded import LARGE_LINE_BYTES
from inspector.formats.jsonl import RawLine, parse_line
from inspector.formats.whole_lines import collector_paused
from inspector.ledger.jsontext import py_str
from inspector.ledger.model import (
    FAILURE_REASONS,
    MARK_NEVER_SENT,
    ROLES,
    STOP_REASONS,
    TAIL_SHAPES,
    Block,
    Checkpoint,
    Diagnostic,
    Ledger,
    Message,
    Record,
    RecordIndex,
    RecordSource,
    Route,
    RunHeader,
    SessionSettings,
    Usage,
    mark_code,
    normalize_stop_reason,
    record_from_fields,
    report_duplicate_ids,
)
from inspector.ledger.quoting import quote

NAME = "native"
FORMAT_NAME = "inspector-ledger"
CURRENT_VERSION = 1
SCHEMA_FILE = "native-ledger.schema.json"

TRIGGERS: tuple[str, ...] = ("auto", "manual", "overflow")
RECORD_TYPES: tuple[str, ...] = ("ledger", "run", "message", "checkpoint")
BLOCK_TYPES: tuple[str, ...] = ("text", "thinking", "tool_call", "tool_result", "image")

_HEADER_KEYS = frozenset({"type", "format", "version", "id", "created", "producer", "settings"})
_RUN_KEYS = frozenset({"type", "id", "ts", "model", "connection"})
_MESSAGE_KEYS = frozenset(
    {"type", "id", "ts", "run", "role", "content", "stop_reason", "stop_reason_raw", "usage", "error", "meta"}
)
_CHECKPOINT_KEYS = frozenset(
    {
        "type",
        "id",
        "ts",
        "boundary",
        "represents",
        "retains",
        "retained_tail_shape",
        "summary",
        "tokens_before",
        "trigger",
        "details",
    }
)
_BLOCK_KEYS: dict[str, frozenset[str]] = {
    "text": frozenset({"type", "text"}),
    "thinking": frozenset({"type", "text"}),
    "tool_call": frozenset({"type", "id", "name", "args"}),
    "tool_result": frozenset({"type", "call_id", "is_error", "text"}),
    "image": frozenset({"type", "media_type"}),
}
_USAGE_KEYS = ("input", "output", "cache_read", "cache_write")
_SETTINGS_KEYS = ("window", "reserve", "keep_recent")

# ISO-8601 date or date-time, the same pattern the schema uses.
_ISO_TS = re.compile(native_heads.ISO_TS_PATTERN)


def load_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of one native ledger line, shipped as package data."""
    text = resources.files("inspector").joinpath("schemas", SCHEMA_FILE).read_text(encoding="utf-8")
    return json.loads(text)


def looks_like(obj: Any) -> bool:
    """Content sniffing: the native header, or a native record (so a headerless file is detected).

    A native message carries `role` at top level (pi nests it in `message`); `run` and `checkpoint`
    are not record types any other supported producer writes.
    """
    if not isinstance(obj, dict):
        return False
    t = obj.get("type")
    if t == "ledger":
        return obj.get("format") == FORMAT_NAME
    if t == "message":
        return "role" in obj and not isinstance(obj.get("message"), dict)
    if t == "run":
        return "model" in obj or "connection" in obj
    if t == "checkpoint":
        return "summary" in obj or "boundary" in obj or "represents" in obj or "retains" in obj
    return False


# ---------------------------------------------------------------------------------------- helpers


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_ts(v: Any) -> bool:
    if isinstance(v, str):
        return _ISO_TS.match(v) is not None
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _is_id(v: Any) -> bool:
    return isinstance(v, str) and v != ""


def _extra(o: dict[str, Any], known: frozenset[str]) -> dict[str, Any] | None:
    unknown = o.keys() - known
    if not unknown:
        return None
    return {k: o[k] for k in unknown}


def _show(v: Any) -> str:
    return quote(v)


class _Named:
    """How a diagnostic names a record ("message 'm1'"): its id quoted only when a diagnostic is
    written, not for every record loaded."""

    __slots__ = ("kind", "rid")

    def __init__(self, kind: str, rid: str | None) -> None:
        self.kind = kind
        self.rid = rid

    def __str__(self) -> str:
        return f"{self.kind} {quote(self.rid)}" if self.rid else self.kind


What = str | _Named  # a record's name in a diagnostic


class _Builder:
    """Holds the diagnostics while one file is mapped; one method per record type."""

    __slots__ = ("diagnostics",)

    def __init__(self) -> None:
        self.diagnostics: list[Diagnostic] = []

    def invalid(self, rl: RawLine, seq: int, what: What, field: str, why: str) -> None:
        self.diagnostics.append(
            Diagnostic(
                rl.line,
                "invalid_field",
                f"line {rl.line}: {what}: field {field!r} {why}; record loaded anyway",
                severity="warning",
                seqs=[seq],
            )
        )

    # ------------------------------------------------------------------------------ shared fields

    def _id(self, o: dict[str, Any], rl: RawLine, seq: int, what: What) -> str | None:
        rid = o.get("id")
        if _is_id(rid):
            return rid
        self.invalid(
            rl, seq, what, "id", "is missing" if rid is None else f"is not a non-empty string ({_show(rid)})"
        )
        return None

    def _ts(self, o: dict[str, Any], rl: RawLine, seq: int, what: What) -> Any:
        ts = o.get("ts")
        if not _is_ts(ts):
            why = (
                "is missing"
                if ts is None
                else f"is neither an ISO-8601 string nor epoch seconds ({_show(ts)})"
            )
            self.invalid(rl, seq, what, "ts", why)
        return ts

    def usage(self, u: Any, rl: RawLine, seq: int, what: What, field: str) -> Usage | None:
        if not isinstance(u, dict):
            self.invalid(rl, seq, what, field, f"is not an object ({_show(u)})")
            return None
        vals: list[int] = []
        for k in _USAGE_KEYS:
            v = u.get(k, 0)
            if not _is_int(v) or v < 0:
                self.invalid(rl, seq, what, f"{field}.{k}", f"is not a non-negative integer ({_show(v)})")
                v = 0
            vals.append(v)
        for k in ("input", "output"):
            if k not in u:
                self.invalid(rl, seq, what, f"{field}.{k}", "is missing (read as 0)")
        return Usage(*vals)

    # ------------------------------------------------------------------------------ records

    def header(self, o: dict[str, Any], rl: RawLine, seq: int) -> tuple[Record, SessionSettings]:
        what = "ledger header"
        if o.get("format") != FORMAT_NAME:
            self.invalid(rl, seq, what, "format", f"is {_show(o.get('format'))}, not {FORMAT_NAME!r}")
        v = o.get("version")
        if not _is_int(v):
            self.invalid(
                rl, seq, what, "version", "is missing" if v is None else f"is not an integer ({_show(v)})"
            )
        elif v != CURRENT_VERSION:
            self.diagnostics.append(
                Diagnostic(
                    rl.line,
                    "unsupported_version",
                    f"line {rl.line}: ledger version {v}; this tool reads version {CURRENT_VERSION} "
                    "and read it as such",
                    seqs=[seq],
                )
            )
        if not _is_id(o.get("id")):
            self.invalid(rl, seq, what, "id", f"is not a non-empty string ({_show(o.get('id'))})")
        created = o.get("created")
        if not _is_ts(created):
            self.invalid(
                rl, seq, what, "created", f"is not an ISO-8601 string or epoch seconds ({_show(created)})"
            )
        if "producer" in o and not isinstance(o["producer"], str):
            self.invalid(rl, seq, what, "producer", f"is not a string ({_show(o['producer'])})")
        settings = SessionSettings()
        s = o.get("settings")
        if isinstance(s, dict):
            vals: list[int | None] = []
            for k in _SETTINGS_KEYS:
                x = s.get(k)
                if x is not None and (not _is_int(x) or x < 0):
                    self.invalid(
                        rl, seq, what, f"settings.{k}", f"is not a non-negative integer ({_show(x)})"
                    )
                    x = None
                vals.append(x)
            settings = SessionSettings(*vals)
        elif s is not None:
            self.invalid(rl, seq, what, "settings", f"is not an object ({_show(s)})")
        rec = Record(seq, rl.line, "header", "ledger", timestamp=created, offset=rl.offset, length=rl.length)
        rec.extra = _extra(o, _HEADER_KEYS)
        return rec, settings

    def run(self, o: dict[str, Any], rl: RawLine, seq: int) -> tuple[Record, Route]:
        rid = self._id(o, rl, seq, "run")
        what = _Named("run", rid)
        ts = self._ts(o, rl, seq, what)
        ids: list[str | None] = []
        for k in ("model", "connection"):
            v = o.get(k)
            if not _is_id(v):
                self.invalid(
                    rl, seq, what, k, "is missing" if v is None else f"is not a non-empty string ({_show(v)})"
                )
                v = None
            ids.append(v)
        rec = Record(seq, rl.line, "run", "run", rid, None, ts, offset=rl.offset, length=rl.length)
        rec.extra = _extra(o, _RUN_KEYS)
        return rec, Route(ids[0], ids[1])

    def message(self, o: dict[str, Any], rl: RawLine, seq: int) -> Record:
        rid = self._id(o, rl, seq, "message")
        what = _Named("message", rid)
        ts = self._ts(o, rl, seq, what)
        role = o.get("role")
        never_sent = False
        if role not in ROLES:
            why = "is missing" if role is None else f"is {_show(role)}, not one of {'/'.join(ROLES)}"
            self.invalid(rl, seq, what, "role", why + " (shown as a user message no runtime sends)")
            # Like pi's unknown roles: kept and shown, but no runtime knows how to send it.
            never_sent = True
        if "content" not in o:
            self.invalid(rl, seq, what, "content", "is missing")
            blocks: list[Block] = []
        else:
            blocks = self.blocks(o["content"], rl, seq, what)
        stop_raw = o.get("stop_reason_raw", o.get("stop_reason"))
        stop = o.get("stop_reason")
        if stop is not None:
            if stop in STOP_REASONS:
                stop_norm: str | None = stop
            else:
                self.invalid(
                    rl, seq, what, "stop_reason", f"is {_show(stop)}, not one of {'/'.join(STOP_REASONS)}"
                )
                stop_norm = normalize_stop_reason(stop)
        else:
            stop_norm = None
        usage = self.usage(o["usage"], rl, seq, what, "usage") if o.get("usage") is not None else None
        err = o.get("error")
        if err is not None and not isinstance(err, str):
            self.invalid(rl, seq, what, "error", f"is not a string ({_show(err)})")
            err = str(err)
        meta = o.get("meta")
        if meta is not None and not isinstance(meta, bool):
            self.invalid(rl, seq, what, "meta", f"is not a boolean ({_show(meta)})")
        run = o.get("run")
        if run is not None and not _is_id(run):
            self.invalid(rl, seq, what, "run", f"is not a run id ({_show(run)})")
            run = None
        msg = Message(
            role if role in ROLES else "user",
            blocks,
            stop_reason=stop_norm,
            stop_reason_raw=stop_raw,
            usage=usage,
            error_message=err,
            source_role=role if isinstance(role, str) else None,
            never_sent=never_sent or meta is True,
        )
        rec = Record(
            seq,
            rl.line,
            "message",
            "message",
            rid,
            None,
            ts,
            message=msg,
            run_id=run,
            offset=rl.offset,
            length=rl.length,
        )
        rec.extra = _extra(o, _MESSAGE_KEYS)
        return rec

    def blocks(self, content: Any, rl: RawLine, seq: int, what: What) -> list[Block]:
        if isinstance(content, str):
            return [Block("text", content)]
        if not isinstance(content, list):
            self.invalid(
                rl, seq, what, "content", f"is neither a list of blocks nor a string ({_show(content)})"
            )
            return []
        out: list[Block] = []
        for i, b in enumerate(content):
            where = f"content[{i}]"
            if not isinstance(b, dict):
                self.invalid(rl, seq, what, where, f"is not a block object ({_show(b)})")
                out.append(Block("other", raw=b))
                continue
            t = b.get("type")
            known = _BLOCK_KEYS.get(t) if isinstance(t, str) else None
            if known is None:
                # Unknown block types are kept whole and shown; not an error (forward compatible).
                out.append(Block("other", raw=b))
                continue
            # Unknown fields of a known block: keep the whole block so nothing is lost.
            raw = b if t == "image" or b.keys() - known else None
            if t == "tool_call":
                cid, name = b.get("id"), b.get("name")
                if not _is_id(cid):
                    self.invalid(rl, seq, what, f"{where}.id", f"is not a tool call id ({_show(cid)})")
                    cid = None
                if not isinstance(name, str):
                    self.invalid(rl, seq, what, f"{where}.name", f"is not a string ({_show(name)})")
                    name = None
                if "args" not in b:
                    self.invalid(rl, seq, what, f"{where}.args", "is missing")
                out.append(Block("tool_call", call_id=cid, name=name, args=b.get("args"), raw=raw))
                continue
            if t == "image":
                if not isinstance(b.get("media_type"), str):
                    self.invalid(
                        rl,
                        seq,
                        what,
                        f"{where}.media_type",
                        f"is not a string ({_show(b.get('media_type'))})",
                    )
                out.append(Block("image", raw=raw))
                continue
            text = b.get("text")
            if not isinstance(text, str):
                self.invalid(
                    rl,
                    seq,
                    what,
                    f"{where}.text",
                    "is missing" if text is None else f"is not a string ({_show(text)})",
                )
                text = ""
            if t == "tool_result":
                cid = b.get("call_id")
                if not _is_id(cid):
                    self.invalid(rl, seq, what, f"{where}.call_id", f"is not a tool call id ({_show(cid)})")
                    cid = None
                is_err = b.get("is_error", False)
                if not isinstance(is_err, bool):
                    self.invalid(rl, seq, what, f"{where}.is_error", f"is not a boolean ({_show(is_err)})")
                out.append(Block("tool_result", text, call_id=cid, is_error=bool(is_err), raw=raw))
            else:
                out.append(Block(t, text, raw=raw))  # type: ignore[arg-type]
        return out

    def checkpoint(self, o: dict[str, Any], rl: RawLine, seq: int) -> Record:
        rid = self._id(o, rl, seq, "checkpoint")
        what = _Named("checkpoint", rid)
        ts = self._ts(o, rl, seq, what)
        summary = self._summary(o, rl, seq, what)
        boundary = self._boundary(o, rl, seq, what)
        represents = self._represents(o, rl, seq, what)
        retains = self._retains(o, rl, seq, what)
        shape = self._one_of(o.get("retained_tail_shape"), TAIL_SHAPES, rl, seq, what, "retained_tail_shape")
        tokens_before = self._tokens_before(o, rl, seq, what)
        trigger = self._one_of(o.get("trigger"), TRIGGERS, rl, seq, what, "trigger")
        details = o.get("details")
        d = self._details(details, rl, seq, what)
        fr = self._one_of(d.get("failure_reason"), FAILURE_REASONS, rl, seq, what, "details.failure_reason")
        # `usage: null` (present) and usage absent both give None here; `details` keeps the difference.
        u = d.get("usage")
        usage = self.usage(u, rl, seq, what, "details.usage") if u is not None else None
        truncated, essential_complete = self._details_flags(d, rl, seq, what)
        budget = self._details_budget(d, rl, seq, what)
        cp = Checkpoint(
            summary=summary,
            tokens_before=tokens_before,
            trigger=trigger,
            failure_reason=fr,
            usage=usage,
            truncated=truncated,
            essential_complete=essential_complete,
            retained_tail_shape=shape,
            details=details,
            explicit_boundary=boundary,
            explicit_represents=represents,
            explicit_retains=retains,
            budget_tokens=budget,
        )
        rec = Record(
            seq,
            rl.line,
            "checkpoint",
            "checkpoint",
            rid,
            None,
            ts,
            checkpoint=cp,
            offset=rl.offset,
            length=rl.length,
        )
        rec.extra = _extra(o, _CHECKPOINT_KEYS)
        return rec

    def _summary(self, o: dict[str, Any], rl: RawLine, seq: int, what: What) -> str:
        """The checkpoint's summary text; missing or not text reads as ""."""
        summary = o.get("summary")
        if isinstance(summary, str):
            return summary
        self.invalid(
            rl,
            seq,
            what,
            "summary",
            "is missing" if summary is None else f"is not a string ({_show(summary)})",
        )
        return ""

    def _boundary(self, o: dict[str, Any], rl: RawLine, seq: int, what: What) -> str | None:
        """The explicit boundary id; missing or not an id reads as null (removes nothing)."""
        if "boundary" not in o:
            self.invalid(rl, seq, what, "boundary", "is missing (read as null: removes nothing)")
        boundary = o.get("boundary")
        if boundary is not None and not _is_id(boundary):
            self.invalid(rl, seq, what, "boundary", f"is neither a record id nor null ({_show(boundary)})")
            return None
        return boundary

    def _represents(
        self, o: dict[str, Any], rl: RawLine, seq: int, what: What
    ) -> list[tuple[str, str]] | None:
        """The explicit [from_id, to_id] ranges; a bad pair is ignored, a non-list reads as None."""
        rep = o.get("represents")
        if not isinstance(rep, list):
            self.invalid(
                rl,
                seq,
                what,
                "represents",
                "is missing" if rep is None else f"is not a list of ranges ({_show(rep)})",
            )
            return None
        represents: list[tuple[str, str]] = []
        for i, pair in enumerate(rep):
            if isinstance(pair, list) and len(pair) == 2 and _is_id(pair[0]) and _is_id(pair[1]):
                represents.append((pair[0], pair[1]))
            else:
                self.invalid(
                    rl,
                    seq,
                    what,
                    f"represents[{i}]",
                    f"is not a [from_id, to_id] pair ({_show(pair)}); ignored",
                )
        return represents

    def _retains(self, o: dict[str, Any], rl: RawLine, seq: int, what: What) -> list[str] | None:
        """The explicit retained record ids; a bad id is ignored, a non-list reads as None."""
        ret = o.get("retains")
        if not isinstance(ret, list):
            self.invalid(
                rl,
                seq,
                what,
                "retains",
                "is missing" if ret is None else f"is not a list of record ids ({_show(ret)})",
            )
            return None
        retains: list[str] = []
        for i, x in enumerate(ret):
            if _is_id(x):
                retains.append(x)
            else:
                self.invalid(rl, seq, what, f"retains[{i}]", f"is not a record id ({_show(x)}); ignored")
        return retains

    def _one_of(
        self, value: Any, allowed: tuple[str, ...], rl: RawLine, seq: int, what: What, field: str
    ) -> str | None:
        """A closed-vocabulary field: an unknown value is reported and kept when it is text."""
        if value is not None and value not in allowed:
            self.invalid(rl, seq, what, field, f"is {_show(value)}, not one of {'/'.join(allowed)} or null")
        return value if isinstance(value, str) else None

    def _tokens_before(self, o: dict[str, Any], rl: RawLine, seq: int, what: What) -> int | None:
        """The context size before compacting; anything but a non-negative integer reads as None."""
        tokens_before = o.get("tokens_before")
        if tokens_before is not None and (not _is_int(tokens_before) or tokens_before < 0):
            self.invalid(
                rl,
                seq,
                what,
                "tokens_before",
                f"is not a non-negative integer or null ({_show(tokens_before)})",
            )
            return None
        return tokens_before

    def _details(self, details: Any, rl: RawLine, seq: int, what: What) -> dict[str, Any]:
        """The details object to read the optional fields from ({} when absent or not an object)."""
        if isinstance(details, dict):
            return details
        if details is not None:
            self.invalid(rl, seq, what, "details", f"is not an object ({_show(details)})")
        return {}

    def _details_flags(
        self, d: dict[str, Any], rl: RawLine, seq: int, what: What
    ) -> tuple[bool | None, bool | None]:
        """details.truncated and details.essential_complete; a non-boolean reads as None."""
        flags: list[bool | None] = []
        for k in ("truncated", "essential_complete"):
            x = d.get(k)
            if x is not None and not isinstance(x, bool):
                self.invalid(rl, seq, what, f"details.{k}", f"is not a boolean ({_show(x)})")
                x = None
            flags.append(x)
        return flags[0], flags[1]

    def _details_budget(self, d: dict[str, Any], rl: RawLine, seq: int, what: What) -> int | None:
        """Checks details.requests and details.budget_tokens; the budget when it is valid."""
        for k in ("requests", "budget_tokens"):
            x = d.get(k)
            if x is not None and (not _is_int(x) or x < 0):
                self.invalid(rl, seq, what, f"details.{k}", f"is not a non-negative integer ({_show(x)})")
        budget = d.get("budget_tokens")
        return budget if _is_int(budget) and budget >= 0 else None


# ---------------------------------------------------------------------------------------- load


def build(lines: list[RawLine], path: str | None) -> Ledger:
    """Map a native ledger's lines into the model. Never raises on bad content."""
    # Building ~10 objects per record trips the cyclic GC over and over, and each pass walks
    # every parsed line too: on 100k records that doubled the build time. Nothing here makes cycles.
    with collector_paused():
        return _build(lines, path)


def stream(
    f: BinaryIO, path: str, limit: int, upto_line: int | None, after_fork: Callable[[], Any] | None = None
) -> tuple[Ledger, int]:
    """The file read from disk (`base.LineStreamer`) up to the size it had when the load started,
    each line mapped as it is parsed, so its parsed objects are freed before the next line is read
    (the peak memory is the records, not every parsed line as well); the file hashed on another
    thread meanwhile (`after_fork` starts it)."""
    if after_fork is not None:
        after_fork()  # (no helper process here)
    with collector_paused():
        reading = _Reading(path, _Source(path))
        consumed = _read(f, limit, upto_line, native_heads.UNCHECKED_TIME_DECODER.decode, reading)
        if not native_heads.all_times_valid(reading.head_times):
            # A head's time is not one: read the file again, each head's time checked as it is decoded.
            f.seek(0)
            reading = _Reading(path, _Source(path))
            consumed = _read(f, limit, upto_line, native_heads.DECODER.decode, reading)
        return reading.finish(), consumed


def _read(f: BinaryIO, limit: int, upto_line: int | None, decode: Callable[[bytes], Any], reading: _Reading) -> int:
    """`whole_lines.read_heads_upto` with `reading`'s head step inlined (it runs once per line: a call and a
    comprehension per line were a fifth of the load): a clean message line's record from its head
    (`native_heads`), its content left in the file (`_Source`); any other line parsed whole, one line behind
    (the last line known for the truncation diagnosis), given to `reading.add_line`. The line count and
    `upto_line` cut are kept by C iterators (`enumerate`, `islice`). Returns the bytes consumed."""
    records, append, add_time, add_line = reading.records, reading.records.append, reading.head_times.append, reading.add_line
    add_code = reading.codes.append  # (each record's `mark_code`: a head's, its template's in `like_of`, or never sent)
    run_names, last_run = reading.run_names, None  # (`last_run`: the run the last head named, as `run_names` holds it)
    call_type, result_type, image_type, first_byte, quote = _TOOL_CALL, _TOOL_RESULT, native_heads.Image, native_heads.FIRST_BYTE, native_heads.QUOTE[0]
    new, like_of = msgspec.structs.replace, _head_likes(reading.source)  # (a head's record: a copy of its template)
    large, valid_utf8, decode_errors = LARGE_LINE_BYTES, heads.valid_utf8, heads.DECODE_ERRORS
    lineno = offset = prev_offset = 0
    prev: bytes | None = None
    # While every line so far made one record, a line's record's seq is the number of the line
    # before it: the same int object (`before`), not one more per record (32 bytes each).
    before, aligned = 0, True
    # Tried and measured slower (100 MB ledger, issue 15): decoding a chunk's lines at once
    # (`readlines(1 MiB)`, then `map(decode, lines)`), 0.150 s against 0.123 s line by line (a line is
    # decoded while it is still in cache); a tool result's `result_id` made the very string of the call
    # it answers (7.4 MB and 1.9k page faults less), +20-25M instructions on 20 MB whether found by a
    # dict or in the last calls' tuple: more than the page faults saved, at ~2 us a fault.
    for lineno, raw in enumerate(f if upto_line is None else islice(f, upto_line), 1):
        if prev is not None:
            rl = parse_line(prev, lineno - 1, prev_offset, False)
            if rl is not None:
                add_line(rl)
            prev = None
            aligned = len(records) == lineno - 1
        n = len(raw)
        if offset + n > limit:  # appended while we read: stop at the size we started with
            raw = raw[: limit - offset]
            n = len(raw)
            if not n:
                break
        # msgspec does not check the UTF-8 of what it skips: checked first. A large line is read by `bounded`.
        try:
            h = decode(raw) if n <= large and (raw.isascii() or valid_utf8(raw)) else None
        except decode_errors:
            h = None
        calls: tuple[str, ...] = ()
        result = None
        if h is not None and type(content := h.content) is not str:  # the calls it makes, the call its first result answers
            for b in content:
                t = type(b)
                if t is call_type:
                    calls += (b.id,)
                elif t is not image_type and first_byte(b.text)[0] != quote:  # (`native_heads.is_text`, inlined)
                    h = None  # a text that is not a string: the general path says so
                    break
                elif t is result_type and result is None:
                    result = b.call_id
        if h is None:
            prev, prev_offset = raw, offset
        else:
            add_time(ts := h.ts)  # (a number too: `all_times_valid` checks the strings)
            like, code = like_of[h.role][h.stop_reason]
            rec = new(
                like, seq=before if aligned else len(records), line=lineno, id=h.id, timestamp=ts, offset=offset, length=n,
                call_ids=calls, result_id=result,
            )
            if (run := h.run) is not None:  # one string per run name, shared by its messages
                if run != last_run:  # (a run's messages mostly follow one another: compared, not hashed)
                    last_run = run_names.setdefault(run, run)
                rec.run_id = last_run
            if h.meta is True:
                rec.never_sent = True
                code |= MARK_NEVER_SENT
            add_code(code)
            append(rec)
        offset += n
        if offset >= limit:
            break
        before = lineno
    if prev is not None:  # (the file's last line, unless the loop ran out at an `upto_line` cut before the file's end)
        _last_line(prev, lineno, prev_offset, not (offset < limit and lineno == upto_line and f.readline()), add_line)
    return offset


def _last_line(raw: bytes, lineno: int, offset: int, is_last: bool, add_line: Callable[[RawLine], None]) -> None:
    """The line `_read` holds back at its end, parsed whole (`is_last`: the file's last line)."""
    rl = parse_line(raw, lineno, offset, is_last)
    if rl is not None:
        add_line(rl)


def _head_likes(source: _Source | None) -> dict[str, dict[str | None, tuple[Record, int]]]:
    """The record a head's record starts from, by its role and stop reason, and its `mark_code`:
    every field as `record_from_fields` leaves it, its role (and pi-style source role, the same
    here) and stop reason set. `_read` makes each head's record a copy of it with its own fields
    set (`msgspec.structs.replace`, called with keywords in C: `record_from_fields` goes through
    `type.__call__`'s argument tuples, ~400 instructions a record more); each keyword costs, so
    the fields most records leave at their default are set only where they are not."""
    likes: dict[str, dict[str | None, tuple[Record, int]]] = {r: {} for r in ROLES}
    for r, by_stop in likes.items():
        for stop in (None, *STOP_REASONS):
            like = record_from_fields(Record, 0, 0, None, None, None, 0, 0, r, stop, r, (), None, source)
            by_stop[stop] = like, mark_code(like)
    return likes


class _Source(RecordSource):
    """A message loaded from its head (`native_heads`): its content read again from the file, by
    the same builder as a whole-line load, with its run's route."""

    __slots__ = ("path", "runs")

    def __init__(self, path: str) -> None:
        self.path = path
        self.runs: dict[str, RunHeader] = {}

    def _line(self, f: BinaryIO, rec: Record) -> RawLine | None:
        f.seek(rec.offset)
        return parse_line(f.read(rec.length), rec.line, rec.offset, False)

    def _message_of(self, rl: RawLine | None, rec: Record) -> Message | None:
        o = rl.objects[0] if rl is not None and rl.objects else None
        if not isinstance(o, dict):
            return None
        m = _Builder().message(o, rl, rec.seq).message  # type: ignore[arg-type]
        run = self.runs.get(rec.run_id) if rec.run_id is not None else None
        if m is not None and run is not None:
            m.route = run.route
        return m

    def obj(self, rec: Record) -> Any:
        with open(self.path, "rb") as f:
            rl = self._line(f, rec)
        return rl.objects[0] if rl is not None and rl.objects else {}

    def message(self, rec: Record) -> Message | None:
        with open(self.path, "rb") as f:
            return self._message_of(self._line(f, rec), rec)

    def load_many(self, recs: list[Record]) -> None:
        with open(self.path, "rb") as f:
            for r in sorted(recs, key=lambda r: r.offset):
                r._message = self._message_of(self._line(f, r), r)

    def extra(self, rec: Record) -> dict[str, Any] | None:
        return None  # a line read from its head has no field the format does not know


def _build(lines: Iterable[RawLine], path: str | None) -> Ledger:
    r = _Reading(path, None)
    for rl in lines:
        r.add_line(rl)
    return r.finish()


_TOOL_CALL, _TOOL_RESULT = native_heads.ToolCall, native_heads.ToolResult


class _Reading:
    """One file's records as its lines are read, in file order: a clean message line from its
    head (`_read`, `native_heads`), any other line parsed whole (`add_line`)."""

    def __init__(self, path: str | None, source: _Source | None) -> None:
        self.path = path
        self.source = source
        self.b = _Builder()
        self.records: list[Record] = []
        self.header: dict[str, Any] | None = None
        self.header_line: int | None = None
        self.settings = SessionSettings()
        self.runs: dict[str, RunHeader] = {}
        self.parsed_without_id = 0  # records parsed whole that have no id (a head always has one)
        self.run_messages: list[Record] = []  # the messages parsed whole that name a run
        self.head_times: list[str | int | float] = []  # the times of the records read from heads (`native_heads.all_times_valid`)
        self.run_names: dict[str, str] = {}  # the runs the heads name, each name's one string
        # What the index lists (`RecordIndex`): each record's `mark_code`, in file order, and the
        # header's seq.
        self.codes = bytearray()
        self.header_seq: int | None = None

    def add_line(self, rl: RawLine) -> None:
        b, diags = self.b, self.b.diagnostics
        if rl.diagnostic is not None:
            diags.append(rl.diagnostic)
        for o in rl.objects:
            if not isinstance(o, dict):
                diags.append(
                    Diagnostic(
                        rl.line,
                        "not_an_object",
                        f"line {rl.line}: a JSON {type(o).__name__}, not a record object; ignored",
                    )
                )
                continue
            seq = len(self.records)
            t = o.get("type")
            if t == "message":
                rec = b.message(o, rl, seq)
                if rec.run_id is not None:
                    self.run_messages.append(rec)
            elif t == "checkpoint":
                rec = b.checkpoint(o, rl, seq)
            elif t == "run":
                rec, route = b.run(o, rl, seq)
                if rec.id is not None:
                    self.runs[rec.id] = RunHeader(rec.id, route, seq)  # a repeated id: the last one wins
            elif t == "ledger" and self.header is None:
                rec, self.settings = b.header(o, rl, seq)
                self.header, self.header_line, self.header_seq = o, rl.line, seq
            elif t == "ledger":
                rec = _second_header(diags, o, rl, seq, self.header_line)
            else:
                rec = _unknown_record(b, o, rl, seq)
            self.records.append(rec)
            if rec.id is None:
                self.parsed_without_id += 1
            self.codes.append(mark_code(rec))
            if rl.diagnostic is not None:
                rl.diagnostic.seqs.append(seq)

    def finish(self) -> Ledger:
        header, records, diags = self.header, self.records, self.b.diagnostics
        version = header.get("version") if header is not None else None
        sid = header.get("id") if header is not None else None
        led = Ledger(
            path=self.path,
            format=NAME,
            session_id=sid if _is_id(sid) else None,
            header=header,
            records=records,
            diagnostics=diags,
            settings=self.settings,
            runs=self.runs,
            version=version if _is_int(version) else None,
        )
        if self.source is not None:
            self.source.runs = self.runs
        if not records:
            return led
        if records[0].kind != "header":  # (only the first "ledger" object is read as the header)
            diags.append(_missing_header(self.header_line))
        _resolve_runs(led, self.b, self.run_names.keys(), self.run_messages)
        # The id index (`Ledger.by_id`: every native record is runtime-visible) in one pass in C; a
        # record-by-record pass only when it holds fewer ids than the records (every head has one).
        # (Filled in `_read` line by line instead, it took fewer instructions but ~0.05 s more CPU
        # on a 100 MB ledger.)
        by_id = {r.id: r.seq for r in records if r.id is not None}
        if len(by_id) != len(records) - self.parsed_without_id:
            by_id = report_duplicate_ids(led, " (references to it resolve to the last record written with it)")
        led._by_id = by_id
        for r in reversed(records):
            if r.kind != "header":
                led.leaf_seq = r.seq
                break
        # The path of this linear runtime is every record but the header (each is runtime-visible).
        off_path = [self.header_seq] if self.header_seq is not None else []
        # (the id index's values are the path's seqs when the records with no id are the header)
        path_of = by_id if self.parsed_without_id == len(off_path) and len(by_id) == len(records) - len(off_path) else None
        led.index = RecordIndex(records, len(records), None, off_path, codes=self.codes, path_of=path_of)
        return led


def _second_header(diags: list[Diagnostic], o: dict[str, Any], rl: RawLine, seq: int, first: int | None) -> Record:
    """A second ledger header: said, and kept as a meta record."""
    diags.append(
        Diagnostic(
            rl.line,
            "duplicate_header",
            f"line {rl.line}: a second ledger header (the first is on line {first}); kept as a meta record",
            seqs=[seq],
        )
    )
    return Record(seq, rl.line, "meta", "ledger", timestamp=o.get("created"), extra=o, offset=rl.offset, length=rl.length)


def _unknown_record(b: _Builder, o: dict[str, Any], rl: RawLine, seq: int) -> Record:
    """A record of a type this format does not define: kept whole and shown, never fatal."""
    t = o.get("type")
    if not isinstance(t, str):
        b.invalid(rl, seq, "record", "type", "is missing" if t is None else f"is not a string ({_show(t)})")
    rid = o.get("id")
    return Record(
        seq,
        rl.line,
        "unknown",
        t if isinstance(t, str) else py_str(t),
        rid if _is_id(rid) else None,
        None,
        o.get("ts"),
        extra=o,
        offset=rl.offset,
        length=rl.length,
    )


def _missing_header(header_line: int | None) -> Diagnostic:
    where = f"; a header was found on line {header_line} and used" if header_line is not None else ""
    return Diagnostic(
        1,
        "missing_header",
        f"line 1: no ledger header (a first line like "
        f'{{"type":"ledger","format":"{FORMAT_NAME}","version":1,"id":...}}){where}; '
        "the records were read anyway",
        severity="error",
    )


def extend(led: Ledger, lines: list[RawLine]) -> Ledger | None:
    """The ledger grown by appended lines (base.LineExtender): messages and checkpoints with
    fresh ids and no field to diagnose, a message's run one already defined. A run, a header or
    an unknown record type needs the full build (a run resolves messages written before it)."""
    if not appended.clean(lines):
        return None
    b = _Builder()
    new: list[Record] = []
    seq = len(led.records)
    for rl in lines:
        o = rl.objects[0]
        t = o.get("type")
        if t == "message":
            rec = b.message(o, rl, seq)
            run = led.runs.get(rec.run_id) if rec.run_id is not None else None
            if rec.run_id is not None and run is None:
                return None
            if run is not None and rec.message is not None:
                rec.message.route = run.route
        elif t == "checkpoint":
            rec = b.checkpoint(o, rl, seq)
        else:
            return None
        new.append(rec)
        seq += 1
    if b.diagnostics or not appended.fresh_ids(led, new):
        return None
    return appended.grown(led, new)


def _resolve_runs(led: Ledger, b: _Builder, head_runs: KeysView[str], parsed: list[Record]) -> None:
    """Message.route = the route of its run (a run may be written after its messages); a run no
    run record defines is said for each message that names it. `head_runs`: the runs the messages
    read from their heads name (such a message takes its route when it is read, `_Source`);
    `parsed`: the messages parsed whole that name a run."""
    runs = led.runs
    if head_runs <= runs.keys() and all(r.run_id in runs for r in parsed):  # only routes to set
        for r in parsed:
            if r._message is not None:
                r._message.route = runs[r.run_id].route  # type: ignore[index]
        return
    for r in led.records:
        m = r._message
        if r.run_id is None or (m is None and r._source is None):
            continue
        run = runs.get(r.run_id)
        if run is not None:
            if m is not None:
                m.route = run.route
        else:
            b.diagnostics.append(
                Diagnostic(
                    r.line,
                    "invalid_field",
                    f"line {r.line}: message {quote(r.id)}: field 'run' names {quote(r.run_id)}, which no run record defines; "
                    "record loaded without a route",
                    seqs=[r.seq],
                )
            )


# ---------------------------------------------------------------------------------------- write-back


def checkpoint_record(o: dict[str, Any], rl: RawLine, seq: int) -> Record:
    """A `checkpoint` object read as the record it is on that line."""
    return _Builder().checkpoint(o, rl, seq)


def checkpoint_entry(d: CheckpointDraft) -> dict[str, Any]:
    """A `checkpoint` record with explicit boundary / represents / retains (docs/native-format.md)."""
    details: dict[str, Any] = {
        "failure_reason": d.failure_reason,
        "usage": d.usage.to_dict() if d.usage is not None else None,
        "truncated": d.truncated,
        "requests": d.requests,
        "budget_tokens": d.budget_tokens,
        "read_files": d.read_files,
        "modified_files": d.modified_files,
        "producer": d.producer,
    }
    if d.essential_complete is not None:  # the schema has a boolean or nothing
        details["essential_complete"] = d.essential_complete
    return {
        "type": "checkpoint",
        "id": d.entry_id,
        "ts": d.timestamp,
        "boundary": d.boundary_id,
        "represents": d.represents,
        "retains": d.retains,
        "retained_tail_shape": d.shape,
        "summary": d.summary,
        "tokens_before": d.tokens_before,
        "trigger": "manual",
        "details": details,
    }


WRITER = Writer(
    record_name="checkpoint",
    id_prefix="cp-",
    planned_id="cp-planned",
    refusal=lambda _led: None,  # a native checkpoint states its sets: any session can take one
    entry=checkpoint_entry,
    read_back=checkpoint_record,
)

FORMAT = Format(
    name=NAME,
    label="native ledger",
    runtime=Runtime(
        name=NAME,
        drop_stop_reasons=frozenset({"error", "aborted", "deferred"}),
        checkpoints_record_usage=True,  # a native checkpoint has a usage field (or a failure reason)
    ),
    looks_like=looks_like,
    build=lambda lines, path, _data: build(lines, path),
    stream=stream,
    extend=extend,
    simulator="threshold",  # its header records window / reserve / keep_recent, pi's settings
    writer=WRITER,
)
