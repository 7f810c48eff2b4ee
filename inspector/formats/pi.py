"""pi / OpenClaw session JSONL, versions 1-3 (DESIGN §3).

Read-only mapping into the ledger model. v1/v2 files are migrated in memory exactly the way pi's
`migrateSessionEntries` does (ids and parents for v1, `firstKeptEntryIndex` -> id, `hookMessage` ->
`custom`); the input file is never written. Lines pi's own parser would skip (two JSON objects glued
on one line) are recovered but marked `runtime_visible=False`, so the effective context follows pi
while the analysis can say what pi lost.
"""

from __future__ import annotations

import io
import os
from collections.abc import Callable
from itertools import islice
from typing import Annotated, Any

import msgspec
import orjson

from inspector.formats import (
    appended,
    bounded,
    fields,
    heads,
    parallel,
    pi_resume,
    pi_sending,
    pi_transform,
    pi_writer,
)
from inspector.formats.base import FAILS_ON_OPEN, FAILS_ON_SEND, Format, Runtime, SummaryFormat, Writer
from inspector.formats.jsonl import RawLine, describe_as_last_line, line_object, parse_line
from inspector.formats.whole_lines import collector_paused
from inspector.ledger.jsontext import UNDEFINED, js_string, py_str
from inspector.ledger.model import (
    Block,
    Checkpoint,
    Diagnostic,
    Ledger,
    Message,
    Record,
    RecordSource,
    Route,
    Usage,
    normalize_stop_reason,
    record_from_fields,
    report_duplicate_ids,
)

NAME = "pi"
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
            out.append(Block("other", py_str(b), raw=b))
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
    text = f"Ran `{py_str(m.get('command'))}`\n"
    if m.get("output"):
        text += f"```\n{py_str(m.get('output'))}\n```"
    else:
        text += "(no output)"
    if m.get("cancelled"):
        text += "\n\n(command cancelled)"
    elif m.get("exitCode") not in (None, 0):
        text += f"\n\nCommand exited with code {py_str(m.get('exitCode'))}"
    if m.get("truncated") and m.get("fullOutputPath"):
        text += f"\n\n[Output truncated. Full output: {py_str(m.get('fullOutputPath'))}]"
    return text


def _message(m: dict[str, Any]) -> Message:
    role = m.get("role")
    if role == "assistant":
        blocks = _blocks_from_content(m.get("content"))
        raw_stop = m.get("stopReason")
        # An answer with no content at all is left out of the request by pi-ai's providers
        # (openai-completions.js: neither content nor tool calls; anthropic.js: no blocks).
        empty = m.get("content") == [] and raw_stop not in _EMPTY_KEPT
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
            never_sent=empty,
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
    if role in ("custom", "hookMessage", "user"):
        return _user_message(m.get("content"), "user" if role == "user" else "custom")
    if role == "compactionSummary":  # (pi writes the summary into the text as JavaScript does: `+ m.summary +`)
        return Message(
            "user",
            [Block("text", COMPACTION_SUMMARY_PREFIX + js_string(m.get("summary", UNDEFINED)) + COMPACTION_SUMMARY_SUFFIX)],
            source_role="compactionSummary",
        )
    if role == "branchSummary":
        return Message(
            "user",
            [Block("text", BRANCH_SUMMARY_PREFIX + js_string(m.get("summary", UNDEFINED)) + BRANCH_SUMMARY_SUFFIX)],
            source_role="branchSummary",
        )
    # Unknown role: pi's convertToLlm drops it; we keep and show it.
    return Message("user", _blocks_from_content(m.get("content")), source_role=str(role), never_sent=True)


def _user_message(content: Any, source_role: str) -> Message:
    """A user's (or an extension's) message: one whose content is an empty list is left out of
    the request by pi-ai's providers (openai-completions.js, anthropic.js: no content)."""
    return Message("user", _blocks_from_content(content), source_role=source_role, never_sent=content == [])


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
        first_kept_index=o.get("firstKeptEntryIndex") if isinstance(o.get("firstKeptEntryIndex"), int) else None,
    )


def _extra(o: dict[str, Any], known: frozenset[str]) -> dict[str, Any] | None:
    unknown = o.keys() - known
    if not unknown:
        return None
    return {k: o[k] for k in unknown}


# ---------------------------------------------------------------------------------------- load


class _Source(RecordSource):
    """Re-reads a record's line from the file (or the bytes) it was loaded from."""

    __slots__ = ("data", "path", "plain_answers")

    def __init__(self, path: str | None, data: bytes | None = None) -> None:
        self.path = path
        self.data = data
        # The offsets of the answers' lines the loader read no thinking block in (`_read_own_lines`):
        # pi-ai sends such an answer as written to any model (`pi_transform.rewrite_items`).
        self.plain_answers: set[int] = set()

    def obj(self, rec: Record) -> Any:
        if self.data is not None:
            raw = self.data[rec.offset : rec.offset + rec.length]
        else:
            assert self.path is not None
            with open(self.path, "rb") as f:
                f.seek(rec.offset)
                raw = f.read(rec.length)
        return line_object(raw, rec.line, rec.offset)

    def message(self, rec: Record) -> Message | None:
        return self._message_of(self.obj(rec))

    @staticmethod
    def _message_of(o: Any) -> Message | None:
        if isinstance(o, dict):
            fields.check_fields(o, fields.PI)
        m = o.get("message") if isinstance(o, dict) else None
        return _message(m) if isinstance(m, dict) else None

    def load_many(self, recs: list[Record]) -> None:
        if self.data is not None or self.path is None:
            super().load_many(recs)
            return
        with open(self.path, "rb") as f:
            for r in sorted(recs, key=lambda r: r.offset):
                f.seek(r.offset)
                r._message = self._message_of(line_object(f.read(r.length), r.line, r.offset))

    def extra(self, rec: Record) -> dict[str, Any] | None:
        o = self.obj(rec)
        if not isinstance(o, dict):
            return None
        extra = _extra(o, _KNOWN_KEYS["message"])
        m = o.get("message")
        if isinstance(m, dict):
            known_m = _MSG_KEYS.get(m.get("role"))  # type: ignore[arg-type]
            if known_m is not None:
                mx = _extra(m, known_m)
                if mx:
                    extra = {**(extra or {}), "message": mx}
        return extra


class _MetaSource(RecordSource):
    """The source of a meta entry mapped from its head (`_read_own_lines`: a thinking-level
    change): its fields beyond the base ones (`extra`) read from its line when asked for. It has
    no message, and no object as written, as a meta record of the general path has none."""

    __slots__ = ("lines",)

    def __init__(self, lines: _Source) -> None:
        self.lines = lines

    def obj(self, rec: Record) -> Any:
        return None

    def message(self, rec: Record) -> Message | None:
        return None

    def extra(self, rec: Record) -> dict[str, Any] | None:
        o = self.lines.obj(rec)
        return _extra(o, _BASE_KEYS) if isinstance(o, dict) else None


_SOURCE_ROLE = {"toolResult": "tool", "user": "user", "assistant": "assistant", "bashExecution": "user", "custom": "user"}


def _failures(o: dict[str, Any], line: int, seq: int) -> tuple[Diagnostic, ...]:
    """What pi cannot open or send of this entry as written (`pi_sending`), for the analysis to
    weigh against the path and the next request."""
    out = []
    why = pi_sending.open_failure(o)
    if why is not None:
        out.append(Diagnostic(line, FAILS_ON_OPEN, f"line {line}: {why}", severity="warning", seqs=[seq]))
    why = pi_sending.send_failure(o)
    if why is not None:
        out.append(Diagnostic(line, FAILS_ON_SEND, f"line {line}: {why}", severity="warning", seqs=[seq]))
    return tuple(out)


class _Builder:
    """Turns pi's JSON objects into records, in file order."""

    def __init__(self, path: str | None, source: _Source) -> None:
        self.path = path
        self.source = source
        self.records: list[Record] = []
        self.diagnostics: list[Diagnostic] = []
        self.header: dict[str, Any] | None = None
        # v1 index -> record, over the entries pi's parser keeps (header at index 0).
        self.pi_entries: list[Record | None] = []
        self.first_obj_seen = False
        self.header_valid = False
        self.first_line: int | None = None
        # Built while streaming (id -> seq, and how many ids were seen) so finish() can skip a pass.
        self.by_id: dict[str, int] | None = None
        self.id_count = 0

    def add_line(self, rl: RawLine) -> None:
        """A line that needed recovery (or any line, on the generic path)."""
        if self.first_line is None:
            self.first_line = rl.line
        if rl.diagnostic is not None:
            self.diagnostics.append(rl.diagnostic)
        for o in rl.objects:
            if not isinstance(o, dict):
                self.diagnostics.append(not_an_entry(o, rl.line))
                continue
            rec = self.add_obj(o, rl.line, rl.offset, rl.length, not rl.runtime_skips)
            if rl.diagnostic is not None and rec is not None:
                rl.diagnostic.seqs.append(rec.seq)

    def add_obj(self, o: dict[str, Any], line: int, offset: int, length: int, visible: bool) -> Record | None:
        fails = _failures(o, line, len(self.records)) if visible else ()  # (before a field of a wrong type is set aside)
        wrong = fields.check_fields(o, fields.PI)
        if wrong:
            self.diagnostics += fields.line_diagnostics(line, wrong)
        t = o.get("type")
        seq = len(self.records)
        if visible and not self.first_obj_seen:
            self.first_obj_seen = True
            self.header_valid = t == "session" and isinstance(o.get("id"), str)
        if t == "session" and self.header is None and visible:
            self.header = o
            rec = Record(seq, line, "header", "session", None, None, o.get("timestamp"), offset=offset, length=length)
            rec.extra = _extra(o, _KNOWN_KEYS["session"])
            self.records.append(rec)
            self.pi_entries.append(None)
            return rec
        rec = entry_record(o, seq, line, offset, length)
        if not visible:
            rec.runtime_visible = False
        self.records.append(rec)
        if visible:
            self.pi_entries.append(rec)
            self.diagnostics += fails
        return rec

    def finish(self) -> Ledger:
        header = self.header
        records = self.records
        version = None
        if header is not None:
            v = header.get("version")
            version = v if isinstance(v, int) else 1
        led = Ledger(
            path=self.path,
            format=NAME,
            session_id=header.get("id") if header and isinstance(header.get("id"), str) else None,
            header=header,
            records=records,
            diagnostics=self.diagnostics,
            version=version,
        )
        if not records:
            return led
        if not self.header_valid:
            led.runtime_rejects_file = True
            first = self.first_line or 1
            self.diagnostics.append(
                Diagnostic(
                    first,
                    "missing_header",
                    f"line {first}: no session header (a first line like "
                    '{"type":"session","id":...}); pi ignores such a file entirely and starts a new session',
                    severity="error",
                )
            )
        migrate = (version is not None and version < CURRENT_VERSION) or (header is None and not any(r.id for r in records))
        if migrate:
            _migrate_v1(led, self.pi_entries)
            led.migrated = True
        if migrate or self.by_id is None or self.id_count != len(self.by_id):
            # ids changed, or a duplicate: the full pass names both lines
            led._by_id = report_duplicate_ids(led, "; pi resolves it to line {line}", visible_only=True)
        else:
            led._by_id = self.by_id
        # pi's leaf: the last entry in file order that its parser kept.
        for r in reversed(records):
            if r.kind != "header" and r.runtime_visible and r.type != "session":  # (`_buildIndex` skips them)
                led.leaf_seq = r.seq
                break
        return led


# The fields of a pi message line the index needs (its head), decoded without materializing the
# rest of the line; pi's loader and OpenClaw's index (`openclaw_sqlite`) share them. A tagged union
# by role: an unknown role, or none, fails to decode and the line takes the general path, as it
# would anyway. Every field `fields.PI` types is typed here on every role (a tool result's
# `errorMessage`, a user message's `toolName`, ...), and every top-level field it types that a
# message head does not read must be absent (`UnsetType`): a line with a field of another type, or
# with such a field, fails to decode and the general path reports it (the shared guard), so the
# head maps exactly the lines the builder maps without a diagnostic, and a lazily-read message
# never holds a value of the wrong type. OpenClaw's `excludeFromContext` is read on every role.
_Int64, _Num = heads.Int64, heads.Num


class _BlockHead(msgspec.Struct, gc=False):
    type: str | None = None
    id: str | None = None
    text: str | None = None
    thinking: str | None = None
    name: str | None = None
    mimeType: str | None = None


class _UsageHead(msgspec.Struct, gc=False):
    input: _Num | None = None
    output: _Num | None = None
    cacheRead: _Num | None = None
    cacheWrite: _Num | None = None
    inputTokens: _Num | None = None
    outputTokens: _Num | None = None


class _MessageHead(msgspec.Struct, gc=False, tag_field="role"):
    stopReason: Any = None
    content: list[_BlockHead] | str | None = None
    model: str | None = None
    provider: str | None = None
    errorMessage: str | None = None
    usage: _UsageHead | None = None
    toolCallId: str | None = None
    toolName: str | None = None
    summary: str | None = None
    excludeFromContext: Any = None


class _UserHead(_MessageHead, tag="user"):
    pass


class _AssistantHead(_MessageHead, tag="assistant"):
    pass


class _ToolResultHead(_MessageHead, tag="toolResult"):
    pass


class _BashHead(_MessageHead, tag="bashExecution"):
    pass


class _CustomHead(_MessageHead, tag="custom"):
    pass


_Absent = msgspec.UnsetType  # a field a head must not have: present (even null), the line fails to decode
_ABSENT: Any = msgspec.UNSET


class _EntryHead(msgspec.Struct, gc=False):
    type: Any = None
    id: str | None = None  # anything else fails to decode: the general path, as for a message it must
    parentId: str | None = None
    timestamp: str | _Num | None = None
    message: _UserHead | _AssistantHead | _ToolResultHead | _BashHead | _CustomHead | None = None
    version: _Absent = _ABSENT
    content: _Absent = _ABSENT
    summary: _Absent = _ABSENT
    firstKeptEntryId: _Absent = _ABSENT
    firstKeptEntryIndex: _Absent = _ABSENT
    tokensBefore: _Absent = _ABSENT
    details: _Absent = _ABSENT
    provider: _Absent = _ABSENT
    modelId: _Absent = _ABSENT


assert {f for f in fields.PI if f != "message"} <= set(_EntryHead.__struct_fields__)
assert set(fields.PI["message"].fields or {}) - {"role"} <= set(_MessageHead.__struct_fields__)
assert set(fields.PI["message"].fields["content"].items or {}) == set(_BlockHead.__struct_fields__)  # type: ignore[index]
assert set(fields.PI["message"].fields["usage"].fields or {}) == set(_UsageHead.__struct_fields__)  # type: ignore[index]


# pi's role name and the role it has in a request, by head type.
_HEAD_ROLES: dict[type, tuple[str, str]] = {
    _UserHead: ("user", "user"),
    _AssistantHead: ("assistant", "assistant"),
    _ToolResultHead: ("toolResult", "tool"),
    _BashHead: ("bashExecution", "user"),
    _CustomHead: ("custom", "user"),
}
assert all(_SOURCE_ROLE[r] == llm for r, llm in _HEAD_ROLES.values()) and len(_HEAD_ROLES) == len(_SOURCE_ROLE)

_ENTRY_DECODER = msgspec.json.Decoder(_EntryHead)


# pi's own loader decodes the same head with each block's `text` and `thinking` left in the line
# (`msgspec.Raw`: checked JSON, not built as a string, the bulk of a line), then checks that each
# is a string or null (`_head_fields`), as `fields.PI` types them: a third less decode time. (The
# helper's `_line_head` shares it; OpenClaw's index keeps `_ENTRY_DECODER`.)
_NO_TEXT = msgspec.Raw(b"")
_NULL = msgspec.Raw(b"null")


class _RawTextBlockHead(_BlockHead):
    text: msgspec.Raw = _NO_TEXT  # type: ignore[assignment]
    thinking: msgspec.Raw = _NO_TEXT  # type: ignore[assignment]


class _RawTextMessageHead(_MessageHead):
    content: list[_RawTextBlockHead] | str | None = None  # type: ignore[assignment]


# The content each role's head takes, typed so that a message pi-ai may fail on or leave out
# (`pi_sending`, `_user_message`) fails to decode and takes the general path, at no cost a line:
# a user's or an extension's content missing, null or an empty list, an answer's anything but a
# list of blocks, a tool result's missing or null. (An answer's empty list is judged by its stop
# reason, `_EMPTY_KEPT`: an errored or aborted answer has one often, and is dropped anyway.)
_RawBlocks = list[_RawTextBlockHead]
_SomeRawBlocks = Annotated[_RawBlocks, msgspec.Meta(min_length=1)]


class _RawUserHead(_RawTextMessageHead, tag="user", kw_only=True):
    content: _SomeRawBlocks | str  # type: ignore[assignment]


class _RawAssistantHead(_RawTextMessageHead, tag="assistant", kw_only=True):
    content: _RawBlocks  # type: ignore[assignment]  (an empty list: judged by `_EMPTY_KEPT`)


class _RawToolResultHead(_RawTextMessageHead, tag="toolResult", kw_only=True):
    content: _RawBlocks | str  # type: ignore[assignment]


class _RawBashHead(_RawTextMessageHead, tag="bashExecution"):
    pass


class _RawCustomHead(_RawTextMessageHead, tag="custom", kw_only=True):
    content: _SomeRawBlocks | str  # type: ignore[assignment]


class _RawTextEntryHead(_EntryHead):
    message: _RawUserHead | _RawAssistantHead | _RawToolResultHead | _RawBashHead | _RawCustomHead | None = None  # type: ignore[assignment]


assert _RawTextEntryHead.__struct_fields__ == _EntryHead.__struct_fields__
assert _RawTextMessageHead.__struct_fields__ == _MessageHead.__struct_fields__
assert _RawTextBlockHead.__struct_fields__ == _BlockHead.__struct_fields__
_HEAD_ROLES.update(
    {_RawUserHead: _HEAD_ROLES[_UserHead], _RawAssistantHead: _HEAD_ROLES[_AssistantHead], _RawToolResultHead: _HEAD_ROLES[_ToolResultHead],
     _RawBashHead: _HEAD_ROLES[_BashHead], _RawCustomHead: _HEAD_ROLES[_CustomHead]}
)  # fmt: skip
_RAW_TEXT_DECODER = msgspec.json.Decoder(_RawTextEntryHead)


_FIRST_BYTE = heads.FIRST_BYTE


_STOP_MAP = {k: normalize_stop_reason(k) for k in ("stop", "toolUse", "length", "error", "aborted")}

# A plain message line's record, as the first fields of `Record` (the rest take the defaults of
# a lazily-read message): seq and line (0: numbered by the loading process), id, parentId,
# timestamp, byte offset and length, role, normalized stop reason, pi's role name, tool-call ids
# made, tool-call id answered.
_Head = tuple[int, int, str, str | None, Any, int, int, str, str | None, str, tuple[str, ...], str | None]


# The stop reasons of an answer with no content that pi-ai drops anyway: its head is mapped (any
# other empty answer takes the general path, which marks it never sent: `_message`).
_EMPTY_KEPT = ("error", "aborted")


def head_links(m: _MessageHead, role: str, llm_role: str) -> tuple[str | None, tuple[str, ...], str | None]:
    """A message head's normalized stop reason, the tool calls it makes and the call it answers,
    as `_message` maps them: a call in any role's content but a tool result's or a command's, a
    stop reason on an assistant message only."""
    c = m.content
    calls = tuple([b.id for b in c if b.type == "toolCall" and type(b.id) is str and b.id]) if type(c) is list else ()
    return _links(m, role, llm_role, calls)


def _links(m: Any, role: str, llm_role: str, calls: tuple[str, ...]) -> tuple[str | None, tuple[str, ...], str | None]:
    """`head_links` given the calls in the message's content."""
    if llm_role == "tool":
        return None, (), m.toolCallId
    if role == "bashExecution":
        return None, (), None
    s = m.stopReason if llm_role == "assistant" else None
    if s is not None:  # (a list or an object is not a key)
        s = (type(s) is str and _STOP_MAP.get(s)) or normalize_stop_reason(s)
    return s, calls, None


def _head_fields(m: Any, role: str, llm_role: str) -> tuple[str | None, tuple[str, ...], str | None] | None:
    """`head_links` of a raw-text message head, in one pass over its blocks that also checks every
    block's text is a string (absent but from a text block) and its thinking absent, a string or null
    (the JSON value left raw: checked by its first byte); None when the line needs the general path:
    a text or thinking of another type, a command kept out of the context (a content pi-ai may fail
    on or leave out fails to decode: `_RawUserHead`)."""
    calls: tuple[str, ...] = ()
    c = m.content
    if type(c) is list:
        if not c and m.stopReason not in _EMPTY_KEPT:
            return None
        first_byte, null = _FIRST_BYTE, _NULL
        for x in c:
            t = x.text
            if t:
                if first_byte(t)[0] != 34:  # (34: a quote)
                    return None
            elif x.type == "text":
                return None
            t = x.thinking
            if t and first_byte(t)[0] != 34 and t != null:
                return None
            if x.type == "toolCall" and type(x.id) is str and x.id:
                calls += (x.id,)
    if role == "bashExecution" and m.excludeFromContext:
        return None  # never sent: the general path
    return _links(m, role, llm_role, calls)


def _line_head(raw: bytes, offset: int) -> _Head | None:
    """A message entry's index fields, decoded without materializing its content; None when the
    line needs the general path (another entry type, an odd message, not clean JSON, ...). The
    loading process takes the same steps in `_read_own_lines`."""
    try:
        # msgspec does not check the UTF-8 of what it skips: check it (cheaply) ourselves.
        e = _RAW_TEXT_DECODER.decode(raw) if not bounded.is_large(raw) and (raw.isascii() or heads.valid_utf8(raw)) else None
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        return None
    if e is None or e.type != "message":
        return None
    m = e.message
    roles = _HEAD_ROLES.get(type(m))
    rid = e.id
    if roles is None or rid is None:
        return None
    role, llm_role = roles
    links = _head_fields(m, role, llm_role)
    if links is None:
        return None
    stop, calls, result = links
    return 0, 0, rid, e.parentId, e.timestamp, offset, len(raw), llm_role, stop, role, calls, result


def build(lines: list[RawLine], path: str | None, data: bytes | None = None) -> Ledger:
    """The generic path: every line already parsed (small inputs, `load_bytes`, tests)."""
    b = _Builder(path, _Source(path, data))
    for rl in lines:
        b.add_line(rl)
    return b.finish()


def extend(led: Ledger, lines: list[RawLine]) -> Ledger | None:
    """The ledger grown by appended lines (base.LineExtender): v3 entries with fresh ids, mapped
    as the builder maps them. A file pi rejects, one read through a migration, a second header, a
    field of the wrong type, an entry pi cannot open or send (`_failures`) or a reused id needs the
    full build (its diagnostics and its index)."""
    if led.version != CURRENT_VERSION or led.migrated or led.runtime_rejects_file or led.header is None:
        return None
    if not appended.clean(lines):
        return None
    new: list[Record] = []
    seq = len(led.records)
    for rl in lines:
        o = rl.objects[0]
        if o.get("type") == "session" or not isinstance(o.get("id"), str) or _failures(o, rl.line, seq) or fields.check_fields(o, fields.PI):
            return None
        new.append(entry_record(o, seq, rl.line, rl.offset, rl.length))
        seq += 1
    return appended.grown(led, new) if appended.fresh_ids(led, new) else None


def _heads_of_range(fd: int, start: int, end: int) -> list[_Head | int]:
    """The head of every line from byte `start` to `end` (a chunk: it starts and ends at a line
    start, or at the end), or its length when it has none; read with pread (the file offset is
    shared with the parent) and split exactly as iterating the file would."""
    out: list[_Head | int] = []
    append = out.append
    head = _line_head
    at = start
    for raw in io.BytesIO(parallel.read_range(fd, start, end)):
        h = head(raw, at)
        append(len(raw) if h is None else h)
        at += len(raw)
    return out


def _records_of_range(fd: int, start: int, end: int) -> list[int | Record]:
    """`_heads_of_range` as records (numbered when appended): a chunk the loader decodes ahead."""
    new = record_from_fields
    return [h if type(h) is int else new(Record, *h) for h in _heads_of_range(fd, start, end)]


# pi's chunks for the helper (`parallel`): per line a message record (from the helper, a msgpack
# array of its first fields decoded straight into a Record: no per-record Python) or, for a line
# left to the general path, the line's length.
_CODEC = parallel.ChunkCodec(_heads_of_range, _records_of_range, msgspec.msgpack.Decoder(list[int | Record]))


def load_stream(
    f: Any,
    path: str,
    limit: int,
    upto_line: int | None,
    after_fork: Callable[[], object] | None = None,
    parallel_min_bytes: int | None = None,
) -> tuple[Ledger, int]:
    """The fast path for big files: parse each line once, keep an index and what the analysis
    needs; message content is read again from the file only when asked for. Returns the ledger
    and the number of bytes consumed (never more than `limit`, the size when we started).

    A big file's chunks are decoded by a forked helper too, ahead of this process, which appends
    them in file order (`parallel.fork_helper`); the result is the same either way. `after_fork` runs once
    the helper (if any) exists: start threads there, not before."""
    with parallel.helper_of(f, limit, _CODEC, upto_line, parallel_min_bytes) as helper:
        if after_fork is not None:
            after_fork()
        return _stream(f, path, limit, upto_line, helper)


class _StreamState:
    """What the steps of `_stream` share while they append one file's lines in order: the builder,
    the position reached (byte offset, line number), the index kept on the way and what the
    general path found (a recovered line, the header's version)."""

    __slots__ = (
        "b", "by_id", "id_count", "last", "limit", "line", "max_line", "meta_source", "offset",
        "prev_id", "records", "recovered_any", "source", "upto_line", "v1",
    )  # fmt: skip

    def __init__(self, path: str, *, limit: int, upto_line: int | None) -> None:
        self.source = _Source(path)
        self.meta_source = _MetaSource(self.source)
        self.b = _Builder(path, self.source)
        self.records = self.b.records
        self.by_id: dict[str, int] = {}
        self.b.by_id = self.by_id
        self.limit = limit
        self.upto_line = upto_line
        self.max_line = upto_line if upto_line is not None else 1 << 62
        self.offset = 0
        self.line = 0
        self.last: tuple[RawLine, bytes, int] | None = None  # a recovered line, and its line number
        self.v1: bool | None = None  # None until the header is seen
        self.id_count = 0
        self.prev_id: str | None = None
        self.recovered_any = False


def _stream(f: Any, path: str, limit: int, upto_line: int | None, helper: parallel.Helper | None) -> tuple[Ledger, int]:
    st = _StreamState(path, limit=limit, upto_line=upto_line)
    helper, stop = _first_chunk_end(helper, limit=limit)
    fd = f.fileno() if helper is not None else -1
    # Hundreds of thousands of small objects, no cycles: the collector only costs.
    with collector_paused():
        while True:
            _read_own_lines(st, f, stop=stop)  # the whole file, or our chunks
            if helper is None or st.offset >= limit or st.line >= st.max_line:
                break
            step = _append_decoded_chunks(st, helper, fd=fd)
            if st.offset >= limit:
                break
            if step is None:
                helper = None  # the helper failed: read the rest here
                stop = limit
            else:
                stop = step
            f.seek(st.offset)
    return _finish_stream(st), st.offset


def _first_chunk_end(helper: parallel.Helper | None, *, limit: int) -> tuple[parallel.Helper | None, int]:
    """The helper still in use and where the first lines we read ourselves end: chunk 0, normally
    ours, or the whole file without a helper."""
    if helper is None:
        return None, limit
    step = helper.step(0)
    if type(step) is int:
        return helper, step
    return None, limit  # (cannot happen: the helper starts further on)


def _general_line(st: _StreamState, raw: bytes, n: int) -> None:
    """Any line the fast paths do not take (at `st.line`, `st.offset`): parsed whole, recovered if
    need be."""
    b = st.b
    line = st.line
    try:
        o = orjson.loads(raw) if n <= bounded.LARGE_LINE_BYTES else None  # a longer line: `bounded` reads it
    except orjson.JSONDecodeError:
        o = None
    if o is None:
        rl = parse_line(raw, line, st.offset, False)
        if rl is None:
            return
        if rl.diagnostic is not None or len(rl.objects) != 1:
            if b.first_line is None:
                b.first_line = line
            b.add_line(rl)
            st.recovered_any = True
            st.last = (rl, raw, line)
            return
        o = rl.objects[0]
    if b.first_line is None:
        b.first_line = line
    if type(o) is not dict:
        b.diagnostics.append(not_an_entry(o, line))
        return
    rec = b.add_obj(o, line, st.offset, n, True)
    if rec is not None and rec.id is not None:
        st.by_id[rec.id] = rec.seq
        st.id_count += 1
        st.prev_id = rec.id
    if st.v1 is None and b.first_obj_seen:
        # pi_entries (index -> entry) only matters for v1's firstKeptEntryIndex.
        h = b.header
        st.v1 = h is None or not isinstance(h.get("version"), int) or h["version"] < 2


def not_an_entry(o: Any, line: int) -> Diagnostic:
    """A line whose JSON value is not an object: pi keeps it as an entry with no type, none of its
    steps reads, but a `null` stops its loader (`_buildIndex` reads every entry's type:
    session-manager.js:511-512) and the session cannot be opened."""
    if o is None:
        return Diagnostic(
            line, "resume_refused",
            f"line {line}: the line is JSON null; pi reads every line's type when it opens the session and stops with "
            "a TypeError (\"Cannot read properties of null (reading 'type')\"): it cannot open this session",
            severity="error",
        )  # fmt: skip
    return Diagnostic(line, "not_an_object", f"line {line}: a JSON {type(o).__name__}, not an entry object; ignored")


def _thinking_level_line(st: _StreamState, e: Any, n: int) -> None:
    """A thinking-level change (at `st.line`, `st.offset`) whose fields hold nothing of a wrong
    type (its head decoded): what `entry_record` maps, its extra fields read when asked for."""
    rid = e.id
    pid = e.parentId
    if pid == st.prev_id:
        pid = st.prev_id  # share the parent's id string, as the message path does
    seq = len(st.records)
    rec = record_from_fields(
        Record, seq, st.line, rid, pid, e.timestamp, st.offset, n, None, None, None, (), None, st.meta_source, "meta", e.type
    )
    st.records.append(rec)
    if st.v1:
        st.b.pi_entries.append(rec)
    if rid is not None:
        st.by_id[rid] = seq
        st.id_count += 1
        st.prev_id = rid


def _slow_line(st: _StreamState, e: Any, raw: bytes, n: int, at: tuple[int, int, str | None, int]) -> tuple[str | None, int, bool | None]:
    """A line `_read_own_lines` does not make a record of from its head (`e`: its head, if it
    decoded): read through `st`, given the loop's positions (`at`: offset, line, previous id, id
    count); returns the previous id, the id count and the version as that line left them."""
    st.offset, st.line, st.prev_id, st.id_count = at
    if e is not None and e.type == "thinking_level_change" and e.message is None and st.v1 is not None:
        _thinking_level_line(st, e, n)
    else:
        _general_line(st, raw, n)
    return st.prev_id, st.id_count, st.v1


def _read_own_lines(st: _StreamState, f: Any, *, stop: int) -> None:
    """Append the lines read from `f` until byte `stop`: a message entry straight from its head, decoded
    without its content (`_line_head`'s steps inlined: a call per line was a tenth of the load; an answer
    with no thinking block listed in `plain_answers`), any other line through `_general_line`. Positions
    live in locals, in `st` around each general line; line count and `upto_line` cut in C iterators."""
    records, append, append_entry, by_id = st.records, st.records.append, st.b.pi_entries.append, st.by_id
    decode, valid_utf8, large, first_byte, null = _RAW_TEXT_DECODER.decode, heads.valid_utf8, bounded.LARGE_LINE_BYTES, _FIRST_BYTE, _NULL
    decode_errors, answer, plain_answer = (msgspec.DecodeError, msgspec.ValidationError, RecursionError), _HEAD_ROLES[_AssistantHead], st.source.plain_answers.add
    head_roles, links, new, source, empty_kept = _HEAD_ROLES, _links, msgspec.structs.replace, st.source, _EMPTY_KEPT
    like_of = {r: record_from_fields(Record, 0, 0, None, None, None, 0, 0, llm, None, r, (), None, source) for r, llm in _HEAD_ROLES.values()}
    limit, offset, line, prev_id, id_count, v1 = st.limit, st.offset, st.line, st.prev_id, st.id_count, st.v1
    lines = f if st.upto_line is None else islice(f, max(st.max_line - line, 0))
    before, aligned = line, len(records) == line  # (while each line made one record, a seq is the line before's int: `before`)
    first_line = line + 1
    for line, raw in enumerate(lines, first_line):
        n = len(raw)
        if offset + n > limit:  # appended while we read: stop at the size we started with
            n = len(raw := raw[: limit - offset])
            if not n:
                break
        try:  # (msgspec does not check the UTF-8 of what it skips: checked first, cheaply)
            e = decode(raw) if n <= large and (raw.isascii() or valid_utf8(raw)) else None
        except decode_errors:
            e = None
        if e is not None and e.type == "message" and v1 is not None:
            m = e.message
            roles = head_roles.get(type(m))
            rid = e.id
            if roles is not None and rid is not None:
                calls: tuple[str, ...] = ()
                thinks = False
                c = m.content  # type: ignore[union-attr]
                if type(c) is list:
                    if not c and m.stopReason not in empty_kept:  # type: ignore[union-attr]
                        roles = None
                    for x in c:  # (`_head_fields`' pass, inlined)
                        t = x.text
                        if t:
                            if first_byte(t)[0] != 34:  # (34: a quote)
                                roles = None
                                break
                        elif x.type == "text":
                            roles = None
                            break
                        t = x.thinking
                        if t and first_byte(t)[0] != 34 and t != null:
                            roles = None
                            break
                        if (ty := x.type) == "toolCall" and type(x.id) is str and x.id:
                            calls += (x.id,)
                        elif ty == "thinking":  # (an answer without one: `plain_answers`)
                            thinks = True
                if roles is not None and (roles[0] != "bashExecution" or not m.excludeFromContext):  # type: ignore[union-attr]
                    stop_reason, calls, result = links(m, *roles, calls)
                    pid = e.parentId
                    if pid == prev_id:
                        pid = prev_id  # share the parent's id string (the linear common case)
                    seq = before if aligned else len(records)
                    rec = new(
                        like_of[roles[0]], seq=seq, line=line, id=rid, parent_id=pid, timestamp=e.timestamp, offset=offset,
                        length=n, stop_reason=stop_reason, call_ids=calls, result_id=result,
                    )
                    append(rec)
                    if v1:
                        append_entry(rec)
                    if roles is answer and not thinks:
                        plain_answer(offset)
                    by_id[rid] = seq
                    id_count, prev_id = id_count + 1, rid
                    offset += n
                    if offset >= stop:
                        break
                    before = line
                    continue
        prev_id, id_count, v1 = _slow_line(st, e, raw, n, (offset, line, prev_id, id_count))
        offset += n
        if offset >= stop:
            break
        before, aligned = line, len(records) == line
    st.offset, st.line, st.prev_id, st.id_count = offset, line, prev_id, id_count


def _append_decoded_chunks(st: _StreamState, helper: parallel.Helper, *, fd: int) -> int | list[Any] | None:
    """Append the chunks the helper decoded ahead, in file order: records (`_line_head`'s,
    numbered here) or the length of a line to read again for the general path. Returns the last
    step: the end of the next chunk, ours to read; None if the helper failed; or records, when
    they reached `st.limit`."""
    records, append, append_entry, by_id, source = st.records, st.records.append, st.b.pi_entries.append, st.by_id, st.source
    while True:
        step = helper.step(st.offset)
        if step is None or type(step) is int:
            return step
        offset, line, prev_id, id_count, v1 = st.offset, st.line, st.prev_id, st.id_count, st.v1
        for rec in step:
            line += 1
            n = rec if type(rec) is int else rec.length
            if type(rec) is int or v1 is None:  # no header yet: this line takes the general path too
                st.offset, st.line, st.prev_id, st.id_count = offset, line, prev_id, id_count
                _general_line(st, os.pread(fd, n, offset), n)
                prev_id, id_count, v1 = st.prev_id, st.id_count, st.v1
                offset += n
                continue
            seq = len(records)
            rec.seq = seq
            rec.line = line
            rec._source = source
            if rec.parent_id == prev_id:
                rec.parent_id = prev_id  # share the parent's id string, as in `_read_own_lines`
            append(rec)
            if v1:
                append_entry(rec)
            prev_id = rec.id
            by_id[prev_id] = seq  # type: ignore[index]
            id_count += 1
            offset += n
        st.offset, st.line, st.prev_id, st.id_count = offset, line, prev_id, id_count
        if offset >= st.limit:
            return step


def _finish_stream(st: _StreamState) -> Ledger:
    """The ledger of the lines appended: a recovered line that is the file's last described as such
    (truncated, if it ends without a newline), as reading the whole file describes it; records from
    recovered lines went through add_line, not the index: a full pass then."""
    b = st.b
    if st.last is not None and st.last[2] == st.line:  # (read up to a line too: one without its newline ends the file)
        describe_as_last_line(st.last[0], st.last[1])
    b.id_count = st.id_count
    if st.recovered_any:
        b.by_id = None
    return b.finish()


def entry_record(o: dict[str, Any], seq: int, line: int, offset: int, length: int) -> Record:
    t = o.get("type")
    rid = o.get("id") if isinstance(o.get("id"), str) else None
    pid = o.get("parentId") if isinstance(o.get("parentId"), str) else None
    ts = o.get("timestamp")
    if t == "message":
        m = o.get("message")
        if isinstance(m, dict):
            msg = _message(m)
            rec = Record(seq, line, "message", "message", rid, pid, ts, message=msg, offset=offset, length=length)
            extra = _extra(o, _KNOWN_KEYS["message"])
            known_m = _MSG_KEYS.get(m.get("role"))  # type: ignore[arg-type]
            if known_m is not None:
                mx = _extra(m, known_m)
                if mx:
                    extra = {**(extra or {}), "message": mx}
            rec.extra = extra
            return rec
        return Record(seq, line, "unknown", "message", rid, pid, ts, extra=o, offset=offset, length=length)
    if t == "compaction":
        rec = Record(seq, line, "checkpoint", "compaction", rid, pid, ts, checkpoint=_checkpoint(o), offset=offset, length=length)
        rec.extra = _extra(o, _KNOWN_KEYS["compaction"])
        return rec
    if t == "custom_message":
        msg = _user_message(o.get("content"), "custom")
        rec = Record(seq, line, "message", "custom_message", rid, pid, ts, message=msg, offset=offset, length=length)
        rec.extra = _extra(o, _KNOWN_KEYS["custom_message"])
        return rec
    if t == "branch_summary":
        summary = o.get("summary")
        if isinstance(summary, str) and summary:
            msg = Message("user", [Block("text", BRANCH_SUMMARY_PREFIX + summary + BRANCH_SUMMARY_SUFFIX)], source_role="branchSummary")
            rec = Record(seq, line, "message", "branch_summary", rid, pid, ts, message=msg, offset=offset, length=length)
        else:
            rec = Record(seq, line, "meta", "branch_summary", rid, pid, ts, offset=offset, length=length)
        rec.extra = _extra(o, _KNOWN_KEYS["branch_summary"])
        return rec
    if t == "model_change":
        rec = Record(seq, line, "run", "model_change", rid, pid, ts, offset=offset, length=length)
        rec.extra = _extra(o, _KNOWN_KEYS["model_change"] - {"provider", "modelId"})
        return rec
    if t == "session":  # another header, after the first: pi indexes no entry of this type, nor takes it as the leaf
        rec = Record(seq, line, "meta", "session", None, None, ts, offset=offset, length=length)
        rec.extra = _extra(o, frozenset({"type", "timestamp"}))
        return rec
    if t in _KNOWN_KEYS:
        rec = Record(seq, line, "meta", str(t), rid, pid, ts, offset=offset, length=length)
        rec.extra = _extra(o, _BASE_KEYS)
        return rec
    # Unknown entry type: kept whole and shown; pi keeps it on the path but sends nothing for it.
    return Record(seq, line, "unknown", str(t), rid, pid, ts, extra=o, offset=offset, length=length)


def _migrate_v1(led: Ledger, pi_entries: list[Record | None]) -> None:
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
    for rec in led.records:
        cp = rec.checkpoint
        if cp is None or cp.first_kept_id is not None or cp.first_kept_index is None:
            continue
        idx = cp.first_kept_index
        target = pi_entries[idx] if 0 <= idx < len(pi_entries) else None
        cp.first_kept_id = target.id if target is not None else f"index:{idx}"


# ---------------------------------------------------------------------------------------- the format

# pi's summaries (compaction.ts): the file lists it appends, the split-turn separator, its template.
SUMMARY_FORMAT = SummaryFormat(
    file_list_tags=("read-files", "modified-files"),
    split_turn_separator="---\n\n**Turn Context (split turn):**",
    sections=("## Goal", "## Constraints & Preferences", "## Progress", "## Key Decisions", "## Next Steps", "## Critical Context"),
    split_turn_sections=("## Original Request", "## Context for Suffix"),
)

RUNTIME = Runtime(
    name=NAME,
    tree=True,
    drop_stop_reasons=frozenset({"error", "aborted"}),
    synthesize_missing_results=True,
    synthetic_result_text="No result provided",
    summary_prefix=COMPACTION_SUMMARY_PREFIX,
    summary_suffix=COMPACTION_SUMMARY_SUFFIX,
    summary_format=SUMMARY_FORMAT,
    sends_empty_summary=True,
    # compaction.js:499-503 hands every message entry before the cut to the summarizer, errored
    # and aborted answers included (serialized by utils.js:106-133); only sending drops them.
    summarizes_dropped=True,
    contiguous_tail=True,
    missing_boundary_keeps_nothing=True,
    skips_glued_lines=True,
    forgets_silent_overflow=True,
    needs_header=True,
    # loadEntriesFromFile returns no entries when the first parsed line is not a session header
    # (session-manager.js:238-244), and the session manager then starts a new session.
    file_rejected="pi rejects this file (no valid header) and would start an empty session",
    budget_defaults_source="pi default",
    compacts_first=pi_resume.compacts_first,
    rewrites_sent=pi_transform.rewrite_items,
    sent_to=pi_transform.target,
)

FORMAT = Format(
    name=NAME,
    label="pi / OpenClaw JSONL",
    runtime=RUNTIME,
    looks_like=looks_like,
    build=build,
    stream=load_stream,
    chunk_codec=_CODEC,
    extend=extend,
    default_places=("~/.pi/agent/sessions",),
    simulator="threshold",
    writer=Writer(
        record_name="compaction",
        id_prefix="",
        planned_id="planned0",
        refusal=pi_writer.refusal,
        entry=pi_writer.compaction_entry,
        read_back=lambda o, rl, seq: entry_record(o, seq, rl.line, rl.offset, rl.length),
    ),
)
