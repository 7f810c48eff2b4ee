"""maka's `runtime.sqlite` (github apache/maka, read at f19eede03a829c226be39f001b2684860a3aa1d5;
the issue's 11b368e9 is not in the fetched snapshot). Citations are `path:line` at that commit;
docs/runtimes/maka.md has the research notes.

One database holds every session of a workspace (`FILE#SESSION` picks one; without it the
session `session_metadata` says was used last). Tables read:

- `runtime_events(event_id, session_id, run_id, turn_id, event_seq, payload_json, committed_at)`
  (packages/storage/src/sqlite-runtime-schema.ts:36-54): one `RuntimeEvent` per row
  (packages/core/src/runtime-event.ts:404-434), in the session order maka reads them,
  `committed_at, event_id` (packages/storage/src/sqlite-runtime-store.ts:2705-2714). A row whose
  payload names another id/session/run/turn than its columns is one maka refuses to decode
  (sqlite-runtime-store.ts:3552-3563): we read it and say so.
- `core_agent_runs(session_id, run_id, record_json)` (packages/storage/src/sqlite-core-execution-
  schema.ts:26-39): the run headers (`AgentRunHeader`, packages/core/src/agent-run.ts:144-175).
  The route of every reply is its run's (`modelId`, `llmConnectionSlug`) (`llmConnectionId` where a
  newer header has one), so the proven span per route (seed 002, DESIGN §2) works on maka.
- `core_agent_run_events` rows of type `history_compact_checkpoint_recorded`
  (sqlite-core-execution-schema.ts:41-59; record shape packages/runtime/src/agent-run.ts:519-534)
  and `core_agent_run_projections` (the checkpoint in force).

A record's `line` is its position in the session's timeline: the runtime events, with each
checkpoint row placed at its `event_ts` (never before the event its coverage runs through), so
`--at N` reads the session as its first N timeline entries.

maka's rules for the next request, as this adapter applies them:

1. The checkpoint in force is the projection row's (`core_agent_run_projections`, kept widest /
   source-bound, packages/storage/src/agent-run-store.ts:1254-1268); a NULL row means none
   (:1062-1063, runtime/src/history-compact-ledger.ts:90); no row or an unusable one: recovered from
   the run ledger (history-compact-ledger.ts:103-171: source-bound first, widest `eventCount`,
   the tip of a `previousCheckpointId` chain, newest `ts` then id). `--at N` always recovers.
   Admission: the shape check (runtime/src/history-compact-checkpoint.ts:440-505) and the summary
   check (history-compact-ledger.ts:48-54): a `sections_v1` summary needs the sections Goal,
   Progress, Next Steps, Critical Context in order, each non-empty, and no truncated tail; a legacy
   one only no truncated tail (runtime/src/history-compact-summary-validation.ts:67-72, 93,
   111-158, 177-261). A refused checkpoint is quarantined: never replayed.
2. It applies only if its prefix matches the compactable events (not model-hidden, non-empty,
   runtime/src/history-compact.ts:1011-1013, context-budget-helpers.ts:46-62)
   (`matchHistoryCompactCheckpointPrefix`, history-compact-checkpoint.ts:537-619): the first
   `coverage.eventCount` end exactly at `coverage.through`, the source cursors name the first and
   last, a mid-turn head anchor is the `through` turn's user event, and the SHA-256 over the
   length-prefixed `stableStringify` of those events (:728-738; runtime/src/request-shape.ts:510-
   512, 684-710) equals `coverage.sourceDigest`. Otherwise maka says `coverage_miss` /
   `source_hash_mismatch` and sends the raw history instead (history-compact.ts:288-291).
3. A v3 checkpoint (encrypted provider state) replays only on the connection and model that made
   it (history-compact-checkpoint.ts:398-409; dropped before replay, runtime/src/ai-sdk-
   compaction.ts:1060-1071). The next request's route is the session's `llm_connection_slug` /
   `model` (`session_metadata`), else the newest run header's.
4. On a match the request is: v2, its rendered checkpoint as a user message
   (history-compact-checkpoint.ts:351-364, 423-438); v3, the provider's `openai.compaction`
   item as an assistant message ahead of everything (:366-384; runtime/src/ai-sdk-backend.ts:
   4414-4424), its content encrypted (an opaque summary); then the mid-turn head anchor, then the
   successor events (:628-638). `represents` = the covered prefix, `retains` = the head anchor.
5. Replay of the events (`buildRuntimeEventModelReplayPlan`, runtime/src/model-history.ts:318-734):
   partial (:368-373), model-hidden (:375-384), content-less (:397-409), empty / error content
   (:411-455), system-role (:457-466) and wrong-role events (:470-483, :512-518, :555-567,
   :596-608) are never sent; terminal statuses are diagnostic only (:386-395), so no stop reason is
   dropped; signed thinking in a turn whose calls carry no step id is skipped (:520-535); a call
   with no response is dropped, not answered with a synthetic result (:693-707); a response with
   no call is dropped by the materializer (ai-sdk-backend.ts:4085-4092).

Not modelled: the budget fit that can still skip a matching checkpoint (history-compact.ts:
300-311; the budget is not in the store), maka's deterministic block compaction when no checkpoint
applies (:356-), the steering envelope and inline refs of user text, and the materializer merging a
step's reasoning, text and calls into one wire message (ai-sdk-backend.ts:4129-4217): we show one
item per event. No reply gets `usage`: maka records it per provider request
(`model_call_attempt_recorded`, core/src/model-call-attempt.ts:82-150) or summed per send (the
`token_usage` event, runtime/src/ai-sdk-backend.ts:2811-2818), by run, turn and step number, and
a reply's events carry no step number (runtime/src/ai-sdk-flow.ts:210-282): docs/runtimes/maka.md
§9. The database is opened read-only (`mode=ro`).
"""

from __future__ import annotations

import bisect
import contextlib
import hashlib
import json
import operator
import re
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass, field
from decimal import Decimal
from functools import lru_cache
from typing import Annotated, Any, NewType

import msgspec
import orjson

from inspector.formats import fields, heads, sqlite_files
from inspector.formats.base import Format, Home, HomeOverride, Runtime, StoreGrowth
from inspector.formats.fields import ANY, INT, LIST, NUM, OBJ, STR, Field
from inspector.formats.jsonl import LoadError
from inspector.formats.whole_lines import collector_paused
from inspector.ledger.jsontext import deep, dumps_text, js_string_json, loads, py_str
from inspector.ledger.model import (
    UNREAD,
    Block,
    Checkpoint,
    Diagnostic,
    HistoryItem,
    Ledger,
    Message,
    Record,
    RecordIndex,
    RecordSource,
    Route,
    RunHeader,
    normalize_stop_reason,
    record_from_fields,
)
from inspector.ledger.quoting import quote

NAME = "maka"

# Where maka keeps its stores: the Electron userData of app `Maka` (`Maka Dev` unpackaged),
# workspaces under it (apps/desktop/src/main/main.ts:42, :88).
DEFAULT_PLACES: tuple[str, ...] = (
    "~/.config/Maka/workspaces/*",
    "~/.config/Maka Dev/workspaces/*",
    "~/Library/Application Support/Maka/workspaces/*",
    "~/Library/Application Support/Maka Dev/workspaces/*",
)
# Files beside runtime.sqlite that are not sessions (packages/eval/src/maka-artifacts.ts:88 and
# SQLite's own side files).
NOT_SESSION_FILES: tuple[str, ...] = (
    "runtime.sqlite-*",
    "runtime-host-candidate.log",
    "runtime-policy.json",
)

# The next-request rules (inspector.analysis.runtime.Runtime's fields). maka replays every event
# in order (no tree); terminal statuses are diagnostic only; a call with no response is dropped
# by the adapter (never_sent), not answered; a checkpoint replaces the covered prefix with its own
# items (a user text for v2, an assistant provider item for v3: `Checkpoint.replacement`).
RUNTIME_RULES: dict[str, Any] = {
    "name": NAME,
    "replaces_history": True,
}

CHECKPOINT_EVENT = "history_compact_checkpoint_recorded"
CHECKPOINT_KIND = "maka.history_compact_checkpoint"
SOURCE_POLICY = "maka.compactable_runtime_event_projection.v1"
SECTIONED = "sections_v1"
_TABLES = frozenset({"runtime_events", "core_agent_runs"})
_FOREIGN = frozenset({"sessions", "events", "transcript_events"})  # ADK's and OpenClaw's stores

_CONTENT = OBJ(
    kind=STR(),
    text=STR(),
    signature=STR(),
    id=STR(),
    name=STR(),
    isError=Field((bool,)),
    providerExecuted=Field((bool,)),
    message=STR(),
    code=STR(),
    reason=STR(),
)
EVENT: dict[str, Field] = {
    "id": STR(),
    "invocationId": STR(),
    "runId": STR(),
    "sessionId": STR(),
    "turnId": STR(),
    "ts": NUM(),
    "partial": Field((bool,)),
    "role": STR(),
    "author": STR(),
    "modelVisibility": STR(),
    "status": STR(),
    "content": _CONTENT,
    "refs": OBJ(stepId=STR()),
}
RUN_HEADER: dict[str, Field] = {
    "runId": STR(),
    "sessionId": STR(),
    "turnId": STR(),
    "modelId": STR(),
    "llmConnectionSlug": STR(),
    "llmConnectionId": STR(),
    "createdAt": NUM(),
}
CHECKPOINT_ROW: dict[str, Field] = {
    "type": STR(),
    "id": STR(),
    "runId": STR(),
    "sessionId": STR(),
    "ts": NUM(),
    "data": ANY(checkpoint=OBJ(limitations=LIST(), coverage=OBJ(eventCount=INT(), turnCount=INT()))),
}




# The guard's EVENT as msgspec types: a payload these take has no field `check_fields` removes
# (msgspec takes no bool for a number or a string, no int for a bool, no number past 64 bits), so
# the loader calls the guard itself only on a payload they refuse (tests/test_maka_heads.py).
class _ContentTypes(msgspec.Struct, gc=False):
    kind: str | None = None
    text: str | None = None
    signature: str | None = None
    id: str | None = None
    name: str | None = None
    isError: bool | None = None
    providerExecuted: bool | None = None
    message: str | None = None
    code: str | None = None
    reason: str | None = None


class _RefsTypes(msgspec.Struct, gc=False):
    stepId: str | None = None


class _EventTypes(msgspec.Struct, gc=False):
    id: str | None = None
    invocationId: str | None = None
    runId: str | None = None
    sessionId: str | None = None
    turnId: str | None = None
    ts: heads.Num | None = None
    partial: bool | None = None
    role: str | None = None
    author: str | None = None
    modelVisibility: str | None = None
    status: str | None = None
    content: _ContentTypes | None = None
    refs: _RefsTypes | None = None


assert set(_EventTypes.__struct_fields__) == set(EVENT)
assert set(_ContentTypes.__struct_fields__) == set(_CONTENT.fields or {})
assert set(_RefsTypes.__struct_fields__) == set(EVENT["refs"].fields or {})


# The same payloads, narrower, decoded from the row's text in one pass (`_decode_safe`): a payload
# these take is one orjson reads to the same values, one `_EventTypes` takes (every field of `EVENT`
# typed as there, `ts` an integer only), and one whose `stable_stringify` msgspec's sorted encoder
# writes byte for byte from the Struct (`_orjson_agrees` holds): no float anywhere, no integer orjson
# reads as one (past 64 bits), only RuntimeEvent's own keys (runtime-event.ts:470-500, :346-375) on
# the event, its content and refs (absent: UNSET, which the encoder leaves out; the fields sorted),
# and in what they hold no key maka orders otherwise (an array index, a character past U+DFFF:
# UTF-16 order) or sorts the array of (`required`, `enum`), four levels deep at most. A payload they
# refuse is read by orjson, guarded and walked by `_orjson_agrees` (tests/test_maka_heads.py holds
# the two ways equal).
_Key = Annotated[str, msgspec.Meta(pattern=r"\A(?!\d+\Z|required\Z|enum\Z)[^\ue000-\U0010ffff]*\Z")]
_Plain = str | heads.Int64 | bool | None
# Each level a NewType (msgspec decodes one as its supertype): the decoder's build, at import,
# evaluates and hashes each field's type through typing, which walks a union's every member each
# time: the nested unions' 135 members on each of 27 fields were 18 ms of every command's start,
# spent on this one format's decoder, against about 1 ms so.
_J1 = NewType("_J1", _Plain | list[_Plain] | dict[_Key, _Plain])  # type: ignore[valid-newtype]
_J2 = NewType("_J2", _Plain | list[_J1] | dict[_Key, _J1])  # type: ignore[valid-newtype]
_J3 = NewType("_J3", _Plain | list[_J2] | dict[_Key, _J2])  # type: ignore[valid-newtype]
_J4 = _Plain | list[_J3] | dict[_Key, _J3]
_Str = str | msgspec.UnsetType | None  # (UNSET: absent)
_Bool = bool | msgspec.UnsetType | None
_Any = NewType("_Any", _J4 | msgspec.UnsetType)  # type: ignore[valid-newtype]
_U = msgspec.UNSET


class _SafeContent(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    args: _Any = _U
    attachments: _Any = _U
    code: _Str = _U
    details: _Any = _U
    displayText: _Any = _U
    id: _Str = _U
    inlineReferences: _Any = _U
    isError: _Bool = _U
    kind: _Str = _U
    message: _Str = _U
    name: _Str = _U
    origin: _Any = _U
    providerExecuted: _Bool = _U
    providerOptions: _Any = _U
    providerOutput: _Any = _U
    quotes: _Any = _U
    reason: _Str = _U
    result: _Any = _U
    signature: _Str = _U
    steering: _Any = _U
    text: _Str = _U


class _SafeRefs(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    artifactId: _Any = _U
    operationId: _Any = _U
    parentOperationId: _Any = _U
    parentToolCallId: _Any = _U
    providerEventId: _Any = _U
    providerRequestTraceId: _Any = _U
    sourceInvocationId: _Any = _U
    sourceMessageDigest: _Any = _U
    sourceRunId: _Any = _U
    sourceRuntimeEventHighWater: _Any = _U
    sourceTurnId: _Any = _U
    stepId: _Str = _U
    storedMessageId: _Any = _U
    toolCallId: _Any = _U
    traceEventId: _Any = _U


class _SafeEvent(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    actions: _Any = _U
    author: _Str = _U
    branch: _Any = _U
    content: _SafeContent | msgspec.UnsetType | None = _U
    id: _Str = _U
    invocationId: _Str = _U
    modelVisibility: _Str = _U
    origin: _Any = _U
    partial: _Bool = _U
    refs: _SafeRefs | msgspec.UnsetType | None = _U
    role: _Str = _U
    runId: _Str = _U
    sessionId: _Str = _U
    status: _Str = _U
    ts: heads.Int64 | msgspec.UnsetType | None = _U
    turnId: _Str = _U


# The fields declared in code point order, the order msgspec's sorted output writes them in: so an
# encoder that keeps declared order writes the same bytes (`_STRUCT_JSON`), without sorting each
# Struct's fields as it writes it.
assert all(list(t.__struct_fields__) == sorted(t.__struct_fields__) for t in (_SafeEvent, _SafeContent, _SafeRefs))
assert set(_EventTypes.__struct_fields__) <= set(_SafeEvent.__struct_fields__)
assert set(_ContentTypes.__struct_fields__) <= set(_SafeContent.__struct_fields__)
assert set(_RefsTypes.__struct_fields__) <= set(_SafeRefs.__struct_fields__)


# ---------------------------------------------------------------------------------------- detection


def _tables(con: sqlite3.Connection) -> set[str]:
    return {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}


def _columns(con: sqlite3.Connection, table: str) -> set[str]:
    return {r[1] for r in con.execute(f"PRAGMA table_info({table})")}


def _is_maka(con: sqlite3.Connection) -> bool:
    tables = _tables(con)
    return tables >= _TABLES and not (tables & _FOREIGN) and "payload_json" in _columns(con, "runtime_events")


def looks_like_file(path: str) -> bool:
    """Is this a maka `runtime.sqlite` (SQLite with `runtime_events.payload_json` and
    `core_agent_runs`, and none of ADK's `sessions`/`events` or OpenClaw's `transcript_events`)?
    Reads the head and the schema only; never raises."""
    return bool(sqlite_files.schema_look(path, _is_maka, bool))


# ---------------------------------------------------------------------------------------- maka's own serialization


def js_number(x: float | int) -> str:
    """A number as JavaScript's `JSON.stringify` writes it (shortest round trip, JS exponents)."""
    if isinstance(x, bool):
        return "true" if x else "false"
    if isinstance(x, int):
        return str(x)
    if x != x or x in (float("inf"), float("-inf")):
        return "null"
    _sign, digits_t, exp = Decimal(repr(abs(x))).as_tuple()
    digits = "".join(map(str, digits_t)).rstrip("0") or "0"
    assert isinstance(exp, int)
    n = len("".join(map(str, digits_t))) + exp  # decimal point position
    k = len(digits)
    minus = "-" if x < 0 else ""
    if k <= n <= 21:
        return minus + digits + "0" * (n - k)
    if 0 < n <= 21:
        return minus + digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return minus + "0." + "0" * (-n) + digits
    e = n - 1
    mant = digits[0] + ("." + digits[1:] if k > 1 else "")
    return f"{minus}{mant}e{'+' if e >= 0 else '-'}{abs(e)}"


def _array_index(key: str) -> int | None:
    if key.isdigit() and (key == "0" or key[0] != "0"):
        n = int(key)
        if n < 2**32 - 1:
            return n
    return None


def _js_key_order(keys: list[str]) -> list[str]:
    """`Object.keys(v).sort()` then re-inserted into an object: array-index keys enumerate first in
    numeric order, the rest in UTF-16 code-unit order (request-shape.ts:701-705)."""
    utf16 = sorted(keys, key=lambda k: k.encode("utf-16-be", "surrogatepass"))
    idx = sorted((k for k in utf16 if _array_index(k) is not None), key=lambda k: _array_index(k) or 0)
    return idx + [k for k in utf16 if _array_index(k) is None]




@lru_cache(maxsize=4096)
def _object_keys(keys: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    """Each key of an object in `_js_key_order`, with its JSON and the colon: objects of one shape
    (every event's, every content's) are ordered once."""
    return tuple((k, js_string_json(k) + ":") for k in _js_key_order(list(keys)))


def stable_stringify(value: Any, parent_key: str | None = None) -> str:
    """maka's `stableStringify` (request-shape.ts:510-512, 684-710) over parsed JSON: keys
    sorted, arrays under `required`/`enum` sorted (by code point here; maka uses localeCompare).
    The kinds are tried most common first (an event is mostly strings and objects)."""
    if isinstance(value, str):
        return js_string_json(value)
    if isinstance(value, dict):
        parts = [jk + stable_stringify(value[k], k) for k, jk in _object_keys(tuple(value))]
        return "{" + ",".join(parts) + "}"
    if isinstance(value, list):
        items = [stable_stringify(v) for v in value]
        if parent_key in ("required", "enum"):
            items.sort()
        return "[" + ",".join(items) + "]"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return js_number(value)
    return json.dumps(py_str(value), ensure_ascii=False)


# The values orjson writes as `stable_stringify` does (a float it may not: JS writes `1` for 1.0).
_PLAIN_LEAVES = frozenset({str, int, bool, type(None)})


@lru_cache(maxsize=4096)
def _keys_agree(keys: tuple[str, ...]) -> bool:
    """Does orjson's sorted key order (by code point) agree with `_js_key_order` for an object of
    these keys, none of which holds an array maka sorts (`required`, `enum`)?"""
    return "required" not in keys and "enum" not in keys and [k for k, _ in _object_keys(keys)] == sorted(keys)


def _orjson_agrees(value: Any) -> bool:
    """Is orjson's sorted output of this parsed JSON `stable_stringify`'s (no float, no object
    whose key order or arrays part from maka's)? An integer past 64 bits or a lone surrogate
    orjson refuses: `stable_json` then takes the exact path too."""
    t = type(value)
    if t is dict:
        if not _keys_agree(tuple(value)):
            return False
        values: Any = value.values()
    elif t is list:
        values = value
    else:
        return t in _PLAIN_LEAVES
    return _PLAIN_LEAVES.issuperset(map(type, values)) or all(_orjson_agrees(v) for v in values if type(v) not in _PLAIN_LEAVES)


# Writes orjson's sorted output a third faster (the same bytes: every string and key escaped alike,
# keys in code point order, tests/test_maka.py); an integer past 64 bits it writes as Python does,
# as `stable_stringify` does, and a lone surrogate it refuses.
_SORTED_JSON = msgspec.json.Encoder(order="sorted").encode
# `_SORTED_JSON` of a `_SafeEvent` (tests/test_maka_heads.py): "deterministic" writes a Struct's fields
# in their declared order, which is sorted (asserted where they are declared), and sorts a dict's keys
# as "sorted" does; it spares the sort of every Struct's fields (and the decoder meets the payloads'
# sorted keys in the order it expects them).
_STRUCT_JSON_ENCODER = msgspec.json.Encoder(order="deterministic")
_STRUCT_JSON = _STRUCT_JSON_ENCODER.encode


def stable_json(value: Any) -> bytes:
    """`stable_stringify(value)` as UTF-8: orjson's sorted output (as msgspec writes it) where it is the same."""
    try:
        if _orjson_agrees(value):
            try:
                return _SORTED_JSON(value)
            except (TypeError, UnicodeEncodeError):
                pass
        return stable_stringify(value).encode("utf-8")
    except RecursionError:  # (a value nested past Python's reach: the exact path, with room to recurse)
        return deep(stable_stringify, value).encode("utf-8")


def _digest_update(h: Any, ev: Any, safe: bool = False) -> None:
    """One event's part of the source digest: its stable JSON, length-prefixed. `safe`: the event
    is one `_SafeEvent` takes (msgspec's sorted output is its stable JSON, `_STRUCT_JSON` writes it)."""
    s = _STRUCT_JSON(ev) if safe else stable_json(ev)
    h.update(b"%d:" % len(s))
    h.update(s)
    h.update(b";")


def source_digest(events: list[dict[str, Any]]) -> str:
    """`historyCompactSourceDigest` (history-compact-checkpoint.ts:728-738)."""
    h = hashlib.sha256()
    for ev in events:
        _digest_update(h, ev)
    return "sha256:" + h.hexdigest()


class PrefixDigests:
    """`source_digest` of the first n compactable events for each n a checkpoint row of the session
    states, found in the one pass that reads the events (a digest is a hash over the events in
    order, so every prefix's is a copy of the running hash); the pass stops hashing past the widest.
    The prefix match takes the digest from here, or hashes the events it covers itself.

    Each event's part (its length, ":", its stable JSON, ";") is gathered in `pending` and hashed a
    block at a time (one hash call per `_BLOCK` bytes, not three an event; the same bytes hashed in
    the same order: tests/test_maka.py)."""

    __slots__ = ("buf", "count", "found", "h", "last", "pending", "wanted")

    _BLOCK = 1 << 20

    def __init__(self, wanted: set[int]) -> None:
        self.wanted = wanted
        self.last = max(wanted, default=0)
        self.h = hashlib.sha256()
        self.count = 0
        self.found: dict[int, str] = {}
        self.buf = bytearray()  # (a safe event's stable JSON, written here: no bytes made an event)
        self.pending = bytearray()  # (what is not hashed yet)

    def restart(self) -> None:
        """Forget every event fed."""
        self.h = hashlib.sha256()
        self.count = 0
        self.found = {}
        self.pending = bytearray()

    def feed(self, ev: dict[str, Any], safe: bool = False) -> None:
        """The next compactable event, as stored (`safe`: `_digest_update`'s)."""
        if self.count >= self.last:
            return
        s: bytes | bytearray
        if safe:
            s = self.buf
            _STRUCT_JSON_ENCODER.encode_into(ev, s)
        else:
            s = stable_json(ev)
        pending = self.pending
        pending += b"%d:" % len(s)
        pending += s
        pending += b";"
        self.count += 1
        if self.count in self.wanted:
            self.h.update(pending)
            pending.clear()
            self.found[self.count] = "sha256:" + self.h.copy().hexdigest()
        elif len(pending) >= self._BLOCK:
            self.h.update(pending)
            pending.clear()


# ---------------------------------------------------------------------------------------- summary admission

REQUIRED_SECTIONS = ("## Goal", "## Progress", "## Next Steps", "## Critical Context")
_TEMPLATE_LINES = frozenset(
    {
        "## Goal",
        "[What the user is trying to accomplish]",
        "## Progress",
        "### Done",
        "- [Completed work and changes]",
        "### In Progress",
        "- [Current work]",
        "## Key Decisions",
        "- **[Decision]**: [Brief rationale]",
        "## Next Steps",
        "1. [Ordered list of what should happen next]",
        "## Critical Context",
        '- [Files, commands/results, errors, anything needed to continue; or "(none)"]',
    }
)
_TRUNCATED_TAIL = re.compile(r"(?:\.{3}|[:：,，、;；…(（—])\s*\Z")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_BARE_FENCE = re.compile(r"^(`{3,}|~{3,})$")
_OTHER_H2 = re.compile(r"^ {0,3}##(?!#)(?:\s|$)")
_ANY_HEADING = re.compile(r"^ {0,3}#{1,6}(?:\s|$)")
_RULE = re.compile(r"^\s*([-*_])\s*(?:\1\s*){2,}$")


def summary_defect(summary: str, sectioned: bool) -> str | None:
    """Why maka's loader quarantines this v2 summary (history-compact-ledger.ts:48-54), or None:
    `malformed_summary_missing_section` / `malformed_summary_truncated`
    (history-compact-summary-validation.ts:111-158, 177-261)."""
    text = summary.strip()
    if not text:
        return None
    fence: tuple[str, int] | None = None
    matched = 0
    attributing = False
    has = [False] * len(REQUIRED_SECTIONS)

    def content(line: str) -> None:
        t = line.strip()
        if matched and attributing and t and t not in _TEMPLATE_LINES and not _BARE_FENCE.match(t):
            has[matched - 1] = True

    for line in re.split(r"\r?\n", text):
        m = _FENCE.match(line)
        if m:
            run = m.group(1)
            if fence is None:
                fence = (run[0], len(run))
            elif fence[0] == run[0] and len(run) >= fence[1] and line.strip() == run:
                fence = None
            else:
                content(line)
            continue
        if fence is not None:
            content(line)
            continue
        if matched < len(REQUIRED_SECTIONS) and re.match(r"^ {0,3}#", line) and line.strip() == REQUIRED_SECTIONS[matched]:
            matched += 1
            attributing = True
            continue
        if _OTHER_H2.match(line):
            attributing = False
            continue
        if not _ANY_HEADING.match(line) and not _RULE.match(line):
            content(line)
    if sectioned and not (matched == len(REQUIRED_SECTIONS) and all(has)):
        return "malformed_summary_missing_section"
    if fence is not None or _TRUNCATED_TAIL.search(text):
        return "malformed_summary_truncated"
    return None


# ---------------------------------------------------------------------------------------- checkpoints


def _nonempty(v: Any) -> bool:
    return isinstance(v, str) and len(v) > 0


def _finite(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and v == v and v not in (float("inf"), float("-inf"))


def checkpoint_shape_problem(cp: Any, session_id: str) -> str | None:
    """What `validateHistoryCompactCheckpointShape` (history-compact-checkpoint.ts:440-505)
    refuses in this checkpoint, or None."""
    if not isinstance(cp, dict):
        return "not an object"
    cov = cp.get("coverage") if isinstance(cp.get("coverage"), dict) else {}
    thr = cov.get("through") if isinstance(cov.get("through"), dict) else {}
    version = cp.get("version")
    checks: list[tuple[bool, str]] = [
        (cp.get("kind") == CHECKPOINT_KIND, f"kind is not {CHECKPOINT_KIND!r}"),
        (version in (2, 3) and not isinstance(version, bool), "version is neither 2 nor 3"),
        (_nonempty(cp.get("checkpointId")), "no checkpointId"),
        (cp.get("sessionId") == session_id, "sessionId is another session's"),
        (_finite(cp.get("createdAt")), "no createdAt"),
        (_nonempty(cp.get("highWaterName")) and _finite(cp.get("highWaterSeq")), "no high water"),
        (type(cov.get("eventCount")) is int and cov["eventCount"] > 0, "coverage.eventCount is not a positive integer"),
        (type(cov.get("turnCount")) is int and cov["turnCount"] > 0, "coverage.turnCount is not a positive integer"),
        (all(_nonempty(thr.get(k)) for k in ("runId", "turnId", "runtimeEventId")), "coverage.through is incomplete"),
        (_nonempty(cov.get("sourceDigest")), "no coverage.sourceDigest"),
        (cp.get("phase") in (None, "pre_turn", "mid_turn"), "unknown phase"),
        (
            cp.get("phase") != "mid_turn"
            or (isinstance(cp.get("headAnchor"), dict) and _nonempty(cp["headAnchor"].get("runtimeEventId")) and _nonempty(cp["headAnchor"].get("turnId"))),
            "a mid_turn checkpoint without a head anchor",
        ),
        (isinstance(cp.get("limitations"), list) and all(_nonempty(x) for x in cp["limitations"]), "limitations is not a list of strings"),
        (_finite(cp.get("estimatedTokens")) and cp["estimatedTokens"] >= 0, "no estimatedTokens"),
        (cp.get("previousCheckpointId") is None or _nonempty(cp.get("previousCheckpointId")), "bad previousCheckpointId"),
    ]
    src = cp.get("source")
    if src is not None:
        ok = isinstance(src, dict) and src.get("schemaVersion") == 1 and src.get("kind") == "runtime_event_projection" and src.get("policyVersion") == SOURCE_POLICY
        scov = src.get("coverage") if isinstance(src, dict) and isinstance(src.get("coverage"), dict) else {}
        low = scov.get("lowWater") if isinstance(scov.get("lowWater"), dict) else {}
        high = scov.get("highWater") if isinstance(scov.get("highWater"), dict) else {}
        ok = ok and all(
            (
                low.get("ledger") == high.get("ledger") == "runtime_event_projection",
                low.get("streamId") == high.get("streamId") == session_id,
                low.get("sequence") == 0,
                isinstance(n := cov.get("eventCount", 0), int | float) and high.get("sequence") == n - 1,
                scov.get("eventCount") == cov.get("eventCount"),
                _nonempty(low.get("eventId")),
                high.get("eventId") == thr.get("runtimeEventId"),
            )
        )
        checks.append((bool(ok), "its source cursors do not agree with its coverage"))
    if version == 2:
        checks.append((isinstance(cp.get("summary"), str) and cp["summary"].strip() != "", "a v2 checkpoint without a summary"))
        checks.append((cp.get("summaryFormat") in (None, SECTIONED), "an unknown summaryFormat"))
        checks.append(("providerState" not in cp, "a v2 checkpoint with provider state"))
    elif version == 3:
        ps = cp.get("providerState") if isinstance(cp.get("providerState"), dict) else {}
        checks.append(("summary" not in cp, "a v3 checkpoint with a summary"))
        checks.append(
            (ps.get("kind") == "openai_codex_remote_v2" and all(_nonempty(ps.get(k)) for k in ("connectionSlug", "modelId", "itemId", "encryptedContent")), "its providerState is incomplete")
        )
    return next((why for ok, why in checks if not ok), None)


def render_checkpoint(cp: dict[str, Any]) -> str:
    """The user text a v2 checkpoint replays as (`renderHistoryCompactCheckpoint`,
    history-compact-checkpoint.ts:351-364)."""

    def esc(v: Any) -> str:
        return py_str(v).replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;").replace(">", "&gt;")

    cov = cp["coverage"]
    lines = [
        f'<maka_history_compact_checkpoint id="{esc(cp["checkpointId"])}" high_water="{esc(cp["highWaterName"])}" '
        f'seq="{js_number(cp["highWaterSeq"])}" version="{cp["version"]}">',
        f"summary: {cp['summary']}",
        f"coverage: {cov['eventCount']} runtime events across {cov['turnCount']} turns",
    ]
    src = cp.get("source")
    if isinstance(src, dict):
        c = src["coverage"]
        low = (c.get("lowWater") or {}).get("sequence", 0)
        lines.append(f"source: {src['policyVersion']} {js_number(low)}-{js_number(c['highWater']['sequence'])}")
    lines.append(f"limitations: {'; '.join(cp['limitations'])}")
    lines.append("</maka_history_compact_checkpoint>")
    return "\n".join(lines)


def provider_item_text(cp: dict[str, Any]) -> str:
    """What stands for a v3 checkpoint's `openai.compaction` item: its content is encrypted."""
    ps = cp["providerState"]
    return (
        f"[openai.compaction item {ps['itemId']}: encrypted provider state of {len(ps['encryptedContent'])} characters, "
        f"readable only by {ps['modelId']} on {ps['connectionSlug']}]"
    )


# ---------------------------------------------------------------------------------------- reading


# An event's head as its record needs it: the role the model sees, the normalized stop reason,
# maka's role/content kind, the tool call it makes, the call it answers, and why maka never sends
# it (None: sent), as `_message` maps the same event; None for an event with no content.
_MessageHead = tuple[str, str | None, str, tuple[str, ...], str | None, str | None]


class _Event(msgspec.Struct, gc=False):
    """One runtime event, indexed: what the session's assembly reads of it, its payload kept as
    stored (its message and extra fields are read again from it on demand, `_Source`). A msgspec
    Struct: built in C, and never tracked by the collector (it holds no container of its own)."""

    row: int  # position in the session order, 1-based
    event_id: str
    raw: Any  # the payload as stored (text)
    committed_at: Any
    ts: Any  # after the field guard, as every field below but the stored ones
    run_id: str | None
    turn: Any
    head: _MessageHead | None
    compactable: bool  # of the payload as stored (`_compactable`)
    stored_id: Any  # the stored payload's id and sessionId (the prefix match reads them)
    stored_session: Any
    call_unstepped: bool  # a function_call maka replays with no step id (`_skip_signed_thinking`)
    signed_thinking: bool
    guarded: bool  # the field guard removed a field: the payload as stored is not the one read
    # Its message, built as it was read when it comes after every stated coverage (what the next
    # request sends, read there anyway); handed to its record, without its route.
    message: Message | None = None

    def stored(self) -> dict[str, Any]:
        """The payload as stored, parsed again."""
        obj: dict[str, Any] = loads(self.raw)
        return obj


@dataclass(slots=True)
class _CkptRow:
    run_id: str
    sequence: int
    event_id: str
    ts: Any
    obj: dict[str, Any]
    cp: Any
    where: str
    line: int = 0
    problem: str | None = None
    record: Record | None = None
    notes: list[str] = field(default_factory=list)


def load(path: str, selector: str | None, upto: int | None) -> Ledger:
    try:
        if not sqlite_files.has_magic(path):
            raise LoadError(f"{path}: not a SQLite database (no SQLite header), so not a maka runtime.sqlite")
    except OSError as e:
        raise LoadError(f"{path}: cannot open ({e.strerror})") from None
    notes: list[Diagnostic] = []
    # The shared read-only opener: a -wal's commits are read from a private copy, nothing changes.
    # The collector is paused (nothing here makes a cycle), or its passes walk every parsed payload.
    with collector_paused(), sqlite_files.read_only(path, path, notes) as con:
        led = _load(con, path, selector, upto)
    led.diagnostics[:0] = notes
    return led


def _json_row(raw: Any, where: str, diags: list[Diagnostic], line: int) -> dict[str, Any] | None:
    problem = ""
    obj: Any = None
    if not isinstance(raw, str | bytes):
        problem = "its JSON column is not text"
    else:
        try:
            obj = loads(raw)
        except orjson.JSONDecodeError as e:
            problem = f"not valid JSON ({e})"
        else:
            if not isinstance(obj, dict):
                problem = f"a JSON {type(obj).__name__}, not an object"
    if problem:
        diags.append(Diagnostic(line, "malformed_row", f"{where}: {problem}; skipped"))
        return None
    return obj


def _choose_session(con: sqlite3.Connection, name: str, selector: str | None, diags: list[Diagnostic]) -> str:
    grouped = [r[0] for r in con.execute("SELECT session_id FROM runtime_events GROUP BY session_id ORDER BY MAX(committed_at), session_id")]
    stored = [s for s in grouped if isinstance(s, str)]
    if len(stored) != len(grouped):  # a damaged store (the column is TEXT NOT NULL): rows no session can own
        untyped = [r[0] for r in con.execute("SELECT rowid FROM runtime_events WHERE typeof(session_id) != 'text' ORDER BY rowid LIMIT 11")]
        shown = ", ".join(map(str, untyped[:10])) + (" …" if len(untyped) > 10 else "") if untyped else "not told: the table's pages disagree"
        diags.append(Diagnostic(0, "malformed_row", f"{name}: runtime_events rows (rowid {shown}) have no text session_id; not read"))
    if not stored:
        raise LoadError(f"{name}: a maka runtime.sqlite, but runtime_events holds no session's events")
    if selector is not None:
        if selector not in stored:
            raise LoadError(f"{name}: no session {selector!r} in runtime_events (sessions: {', '.join(stored[:10])})")
        chosen, why = selector, "named in the path"
    else:
        used: list[str] = []
        if "session_metadata" in _tables(con):
            used = [r[0] for r in con.execute("SELECT session_id FROM session_metadata ORDER BY last_used_at, session_id")]
        used = [s for s in used if s in stored]
        if used:
            chosen, why = used[-1], "the session used last (session_metadata.last_used_at)"
        else:
            chosen, why = stored[-1], "the session with the newest event"
    others = [s for s in stored if s != chosen]
    if others or selector is not None:
        listed = ", ".join(others[:10]) + (" …" if len(others) > 10 else "")
        diags.append(
            Diagnostic(
                0,
                "session_choice",
                f"{name}: {len(stored)} session{'s' if len(stored) != 1 else ''} in this store; reading {chosen!r}, {why}"
                + (f"; others: {listed} (pick one with FILE#SESSION)" if others else ""),
                severity="info",
            )
        )
    return chosen


_EVENT_COLUMNS = "event_id, session_id, invocation_id, run_id, turn_id, payload_json, committed_at"
# The same, a text payload as its stored bytes (no str made of it: msgspec reads the UTF-8 itself and
# refuses a string that is not, and the event keeps those bytes, `_kept`).
_EVENT_BYTES_COLUMNS = _EVENT_COLUMNS.replace("payload_json", "CASE typeof(payload_json) WHEN 'text' THEN CAST(payload_json AS BLOB) ELSE payload_json END")


class _NotUtf8(Exception):
    """A payload read as bytes is not UTF-8: read the rows again as text (`_events`)."""


def _events(con: sqlite3.Connection, name: str, sid: str, diags: list[Diagnostic], digests: PrefixDigests | None = None) -> list[_Event]:
    order = " FROM runtime_events WHERE session_id=? ORDER BY committed_at, event_id"
    # Rows taken one at a time (only the payload is kept), their text decoded by SQLite's module
    # itself (no call per column), a text payload read as its bytes (a CAST of UTF-16 text would
    # give UTF-16); a row of invalid UTF-8 makes it refuse (a payload: `_NotUtf8`, a BLOB one too,
    # the two are one type here), and the rows are read again from the first, as text, strictly
    # and then as every other query reads them (U+FFFD for bad bytes).
    said = len(diags)
    lenient, con.text_factory = con.text_factory, str
    try:
        if con.execute("PRAGMA encoding").fetchone()[0] == "UTF-8":
            try:
                return _row_events(con.execute("SELECT " + _EVENT_BYTES_COLUMNS + order, (sid,)), name, 1, diags, digests, True)
            except _NotUtf8:
                pass
            _restart(diags, said, digests)
        return _row_events(con.execute("SELECT " + _EVENT_COLUMNS + order, (sid,)), name, 1, diags, digests)
    except sqlite3.OperationalError as e:
        if not str(e).startswith("Could not decode to UTF-8"):
            raise
    finally:
        con.text_factory = lenient
    _restart(diags, said, digests)
    return _row_events(con.execute("SELECT " + _EVENT_COLUMNS + order, (sid,)), name, 1, diags, digests)


def _restart(diags: list[Diagnostic], said: int, digests: PrefixDigests | None) -> None:
    """Forget what a read of the rows said and hashed, before reading them again."""
    del diags[said:]
    if digests is not None:
        digests.restart()


def _stated_counts(con: sqlite3.Connection, sid: str) -> set[int]:
    """The coverage.eventCount of every checkpoint row of the session that states one (the prefixes
    whose source digest the prefix match may ask for)."""
    if "core_agent_run_events" not in _tables(con):
        return set()
    out: set[int] = set()
    for (raw,) in con.execute("SELECT record_json FROM core_agent_run_events WHERE session_id=? AND event_type=?", (sid, CHECKPOINT_EVENT)):
        try:
            obj = loads(raw)
        except (orjson.JSONDecodeError, TypeError):
            continue
        data = obj.get("data") if isinstance(obj, dict) else None
        cp = data.get("checkpoint") if isinstance(data, dict) else None
        cov = cp.get("coverage") if isinstance(cp, dict) else None
        n = cov.get("eventCount") if isinstance(cov, dict) else None
        if type(n) is int and n > 0:
            out.add(n)
    return out


# The payload fields maka checks against the row's columns (event_id, session_id, invocation_id, run_id, turn_id).
_IDENTITY = ("id", "sessionId", "invocationId", "runId", "turnId")


def _row_events(
    rows: Iterable[Any], name: str, first: int, diags: list[Diagnostic], digests: PrefixDigests | None = None, text_bytes: bool = False
) -> list[_Event]:
    """The session's runtime_events rows as events; `first`: the first one's place in the session
    order; `digests`, when given, is fed every compactable event from the first in the session.
    A payload `_SafeEvent` takes is read from its Struct (`_safe_event`), any other as a dict
    (`_dict_event`): the same event either way (tests/test_maka_heads.py). `text_bytes`: the rows
    hold text payloads as bytes; one that is not UTF-8 raises `_NotUtf8` (a payload `_SafeEvent`
    takes is: msgspec decodes every string of it)."""
    out: list[_Event] = []
    append, decode, unsafe, check = out.append, _decode_safe, _UNSAFE, fields.checker(EVENT)
    last: list[Any] = [None, None, None]  # (`_safe_event`'s strings shared from one event to the next)
    for i, row in enumerate(rows, start=first):  # (eid, sid, inv, run, turn, payload, committed)
        payload = row[5]
        past = digests is not None and digests.count >= digests.last  # after every stated coverage
        try:
            append(_safe_event(decode(payload), i, payload, row, name, diags, digests, past, last))
        except unsafe:
            if text_bytes and type(payload) is bytes and not _is_utf8(payload):
                raise _NotUtf8 from None
            ev = _dict_event(i, payload, row[6], row[:5], name, diags, digests, past, check)
            if ev is not None:
                append(ev)
    return out


_decode_safe = msgspec.json.Decoder(_SafeEvent).decode
# What `_decode_safe` raises for a payload it does not take (a lone surrogate in a str: the encoding
# error; a payload that is no str or bytes: TypeError).
_UNSAFE = (msgspec.DecodeError, UnicodeError, RecursionError, TypeError)


def _is_utf8(b: bytes) -> bool:
    try:
        b.decode()
    except UnicodeDecodeError:
        return False
    return True


def _kept(payload: Any) -> Any:
    """A payload as the event keeps it: a text with a non-ASCII character as its UTF-8 bytes (Python
    holds such a str at 2-4 bytes a character, and maka stores its payloads unescaped:
    tests/maka_store.canonical; 5% of the benchmark's rows, +47 MB at 100 MB); orjson reads either."""
    if type(payload) is not str or payload.isascii():
        return payload
    try:
        return payload.encode()
    except UnicodeEncodeError:  # a lone surrogate (not from SQLite's strict decode): kept as read
        return payload


def _safe_event(
    s: _SafeEvent, i: int, payload: Any, row: tuple[Any, ...], name: str, diags: list[Diagnostic], digests: PrefixDigests | None,
    past: bool, last: list[Any] | None = None,
) -> _Event:
    """A payload `_SafeEvent` took, as `_dict_event` reads the dict orjson makes of it (an absent
    field, UNSET, read as None): no field the guard removes; digested as msgspec writes the Struct.
    `row`: its columns (event_id, session_id, invocation_id, run_id, turn_id, payload, committed_at).
    `last`: the session, run and turn of the event before, whose strings this one keeps where they
    are equal (one string a run, not one an event: less kept, and dicts of them hash it once)."""
    ids = (s.id, s.sessionId, s.invocationId, s.runId, s.turnId)
    columns = row[:5]
    if ids == columns:  # (the common row names its columns: its id is then the row's, kept once)
        ids = columns
    else:
        ids = tuple(None if v is _U else v for v in ids)
        if ids != columns:
            _identity_mismatch(dict(zip(_IDENTITY, ids, strict=True)), columns, name, i, diags)
    eid, session, run_id, turn = row[0], ids[1], ids[3], ids[4]
    if last is not None:
        if session == last[0]:
            session = last[0]
        else:
            last[0] = session
        if run_id == last[1]:
            run_id = last[1]
        else:
            last[1] = run_id
        if turn == last[2]:
            turn = last[2]
        else:
            last[2] = turn
    c = s.content
    if c is None or c is _U:
        return _Event(
            i, eid if type(eid) is str else str(eid), payload if type(payload) is bytes else _kept(payload), row[6],
            None if s.ts is _U else s.ts, run_id if type(run_id) is str else None, turn, None, False, ids[0], session, False,
            False, False, None,
        )
    got = _STRUCT_HEADS.get((s.role, s.status, s.partial, s.modelVisibility, c.kind, not c.text, not c.message))
    head, compactable, kind = got if got is not None else _struct_head(s, c)
    cid = c.id
    unstepped = signed = False
    if kind == "function_call":  # (`_head_of` puts the call id in for a call or a response)
        if cid is not _U and cid is not None:
            head = (head[0], head[1], head[2], (cid,) if cid else (), None, head[5])
        unstepped = s.partial is not True and s.modelVisibility != "hidden" and not (s.refs.stepId if s.refs else None)
    elif kind == "function_response":
        if cid is not _U and cid is not None:
            head = (head[0], head[1], head[2], (), cid, head[5])
    elif kind == "thinking":
        signed = bool(c.signature)
    message = None
    if past:  # (an unknown kind's content is shown as stored: read as a dict)
        message = _struct_message(s.status, c, kind, head) if kind in _KINDS else _message(loads(payload))[0]
    elif compactable and digests is not None:  # (past every stated coverage: nothing to hash)
        digests.feed(s, True)
    return _Event(
        i, eid if type(eid) is str else str(eid), payload if type(payload) is bytes else _kept(payload), row[6],
        None if s.ts is _U else s.ts, run_id if type(run_id) is str else None, turn, head, compactable, ids[0], session,
        unstepped, signed, False, message,
    )


# `_head_of` and `_compactable_of` of the events `_SafeEvent` took, by the fields they read as the
# Struct holds them (UNSET as it is; of the text and the message only whether they are empty), with
# the content's kind as `dict.get` reads it: most events share a few (a call's id is put in after).
_STRUCT_HEADS: dict[tuple[Any, ...], tuple[_MessageHead, bool, Any]] = {}


def _struct_head(s: _SafeEvent, c: _SafeContent) -> tuple[_MessageHead, bool, Any]:
    """The head (no call id), compactability and kind of a `_SafeEvent` with content, kept in
    `_STRUCT_HEADS` (up to `_HEADS_MAX` of them)."""
    kind = _set(c.kind)
    got = (
        _head_of(_set(s.role), _set(s.status), s.partial, s.modelVisibility, kind, None, c.text),
        _compactable_of(s.modelVisibility, kind, c.text, c.message),
        kind,
    )
    if len(_STRUCT_HEADS) < _HEADS_MAX:
        _STRUCT_HEADS[(s.role, s.status, s.partial, s.modelVisibility, c.kind, not c.text, not c.message)] = got
    return got


_KINDS = ("text", "thinking", "function_call", "function_response", "error")


def _set(v: Any) -> Any:
    """A field of a Struct as `dict.get` reads it of the dict orjson makes (UNSET: absent, None)."""
    return None if v is _U else v


def _struct_message(status: Any, c: _SafeContent, kind: str, head: _MessageHead) -> Message:
    """`_message_of` of a `_SafeEvent` with content of a kind in `_KINDS`, read from its Struct
    (the same Message: tests/test_maka_heads.py)."""
    err: str | None = None
    if kind == "text" or kind == "thinking":
        block = Block(kind, text=c.text or "")
    elif kind == "function_call":
        block = Block("tool_call", call_id=_set(c.id), name=_set(c.name), args=_set(c.args))
    elif kind == "function_response":
        result = c.providerOutput if c.providerExecuted and c.providerOutput is not _U else _set(c.result)
        text = result if isinstance(result, str) else dumps_text(result, orjson.OPT_NON_STR_KEYS)
        block = Block("tool_result", text=text, call_id=_set(c.id), name=_set(c.name), is_error=c.isError is True)
    else:  # error
        err = c.message or ""
        block = Block("text", text=err)
    return Message(head[0], [block], stop_reason=head[1], stop_reason_raw=_set(status), error_message=err, source_role=head[2], never_sent=head[5] is not None)


def _dict_event(
    i: int, payload: Any, committed: Any, columns: tuple[Any, ...], name: str, diags: list[Diagnostic],
    digests: PrefixDigests | None, past: bool, check: Any,
) -> _Event | None:
    """A payload read by orjson (None: not an object, said), guarded, hashed as stored."""
    eid = columns[0]
    try:
        obj = loads(payload)
    except (orjson.JSONDecodeError, TypeError):
        obj = None
    if type(obj) is not dict:  # said as `_json_row` says it
        obj = _json_row(payload, _where(name, eid, i), diags, i)
        if obj is None:
            return None
    # The guard removes wrong-typed fields in place: an event it changes is parsed again, so the
    # payload as stored stays whole (`obj`, hashed by the digest); the common one is shared.
    ev = obj
    wrong: list[fields.WrongType] = []
    try:
        msgspec.convert(ev, _EventTypes)
    except (msgspec.ValidationError, UnicodeEncodeError):  # (a wrong type; a lone surrogate in one, which msgspec cannot say)
        check(ev, "", wrong)
    if wrong:
        obj = loads(payload)
        diags.extend(fields.line_diagnostics(i, wrong, _where(name, eid, i)))
    if tuple(map(ev.get, _IDENTITY)) != columns:
        _identity_mismatch(ev, columns, name, i, diags)
    compactable = _compactable(obj)
    if compactable and digests is not None:
        digests.feed(obj)
    content = ev.get("content")
    run_id = ev.get("runId")
    message = None
    if type(content) is dict:
        kind = content.get("kind")
        head = _head(ev, content, kind)
        unstepped = kind == "function_call" and ev.get("partial") is not True and ev.get("modelVisibility") != "hidden" and not (ev.get("refs") or {}).get("stepId")
        signed = kind == "thinking" and bool(content.get("signature"))
        if past:
            message = _message_of(ev, content, kind, head)
    else:
        head, unstepped, signed = None, False, False
    return _Event(
        i, str(eid), _kept(payload), committed, ev.get("ts"), run_id if type(run_id) is str else None, ev.get("turnId"), head, compactable,
        obj.get("id"), obj.get("sessionId"), unstepped, signed, bool(wrong), message,
    )


def _identity_mismatch(ev: dict[str, Any], columns: tuple[Any, ...], name: str, i: int, diags: list[Diagnostic]) -> None:
    eid = columns[0]
    clash = [f"{k} {quote(ev.get(k))} (column {quote(col)})" for k, col in zip(_IDENTITY, columns, strict=True) if ev.get(k) != col]
    diags.append(
        Diagnostic(
            i,
            "row_identity_mismatch",
            f"{_where(name, eid, i)}: its payload names {', '.join(clash)}; maka refuses to decode such a row "
            "(RuntimeEvent row/payload identity mismatch), so its session does not load there",
            severity="error",
        )
    )


def _where(name: str, eid: Any, line: int) -> str:
    return f"{name}: runtime_events row {eid!r} (line {line})"


def _runs(con: sqlite3.Connection, name: str, sid: str, diags: list[Diagnostic]) -> dict[str, dict[str, Any]]:
    """The session's run headers by run id, each field guarded (`RUN_HEADER`; the guard itself only
    on a header `_RunTypes` refuses)."""
    out: dict[str, dict[str, Any]] = {}
    for run_id, raw in _text_rows(con, "SELECT run_id, record_json FROM core_agent_runs WHERE session_id=? ORDER BY created_at, run_id", (sid,)):
        try:
            obj = loads(raw)
        except (orjson.JSONDecodeError, TypeError):
            obj = None
        if type(obj) is not dict:  # said as `_json_row` says it
            obj = _json_row(raw, f"{name}: core_agent_runs row {run_id!r}", diags, 0)
            if obj is None:
                continue
        try:
            msgspec.convert(obj, _RunTypes)
        except (msgspec.ValidationError, UnicodeEncodeError):  # (as `_dict_event`)
            diags.extend(fields.line_diagnostics(0, fields.check_fields(obj, RUN_HEADER), f"{name}: core_agent_runs row {run_id!r}"))
        out[str(run_id)] = obj
    return out


def _text_rows(con: sqlite3.Connection, sql: str, args: tuple[Any, ...]) -> list[Any]:
    """Every row of a query, its text decoded by SQLite's module itself (no call per column); where
    a text is not UTF-8, as the connection's own factory reads it (U+FFFD for the bad bytes)."""
    lenient, con.text_factory = con.text_factory, str
    try:
        return con.execute(sql, args).fetchall()
    except sqlite3.OperationalError as e:
        if not str(e).startswith("Could not decode to UTF-8"):
            raise
    finally:
        con.text_factory = lenient
    return con.execute(sql, args).fetchall()


class _RunTypes(msgspec.Struct, gc=False):
    """`RUN_HEADER` as msgspec types: a header these take has no field the guard removes
    (tests/test_maka_heads.py)."""

    runId: str | None = None
    sessionId: str | None = None
    turnId: str | None = None
    modelId: str | None = None
    llmConnectionSlug: str | None = None
    llmConnectionId: str | None = None
    createdAt: heads.Num | None = None


assert set(_RunTypes.__struct_fields__) == set(RUN_HEADER)


def _checkpoint_rows(con: sqlite3.Connection, name: str, sid: str, diags: list[Diagnostic]) -> list[_CkptRow]:
    if "core_agent_run_events" not in _tables(con):
        return []
    out: list[_CkptRow] = []
    rows = con.execute(
        "SELECT e.run_id, e.sequence, e.event_id, e.event_ts, e.record_json FROM core_agent_run_events e "
        "LEFT JOIN core_agent_runs r ON r.session_id=e.session_id AND r.run_id=e.run_id "
        "WHERE e.session_id=? AND e.event_type=? ORDER BY r.created_at, e.run_id, e.sequence",
        (sid, CHECKPOINT_EVENT),
    ).fetchall()
    for run_id, seq, eid, ts, raw in rows:
        where = f"{name}: core_agent_run_events row (run {run_id!r}, sequence {seq})"
        obj = _json_row(raw, where, diags, 0)
        if obj is None:
            continue
        diags.extend(fields.line_diagnostics(0, fields.check_fields(obj, CHECKPOINT_ROW), where))
        if not isinstance(seq, int):  # a damaged store: the column's CHECK lets text through
            diags.append(Diagnostic(0, "malformed_row", f"{where}: sequence is {fields.json_type(seq)}, not an integer; the row is read in its stored order"))
            seq = -1
        data = obj.get("data") if isinstance(obj.get("data"), dict) else {}
        out.append(_CkptRow(str(run_id), seq, str(eid), ts, obj, data.get("checkpoint"), where))
    return out


def _projection(con: sqlite3.Connection, sid: str) -> tuple[bool, Any]:
    """(whether the projection row exists, its event's checkpoint id or None)."""
    if "core_agent_run_projections" not in _tables(con):
        return False, None
    row = con.execute("SELECT event_json FROM core_agent_run_projections WHERE session_id=? AND event_type=?", (sid, CHECKPOINT_EVENT)).fetchone()
    if row is None:
        return False, None
    if row[0] is None:
        return True, None
    try:
        ev = loads(row[0])
    except orjson.JSONDecodeError:
        return False, None  # unreadable: maka recovers from the run ledger
    data = ev.get("data") if isinstance(ev, dict) and isinstance(ev.get("data"), dict) else {}
    cp = data.get("checkpoint")
    return True, cp.get("checkpointId") if isinstance(cp, dict) else "<unusable>"


def _recover(cands: list[_CkptRow]) -> _CkptRow | None:
    """`selectRecoveredCheckpoint` (history-compact-ledger.ts:134-171)."""
    bound = [c for c in cands if c.cp.get("source") is not None]
    pool = bound or cands
    if not pool:
        return None
    widest = max(c.cp["coverage"]["eventCount"] for c in pool)
    furthest = [c for c in pool if c.cp["coverage"]["eventCount"] == widest]
    ids = {c.cp["checkpointId"] for c in furthest}
    superseded = {c.cp.get("previousCheckpointId") for c in furthest if c.cp.get("previousCheckpointId") in ids}
    tips = [c for c in furthest if c.cp["checkpointId"] not in superseded] or furthest
    return max(tips, key=lambda c: (c.obj.get("ts") if _finite(c.obj.get("ts")) else 0, str(c.obj.get("id"))))


def _compactable(obj: dict[str, Any]) -> bool:
    """`isHistoryCompactContentEvent` (history-compact.ts:1011-1013; chars: context-budget-helpers.ts:46-62)
    of an event as stored."""
    c = obj.get("content")
    if not isinstance(c, dict):
        return False
    return _compactable_of(obj.get("modelVisibility"), c.get("kind"), c.get("text"), c.get("message"))


def _compactable_of(visibility: Any, kind: Any, text: Any, message: Any) -> bool:
    """`_compactable` of an event with content, from its fields (an absent one: None or UNSET)."""
    if visibility == "hidden":
        return False
    if kind in ("text", "thinking"):
        return bool(text)
    if kind in ("function_call", "function_response"):
        return True  # a name plus the JSON of its arguments / result
    if kind == "error":
        return bool(message)
    return False


_STORED_SESSION = operator.attrgetter("stored_session")


def match_prefix(cp: dict[str, Any], compactable: list[_Event], digests: dict[int, str] | None = None) -> str | None:
    """Why `matchHistoryCompactCheckpointPrefix` (history-compact-checkpoint.ts:537-619) fails
    for this (shape-valid) checkpoint, or None when it matches. `digests`: the source digests of
    prefixes found while the events were read (`PrefixDigests`); others are hashed here."""
    cov = cp["coverage"]
    n = cov["eventCount"]
    covered = compactable[:n]
    thr = cov["through"]
    if len(covered) != n or list(map(_STORED_SESSION, covered)).count(cp["sessionId"]) != n:
        return "coverage_miss"
    last = covered[-1].stored()
    if last.get("runId") != thr["runId"] or last.get("turnId") != thr["turnId"] or covered[-1].stored_id != thr["runtimeEventId"]:
        return "coverage_miss"
    src = cp.get("source")
    if isinstance(src, dict):
        c = src["coverage"]
        if (c.get("lowWater") or {}).get("eventId") != covered[0].stored_id or c["highWater"].get("eventId") != covered[-1].stored_id:
            return "coverage_miss"
    if cp.get("phase") == "mid_turn":
        a = cp["headAnchor"]
        anchor = next((e.stored() for e in covered if e.stored_id == a["runtimeEventId"]), None)
        if anchor is None or anchor.get("turnId") != a["turnId"] or anchor.get("turnId") != thr["turnId"] or anchor.get("role") != "user" or anchor.get("author") != "user":
            return "coverage_miss"
    digest = (digests or {}).get(n)
    if digest is None:
        digest = source_digest([e.stored() for e in covered])
    if digest != cov["sourceDigest"]:
        return "source_hash_mismatch"
    return None


_REASONS = {
    "coverage_miss": "its coverage no longer matches the session's compactable events (coverage_miss)",
    "source_hash_mismatch": "the covered events changed since it was written: their SHA-256 is not its sourceDigest (source_hash_mismatch)",
}


def _route_of(header: dict[str, Any] | None) -> Route | None:
    if not header:
        return None
    conn = header.get("llmConnectionSlug") or header.get("llmConnectionId")
    model = header.get("modelId")
    return Route(model, conn) if (model or conn) else None


def _next_route(con: sqlite3.Connection, sid: str, runs: dict[str, dict[str, Any]]) -> tuple[Route | None, str]:
    if "session_metadata" in _tables(con) and {"llm_connection_slug", "model"} <= _columns(con, "session_metadata"):
        row = con.execute("SELECT model, llm_connection_slug FROM session_metadata WHERE session_id=?", (sid,)).fetchone()
        if row is not None and (row[0] or row[1]):
            return Route(row[0], row[1]), "session_metadata"
    if runs:
        return _route_of(list(runs.values())[-1]), "the newest run header"
    return None, ""


_ROLES = {"user": "user", "model": "assistant", "tool": "tool", "system": "system"}
_REPLAYABLE = ("text", "thinking", "function_call", "function_response")


def _head(ev: dict[str, Any], content: dict[str, Any], kind: Any) -> _MessageHead:
    """The head of an event with content (after the field guard): what its record holds without
    its message, as `_message` maps it (model-history.ts:367-466 for why it is never sent)."""
    return _head_of(ev.get("role"), ev.get("status"), ev.get("partial"), ev.get("modelVisibility"), kind, content.get("id"), content.get("text"))


_HEADS_MAX = 4096  # (a damaged store's kinds and roles are many: past these, computed each time)


def _head_of(role_raw: Any, status: Any, partial: Any, visibility: Any, kind: Any, cid: Any, text: Any) -> _MessageHead:
    """`_head` from an event's fields (`partial`, `visibility` and `text` absent: None or UNSET)."""
    why: str | None = None
    if partial is True:
        why = "a partial event (partial_skipped)"
    elif visibility == "hidden":
        why = "model-hidden (model_hidden_skipped)"
    elif kind == "error":
        why = "error content is diagnostic only (error_content_diagnostic_only)"
    elif kind in ("text", "thinking") and not text:
        why = "empty text (empty_text_skipped)"
    elif role_raw == "system":
        why = "system-role content is not replayed (system_runtime_fact_diagnostic_only)"
    elif kind not in _REPLAYABLE:
        why = f"content kind {quote(kind)} is not replayable (unsupported_content)"
    elif (kind == "text" and role_raw not in ("user", "model", "system")) or (kind in ("thinking", "function_call") and role_raw != "model") or (
        kind == "function_response" and role_raw != "tool"
    ):
        why = f"a {kind} event with role {quote(role_raw)} (unsupported_role)"
    return (
        _ROLES.get(str(role_raw), "system"),
        normalize_stop_reason(status) if status in ("failed", "aborted", "cancelled") else None,
        f"{role_raw}/{kind}",
        (cid,) if kind == "function_call" and cid else (),
        cid if kind == "function_response" else None,
        why,
    )


def _message(ev: dict[str, Any]) -> tuple[Message | None, str | None]:
    """The event as a message, and why maka never sends it (model-history.ts:367-466), or
    (None, why) for an event with no content."""
    content = ev.get("content") if isinstance(ev.get("content"), dict) else None
    if content is None:
        return None, "no content (a runtime fact)"
    kind = content.get("kind")
    head = _head(ev, content, kind)
    return _message_of(ev, content, kind, head), head[5]


def _message_of(ev: dict[str, Any], content: dict[str, Any], kind: Any, head: _MessageHead) -> Message:
    """`_message` of an event with content, its head known."""
    role, stop, source_role, _calls, _result, why = head
    blocks: list[Block] = []
    err: str | None = None
    if kind in ("text", "thinking"):
        blocks.append(Block(kind, text=content.get("text") or ""))
    elif kind == "function_call":
        blocks.append(Block("tool_call", call_id=content.get("id"), name=content.get("name"), args=content.get("args")))
    elif kind == "function_response":
        result = content.get("providerOutput") if content.get("providerExecuted") and "providerOutput" in content else content.get("result")
        text = result if isinstance(result, str) else dumps_text(result, orjson.OPT_NON_STR_KEYS)
        blocks.append(Block("tool_result", text=text, call_id=content.get("id"), name=content.get("name"), is_error=content.get("isError") is True))
    elif kind == "error":
        err = content.get("message") or ""
        blocks.append(Block("text", text=err))
    else:
        blocks.append(Block("other", raw=content))
    return Message(role, blocks, stop_reason=stop, stop_reason_raw=ev.get("status"), error_message=err, source_role=source_role, never_sent=why is not None)


class _Source(RecordSource):
    """A runtime event record's message and extra fields, read again from its payload as stored
    (kept by seq); its route from the run headers, its never-sent flag from the record (the
    replay rules may set it after the head). `obj` gives nothing, as for a record read whole."""

    __slots__ = ("guarded", "payloads", "runs")

    def __init__(self, runs: dict[str, dict[str, Any]]) -> None:
        self.payloads: list[Any] = []  # by seq (None: a checkpoint row's record)
        self.guarded: set[int] = set()  # the records whose payload the guard changed
        self.runs = runs

    def obj(self, rec: Record) -> Any:
        return None

    def message(self, rec: Record) -> Message | None:
        ev = loads(self.payloads[rec.seq])
        if rec.seq in self.guarded:  # (the guard leaves every other payload as it is)
            fields.check_fields(ev, EVENT)
        m, _why = _message(ev)
        if m is not None:
            m.never_sent = rec.never_sent
            if m.role == "assistant":
                m.route = _route_of(self.runs.get(rec.run_id or ""))
        return m

    def extra(self, rec: Record) -> dict[str, Any] | None:
        obj: dict[str, Any] = loads(self.payloads[rec.seq])
        return obj


def _load(con: sqlite3.Connection, name: str, selector: str | None, upto: int | None) -> Ledger:
    if not _is_maka(con):
        raise LoadError(f"{name}: a SQLite database, but not a maka runtime.sqlite (no runtime_events.payload_json and core_agent_runs)")
    diags: list[Diagnostic] = []
    sid = _choose_session(con, name, selector, diags)
    digests = PrefixDigests(_stated_counts(con, sid))
    events = _events(con, name, sid, diags, digests)
    return _assemble(con, name, sid, events, diags, upto, digests.found)


def _assemble(
    con: sqlite3.Connection,
    name: str,
    sid: str,
    events: list[_Event],
    diags: list[Diagnostic],
    upto: int | None,
    digests: dict[int, str] | None = None,
) -> Ledger:
    """The ledger of the session's events (in session order), its runs and checkpoint rows;
    `digests`: source digests of the events' prefixes, found as they were read (`PrefixDigests`)."""
    runs = _runs(con, name, sid, diags)
    timeline, events, rows = _timeline(events, _checkpoint_rows(con, name, sid, diags), upto)
    if not events:
        raise LoadError(f"{name}: session {sid!r} has no runtime events" + (f" up to line {upto}" if upto is not None else ""))
    routes = {run_id: _route_of(h) for run_id, h in runs.items()}  # (one Route a run's records share: frozen)
    records, by_event, marks = _records(timeline, runs, routes)

    led = Ledger(path=name, format=NAME, session_id=sid, header=None, records=records)
    led.diagnostics = diags
    led.leaf_seq = records[-1].seq
    first_of = {r.run_id: r.seq for r in reversed(records)}  # each run's first record
    for run_id, route in routes.items():
        first = first_of.get(run_id)
        if route is not None and first is not None:
            led.runs[run_id] = RunHeader(run_id, route, first)
    _skip_signed_thinking(events, by_event)

    compactable = [e for e in events if e.compactable]
    applied = _apply_checkpoint(con, led, sid, rows, compactable, by_event, runs, upto, name, digests)
    sent = compactable if applied is None else _replayed(applied, compactable)
    _drop_unpaired_calls(led, sent, by_event, name)
    if applied is not None and applied.record is not None:  # (the one row made a checkpoint record)
        bisect.insort(marks, applied.record.seq)
    # Every record is runtime-visible and none is a header: the path is every record (off_path []).
    led.index = RecordIndex(records, len(records), marks, [], _Ids(by_event, [c.record for c in rows if c.record is not None]))
    return led


class _Ids:
    """`RecordIndex.find_ids`: ids resolved as `Ledger.by_id` resolves them (the last record with
    the id; every maka record is runtime-visible), from the events' records by event id (an
    event's id is its row's, the last one kept) and the checkpoint rows' records, without walking
    the records."""

    __slots__ = ("by_event", "rows")

    def __init__(self, by_event: dict[str, Record], rows: list[Record]) -> None:
        self.by_event = by_event
        self.rows = rows  # (a few: a checkpoint row's id may be an event's too)

    def __call__(self, ids: set[str]) -> dict[str, int]:
        out: dict[str, int] = {}
        by_event = self.by_event
        for i in ids:
            rec = by_event.get(i)
            if rec is not None:
                out[i] = rec.seq
        for rec in self.rows:
            rid = rec.id
            if rid is not None and rid in ids and rec.seq > out.get(rid, -1):
                out[rid] = rec.seq
        return out


def _timeline(events: list[_Event], rows: list[_CkptRow], upto: int | None) -> tuple[list[_Event | _CkptRow], list[_Event], list[_CkptRow]]:
    """The timeline: each checkpoint row after the events committed by its time, and after the
    event its coverage runs through; its first `upto` entries. With the events and rows in it."""
    timeline: list[_Event | _CkptRow] = []
    slots: dict[int, list[_CkptRow]] = {}
    committed = _commit_times(events) if rows else []
    ids_back = [e.event_id for e in reversed(events)] if rows else []  # (an id's last place: index from the end)
    for c in rows:
        ts = c.ts if _finite(c.ts) else 0
        at = bisect.bisect_right(committed, ts)  # the events committed by its time
        thr = ((c.cp or {}).get("coverage") or {}).get("through") if isinstance(c.cp, dict) else None
        through = thr.get("runtimeEventId") if isinstance(thr, dict) else None
        if isinstance(through, str):  # (an event id is a string: a list is no key)
            with contextlib.suppress(ValueError):  # (its last place, found in one pass)
                at = max(at, len(ids_back) - ids_back.index(through))
        slots.setdefault(at, []).append(c)
    done = 0
    for at in sorted(slots):  # each slot's rows before the event at its place
        timeline += events[done:at]
        timeline += slots[at]
        done = at
    timeline += events[done:]
    rows = [c for at in sorted(slots) for c in slots[at]]
    if upto is not None:
        timeline = timeline[:upto]
        events = [x for x in timeline if isinstance(x, _Event)]
        rows = [x for x in timeline if isinstance(x, _CkptRow)]
    return timeline, events, rows


def _commit_times(events: list[_Event]) -> list[Any]:
    """The events' finite commit times, sorted. The events are in the session order (committed_at
    first) and SQLite orders NULL before the numbers, the numbers before text and blobs: when the
    first and the last are integers, every one between is a finite number and they are in order,
    unless the index that order comes from is damaged (a text among them: one sort says which)."""
    times = [e.committed_at for e in events]
    if times and type(times[0]) is int and type(times[-1]) is int:
        with contextlib.suppress(TypeError):  # (a text or NULL among the integers)
            if times == sorted(times):
                return times
    return sorted(t for t in times if type(t) is int or _finite(t))


def _records(
    timeline: list[_Event | _CkptRow], runs: dict[str, dict[str, Any]], routes: dict[str, Route | None]
) -> tuple[list[Record], dict[str, Record], list[int]]:
    """The timeline's records (an event's message and extra fields read on demand, a message built
    as it was read handed over), each event's record by its id, and the seqs of the message records."""
    records: list[Record] = []
    by_event: dict[str, Record] = {}
    marks: list[int] = []
    source = _Source(runs)
    payloads = source.payloads
    new = record_from_fields
    for seq, x in enumerate(timeline):
        line = seq + 1  # (every entry one record)
        if type(x) is _CkptRow:
            payloads.append(None)
            x.line = line
            x.where = x.where.replace("(run", f"(line {line}, run", 1)
            rec = Record(seq, line, "meta", CHECKPOINT_EVENT, id=x.event_id, timestamp=x.ts, run_id=x.run_id, extra=x.obj)
            x.record = rec
            records.append(rec)
            continue
        payloads.append(x.raw)
        if x.guarded:
            source.guarded.add(seq)
        h = x.head
        # Record's fields in declaration order (`record_from_fields`): its message and extra fields lazy.
        if h is None:
            rec = new(Record, seq, line, x.event_id, None, x.ts, 0, 0, None, None, None, (), None, source, "meta", "runtime_fact", True, False, None, None, x.run_id, UNREAD)
        else:
            m, x.message = x.message, None
            if m is not None and m.role == "assistant":
                m.route = routes.get(x.run_id or "")
            rec = new(Record, seq, line, x.event_id, None, x.ts, 0, 0, h[0], h[1], h[2], h[3], h[4], source, "message", "runtime_event", True, h[5] is not None, m, None, x.run_id, UNREAD)
            marks.append(seq)
        records.append(rec)
        by_event[x.event_id] = rec
    return records, by_event, marks


# ---------------------------------------------------------------------------------------- following


@dataclass(frozen=True, slots=True)
class MakaTail:
    """Where the last read of one session's runtime_events ended, in the session order
    (committed_at, event_id): the last key, how many rows lay up to it, the last row's payload as
    stored, and the events read (the ledger is built across all of them)."""

    sid: str
    last: tuple[Any, str] | None
    count: int
    last_payload: Any
    events: list[_Event]


def follow(path: str, selector: str | None, led: Ledger, tail: MakaTail | None) -> StoreGrowth:
    """The runtime_events one maka session gained past `led` (Format.follow): the rows after the
    last read one in the session order, parsed alone; the ledger is then assembled again from the
    kept events and the runs and checkpoint rows as they are now (a checkpoint applies across
    every event, a later response pairs an earlier call), so the report is analysed again in full
    (`notes_changed`). Read again in full, with the reason, when a row read before went or a new
    one sorts among them (the count up to the last read key), the last one was rewritten, another
    session is now the one read, or a new row has a diagnostic. A row before the last one
    rewritten in place is not seen until the next full read."""
    notes: list[Diagnostic] = []
    with sqlite_files.read_only(path, path, notes) as con:
        if not _is_maka(con):
            return StoreGrowth(None, tail, reload="the file is no longer a maka runtime.sqlite")
        choice: list[Diagnostic] = []
        sid = _choose_session(con, path, selector, choice)
        if tail is None:
            tail, why = _tail_of(con, path, led, sid)
            if tail is None:
                return StoreGrowth(None, tail, reload=why)
        if sid != tail.sid:
            return StoreGrowth(None, tail, reload=f"session {sid!r} is now the one read, was {tail.sid!r}")
        return _grown(con, path, led, tail, notes, choice)


def _tail_of(con: sqlite3.Connection, name: str, led: Ledger, sid: str) -> tuple[MakaTail | None, str]:
    """The tail of a ledger just read in full: its events parsed again from the rows it was read
    from (the first ones of the session, by event id), or None and why not."""
    if led.session_id != sid:
        return None, f"session {sid!r} is now the one read"
    if any(d.problem in ("malformed_row", "row_identity_mismatch") for d in led.diagnostics):
        return None, "a row of the session could not be read whole: every read is a full one"
    read = [r.id for r in led.records if r.type != CHECKPOINT_EVENT]
    rows = con.execute(
        f"SELECT {_EVENT_COLUMNS} FROM runtime_events WHERE session_id=? ORDER BY committed_at, event_id LIMIT ?",
        (sid, len(read)),
    ).fetchall()
    diags: list[Diagnostic] = []
    events = _row_events(rows, name, 1, diags)
    if diags or [e.event_id for e in events] != read:
        return None, "the store changed while it was read"
    last = rows[-1] if rows else None
    return MakaTail(sid, (last[6], last[0]) if last else None, len(rows), last[5] if last else None, events), ""


def _grown(
    con: sqlite3.Connection, name: str, led: Ledger, tail: MakaTail, notes: list[Diagnostic], choice: list[Diagnostic]
) -> StoreGrowth:
    after = ""
    args: list[Any] = [tail.sid]
    if tail.last is not None:
        (count,) = con.execute(
            "SELECT count(*) FROM runtime_events WHERE session_id=? AND (committed_at<? OR (committed_at=? AND event_id<=?))",
            (tail.sid, tail.last[0], tail.last[0], tail.last[1]),
        ).fetchone()
        if count != tail.count:
            return StoreGrowth(
                None, tail, reload=f"a row read before changed or went, or a new one sorts among them ({count:,} rows up to the last read, were {tail.count:,})"
            )
        now = con.execute("SELECT payload_json FROM runtime_events WHERE event_id=?", (tail.last[1],)).fetchone()
        if now is None or now[0] != tail.last_payload:
            return StoreGrowth(None, tail, reload=f"the last event read ({tail.last[1]!r}) was rewritten")
        after = " AND (committed_at>? OR (committed_at=? AND event_id>?))"
        args += [tail.last[0], tail.last[0], tail.last[1]]
    rows = con.execute(
        f"SELECT {_EVENT_COLUMNS} FROM runtime_events WHERE session_id=?{after} ORDER BY committed_at, event_id", args
    ).fetchall()
    diags: list[Diagnostic] = []
    new = _row_events(rows, name, tail.count + 1, diags)
    if diags:
        return StoreGrowth(None, tail, reload=f"a new row needs a full read ({diags[0].problem})")
    events = [*tail.events, *new]
    grown = _assemble(con, name, tail.sid, events, list(choice), None)  # as `load`: the choice first ...
    grown.diagnostics[:0] = notes  # ... after the store's own notes
    if not new and _same_reading(grown, led):
        return StoreGrowth(None, tail)
    if rows:
        last = rows[-1]
        tail = MakaTail(tail.sid, (last[6], last[0]), tail.count + len(rows), last[5], events)
    return StoreGrowth(grown, tail, added=len(grown.records) - len(led.records), notes_changed=True)


def _same_reading(a: Ledger, b: Ledger) -> bool:
    """Do two ledgers of one session's events read the same (no new run or checkpoint row either)?"""
    def reading(led: Ledger) -> list[Any]:
        return [(r.id, r.kind, r.never_sent, r.checkpoint) for r in led.records]

    try:
        return (
            reading(a) == reading(b)
            and all(_same_extra(x, y) for x, y in zip(a.records, b.records, strict=True))
            and [d.message for d in a.diagnostics] == [d.message for d in b.diagnostics]
            and a.header == b.header
            and a.runs == b.runs
        )
    except RecursionError:  # (a value nested deeper than `==` walks, fuzz_live seed 683: told apart)
        return False


def _same_extra(a: Record, b: Record) -> bool:
    """Do two records hold the same extra fields? Payloads stored alike do, unread."""
    pa = a._source.payloads[a.seq] if isinstance(a._source, _Source) else None
    pb = b._source.payloads[b.seq] if isinstance(b._source, _Source) else None
    return (pa is not None and pa == pb) or a.extra == b.extra


def _skip_signed_thinking(events: list[_Event], by_event: dict[str, Record]) -> None:
    """Signed thinking in a turn whose calls carry no step id is not replayed (model-history.ts:353-362, 520-535)."""
    unpaired = {e.turn for e in events if e.call_unstepped}
    for e in events if unpaired else ():
        if e.signed_thinking and e.turn in unpaired:
            _never_sent(by_event[e.event_id])


def _never_sent(rec: Record) -> None:
    rec.never_sent = True
    if rec._message is not None:  # a message not read yet takes the flag from its record when it is
        rec._message.never_sent = True


def _replayed(c: _CkptRow, compactable: list[_Event]) -> list[_Event]:
    n = c.cp["coverage"]["eventCount"]
    anchor = _anchor_event(c.cp, compactable[:n])
    return compactable[n:] if anchor is None else [anchor, *compactable[n:]]


def _anchor_event(cp: dict[str, Any], covered: list[_Event]) -> _Event | None:
    """A mid-turn checkpoint's head anchor among the events it covers, found by the stored payload's
    id as the coverage check finds it (`match_prefix`: a row's own id may differ from it)."""
    if cp.get("phase") != "mid_turn":
        return None
    want = cp["headAnchor"]["runtimeEventId"]
    return next((e for e in covered if e.stored_id == want), None)


def _drop_unpaired_calls(led: Ledger, sent: list[_Event], by_event: dict[str, Record], name: str) -> None:
    """A function_call the replay never answers is dropped from the request (model-history.ts:693-707)."""
    answered: set[str] = set()
    for e in reversed(sent):
        rec = by_event[e.event_id]
        if rec.never_sent or rec.kind != "message":  # (an event with no content has no message)
            continue
        if rec.role == "tool" and rec.result_id:
            answered.add(rec.result_id)
        for cid in rec.call_ids:
            if cid not in answered:
                _never_sent(rec)
                led.diagnostics.append(
                    Diagnostic(
                        rec.line,
                        "unmatched_tool_call",
                        f"{name}: runtime_events row {e.event_id!r} (line {rec.line}): function_call {cid!r} has no "
                        "function_response after it; maka drops it from the request (unmatched_tool_call)",
                        severity="info",
                        seqs=[rec.seq],
                    )
                )


def _apply_checkpoint(
    con: sqlite3.Connection,
    led: Ledger,
    sid: str,
    rows: list[_CkptRow],
    compactable: list[_Event],
    by_event: dict[str, Record],
    runs: dict[str, dict[str, Any]],
    upto: int | None,
    name: str,
    digests: dict[int, str] | None,
) -> _CkptRow | None:
    """Decide which checkpoint row maka replays through, make it the ledger's checkpoint and say
    why every other one is not used. Returns the applied row."""
    for c in rows:
        c.problem = checkpoint_shape_problem(c.cp, sid)
        if c.problem is None and c.cp["version"] == 2:
            d = summary_defect(c.cp["summary"], c.cp.get("summaryFormat") == SECTIONED)
            if d is not None:
                c.problem = f"maka's loader quarantines its summary ({d})"
    admitted = [c for c in rows if c.problem is None]
    for c in rows:
        if c.problem is not None:
            sev = "warning"
            led.diagnostics.append(Diagnostic(c.line, "checkpoint_refused", f"{c.where}: checkpoint not loadable by maka: {c.problem}; it is never replayed", severity=sev, seqs=[c.record.seq] if c.record else []))
    chosen: _CkptRow | None
    exists, projected = _projection(con, sid) if upto is None else (False, None)
    if exists and projected is None:
        chosen = None
    else:
        chosen = next((c for c in admitted if c.cp["checkpointId"] == projected), None) if exists else None
        if chosen is None:
            chosen = _recover(admitted)
    if chosen is None:
        return None
    for c in admitted:
        if c is not chosen and c.record is not None:
            led.diagnostics.append(
                Diagnostic(c.line, "checkpoint_superseded", f"{c.where}: checkpoint {c.cp['checkpointId']!r} is not the one in force ({chosen.cp['checkpointId']!r} is)", severity="info", seqs=[c.record.seq])
            )
    cp = chosen.cp
    assert chosen.record is not None
    miss = match_prefix(cp, compactable, digests)
    if miss is not None:
        led.diagnostics.append(
            Diagnostic(
                chosen.line,
                "checkpoint_unused",
                f"{chosen.where}: maka does not replay checkpoint {cp['checkpointId']!r}: {_REASONS[miss]}; "
                "the raw history is sent instead (or compacted again)",
                severity="warning",
                seqs=[chosen.record.seq],
            )
        )
        return None
    if cp["version"] == 3:
        route, whence = _next_route(con, sid, runs)
        ps = cp["providerState"]
        made_on = Route(ps["modelId"], ps["connectionSlug"])
        if route is None or route != made_on:
            led.diagnostics.append(
                Diagnostic(
                    chosen.line,
                    "checkpoint_route_scoped",
                    f"{chosen.where}: checkpoint {cp['checkpointId']!r} holds encrypted {ps['kind']} state only "
                    f"{made_on.label()} can replay; the next request goes to {route.label() if route else 'an unknown route'}"
                    f"{' (' + whence + ')' if whence else ''}, so maka drops it and sends the raw history: the proven span "
                    "holds only for the route that made it",
                    severity="warning",
                    seqs=[chosen.record.seq],
                )
            )
            return None
    _make_checkpoint(led, chosen, compactable, by_event)
    return chosen


def _make_checkpoint(led: Ledger, c: _CkptRow, compactable: list[_Event], by_event: dict[str, Record]) -> None:
    cp = c.cp
    rec = c.record
    assert rec is not None
    n = cp["coverage"]["eventCount"]
    covered = compactable[:n]
    first, through = covered[0].event_id, covered[-1].event_id
    anchor = _anchor_event(cp, covered)
    v3 = cp["version"] == 3
    summary_item = HistoryItem(
        "assistant" if v3 else "user",
        provider_item_text(cp) if v3 else render_checkpoint(cp),
        kind="summary",
        id=cp["providerState"]["itemId"] if v3 else f"history-compact:{cp['checkpointId']}",
    )
    replacement = [summary_item]
    if anchor is not None:
        replacement.append(HistoryItem("user", seq=by_event[anchor.event_id].seq))
    replacement += [HistoryItem(by_event[e.event_id].role or "", seq=by_event[e.event_id].seq) for e in compactable[n:] if by_event[e.event_id].seq < rec.seq]
    rec.kind = "checkpoint"
    rec.checkpoint = Checkpoint(
        summary="" if v3 else cp["summary"],
        trigger=cp.get("phase") or "pre_turn",
        details=cp,
        explicit_boundary=through,
        explicit_represents=[(first, through)],
        explicit_retains=[anchor.event_id] if anchor is not None else [],
        replacement=replacement,
        opaque_summary="encrypted provider state" if v3 else None,
    )
    if v3:
        led.diagnostics.append(
            Diagnostic(
                c.line,
                "opaque_summary",
                f"{c.where}: checkpoint {cp['checkpointId']!r} (v3) replaces {n} events with encrypted provider state: "
                "what it represents is known, its content is not readable here",
                severity="info",
                seqs=[rec.seq],
            )
        )


FORMAT = Format(
    name=NAME,
    read_only_reason=(
        "maka would apply a `history_compact_checkpoint_recorded` record only when its prefix match (coverage.eventCount, "
        "through, sourceDigest) holds (history-compact-checkpoint.ts:537-619; docs/runtimes/maka.md §4), "
        "but maka is not published, so it cannot be run here to prove it resumes from one this tool writes"
    ),
    label="maka runtime.sqlite",
    runtime=Runtime(**RUNTIME_RULES),
    claims=lambda path, head: head.startswith(sqlite_files.SQLITE_MAGIC) and looks_like_file(path),
    load_file=lambda path, _f, _head, selector, upto: load(path, selector, upto),
    looks_like_file=looks_like_file,
    sessions_by_selector=True,  # FILE#SESSION
    session_ids=lambda path: sqlite_files.store_session_ids(
        path, "SELECT session_id FROM runtime_events GROUP BY session_id ORDER BY MAX(committed_at), session_id"
    ),
    suffixes=(".sqlite", ".sqlite3", ".db"),
    default_places=DEFAULT_PLACES,
    # Electron's appData on Linux, under which userData `Maka` lives: `$XDG_CONFIG_HOME`, else
    # ~/.config (Electron's app.getPath("appData")). maka sets userData itself only for its isolated
    # E2E runs (`MAKA_E2E_USER_DATA_DIR`, apps/desktop/src/main/main.ts:49-50), not a user's home.
    homes=(Home("~/.config", (HomeOverride("XDG_CONFIG_HOME"),)),),
    not_session_files=NOT_SESSION_FILES,
    follow=follow,
)
