"""adk-go session stores (github google/adk-go): the GORM SQLite database and the JSON export.

Read from the sources at the compaction stack head `2918701f` (adk-go #1234, 2026-08-20) and main
`0a51e153` (2026-08-21); docs/runtimes/adk-go.md holds the research notes. Citations are
`path:line` at `2918701f` unless marked `@main`.

Store (`session/database/storage_session.go:31-113`): tables `sessions`, `events`, `app_states`,
`user_states`, in adk-python's v0 column layout plus adk-go's own columns (`routes_json`,
`output_json`, `node_info_json`, `requested_input_json`, `isolation_scope`, :84-90), which identify
it. `actions` is `json.Marshal(EventActions)` (:131-135), never a pickle: PascalCase keys on the
compaction stack (`session/session.go:245-273`, only `compaction` is tagged, :272), camelCase after
adk-go #1252 (`session/session.go:240-257 @main`); keys are matched case-insensitively, as Go's
decoder does. Nested genai JSON is camelCase (`functionCall`, `usageMetadata.promptTokenCount`).
Stream order is `ORDER BY timestamp DESC`, reversed (`session/database/service.go:174-214`): the
same query is run here, so ties come back as SQLite returns them to adk-go. A record's `line` is
its 1-based stream position (`--at N` reads the first N events); diagnostics name the row's rowid.
A store holds many sessions: `FILE.db#SESSION_ID` picks one, else the most recently updated.

The JSON export is `session.Event` as JSON: camelCase with RFC 3339 times on main
(`session/session.go:100-146`, `:364-440 @main`), Go field names on the stack (`session.go:96-145`,
`model/llm.go:42-68`); a list of events, or an object with an `events` list, in list order.

The next request, as `buildContentsDefault` builds it (`internal/llminternal/contents_processor.go`),
for the agent that speaks next (the latest non-user author, or the target of a `transferToAgent`),
with compaction configured (records are dropped unread otherwise, :52-69):

1. Filter (:91-128): an event without content is skipped unless it is a usable summary (:100-107);
   an event not on the agent's branch (`internal/utils/utils.go:196-204`, prefix rule) or of another
   isolation scope (exact match, :117) is skipped; so are auth-request and tool-confirmation calls
   and responses (`shouldExcludeEvent`, :630-650). Another agent's event becomes a user-role
   "For context:" message (`ConvertForeignEvent`, :566-617).
2. Compaction, Go's own rules (`internal/compactioninternal/apply.go`), not adk-python's:
   - a record is usable only with `compactedContent` (:454-456); every record is stripped from the
     stream (:121-127); an inverted range is ignored (:72-78);
   - subsumption (`isCompactionSubsumed`, `window.go:130-155`; `coversAllOf`, `:443-466`; `namesHole`,
     `:477-485`): a record is dropped when a usable one covers all of it and starts earlier, ends
     later, names fewer holes or sits later in the stream;
   - coverage (`coveredBy`, apply.go:168-173; `inRange`, :545-553; `excludes`, :400-408): a raw
     event is covered only by a surviving record later in the stream, when its timestamp lies in the
     inclusive range and `excludedEvents` does not name it (invocation id + timestamp truncated to
     microseconds, :392). So `excludedEvents` are holes *by record*: kept raw, not lost;
   - each surviving summary is sent as the model's turn at the stream position of the first event it
     covers, else at its own (`summaryIndex`, :99-113, :139-149);
   - a surviving response whose long-running call was covered gets the call event back right before
     it, with the freshest responses of its sibling calls (`recoverCompactedFunctionCalls`, :208-291).
3. Function responses are moved next to their calls (`rearrangeEventsForLatestFunctionResponse`,
   contents_processor.go:241-363, an unmatched last response is an error: no request is sent;
   `rearrangeEventsForFunctionResponsesInHistory`, :377-457, a response with no call is dropped).
4. Zero parts and empty contents are dropped (:197-214); if the last content is not the user's,
   the fixed "Continue processing…" user turn is appended (:77-83).
Not modelled: transcription aggregation (:138-183; the SQL store has no transcription columns) and
a scoped agent's synthetic first turn (:216-227).

How the ledger carries this (the generic Runtime fields cannot say it directly): each compaction
record is a checkpoint whose `replacement` is Go's request as it stands right after that record
(summaries at their Go positions, foreign events as their "For context" text, re-injected calls),
and whose `explicit_*` sets say what is covered (represents), what is kept raw before the last
covered event (retains: excluded events, re-injected calls) and the boundary. The whole predicted
request is also kept in `header["next_request"]`.

Write-back (`adk_go_writer`, DESIGN §5): one compaction event row, as adk-go's compactor writes it,
into a store of the compaction stack; main's camelCase stores and the JSON export are refused.
"""

from __future__ import annotations

import bisect
import dataclasses
import datetime as _dt
import functools
import itertools
import operator
import re
import sqlite3
from dataclasses import dataclass, field
from itertools import compress
from operator import itemgetter
from sys import intern
from typing import Any

import msgspec
import orjson

from inspector.formats import adk, adk_go_writer, adk_heads, adk_writer, fields, sqlite_files
from inspector.formats import adk_go_heads as H
from inspector.formats.base import Format, Runtime, StoreGrowth, StoreWriter, Unwritable, Writer
from inspector.formats.heads import kept_result_ids
from inspector.formats.jsonl import LoadError, open_regular
from inspector.ledger.jsontext import deep, dumps_text
from inspector.ledger.model import (
    Checkpoint,
    Diagnostic,
    HistoryItem,
    Ledger,
    Message,
    Record,
    RecordSource,
    Usage,
    record_from_fields,
)
from inspector.ledger.order import non_decreasing
from inspector.ledger.quoting import quote

NAME = "adk_go"

# adk-go has no default location: `database.NewSessionService` takes any GORM dialector and the
# application opens the file (session/database/service.go:44). Found by content wherever it is.
DEFAULT_PLACES: tuple[str, ...] = ()
# SQLite's side files next to a store (fnmatch patterns on the file name).
NOT_SESSION_FILES: tuple[str, ...] = ("*.db-wal", "*.db-shm", "*.db-journal", "*.sqlite-wal", "*.sqlite-shm", "*.sqlite-journal")

# The text adk-go appends when the history does not end on a user turn (contents_processor.go:81).
CONTINUE_TEXT = "Continue processing previous requests as instructed. Exit or provide a summary if no more outputs are needed."

# inspector.analysis.runtime.Runtime's fields for adk-go. Linear history; nothing is dropped by stop
# reason and no result is synthesized for a call without one (contents_processor.go:421-424 sends
# the call as is); summaries are sent as written (apply.go:107-113). Each checkpoint's replacement
# holds Go's request up to it (see the module docstring); a Go event can answer several calls.
RUNTIME_RULES: dict[str, Any] = {
    "name": NAME,
    "context_rule": "boundary",
    "replaces_history": True,
    "many_results_per_message": True,
    # Records count the session's events in stream order (a store's event N, an export's events[N-1]).
    "record_place": "event",
    "unanswered_call": (
        "adk-go sends the call as is, without a response after it (internal/llminternal/contents_processor.go:389-408 "
        "at 0a51e153), so the model reads a call that never returned"
    ),
}
ADK_GO_RULES = RUNTIME_RULES

_TABLES = frozenset({"sessions", "events", "app_states", "user_states"})
# Columns only adk-go's `storageEvent` has (storage_session.go:84-90); adk.py declines such stores.
GO_ONLY_COLUMNS = adk.ADK_GO_COLUMNS
# Calls adk-go never puts in a request (shouldExcludeEvent; tool/toolconfirmation/tool_confirmation.go:46).
_EXCLUDED_CALLS = frozenset({"adk_request_credential", "adk_request_confirmation"})
_US = 1000  # refResolution: a microsecond, in nanoseconds (apply.go:392)


# ---------------------------------------------------------------------------------------- detection


def is_go_store(tables: set[str], event_columns: set[str]) -> bool:
    """adk-go's four tables, and an events table with any adk-go-only column (adk-python v0 has none)."""
    return tables >= _TABLES and bool(event_columns & GO_ONLY_COLUMNS)


def looks_like_file(path: str) -> bool:
    """Is this an adk-go SQLite store? Reads the head, the table names and the events columns; never raises."""
    shape = sqlite_files.tables_and_event_columns(path)
    return shape is not None and is_go_store(*shape)


def sniff_export(head: bytes) -> bool:
    """Does this look like the start of an adk-go JSON export (events with camelCase or Go-named
    `invocationId`, which adk-python's `invocation_id` dumps and pi's lines never carry)?"""
    h = head.removeprefix(b"\xef\xbb\xbf").lstrip()
    low = h.lower()
    return h[:1] in (b"[", b"{") and b'"invocationid"' in low and b'"author"' in low and b'"invocation_id"' not in low


def looks_like_export(path: str) -> bool:
    try:
        with open_regular(path) as f:  # (a named pipe the walk found: refused, never waited on)
            return sniff_export(f.read(65536))
    except OSError:
        return False


# ---------------------------------------------------------------------------------------- values

_TIME = re.compile(
    r"^(\d{4})-(\d\d)-(\d\d)[T ](\d\d):(\d\d):(\d\d)(?:\.(\d{1,9}))?\s*(Z|[+-]\d\d:?\d\d)?(?: [+-]\d{4} [A-Z]+)?$"
)
_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.UTC)
_EPOCH_ORDINAL = _EPOCH.date().toordinal()


def parse_time(v: Any) -> int | None:
    """A Go time as integer nanoseconds since the epoch: RFC 3339 (JSON), GORM's SQLite text
    (`YYYY-MM-DD HH:MM:SS.ffffff+HH:MM`, optionally Go's ` +0000 UTC` tail), or epoch seconds
    (main's decoder accepts adk-python's float, rounded to microseconds, session.go:374-440 @main)."""
    if isinstance(v, bool):
        return None
    if isinstance(v, int | float):
        if v != v or abs(v) > 1e11:
            return None
        return round(v * 1_000_000) * _US
    if not isinstance(v, str):
        return None
    m = _TIME.match(v.strip())
    if m is None:
        return None
    y, mo, d, hh, mi, ss, frac, zone = m.groups()
    day = _epoch_day(y, mo, d)
    h, mn, sc = int(hh), int(mi), int(ss)
    if day is None or h > 23 or mn > 59 or sc > 59:  # what datetime refuses
        return None
    secs = day * 86400 + h * 3600 + mn * 60 + sc
    if zone and zone != "Z":
        z = zone.replace(":", "")
        off = int(z[1:3]) * 3600 + int(z[3:5]) * 60
        secs -= off if z[0] == "+" else -off
    return secs * 1_000_000_000 + int((frac or "0").ljust(9, "0"))


_MINUTES: dict[str, int | None] = {}
_ZONES: dict[str, int | None] = {"Z": 0, "+00:00": 0}


def fast_time(v: Any) -> int | None:
    """`parse_time`, without its pattern for the two spellings a store and an export write
    (`YYYY-MM-DD HH:MM:SS.f+HH:MM`, `YYYY-MM-DDTHH:MM:SS.fZ`, 1-9 fractional digits): the minute
    and the zone are looked up once, read by `parse_time` itself; anything else is `parse_time`'s."""
    if type(v) is not str or len(v) < 22 or v[16] != ":" or v[19] != ".":
        return parse_time(v)
    if len(v) == 32 and v[26:] == "+00:00":  # GORM's: seconds and microseconds as one number
        tail = v[17:19] + v[20:26]
        base = _MINUTES.get(v[:16])
        if base is not None and tail.isdigit() and tail.isascii():
            us = int(tail)
            return None if us >= 60_000_000 else (base * 1_000_000 + us) * 1000
    elif len(v) == 24 and v[23] == "Z":  # Go's RFC 3339 with milliseconds: the same, in ms
        tail = v[17:19] + v[20:23]
        base = _MINUTES.get(v[:16])
        if base is not None and tail.isdigit() and tail.isascii():
            ms = int(tail)
            return None if ms >= 60_000 else (base * 1000 + ms) * 1_000_000
    if v[-1] == "Z":
        zone, frac = "Z", v[20:-1]
    else:
        zone, frac = v[-6:], v[20:-6]
    off = _ZONES.get(zone, -1)
    if off == -1:
        off = _ZONES[zone] = _zone(zone)
    minute = v[:16]
    base = _MINUTES.get(minute, -1)
    if base == -1:
        if len(_MINUTES) >= 100_000:  # (a long-lived process reading many sessions: kept bounded)
            _MINUTES.clear()
        t = parse_time(minute + ":00Z")
        base = _MINUTES[minute] = None if t is None else t // 1_000_000_000
    sec = v[17:19]
    if off is None or base is None or not (0 < len(frac) <= 9 and frac.isdigit() and frac.isascii() and sec.isdigit() and sec.isascii()):
        return parse_time(v)
    s = int(sec)
    if s > 59:
        return None
    return (base + s - off) * 1_000_000_000 + int(frac.ljust(9, "0"))


# GORM's text of a UTC time, with microseconds, in ASCII digits and in range but for the date
# (which `datetime` checks): the shape `times_of` reads in C (`_gorm_shaped` checks it at once).
_GORM_UTC = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2} (?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]\.[0-9]{6}\+00:00", re.ASCII
).fullmatch


# `_GORM_UTC`'s shape with every digit a 0: a text of that shape, its digits read as 0, is this.
_GORM_SHAPE = b"0000-00-00 00:00:00.000000+00:00"
_DIGITS_AS_0 = bytes.maketrans(b"123456789", b"000000000")


def _gorm_shaped(values: list[Any]) -> bool:
    """Is every value a text of GORM's UTC shape, its digits ASCII (`_GORM_UTC` but for the
    ranges of the hour, minute and second, which `datetime` checks)? Checked at once, in C: the
    texts' lengths, then their UTF-8 joined, its digits read as 0, against the shape repeated (a
    value that is not a str raises TypeError; a lone surrogate UnicodeEncodeError, a ValueError)."""
    return set(map(len, values)) <= {32} and "".join(values).encode().translate(_DIGITS_AS_0) == _GORM_SHAPE * len(values)


def times_of(values: list[Any]) -> list[int | None]:
    """`fast_time` of each value: where every one is GORM's UTC text (`_gorm_shaped`) of a real
    date and time, all of them read by `datetime` in C (the same nanoseconds: whole microseconds
    since the epoch; an hour, minute or second out of range raises ValueError); otherwise one by one."""
    try:
        if _gorm_shaped(values):
            epoch = _EPOCH  # (a time since it as whole nanoseconds: its days, seconds and microseconds, no division)
            return [((t := d - epoch).days * 86400 + t.seconds) * 1_000_000_000 + t.microseconds * _US for d in map(_dt.datetime.fromisoformat, values)]
    except (TypeError, ValueError):  # (a date or time that is none: month 13, February 30, year 0, hour 24)
        pass
    return list(map(fast_time, values))


def _zone(z: str) -> int | None:
    """A `+HH:MM` zone's offset in seconds, as `parse_time` reads it; None for anything else."""
    if len(z) != 6 or z[0] not in "+-" or z[3] != ":" or not (z[1:3] + z[4:]).isdigit() or not z.isascii():
        return None
    t = parse_time("1970-01-01T00:00:00" + z)
    return None if t is None else -t // 1_000_000_000


@functools.lru_cache(maxsize=1024)
def _epoch_day(y: str, mo: str, d: str) -> int | None:
    """Days from the epoch to a calendar date (a session's events share a few), None for no such date."""
    try:
        return _dt.date(int(y), int(mo), int(d)).toordinal() - _EPOCH_ORDINAL
    except ValueError:
        return None


def _lower(obj: Any) -> dict[str, Any]:
    """An object's keys matched as Go's decoder matches them: case-insensitively (the exact-case
    key wins when two differ only by case; both spellings lower-case the same, so either is read)."""
    if not isinstance(obj, dict):
        return {}
    try:  # from the last key to the first, so the first of two spellings is the one left
        return {k.lower(): v for k, v in reversed(obj.items())}
    except AttributeError:  # a key that is not a string (a dict not from JSON): skipped
        out: dict[str, Any] = {}
        for k, v in obj.items():
            if isinstance(k, str):
                out.setdefault(k.lower(), v)
        return out


_PART_KEYS = {"functioncall": "function_call", "functionresponse": "function_response", "thoughtsignature": "thought_signature"}
_USAGE_KEYS = {
    "prompttokencount": "prompt_token_count",
    "candidatestokencount": "candidates_token_count",
    "cachedcontenttokencount": "cached_content_token_count",
    "thoughtstokencount": "thoughts_token_count",
    "totaltokencount": "total_token_count",
}


def _content(v: Any) -> Any:
    """A genai Content with its parts' keys in ADK's (snake_case) names, for `adk.event_message`."""
    c = _lower(v)
    if not c:
        return v if v is None else {}
    parts = c.get("parts")
    out: dict[str, Any] = {"role": c.get("role")}
    if isinstance(parts, list):
        ps: list[Any] = []
        for p in parts:
            if isinstance(p, dict):
                ps.append({_PART_KEYS.get(k.lower(), k): x for k, x in p.items() if isinstance(k, str)})
            else:
                ps.append(p)
        out["parts"] = ps
    else:
        out["parts"] = parts
    return out


def _usage(v: Any) -> Any:
    if not isinstance(v, dict):
        return v
    return {_USAGE_KEYS.get(k.lower(), k): x for k, x in v.items() if isinstance(k, str)}


# ---------------------------------------------------------------------------------------- events


@dataclass(slots=True)
class Ref:
    invocation_id: str
    ts: int  # ns


@dataclass(slots=True)
class Compaction:
    """`EventCompaction` (session/session.go:287-324): both ends inclusive."""

    start: int | None
    end: int | None
    content: Any  # compactedContent, None when absent
    excluded: list[Ref] = field(default_factory=list)

    @property
    def usable(self) -> bool:  # HasUsableSummary (apply.go:454-456)
        return self.content is not None and self.start is not None and self.end is not None


class GoEvent(msgspec.Struct, gc=False):
    """One session event as adk-go's rules see it (stream position = `index`; `line` = its place in
    the store, the session's row or the export's event, 1-based, which `--at` and diagnostics name).
    A msgspec Struct: built in C (a head per row), never tracked by the cyclic collector."""

    index: int
    rowid: int | None
    id: str | None
    invocation_id: str
    author: str
    branch: str
    scope: str
    ts: int
    obj: dict[str, Any] | None  # ADK-shaped (snake_case) event for adk.event_message; None: read again from `raw`
    long_running: list[str]
    compaction: Compaction | None = None
    transfer_to: str | None = None
    line: int = 0
    # Its content as the rules read it (`_shape` from `obj`, or `adk_go_heads.shape` from a head):
    # the genai role, content at all, call and response ids, a framework call or response in it,
    # every part zero-valued, and its message's index fields (None: it carries no message).
    role: str = ""
    has_content: bool = False
    calls: list[str] = msgspec.field(default_factory=list)
    responses: list[str] = msgspec.field(default_factory=list)
    excluded_call: bool = False
    zero: bool = True
    head: H.Head | None = None
    raw: Any = None  # a head's event: what `_obj` parses again (its row's columns, or its text in the export)
    foreign: str | None = None  # its "For context" text, once made


def _str(v: Any) -> str:
    return v if isinstance(v, str) else ""


def whole(e: GoEvent) -> dict[str, Any]:
    """The event's ADK-shaped object: kept, or parsed again from what its head was decoded from."""
    return e.obj if e.obj is not None else _obj(e.raw)


def _obj(raw: Any) -> dict[str, Any]:
    """A head's event's object, from its row's columns (`_row_head` keeps those it reads) or its text in the export,
    as `make_event` makes it: a head is taken only where the whole parse finds nothing to remove
    or report (tests/test_adk_go_heads.py holds the two equal)."""
    if type(raw) is tuple:
        _, eid, inv, author, _, content, usage, _, rare = raw
        branch, code, message = rare[:3] if rare else (None, None, None)
        o = {"id": eid, "invocationid": inv, "author": author, "branch": branch, "errorcode": code, "errormessage": message}
        if content is not None:
            o["content"] = orjson.loads(content)
        if usage is not None:
            o["usagemetadata"] = orjson.loads(usage)
        return _event_obj(o)
    return _event_obj(_lower(orjson.loads(memoryview(raw))))


def _parts(e: GoEvent) -> list[dict[str, Any]]:
    return adk._parts(whole(e).get("content"))


def calls_of(e: GoEvent) -> list[str]:
    return e.calls


def responses_of(e: GoEvent) -> list[str]:
    return e.responses


def _shape(e: GoEvent) -> None:
    """The content fields of an event read whole, from its object (`adk_go_heads.shape` gives the
    same from a head)."""
    assert e.obj is not None
    c = e.obj.get("content")
    parts = adk._parts(c)
    e.role = _str(c.get("role")) if isinstance(c, dict) else ""
    e.has_content = isinstance(c, dict) and bool(c.get("role")) and bool(c.get("parts"))
    e.calls = [_str(p["function_call"].get("id")) for p in parts if isinstance(p.get("function_call"), dict)]
    e.responses = [_str(p["function_response"].get("id")) for p in parts if isinstance(p.get("function_response"), dict)]
    e.excluded_call = any(
        isinstance(p.get(k), dict) and p[k].get("name") in _EXCLUDED_CALLS for p in parts for k in ("function_call", "function_response")
    )
    e.zero = all(_zero(p) for p in parts)
    got = adk._message_of(e.obj)
    if got is not None:
        m, call_ids, result_id = got
        e.head = (m.role, m.stop_reason, m.source_role or "", call_ids, result_id, tuple(m.tool_result_ids()))


def _compaction(v: Any, where: str, line: int, diags: list[Diagnostic]) -> Compaction | None:
    c = _lower(v)
    if not isinstance(v, dict):
        return None
    start, end = parse_time(c.get("starttimestamp")), parse_time(c.get("endtimestamp"))
    content = c.get("compactedcontent")
    for key, val, got in (("startTimestamp", c.get("starttimestamp"), start), ("endTimestamp", c.get("endtimestamp"), end)):
        if got is None:
            diags.append(Diagnostic(line, "invalid_field", f"{where}: compaction {key} {quote(val)} is not a time; the record covers nothing"))
    refs: list[Ref] = []
    for k, r in enumerate(c.get("excludedevents") or [] if isinstance(c.get("excludedevents"), list) else []):
        rr = _lower(r)
        ts = parse_time(rr.get("timestamp"))
        if ts is None or not isinstance(rr.get("invocationid"), str):
            diags.append(Diagnostic(line, "invalid_field", f"{where}: compaction excludedEvents[{k}] has no invocationId and time; ignored"))
            continue
        refs.append(Ref(rr["invocationid"], ts))
    return Compaction(start, end, _content(content) if isinstance(content, dict) else None, refs)


def _event_obj(o: dict[str, Any]) -> dict[str, Any]:
    """The ADK-shaped object of an event's lower-cased keys (before the field guard)."""
    obj: dict[str, Any] = {
        "id": o.get("id"),
        "invocation_id": o.get("invocationid"),
        "author": o.get("author"),
        "branch": o.get("branch"),
        "content": _content(o.get("content")),
        "usage_metadata": _usage(o.get("usagemetadata")),
        "finish_reason": o.get("finishreason"),
        "error_code": o.get("errorcode"),
        "error_message": o.get("errormessage"),
    }
    return {k: v for k, v in obj.items() if v is not None}


def make_event(
    index: int,
    rowid: int | None,
    src: dict[str, Any],
    where: str,
    diags: list[Diagnostic],
    lowered: bool = False,
) -> GoEvent | None:
    """An event from its Go JSON (export) or its row's decoded columns, keys in any casing
    (`lowered`: `src`'s own keys are already lower-case and distinct, as a row's are)."""
    o = src if lowered else _lower(src)
    line = index + 1
    ts = fast_time(o.get("timestamp"))
    if ts is None:
        diags.append(Diagnostic(line, "malformed_row", f"{where}: timestamp {deep(repr, o.get('timestamp'))} is not a time; event skipped"))
        return None
    obj = _event_obj(o)
    wrong: list[fields.WrongType] = []
    adk.GUARD(obj, "", wrong)  # the shared guard: removes wrong-typed fields
    if wrong:
        diags.extend(fields.line_diagnostics(line, wrong, where))
    acts = _lower(o.get("actions"))
    lr = o.get("longrunningtoolids")
    e = GoEvent(
        index,
        rowid,
        obj.get("id"),
        _str(obj.get("invocation_id")),
        _str(obj.get("author")),
        _str(obj.get("branch")),
        _str(o.get("isolationscope")),
        ts,
        obj,
        [x for x in lr if isinstance(x, str)] if isinstance(lr, list) else [],
        _compaction(acts["compaction"], where, line, diags) if isinstance(acts.get("compaction"), dict) else None,
        acts.get("transfertoagent") if isinstance(acts.get("transfertoagent"), str) and acts.get("transfertoagent") else None,
        line,
    )
    if e.compaction is None and acts.get("compaction") is not None:
        diags.append(Diagnostic(line, "invalid_field", f"{where}: actions.compaction is not an object; ignored"))
    _shape(e)
    return e


# ---------------------------------------------------------------------------------------- Go's rules


def _in_range(e: GoEvent, c: Compaction) -> bool:
    """inRange (apply.go:545-553): inside the inclusive range and not named as a hole."""
    if c.start is None or c.end is None or e.ts < c.start or e.ts > c.end:
        return False
    at = e.ts // _US
    return not any(r.invocation_id == e.invocation_id and r.ts // _US == at for r in c.excluded)


def _names_hole(c: Compaction, ref: Ref) -> bool:  # namesHole (window.go:477-485)
    return any(o.invocation_id == ref.invocation_id and o.ts // _US == ref.ts // _US for o in c.excluded)


def covers_all_of(a: Compaction, b: Compaction) -> bool:
    """coversAllOf (window.go:443-466)."""
    if None in (a.start, a.end, b.start, b.end):
        return False
    assert a.start is not None and a.end is not None and b.start is not None and b.end is not None
    if a.start > b.start or a.end < b.end:
        return False
    return all(_names_hole(b, r) for r in a.excluded if b.start <= r.ts <= b.end)


def subsumed_by(i: int, events: list[GoEvent], records: list[int] | None = None) -> int | None:
    """isCompactionSubsumed (window.go:130-155): the index of a record that subsumes events[i]'s
    (`records`: the indexes of the events that are records, when known)."""
    c = events[i].compaction
    assert c is not None
    for j in range(len(events)) if records is None else records:
        o = events[j].compaction
        if j == i or o is None or not o.usable or not covers_all_of(o, c):
            continue
        assert o.start is not None and o.end is not None and c.start is not None and c.end is not None
        if o.start < c.start or o.end > c.end or len(o.excluded) < len(c.excluded) or j > i:
            return j
    return None


@dataclass(slots=True)
class Sent:
    """One content of the request: an event sent as stored (`event`), a foreign event as its
    "For context" text (`foreign`), a summary (`summary`, seq = its record), or the continuation."""

    kind: str
    seq: int | None
    role: str  # the genai role: user | model
    text: str = ""
    calls: list[str] = field(default_factory=list)
    responses: list[str] = field(default_factory=list)
    ts: int = 0
    invocation_id: str = ""
    reinjected: bool = False
    removed: tuple[str, ...] = ()  # its responses adk-go leaves out: a later one to the same call replaces each


@dataclass(slots=True)
class Request:
    items: list[Sent]
    covered: set[int]  # seqs of raw events a surviving summary stands in for
    surviving: set[int]  # seqs of surviving records
    subsumed: dict[int, int]  # record seq -> the record that subsumes it
    dropped_orphans: list[int]  # response events dropped for want of a call
    error: str | None = None  # adk-go builds no request (an unmatched last response)


def _stringify(v: Any) -> str:
    try:
        return dumps_text(v)
    except TypeError:
        return "null"


def _foreign_text(e: GoEvent) -> str:
    """ConvertForeignEvent's text (contents_processor.go:575-602), made once per event."""
    if e.foreign is None:
        e.foreign = _make_foreign_text(e)
    return e.foreign


def _make_foreign_text(e: GoEvent) -> str:
    lines = ["For context:"]
    for p in _parts(e):
        fc, fr = p.get("function_call"), p.get("function_response")
        if isinstance(p.get("text"), str) and p["text"]:
            lines.append(f"[{e.author}] said: {p['text']}")
        elif isinstance(fc, dict):
            lines.append(f"[{e.author}] called tool `{fc.get('name')}` with parameters: {_stringify(fc.get('args'))}")
        elif isinstance(fr, dict):
            lines.append(f"[{e.author}] `{fr.get('name')}` tool returned result: {_stringify(fr.get('response'))}")
    return "\n".join(lines)


def _zero(p: Any) -> bool:
    return not isinstance(p, dict) or all(v in (None, "", False, 0, {}, []) for v in p.values())


def has_content(e: GoEvent) -> bool:
    return e.has_content


def visible_to(e: GoEvent, branch: str, scope: str) -> bool:
    """The filter of buildContentsDefault (contents_processor.go:100-122), compaction records included."""
    usable = e.compaction is not None and e.compaction.usable
    if not has_content(e) and not usable:
        return False
    if branch and e.branch and e.branch != branch and not branch.startswith(e.branch + "."):
        return False
    return e.scope == scope and not e.excluded_call


def _visible(events: list[GoEvent], branch: str, scope: str) -> set[int]:
    """The indexes of the events `visible_to(e, branch, scope)`, its tests inlined (one pass, no
    call per event)."""
    if branch:
        return {e.index for e in events if visible_to(e, branch, scope)}
    return {
        e.index for e in events
        if (e.has_content or (e.compaction is not None and e.compaction.usable)) and e.scope == scope and not e.excluded_call
    }  # fmt: skip


def build_request(
    events: list[GoEvent], agent: str | None, branch: str, scope: str, visible: set[int] | None = None, ordered: bool = False
) -> Request:
    """What adk-go sends on `agent`'s next model call, built from these events in stream order.
    `visible`: the indexes of the events `visible_to(e, branch, scope)` already found (the ledger
    builds a request per record, over one filter); `ordered`: the events' timestamps do not
    decrease (each record's covered events are then found by bisection, `_stream_ordered`)."""
    return request_upto(flow_of(events, agent, branch, scope, visible), None, events, ordered)


@dataclass(slots=True)
class Flow:
    """What every request of one ledger shares (one per record, each over the events up to it,
    all under one filter and one agent): the visible events in stream order, their indexes and
    timestamps, the positions of the records among them, the foreign events' indexes, and each
    event's item as it is sent raw (`by_event`, made the first time it is)."""

    events: list[GoEvent]
    index: list[int]
    ts: list[int]
    records: list[int]
    foreign: set[int]
    by_event: dict[int, Sent] = field(default_factory=dict)


def flow_of(events: list[GoEvent], agent: str | None, branch: str, scope: str, visible: set[int] | None = None) -> Flow:
    """The filter of buildContentsDefault over `events` (`visible`: the indexes already found)."""
    if visible is None:
        flow = [e for e in events if visible_to(e, branch, scope)]
    elif len(visible) == len(events):  # (every event: an event's index is its own)
        flow = list(events)
    else:
        flow = [e for e in events if e.index in visible]
    authors = set(map(_AUTHOR, flow))  # (most sessions' events are the agent's and the user's: no foreign event to look for)
    foreign = (
        {e.index for e in flow if e.author not in (agent, "user") and e.compaction is None}
        if agent is not None and not authors <= {agent, "user"}
        else set()
    )
    records = [i for i, e in enumerate(flow) if e.compaction is not None]
    return Flow(flow, [e.index for e in flow], [e.ts for e in flow], records, foreign)


_AUTHOR = operator.attrgetter("author")


def request_upto(fl: Flow, upto: int | None, events: list[GoEvent], ordered: bool) -> Request:
    """The request built from the flow's events up to event index `upto` (a record's, for its
    state; None: all of them), as `build_request` builds it from `events[: upto + 1]`."""
    n = len(fl.events) if upto is None else bisect.bisect_right(fl.index, upto)
    flow = fl.events[:n] if n < len(fl.events) else fl.events
    records = fl.records[: bisect.bisect_left(fl.records, n)]
    # substituteSummaries (apply.go:66-134), over the filtered events' positions.
    kept: list[tuple[int, Compaction]] = []
    subsumed: dict[int, int] = {}
    for i in records:
        e = flow[i]
        c = e.compaction
        if c is None or not c.usable:
            continue
        assert c.start is not None and c.end is not None
        if c.end < c.start:
            continue
        j = subsumed_by(i, flow, records)
        if j is not None:
            subsumed[e.index] = flow[j].index
            continue
        kept.append((i, c))

    stream, covered = _stream_ordered(flow, kept, fl.ts, fl.index, records) if ordered else _stream(flow, kept)
    items: list[Sent] = []
    foreign, by_event = fl.foreign, fl.by_event
    for x in stream:
        if isinstance(x, tuple):
            rec, c = x
            assert c.end is not None
            role = _str(_lower(c.content).get("role")) or "model"
            items.append(Sent("summary", rec.index, role, adk._summary_text(c.content), ts=c.end, invocation_id=rec.invocation_id))
            continue
        it = by_event.get(x.index)
        if it is None:  # (the same item in every request that sends the event; no request changes an item)
            if x.index in foreign:
                it = Sent("foreign", x.index, "user", _foreign_text(x), ts=x.ts, invocation_id=x.invocation_id)
            else:
                it = Sent("event", x.index, x.role, "", x.calls, x.responses, x.ts, x.invocation_id)
            by_event[x.index] = it
        items.append(it)
    if kept:
        items = _recover_calls(items, flow, foreign)
    req = Request(items, covered, {flow[i].index for i, _ in kept}, subsumed, [])
    _rearrange(req)
    req.items = [it for it in req.items if it.kind != "event" or not events[it.seq].zero]  # type: ignore[index]
    if req.error is None and req.items and req.items[-1].role != "user":
        req.items.append(Sent("continue", None, "user", CONTINUE_TEXT))
    return req


_Kept = tuple[int, Compaction]  # a surviving record: its flow position, its compaction
_Stream = list[GoEvent | tuple[GoEvent, Compaction]]  # events sent raw, and (record, compaction) for summaries


def _stream(flow: list[GoEvent], kept: list[_Kept]) -> tuple[_Stream, set[int]]:
    """The events sent raw and the summaries at their places (each at the first event its record
    covers, else at the record), and the indexes of the covered events."""

    def covered_by(i: int, k: _Kept) -> bool:
        return i < k[0] and flow[i].compaction is None and _in_range(flow[i], k[1])

    at: dict[int, list[_Kept]] = {}
    for k in kept:
        pos = next((i for i in range(len(flow)) if covered_by(i, k)), k[0])
        at.setdefault(pos, []).append(k)
    stream: _Stream = []
    covered: set[int] = set()
    for i, e in enumerate(flow):
        for k in at.get(i, []):
            stream.append((flow[k[0]], k[1]))
        if e.compaction is not None:
            continue
        if any(covered_by(i, k) for k in kept):
            covered.add(e.index)
            continue
        stream.append(e)
    return stream, covered


def _stream_ordered(
    flow: list[GoEvent], kept: list[_Kept], ts: list[int] | None = None, idx: list[int] | None = None, records: list[int] | None = None
) -> tuple[_Stream, set[int]]:
    """`_stream` where the flow's timestamps do not decrease: a record covers the positions its
    range spans by bisection (before its own), but records and its holes; the stream is then
    walked by runs, so a request costs what it sends, not every event before it. `ts`, `idx`,
    `records`: the flow's timestamps, event indexes and record positions, when known (they may
    run past the flow: a request up to a record reads the whole flow's)."""
    n = len(flow)
    ts = [e.ts for e in flow] if ts is None else ts
    records = [i for i, e in enumerate(flow) if e.compaction is not None] if records is None else records
    cov = bytearray(n)
    at: dict[int, list[_Kept]] = {}
    for k in kept:
        kp, c = k
        assert c.start is not None and c.end is not None
        lo, hi = bisect.bisect_left(ts, c.start, 0, kp), bisect.bisect_right(ts, c.end, 0, kp)
        skip = set(records[bisect.bisect_left(records, lo) : bisect.bisect_left(records, hi)])
        for r in c.excluded:  # a hole by record: the events of that invocation in that microsecond
            q = r.ts // _US
            a, b = bisect.bisect_left(ts, q * _US, lo, hi), bisect.bisect_left(ts, (q + 1) * _US, lo, hi)
            skip.update(i for i in range(a, b) if flow[i].invocation_id == r.invocation_id)
        first = -1
        start = lo
        for stop in [*sorted(skip), hi]:
            if stop > start:
                cov[start:stop] = b"\x01" * (stop - start)
                first = start if first < 0 else first
            start = stop + 1
        at.setdefault(first if first >= 0 else kp, []).append(k)
    places = sorted(at)
    idx = [e.index for e in flow] if idx is None else idx
    stream: _Stream = []
    covered: set[int] = set()
    i = 0
    while i < n:
        j = cov.find(1, i)
        j = n if j < 0 else j
        for p in range(i, j):  # nothing covered: summaries placed here, then the event unless a record
            for k in at.get(p, ()):
                stream.append((flow[k[0]], k[1]))
            if flow[p].compaction is None:
                stream.append(flow[p])
        if j == n:
            break
        r = cov.find(0, j)
        r = n if r < 0 else r
        for p in places[bisect.bisect_left(places, j) : bisect.bisect_left(places, r)]:
            stream.extend((flow[k[0]], k[1]) for k in at[p])
        covered.update(idx[j:r])
        i = r
    return stream, covered


def _recover_calls(items: list[Sent], flow: list[GoEvent], foreign: set[int]) -> list[Sent]:
    """recoverCompactedFunctionCalls (apply.go:208-291)."""
    present_calls = {c for it in items for c in it.calls}
    present_resps = {r for it in items for r in it.responses}
    orphaned = {r for r in present_resps if r not in present_calls and r}
    if not orphaned:
        return items
    call_event: dict[str, GoEvent] = {}
    for e in flow:
        for c in calls_of(e):
            if c in orphaned and c not in call_event and c in e.long_running:
                call_event[c] = e
    if not call_event:
        return items
    final: dict[str, GoEvent] = {}
    for e in flow:
        for r in responses_of(e):
            if r not in final or e.ts >= final[r].ts:
                final[r] = e

    def sent(e: GoEvent) -> Sent:
        if e.index in foreign:
            return Sent("foreign", e.index, "user", _foreign_text(e), ts=e.ts, invocation_id=e.invocation_id, reinjected=True)
        return Sent("event", e.index, e.role, calls=e.calls, responses=e.responses, ts=e.ts, invocation_id=e.invocation_id, reinjected=True)

    out: list[Sent] = []
    done: set[str] = set()
    for it in items:
        for r in it.responses:
            ce = call_event.get(r)
            if ce is None or r in done:
                continue
            out.append(sent(ce))
            sibs: list[GoEvent] = []
            for c in calls_of(ce):
                done.add(c)
                if c in present_resps:
                    continue
                s = final.get(c)
                if s is not None and s not in sibs:
                    sibs.append(s)
            out.extend(sent(s) for s in sibs)
        out.append(it)
    return out


def _rearrange(req: Request) -> None:
    """rearrangeEventsForLatestFunctionResponse, then ...InHistory (contents_processor.go:241-457)."""
    ev = req.items
    if len(ev) >= 2 and ev[-1].responses:
        ids = set(ev[-1].responses)
        if not any(c in ids for c in ev[-2].calls):
            idx = next((i for i in range(len(ev) - 2, -1, -1) if any(c in ids for c in ev[i].calls)), -1)
            if idx == -1:
                req.error = f"no function call event found for function responses ids: {sorted(ids)}"
                return
            all_ids = set(ev[idx].calls)
            if not ids <= all_ids:
                req.error = "validation failed: last response event has IDs not in the matching call event"
                return
            result = ev[: idx + 1]
            merge: list[Sent] = []
            for it in ev[idx + 1 : -1]:
                if it.calls:
                    result.append(it)
                elif it.responses:
                    (merge if any(r in all_ids for r in it.responses) else result).append(it)
            ev = [*result, *merge, ev[-1]]
    if len(ev) < 2:
        req.items = ev
        return
    resp_at: dict[str, int] = {}
    for i, it in enumerate(ev):
        for r in it.responses:
            resp_at[r] = i
    out: list[Sent] = []
    placed: set[int] = set()
    for it in ev:
        if it.responses:
            continue
        out.append(it)
        if not it.calls:
            continue
        at = sorted({resp_at[c] for c in it.calls if c in resp_at})
        placed.update(at)
        out += _merged([ev[i] for i in at], resp_at, at) if len(at) > 1 else [ev[i] for i in at]
    req.dropped_orphans = [it.seq for i, it in enumerate(ev) if it.responses and i not in placed and it.seq is not None]
    req.items = out


def _merged(group: list[Sent], resp_at: dict[str, int], at: list[int]) -> list[Sent]:
    """The response events of one call event as adk-go merges them into one content
    (mergeFunctionResponseEvents, contents_processor.go:458-534): the first one's parts, each
    response of a later one replacing the part of the same call in place, else appended. As items:
    each event less the responses a later one of them replaces (`Sent.removed`; one left with
    none is not sent), in the order their parts come in the merged content."""
    slot: dict[str, int] = {}
    for it in group:
        for r in it.responses:
            slot.setdefault(r, len(slot))
    mine = set(at)
    keyed: list[tuple[int, int, Sent]] = []
    for k, (i, it) in enumerate(zip(at, group, strict=True)):
        gone = tuple(r for r in it.responses if resp_at.get(r, i) != i and resp_at[r] in mine)
        kept = [r for r in it.responses if r not in gone]
        if not kept:
            continue
        keyed.append((min(slot[r] for r in kept), k, dataclasses.replace(it, removed=gone) if gone else it))
    return [it for _, _, it in sorted(keyed, key=operator.itemgetter(0, 1))]


def next_agent(events: list[GoEvent]) -> tuple[str | None, str, str, str]:
    """(agent, branch, isolation scope, why): the agent of the latest non-user event, or the one a
    later `transferToAgent` names; its branch and scope are those of its latest event."""
    agent, why = None, "no agent has spoken yet"
    for e in reversed(events):
        if e.compaction is not None:
            continue
        if e.transfer_to:
            agent, why = e.transfer_to, f"event {e.line} transfers to it"
            break
        if e.author and e.author != "user":
            agent, why = e.author, f"event {e.line} is its latest"
            break
    own = [e for e in events if agent is not None and e.author == agent and e.compaction is None]
    last = own[-1] if own else None
    return agent, last.branch if last else "", last.scope if last else "", why


# ---------------------------------------------------------------------------------------- reading


def load(path: str, selector: str | None, upto: int | None, *, digest: bool = True) -> Ledger:
    """An adk-go SQLite store (`FILE.db#SESSION_ID` selects a session) or JSON export. `digest=False`:
    the rows' digest a repair compares (`store_state`) is not taken (a command that writes nothing)."""
    try:
        with open(path, "rb") as f:
            head = f.read(len(sqlite_files.SQLITE_MAGIC))
            if head != sqlite_files.SQLITE_MAGIC:
                return load_json(head + f.read(), path, upto)
    except OSError as e:
        raise LoadError(f"{path}: cannot open ({e.strerror})") from None
    notes: list[Diagnostic] = []
    # The shared read-only opener: a -wal's commits are read from a private copy, nothing changes.
    with sqlite_files.read_only(path, path, notes) as con:
        led = _load_sqlite(con, path, selector, upto, digest)
    led.diagnostics[:0] = notes
    return led


_JSON_COLUMNS = (
    ("content", "content"),
    ("usage_metadata", "usagemetadata"),
    ("long_running_tool_ids_json", "longrunningtoolids"),
)


def _row_event(n: int, row: dict[str, Any], name: str, diags: list[Diagnostic]) -> GoEvent | None:
    """createEventFromStorageEvent (storage_session.go:245-363), from one row's columns."""
    where = f"{name}: row {n} (rowid {row.get('rowid')}, event {row.get('id')!r})"
    # The keys as `make_event` reads them (lower-case: a row's columns need no casing pass).
    src: dict[str, Any] = {k: row.get(k) for k in ("id", "author", "branch", "timestamp")}
    src["invocationid"] = row.get("invocation_id")
    src["isolationscope"] = row.get("isolation_scope")
    src["errorcode"], src["errormessage"] = row.get("error_code"), row.get("error_message")
    for col, key in _JSON_COLUMNS:
        v = row.get(col)
        if v is None:
            continue
        try:
            src[key] = orjson.loads(v)
        except (orjson.JSONDecodeError, TypeError):
            diags.append(Diagnostic(n, "malformed_row", f"{where}: {col} is not valid JSON; read without it", recovered="the rest of the event"))
    blob = row.get("actions")
    if blob is not None:
        raw = bytes(blob) if isinstance(blob, bytes | memoryview) else str(blob).encode("utf-8", "replace")
        try:
            src["actions"] = orjson.loads(raw)
        except orjson.JSONDecodeError:
            what = "a pickle (adk-python's), not adk-go's JSON" if raw[:1] == b"\x80" else "not valid JSON"
            diags.append(Diagnostic(n, "malformed_row", f"{where}: actions is {what}; read without it (a compaction in it would be missed)", recovered="the rest of the event"))
    return make_event(n - 1, row.get("rowid"), src, where, diags, lowered=True)


def _load_sqlite(con: sqlite3.Connection, name: str, selector: str | None, upto: int | None, digest: bool = True) -> Ledger:
    events, meta, diags = sqlite_events(con, name, selector, upto)
    led = build(events, name, meta, diags)
    if digest:  # (a second read of every row: a third of the load of a 100 MB store)
        led.store_state = _digest(con, (meta["app_name"], meta["user_id"], meta["session_id"]))
    return led


def _digest(con: sqlite3.Connection, key: tuple[Any, Any, Any]) -> str | None:
    """The digest a repair compares before it writes (inspector.store.dbwrite, the ADK writer's);
    None where the rows do not read whole (a damaged store: nothing is written)."""
    try:
        return adk_writer.state_of(con, *key)
    except sqlite_files.ERRORS:
        return None


def sqlite_events(
    con: sqlite3.Connection, name: str, selector: str | None, upto: int | None
) -> tuple[list[GoEvent], dict[str, Any], list[Diagnostic]]:
    """The chosen session's events in stream order, its meta and what reading them found."""
    cols = _event_columns(con, name)
    diags: list[Diagnostic] = []
    app, user, sid, upd = _choose_session(con, name, selector, diags)
    events = _head_events(con, cols, (app, user, sid), name, upto, diags)
    if events is None:
        events = []
        key = (app, user, sid)
        # (a table without its timestamp column: the service's own query fails on it, and so does this load)
        rows = _whole_rows(con, key, cols.index("timestamp") + 1, name, diags) if "timestamp" in cols else _stream_rows(con, key)
        names = ["rowid", *cols]
        for n, row in enumerate(rows, start=1):
            if upto is not None and n > upto:
                break
            e = _row_event(n, dict(zip(names, row, strict=False)), name, diags)
            if e is not None:
                e.index = len(events)
                events.append(e)
    meta = {"app_name": app, "user_id": user, "session_id": sid, "update_time": upd, "storage": "sqlite"}
    return events, meta, diags


# The columns a head reads (the JSON ones as stored, bytes), kept to read the row whole again
# (`_obj`: the columns of the event's object).
_HEAD_COLUMNS = (
    "id", "invocation_id", "author", "branch", "timestamp", "error_code", "error_message", "content", "usage_metadata",
    "isolation_scope", "actions", "long_running_tool_ids_json",
)  # fmt: skip
# A head row: its rowid, id, invocation id, author, timestamp, content, usage and actions, then
# whether any of the columns most rows leave NULL (`_RARE_SQL`'s) holds a value (NULL: none does;
# else the first that does, as bytes, never decoded; cheaper for SQLite than five tests): those
# are fetched for that row alone (each column fetched costs every row a call into SQLite).
_HEAD_SQL = (
    "SELECT rowid, id, invocation_id, author, timestamp, CAST(content AS BLOB), CAST(usage_metadata AS BLOB), "
    "CAST(actions AS BLOB), CAST(coalesce(branch, error_code, error_message, isolation_scope, long_running_tool_ids_json) AS BLOB) "
    "FROM events WHERE app_name=? AND user_id=? AND session_id=?"
)
_RARE_SQL = (
    "SELECT rowid, branch, error_code, error_message, isolation_scope, CAST(long_running_tool_ids_json AS BLOB) "
    "FROM events WHERE app_name=? AND user_id=? AND session_id=? AND (branch IS NOT NULL OR error_code IS NOT NULL "
    "OR error_message IS NOT NULL OR isolation_scope IS NOT NULL OR long_running_tool_ids_json IS NOT NULL)"
)
_HEAD_RARE = itemgetter(8)  # a head row's flag (None: no rare column set), then the rare columns' values where it is set


def _head_row(rowid: int, values: tuple[Any, ...]) -> tuple[Any, ...]:
    """A head row (`_HEAD_SQL`'s, its rare columns filled in) from `_HEAD_COLUMNS`' values."""
    eid, inv, author, branch, ts, code, message, content, usage, scope, actions, lr = values
    rare = (branch, code, message, scope, lr)
    return (rowid, eid, inv, author, ts, content, usage, actions, rare if rare != (None,) * 5 else 0)


def _head_events(
    con: sqlite3.Connection, cols: list[str], key: tuple[Any, Any, Any], name: str, upto: int | None, diags: list[Diagnostic]
) -> list[GoEvent] | None:
    """The session's events, a head per row where one can be taken (`_row_head`), the row read whole
    otherwise; None when the store cannot be read so (another layout, a text that is not UTF-8):
    the caller then reads every row whole. The stream order is the service's (ORDER BY timestamp
    DESC, reversed): sorted here where no two timestamps tie (`_by_text_time`), else from
    SQLite's sort of the keys alone: SQLite's sorter keeps ties in scan order whatever else a row
    holds, so the rows come back in the order of `SELECT *` (checked on a 100 MB store with 634
    tied groups)."""
    if not set(_HEAD_COLUMNS) <= set(cols):
        return None
    where = "app_name=? AND user_id=? AND session_id=?"
    lenient = con.text_factory
    con.text_factory = str  # decoded by SQLite (an invalid text raises: the rows are then read leniently)
    # Every row read to its last column, as the service's `SELECT *` reads it (at no cost measured:
    # the row is visited anyway): a row damaged past the head's columns fails here, and the store
    # is read whole (`_whole_rows`: the rows before the damage, and where it is).
    whole_rows = f" AND typeof({sqlite_files.quoted(cols[-1])}) != ''"
    try:
        rows = con.execute(_HEAD_SQL + whole_rows, key).fetchall()
        if operator.countOf(map(_HEAD_RARE, rows), None) != len(rows):
            rare = {r[0]: r[1:] for r in con.execute(_RARE_SQL, key)}  # (one query for every flagged row)
            rows = [(*r[:8], rare.get(r[0])) if r[8] is not None else r for r in rows]
        ordered = _by_text_time(rows)
        if ordered is None:
            by_rowid = {r[0]: r for r in rows}
            sql = f"SELECT rowid FROM events WHERE {where} ORDER BY timestamp DESC"
            ordered = [by_rowid[r[0]] for r in con.execute(sql, key)]
            ordered.reverse()
    except sqlite_files.ERRORS:
        return None
    finally:
        con.text_factory = lenient
    del rows
    if upto is not None:
        del ordered[upto:]
    names = ["rowid", *cols]
    times = times_of(list(map(_HEAD_TIME, ordered)))  # (every row's `fast_time`, at once)
    # A head per row (its index its place); then each row without one read whole, in order.
    heads = [_row_head(n, row, ts) for n, row, ts in zip(range(1, len(ordered) + 1), ordered, times, strict=True)]
    dropped = False
    said = len(diags)
    for i in list(itertools.compress(range(len(heads)), map(operator.is_, heads, itertools.repeat(None)))):
        try:
            whole = con.execute("SELECT rowid, * FROM events WHERE rowid=?", (ordered[i][0],)).fetchone()
        except sqlite_files.ERRORS:
            whole = None
        if whole is None:  # (a damaged table: the row its scan met is not where its rowid leads)
            del diags[said:]
            return None  # (the store read whole says where the damage is)
        heads[i] = e = _row_event(i + 1, dict(zip(names, whole, strict=False)), name, diags)  # (its index: i)
        dropped = dropped or e is None
    if not dropped:
        return heads  # type: ignore[return-value]  (no None left)
    events = [e for e in heads if e is not None]
    for k, e in enumerate(events):
        e.index = k
    return events


_HEAD_TIME = itemgetter(4)  # a head row's timestamp column


def _by_text_time(rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]] | None:
    """The rows in the service's order (ORDER BY timestamp DESC, reversed), sorted here when every
    timestamp is a text and no two are the same text: SQLite compares texts of this column by
    their bytes (BINARY, the column declares no collation), which is the order of Python's str
    comparison (UTF-8 keeps code point order), and without a tie the order is the one order
    whatever the sort. None otherwise (a tie: SQLite's sorter decides it; another type: SQLite's
    order across types), and SQLite sorts them."""
    times = list(map(_HEAD_TIME, rows))
    if not set(map(type, times)) <= {str} or len(set(times)) != len(times):
        return None
    ordered = sorted(rows, key=_HEAD_TIME)
    return ordered


_STR_OR_NONE = frozenset({str, type(None)})


_CONTENT = H.CONTENT.decode
_EVENT = H.EVENT.decode
_UNREAD: Any = object()  # (`_row_head`'s time not read yet)


def _row_head(n: int, row: tuple[Any, ...], ts: Any = _UNREAD) -> GoEvent | None:
    """A row's event from its head, or None when it must be read whole (`adk_go_heads`); `ts`:
    its timestamp's `fast_time`, when read already (`times_of`)."""
    rowid, eid, inv, author, ts_text, content, usage, actions, rare = row
    sn = _STR_OR_NONE
    if rare:
        branch, code, message, scope, lr = rare
        if not (type(branch) in sn and type(message) in sn):
            return None
    else:
        branch = code = message = scope = lr = None
    if not (type(eid) in sn and type(inv) in sn and type(author) in sn):
        return None
    if ts is _UNREAD:
        ts = fast_time(ts_text)
    if ts is None:
        return None
    transfer = None
    try:
        c = None
        if content is not None:  # (its UTF-8 checked by the decode: every string in it is decoded, none skipped)
            try:  # (`adk_go_heads.content`, inline)
                c = _CONTENT(content)
            except H.INVALID:
                c = H.nested_checked(H.NESTED.decode(content))
        if usage is not None:
            if not (usage.isascii() or H.utf8_ok(usage)):
                return None
            total = H.USAGE.decode(usage).totalTokenCount
            if total is not H.UNSET and not ((b := bytes(total)).isdigit() and len(b) < 19) and not H.raw_ok(total):
                return None  # (digits alone, an integer below 2**63, `raw_ok` without the call)
        if actions is not None:
            got = _ACTIONS.get(actions, False)  # (`_cached_actions`, its lookup inline)
            if got is False:
                got = _cached_actions(actions)
            if got is None:
                return None
            transfer = got[0]
        if lr is None:
            ids = H.NONE
        elif H.utf8_ok(lr):
            ids = H.IDS.decode(lr) or H.NONE
        else:
            return None
    except H.ERRORS:
        return None
    au = intern(author) if author else ""
    # (the shape unpacked here, not spread into the call: a call of spread arguments builds them a tuple first)
    role, has_content, calls, responses, excluded, zero, head = H.shape(c, au, bool(code), None, _EXCLUDED_CALLS, _finish)
    return GoEvent(n - 1, rowid, eid, intern(inv) if inv else "", au, branch or "", scope if type(scope) is str else "", ts, None, ids, None, transfer, n,
                   role, has_content, calls, responses, excluded, zero, head, row)  # fmt: skip


# An `actions` column as its head reads it, by its bytes (a session's rows repeat a few): (the
# agent it transfers to,), or None when the row must be read whole.
_ACTIONS: dict[bytes, tuple[str | None] | None] = {}


def _cached_actions(b: bytes) -> tuple[str | None] | None:
    """`_actions`, remembered for up to 256 distinct columns."""
    got = _ACTIONS.get(b, False)
    if got is False:
        got = _actions(b)
        if len(_ACTIONS) < 256:
            _ACTIONS[b] = got
    return got


def _actions(b: bytes) -> tuple[str | None] | None:
    if not H.utf8_ok(b):
        return None
    try:
        a = H.ACTIONS.decode(b)
    except H.ERRORS:
        return None
    return (H.transfer(a),) if H.actions_ok(a) else None


_finish = adk_heads.finish_stop


def _event_columns(con: sqlite3.Connection, name: str) -> list[str]:
    """The events table's columns, or why this is not an adk-go store."""
    tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    cols = [r[1] for r in con.execute("PRAGMA table_info(events)")] if "events" in tables else []
    if not is_go_store(tables, set(cols)):
        raise LoadError(f"{name}: a SQLite database, but not an adk-go session store (needs sessions/events/app_states/user_states and adk-go's events columns)")
    return cols


def _whole_rows(con: sqlite3.Connection, key: tuple[Any, Any, Any], at_ts: int, name: str, diags: list[Diagnostic]) -> list[Any]:
    """`_stream_rows`, every column; if the database is damaged on the way (where the service's own
    query fails too), the rows a scan in table order reads before the damage, in the same order,
    and a diagnostic (`adk.fetch_rows`). `at_ts`: where a row's timestamp is."""
    where = "app_name=? AND user_id=? AND session_id=?"
    ordered, scan = f"SELECT rowid, * FROM events WHERE {where} ORDER BY timestamp DESC", f"SELECT rowid, * FROM events WHERE {where}"
    rows = adk.fetch_rows(con, ordered, scan, key, lambda r: -(parse_time(r[at_ts]) or 0.0), name, diags)
    rows.reverse()
    return rows


def _stream_rows(con: sqlite3.Connection, key: tuple[Any, Any, Any], after: int | None = None) -> list[Any]:
    """The session's rows in stream order, by the service's own query: ORDER BY timestamp DESC,
    then reversed (service.go:174-214); `after`: only those with a higher rowid."""
    where, args = "app_name=? AND user_id=? AND session_id=?", list(key)
    if after is not None:
        where += " AND rowid>?"
        args.append(after)
    rows = con.execute(f"SELECT rowid, * FROM events WHERE {where} ORDER BY timestamp DESC", args).fetchall()
    rows.reverse()
    return rows


def _choose_session(con: sqlite3.Connection, name: str, selector: str | None, diags: list[Diagnostic]) -> tuple[Any, Any, Any, Any]:
    """(app, user, session id, update_time) of the session read: the selected one, else the most
    recently updated; a store of several says which (a `session_choice` note)."""
    sessions = con.execute("SELECT app_name, user_id, id, update_time FROM sessions").fetchall()
    if not sessions:
        raise LoadError(f"{name}: row 1: the store holds no session")
    keyed = sorted(sessions, key=lambda s: (parse_time(s[3]) or 0, str(s[2])))
    if selector is not None:
        pick = [s for s in keyed if s[2] == selector]
        if not pick:
            raise LoadError(f"{name}: no session {selector!r} in this store (sessions: {', '.join(str(s[2]) for s in keyed[-10:])})")
        chosen, why = pick[-1], "named in the path"
    else:
        chosen, why = keyed[-1], "the most recently updated"
    if len(sessions) > 1 or selector is not None:
        others = [str(s[2]) for s in reversed(keyed) if s is not chosen]
        diags.append(
            Diagnostic(
                0,
                "session_choice",
                f"{name}: {len(sessions)} session{'s' if len(sessions) != 1 else ''} in this store; reading {chosen[2]!r} "
                f"(app {chosen[0]!r}, user {chosen[1]!r}), {why}"
                + (f"; others: {', '.join(others[:10])} (pick one with FILE#SESSION_ID)" if others else ""),
                severity="info",
            )
        )
    app, user, sid, upd = chosen
    return app, user, sid, upd


# ---------------------------------------------------------------------------------------- following


@dataclass(frozen=True, slots=True)
class GoTail:
    """Where the last read of one session's rows ended: the highest rowid read, how many rows of
    the session lay up to it, the greatest timestamp read (as stored: the stream sorts on it),
    and the events read, in stream order (the ledger is built across all of them)."""

    key: tuple[Any, Any, Any]
    last_rowid: int
    count: int
    last_ts: Any
    events: list[GoEvent]


def follow(path: str, selector: str | None, led: Ledger, tail: GoTail | None) -> StoreGrowth:
    """The rows one session of an adk-go store gained past `led` (Format.follow): those with a
    rowid above the last read one, parsed alone; the ledger is then built again from the events
    (`build`: which agent speaks next decides what every earlier event's visibility and the
    request are), so the report is analysed again in full (`notes_changed`). Read again in full,
    with the reason, when a row read before went (fewer rows up to the last read rowid) or the
    last one in the stream was rewritten, another session is now the most recently updated, a
    new row sorts at or before the last read one (its timestamp), or a row has a diagnostic. A
    row before the last one rewritten in place is not seen until the next full read."""
    if (led.header or {}).get("storage") != "sqlite":
        return StoreGrowth(None, tail, reload="a JSON export is rewritten whole, not appended to")
    notes: list[Diagnostic] = []
    with sqlite_files.read_only(path, path, notes) as con:
        cols = _event_columns(con, path)
        choice: list[Diagnostic] = []
        app, user, sid, upd = _choose_session(con, path, selector, choice)
        key = (app, user, sid)
        if tail is None:
            tail, why = _tail_of(con, path, cols, led, key)
            if tail is None:
                return StoreGrowth(None, tail, reload=why)
        if key != tail.key:
            return StoreGrowth(None, tail, reload=f"session {sid!r} is now the one read, was {tail.key[2]!r}")
        return _grown(con, path, cols, led, tail, notes, choice, upd)


def _tail_of(
    con: sqlite3.Connection, name: str, cols: list[str], led: Ledger, key: tuple[Any, Any, Any]
) -> tuple[GoTail | None, str]:
    """The tail of a ledger just read in full: its events parsed again from the rows it was read
    from (the first ones of the stream, by event id), or None and why not."""
    hdr = led.header or {}
    if (hdr.get("app_name"), hdr.get("user_id"), hdr.get("session_id")) != key:
        return None, f"session {key[2]!r} is now the one read"
    rows = _stream_rows(con, key)[: len(led.records)]
    diags: list[Diagnostic] = []
    events = _parsed(rows, cols, name, 1, diags)
    if diags or any(d.problem == "malformed_row" for d in led.diagnostics):
        return None, "a row of the session could not be read whole: every read is a full one"
    if [e.id for e in events] != [r.id for r in led.records]:
        return None, "the store changed while it was read"
    if not rows:
        return GoTail(key, 0, 0, None, []), ""
    last_ts = max((r[1 + cols.index("timestamp")] for r in rows), key=sqlite_files.sort_key)
    return GoTail(key, max(r[0] for r in rows), len(rows), last_ts, events), ""


def _parsed(rows: list[Any], cols: list[str], name: str, first: int, diags: list[Diagnostic]) -> list[GoEvent]:
    names = ["rowid", *cols]
    out: list[GoEvent] = []
    for n, row in enumerate(rows, start=first):
        e = _row_event(n, dict(zip(names, row, strict=False)), name, diags)
        if e is not None:
            out.append(e)
    return out


def _differs(a: Any, b: Any) -> bool:
    """`a != b` for two parsed events, however deep their values nest (compared with room to
    recurse, as they were parsed; past even that, taken as changed: the follow reads in full)."""
    try:
        return deep(operator.ne, a, b)
    except RecursionError:
        return True


def _grown(
    con: sqlite3.Connection,
    name: str,
    cols: list[str],
    led: Ledger,
    tail: GoTail,
    notes: list[Diagnostic],
    choice: list[Diagnostic],
    upd: Any,
) -> StoreGrowth:
    count, top = con.execute(
        "SELECT count(*), max(rowid) FROM events WHERE app_name=? AND user_id=? AND session_id=? AND rowid<=?",
        (*tail.key, tail.last_rowid),
    ).fetchone()
    if count != tail.count or (top or 0) != tail.last_rowid:
        return StoreGrowth(
            None, tail, reload=f"a row read before changed or went ({count:,} rows up to rowid {tail.last_rowid}, were {tail.count:,})"
        )
    if tail.events:
        last = tail.events[-1]
        row = con.execute("SELECT rowid, * FROM events WHERE rowid=?", (last.rowid,)).fetchone()
        again = _parsed([row], cols, name, last.line, []) if row is not None else []
        if not again or _differs(again[0].obj, last.obj) or again[0].ts != last.ts:
            return StoreGrowth(None, tail, reload=f"the last event read (rowid {last.rowid}) was rewritten")
    rows = _stream_rows(con, tail.key, after=tail.last_rowid)
    ts_at = 1 + cols.index("timestamp")
    last_ts = sqlite_files.sort_key(tail.last_ts)
    if tail.events and any(not sqlite_files.sort_key(r[ts_at]) > last_ts for r in rows):
        return StoreGrowth(None, tail, reload="a new row sorts at or before the last event read (its timestamp)")
    hdr = led.header or {}
    store_notes = [d.message for d in led.diagnostics[: sqlite_files.leading_notes(led.diagnostics)]]
    if not rows and upd == hdr.get("update_time") and [d.message for d in (*notes, *choice)] == store_notes:
        return StoreGrowth(None, tail)
    diags: list[Diagnostic] = []
    new = _parsed(rows, cols, name, tail.count + 1, diags)
    if diags:
        return StoreGrowth(None, tail, reload=f"a new row needs a full read ({diags[0].problem})")
    events = [*tail.events, *new]
    for i, e in enumerate(new, start=len(tail.events)):
        e.index = i
    meta = {"app_name": tail.key[0], "user_id": tail.key[1], "session_id": tail.key[2], "update_time": upd, "storage": "sqlite"}
    grown = build(events, name, meta, list(choice))  # as `load`: the choice, then what the build finds
    grown.store_state = _digest(con, tail.key) if led.store_state is not None else None  # (digested where the load was)
    grown.diagnostics[:0] = notes  # ... after the store's own notes
    if rows:
        top_ts = max((r[ts_at] for r in rows), key=sqlite_files.sort_key)
        tail = GoTail(tail.key, max(tail.last_rowid, *(r[0] for r in rows)), tail.count + len(rows), top_ts, events)
    return StoreGrowth(grown, tail, added=len(new), notes_changed=True)


def load_json(data: bytes, name: str, upto: int | None) -> Ledger:
    """The JSON export: a list of `session.Event`s, or an object with an `events` list."""
    data = data.removeprefix(b"\xef\xbb\xbf")
    if upto is None:
        led = _load_json_heads(data, name)
        if led is not None:
            return led
    try:
        obj = orjson.loads(data)
    except orjson.JSONDecodeError as e:
        raise LoadError(f"{name}: line {e.lineno}, column {e.colno}: not valid JSON; an adk-go export is one JSON value") from None
    meta: dict[str, Any] = {"storage": "json"}
    if isinstance(obj, dict):
        low = _lower(obj)
        if isinstance(low.get("events"), list):
            meta.update(app_name=low.get("appname"), user_id=low.get("userid"), session_id=low.get("id"))
            obj = low["events"]
        elif "invocationid" in low:
            obj = [obj]
    if not isinstance(obj, list):
        raise LoadError(f"{name}: line 1: a JSON value, but not an adk-go export (no list of events)")
    diags: list[Diagnostic] = []
    events: list[GoEvent] = []
    kept = obj[:upto] if upto is not None else obj
    lines: list[str] = []
    for i, o in enumerate(kept):
        lines = _export_event(i, o, events, data, len(kept), name, diags, lines)
    return build(events, name, meta, diags)


def _export_event(
    i: int, o: Any, events: list[GoEvent], data: bytes, count: int, name: str, diags: list[Diagnostic], lines: list[str]
) -> list[str]:
    """The export's event `i` read whole into `events`. Diagnostics name the event by its place in
    the export and the line it starts on; where each event starts (`lines`, returned) is found only
    once an event has a diagnostic (a second parse of the document)."""
    mark = len(diags)
    where = f"{name}: event {i + 1} (\0)"
    if not isinstance(o, dict):
        diags.append(Diagnostic(i + 1, "malformed_event", f"{where}: not a JSON object ({type(o).__name__}); skipped"))
    else:
        e = make_event(i, None, o, where, diags)
        if e is not None:
            e.index = len(events)
            events.append(e)
    if len(diags) > mark:
        lines = lines or adk.event_lines(data, count)
        _name_place(diags[mark:], where, f"{name}: event {i + 1} ({lines[i]})")
    return lines


def _load_json_heads(data: bytes, name: str) -> Ledger | None:
    """A bare list of events (adk-go's export), each event from its head where one can be taken
    (`_export_head`), read whole otherwise; None when the document is not such a list, or not one
    orjson reads (the whole parse then says why)."""
    start = len(data) - len(data.lstrip(b" \t\r\n")) if data[:1].isspace() else 0
    if data[start : start + 1] != b"[":
        return None
    try:
        raws = H.LIST.decode(data)
    except H.ERRORS:
        return None
    diags: list[Diagnostic] = []
    events: list[GoEvent] = []
    lines: list[str] = []
    for i, r in enumerate(raws):
        e = _export_head(i, r)
        if e is not None:
            e.index = len(events)
            events.append(e)
            continue
        try:
            o = orjson.loads(memoryview(r))
        except orjson.JSONDecodeError:
            return None
        lines = _export_event(i, o, events, data, len(raws), name, diags, lines)
    return build(events, name, {"storage": "json"}, diags)


def _export_head(i: int, r: Any) -> GoEvent | None:
    """An export's event from its head, or None when it must be read whole (`adk_go_heads`)."""
    b = bytes(r)
    if not (b.isascii() or H.utf8_ok(b)):
        return None
    try:
        try:  # (`adk_go_heads.event`, inline)
            h = _EVENT(b)
        except H.INVALID:
            h = H.event(b)
    except H.ERRORS:
        return None
    ts = fast_time(h.timestamp)
    if ts is None:
        return None
    u, a, code = h.usageMetadata, h.actions, h.errorCode
    if u is not None and not H.raw_ok(u.totalTokenCount):
        return None
    transfer = None
    if a is not H.UNSET and (ab := bytes(a)) != b"null":  # (by its bytes, as a row's `actions`: a session repeats a few)
        got = _cached_actions(ab)
        if got is None:
            return None
        transfer = got[0]
    unset = H.UNSET
    p, t, x = h.partial, h.turnComplete, h.interrupted
    if not ((p is unset or H.raw_ok(p)) and (t is unset or H.raw_ok(t)) and (x is unset or H.raw_ok(x))):
        return None
    if code is not H.UNSET and bytes(code) not in H.FALSY:
        return None  # (an error code other than null, false, 0 or "": read whole)
    author = intern(h.author) if h.author else ""
    inv = h.invocationId
    return GoEvent(i, None, h.id, intern(inv) if inv else "", author, h.branch or "", h.isolationScope or "", ts, None,
                   h.longRunningToolIds or H.NONE, None, transfer, i + 1,
                   *H.shape(h.content, author, False, h.finishReason, _EXCLUDED_CALLS, _finish), r)  # fmt: skip


def _name_place(diags: list[Diagnostic], placeholder: str, where: str) -> None:
    """Diagnostics written with `placeholder` as their leading place, given `where` instead."""
    for d in diags:
        if d.message.startswith(placeholder):
            d.message = where + d.message[len(placeholder) :]


# ---------------------------------------------------------------------------------------- ledger


def _role(it: Sent, rec: Record | None) -> str:
    if it.kind == "event" and rec is not None and rec.role is not None:
        return rec.role
    return "user" if it.role == "user" else "assistant"


def _history(req: Request, records: list[Record], after: int) -> list[HistoryItem]:
    """The request's items as a checkpoint's replacement: those not sent as a raw message written
    after position `after` (the engine appends those itself)."""
    out: list[HistoryItem] = []
    for it in req.items:
        rec = records[it.seq] if it.seq is not None else None
        if it.kind == "event":
            if it.seq is not None and it.seq > after and not it.reinjected:
                continue
            out.append(HistoryItem(_role(it, rec), seq=it.seq, id=rec.id if rec else None, removed_results=it.removed))
        elif it.kind == "summary":
            out.append(HistoryItem("assistant", it.text, kind="summary", id=rec.id if rec else None))
        else:
            out.append(HistoryItem("user", it.text, id=rec.id if rec else None))
    return out


def _runs(seqs: set[int], records: list[Record]) -> list[tuple[str, str]]:
    """Covered messages as [first id, last id] runs, broken by any message not covered."""
    out: list[tuple[str, str]] = []
    if not seqs:
        return out
    first = last = None
    for r in records[min(seqs) : max(seqs) + 1]:  # (no run begins before the first or goes on past the last)
        if r.kind != "message":
            continue
        if r.seq in seqs and r.id is not None:
            if first is None:
                first = r.id
            last = r.id
        elif first is not None:
            out.append((first, last))  # type: ignore[arg-type]
            first = None
    if first is not None:
        out.append((first, last))  # type: ignore[arg-type]
    return out


def _set_state(cp: Checkpoint, req: Request, records: list[Record], lost: set[int], messages: set[int]) -> None:
    """What the request looks like right after this record: boundary = the last covered message;
    represents = the covered messages but those a summary says it left out; retains = the
    messages before the boundary still sent raw (holes by record, re-injected calls). `messages`:
    the seqs of the message records (each record's seq is its place in `records`)."""
    covered = req.covered & messages
    if not covered:
        return
    last = max(covered)
    sent = {it.seq for it in req.items if it.seq is not None and it.kind in ("event", "foreign")}
    cp.explicit_boundary = records[last].id
    cp.explicit_represents = _runs(covered - lost - sent, records)
    # (the sent messages before the boundary, in seq order: a few, not every record before it)
    early = sorted(sent & messages)
    cp.explicit_retains = [r.id for s in early[: bisect.bisect_left(early, last)] if (r := records[s]).id is not None]


def _message_seqs(records: list[Record]) -> set[int]:
    """The seqs of the message records (in C)."""
    return set(compress(map(_SEQ, records), map(_IS_MESSAGE, map(_KIND, records))))


_SEQ, _KIND, _IS_MESSAGE = operator.attrgetter("seq"), operator.attrgetter("kind"), "message".__eq__


def _records(events: list[GoEvent], visible: set[int], others: list[int] | None = None) -> list[Record]:
    """The ledger's records, one per event: a checkpoint per compaction record, a message per
    event with content (read again on demand where its head was taken), meta otherwise.
    `others`: given, the seqs of the records that are not messages are added to it."""
    records: list[Record] = []
    append, make = records.append, record_from_fields
    source = _Source(len(events))
    raws, results = source.raws, source.results
    extras: dict[tuple[str, str, str, str], dict[str, Any]] = {}
    for e in events:
        i, lr = e.index, e.long_running
        key = (e.author, e.branch, e.invocation_id, e.scope)
        extra = None if lr else extras.get(key)
        if extra is None:
            extra = _extra(e)
            if not lr:  # (records with the same fields share one: nothing changes a record's extra)
                extras[key] = extra
        h = e.head
        if h is None or e.compaction is not None or e.obj is not None:
            rec = _whole_record(e, extra, i in visible)
            append(rec)
            if others is not None and rec.kind != "message":
                others.append(i)
            continue
        # A head (adk-go's own send rule, not adk-python's: the filter above, and zero parts
        # dropped): the message is read again when asked for (`_Source`).
        role, stop, src, call_ids, rid, rids = h
        append(make(Record, i, e.line, e.id, None, e.ts / 1e9, 0, 0, role, stop, src, call_ids, rid, source,
                    "message", "event", True, i not in visible or e.zero, None, None, e.invocation_id, extra))  # fmt: skip
        raws[i] = e.raw
        if rids and (len(rids) > 1 or rids[0] != rid):  # (else its index's `result_id` says it)
            results[i] = list(rids)
    return records


def _whole_record(e: GoEvent, extra: dict[str, Any], visible: bool) -> Record:
    """The record of an event that is not a head's message: a checkpoint, a meta record, or a
    message read whole."""
    ts = e.ts / 1e9
    if e.compaction is not None:
        c = e.compaction
        um = whole(e).get("usage_metadata")
        usage = None
        if isinstance(um, dict) and isinstance(um.get("prompt_token_count"), int):
            usage = Usage(um["prompt_token_count"], um.get("candidates_token_count") or 0)
        cp = Checkpoint(summary=adk._summary_text(c.content), usage=usage, details={})
        return Record(e.index, e.line, "checkpoint", "compaction", e.id, None, ts, checkpoint=cp, run_id=e.invocation_id, extra=extra)
    if e.head is None:
        return Record(e.index, e.line, "meta", "event", e.id, None, ts, run_id=e.invocation_id, extra=extra)
    m = adk.event_message(e.obj)
    assert m is not None
    m.never_sent = not visible or e.zero
    return Record(e.index, e.line, "message", "event", e.id, None, ts, message=m, run_id=e.invocation_id, extra=extra)


def build(events: list[GoEvent], name: str, meta: dict[str, Any], diags: list[Diagnostic]) -> Ledger:
    agent, branch, scope, why = next_agent(events)
    visible = _visible(events, branch, scope)
    others: list[int] = []
    records = _records(events, visible, others)
    times = [e.ts for e in events]
    ordered = non_decreasing(times)  # (no timestamp decreases: in C)
    fl = flow_of(events, agent, branch, scope, visible)  # (what every record's request shares)
    full = request_upto(fl, None, events, ordered)
    for s in full.dropped_orphans:  # (a response adk-go drops from the history: not sent from now on, excluded)
        rec = records[s]
        rec.never_sent = True
        if rec._message is not None:  # (read whole: its message says so too, as a head's read later does)
            rec._message.never_sent = True
    _describe(events, full, records, name, diags)
    cps = [e.index for e in events if e.compaction is not None]
    lost = _unmatched_exclusions(events, full, records, name, diags)
    covers = _covers(events, full.covered, records, times, ordered)
    messages = set(range(len(records))).difference(others) if cps else set()  # (`_message_seqs`: a record's seq is its place)
    for k, i in enumerate(cps):
        last = k == len(cps) - 1
        req = full if last else request_upto(fl, i, events, ordered)
        cp = records[i].checkpoint
        assert cp is not None
        c = events[i].compaction
        assert c is not None
        _set_state(cp, req, records, lost, messages)
        # The continuation turn ends the request: it belongs to the replacement only when no raw
        # message written after the last record follows it (the engine appends those after it).
        # (only the last record's: it is read from the end, where the events after a record are)
        tail = last and any(it.kind == "event" and it.seq is not None and it.seq > i and not it.reinjected for it in reversed(req.items))
        cp.replacement = _history(req if last and not tail else _without_continue(req), records, i)
        if tail:
            # ... unless the events after it are not sent as written, in their order, with nothing
            # after them (another agent's event, a response moved or dropped, the continuation
            # turn): then its history holds the whole request, where adk-go sends each item.
            whole = _history(req, records, len(records))
            if _keys(whole) != _keys(cp.replacement) + _raw_keys(records, range(i + 1, len(records))):
                cp.replacement, cp.replacement_holds_later = whole, True
        cp.details = {
            "start_timestamp": c.start,
            "end_timestamp": c.end,
            "excluded_events": [{"invocation_id": r.invocation_id, "timestamp": r.ts} for r in c.excluded],
            "usable": c.usable,
            "surviving": i in full.surviving,
            "subsumed_by": records[full.subsumed[i]].id if i in full.subsumed else None,
            "covers_ids": covers(i),
        }
    header = {
        "app_name": meta.get("app_name"),
        "user_id": meta.get("user_id"),
        "session_id": meta.get("session_id"),
        "update_time": meta.get("update_time"),
        "storage": meta.get("storage"),
        "next_agent": agent,
        "next_agent_reason": why,
        "next_agent_branch": branch,
        "next_agent_isolation_scope": scope,
        "compaction_configured": True,  # the default view: only such runs write records (contents_processor.go:52-69)
        "next_request": [
            {"kind": it.kind, "seq": it.seq, "role": it.role, "text": it.text, "reinjected": it.reinjected} for it in full.items
        ],
        "next_request_error": full.error,
    }
    sid = meta.get("session_id")
    led = Ledger(path=name, format=NAME, session_id=sid if isinstance(sid, str) else None, header=header, records=records, diagnostics=diags)
    led.leaf_seq = len(records) - 1 if records else None
    if not cps and full.error is None:
        # No record: the engine sends the messages as written, unless adk-go sends them otherwise
        # (ConvertForeignEvent, contents_processor.go:575-602; the rearrangements, :185-195; the
        # continuation turn, :77-83): then the request as adk-go builds it is the history.
        whole = _history(full, records, len(records))
        if _keys(whole) != _raw_keys(records, range(len(records))):
            led.sent_history = whole
    return led


def _keys(hist: list[HistoryItem]) -> list[tuple[int | None, str, str, tuple[str, ...]]]:
    return [(h.seq, h.kind, h.text, h.removed_results) for h in hist]


def _raw_keys(records: list[Record], seqs: range) -> list[tuple[int | None, str, str, tuple[str, ...]]]:
    """`_keys` of the messages among `seqs` as the engine sends them raw (`replacement.sent_messages`)."""
    return [(s, "message", "", ()) for s in seqs if records[s].kind == "message" and not records[s].never_sent]


def _extra(e: GoEvent) -> dict[str, Any]:
    extra: dict[str, Any] = {}
    if e.author:
        extra["author"] = e.author
    if e.branch:
        extra["branch"] = e.branch
    if e.invocation_id:
        extra["invocation_id"] = e.invocation_id
    if e.scope:
        extra["isolation_scope"] = e.scope
    if e.long_running:
        extra["long_running_tool_ids"] = e.long_running
    return extra


class _Source(RecordSource):
    """Reads a head's message again, through the whole parse of what its head was decoded from
    (a store row's columns, kept as read; an export's event, a slice of the document)."""

    __slots__ = ("raws", "results")

    def __init__(self, n: int) -> None:
        self.raws: list[Any] = [None] * n  # by record seq
        self.results: dict[int, list[str]] = {}  # a tool message's calls answered, where it answers more than one

    def obj(self, rec: Record) -> Any:
        return None  # (as a record read whole: the TUI shows its fields)

    def message(self, rec: Record) -> Message | None:
        m = adk.event_message(_obj(self.raws[rec.seq]))
        if m is not None:
            m.never_sent = rec.never_sent
        return m

    def extra(self, rec: Record) -> dict[str, Any] | None:
        return None  # (every record's extra is made when it is)

    def result_ids(self, rec: Record) -> list[str] | None:
        """Its message's `tool_result_ids()`, from its head (the message is not read for them)."""
        return kept_result_ids(self.results, rec)


def _without_continue(req: Request) -> Request:
    return Request([it for it in req.items if it.kind != "continue"], req.covered, req.surviving, req.subsumed, req.dropped_orphans, req.error)


def _covers(events: list[GoEvent], covered: set[int], records: list[Record], times: list[int], ordered: bool) -> Any:
    """`covers(i)`: the ids of the events covered in the request that record `i` covers itself
    (earlier, inside its range, not named as a hole), in stream order. Where the stream is in
    timestamp order (`ordered`: `times`, the events' timestamps, never decrease; a store's always
    do not, as its timestamps sort), the events inside a range are found by bisection instead of
    testing every covered event against every record."""
    if not ordered:
        ordered = sorted(covered)
        return lambda i: [records[s].id for s in ordered if _covered_by_record(events, s, i)]

    def covers(i: int) -> list[str | None]:
        c = events[i].compaction
        if c is None or c.start is None or c.end is None:
            return []
        lo, hi = bisect.bisect_left(times, c.start, 0, i), bisect.bisect_right(times, c.end, 0, i)
        if c.excluded:
            return [records[s].id for s in range(lo, hi) if s in covered and _in_range(events[s], c)]
        return [records[s].id for s in range(lo, hi) if s in covered]

    return covers


def _covered_by_record(events: list[GoEvent], s: int, i: int) -> bool:
    c = events[i].compaction
    return c is not None and s < i and _in_range(events[s], c)


def _unmatched_exclusions(
    events: list[GoEvent], req: Request, records: list[Record], name: str, diags: list[Diagnostic]
) -> set[int]:
    """An `excludedEvents` entry of a surviving record that names no event: the event it protected
    was stored under another key, so adk-go covers it with a summary that never described it
    (session.go:311-322). The covered events of that invocation within a millisecond of the entry
    are those candidates: holes, not represented."""
    lost: set[int] = set()
    stored: set[tuple[str, int]] | None = None  # (invocation, microsecond) of every raw event
    covered: dict[str, list[GoEvent]] = {}  # the covered events by invocation, in stream order
    for e in events:
        c = e.compaction
        if c is None or e.index not in req.surviving:
            continue
        for ref in c.excluded:
            if stored is None:  # (made once, when a surviving record names a hole)
                stored = {(x.invocation_id, x.ts // _US) for x in events if x.compaction is None}
                for x in events:
                    if x.index in req.covered:
                        covered.setdefault(x.invocation_id, []).append(x)
            if (ref.invocation_id, ref.ts // _US) in stored:
                continue
            near = [x.index for x in covered.get(ref.invocation_id, ()) if abs(x.ts - ref.ts) < 1_000_000]
            lost.update(near)
            what = (
                f"so adk-go dropped event{'s' if len(near) != 1 else ''} {', '.join(repr(records[s].id) for s in near)} "
                "(stored a little off that time) from every prompt, summarized by nothing"
                if near
                else "no event of that invocation is near it"
            )
            diags.append(
                Diagnostic(
                    e.line,
                    "exclusion_unmatched",
                    f"{name}: event {e.line}: compaction excludedEvents names invocation {ref.invocation_id!r} at "
                    f"{_fmt(ref.ts)}, which matches no stored event; {what}",
                    seqs=sorted(near),
                )
            )
    return lost


def _fmt(ns: int) -> str:
    d = _EPOCH + _dt.timedelta(microseconds=ns // _US)
    return d.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _describe(events: list[GoEvent], req: Request, records: list[Record], name: str, diags: list[Diagnostic]) -> None:
    """adk-go's own conditions, in its terms, as diagnostics (the findings list them)."""
    for e in events:
        c = e.compaction
        if c is None:
            continue
        line = e.line
        if c.content is None:
            diags.append(
                Diagnostic(
                    line,
                    "compaction_without_content",
                    f"{name}: event {line}: compaction record without compactedContent: adk-go strips it from the prompt, "
                    "but it covers nothing and cannot subsume another record (apply.go:48-54, :454-456)",
                )
            )
        elif c.start is not None and c.end is not None and c.end < c.start:
            diags.append(
                Diagnostic(line, "compaction_inverted", f"{name}: event {line}: compaction range ends before it starts: adk-go ignores it (apply.go:72-78)")
            )
    for it in req.items:
        if it.reinjected and it.seq is not None and records[it.seq].call_ids:
            diags.append(
                Diagnostic(
                    records[it.seq].line,
                    "call_reinjected",
                    f"{name}: event {records[it.seq].line}: a long-running call a summary covered is sent again, next to the response "
                    "that came after it (recoverCompactedFunctionCalls, apply.go:208-291)",
                    severity="info",
                    seqs=[it.seq],
                )
            )
    called = {c for it in req.items for c in it.calls} if req.dropped_orphans else set()
    for s in req.dropped_orphans:
        if called.issuperset(events[s].responses):
            # (a long-running call answered again later: only the last response of a call is kept)
            diags.append(
                Diagnostic(
                    records[s].line,
                    "response_replaced",
                    f"{name}: event {records[s].line}: every function response it holds answers a call a later response answers again: "
                    "adk-go sends a call's last response only and drops this event from the history silently (contents_processor.go:382-402)",
                    seqs=[s],
                )
            )
            continue
        diags.append(
            Diagnostic(
                records[s].line,
                "response_without_call",
                f"{name}: event {records[s].line}: a function response whose call is not in the request: adk-go drops it from the "
                "history silently (contents_processor.go:397-402)",
                seqs=[s],
            )
        )
    for it in req.items:
        if it.removed and it.seq is not None:
            ids = ", ".join(quote(c) for c in it.removed)
            diags.append(
                Diagnostic(
                    records[it.seq].line,
                    "response_replaced",
                    f"{name}: event {records[it.seq].line}: its response to {ids} is not sent: adk-go merges the response events of a call "
                    "event into one content, where a later response to the same call replaces it (mergeFunctionResponseEvents, "
                    "contents_processor.go:377-456, :478-534)",
                    seqs=[it.seq],
                )
            )
    if req.error is not None:
        diags.append(
            Diagnostic(
                events[-1].line if events else 0,
                "request_refused",
                f"{name}: event {events[-1].line if events else 0}, the last, is a function response adk-go cannot pair with a call ({req.error}): it sends no "
                "request and the run fails (contents_processor.go:314-319)",
                severity="error",
            )
        )


def _load_file(path: str, _f: Any, head: bytes, selector: str | None, upto: int | None, digest: bool = True) -> Ledger:
    """A store by its SQLite head, else the JSON export (read whole: an export is one document)."""
    if adk.is_sqlite(head):
        return load(path, selector, upto, digest=digest)
    if selector is not None:
        raise LoadError(f"{path}: an adk-go JSON export holds one session: #{selector} selects nothing")
    with open(path, "rb") as f:
        return load_json(f.read(), path, upto)


def _load_file_read_only(path: str, f: Any, head: bytes, selector: str | None, upto: int | None) -> Ledger:
    """`_load_file` for a command that writes nothing: a store's rows are not digested."""
    return _load_file(path, f, head, selector, upto, digest=False)


# ---------------------------------------------------------------------------------------- write-back


def _written_event(ev: dict[str, Any], led: Ledger, index: int, diags: list[Diagnostic]) -> GoEvent:
    """The event a row `adk_go_writer.rows` inserts, read as `load` will read that row."""
    row = {"rowid": None, **adk_go_writer.row_values(ev, led)}
    e = _row_event(index + 1, row, led.path or "", diags)
    if e is None:  # pragma: no cover - the writer spells a time `parse_time` reads
        raise Unwritable(f"the event {ev.get('id')!r} does not read back")
    e.index = index
    return e


def reread(led: Ledger, lines: list[dict[str, Any]]) -> list[Record]:
    """The written rows' records, read with the session (`rebuild`)."""
    new = rebuild(led, lines)
    return new.records[len(new.records) - len(lines) :]


def rebuild(led: Ledger, lines: list[dict[str, Any]]) -> Ledger:
    """The session with the written rows, read from its store as a reload reads it: the whole
    request is Go's, built again over the events with the new ones (`build`), and a record changes
    what the events before it mean (a dropped response it covers is summarized, not excluded)."""
    if (led.header or {}).get("storage") != "sqlite" or led.path is None:
        raise Unwritable(adk_go_writer.refusal(led) or "the session was not read from an adk-go store")
    notes: list[Diagnostic] = []
    with sqlite_files.read_only(led.path, led.path, notes) as con:
        why = adk_go_writer.store_refusal(con, led)  # (said by the plan too: a main store's casing)
        if why is not None:
            raise Unwritable(why)
        events, meta, diags = sqlite_events(con, led.path, led.session_id, None)
    events += [_written_event(ev, led, len(events) + k, diags) for k, ev in enumerate(lines)]
    return build(events, led.path, meta, [*notes, *diags])


def read_back(entry: dict[str, Any], raw: Any, seq: int) -> Record:
    """Never called: a record's meaning is Go's request over the whole session, so the entry is
    read with it (`reread`), not alone."""
    raise Unwritable("an adk-go record is read with its session (reread)")


WRITER = Writer(
    record_name="compaction event",
    id_prefix="inspector-",
    planned_id="inspector-planned",
    refusal=adk_go_writer.refusal,
    entry=adk_go_writer.compaction_event,
    read_back=read_back,
    lines=adk_go_writer.with_range,
    store=StoreWriter(refusal=adk_go_writer.store_refusal, rows=adk_go_writer.rows, state=adk_writer.session_state),
    reread=reread,
    rebuild=rebuild,
)


FORMAT = Format(
    name=NAME,
    writer=WRITER,
    label="adk-go (SQLite, JSON export)",
    runtime=Runtime(**RUNTIME_RULES),
    claims=lambda path, head: (adk.is_sqlite(head) and looks_like_file(path)) or sniff_export(head),
    load_file=_load_file,
    load_file_read_only=_load_file_read_only,
    looks_like_file=lambda path: looks_like_file(path) or looks_like_export(path),
    claims_data=sniff_export,
    load_data=load_json,
    sessions_by_selector=True,  # FILE.db#SESSION_ID; default: the most recently updated session
    suffixes=(".db", ".sqlite", ".sqlite3", ".json"),
    default_places=DEFAULT_PLACES,
    not_session_files=NOT_SESSION_FILES,
    follow=follow,
)
