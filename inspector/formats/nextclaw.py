"""NextClaw's NCP session journal (github Peiiii/nextclaw at 001fb682, read with `git show`).

Paths below are at that commit; `K/` = packages/nextclaw-kernel/src/, `C/` = packages/nextclaw-core/src/,
`T/` = packages/ncp-packages/nextclaw-ncp-toolkit/src/agent/, `N/` = packages/ncp-packages/nextclaw-ncp/src/,
`R/` = packages/ncp-packages/nextclaw-ncp-agent-runtime/src/runtime/ (docs/runtimes/nextclaw.md has the notes).

Store. `~/.nextclaw/sessions/.ncp-agent-journal/<id>.jsonl`, one file per session
(K/app/kernel-manager.factory.ts:119-121; file name K/stores/ncp-agent-session-journal.store.ts:396-398).
Lines: `{"_type":"metadata","version":1,"created_at","agent_id"?,"metadata"}` and
`{"_type":"event","version":1,"seq","timestamp","event":{"type","payload"}}`
(K/utils/ncp-agent-session-journal.utils.ts:17-23, :53-59). Blank lines and lines that are not JSON
objects are skipped (K/utils/ncp-agent-session-journal-entry.utils.ts:69-106); the line's timestamp is
copied into `event.payload.timestamp` (:44-58, :115-126). `<id>.metadata.json` beside the journal
wins over the journal's metadata line (K/stores/ncp-agent-session-journal.store.ts:369,
K/stores/ncp-agent-session-metadata.store.ts:36-60). A record's `line` is the journal line of the
event that last wrote its message, so `--at N` replays the first N lines and diagnostics name lines.
A folder of journals is a store of many sessions: `DIR#SESSION` (the session id or its file stem);
without one, the most recently written journal is read.

Replay (`replayNcpAgentSessionEvents`, K/utils/ncp-agent-session-replay.utils.ts:42-55, 100-215;
K/utils/ncp-agent-session-replay-event.utils.ts): journal-only `session.request.*` events are skipped
(:107-109, replay-event :270-276); an interrupted `run.error` superseded by later events of its
message or run is skipped (replay-event :25-60); `message.completed` and `session.snapshot.message`
become `message.sent` with recorded tool results merged (replay-event :133-162, :171-198); an
assistant message sent as pending/streaming counts as final (:144-149); a streaming event for an
unknown message first creates an empty streaming assistant message (replay-event :208-234); a
streaming event for an assistant message already final/error, or after its abort/run error, is
ignored (replay :151-154, :201-215). Events then go through the toolkit's state manager
(T/agent-conversation-state.manager.ts): `message.sent` upserts (a new id is inserted by timeline
before the first later message, T/agent-conversation-state-manager.utils.ts:195-211; a known id is
replaced in place, state.manager :523-537); text/reasoning deltas append to the streaming message's
last part of that kind (:247-311); tool-call start/args/delta/end/result build `tool-invocation`
parts (T/agent-conversation-tool-call.manager.ts:104-282), a result lands in the part of the message
holding that call; `run.finished`/`run.error`/`message.failed` settle the streaming message,
cancelling calls without a result (state.manager :365-391, utils :173-193, :285-320);
`message.abort` finalizes it and ignores later events of its calls (:193-219). A message still
streaming at the end is inserted by timeline (replay :50-53). A `compressing` checkpoint whose run
then ended reads as failed/cancelled (K/features/context-compaction/services/
context-compaction-journal-recovery.service.ts:72-138; simplified here: every pending one).

Next request (`AgentRunModelInputBuilder.build`, K/services/agent-run-model-input-builder.service.ts:65-140,
with `buildContextCompactionModelProjection`, K/features/context-compaction/utils/context-compaction.utils.ts:185-231):
- a checkpoint is a timeline message with `metadata.nextclaw_timeline_kind == "context_compaction"` whose
  `metadata.checkpoint` has `version: 1`, `status: "compressed"` and a string summary (:38-43;
  C/features/runtime-context/services/context-compaction.service.ts:367-375). Every such message leaves
  the conversation; the latest by `updatedAt` (ties: the later one) is applied (:45-52, :191);
- sent first: one system message, the fixed preamble, a blank line and the summary (:14-17, :30-36;
  merged with the runtime's context blocks, which the journal does not hold: builder :36-52, :78-96);
- then the preserved user messages (`preservedUserMessageIds`; the one named by
  `truncatedPreservedUserMessage` with its truncated text) by timestamp (:199-204, :121-137); for
  `phase: "mid-run"` the fixed continuation user message (:13, :72-88, :219-221); the retained messages
  (`retainedMessageIds`) by timestamp (:205-208); then every other message whose timestamp is after
  `coveredUntil` (`Date.parse` of it, else of `updatedAt` when it is null or missing: `covered_until_ms`), by timestamp, the `continuationMessageId` message from its
  `continuationMessageCoveredPartCount`-th part on (:90-109, :139-141, :209-215). The rest is dropped;
- each message becomes OpenAI chat messages (`ncpMessageToOpenAiMessages`, R/utils/message-converter.utils.ts:30-153):
  user -> user (text parts not only of whitespace, file parts as their asset reference text:
  `asset_reference`); system and service -> system (text parts); assistant -> one assistant message
  (its reply tags cut: `sanitized_reply_tags`; text, and a tool call for each `tool-invocation` part in
  state `result` with a result, a null one too) followed by one tool message per such call; a call
  without a result is not sent at all (:84-92), so nothing is synthesized.
  Failed, cancelled or still-compressing timeline messages are not checkpoints: they are sent as system
  messages with their timeline text ("Context compaction failed", context-compaction.utils.ts:21-28).
- Not modelled: the budget pruner that may drop more (builder :121-131), observation messages
  (:97-102), images given to the model as images, NextClaw's asset store.

So records are in the replayed message order, an assistant message with tool results is one
assistant record plus one tool record per result (id `<message id>#<toolCallId>`), and the applied
checkpoint states what it removes, retains and represents (`Checkpoint.explicit_*`) and the history
it installs (`Checkpoint.replacement`; rules `replaces_history`): the summary, preserved users, the
continuation turn, retained messages and the later messages before its record by timestamp; the
records after it follow in file order, unless NextClaw drops one of them or sends them in another
order: then the history holds them too, where NextClaw sends them (`replacement_holds_later`; a
`prediction_order` note names them).

Coverage. A provider summary (`summaryDiagnostics.recovery: "provider-summary"`) represents every
message it dropped: the summarizer's input is the previous projection, previous summary included
(K/features/context-compaction/services/context-compaction-preflight.service.ts:282-319,
C/…/context-compaction.service.ts:155-160). A `deterministic-recent-context` recovery asked no model
(K/…/context-compaction-summary-generation.service.ts:108-130): its summary quotes a few recent source
messages (K/utils/context-compaction-summary-input.utils.ts:320-384); a dropped message counts as
represented only when its opening text is quoted there, every other is a hole; the checkpoint reads as a
fallback (`failure_reason = "summary_provider"`). `finishReason` `length`/`max_tokens`/
`max_output_tokens`/`incomplete` marks it truncated (generation service :20-25). Each checkpoint's
`summaryDiagnostics` are reported in NextClaw's terms (a `compaction_report` diagnostic).
"""

from __future__ import annotations

import glob
import os
import re
from bisect import bisect_left, bisect_right
from calendar import timegm
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import date, datetime
from functools import lru_cache
from math import isnan
from operator import attrgetter, itemgetter
from typing import Any

import msgspec
import orjson

from inspector.formats import heads
from inspector.formats.base import FAILS_ON_SEND, JS_WHITESPACE, Format, Home, HomeOverride, Runtime
from inspector.formats.fields import LIST, NUM, OBJ, STR, Field, WrongType, checker, line_diagnostics
from inspector.formats.jsonl import READ_BUFFER_BYTES, LoadError, check_openable, open_regular, os_problem
from inspector.formats.pi_sending import truthy
from inspector.ledger.jsontext import dumps_text, py_str
from inspector.ledger.model import (
    Block,
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
from inspector.ledger.quoting import quote

NAME = "nextclaw"

# NextClaw's home: `$NEXTCLAW_HOME` (trimmed, resolved against the working directory, no `~`
# expansion), else ~/.nextclaw (`getDataPath`, C/shared/lib/core-utils/utils/helpers.utils.ts:14-20;
# ENV_HOME_KEY / DEFAULT_HOME_DIR, C/features/config/configs/brand.config.ts:7-8).
HOME = Home("~/.nextclaw", (HomeOverride("NEXTCLAW_HOME", tilde=False),))
# Where NextClaw keeps its journals: <home>/sessions (`getSessionsPath`, helpers.utils.ts:42-44, which
# the kernel uses without its own homeDir option, K/app/kernel-storage-paths.ts:18-23).
DEFAULT_PLACES: tuple[str, ...] = ("~/.nextclaw/sessions/.ncp-agent-journal",)
# Files in those folders that are not sessions (fnmatch patterns on the file name): the metadata
# sidecars, the summary indexes, the UI page cache under .message-projections/<id>/, the search db.
NOT_SESSION_FILES: tuple[str, ...] = (
    "*.metadata.json",
    "*.metadata.json.*.tmp",
    ".ncp-agent-session-index.json",
    ".session-list-index.json",
    "meta.json",
    "messages.jsonl",
    "offsets.idx",
    "session-search.db*",
)

PREAMBLE = (
    "Authoritative compressed prior conversation context for this session.\n"
    "Continue from this context and any following messages. Do not restart onboarding or treat missing "
    "profile fields as a new-session trigger unless the compressed context says onboarding is the active user task."
)
CONTINUATION_TEXT = (
    "Continue the active run from the compressed working context. Do not repeat completed tool calls; "
    "proceed with the next required action."
)
TRUNCATED_FINISH_REASONS = frozenset({"incomplete", "length", "max_output_tokens", "max_tokens"})
MAX_ATTEMPTS = 3  # SUMMARY_ATTEMPT_SOURCE_MAX_CHARS has three entries (generation service :31)

# The next-request rules (inspector.analysis.runtime.Runtime's fields). The summary item's text is
# built here (one system message: PREAMBLE, a blank line, the summary); the prefix says so for
# readers of the rules.
RUNTIME_RULES: dict[str, Any] = {
    "name": NAME,
    "summary_prefix": PREAMBLE + "\n\n",
    "replaces_history": True,
}

_TIMELINE_KIND = "nextclaw_timeline_kind"
_COMPACTION = "context_compaction"
_JOURNAL_ONLY = frozenset({"session.request.accepted", "session.request.completed", "session.request.failed"})
_SNAPSHOT = "session.snapshot.message"
_STREAMING = frozenset(
    {
        "message.text-start",
        "message.text-delta",
        "message.text-end",
        "message.reasoning-start",
        "message.reasoning-delta",
        "message.reasoning-end",
        "message.tool-call-start",
        "message.tool-call-args-delta",
        "message.tool-execution-started",
    }
)
_ABORTED = object()  # ABORTED_TOOL_CALL_SENTINEL (and `_invocation`'s "not given")

_PART = {"type": STR(), "text": STR(), "toolName": STR(), "toolCallId": STR(), "state": STR()}
_MESSAGE = OBJ(
    id=STR(), sessionId=STR(), role=STR(), status=STR(), timestamp=STR(), parts=LIST(**_PART), metadata=OBJ()
)
SPEC: dict[str, Field] = {
    "_type": STR(),
    "timestamp": STR(),
    "seq": NUM(),
    "metadata": OBJ(),
    "event": OBJ(
        type=STR(),
        occurredAt=STR(),
        payload=OBJ(
            sessionId=STR(),
            message=_MESSAGE,
            messageId=STR(),
            toolCallId=STR(),
            toolName=STR(),
            delta=STR(),
            args=STR(),
            runId=STR(),
            endedAt=STR(),
        ),
    ),
}



# SPEC as msgspec types, for `msgspec.convert` of a parsed line (issue 15): the check done in C, and
# the fields the replay reads as attributes. Each field admits exactly what SPEC admits (null
# always, as the check does; a list's items: an object of the declared fields or any other value),
# so a line converts exactly when `check_fields` would find nothing to remove. A line that does not
# convert takes the check (its diagnostics), and then converts. The message of a payload stays the
# parsed dict (the replay keeps and edits it): `_MessageHead` only checks it.
class _PartHead(msgspec.Struct, gc=False):
    type: str | None = None
    text: str | None = None
    toolName: str | None = None
    toolCallId: str | None = None
    state: str | None = None


class _MessageHead(msgspec.Struct, gc=False):
    id: str | None = None
    sessionId: str | None = None
    role: str | None = None
    status: str | None = None
    timestamp: str | None = None
    parts: list[_PartHead | list[Any] | str | int | float | bool | None] | None = None
    metadata: dict[str, Any] | None = None


class _Payload(msgspec.Struct, gc=False):
    """An event's payload: SPEC's fields, then the others the replay reads (any JSON value)."""

    sessionId: str | None = None
    message: Any = None  # (an object: checked by `_MessageHead`)
    messageId: str | None = None
    toolCallId: str | None = None
    toolName: str | None = None
    delta: str | None = None
    args: str | None = None
    runId: str | None = None
    endedAt: str | None = None
    content: Any = None
    final: Any = None
    interrupted: Any = None


class _Event(msgspec.Struct, gc=False):
    type: str | None = None
    occurredAt: str | None = None
    payload: _Payload | None = None


class _Line(msgspec.Struct, gc=False):
    kind: str | None = msgspec.field(default=None, name="_type")
    timestamp: str | None = None
    seq: heads.Num | None = None
    metadata: dict[str, Any] | None = None
    event: _Event | None = None


_NO_PAYLOAD = _Payload()  # (an event without one: never written to)


# The same lines decoded from their bytes at once (issue 15: no dict of the envelope, the event or
# its payload is built, no `convert` of them), for the lines NextClaw writes: every key one of these
# (an unknown one refused, so no byte goes unchecked), the payload's content a string or null. The
# message stays orjson's (`_Payload.message`: the replay keeps and edits it, and orjson's numbers are
# what the check's path holds: a 20-digit integer is a float there, an int to msgspec): its bytes
# are kept raw, then parsed by orjson. Any line this refuses, or whose message orjson refuses, takes
# the path of `_line_head` (`_Reader.read`), so what a line gives never depends on which path read it.
class _RawPayload(_Payload, forbid_unknown_fields=True, gc=False):
    message: msgspec.Raw = None  # type: ignore[assignment]  # (not `Raw | None`: msgspec 0.23 reads that union as null only)
    content: str | None = None


class _RawEvent(_Event, forbid_unknown_fields=True, gc=False):
    payload: _RawPayload | None = None  # type: ignore[assignment]


class _RawLine(_Line, forbid_unknown_fields=True, gc=False):
    event: _RawEvent | None = None  # type: ignore[assignment]
    version: Any = None  # (on every line; not read)


_DECODE_LINE = msgspec.json.Decoder(_RawLine).decode
# What the line decode or the message's parse raise on a line it leaves to `_line_head`.
_LEFT = (msgspec.MsgspecError, ValueError, RecursionError)

assert [f for f in SPEC] == [msgspec.structs.fields(_Line)[i].encode_name for i in range(len(SPEC))]
assert list(SPEC["event"].fields or {}) == list(_Event.__struct_fields__)
assert list(SPEC["event"].fields["payload"].fields or {}) == list(_Payload.__struct_fields__[:9])  # type: ignore[index]
assert list(_MESSAGE.fields or {}) == list(_MessageHead.__struct_fields__)
assert list(_PART) == list(_PartHead.__struct_fields__)


def _line_head(o: Any) -> _Line:
    """A parsed line as `_Line`, its payload's message checked; ValidationError when SPEC's check
    would remove a field (or the line is no object)."""
    h = _CONVERT(o, _Line)
    ev = h.event
    if ev is not None and ev.payload is not None and ev.payload.message is not None:
        _CONVERT(ev.payload.message, _MessageHead)
    return h


_CONVERT = msgspec.convert
# Whether the reader tries `_line_head` first on every parsed line (the tests turn it off, to hold
# the fast path against the check's path).
_TRY_FAST = True
_REFUSED = msgspec.ValidationError("the check's path")


# ---------------------------------------------------------------------------------------- detection


def _is_event_line(o: Any) -> bool:
    return (
        isinstance(o, dict)
        and o.get("_type") == "event"
        and isinstance(o.get("event"), dict)
        and isinstance(o["event"].get("type"), str)
    )


def head_objects(path: str, lines: int) -> list[Any]:
    """The JSON values of a file's first `lines` lines (within its first 64 KB), blank lines and
    lines that are not JSON left out; none when it cannot be read."""
    try:
        with open_regular(path) as f:  # (a named pipe the walk found: refused, never waited on)
            head = f.read(65536)
    except OSError:
        return []
    out = []
    for raw in head.split(b"\n")[:lines]:
        if raw.strip():
            try:
                out.append(orjson.loads(raw))
            except orjson.JSONDecodeError:
                continue
    return out


def looks_like_file(path: str) -> bool:
    """Is this a NextClaw NCP journal (JSON lines with `_type: "event"` and an `event{type}` among
    the first ones)? The metadata sidecar (one metadata object) and the legacy store (events with
    `type`/`data` at top level) are not. Reads the head only; never raises. A journal of metadata
    lines alone (a session with no event yet: NextClaw starts it empty) is one when named `.jsonl`,
    as the journal store names its journals (the sidecar, the same line, is `.metadata.json`)."""
    meta = False
    for o in head_objects(path, 20):
        if _is_event_line(o):
            return True
        if not (isinstance(o, dict) and o.get("_type") == "metadata" and o.get("version") == 1):
            return False
        meta = True
    return meta and path.endswith(".jsonl") and not path.endswith(".metadata.jsonl")


# ---------------------------------------------------------------------------------------- the store


def _safe_name(session_id: str) -> str:
    """The journal's file stem for a session id (journal.store.ts:396-398, journal.utils.ts:77-79)."""
    return "".join(
        c if c.isascii() and (c.isalnum() or c in "._-") else "_" for c in session_id.replace(":", "_")
    )


def _choose_journal(folder: str, session: str | None, diags: list[Diagnostic]) -> str:
    journals = sorted(
        p for p in glob.glob(os.path.join(glob.escape(folder), "*.jsonl")) if looks_like_file(p)
    )
    if not journals:
        raise LoadError(f"{folder}: no NextClaw session journal (<id>.jsonl with NCP events) in this folder")
    stems = [os.path.basename(p)[: -len(".jsonl")] for p in journals]
    if session is not None:
        want = {session, _safe_name(session)}
        hit = [p for p, s in zip(journals, stems, strict=True) if s in want]
        if not hit:
            raise LoadError(
                f"{folder}: no session {session!r} in this folder (sessions: {', '.join(stems[:10])})"
            )
        chosen, why = hit[0], "named in the path"
    else:
        chosen = max(journals, key=lambda p: (os.path.getmtime(p), p))
        why = "the most recently written"
    others = [s for p, s in zip(journals, stems, strict=True) if p != chosen]
    diags.append(
        Diagnostic(
            0,
            "session_choice",
            f"{folder}: {len(journals)} session journal{'s' if len(journals) != 1 else ''}; reading "
            f"{os.path.basename(chosen)!r}, {why}"
            + (f"; others: {', '.join(others[:10])} (pick one with DIR#SESSION)" if others else ""),
            severity="info",
        )
    )
    return chosen


def load(path: str, selector: str | None, upto: int | None) -> Ledger:
    """Read one session: a journal file, or a folder of journals (`DIR#SESSION`). Its bytes are
    not hashed here: `formats.load` hashes a file only for a command that writes."""
    diags: list[Diagnostic] = []
    if os.path.isdir(path):
        path = _choose_journal(path, selector, diags)
        selector = None
    size = check_openable(path)
    try:
        with open(path, "rb", buffering=READ_BUFFER_BYTES) as f:  # (jsonl.READ_BUFFER_BYTES: not 8 KiB)
            led = _build(f, path, upto, diags, selector)  # (each line with its newline: JSON's whitespace)
    except OSError as e:
        raise LoadError(f"{path}: {os_problem(e)}") from None
    led.size = size
    led.upto_line = upto
    return led


def _sidecar(path: str) -> tuple[dict[str, Any] | None, str]:
    """`<id>.metadata.json` beside the journal: (its entry, a problem with it)."""
    side = path[: -len(".jsonl")] + ".metadata.json" if path.endswith(".jsonl") else path + ".metadata.json"
    try:
        with open_regular(side) as f:  # (a named pipe there: refused, never waited on)
            o = orjson.loads(f.read())
    except FileNotFoundError:
        return None, ""
    except OSError as e:
        return None, f"{side}: {os_problem(e)}"
    except orjson.JSONDecodeError as e:
        return None, f"{side}: not valid JSON ({e}); NextClaw refuses to load this session"
    if not (isinstance(o, dict) and o.get("_type") == "metadata" and isinstance(o.get("metadata"), dict)):
        return (
            None,
            f"{side}: not a metadata entry (_type 'metadata' with a metadata object); NextClaw refuses to load this session",
        )
    return o, ""


# ---------------------------------------------------------------------------------------- replay


def _ms(ts: Any) -> float:
    """Date.parse of an ISO string in milliseconds; NaN when it does not parse."""
    if not isinstance(ts, str) or not ts:
        return float("nan")
    return _parsed_ms(ts)


# The form NextClaw writes (`new Date().toISOString()`, or an offset): read by hand, from a cached
# epoch day; any other string as `_iso_ms` reads it.
_ISO = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]{3}|[0-9]{6}))?(Z|[+-][0-9]{2}:[0-9]{2})"
)
_EPOCH_ORDINAL = date(1970, 1, 1).toordinal()
_EPOCH = datetime(1970, 1, 1)


def _parsed_ms(ts: str) -> float:
    """`_ms` of a non-empty string. NextClaw's own form (`toISOString()`) is read from a cached
    minute and the seconds' and milliseconds' tables; any other string as `_other_ms` reads it."""
    if len(ts) == 24 and ts[23] == "Z":  # toISOString()
        minute = _MINUTES.get(ts[:17])
        if minute is None:
            minute = _minute_ms(ts[:17])
        sec = _SECONDS.get(ts[17:20])
        milli = _MILLIS.get(ts[20:23])
        if sec is not None and milli is not None and minute == minute:
            return minute + sec + milli
    return _other_ms(ts)


# "SS." (00-59) and "mmm" (000-999) -> milliseconds.
_SECONDS = {f"{s:02d}.": s * 1000 for s in range(60)}
_MILLIS = {f"{m:03d}": m for m in range(1000)}


# The minutes met (`YYYY-MM-DDTHH:MM:` -> its time in ms, NaN when it is no valid minute): a journal's
# events share a few thousand.
_MINUTES: dict[str, float] = {}


def _minute_ms(prefix: str) -> float:
    hour = _hour_ms(prefix[:14]) if prefix.isascii() else None
    mi = prefix[14:16]
    t = hour + int(mi) * 60_000 if hour is not None and mi.isdigit() and mi < "60" and prefix[16] == ":" else float("nan")
    if len(_MINUTES) < 1 << 16:
        _MINUTES[prefix] = t
    return t


@lru_cache(maxsize=1 << 16)
def _other_ms(ts: str) -> float:
    """`_ms` of a string not in the form NextClaw writes, remembered."""
    m = _ISO.fullmatch(ts)
    if m is None:
        return _iso_ms(ts)
    y, mo, d, hh, mi, ss, frac, zone = m.groups()
    day = _epoch_day(y, mo, d)
    h, mn, sc = int(hh), int(mi), int(ss)
    if day is None or h > 23 or mn > 59 or sc > 59:
        return _iso_ms(ts)
    secs = day * 86400 + h * 3600 + mn * 60 + sc
    if zone != "Z":
        oh, om = int(zone[1:3]), int(zone[4:6])
        if oh > 23 or om > 59:
            return _iso_ms(ts)
        off = oh * 3600 + om * 60
        secs -= off if zone[0] == "+" else -off
    return secs * 1000.0 + (int(frac[:3]) if frac else 0)


def _is_time(ts: str) -> bool:
    """Does Date.parse read this non-empty string as a time (not NaN)?"""
    t = _parsed_ms(ts)
    return t == t


@lru_cache(maxsize=4096)
def _hour_ms(prefix: str) -> float | None:
    """The time of `YYYY-MM-DDTHH:` (a valid date and hour), None for anything else."""
    m = _HOUR.fullmatch(prefix)
    day = _epoch_day(*m.groups()[:3]) if m is not None else None
    return None if m is None or day is None else (day * 24 + int(m[4])) * 3_600_000.0


_HOUR = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})T([01][0-9]|2[0-3]):")


@lru_cache(maxsize=1024)
def _epoch_day(y: str, mo: str, d: str) -> int | None:
    """Days from the epoch to a date (a journal's events share a few); None for no such date."""
    try:
        return date(int(y), int(mo), int(d)).toordinal() - _EPOCH_ORDINAL
    except ValueError:
        return None


def _iso_ms(ts: str) -> float:
    """Date.parse of any other string, by datetime.fromisoformat."""
    try:
        d = datetime.fromisoformat(ts.replace("Z", "+00:00"))
    except ValueError:
        return float("nan")
    if d.tzinfo is None:
        return float("nan")
    try:
        secs = timegm(d.utctimetuple())
    except OverflowError:  # an offset carries it past year 1 or 9999, where JS still has a time
        utc = d.replace(tzinfo=None) - _EPOCH - d.utcoffset()  # type: ignore[operator]
        secs = utc.days * 86400 + utc.seconds
    return secs * 1000.0 + d.microsecond // 1000


class _Msg:
    """An NcpMessage as the state manager holds it, plus the journal line that last wrote it. Its
    id (as a string) and its time are read once: the replay compares them on every event, and
    only `rename` changes the id (the message's timestamp never changes). `t`: Date.parse of its
    timestamp (NaN when none parses), read when made (every message made is put in the timeline,
    which places it by time) and kept as a plain attribute (a property was a call per read)."""

    __slots__ = ("id", "line", "obj", "t")

    def __init__(self, obj: dict[str, Any], line: int) -> None:
        self.obj = obj
        self.line = line
        self.id: str = str(obj.get("id"))  # (a slot, not a property: read several times a message)
        self.t: float = _ms(obj.get("timestamp"))

    def rename(self, mid: str) -> None:
        self.obj["id"] = mid
        self.id = mid

    @property
    def parts(self) -> list[Any]:
        p = self.obj.get("parts")
        return p if isinstance(p, list) else []


class _Segment:
    """The events of one streamed assistant message, kept instead of applied (`_Replay.event`).

    NextClaw streams an assistant message as text, reasoning and tool-call events, then writes it
    whole (`message.completed`), and the whole copy replaces the streamed one (`message.sent`
    upserts, T/agent-conversation-state.manager.ts:523-537; replay-event :133-162). While the events
    of a freshly bootstrapped streaming message come, they only build that message's parts and the
    bookkeeping of its calls; when its whole copy comes next, the streamed copy is dropped unseen,
    so only what outlives it is applied: its calls' owner and arguments, and its final tool results,
    which the whole copy takes (`_merge_results`, replay-event :171-198). Any other event first
    replays the kept ones as they came (tests/test_nextclaw_heads.py holds both equal)."""

    __slots__ = ("calls", "events", "finals", "mid")

    def __init__(self, mid: str) -> None:
        self.mid = mid
        self.events: list[tuple[_Event, str, _Payload, int, str]] = []
        self.calls: dict[str, Any] = {}  # its calls' arguments as the replay holds them (call_args)
        self.finals: dict[str, Any] = {}  # its final tool results (results)


@dataclass
class _Replay:
    """The toolkit's DefaultNcpAgentConversationStateManager and the replay's bookkeeping."""

    messages: list[_Msg] = field(default_factory=list)
    streaming: _Msg | None = None
    known: set[str] = field(default_factory=set)
    terminal: set[str] = field(default_factory=set)
    results: dict[str, Any] = field(default_factory=dict)  # final tool results' content by call id
    call_message: dict[str, str] = field(default_factory=dict)
    call_args: dict[str, Any] = field(default_factory=dict)
    active_run: str | None = None
    settled_run: str | None = None
    pending_compactions: set[str] = field(default_factory=set)
    ended_compactions: dict[str, tuple[str, str]] = field(default_factory=dict)
    # What `messages` holds, so the common cases need no scan of it: how many messages have each
    # id, and an upper bound of their times (a message is put after every one later than it).
    held: dict[str, int] = field(default_factory=dict)
    latest: float = float("-inf")
    # The streamed message whose events are kept, not applied yet (`_Segment`).
    seg: _Segment | None = None

    # ------------------------------------------------------------------ messages
    def _index(self, mid: str) -> int:
        """Where the first message with this id is, or -1. One held message of an id is looked for
        from the end: it is most often the newest (a streamed message's bootstrap, just put there)."""
        n = self.held.get(mid)
        if n is None:
            return -1
        if n == 1:
            msgs = self.messages
            return next((i for i in range(len(msgs) - 1, -1, -1) if msgs[i].id == mid), -1)
        return next((i for i, m in enumerate(self.messages) if m.id == mid), -1)

    def _hold(self, m: _Msg) -> None:
        self.held[m.id] = self.held.get(m.id, 0) + 1
        t = m.t
        if t > self.latest:
            self.latest = t

    def _release(self, i: int) -> _Msg:
        m = self.messages.pop(i)
        n = self.held[m.id] - 1
        if n:
            self.held[m.id] = n
        else:
            del self.held[m.id]
        return m

    def _insert_by_timeline(self, m: _Msg) -> None:
        t = m.t
        if t == t and t < self.latest:  # not NaN, and some message may be later
            msgs = self.messages
            msgs.insert(next((i for i, x in enumerate(msgs) if x.t > t), len(msgs)), m)
            self._hold(m)
            return
        self.messages.append(m)  # (after every held one; `_hold`, inlined)
        held, mid = self.held, m.id
        held[mid] = held.get(mid, 0) + 1
        if t > self.latest:
            self.latest = t

    def upsert(self, m: _Msg) -> None:
        if self.streaming is not None and self.streaming.id == m.id:
            self.streaming = None
        i = self._index(m.id)
        if i < 0:
            self._insert_by_timeline(m)
        else:
            self._release(i)
            self.messages.insert(i, m)
            self._hold(m)

    def ensure_streaming(self, sid: Any, mid: str, line: int, ts: Any) -> _Msg:
        s = self.streaming
        if s is not None and s.id == mid:
            s.obj["status"] = "streaming"
            s.line = line
            return s
        i = self._index(mid)
        if i >= 0:
            m = self._release(i)
            m.obj["status"] = "streaming"
            m.line = line
            self.streaming = m
            return m
        if (
            s is not None
            and s.obj.get("sessionId") == sid
            and (
                s.id.startswith("tool-")
                or any(isinstance(p, dict) and p.get("type") == "tool-invocation" for p in s.parts)
            )
        ):
            for c, owner in self.call_message.items():
                if owner == s.id:
                    self.call_message[c] = mid
            s.rename(mid)
            s.line = line
            return s
        # (The toolkit stamps a new message with the current time; the event's time stands in.)
        self.streaming = _Msg(
            {
                "id": mid,
                "sessionId": sid,
                "role": "assistant",
                "status": "streaming",
                "parts": [],
                "timestamp": ts,
            },
            line,
        )
        return self.streaming

    def settle(self, status: str, ended: Any, line: int) -> None:
        s = self.streaming
        if s is None:
            return
        if status == "error" or ended:
            _cancel_calls(s.parts)
        s.obj["status"] = status
        s.line = line
        self.upsert(s)
        self.streaming = None
        self._forget_calls(s.id)

    def _forget_calls(self, mid: str) -> None:
        for c in [c for c, owner in self.call_message.items() if owner == mid]:
            del self.call_message[c]
            self.call_args.pop(c, None)

    # ------------------------------------------------------------------ tool calls
    def _target(self, sid: Any, call: str, mid: Any, line: int, ts: Any) -> _Msg:
        want = (
            (mid.strip() if isinstance(mid, str) else "")
            or self.call_message.get(call)
            or (self.streaming.id if self.streaming else "")
            or f"tool-{call}"
        )
        self.call_message[call] = want
        return self.ensure_streaming(sid, want, line, ts)

    def _holder(self, call: str) -> tuple[_Msg, dict[str, Any]] | None:
        """The message holding this call: the streaming one, else the newest held (no copy of the
        timeline: a tool result is most often its own message's, the newest)."""
        if self.streaming is not None:
            p = _find_call(self.streaming.parts, call)
            if p is not None:
                return self.streaming, p
        for m in reversed(self.messages):
            p = _find_call(m.parts, call)
            if p is not None:
                return m, p
        return None

    def tool_event(self, t: str, p: _Payload, line: int, ts: Any) -> None:
        call = p.toolCallId
        if call is None or self.call_args.get(call) is _ABORTED:
            return
        sid = p.sessionId
        if t == "message.tool-call-start":
            m = self._target(sid, call, p.messageId, line, ts)
            self.call_args[call] = ""
            _upsert_call(m.parts, _invocation(call, p.toolName, "partial-call", args=""), m)
        elif t in ("message.tool-call-args", "message.tool-call-args-delta"):
            args = p.args if t == "message.tool-call-args" else f"{self.call_args.get(call) or ''}{p.delta or ''}"
            self.call_args[call] = args
            m = self._target(sid, call, p.messageId if t.endswith("delta") else None, line, ts)
            parts = m.parts
            old = _find_call(parts, call)
            _upsert_call(parts, _invocation(call, (old or {}).get("toolName") or "unknown", "partial-call", args=args), m, old)
        elif t == "message.tool-call-end":
            m = self._target(sid, call, None, line, ts)
            parts = m.parts
            old = _find_call(parts, call)
            new = _invocation(call, (old or {}).get("toolName") or "unknown", "call", args=self.call_args.get(call) or "")
            _upsert_call(parts, new, m, old)
        elif t == "message.tool-execution-started":
            if self._holder(call) is None:
                m = self._target(sid, call, p.messageId, line, ts)
                _upsert_call(m.parts, _invocation(call, "unknown", "call"), m)
        elif t == "message.tool-call-result":
            self._tool_result(call, p, sid, line, ts)

    def _tool_result(self, call: str, p: _Payload, sid: Any, line: int, ts: Any) -> None:
        final = p.final is not False
        # (`result: payload.content`: a missing content leaves the result undefined, so the call is
        # not sent, message-converter.utils.ts:84; a null content is read as a missing one here)
        content = _ABORTED if p.content is None else p.content
        state = "result" if final else "call"
        found = self._holder(call)
        if found is not None:
            m, part = found
            if part.get("state") == "cancelled" or (not final and part.get("state") == "result"):
                return
            _upsert_call(m.parts, _invocation(call, part.get("toolName"), state, args=part.get("args"), result=content), m)
            m.line = line
        else:
            m = self._target(sid, call, None, line, ts)
            _upsert_call(m.parts, _invocation(call, "unknown", state, result=content), m)
        if final:
            self.results[call] = p.content

    # ------------------------------------------------------------------ one event
    def event(self, ev: _Event, t: str, p: _Payload, line: int, ts: str) -> None:
        """One event of type `t` and payload `p` (`_NO_PAYLOAD` when it has none), written at `line`:
        kept while it goes on streaming the message of the open segment, else applied (`_Segment`)."""
        seg = self.seg
        if seg is not None and p.message is None and self._continues(seg, t, p):
            seg.events.append((ev, t, p, line, ts))
            return
        self.past_segment(ev, t, p, line, ts)

    def past_segment(self, ev: _Event, t: str, p: _Payload, line: int, ts: str) -> None:
        """`event` of an event that does not go on streaming the open segment's message (or with
        none open): it ends the segment (collapsed or replayed), then is applied or opens one."""
        seg = self.seg
        if seg is not None:
            self.seg = None
            message = p.message
            if t in _MESSAGE_EVENTS and message is not None and str(message.get("id")) == seg.mid:
                self._collapse(seg)
                self._message_event(t, message, line, ts)  # (`_apply` of a message event)
                return
            for e in seg.events:
                self._apply(*e)
        elif self.streaming is None and p.message is None and t in _OPENS and _LAZY:
            seg = self._opens(t, p)
            if seg is not None:
                seg.events.append((ev, t, p, line, ts))
                self.seg = seg
                return
        self._apply(ev, t, p, line, ts)

    def _opens(self, t: str, p: _Payload) -> _Segment | None:
        """A segment for the message this event would bootstrap as the streaming one: an id not met
        (so neither known, terminal nor in the timeline), and for a call's start a call not aborted."""
        mid = p.messageId
        if mid is None:
            return None
        mid = mid.strip()
        if not mid or mid in self.known or mid in self.terminal or mid in self.held:
            return None
        seg = _Segment(mid)
        if t == "message.tool-call-start":
            call = p.toolCallId
            if call is None or self.call_args.get(call) is _ABORTED:
                return None
            seg.calls[call] = ""
        return seg

    def _continues(self, seg: _Segment, t: str, p: _Payload) -> bool:
        """Does this event (without a message) only stream the segment's message, as `_apply` would
        replay it? Then what it leaves beside that message is noted in `seg`."""
        mid = p.messageId
        if t in _SEG_TEXT:
            return mid is not None and mid.strip() == seg.mid
        call = p.toolCallId
        if call is None:
            return False
        calls = seg.calls
        if t == "message.tool-call-start":
            if mid is None or mid.strip() != seg.mid or (call not in calls and self.call_args.get(call) is _ABORTED):
                return False
            calls[call] = ""
            return True
        if call not in calls:  # (a call of another message, or none)
            return False
        if t == "message.tool-call-args":
            calls[call] = p.args
        elif t == "message.tool-call-result":
            if p.final is not False:
                seg.finals[call] = p.content
        elif t in ("message.tool-call-args-delta", "message.tool-execution-started"):
            if mid is not None and mid.strip() not in ("", seg.mid):
                return False
            if t == "message.tool-call-args-delta":
                calls[call] = f"{calls[call] or ''}{p.delta or ''}"
        elif t != "message.tool-call-end":
            return False
        return True

    def _collapse(self, seg: _Segment) -> None:
        """The segment's message is written whole now: what its events leave beside it (its id is
        known: the message event adds it)."""
        mid = seg.mid
        for c, args in seg.calls.items():
            self.call_message[c] = mid
            self.call_args[c] = args
        self.results.update(seg.finals)

    def _flush(self) -> None:
        """Apply the kept events of an open segment."""
        seg, self.seg = self.seg, None
        if seg is not None:
            for e in seg.events:
                self._apply(*e)

    def _apply(self, ev: _Event, t: str, p: _Payload, line: int, ts: str) -> None:
        """One event as the replay's rules apply it."""
        message: dict[str, Any] | None = p.message  # (a dict or None: `_line_head` checked it)
        if t in _MESSAGE_EVENTS:
            if message is not None:
                self._message_event(t, message, line, ts)
            return
        sm = None
        if t in _STREAMING:
            sm = p.messageId
            if sm is not None:
                sm = sm.strip()
                if sm and sm in self.terminal:
                    return
        elif t == "run.started":
            rid = p.runId
            if rid and (rid == self.settled_run or rid == self.active_run):
                return
            if self.streaming is not None and self.active_run != rid:
                self.abort(self.streaming.id, line)
            self.active_run = rid
            return
        if message is not None or t in _ENDING:
            self._track_compaction(t, message, ts)
        if sm and sm not in self.known:  # the replay's streaming bootstrap
            self.known.add(sm)
            boot = _Msg(
                {"id": sm, "sessionId": p.sessionId, "role": "assistant", "status": "streaming", "parts": [], "timestamp": ts},
                line,
            )
            if message is None and self._streams_next(t, p, sm):
                # Put in the timeline, then taken out of it again by ensure_streaming: it streams.
                self.streaming = boot
            else:
                self.upsert(boot)
        if message is not None:  # (a message on another event: as `_message_event` takes it)
            self.known.add(str(message.get("id")))
            self.upsert(_Msg(message, line))
            if message.get("role") == "assistant" and message.get("status") in ("final", "error"):
                self.terminal.add(str(message.get("id")))
            return
        if sm and t in _TEXT_EVENTS:
            self._text_event(t, p, sm, line, ts)
        elif t.startswith("message.tool-"):
            self.tool_event(t, p, line, ts)
        elif t == "message.abort":
            self.abort(p.messageId, line)
            if p.messageId is not None:
                self.terminal.add(p.messageId)
        elif t == "message.failed":
            target = p.messageId
            if self.streaming is not None and (not target or self.streaming.id == target):
                self.settle("error", ev.occurredAt, line)
            self.active_run = None
        elif t in ("run.finished", "run.error"):
            rid = p.runId if p.runId is not None else self.active_run
            self.settled_run = rid
            self.settle("final" if t == "run.finished" else "error", p.endedAt or ev.occurredAt, line)
            self.active_run = None
            if t == "run.error" and p.messageId is not None:
                self.terminal.add(p.messageId)

    def _message_event(self, t: str, message: dict[str, Any], line: int, ts: str) -> None:
        """message.sent, message.completed or a snapshot's message: each a message.sent of the
        message (the last two with the recorded tool results merged), `_apply`'s steps for one."""
        role = message.get("role")
        if role == "assistant" and message.get("status") in ("pending", "streaming"):
            message["status"] = "final"
        if t != "message.sent":
            _merge_results(message, self.results)
        if message.get("metadata") is not None:  # (else no timeline message: nothing to track)
            self._track_compaction("message.sent", message, ts)
        m = _Msg(message, line)
        mid = m.id
        self.known.add(mid)
        if mid in self.held or self.streaming is not None:
            self.upsert(m)
        else:  # (`upsert` of an id the timeline does not hold, nothing streaming)
            self._insert_by_timeline(m)
        if role == "assistant" and message.get("status") in ("final", "error"):
            self.terminal.add(mid)

    def _streams_next(self, t: str, p: _Payload, sm: str) -> bool:
        """Does this event's handler begin with `ensure_streaming` of `sm`, a message just
        bootstrapped that the timeline holds under no other copy of its id? Then the bootstrap's
        insert and ensure_streaming's release cancel out: the bootstrapped message is the streaming
        one (a message streaming under that id is dropped either way: upsert lets it go)."""
        if sm in self.held:
            return False
        if t in _TEXT_EVENTS:
            return True
        if t in ("message.tool-call-start", "message.tool-call-args-delta"):
            call = p.toolCallId
            return call is not None and self.call_args.get(call) is not _ABORTED
        return False

    def _text_event(self, t: str, p: _Payload, sm: str, line: int, ts: str) -> None:
        """A streamed text or reasoning start or delta of message `sm`."""
        kind = "text" if t.startswith("message.text") else "reasoning"
        m = self.ensure_streaming(p.sessionId, sm, line, ts)
        delta = p.delta
        if delta and t.endswith("delta"):
            parts = m.parts
            last = parts[-1] if parts else None
            if isinstance(last, dict) and last.get("type") == kind:
                last["text"] = f"{last.get('text') or ''}{delta}"
            else:
                m.obj.setdefault("parts", []).append({"type": kind, "text": delta})
        elif t == "message.text-start":
            parts = m.parts
            if parts and isinstance(parts[-1], dict) and parts[-1].get("type") == "text" and parts[-1].get("text"):
                parts.append({"type": "text", "text": ""})

    def abort(self, target: Any, line: int) -> None:
        s = self.streaming
        self.active_run = None
        if s is None or (target and s.id != target):
            return
        cancelled = _cancel_calls(s.parts)
        s.obj["status"] = "final"
        s.line = line
        self.upsert(s)
        self.streaming = None
        self._forget_calls(s.id)
        for c in cancelled:
            self.call_args[c] = _ABORTED

    def _track_compaction(self, t: Any, message: dict[str, Any] | None, ts: str) -> None:
        if message is not None:
            cp = _timeline_checkpoint(message)
            if cp is not None:
                mid = str(message.get("id"))
                if cp.get("status") == "compressing":
                    self.pending_compactions.add(mid)
                else:
                    self.pending_compactions.discard(mid)
                    self.ended_compactions.pop(mid, None)
            return
        status = (
            "cancelled" if t == "message.abort" else "failed" if t in ("run.error", "run.finished") else None
        )
        if status is None:
            return
        for mid in self.pending_compactions:
            self.ended_compactions[mid] = (status, ts)
        self.pending_compactions.clear()

    def result(self) -> list[_Msg]:
        self._flush()
        msgs = list(self.messages)
        if self.streaming is not None:
            t = self.streaming.t
            at = len(msgs)
            if t == t:
                at = next((i for i, x in enumerate(msgs) if x.t > t), at)
            msgs.insert(at, self.streaming)
        for m in msgs if self.ended_compactions else ():  # (most journals: no compaction left pending)
            ended = self.ended_compactions.get(m.id)
            if not ended:
                continue
            cp = _timeline_checkpoint(m.obj)
            if cp is not None and cp.get("status") == "compressing":
                m.obj["parts"] = [
                    {
                        "type": "text",
                        "text": "Context compaction was cancelled"
                        if ended[0] == "cancelled"
                        else "Context compaction failed",
                    }
                ]
                m.obj["metadata"] = {
                    **m.obj["metadata"],
                    "checkpoint": {**cp, "status": ended[0], "updatedAt": ended[1]},
                }
        return msgs


_MESSAGE_EVENTS = frozenset({"message.sent", "message.completed", _SNAPSHOT})
_ENDING = frozenset({"message.abort", "run.error", "run.finished"})  # (what settles a pending compaction)
_TEXT_EVENTS = frozenset({"message.text-start", "message.text-delta", "message.reasoning-start", "message.reasoning-delta"})
# What may open a segment (an event that bootstraps its message as the streaming one) and the text
# events that go on streaming it (`_Segment`).
_OPENS = _TEXT_EVENTS | {"message.tool-call-start"}
_SEG_TEXT = _TEXT_EVENTS | {"message.text-end", "message.reasoning-end"}
# Whether segments are kept (the tests turn it off, to hold them against replaying every event).
_LAZY = True


def _invocation(call: str, name: Any, state: str, args: Any = _ABORTED, result: Any = _ABORTED) -> dict[str, Any]:
    """A tool-invocation part as the replay writes it (args, result: only where given)."""
    p = {"type": "tool-invocation", "toolCallId": call, "toolName": name, "state": state}
    if args is not _ABORTED:
        p["args"] = args
    if result is not _ABORTED:
        p["result"] = result
    return p


def _find_call(parts: list[Any], call: str) -> dict[str, Any] | None:
    for p in reversed(parts):
        if isinstance(p, dict) and p.get("type") == "tool-invocation" and p.get("toolCallId") == call:
            return p
    return None


def _upsert_call(parts: list[Any], new: dict[str, Any], m: _Msg, old: Any = False) -> None:
    """Put the call's part in `parts` (m's): into its part there (`old`, when the caller has looked
    it up), else appended."""
    if old is False:
        old = _find_call(parts, new["toolCallId"])
    if old is not None:
        old.update(new)
    else:
        parts.append(new)
    m.obj["parts"] = parts
    m.obj["status"] = (
        "streaming"
        if m.obj.get("status") == "streaming" or new.get("state") != "result"
        else m.obj.get("status")
    )


def _cancel_calls(parts: list[Any]) -> list[str]:
    out: list[str] = []
    for p in parts:
        if (
            isinstance(p, dict)
            and p.get("type") == "tool-invocation"
            and p.get("toolCallId")
            and p.get("state") not in ("result", "cancelled")
        ):
            p["state"] = "cancelled"
            out.append(p["toolCallId"])
    return out


def _merge_results(message: dict[str, Any], results: dict[str, Any]) -> None:
    parts = message.get("parts")
    if not isinstance(parts, list):
        return
    for p in parts:
        if isinstance(p, dict) and p.get("type") == "tool-invocation" and p.get("toolCallId") in results:
            p["state"] = "result"
            content = results[p["toolCallId"]]
            if content is None:  # (undefined: not sent, as `_tool_result` has it)
                p.pop("result", None)
            else:
                p["result"] = content


def _timeline_checkpoint(message: dict[str, Any]) -> dict[str, Any] | None:
    md = message.get("metadata")
    if not isinstance(md, dict) or md.get(_TIMELINE_KIND) != _COMPACTION:
        return None
    cp = md.get("checkpoint")
    return cp if isinstance(cp, dict) else None


def _compressed_checkpoint(cp: dict[str, Any] | None) -> dict[str, Any] | None:
    """readCompressedContextCompactionCheckpoint of a timeline message whose checkpoint
    (`_timeline_checkpoint`) is this: version 1, status compressed, a string summary."""
    if (
        cp is not None
        and cp.get("version") == 1
        and cp.get("status") == "compressed"
        and isinstance(cp.get("summary"), str)
    ):
        return cp
    return None


def replay_throws(t: str, message: Any, message_id: Any, delta: Any) -> str | None:
    """Why NextClaw's replay throws on this event (a TypeError that fails the session's load, so
    every send to it fails and no request is sent), or None. Seen on the real kernel (001fb682):
    - a message event without a message object: `message.metadata` of undefined
      (K/features/context-compaction/services/context-compaction-journal-recovery.service.ts:141), or
      `message.parts` of a string (N/toolkit/reply-tags.ts:44);
    - a message whose `parts` is no array (a string passes for a non-assistant message, it spreads):
      `[...message.parts]` / `message.parts.findIndex` (N/toolkit/reply-tags.ts:44, :49), the
      completed message's `message.parts.map` (K/utils/ncp-agent-session-replay-event.utils.ts:176);
    - a null part: `part.type` (reply-tags.ts:49; T/agent-conversation-message-normalizer.ts:7);
    - an assistant message whose first text part's text is no string: `nextContent.match`
      (reply-tags.ts:28, :70);
    - a text or reasoning start, or a delta with a delta (an empty one returns first, :247-250,
      :288-291), without a message id: `this.streamingMessage.status` of null, or
      `nextMessageId.trim` of undefined (T/agent-conversation-state.manager.ts:431, :463;
      T/agent-conversation-state-manager.utils.ts:234). (Simplified: a null id is taken as a missing
      one, and a message streaming under another session id, which would take it, is not looked for.)"""
    if t in _TEXT_EVENTS:
        if message_id is not None or (t.endswith("delta") and not truthy(delta)):
            return None
        return f"{t} without a messageId"
    if not isinstance(message, dict):
        return f"{t} without a message object"
    return _message_throws(message)


def _message_throws(m: dict[str, Any]) -> str | None:
    """`replay_throws` of a message written whole (sanitizeAssistantReplyTags and
    cloneConversationMessage, N/toolkit/reply-tags.ts:37-90, T/agent-conversation-message-normalizer.ts:3-21)."""
    parts = m.get("parts")
    assistant = m.get("role") == "assistant"
    if not isinstance(parts, list):
        if isinstance(parts, str) and not assistant:
            return None
        return f"message {quote(m.get('id'))}: parts is {'missing' if parts is None else type(parts).__name__}, not an array"
    if None in parts:  # (a JSON value equals None only when it is null: `in` finds it in C)
        return f"message {quote(m.get('id'))}: a null part"
    if assistant:
        first = next((x for x in parts if isinstance(x, dict) and x.get("type") == "text"), None)
        if first is not None and not isinstance(first.get("text"), str):
            return f"assistant message {quote(m.get('id'))}: its first text part's text is no string"
    return None


_THROWING = frozenset({"message.sent", "message.completed", _SNAPSHOT}) | frozenset(
    {"message.text-start", "message.text-delta", "message.reasoning-start", "message.reasoning-delta"}
)


# ---------------------------------------------------------------------------------------- reading


def _lines(data: bytes) -> Iterator[bytes]:
    """`data.split(b"\n")`, one line at a time (no copy of the whole file)."""
    pos, end = 0, len(data)
    while pos <= end:
        nl = data.find(b"\n", pos)
        if nl < 0:
            nl = end
        yield data[pos:nl]
        pos = nl + 1


def _line_error(raw: bytes, e: orjson.JSONDecodeError) -> orjson.JSONDecodeError:
    """The error orjson gives a line without its newline (the file is read with them)."""
    if raw.endswith(b"\n"):
        try:
            orjson.loads(raw[:-1])
        except orjson.JSONDecodeError as bare:
            return bare
    return e


@dataclass
class _Reader:
    """The journal read line by line, each event handed to the replay as it comes, except those
    that follow an interrupted `run.error`: whether a later event supersedes it is known only at
    the end (replay-event :25-60), so from the first one on the events wait in `held`."""

    name: str
    diags: list[Diagnostic]
    replay: _Replay
    meta: dict[str, Any] | None = None
    events: int = 0
    content: bool = False  # any line that is not blank
    held: list[tuple[int, int, _Event, str, _Payload, str]] | None = None
    interrupted: list[tuple[int, Any, Any]] = field(default_factory=list)
    # The last event (by index) naming each message / run, as `_superseded` collects them.
    last_msg: dict[str, int] = field(default_factory=dict)
    last_run: dict[str, int] = field(default_factory=dict)
    last_ts: str = ""  # the last timestamp that is a time (`_times`)
    thrown: tuple[int, str] | None = None  # the first event NextClaw's replay throws on (`replay_throws`)
    as_written: dict[int, str | None] = field(default_factory=dict)  # `replay_throws` of lines before their check
    ended_with_id: set[int] = field(default_factory=set)  # text-end lines whose messageId the check removed

    def read(self, lines: Iterator[bytes], upto: int | None) -> None:
        """Each line parsed and checked as it comes; its event handed to the replay with the next
        `BATCH` events (`_replay_batch`: their times checked at once)."""
        name, diags = self.name, self.diags
        loads, convert, decode, fast = orjson.loads, _CONVERT, _DECODE_LINE, _TRY_FAST
        ns: list[int] = []  # the batch: each event's line, the event, its line's timestamp
        evs: list[_Event] = []
        stamps: list[str | None] = []
        for n, raw in enumerate(lines, start=1):
            if upto is not None and n > upto:
                if not self.events and not any(ev.type is not None for ev in evs):  # (only "is the file blank?" is still asked: build's error)
                    self.content = self.content or bool(raw.strip()) or any(r.strip() for r in lines)
                break
            if not raw or raw.isspace():  # (`not raw.strip()`, without a copy of the line)
                continue
            self.content = True
            try:  # (`_RawLine`: an event line NextClaw writes, decoded at once)
                if not fast:
                    raise _REFUSED
                h = decode(raw)
                ev = h.event
                if h.kind != "event" or ev is None:
                    raise _REFUSED
                p = ev.payload
                if p is not None and (m := p.message) is not None:
                    m = p.message = loads(memoryview(m))  # type: ignore[arg-type]
                    if m is not None:
                        convert(m, _MessageHead)
            except _LEFT:
                h = self._line(n, raw)
                if h is None:
                    continue
                ev = h.event
            if ev.type is None:  # (its timestamp still counts as the last one: in the batch)
                diags.append(
                    Diagnostic(n, "unknown_entry", f"{name}: line {n}: event without a type; NextClaw's replay ignores it")
                )
            ns.append(n)
            evs.append(ev)
            stamps.append(h.timestamp)
            if len(ns) == BATCH:
                self._replay_batch(ns, evs, stamps)
                ns, evs, stamps = [], [], []
        self._replay_batch(ns, evs, stamps)

    def _replay_batch(self, ns: list[int], evs: list[_Event], stamps: list[str | None]) -> None:
        """Events (each with a type) to the replay, each with its line's timestamp when that is a
        time, else the last one that was (`_times`)."""
        rp = self.replay
        past, continues = rp.past_segment, rp._continues
        events = self.events
        waiting = self.held is not None
        for n, ev, ts in zip(ns, evs, self._times(stamps), strict=True):
            t = ev.type
            if t is None:  # (said when read)
                continue
            p = ev.payload
            if p is None:
                p = _NO_PAYLOAD
            if t in _THROWING and self.thrown is None:
                if self.as_written and n in self.as_written:  # (a line the field check mended: as written, `_checked`)
                    why = self.as_written.pop(n)
                elif p.messageId is not None and t in _TEXT_EVENTS:
                    why = None  # (`replay_throws` of most events, inline: a streamed part of a named message)
                else:
                    why = replay_throws(t, p.message, p.messageId, p.delta)
                if why is not None:
                    self.thrown = (n, why)
            elif (
                t == "message.text-end"
                and p.messageId is None
                and self.thrown is None
                and rp.streaming is None
                and rp.seg is None
                and not waiting
                and n not in self.ended_with_id
            ):
                # `this.streamingMessage?.id !== payload.messageId` is false for no message id and
                # nothing streaming, so `this.streamingMessage.status` throws
                # (T/agent-conversation-state.manager.ts:271-276; seen on the real kernel). (A null
                # id, which returns there, is taken as a missing one; while replay waits on an
                # interrupted run's error, what streams is not known here: not looked for.)
                self.thrown = (n, "message.text-end without a messageId, nothing streaming")
            if not waiting and t not in _JOURNAL_ONLY and t != "run.error":  # (`_event`'s common case)
                events += 1
                # (`_Replay.event`, inlined: most events go on streaming the open segment)
                seg = rp.seg
                if seg is not None and p.message is None and continues(seg, t, p):
                    seg.events.append((ev, t, p, n, ts))
                else:
                    past(ev, t, p, n, ts)
            else:
                self.events = events
                self._event(n, ev, t, p, ts)
                events = self.events
                waiting = self.held is not None
        self.events = events

    def _times(self, stamps: list[str | None]) -> list[str]:
        """Each timestamp that Date.parse reads as a time, any other the last one that is (`last_ts`
        carried from batch to batch). A batch of toISOString()s only (NextClaw's own) is checked at
        once (`_all_iso`): then each is itself."""
        if stamps and _all_iso(stamps):
            self.last_ts = stamps[-1]  # type: ignore[assignment]
            return stamps  # type: ignore[return-value]
        out: list[str] = []
        last_ts, minutes = self.last_ts, _MINUTES
        for ts in stamps:
            if not ts or (not (  # (`_is_time`, a toISOString() of a minute met before read here)
                len(ts) == 24
                and ts[23] == "Z"
                and (minute := minutes.get(ts[:17])) is not None
                and minute == minute
                and ts[17:20] in _SECONDS
                and ts[20:23] in _MILLIS
            ) and not _is_time(ts)):
                ts = last_ts
            last_ts = ts or last_ts
            out.append(ts)  # type: ignore[arg-type]
        self.last_ts = last_ts
        return out

    def _line(self, n: int, raw: bytes) -> _Line | None:
        """A line `_RawLine` leaves: parsed whole, then `_line_head`, else the check's path (None
        for a line that is no JSON object, said)."""
        try:
            o = orjson.loads(raw)
        except orjson.JSONDecodeError as e:
            self.diags.append(
                Diagnostic(
                    n, "malformed_json", f"{self.name}: line {n}: not valid JSON ({_line_error(raw, e)}); NextClaw skips it too"
                )
            )
            return None
        try:
            if not _TRY_FAST:
                raise _REFUSED
            h: _Line | None = _line_head(o)
        except msgspec.ValidationError:
            h = self._checked(n, o)
            if h is None:
                return None
        if h.kind != "event" or h.event is None:
            self._other(n, o, h)
            return None
        return h

    def _checked(self, n: int, o: Any) -> _Line | None:
        """A line that `_line_head` refuses: SPEC's check says why (its fields of another type
        removed), then it converts; None for a line that is no object."""
        name = self.name
        if type(o) is not dict:
            self.diags.append(
                Diagnostic(
                    n,
                    "malformed_json",
                    f"{name}: line {n}: a JSON {type(o).__name__}, not an entry object; NextClaw skips it too",
                )
            )
            return None
        ev = o.get("event")
        if isinstance(ev, dict) and isinstance(ev.get("type"), str) and ev["type"] in _THROWING:  # (as written: the check removes wrong types)
            pl = ev.get("payload") if isinstance(ev.get("payload"), dict) else {}
            self.as_written[n] = replay_throws(ev["type"], pl.get("message"), pl.get("messageId"), pl.get("delta"))
        elif isinstance(ev, dict) and ev.get("type") == "message.text-end":
            pl = ev.get("payload")
            if isinstance(pl, dict) and pl.get("messageId") is not None:
                self.ended_with_id.add(n)  # (an id of another type: it returns, `_replay_batch`)
        wrong: list[WrongType] = []
        _CHECK(o, "", wrong)
        if wrong:
            self.diags += line_diagnostics(n, wrong, f"{name}: line {n}")
        return _line_head(o)

    def _other(self, n: int, o: dict[str, Any], h: _Line) -> None:
        """A line that is no event with an event object: the metadata, or one NextClaw skips."""
        name, kind = self.name, h.kind
        if kind == "metadata":
            self.meta = o
        elif "type" in o and "data" in o and kind == "event":
            self.diags.append(
                Diagnostic(
                    n,
                    "unknown_entry",
                    f"{name}: line {n}: a legacy session-store event (type/data), not an NCP journal event; skipped",
                )
            )
        else:
            self.diags.append(
                Diagnostic(
                    n,
                    "unknown_entry",
                    f"{name}: line {n}: _type {quote(kind)} is neither 'metadata' nor 'event'; NextClaw skips it",
                )
            )

    def _event(self, n: int, ev: _Event, t: str, p: _Payload, ts: str) -> None:
        i = self.events
        self.events += 1
        if t in _JOURNAL_ONLY:
            return
        interrupted = t == "run.error" and p.interrupted is True
        if self.held is None and not interrupted:
            # No interrupted run.error yet: nothing can supersede one (only a later event does), so
            # `_superseded`'s bookkeeping starts with the first.
            self.replay.event(ev, t, p, n, ts)
            return
        if interrupted:
            self.interrupted.append((i, p.messageId, p.runId))
            if self.held is None:
                self.held = []
        elif t == _SNAPSHOT or t in _NAMING or (t in _STREAMING and p.messageId is not None):
            # The last event (by index) naming each message and run.
            message = p.message
            mid = message.get("id") if message else p.messageId if t != _SNAPSHOT else None
            if isinstance(mid, str):
                self.last_msg[mid] = i
            rid = p.runId
            if rid is not None and t != _SNAPSHOT:
                self.last_run[rid] = i
        self.held.append((i, n, ev, t, p, ts))  # type: ignore[union-attr]

    def finish(self) -> None:
        """Replay what waited, without the interrupted `run.error`s a later event supersedes."""
        if self.held is None:
            return
        last_msg, last_run = self.last_msg, self.last_run
        skip = {
            i
            for i, mid, rid in self.interrupted
            if last_msg.get(mid, -1) > i or last_run.get(rid, -1) > i  # type: ignore[arg-type]
        }
        held, self.held = self.held, None
        for i, n, ev, t, p, ts in held:
            if i not in skip:
                self.replay.event(ev, t, p, n, ts)


_CHECK = checker(SPEC)
BATCH = 4096  # events handed to the replay at a time (`_Reader.read`)


def _all_iso(stamps: list[str | None]) -> bool:
    """Is each of these a toISOString() that `_is_time` reads as a time? Checked in C for them all
    at once (issue 15: a regex over them joined cost a twentieth of the load): their bytes joined,
    each digit read as 0, against the shape repeated; the minutes' and seconds' tens each 0-5; then
    each distinct date and hour by `_hour_ms` (a valid date, not year 0000; an hour 00-23)."""
    try:
        joined = "\n".join(stamps)  # type: ignore[arg-type]
    except TypeError:  # (a line without one)
        return False
    return iso_shaped(joined, len(stamps)) and all(_hour_ms(h) is not None for h in set(map(_DATE_HOUR, stamps)))  # type: ignore[arg-type]


def iso_shaped(joined: str, n: int) -> bool:
    """Whether each of the `n` strings `joined` by newlines has a toISOString()'s shape
    (`YYYY-MM-DDTHH:MM:SS.mmmZ`, ASCII digits), its minutes' and seconds' tens each 0-5: checked
    in C over the join (each digit read as 0, against the shape repeated; the tens read down the
    join's columns, a time every 25 bytes). The date and hour are the caller's to check."""
    try:
        text = joined.encode()
    except UnicodeEncodeError:  # (a lone surrogate)
        return False
    # (the shape's bytes are ASCII, so a character of more bytes never matches: each is an ASCII one)
    return (
        text.translate(_DIGITS_AS_ZERO) == (_ISO_SHAPE * n)[:-1]
        and not text[14::25].translate(None, b"012345")  # (minutes' tens)
        and not text[17::25].translate(None, b"012345")  # (seconds' tens)
    )


# A toISOString() with its digits read as 0 and a newline (as `_all_iso` joins them: after each but
# the last), and the `YYYY-MM-DDTHH:` it opens with.
_DIGITS_AS_ZERO = bytes.maketrans(b"0123456789", b"0" * 10)
_ISO_SHAPE = b"0000-00-00T00:00:00.000Z\n"
_DATE_HOUR = itemgetter(slice(0, 14))
_NAMING = frozenset({"message.completed", "run.finished"})


def build(
    data: bytes,
    name: str,
    upto: int | None,
    diags: list[Diagnostic] | None = None,
    selector: str | None = None,
) -> Ledger:
    return _build(_lines(data), name, upto, diags if diags is not None else [], selector)


def _build(
    lines: Iterator[bytes],
    name: str,
    upto: int | None,
    diags: list[Diagnostic],
    selector: str | None = None,
) -> Ledger:
    rp = _Replay()
    reader = _Reader(name, diags, rp)
    reader.read(lines, upto)
    meta = reader.meta
    if not reader.events:
        if reader.content and meta is None and not any(d.problem == "malformed_json" for d in diags):
            raise LoadError(f"{name}: line 1: not a NextClaw NCP journal (no '_type': 'event' lines)")
        # NextClaw replays no event and starts the session empty (its journal store lists no message,
        # K/utils/ncp-agent-session-replay-event.utils.ts; the real kernel sent only the new message):
        # an empty session, said.
        diags.append(
            Diagnostic(
                upto or 1,
                "empty_session",
                f"{name}: line {upto or 1}: the journal holds no events"
                + (" up to this line" if upto is not None else "")
                + ": NextClaw starts the session empty, and its next request holds only what is sent next",
                severity="info",
            )
        )
    side, problem = _sidecar(name)
    if problem:
        diags.append(Diagnostic(0, "metadata_sidecar", problem, severity="error"))
    meta = side or meta
    reader.finish()
    msgs = rp.result()
    session_id = next((m.obj.get("sessionId") for m in msgs if isinstance(m.obj.get("sessionId"), str)), None)
    if selector is not None and selector not in (session_id, _safe_name(session_id or "")):
        raise LoadError(f"{name}: this journal holds session {session_id!r}, not {selector!r}")
    led = Ledger(
        path=name, format=NAME, session_id=session_id, header=None, records=[], diagnostics=diags, version=1
    )
    led.header = {
        "agent_id": meta.get("agent_id") if meta else None,
        "created_at": meta.get("created_at") if meta else None,
        "metadata": meta.get("metadata") if meta else None,
    }
    if reader.thrown is not None:
        _refused(led, *reader.thrown)
    source = _records(led, msgs)
    led.leaf_seq = len(led.records) - 1 if led.records else None
    _apply_checkpoints(led, msgs, source)
    _compare_metadata(led, meta)
    return led


def _refused(led: Ledger, line: int, why: str) -> None:
    """NextClaw's replay throws at this line: the session does not load, and every send to it fails."""
    led.runtime_rejects_file = True
    led.diagnostics.append(
        Diagnostic(
            line,
            "resume_refused",
            f"{led.path}: line {line}: {why}: NextClaw's replay throws a TypeError here, so the session "
            "does not load and every message sent to it fails; nothing reaches the model",
            severity="error",
        )
    )


# ---------------------------------------------------------------------------------------- records


def _text(parts: list[Any], kinds: tuple[str, ...] = ("text", "rich-text")) -> str:
    return "".join(
        p["text"]
        for p in parts
        if isinstance(p, dict) and p.get("type") in kinds and isinstance(p.get("text"), str)
    )


def _as_text(v: Any) -> str:
    if isinstance(v, str):
        return v
    try:
        return dumps_text(v)
    except TypeError:
        return py_str(v)


def tool_arguments(v: Any) -> Any:
    """A tool call's arguments: a JSON string parsed, anything else (or a string that is not JSON) as is."""
    if isinstance(v, str):
        try:
            return orjson.loads(v)
        except orjson.JSONDecodeError:
            return v
    return v


def _sent_call(p: Any) -> bool:
    """A call the request holds with its result: a tool invocation in state `result` whose result
    is given, a null one too (`part.result !== undefined`, R/utils/message-converter.utils.ts:84;
    the real kernel sent a null result as the tool message "null")."""
    return isinstance(p, dict) and p.get("type") == "tool-invocation" and p.get("state") == "result" and "result" in p


class _Source(RecordSource):
    """The replayed messages, each record's Message built the first time it is asked for."""

    __slots__ = ("entries",)

    def __init__(self) -> None:
        # By record seq: the NCP message, and for a tool-result record the part of its call.
        self.entries: dict[int, tuple[_Msg, dict[str, Any] | None]] = {}

    def obj(self, rec: Record) -> Any:
        return None  # (no "as written" view: what the eager build showed, none)

    def message(self, rec: Record) -> Message | None:
        m, part = self.entries[rec.seq]
        return _message_of(m) if part is None else _result_message(part)

    def extra(self, rec: Record) -> dict[str, Any] | None:
        return None


def _message_of(m: _Msg) -> Message:
    """An NCP message of a role this tool models, as its Message (a sent call's result is a record of its own)."""
    o = m.obj
    role = o.get("role")
    parts = m.parts
    if role == "assistant":
        blocks = []
        for p in parts:  # (the reply tags' mark in a text part: rare, so looked for first)
            if isinstance(p, dict) and p.get("type") == "text" and "[[" in str(p.get("text")):
                parts = sanitized_reply_tags(parts)
                break
        for p in parts:  # (a loop, not a comprehension: a message has one or two parts)
            if isinstance(p, dict):
                blocks.append(_assistant_block(p))
        status = o.get("status")
        return Message("assistant", blocks, "error" if status == "error" else None, status, source_role="assistant")
    if role == "user":
        blocks = []
        for p in parts:
            if isinstance(p, dict):
                kind = p.get("type")
                if kind == "text" or kind == "rich-text":
                    text = p.get("text")
                    # (a text only of whitespace is not sent, buildNcpUserContent,
                    # R/runtime/user-content.utils.ts:209; one that is no string fails the request)
                    if not isinstance(text, str) or text.strip(JS_WHITESPACE):
                        blocks.append(Block("text", str(text or "")))
                    continue
                ref = asset_reference(p) if kind == "file" else None
                blocks.append(Block("other", raw=p) if ref is None else Block("text", ref))
        return Message("user", blocks, source_role="user")
    if role == "tool":
        return Message("tool", [Block("tool_result", _text(parts), call_id=m.id)], source_role="tool")
    return Message("system", [Block("text", _text(parts))], source_role=role)  # system, service


_ASSET_INSTRUCTION = (
    "[Instruction: This file is not embedded in the prompt. If you need to inspect or transform it, "
    "use asset_export to copy it to a normal file path first.]"
)


def _optional_string(v: Any) -> str | None:
    """readOptionalString (R/runtime/user-content.utils.ts:5-11): a string trimmed, None when empty."""
    if not isinstance(v, str):
        return None
    return v.strip(JS_WHITESPACE) or None


def asset_reference(p: dict[str, Any]) -> str | None:
    """The text a user message's file part is sent as (buildNcpUserContent, resolveAssetReferenceBlock
    and formatAssetReferenceBlock, R/runtime/user-content.utils.ts:13-39, :51-69, :172-197, :199-236):
    `[Asset: name]`, `[MIME: type]`, `[Asset URI: …]`, `[Size Bytes: …]`, `[Preview URL: …]` as
    given, and the instruction; None when nothing is sent as text here: a part with no asset URI, URL
    or base64 content (nothing is sent), or an image the model is given as an image (a base64 one, or
    an http(s)/data URL: what is sent depends on the model's vision, not predicted here). Read
    without NextClaw's asset store (an asset URI it holds gives its own name, type and size there)."""
    name = _optional_string(p.get("name")) or "asset"
    mime = _optional_string(p.get("mimeType")) or "application/octet-stream"
    uri, url, b64 = _optional_string(p.get("assetUri")), _optional_string(p.get("url")), _optional_string(p.get("contentBase64"))
    if mime.startswith("image/") and (b64 or (url is not None and re.match(r"(?i)https?://|data:", url))):
        return None
    if not (uri or url or b64):
        return None
    size = p.get("sizeBytes")
    finite = isinstance(size, (int, float)) and not isinstance(size, bool) and size == size and abs(size) != float("inf")
    lines = [f"[Asset: {name}]", f"[MIME: {mime}]"]
    if uri:
        lines.append(f"[Asset URI: {uri}]")
    if finite:
        lines.append(f"[Size Bytes: {js_string(size)}]")
    if url:
        lines.append(f"[Preview URL: {url}]")
    lines.append(_ASSET_INSTRUCTION)
    return "\n".join(lines)


# stripReplyTagsFromText's patterns (N/toolkit/reply-tags.ts:8-9): JavaScript's `\s` is its
# whitespace (JS_WHITESPACE), and its case-insensitive match of these ASCII letters is ASCII's.
_JS_S = "[" + JS_WHITESPACE + "]*"
_REPLY_TO_CURRENT = re.compile(rf"\[\[{_JS_S}reply_to_current{_JS_S}\]\]", re.IGNORECASE | re.ASCII)
_REPLY_TO_ID = re.compile(rf"\[\[{_JS_S}reply_to{_JS_S}:{_JS_S}([^\]]+?){_JS_S}\]\]", re.IGNORECASE | re.ASCII)
# How many times an assistant message whole in the journal is sanitized before it is sent: three,
# seen on the real kernel (its replay's normalizer, T/agent-conversation-message-normalizer.ts:20,
# and on the way to the request, the converter's, R/utils/message-converter.utils.ts:35, among
# them). Each pass strips the tags of the first text part, which goes when nothing is left of it, so
# a later text part's tags go in a later pass. (A streamed message is sanitized once more per
# streaming event that rewrites it: not mirrored, three passes are taken for it too.)
REPLY_TAG_PASSES = 3


def strip_reply_tags(text: str) -> str:
    """stripReplyTagsFromText (N/toolkit/reply-tags.ts:19-35): every `[[reply_to_current]]` cut,
    then the first `[[reply_to: id]]`, the text trimmed after each cut (JavaScript's trim)."""
    if _REPLY_TO_CURRENT.search(text) is not None:
        text = _REPLY_TO_CURRENT.sub("", text).strip(JS_WHITESPACE)
    if _REPLY_TO_ID.search(text) is not None:
        text = _REPLY_TO_ID.sub("", text, count=1).strip(JS_WHITESPACE)
    return text


def sanitized_reply_tags(parts: list[Any], passes: int = REPLY_TAG_PASSES) -> list[Any]:
    """An assistant message's parts as sanitizeAssistantReplyTags leaves them, `passes` times
    (N/toolkit/reply-tags.ts:37-90): the first text part's tags stripped (`strip_reply_tags`), the
    part dropped when its text is then empty (:72-80). The parts given are not changed."""
    for _ in range(passes):
        i = next((k for k, p in enumerate(parts) if isinstance(p, dict) and p.get("type") == "text"), -1)
        if i < 0 or not isinstance(parts[i].get("text"), str):  # (no text part; a non-string: the replay threw)
            break
        text = strip_reply_tags(parts[i]["text"])
        if text and text == parts[i]["text"]:
            break  # (nothing to strip: every later pass leaves it too)
        parts = [*parts[:i], *([{**parts[i], "text": text}] if text else []), *parts[i + 1 :]]
    return parts


def _result_message(p: dict[str, Any]) -> Message:
    """A sent call's result, the tool message NextClaw sends after its assistant message."""
    call = str(p.get("toolCallId") or "")
    return Message(
        "tool",
        [Block("tool_result", _as_text(p["result"]), call_id=call, name=p.get("toolName"))],
        source_role="tool-invocation",
    )


_MODELLED = {"user": ("user", "user"), "system": ("system", "system"), "service": ("system", "service"), "tool": ("tool", "tool")}


# A message record built straight from its fields (no constructor call per record), in Record's
# field order: seq, line, id, parent_id, timestamp, offset, length, role, stop_reason, source_role,
# call_ids, result_id, source, kind, type, runtime_visible, never_sent, message, checkpoint, run_id,
# extra (None: it has none, as `Record(...)` without `extra` gives).
_new = record_from_fields


def _message_records(m: _Msg, seq: int, source: _Source) -> list[Record]:
    """The records of one NCP message, their content left to `source`: what each holds here is
    what `Record._take` would take from its Message."""
    o = m.obj
    role = o.get("role")
    ts = o.get("timestamp")
    if role == "assistant":
        return _assistant_records(m, seq, source)
    modelled = _MODELLED.get(role) if isinstance(role, str) else None
    if modelled is None:
        return [Record(seq, m.line, "unknown", str(role), m.id, None, ts, extra={"message": o})]
    source.entries[seq] = (m, None)
    return [
        _new(
            Record, seq, m.line, m.id, None, ts, 0, 0, modelled[0], None, modelled[1], (),
            m.id if role == "tool" else None, source, "message", "message", True, False, None, None, None, None,
        )
    ]  # fmt: skip


def _assistant_block(p: dict[str, Any]) -> Block:
    """One part of an assistant message as the model said it (a sent call's result is a record of its own)."""
    if p.get("type") == "text":
        return Block("text", str(p.get("text") or ""))
    if p.get("type") == "reasoning":
        return Block("thinking", str(p.get("text") or ""))
    if _sent_call(p):
        return Block("tool_call", call_id=str(p.get("toolCallId") or ""), name=p.get("toolName"), args=tool_arguments(p.get("args")))
    return Block("other", name=p.get("toolName") if p.get("type") == "tool-invocation" else None, raw=p)


def _assistant_records(m: _Msg, seq: int, source: _Source) -> list[Record]:
    """The assistant message, then one tool-result record per call it sent with a result."""
    o = m.obj
    ts = o.get("timestamp")
    parts = o.get("parts")
    mid, line, entries = m.id, m.line, source.entries
    entries[seq] = (m, None)
    head = _new(
        Record, seq, line, mid, None, ts, 0, 0, "assistant", "error" if o.get("status") == "error" else None,
        "assistant", (), None, source, "message", "message", True, False, None, None, None, None,
    )  # fmt: skip
    out = [head]
    if not isinstance(parts, list):
        return out
    calls: list[str] = []
    # (one loop, no comprehension: `_sent_call` of each part inlined; a message has one or two)
    for p in parts:
        if (
            isinstance(p, dict)
            and p.get("type") == "tool-invocation"
            and p.get("state") == "result"
            and "result" in p
        ):
            call = str(p.get("toolCallId") or "")
            k = seq + len(out)
            entries[k] = (m, p)
            out.append(
                _new(
                    Record, k, line, f"{mid}#{call}", None, ts, 0, 0, "tool", None, "tool-invocation", (), call, source,
                    "message", "tool_result", True, False, None, None, None, None,
                )
            )  # fmt: skip
            if call:
                calls.append(call)
    if calls:
        head.call_ids = tuple(calls)
    return out


def _records(led: Ledger, msgs: list[_Msg]) -> _Source:
    source = _Source()
    records = led.records
    for m in msgs:
        o = m.obj
        # (`_timeline_checkpoint`, called only for a message with metadata)
        tl = _timeline_checkpoint(o) if o.get("metadata") is not None else None
        seq = len(records)
        if tl is None:  # (most messages: no compaction to tell of)
            role = o.get("role")
            if role == "assistant":
                records += _assistant_records(m, seq, source)
                continue
            records += _message_records(m, seq, source)
            if role == "user":
                _user_text_fails(led, m, seq)
            continue
        cp = _compressed_checkpoint(tl)
        if cp is not None:
            led.records.append(
                Record(
                    seq,
                    m.line,
                    "checkpoint",
                    "context_compaction",
                    m.id,
                    None,
                    m.obj.get("timestamp"),
                    extra={"checkpoint": cp},
                )
            )
            continue
        led.diagnostics.append(
            Diagnostic(
                m.line,
                "compaction_report",
                f"{led.path}: line {m.line}: context compaction {quote(tl.get('id', '?'))} ended {quote(tl.get('status', '?'))}: "
                "nothing was compacted (the previous checkpoint stays), and NextClaw sends its timeline text "
                f"{_text(m.parts)!r} to the model as a system message",
                severity="warning" if tl.get("status") in ("failed", "cancelled") else "info",
                seqs=[seq],
            )
        )
        led.records.extend(_message_records(m, seq, source))
    return source


def _user_text_fails(led: Ledger, m: _Msg, seq: int) -> None:
    """A user message with a text part whose text is no string: building a request that holds it
    fails (`part.text.trim()`, R/runtime/user-content.utils.ts:209, a TypeError the real kernel
    wrote as `run.error` "part.text.trim is not a function"; nothing was sent): `request_fails`."""
    for p in m.parts:
        if isinstance(p, dict) and p.get("type") in ("text", "rich-text") and not isinstance(p.get("text"), str):
            led.diagnostics.append(
                Diagnostic(
                    m.line,
                    FAILS_ON_SEND,
                    f"{led.path}: line {m.line}: user message {quote(m.id)} has a {p.get('type')} part whose text is "
                    f"{'missing' if p.get('text') is None else type(p.get('text')).__name__}, not a string: NextClaw "
                    "fails building a request that holds it (part.text.trim is not a function)",
                    severity="error",
                    seqs=[seq],
                )
            )
            return


# ---------------------------------------------------------------------------------------- checkpoints


def _latest(led: Ledger) -> Record | None:
    """readLatestContextCompactionMarker: the latest updatedAt wins, a tie goes to the later one."""
    best: Record | None = None
    best_t = float("nan")
    for r in led.records:
        if r.kind != "checkpoint":
            continue
        t = _ms((r.extra or {})["checkpoint"].get("updatedAt"))
        if best is None or t >= best_t:
            best, best_t = r, t
    return best


def _owner(r: Record) -> str | None:
    """The NCP message a record came from (tool records share their assistant message's fate)."""
    return r.id.split("#", 1)[0] if r.type == "tool_result" and r.id else r.id


def _ids(v: Any) -> set[str]:
    return {x for x in v if isinstance(x, str) and x} if isinstance(v, list) else set()


def _opening(text: str) -> str:
    return " ".join(text.split())[:32]


def _quoted(text: str, summary: str) -> bool:
    """Is this text's opening quoted in a deterministic recovery's summary (`> ` lines)?"""
    head = _opening(text)
    flat = " ".join(line.removeprefix(">").strip() for line in summary.splitlines())
    return len(head) >= 8 and head in " ".join(flat.split())


def _ranges(path: list[Record]) -> list[tuple[str, str]]:
    """The runs of records with an id: (first id, last id) of each. The runs are cut where an id is
    None, found in C (`list.index`), not record by record (most often one run: every record has one)."""
    ids = list(map(_ID, path))
    out: list[tuple[str, str]] = []
    start, n = 0, len(ids)
    while start < n:
        try:
            end = ids.index(None, start)
        except ValueError:
            end = n
        if end > start:
            out.append((ids[start], ids[end - 1]))
        start = end + 1
    return out


@dataclass
class _Regular:
    """The message records, each with its NCP message's id and its time (read once for every checkpoint)."""

    records: list[Record]
    owners: list[str | None]
    times: list[float]
    # Whether `times` never go down and none is NaN: then the records after a time are the last ones.
    in_order: bool = False

    @classmethod
    def of(cls, led: Ledger, source: _Source) -> _Regular:
        regular = [r for r in led.records if r.kind == "message"]
        # (a message record's timestamp is its NCP message's: the time the replay read once)
        entries = source.entries
        owners = [r.id.split("#", 1)[0] if r.type == "tool_result" and r.id else r.id for r in regular]  # (`_owner`)
        times = [entries[r.seq][0].t for r in regular]
        in_order = _IN_ORDER and not any(map(isnan, times)) and times == sorted(times)
        return cls(regular, owners, times, in_order)


_ID, _SEQ = attrgetter("id"), attrgetter("seq")
# Whether a checkpoint other than the applied one splits the records in time order by one bisection
# (`_make_checkpoint`; the tests turn it off, to hold it against each record's fate).
_IN_ORDER = True


def _apply_checkpoints(led: Ledger, msgs: list[_Msg], source: _Source) -> None:
    latest = _latest(led)
    if latest is None:  # (no checkpoint: nothing to apply)
        return
    prev_rep: set[int] = set()
    prev_summary = ""
    by_seq_obj = {m.id: m for m in msgs}
    regular = _Regular.of(led, source)
    for r in led.records:
        if r.kind != "checkpoint":
            continue
        cp = (r.extra or {})["checkpoint"]
        if latest is not None and r.seq > latest.seq:
            r.kind = "meta"  # an older checkpoint written later in order: never applied
            led.diagnostics.append(
                Diagnostic(
                    r.line,
                    "compaction_report",
                    f"{led.path}: line {r.line}: checkpoint {quote(cp.get('id'))} is not applied: "
                    f"checkpoint {quote((latest.extra or {})['checkpoint'].get('id'))} has a later updatedAt",
                    severity="warning",
                    seqs=[r.seq],
                )
            )
            continue
        prev_rep = _make_checkpoint(led, r, cp, prev_rep, prev_summary, by_seq_obj, regular, applied=r is latest)
        prev_summary = cp["summary"]
        _report(led, r, cp)


def _represented(dropped: list[Record], summary: str, prev_summary: str, prev_rep: set[int]) -> tuple[set[int], list[Record]]:
    """What an emergency checkpoint's summary (recovery "deterministic-recent-context": it quotes
    recent source messages) stands for of the records it drops: those it quotes, and what the
    previous summary stood for when it quotes that one (the previous summary is one of its source
    messages). The seqs, and the records in record order."""
    rep = {r.seq for r in dropped if _quoted(r.message.text() if r.message else "", summary)}
    if _quoted(prev_summary, summary):
        rep |= prev_rep & set(map(_SEQ, dropped))
    return rep, [r for r in dropped if r.seq in rep]


def _make_checkpoint(
    led: Ledger,
    rec: Record,
    cp: dict[str, Any],
    prev_rep: set[int],
    prev_summary: str,
    msgs: dict[str, _Msg],
    regular: _Regular,
    applied: bool,
) -> set[int]:
    n_before = bisect_left(regular.records, rec.seq, key=lambda r: r.seq)
    before = regular.records[:n_before]
    preserved, retained = _ids(cp.get("preservedUserMessageIds")), _ids(cp.get("retainedMessageIds"))
    until = covered_until_ms(cp)
    cont_id = cp.get("continuationMessageId")
    cont_n = cp.get("continuationMessageCoveredPartCount")
    partial = isinstance(cont_n, int) and not isinstance(cont_n, bool) and cont_n >= 0
    cont = msgs.get(cont_id or "") if partial and isinstance(cont_id, str) else None  # (ids are strings)
    cont_fate = "after" if cont is not None and len(cont.parts) > cont_n else None  # type: ignore[operator]

    # Where each message record goes (preserved, retained, after coveredUntil, or dropped): every
    # record for the applied checkpoint, the records before it for any other.
    n = len(regular.records) if applied else n_before
    common = not preserved and not retained and not partial  # (the common checkpoint: each record by its time alone)
    fate: dict[int, str | None] = {}
    split = -1
    if common and regular.in_order:
        # (those after coveredUntil are the last ones, from `split` on: no fate needed beyond the lists)
        split = bisect_right(regular.times, until, 0, n)
        dropped, kept = before[:split], before[split:]
    else:
        if common:
            fate = {r.seq: "after" if t > until else None for r, t in zip(regular.records[:n], regular.times[:n], strict=True)}
        else:
            fate = _fates(regular, n, preserved, retained, until, cont_id if partial else _ABORTED, cont_fate)
        dropped = [r for r in before if fate[r.seq] is None]
        kept = [r for r in before if fate[r.seq] is not None]
    diag = cp.get("summaryDiagnostics") if isinstance(cp.get("summaryDiagnostics"), dict) else {}
    deterministic = diag.get("recovery") == "deterministic-recent-context"
    summary = cp["summary"]
    rep, represented = _represented(dropped, summary, prev_summary, prev_rep) if deterministic else (set(map(_SEQ, dropped)), dropped)
    usage = diag.get("providerUsage") if isinstance(diag.get("providerUsage"), dict) else None
    finish = diag.get("finishReason")
    rec.checkpoint = Checkpoint(
        summary=summary,
        tokens_before=cp.get("originalEstimatedTokens")
        if isinstance(cp.get("originalEstimatedTokens"), int)
        else None,
        trigger=cp.get("phase") if isinstance(cp.get("phase"), str) else None,
        failure_reason="summary_provider" if deterministic else None,
        usage=Usage(_int(usage.get("inputTokens")), _int(usage.get("outputTokens"))) if usage else None,
        truncated=(isinstance(finish, str) and finish.strip().lower() in TRUNCATED_FINISH_REASONS) or None,
        details=cp,
        explicit_boundary=before[-1].id if before else None,
        explicit_retains=[i for i in map(_ID, kept) if i is not None],
        explicit_represents=_ranges(represented),  # (dropped, hence represented, records: in record order)
    )
    if applied:
        records, in_order = regular.records, regular.in_order
        if split < 0:
            # (each list in record order, so a sublist of records whose times never go down when in_order)
            lists = [[r for r in records if fate[r.seq] == f] for f in ("preserved", "retained", "after")]
            wrong = [r for r in records if r.seq > rec.seq and fate[r.seq] != "after"]
        else:  # (`split` made above: the records from it on are after coveredUntil)
            lists = [[], [], records[split:]]
            wrong = records[n_before:split]
        preserved_recs, retained_recs, after = lists
        later = _check_order(led, rec, wrong, after, in_order)
        # The records after the checkpoint follow it in file order, unless NextClaw drops one (at
        # or before coveredUntil, or a preserved or retained one, which it sends in its place) or
        # sends them in another order: then the history holds them all where NextClaw sends them
        # (the projection places every regular message, before the checkpoint or after it,
        # context-compaction.utils.ts:185-231; the real kernel did).
        fates = (preserved_recs, retained_recs, after if later else [r for r in after if r.seq < rec.seq])
        rec.checkpoint.replacement = _replacement(rec, cp, fates, msgs, partial, cont_id, cont_n, in_order)
        rec.checkpoint.replacement_holds_later = later
    return rep


def covered_until_ms(cp: dict[str, Any]) -> float:
    """`Date.parse(checkpoint.coveredUntil ?? checkpoint.updatedAt)` (context-compaction.utils.ts:106,
    :139-141): `updatedAt` only when coveredUntil is null or missing; any other value parsed as
    JavaScript parses its string (`js_date_parse`). NaN: no message is after it."""
    v = cp.get("coveredUntil")
    if v is None:
        v = cp.get("updatedAt")
    return js_date_parse(v if isinstance(v, str) else js_string(v))


def js_string(v: Any) -> str:
    """JavaScript's String() of a JSON value (as Date.parse converts its argument)."""
    if v is None:
        return "null"
    if v is True or v is False:
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if v.is_integer() and abs(v) < 1e21:
            return str(int(v))
        return repr(v)  # (a fraction as JavaScript writes it; an exponent's form may differ: NaN both ways)
    if isinstance(v, list):
        return ",".join("" if x is None else js_string(x) for x in v)
    if isinstance(v, dict):
        return "[object Object]"
    return str(v)


# V8's fallback (legacy) parse of a lone number, as the real kernel read a numeric coveredUntil:
# "5" -> 2001-05-01, "0" -> 2000-01-01, "13" to "31" NaN, "32" to "49" 2032 to 2049, "50" to "99"
# 1950 to 1999, from "100" the year (to 275760), a sign ignored, "1.5" -> 2001-01-05; local time.
_LONE_NUMBER = re.compile(r"[-+]?([0-9]+)(?:\.([0-9]+))?")


def js_date_parse(s: str) -> float:
    """Date.parse of a string: the ISO forms with an offset as `_ms` reads them; a date alone
    (UTC), a date and time without an offset (local time) and a lone number (V8's fallback,
    `_LONE_NUMBER`) as V8 reads them; anything else NaN (V8 reads more forms: "Aug 20 2026" is a
    date there, NaN here)."""
    t = _ms(s)
    if t == t:
        return t
    m = _LONE_NUMBER.fullmatch(s.strip(JS_WHITESPACE))  # (" 5 " is a number there; "...Z " is NaN)
    if m is not None:
        n, frac = int(m[1]), m[2]
        if frac is not None:  # month.day, in 2001
            return _local_ms(2001, n, int(frac)) if len(m[1]) <= 2 and len(frac) <= 2 else float("nan")
        if n == 0:
            return _local_ms(2000, 1, 1)
        if n <= 12:
            return _local_ms(2001, n, 1)
        if n <= 31:
            return float("nan")
        return _local_ms(2000 + n if n < 50 else 1900 + n if n < 100 else n, 1, 1)
    try:
        d = datetime.fromisoformat(s)
    except ValueError:
        return float("nan")
    if d.tzinfo is not None:
        return float("nan")
    if len(s) == 10:  # a date alone: UTC
        return timegm(d.timetuple()) * 1000.0
    return _local_ms(d.year, d.month, d.day, d.hour * 3600 + d.minute * 60 + d.second) + d.microsecond // 1000


def _local_ms(y: int, mo: int, d: int, secs: int = 0) -> float:
    """A local date (and seconds into it) in ms; NaN for no such date; past year 9999 (where V8
    still has dates to 275760) a time after every timestamp Python reads."""
    if y > 9999:
        return 8.64e15 if y <= 275760 else float("nan")
    try:
        return (datetime(y, mo, d).timestamp() + secs) * 1000.0
    except (ValueError, OverflowError, OSError):
        return float("nan")


def _fates(
    regular: _Regular, n: int, preserved: set[str], retained: set[str], until: float, cont_id: Any, cont_fate: str | None
) -> dict[int, str | None]:
    """Where each of the first n message records goes: preserved, retained, after coveredUntil, or
    dropped (None); `cont_id`: the continuation message's id (`_ABORTED`: none is partial)."""
    fate: dict[int, str | None] = {}
    for r, own, t in zip(regular.records[:n], regular.owners[:n], regular.times[:n], strict=True):
        if own in preserved and r.role == "user" and r.type == "message":
            fate[r.seq] = "preserved"
        elif own in retained:
            fate[r.seq] = "retained"
        elif own in preserved:
            fate[r.seq] = None  # a preserved id that is no user message: neither list takes it
        elif own == cont_id:
            fate[r.seq] = cont_fate
        else:
            fate[r.seq] = "after" if t > until else None
    return fate


def _int(v: Any) -> int:
    return v if isinstance(v, int) and not isinstance(v, bool) and v >= 0 else 0


def _by_time(recs: list[Record], in_order: bool) -> list[Record]:
    """JS's stable sort by Date.parse (a NaN compares equal, so it keeps its place among equals);
    `in_order`: records taken in order from `_Regular.records` whose times never go down (their
    message's time is their timestamp's), so already sorted."""
    return recs if in_order else sorted(recs, key=lambda r: _sort_key(_ms(r.timestamp)))


def _sort_key(t: float) -> float:
    return t if t == t else 0.0


def summary_block(summary: str) -> str:
    """The summary as the request holds it: the preamble, a blank line and the summary
    (buildCompressedContextSystemText, context-compaction.utils.ts:30-36), trimmed as the model
    input builder trims each block of its one system message (`readSystemContent` and the join,
    K/services/agent-run-model-input-builder.service.ts:32, :90-93): the summary's trailing
    whitespace is not sent."""
    return f"{PREAMBLE}\n\n{summary}".rstrip(JS_WHITESPACE)


def _replacement(
    rec: Record,
    cp: dict[str, Any],
    fates: tuple[list[Record], list[Record], list[Record]],
    msgs: dict[str, _Msg],
    partial: bool,
    cont_id: Any,
    cont_n: Any,
    in_order: bool,
) -> list[HistoryItem]:
    """The history the applied checkpoint installs; `fates`: the message records it preserves, retains
    and keeps as after coveredUntil (those before it), each list in record order."""
    out = [HistoryItem("system", summary_block(cp["summary"]), kind="summary", id=str(cp.get("id") or rec.id))]
    trunc = (
        cp.get("truncatedPreservedUserMessage")
        if isinstance(cp.get("truncatedPreservedUserMessage"), dict)
        else {}
    )
    preserved, retained, after = fates
    for r in _by_time(preserved, in_order):
        if trunc.get("messageId") == r.id and isinstance(trunc.get("text"), str) and trunc["text"]:
            out.append(HistoryItem("user", trunc["text"], id=r.id))
        else:
            out.append(HistoryItem("user", seq=r.seq, id=r.id))
    if cp.get("phase") == "mid-run":
        out.append(HistoryItem("user", CONTINUATION_TEXT, id=f"{rec.id}:continuation"))
    for r in _by_time(retained, in_order):
        out.append(HistoryItem(r.role or "user", seq=r.seq, id=r.id))
    for r in _by_time(after, in_order):
        m = msgs.get(_owner(r) or "")
        if partial and _owner(r) == cont_id and m is not None:
            rest = m.parts[cont_n:]
            if r.type == "tool_result":
                if any(_sent_call(p) and f"{m.id}#{p.get('toolCallId')}" == r.id for p in rest):
                    out.append(HistoryItem("tool", seq=r.seq, id=r.id, call_id=r.result_id))
                continue
            # Its parts not covered, as the converter sends them (R/utils/message-converter.utils.ts:77-134):
            # the text parts' text and every call sent with its result (the real kernel sent them;
            # the reasoning it sends is not held by an item of this kind).
            calls = [str(p.get("toolCallId") or "") for p in rest if _sent_call(p)]
            out.append(
                HistoryItem(
                    r.role or "assistant",
                    _text(rest, ("text",)),
                    id=r.id,
                    call_id=calls[0] if len(calls) == 1 else None,
                    call_ids=tuple(calls),
                )
            )
            continue
        out.append(HistoryItem(r.role or "user", seq=r.seq, id=r.id))
    return out


def _check_order(led: Ledger, rec: Record, wrong: list[Record], tail: list[Record], in_order: bool) -> bool:
    """Do the message records after the checkpoint leave file order in NextClaw's request (said)?
    `wrong`: those after it not after coveredUntil; `tail`: those after coveredUntil, in record order."""
    if wrong or (not in_order and [r.seq for r in _by_time(tail, False)] != [r.seq for r in tail]):
        led.diagnostics.append(
            Diagnostic(
                rec.line,
                "prediction_order",
                f"{led.path}: line {rec.line}: the messages after checkpoint {rec.id!r} are not in timestamp order, or some "
                "of them are covered by it: NextClaw sends them sorted by timestamp and drops those at or before coveredUntil, "
                "and so does the predicted request"
                + (f" (records {', '.join(str(r.id) for r in wrong[:5])})" if wrong else ""),
                severity="info",
                seqs=[r.seq for r in wrong],
            )
        )
        return True
    return False


def _plain(v: Any) -> str:
    """A number or short string a file holds, as written; anything else quoted (shortened, and a
    value nested past Python's repr shown to a few levels only)."""
    return str(v) if isinstance(v, int | float) or (isinstance(v, str) and len(v) <= 80) else quote(v)


def _report(led: Ledger, rec: Record, cp: dict[str, Any]) -> None:
    """summaryDiagnostics, in NextClaw's terms (generation service :68-131)."""
    d = cp.get("summaryDiagnostics")
    if not isinstance(d, dict):
        return
    said: list[str] = []
    bad = False
    finish = d.get("finishReason")
    if isinstance(finish, str) and finish.strip().lower() in TRUNCATED_FINISH_REASONS:
        said.append(
            f"the provider stopped at its output limit (finishReason {quote(finish)}, providerMaxOutputTokens {_plain(d.get('providerMaxOutputTokens', '?'))}): a truncated summary"
        )
        bad = True
    n = d.get("attemptCount")
    if isinstance(n, int) and not isinstance(n, bool) and n > 1:
        said.append(f"{n} summary calls spent (attemptCount {n} of {MAX_ATTEMPTS}, each on a smaller input)")
        bad = True
    if d.get("recovery") == "deterministic-recent-context":
        said.append(
            "recovery 'deterministic-recent-context': no provider summary was usable, so NextClaw installed an emergency "
            "checkpoint quoting only recent source messages; older history was dropped, not summarized"
        )
        bad = True
    elif d.get("degraded") is True:
        said.append("degraded: the installed summary was trimmed (validation or the installable budget)")
        bad = True
    raw, inst = d.get("rawSummaryTokens"), d.get("installedSummaryTokens")
    if isinstance(raw, int) and isinstance(inst, int) and raw > inst:
        said.append(f"rawSummaryTokens {raw} > installedSummaryTokens {inst}")
    if not said:
        said.append(f"provider summary, {_plain(n)} call, finishReason {quote(finish)}, installedSummaryTokens {_plain(inst)}")
    led.diagnostics.append(
        Diagnostic(
            rec.line,
            "compaction_report",
            f"{led.path}: line {rec.line}: context compaction {quote(cp.get('id', rec.id))} ({_plain(cp.get('phase', '?'))}, "
            f"coveredMessageCount {_plain(cp.get('coveredMessageCount', '?'))}): " + "; ".join(said),
            severity="warning" if bad else "info",
            seqs=[rec.seq],
        )
    )


def _compare_metadata(led: Ledger, meta: dict[str, Any] | None) -> None:
    """Session metadata `last_context_compaction` (ingestion :131-138) against the journal's latest."""
    md = meta.get("metadata") if meta else None
    last = md.get("last_context_compaction") if isinstance(md, dict) else None
    if not isinstance(last, dict):
        return
    latest = _latest(led)
    mine = (latest.extra or {})["checkpoint"].get("id") if latest is not None else None
    if last.get("id") != mine:
        led.diagnostics.append(
            Diagnostic(
                0,
                "compaction_report",
                f"{led.path}: session metadata last_context_compaction names checkpoint {quote(last.get('id'))} ({quote(last.get('status'))}), "
                f"the journal's latest applied one is {quote(mine)}: NextClaw's budget preview reads the metadata's, the request uses the journal's",
                severity="warning",
            )
        )


def _claims(path: str, head: bytes) -> bool:
    """A journal line is `{"_type":"event", ...}`: cheap on the head, then the whole check."""
    return b'"_type"' in head[:4096] and looks_like_file(path)


FORMAT = Format(
    name=NAME,
    read_only_reason=(
        "NextClaw would read back a `service` timeline message whose metadata.checkpoint is version 1, status "
        "`compressed`, with a string summary (context-compaction.utils.ts:38-43, :185-231; docs/runtimes/nextclaw.md §4-5), "
        "but NextClaw is not installable here to prove it resumes from one this tool writes"
    ),
    label="NextClaw NCP journal",
    runtime=Runtime(
        **RUNTIME_RULES,
        file_rejected="NextClaw's replay of this journal throws (the resume_refused diagnostic names the line), so the "
        "session does not load and no request is sent",
    ),
    claims=_claims,
    load_file=lambda path, _f, _head, selector, upto: load(path, selector, upto),
    looks_like_file=looks_like_file,
    sessions_by_selector=False,
    suffixes=(".jsonl",),
    default_places=DEFAULT_PLACES,
    homes=(HOME,),
    not_session_files=NOT_SESSION_FILES,
)
