"""adk-go's index-first load (issue 15): a light typed head of each event, decoded with msgspec
from a store row's JSON columns or an export's event, without building its content.

A head is taken only where it gives exactly what the whole parse (`adk_go.make_event`, the
reference) gives: every key in the one spelling declared here (adk-go's keys are matched
case-insensitively, so any other spelling, and any key not declared, sends the event to the whole
parse), every field of the type the field guard (`fields.ADK`) allows, no `compaction` (records are
few and take the whole parse), and every value skipped unread one that orjson reads too (UTF-8
checked, non-string values parsed). Anything else returns None and the event is read whole, with
its diagnostics. tests/test_adk_go_heads.py holds the two paths equal on mutated events.
"""

from __future__ import annotations

from typing import Any

import msgspec
import orjson

from inspector.formats import heads

_UNSET: Any = msgspec.UNSET
_Unset = msgspec.UnsetType
_Raw = msgspec.Raw
_Int64 = heads.Int64
_LITERALS = frozenset({b"true", b"false", b"null", b"{}", b"[]", b'""'})


class FnCall(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    id: str | _Unset | None = _UNSET
    name: str | _Unset | None = _UNSET
    args: dict[str, _Raw] | _Unset | None = _UNSET


class FnResponse(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    id: str | _Unset | None = _UNSET
    name: str | _Unset | None = _UNSET
    response: dict[str, _Raw] | _Unset | None = _UNSET


class Part(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    text: str | None = None
    thought: bool | None = None
    thoughtSignature: str | None = None
    functionCall: FnCall | None = None
    functionResponse: FnResponse | None = None


class Content(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    role: str | None = None
    parts: list[Part] | None = None


class Usage(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    promptTokenCount: _Int64 | None = None
    candidatesTokenCount: _Int64 | None = None
    cachedContentTokenCount: _Int64 | None = None
    thoughtsTokenCount: _Int64 | None = None
    totalTokenCount: _Raw = _UNSET  # (not typed by the guard: any value)


class Actions(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """`EventActions` in both casings (Go field names on the compaction stack, camelCase on main);
    a `compaction` that is not null takes the whole parse."""

    StateDelta: dict[str, _Raw] | None = None
    ArtifactDelta: dict[str, _Raw] | None = None
    RequestedToolConfirmations: dict[str, _Raw] | None = None
    SkipSummarization: bool | None = None
    TransferToAgent: str | _Unset | None = _UNSET
    Escalate: bool | None = None
    stateDelta: dict[str, _Raw] | None = None
    artifactDelta: dict[str, _Raw] | None = None
    requestedToolConfirmations: dict[str, _Raw] | None = None
    skipSummarization: bool | None = None
    transferToAgent: str | _Unset | None = _UNSET
    escalate: bool | None = None
    compaction: None = None


class ExportEvent(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """`session.Event` as main's MarshalJSON writes it (camelCase)."""

    id: str | None = None
    timestamp: str | heads.Num | None = None
    invocationId: str | None = None
    author: str | None = None
    branch: str | None = None
    isolationScope: str | None = None
    content: Content | None = None
    usageMetadata: Usage | None = None
    finishReason: str | None = None
    errorCode: _Raw = _UNSET
    errorMessage: str | None = None
    actions: Actions | None = None
    longRunningToolIds: list[str] | None = None
    partial: _Raw = _UNSET
    turnComplete: _Raw = _UNSET
    interrupted: _Raw = _UNSET


CONTENT = msgspec.json.Decoder(Content)
USAGE = msgspec.json.Decoder(Usage)
ACTIONS = msgspec.json.Decoder(Actions)
IDS = msgspec.json.Decoder(list[str])
EVENT = msgspec.json.Decoder(ExportEvent)
LIST = msgspec.json.Decoder(list[_Raw])
UNSET: Any = _UNSET
FALSY = frozenset({b"null", b"false", b"0", b'""'})  # an error code these spell sets no error
ERRORS = heads.DECODE_ERRORS


def raw_ok(r: Any) -> bool:
    """Does orjson read this value skipped unread (a number past a double's range it does not)?"""
    if r is _UNSET:
        return True
    b = bytes(r)
    if b[:1] == b'"' or b in _LITERALS:
        return True
    try:
        orjson.loads(b)
    except orjson.JSONDecodeError:
        return False
    return True


def _values_ok(d: dict[str, Any] | Any | None) -> bool:
    return type(d) is not dict or all(raw_ok(v) for v in d.values())


def actions_ok(a: Actions) -> bool:
    """Its skipped values readable, and not both spellings of `transferToAgent` (Go's decoder and
    `adk_go._lower` then keep the one written first, which a head cannot tell)."""
    if a.TransferToAgent is not _UNSET and a.transferToAgent is not _UNSET:
        return False
    for d in (a.StateDelta, a.ArtifactDelta, a.RequestedToolConfirmations, a.stateDelta, a.artifactDelta, a.requestedToolConfirmations):
        if d and not all(raw_ok(v) for v in d.values()):
            return False
    return True


def transfer(a: Actions | None) -> str | None:
    if a is None:
        return None
    t = a.TransferToAgent if a.TransferToAgent is not _UNSET else a.transferToAgent
    return t if type(t) is str and t else None


def utf8_ok(b: bytes) -> bool:
    return b.isascii() or heads.valid_utf8(b)


# What `adk_go` keeps of an event's content without its blocks: the genai role, whether it is
# content at all, its call and response ids, an excluded (framework) call or response in it,
# whether every part is zero-valued, and its message's index fields (None: no message).
Shape = tuple[str, bool, list[str], list[str], bool, bool, tuple[str, str | None, str, tuple[str, ...], str | None] | None]

def shape(c: Content | None, author: str, error_code: bool, finish: str | None, excluded: frozenset[str], finish_map: Any) -> Shape | None:
    """`c`'s shape as `adk_go._shape` reads it from the whole event; None when a skipped value
    is one orjson would refuse."""
    if c is None:
        return "", False, [], [], False, True, None
    role_raw = c.role
    parts = c.parts
    role = role_raw if role_raw is not None else ""
    if not parts:
        return role, False, [], [], False, True, None
    calls: list[str] = []
    resps: list[str] = []
    call_ids: list[str] = []
    result_id: str | None = None
    ncalls = nresults = 0
    excl = False
    zero = True
    for p in parts:
        fc, fr = p.functionCall, p.functionResponse
        if zero:
            zero = _zero_part(p)
        if fc is not None:
            if not _values_ok(fc.args):
                return None
            cid = fc.id if fc.id is not _UNSET else None
            calls.append(cid or "")
            ncalls += 1
            if cid:
                call_ids.append(cid)
            excl = excl or (fc.name is not _UNSET and fc.name in excluded)
        if fr is not None:
            if not _values_ok(fr.response):
                return None
            rid = fr.id if fr.id is not _UNSET else None
            resps.append(rid or "")
            excl = excl or (fr.name is not _UNSET and fr.name in excluded)
            if fc is None:
                if not nresults:
                    result_id = rid
                nresults += 1
    if nresults and not ncalls:
        mrole = "tool"
    elif role_raw == "model" or (author != "user" and role_raw != "user"):
        mrole = "assistant"
    else:
        mrole = "user"
    stop = None
    if mrole == "assistant":
        if error_code:
            stop = "error"
        elif ncalls:
            stop = "tool_use"
        elif finish is not None:
            stop = finish_map(finish)
        else:
            stop = "stop"
    source = "user" if mrole == "user" and author == "user" else ("function_response" if mrole == "tool" else author)
    has = bool(role)
    return role, has, calls, resps, excl, zero, (mrole, stop, source, tuple(call_ids), result_id)


def _zero_part(p: Part) -> bool:
    """`adk_go._zero` of the part as the whole parse renames it: every value None, "", False, {}."""
    fc, fr = p.functionCall, p.functionResponse
    return not (p.text or p.thought or p.thoughtSignature or (fc is not None and _set(fc)) or (fr is not None and _set(fr)))


def _set(o: FnCall | FnResponse) -> bool:
    """Is the object not `{}`?"""
    return any(getattr(o, f) is not _UNSET for f in o.__struct_fields__)
