"""NextClaw's legacy session store: `<home>/sessions/<key>.jsonl`, core's `SessionStore` (github
Peiiii/nextclaw at `001fb682`; C = packages/nextclaw-core/src, the store is
C/features/session/stores/session.store.ts). Not the NCP journal (formats/nextclaw.py).

The file, as `save` writes it (:369-394): a `{"_type":"metadata", created_at, updated_at,
agent_id?, message_count, last_message_at?, metadata}` line, then one line per event
`{"_type":"event", seq, type, timestamp, data}`; a message event's `data` is `{message}`
(`addMessage`, :250-264), an OpenAI-style message (`role`, `content`, `tool_calls`,
`tool_call_id`, `name`, `reasoning_content`, `timestamp`).

Read as `load` reads it (:343-367):
- every non-empty line is `JSON.parse`d; one that fails makes the whole load fail, and the
  store then treats the session as absent (`catch { return null }`, :364-366): `getOrCreate`
  starts an empty session under the key (:192-209) and its next `save` overwrites the file. Such a
  file is read here as far as it parses, and every message is a hole (the runtime rejects it);
- a metadata line sets the session's metadata (`applyMetadataLine`, :84-97); an event line is
  taken with its `seq` (a positive number, truncated; else the next free one), `type` (default
  `message.other`) and `data` (an object, else `{}`) (`applyEventLine`, :99-110); any other object
  is a message written before events existed, taken whole as a message event (role `assistant`
  when it names none; `applyLegacyLine`, :112-135);
- events are sorted by `seq`, then timestamp (:137-144), and projected to messages: the event's
  `data.message`, else `data` itself, when it has a string role (`projectMessageFromEvent`,
  :299-321); other events carry no message.

The next request is core's `getHistory` (:266-288): the last 50 messages (`maxMessages = 50`),
then `normalizeSessionHistoryWindow` (C/features/session/utils/session-history-window.utils.ts:
60-84): an assistant message with tool calls opens a block that its tool results must close, in
order; a non-tool message before the block is closed drops the whole block (:22-32), a tool
result that answers no pending call is dropped (:43-58), and an unclosed block at the end is
dropped (:81-83). Each message is sent as role, content, name, tool_call_id, tool_calls and
reasoning_content. In this snapshot no caller of `getHistory` is left in the repository (the NCP
agent runtime builds its own context, formats/nextclaw.py); this is the store's own rule.
The legacy store has no compaction: no checkpoints.
"""

from __future__ import annotations

import os
import re
from bisect import bisect_left
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import date, datetime
from functools import lru_cache
from itertools import chain, count, islice
from operator import attrgetter, itemgetter
from typing import Any, BinaryIO, Literal

import msgspec
import orjson

from inspector.formats import heads, nextclaw
from inspector.formats.base import Format, Runtime
from inspector.formats.jsonl import READ_BUFFER_BYTES, LoadError, check_openable, os_problem
from inspector.ledger.jsontext import dumps_text, py_str
from inspector.ledger.model import (
    MARK_NEVER_SENT,
    Block,
    Diagnostic,
    Ledger,
    Message,
    Record,
    RecordIndex,
    RecordSource,
    mark_code,
    record_from_fields,
)

NAME = "nextclaw_legacy"
HISTORY_MESSAGES = 50  # getHistory's maxMessages default (session.store.ts:266)
# The legacy store's folder (`getSessionsPath`, C/shared/lib/core-utils/utils/helpers.utils.ts:42-44),
# under NextClaw's home; the walk goes down into the journal folder below it too.
DEFAULT_PLACES: tuple[str, ...] = ("~/.nextclaw/sessions",)
# Not sessions there: the store's list index (C/features/session/stores/session-list-index.store.ts).
NOT_SESSION_FILES: tuple[str, ...] = (".session-list-index.json",)
_HEAD_LINES = 20
_LAST = "\uffff"  # an unparsable timestamp: NextClaw takes "now", later than any written one


def _is_metadata(o: Any) -> bool:
    """`save`'s first line (:372-380); the journal's sidecar has `version` instead."""
    return isinstance(o, dict) and o.get("_type") == "metadata" and "version" not in o and (
        "created_at" in o or "updated_at" in o or "message_count" in o
    )


def _is_event(o: Any) -> bool:
    """A store event line (:381-389); a journal line has `event` instead of `type`/`data`."""
    return isinstance(o, dict) and o.get("_type") == "event" and "event" not in o and isinstance(o.get("type"), str)


def looks_like_file(path: str) -> bool:
    """Its first object is the store's metadata line or one of its event lines, and no journal
    event is among the first lines. Reads the head only; never raises."""
    first = None
    for o in nextclaw.head_objects(path, _HEAD_LINES):
        if isinstance(o, dict) and o.get("_type") == "event" and isinstance(o.get("event"), dict):
            return False
        if first is None:
            first = o
    return _is_metadata(first) or _is_event(first)


def _claims(path: str, head: bytes) -> bool:
    return b'"_type"' in head[:4096] and looks_like_file(path)


class _Event(msgspec.Struct, gc=False):
    """(A Struct: one is made per line, in C.)"""

    line: int
    seq: int
    type: str
    timestamp: str
    data: dict[str, Any] | None  # (None for a message read again from `raw`)
    role: str | None = None  # the message's role: None when the event carries no message
    msg: dict[str, Any] | None = None  # the message, when it is kept as an object
    offset: int = -1  # else where its line is in the file (read again when the message is asked for)
    length: int = 0
    nested: bool = True  # in that line, the message is data.message (else data itself)
    calls: tuple[str, ...] = ()  # `_call_ids` of an assistant message
    answers: str = ""  # a tool message's tool_call_id, stripped


# The common event line as msgspec types (issue 15: index first, in C): an event whose `data` holds
# its message (a role this tool models), every field of the line, of its message and of its tool
# calls declared and typed, unknown keys refused. Nothing is skipped, so msgspec reads every byte
# orjson reads and refuses what orjson refuses (JSON's grammar, invalid UTF-8, a lone surrogate;
# the only number, `seq`, within int64 and a double's range; a number skipped could be one orjson
# refuses, 1e400, and a text left raw (`msgspec.Raw`) could hide one behind a key written twice);
# it is stricter where orjson is not (a wider seq, deep nesting, an event type NextClaw does not
# write): a line it refuses, or of any other shape (the metadata, a legacy message, an event
# without a nested message, a field of another type or not declared here), is parsed whole by
# orjson as before (tests/test_nextclaw_legacy.py holds both paths equal). Of a key written twice
# both are checked and the last one is kept, as orjson and JSON.parse keep it.
class _FunctionHead(msgspec.Struct, gc=False, forbid_unknown_fields=True):
    name: str | None = None
    arguments: str | None = None


class _CallHead(msgspec.Struct, gc=False, forbid_unknown_fields=True):
    id: str | None = None
    type: str | None = None
    function: _FunctionHead | None = None


class _MessageHead(msgspec.Struct, gc=False, forbid_unknown_fields=True):
    role: Literal["system", "user", "assistant", "tool"]
    content: str | None = None
    timestamp: str | None = None
    tool_calls: list[_CallHead] | None = None
    tool_call_id: str | None = None
    name: str | None = None
    reasoning_content: str | None = None


# The event types NextClaw writes for a message (`resolveMessageEventType`, :323-341), decoded as
# one shared string each (any other: the whole path).
_Kind = Literal["message.user", "message.assistant", "message.system", "assistant.tool_call", "tool.result"]


class _DataHead(msgspec.Struct, gc=False, forbid_unknown_fields=True):
    message: _MessageHead


class _LineHead(msgspec.Struct, gc=False, forbid_unknown_fields=True):
    kind: Literal["event"] = msgspec.field(name="_type")
    data: _DataHead
    seq: heads.Num | None = None
    # (absent: what `_event` makes of it, as msgspec takes a default unchecked; null: the whole path)
    type: _Kind = "message.other"  # type: ignore[assignment]
    timestamp: str | None = None


_DECODE = msgspec.json.Decoder(_LineHead).decode
_DECODE_ERRORS = heads.DECODE_ERRORS
# Whether `_read_events` decodes each line's head first (the tests turn it off, to hold the head
# path against orjson's).
_HEADS = True


def _head(raw: bytes) -> _LineHead | None:
    """The head of the common event line (`_LineHead`); None for any other line."""
    try:
        return _DECODE(raw)  # type: ignore[no-any-return]
    except _DECODE_ERRORS:
        return None


def _with_message(line: int, seq: int, kind: str, ts: str, data: dict[str, Any], offset: int, length: int) -> _Event:
    """The event, with what `projectMessageFromEvent` (:299-321) finds in its data: the message's
    role, its calls and answer; the message itself is kept, or where its line is (`offset` >= 0)."""
    m = data.get("message")
    nested = type(m) is dict
    src = m if nested else data
    role = src.get("role")
    if not (isinstance(role, str) and role):
        return _Event(line, seq, kind, ts, data)  # no message: the event's data is its record's extra
    calls: tuple[str, ...] = ()
    answers = ""
    if role == "assistant":
        calls = tuple(_call_ids(src))
    elif role == "tool":
        answers = src["tool_call_id"].strip() if isinstance(src.get("tool_call_id"), str) else ""
    if offset >= 0 and role in _ROLES:
        return _Event(line, seq, kind, ts, None, role, None, offset, length, nested, calls, answers)
    return _Event(line, seq, kind, ts, data, role, src, -1, 0, True, calls, answers)


def _iso(value: Any) -> str | None:
    """`toIsoString` (:41-50): a parsable string as an ISO time, else None (NextClaw: a fallback)."""
    if type(value) is not str:
        return None if not isinstance(value, str) else _iso_text(value)
    if len(value) == 24 and value[23] == "Z":  # toISOString(), from a cached minute
        ok = _MINUTES.get(value[:17])
        if ok is None:
            ok = _minute_ok(value[:17])
        frac = value[20:23]
        if ok and value[17:20] in _SECONDS and frac in _MILLIS:  # seconds 00-59, milliseconds
            return f"{value[:19]}.{frac}000+00:00" if frac != "000" else f"{value[:19]}+00:00"
    return _iso_text(value)


# "SS." (00-59) and "mmm" (000-999).
_SECONDS = frozenset(f"{s:02d}." for s in range(60))
_MILLIS = frozenset(f"{m:03d}" for m in range(1000))
# The minutes met (`YYYY-MM-DDTHH:MM:` -> whether `_ISO` reads it as a valid date, hour and minute).
_MINUTES: dict[str, bool] = {}
_MINUTE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T(?:[01][0-9]|2[0-3]):[0-5][0-9]:")


def _minute_ok(prefix: str) -> bool:
    ok = _MINUTE.fullmatch(prefix) is not None and _is_date(prefix[:10])
    if len(_MINUTES) < 1 << 16:
        _MINUTES[prefix] = ok
    return ok


def _iso_text(value: str) -> str | None:
    """`_iso` of any string."""
    text = value.strip()
    m = _ISO.fullmatch(text)
    if m is None:
        return _iso_datetime(text)
    day, hms, frac, zone = m.groups()
    if not _is_date(day):
        return _iso_datetime(text)
    tail = "" if not zone else "+00:00" if zone in _UTC else zone
    return f"{day}T{hms}.{frac:0<6}{tail}" if frac and frac.strip("0") else f"{day}T{hms}{tail}"


# The form NextClaw writes (`toISOString()`, or with an offset), its fields within range: its
# isoformat() written by hand; any other string through datetime (what `_iso_datetime` does).
_ISO = re.compile(
    r"([0-9]{4}-[0-9]{2}-[0-9]{2})T((?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9])(?:\.([0-9]{3}|[0-9]{6}))?"
    r"(Z|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])?"
)
_UTC = frozenset({"Z", "+00:00", "-00:00"})


@lru_cache(maxsize=1024)
def _is_date(day: str) -> bool:
    try:
        date.fromisoformat(day)
    except ValueError:
        return False
    return True


def _iso_datetime(text: str) -> str | None:
    try:
        t = datetime.fromisoformat(text)
    except ValueError:
        return None
    return t.isoformat()


def _event_type(msg: dict[str, Any]) -> str:
    """`resolveMessageEventType` (:323-341)."""
    role = msg["role"].strip().lower() if isinstance(msg.get("role"), str) else ""
    if role == "assistant" and isinstance(msg.get("tool_calls"), list) and msg["tool_calls"]:
        return "assistant.tool_call"
    if role == "tool":
        return "tool.result"
    return f"message.{role or 'other'}"


def _not_json(line: bytes, e: orjson.JSONDecodeError, i: int, name: str) -> Diagnostic:
    """Line `i` does not parse (`e`, with its newline): the error as the line without it gives it."""
    try:
        orjson.loads(line)
    except orjson.JSONDecodeError as e_line:
        e = e_line
    return Diagnostic(
        i,
        "invalid_json",
        f"{name}: line {i}: not JSON ({e}): NextClaw's SessionStore.load fails on it and treats the session "
        "as absent (session.store.ts:364-366): it starts an empty one under this key, and its next save "
        "overwrites this file",
        severity="error",
    )


def _legacy_message(o: Any, i: int, seq: int) -> _Event:
    """A line that is neither metadata nor an event: a message written before events existed
    (`applyLegacyLine`, :112-135)."""
    msg = dict(o) if isinstance(o, dict) else {}
    msg["role"] = msg["role"] if isinstance(msg.get("role"), str) else "assistant"
    msg.setdefault("content", "")
    return _with_message(i, seq, _event_type(msg), _iso(msg.get("timestamp")) or _LAST, {"message": msg}, -1, 0)


def _read_events(lines: Iterable[bytes], name: str, upto: int | None, diags: list[Diagnostic]) -> tuple[list[_Event], dict[str, Any] | None, int | None]:
    """The events in NextClaw's order, the metadata line, and the first line that does not parse."""
    events: list[_Event] = []
    meta: dict[str, Any] | None = None
    fallback_seq = 1
    in_order = True  # every event's seq above the one before it
    broken: int | None = None
    end = 0  # where the next line starts
    minutes, head = _MINUTES, (_head if _HEADS else None)
    # The file's lines as `split("\n")` gives them, each read with its newline (JSON allows the
    # trailing whitespace; no copy of the line without it): its length without it.
    for i, raw in enumerate(lines, 1):
        size = len(raw)
        offset, end = end, end + size
        if upto is not None and i > upto:
            break
        if not raw or raw.isspace():  # (`not raw.strip()`, without a copy of the line)
            continue  # `.filter(Boolean)` drops empty lines (a blank one JSON.parse would fail on)
        if raw[-1] == 10:  # b"\n"
            size -= 1
        h = head(raw) if head is not None else None
        if h is not None:  # the common event line (`_LineHead`): what the whole path makes of it
            seq = h.seq
            if type(seq) is not int or seq < 1:
                seq = int(seq) if seq is not None and seq >= 1 else fallback_seq
            kind, stamp, m = h.type, h.timestamp, h.data.message
            if (  # (`_iso` of a toISOString() of a minute met before, inlined)
                stamp is not None and len(stamp) == 24 and stamp[23] == "Z" and minutes.get(stamp[:17])
                and stamp[17:20] in _SECONDS and (frac := stamp[20:23]) in _MILLIS
            ):  # fmt: skip
                ts = stamp[:23] + "000+00:00" if frac != "000" else stamp[:19] + "+00:00"
            else:
                ts = _iso(stamp) or _LAST
            role = m.role
            ids, answer = _head_links(m)
            answers = answer if answer is not None else ""
            kind = (kind.strip() if kind is not None else None) or "message.other"
            ev = _Event(i, seq, kind, ts, None, role, None, offset, size, True, ids, answers)
        else:
            try:
                o = orjson.loads(raw)
            except orjson.JSONDecodeError as e:
                diags.append(_not_json(raw[:size], e, i, name))
                broken = i
                break
            if o is None:  # `data._type` on null throws: the same failed load
                diags.append(Diagnostic(i, "invalid_json", f"{name}: line {i}: null: NextClaw's SessionStore.load fails on it", severity="error"))
                broken = i
                break
            mark = o.get("_type") if type(o) is dict else None
            if mark == "metadata":  # (`_is_metadata` or not: the metadata)
                meta = o
                continue
            ev = _event(o, i, fallback_seq, offset, size) if mark == "event" else _legacy_message(o, i, fallback_seq)
        events.append(ev)
        if ev.seq >= fallback_seq:
            fallback_seq = ev.seq + 1
        else:
            in_order = False  # (a seq at or below one before it: fallback_seq is the highest + 1)
    if not in_order:  # (each seq above all before it: the sort would keep this order)
        events.sort(key=lambda e: (e.seq, e.timestamp))
    return events, meta, broken


def _event(o: dict[str, Any], i: int, fallback_seq: int, offset: int, size: int) -> _Event:
    """An event line (`applyEventLine`, :99-110), parsed whole."""
    raw_seq = o.get("seq")
    seq = int(raw_seq) if isinstance(raw_seq, int | float) and not isinstance(raw_seq, bool) and raw_seq >= 1 else fallback_seq
    kind = o.get("type")
    kind = kind.strip() if type(kind) is str else None  # (orjson's strings are str)
    payload = o.get("data")
    return _with_message(i, seq, kind or "message.other", _iso(o.get("timestamp")) or _LAST, payload if type(payload) is dict else {}, offset, size)


def _message_of(ev: _Event, f: BinaryIO) -> dict[str, Any]:
    """The message an event carries (`_with_message` found one), read again from its line in `f`."""
    if ev.msg is not None:
        return ev.msg
    f.seek(ev.offset)
    data = orjson.loads(f.read(ev.length))["data"]
    return data["message"] if ev.nested else data  # type: ignore[no-any-return]


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(py_str(p.get("text") or "") for p in content if isinstance(p, dict) and p.get("type") == "text")
    return "" if content is None else dumps_text(content)


def _call_ids(msg: dict[str, Any]) -> list[str]:
    """`collectExpectedToolCallIds` (session-history-window.utils.ts:8-20)."""
    calls = msg.get("tool_calls")
    if not isinstance(calls, list):
        return []
    return [c["id"].strip() for c in calls if isinstance(c, dict) and isinstance(c.get("id"), str) and c["id"].strip()]


def _message(msg: dict[str, Any], sent: bool) -> Message | None:
    """The message as this tool models it (None: a role it has no place for, kept as unknown)."""
    role = msg["role"]
    if role not in ("system", "user", "assistant", "tool"):
        return None
    content = msg.get("content", "")
    if role == "tool":
        cid = msg["tool_call_id"].strip() if isinstance(msg.get("tool_call_id"), str) else ""
        name = msg.get("name") if isinstance(msg.get("name"), str) else None
        return Message("tool", [Block("tool_result", _text(content), call_id=cid or None, name=name)], source_role=role, never_sent=not sent)
    blocks: list[Block] = []
    if role == "assistant" and isinstance(msg.get("reasoning_content"), str) and msg["reasoning_content"]:
        blocks.append(Block("thinking", msg["reasoning_content"]))
    if isinstance(content, list):
        for p in content:
            if isinstance(p, dict) and p.get("type") == "text":
                blocks.append(Block("text", py_str(p.get("text") or "")))  # (a text nested deep too: `jsontext.deep`)
            else:
                blocks.append(Block("other", raw=p))
    elif _text(content):
        blocks.append(Block("text", _text(content)))
    if role == "assistant":
        calls = msg.get("tool_calls")
        for c in calls if isinstance(calls, list) else ():  # (any other value: no calls; the field check says so)
            if isinstance(c, dict):
                fn = c.get("function") if isinstance(c.get("function"), dict) else {}
                cid = c["id"].strip() if isinstance(c.get("id"), str) else ""
                name = fn.get("name") if isinstance(fn.get("name"), str) else None
                blocks.append(Block("tool_call", call_id=cid or None, name=name, args=nextclaw.tool_arguments(fn.get("arguments"))))
    return Message(role, blocks, source_role=role, never_sent=not sent)


def history_window(said: list[Record]) -> tuple[set[int], list[tuple[int, str]]]:
    """core's getHistory: the indexes of the messages sent, and (index, why) for each of the last
    50 it drops (session-history-window.utils.ts:60-84). `said`: the message records in order
    (each one's role, the calls it makes, the call it answers)."""
    start = max(0, len(said) - HISTORY_MESSAGES)
    kept: list[int] = []
    dropped: list[tuple[int, str]] = []
    pending: set[str] = set()
    block = 0  # position in `kept` of the open block's assistant message

    def close(why: str) -> None:
        nonlocal kept, pending
        if pending:
            dropped.extend((i, why) for i in kept[block:])
            kept = kept[:block]
        pending = set()

    for i in range(start, len(said)):
        m = said[i]
        role = m.role
        if pending and role != "tool":
            close("its tool calls are not all answered before the next message")
        if role == "assistant":
            kept.append(i)
            pending, block = set(m.call_ids), len(kept) - 1
        elif role == "tool":
            cid = m.result_id or ""
            if not pending or cid not in pending:
                dropped.append((i, "it answers no call still open"))
                continue
            kept.append(i)
            pending.discard(cid)
        else:
            kept.append(i)
    close("its tool calls are still unanswered at the end")
    return set(kept), dropped


class _Source(RecordSource):
    """The messages of a loaded file, each built the first time it is asked for (by its record's
    seq): from its event (`events`), or read again from its line, which starts at the record's
    offset and holds it as `data.message` (the common event line, `_read_in_order`: a record of
    it has that line's length, every other one 0)."""

    __slots__ = ("events", "path")

    def __init__(self, path: str) -> None:
        self.path = path
        self.events: dict[int, _Event] = {}

    def obj(self, rec: Record) -> Any:
        return None  # (no "as written" view: what the eager build showed, none)

    def _read(self, rec: Record, f: BinaryIO) -> Message | None:
        ev = self.events.get(rec.seq)
        if ev is not None:
            msg = _message_of(ev, f)
        else:
            f.seek(rec.offset)
            msg = orjson.loads(f.readline())["data"]["message"]
        return _message(msg, not rec.never_sent)

    def message(self, rec: Record) -> Message | None:
        if not rec.length and rec.seq not in self.events:
            return None
        with open(self.path, "rb") as f:
            return self._read(rec, f)

    def _offset(self, rec: Record) -> int:
        ev = self.events.get(rec.seq)
        return rec.offset if ev is None else ev.offset

    def load_many(self, recs: list[Record]) -> None:
        todo = sorted((r for r in recs if r.length or r.seq in self.events), key=self._offset)
        with open(self.path, "rb") as f:
            for r in todo:
                r._message = self._read(r, f)

    def extra(self, rec: Record) -> dict[str, Any] | None:
        return None


_ROLES = frozenset({"system", "user", "assistant", "tool"})
# Every message record is this one with its own fields replaced (in C, by keyword: cheaper than
# `record_from_fields` with all 22 positionally), its source set. (Record's field order, model.py.)
_TEMPLATE = record_from_fields(
    Record, 0, 0, None, None, None, 0, 0, None, None, None, (), None, None, "message", "message", True, True,
    None, None, None, None,
)  # fmt: skip
# The `mark_code` of a message record as `_read_in_order` makes it, by its role (never sent:
# `_ledger` clears that bit for the messages getHistory sends).
_ROLE_CODES = {role: mark_code(msgspec.structs.replace(_TEMPLATE, role=role, source_role=role)) for role in _ROLES}


@dataclass
class _Read:
    """What reading the file gives: the records in NextClaw's order, the message records among
    them (each made never sent: `_ledger` marks those getHistory sends), where each message is."""

    source: _Source
    records: list[Record] = field(default_factory=list)
    said: list[Record] = field(default_factory=list)
    codes: bytearray = field(default_factory=bytearray)  # each record's `mark_code`, as made
    meta: dict[str, Any] | None = None
    broken: int | None = None  # the first line that does not parse

    def add(self, ev: _Event) -> None:
        """An event's record (an event parsed whole, or read by `_read_events`)."""
        records = self.records
        seq, ts, rid = len(records), (ev.timestamp if ev.timestamp != _LAST else None), f"event-{ev.seq}"
        if ev.role is None:
            records.append(Record(seq, ev.line, "meta", ev.type, rid, None, ts, extra=ev.data))
            self.codes.append(mark_code(records[-1]))
            return
        if ev.role not in _ROLES:
            rec = Record(seq, ev.line, "unknown", ev.type, rid, None, ts, extra={"message": ev.msg})
        else:
            # A message's record, its message built later (`_message`): what the index holds of it
            # here is what `Record._take` would take from that message (its calls' ids, the call it
            # answers).
            role = ev.role
            self.source.events[seq] = ev
            rec = msgspec.structs.replace(
                _TEMPLATE, seq=seq, line=ev.line, id=rid, timestamp=ts, role=role, source_role=role, call_ids=ev.calls,
                result_id=ev.answers or None, type=ev.type, _source=self.source,
            )  # fmt: skip
        records.append(rec)
        self.codes.append(mark_code(rec))
        self.said.append(rec)


def _head_links(m: Any) -> tuple[tuple[str, ...], str | None]:
    """A message head's call links (`_call_ids`): the call ids an assistant message makes (mostly
    one), and the id a tool message answers, stripped (None when it names none)."""
    role = m.role
    if role == "assistant" and (calls := m.tool_calls):
        if len(calls) == 1:
            return ((cid,) if (cid := calls[0].id) is not None and (cid := cid.strip()) else ()), None
        return tuple([c.id.strip() for c in calls if c.id is not None and c.id.strip()]), None
    if role == "tool" and (cid := m.tool_call_id) is not None:
        return (), cid.strip()
    return (), None


def _read_in_order(lines: Iterable[bytes], path: str, upto: int | None, diags: list[Diagnostic]) -> _Read | None:
    """`_read_events` and the records made of its events in one pass, while every event's seq is
    above the one before it (NextClaw's own files: the sort by seq would keep their order); None at
    the first that is not (the caller reads the file again, `_read_events` sorting the events).
    The common event line (`_LineHead`) becomes its record at once, a copy of its role's template
    (`_role_shapes`), its message left in the file at the record's offset; its id is the next of
    `_event_ids` while its seq is the one after the last; its time is written with those of the
    lines before it, a batch at a time."""
    name = os.path.basename(path)
    out = _Read(_Source(path))
    records, add_code, shapes = out.records, out.codes.append, _role_shapes(out.source)
    (tool, tool_code), (assistant, assistant_code) = shapes["tool"], shapes["assistant"]
    fallback_seq = 1
    next_id = _event_ids(fallback_seq)  # (the id of seq `fallback_seq`, then of the seqs after it)
    end = 0  # where the next line starts
    decode, links, replace = _DECODE, _head_links, msgspec.structs.replace
    stamps: list[str | None] = []  # the timestamps of the common event lines since `batch`, as written
    batch = 0  # the first record of the batch whose times are not set
    mixed = False  # a record made of another kind of line (`add`)
    for i, raw in enumerate(lines if upto is None else islice(lines, upto), 1):
        size = len(raw)
        try:
            h = decode(raw)
        except _DECODE_ERRORS:
            h = None
        if h is None:  # (any other line: parsed whole, as `_read_events` does)
            offset, end = end, end + size
            if not raw or raw.isspace():  # (`not raw.strip()`, without a copy of the line: a blank line)
                continue
            ev = _parsed(raw, i, fallback_seq, offset, name, diags, out)
            if ev is None:
                if out.broken is not None:
                    break
                continue
            if ev.seq < fallback_seq:
                return None
            fallback_seq = ev.seq + 1
            next_id = _event_ids(fallback_seq)
            out.add(ev)
            mixed = True
            continue
        seq = h.seq
        if seq == fallback_seq:  # (the seq after the last, NextClaw's own: a float equal to it reads as it)
            rid = next_id()
            fallback_seq += 1
        else:
            seq = _seq_or(seq, fallback_seq)
            if seq < fallback_seq:
                return None
            rid, next_id = f"event-{seq}", _event_ids(seq + 1)
            fallback_seq = seq + 1
        m = h.data.message
        role = m.role
        if role == "tool" and (answer := m.tool_call_id) is not None:  # (the call it answers, as `_head_links` reads it)
            rec = replace(tool, seq=len(records), line=i, id=rid, type=h.type, offset=end, length=size, result_id=answer.strip() or None)
            code = tool_code
        elif role == "assistant" and (calls := m.tool_calls):  # (the calls it makes)
            if len(calls) != 1 or (cid := calls[0].id) is None or not (cid := cid.strip()):
                ids = links(m)[0]
            else:
                ids = (cid,)
            rec = replace(assistant, seq=len(records), line=i, id=rid, type=h.type, offset=end, length=size, call_ids=ids)
            code = assistant_code
        else:
            template, code = shapes[role]
            rec = replace(template, seq=len(records), line=i, id=rid, type=h.type, offset=end, length=size)
        end += size
        records.append(rec)
        add_code(code)
        stamps.append(h.timestamp)
        if not i & _TIMES_MASK:
            batch = _set_times(records, batch, stamps, mixed)
    _set_times(records, batch, stamps, mixed)
    # (`add` lists the messages it makes; every other record is one)
    out.said = [r for r in records if r.kind != "meta"] if mixed else records
    return out


def _role_shapes(source: _Source) -> dict[str, tuple[Record, int]]:
    """By role, the record a common event line's record is a copy of (`_TEMPLATE` with that role
    and source role, from `source`) and its `mark_code`."""
    return {
        role: (msgspec.structs.replace(_TEMPLATE, role=role, source_role=role, _source=source), code)
        for role, code in _ROLE_CODES.items()
    }


# f"event-{seq}" for each seq made as its thousand's prefix and its last three digits, not
# formatted from the number (int -> str was a fourteenth of the load, one per line).
_FIRST_IDS = tuple(f"event-{i}" for i in range(1000))
_LAST_DIGITS = tuple(f"{i:03d}" for i in range(1000))


def _thousand_ids(k: int) -> list[str]:
    """f"event-{seq}" for the seqs 1000k .. 1000k + 999 (k >= 1)."""
    pre = f"event-{k}"
    return [pre + d for d in _LAST_DIGITS]


def _event_ids(first: int) -> Callable[[], str]:
    """What gives f"event-{seq}" for the seqs `first`, `first` + 1, ..., one a call."""
    k, r = divmod(first, 1000)
    head = _FIRST_IDS[r:] if k == 0 else map(f"event-{k}".__add__, _LAST_DIGITS[r:])
    return chain(head, chain.from_iterable(map(_thousand_ids, count(k + 1)))).__next__




def _seq_or(seq: Any, fallback_seq: int) -> int:
    """An event's seq as `applyEventLine` takes it: a positive number, truncated; else the next
    free one (`fallback_seq`)."""
    if type(seq) is int and seq >= 1:
        return seq
    return int(seq) if seq is not None and seq >= 1 else fallback_seq


_SEQ = attrgetter("seq")
_DATE_HOUR = itemgetter(slice(0, 13))  # (a time's `YYYY-MM-DDTHH`)
# How many lines' records' times `_read_in_order` writes at once (`_times`, each 4096th line): few
# enough that their strings, as written and as written again, are not all alive at once.
_TIMES_MASK = 4095


def _set_times(records: list[Record], batch: int, stamps: list[str | None], mixed: bool) -> int:
    """The time of each record of a common event line from `batch` on (every record there, unless
    `mixed`: those of any other line have a length of 0), from its line's timestamp (`_times`);
    `stamps` emptied. Returns where the next batch starts."""
    recs = records[batch:]
    if mixed:
        recs = [r for r in recs if r.length]
    for rec, ts in zip(recs, _times(stamps), strict=True):
        rec.timestamp = ts
    stamps.clear()
    return len(records)


def _times(stamps: list[str | None]) -> list[str | None]:
    """`_iso` of each timestamp. When every one is a toISOString() (NextClaw's own), all are
    written at once: checked together (`_all_iso_strings`), then changed by replacing in their
    join (`Z` by `000+00:00`, `.000Z` by `+00:00`, as `_iso` writes them); else one at a time."""
    try:
        joined = "\n".join(stamps)  # type: ignore[arg-type]
    except TypeError:  # (a line without one)
        return [_iso(s) for s in stamps]
    if not stamps or not _all_iso_strings(joined, stamps):  # type: ignore[arg-type]
        return [_iso(s) for s in stamps]
    return joined.replace(".000Z", "+00:00").replace("Z", "000+00:00").split("\n")  # type: ignore[return-value]


def _all_iso_strings(joined: str, stamps: list[str]) -> bool:
    """Whether each of the times `stamps` (`joined` by newlines) is a toISOString() `_iso` reads as it is
    written (a 24-character `YYYY-MM-DDTHH:MM:SS.mmmZ` of a valid date, hour, minute and second):
    its shape checked in C over the join (`nextclaw.iso_shaped`), then each distinct date and hour
    (few) as `_minute_ok` checks them."""
    return nextclaw.iso_shaped(joined, len(stamps)) and all(map(_hour_ok, _date_hours(stamps)))


def _date_hours(stamps: list[str]) -> Iterable[str]:
    """Each `YYYY-MM-DDTHH` the toISOString()-shaped times `stamps` begin with (ASCII: checked by
    `nextclaw.iso_shaped`). Times in order (NextClaw's own, written as they happen: `sorted` checks
    it in C, its run found at once) share each date and hour in one run: a run's first time names
    it, and the next run starts at the first time above every one with that prefix (`bisect`);
    else each time's own, as a set."""
    if stamps != sorted(stamps):
        return set(map(_DATE_HOUR, stamps))
    hours: list[str] = []
    at, n = 0, len(stamps)
    while at < n:
        hour = stamps[at][:13]
        hours.append(hour)
        at = bisect_left(stamps, hour + "\x7f", at)  # (above it: every time with that prefix, its next character ASCII)
    return hours


def _hour_ok(prefix: str) -> bool:
    """Whether `YYYY-MM-DDTHH` (ASCII digits) is a valid date (`_is_date`) and hour."""
    return prefix[11:13] < "24" and _is_date(prefix[:10])


def _parsed(raw: bytes, i: int, fallback_seq: int, offset: int, name: str, diags: list[Diagnostic], out: _Read) -> _Event | None:
    """A line the head decode refuses, parsed whole: its event, or None for the metadata (kept in
    `out.meta`) and for a line that does not parse (`out.broken`: the read stops there)."""
    size = len(raw) - (raw[-1] == 10)  # (without its newline)
    try:
        o = orjson.loads(raw)
    except orjson.JSONDecodeError as e:
        diags.append(_not_json(raw[:size], e, i, name))
        out.broken = i
        return None
    if o is None:  # `data._type` on null throws: the same failed load
        diags.append(Diagnostic(i, "invalid_json", f"{name}: line {i}: null: NextClaw's SessionStore.load fails on it", severity="error"))
        out.broken = i
        return None
    mark = o.get("_type") if type(o) is dict else None
    if mark == "metadata":  # (`_is_metadata` or not: the metadata)
        out.meta = o
        return None
    return _event(o, i, fallback_seq, offset, size) if mark == "event" else _legacy_message(o, i, fallback_seq)


def build(lines: Iterable[bytes], path: str, upto: int | None) -> Ledger:
    """The ledger of the file's lines, its events sorted by seq (`_read_events`)."""
    diags: list[Diagnostic] = []
    events, meta, broken = _read_events(lines, os.path.basename(path), upto, diags)
    read = _Read(_Source(path), meta=meta, broken=broken)
    for ev in events:
        read.add(ev)
    return _ledger(path, read, diags)


def _ledger(path: str, read: _Read, diags: list[Diagnostic]) -> Ledger:
    """The ledger of what was read: getHistory's window marks the messages it sends, and says why
    it sends no others."""
    name = os.path.basename(path)
    said, records, codes = read.said, read.records, read.codes
    every = said is records  # (every record a message, in file order: `_read_in_order`)
    sent, dropped = history_window(said)
    for k in sent:
        rec = said[k]
        rec.never_sent = False
        codes[rec.seq] &= ~MARK_NEVER_SENT  # (a record's seq is its place)
    cut = len(said) - HISTORY_MESSAGES
    if cut > 0:
        if every:  # (then each record's seq is its place)
            # (the records' own seq ints, not as many new ones: the same values, kept once)
            first, last, seqs = said[0].line, said[cut - 1].line, list(map(_SEQ, said[:cut]))
        else:
            at = [r.line for r in said[:cut]]
            first, last, seqs = min(at), max(at), [r.seq for r in said[:cut]]  # (events are sent in seq order, not file order)
        diags.append(
            Diagnostic(
                first,
                "outside_history_window",
                f"{name}: {cut} messages (lines {first}–{last}) are older "
                f"than the last {HISTORY_MESSAGES} that NextClaw's getHistory sends (session.store.ts:266-267): they never "
                "reach the model, and no summary stands for them",
                severity="warning",
                seqs=seqs,
            )
        )
    for i, why in dropped:
        r = said[i]
        diags.append(
            Diagnostic(
                r.line,
                "unmatched_tool_call",
                f"{name}: line {r.line}: NextClaw's getHistory drops this {r.role} message: {why} "
                "(normalizeSessionHistoryWindow, session-history-window.utils.ts:22-58, :81-83)",
                severity="warning",
                seqs=[r.seq],
            )
        )
    led = Ledger(path, NAME, os.path.splitext(name)[0], read.meta, records, diags)
    led.runtime_rejects_file = read.broken is not None
    # Every record is on the runtime's path (none hidden, no header record); what the analysis's
    # path scan reads of each, its `mark_code` (`codes`): it reads no record.
    led.index = RecordIndex(records, len(records), None, [], codes=codes)
    return led


def load(path: str, upto: int | None) -> Ledger:
    """Read the store's file. Its bytes are not hashed here: `formats.load` hashes a file only for
    a command that writes."""
    size = check_openable(path)
    try:
        with open(path, "rb", buffering=READ_BUFFER_BYTES) as f:  # (jsonl.READ_BUFFER_BYTES: not 8 KiB)
            diags: list[Diagnostic] = []
            read = _read_in_order(f, path, upto, diags) if _HEADS else None
            if read is not None:
                led = _ledger(path, read, diags)
            else:  # (the events' seqs do not rise: read again, and sorted)
                f.seek(0)
                led = build(f, path, upto)
    except OSError as e:
        raise LoadError(f"{path}: {os_problem(e)}") from None
    led.size = size
    led.upto_line = upto
    return led


FORMAT = Format(
    name=NAME,
    label="NextClaw legacy session store",
    read_only_reason=(
        "core's SessionStore has no compaction record to write (session.store.ts), and NextClaw is not installable "
        "here to prove it reads back a file this tool writes"
    ),
    runtime=Runtime(
        name="nextclaw",
        file_rejected="NextClaw fails to load this file and starts an empty session under its key (session.store.ts:364-366)",
    ),
    claims=_claims,
    load_file=lambda path, _f, _head, _selector, upto: load(path, upto),
    looks_like_file=looks_like_file,
    suffixes=(".jsonl",),
    default_places=DEFAULT_PLACES,
    homes=(nextclaw.HOME,),
    not_session_files=NOT_SESSION_FILES,
)
