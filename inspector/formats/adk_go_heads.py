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

from typing import Any, Generic, TypeVar

import msgspec
import orjson

from inspector.formats import heads

_UNSET: Any = msgspec.UNSET
_Unset = msgspec.UnsetType
_Raw = msgspec.Raw
_Int64 = heads.Int64
_LITERALS = frozenset({b"true", b"false", b"null", b"{}", b"[]", b'""'})


# A call's arguments and a response's fields: flat values, decoded (a number past a double's range
# or past 64 bits fails, as it should: orjson refuses the one, reads the other as a float, which
# the whole parse then judges). Nested values take the second decoder (`_NESTED`), whose nested
# numbers are judged after it (`nested_ok`).
_Flat = dict[str, str | _Int64 | float | bool | None]


V = TypeVar("V")


class FnCall(msgspec.Struct, Generic[V], forbid_unknown_fields=True, gc=False):
    id: str | _Unset | None = _UNSET
    name: str | _Unset | None = _UNSET
    args: V | _Unset | None = _UNSET


class FnResponse(msgspec.Struct, Generic[V], forbid_unknown_fields=True, gc=False):
    id: str | _Unset | None = _UNSET
    name: str | _Unset | None = _UNSET
    response: V | _Unset | None = _UNSET


class Part(msgspec.Struct, Generic[V], forbid_unknown_fields=True, gc=False):
    text: str | None = None
    thought: bool | None = None
    thoughtSignature: str | None = None
    functionCall: FnCall[V] | None = None
    functionResponse: FnResponse[V] | None = None


class Content(msgspec.Struct, Generic[V], forbid_unknown_fields=True, gc=False):
    role: str | None = None
    parts: list[Part[V]] | None = None


_Nested = dict[str, str | _Int64 | float | bool | list[Any] | dict[str, Any] | None]


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


class ExportEvent(msgspec.Struct, Generic[V], forbid_unknown_fields=True, gc=False):
    """`session.Event` as main's MarshalJSON writes it (camelCase)."""

    id: str | None = None
    timestamp: str | heads.Num | None = None
    invocationId: str | None = None
    author: str | None = None
    branch: str | None = None
    isolationScope: str | None = None
    content: Content[V] | None = None
    usageMetadata: Usage | None = None
    finishReason: str | None = None
    errorCode: _Raw = _UNSET
    errorMessage: str | None = None
    actions: _Raw = _UNSET  # (read by its bytes, as a store row's `actions` column is: `adk_go._actions`)
    longRunningToolIds: list[str] | None = None
    partial: _Raw = _UNSET
    turnComplete: _Raw = _UNSET
    interrupted: _Raw = _UNSET


CONTENT = msgspec.json.Decoder(Content[_Flat])
NESTED = msgspec.json.Decoder(Content[_Nested])
USAGE = msgspec.json.Decoder(Usage)
ACTIONS = msgspec.json.Decoder(Actions)
IDS = msgspec.json.Decoder(list[str])
EVENT = msgspec.json.Decoder(ExportEvent[_Flat])
NESTED_EVENT = msgspec.json.Decoder(ExportEvent[_Nested])
LIST = msgspec.json.Decoder(list[_Raw])
UNSET: Any = _UNSET
FALSY = frozenset({b"null", b"false", b"0", b'""'})  # an error code these spell sets no error
ERRORS = heads.DECODE_ERRORS
INVALID = msgspec.ValidationError  # (a head's value of another type: `content` tries the nested decoder)


def raw_ok(r: Any) -> bool:
    """Does orjson read this value skipped unread (a number past a double's range it does not)?"""
    if r is _UNSET:
        return True
    b = bytes(r)
    if b[:1] == b'"' or b in _LITERALS or (len(b) < 19 and b.isdigit()):  # (digits alone: an integer below 2**63)
        return True
    try:
        orjson.loads(b)
    except orjson.JSONDecodeError:
        return False
    return True


def content(b: bytes) -> Any:
    """A content's head: flat call arguments and response fields, else nested ones whose numbers
    orjson reads; raises a decode error (the whole parse then) otherwise."""
    try:
        return CONTENT.decode(b)
    except msgspec.ValidationError:
        return nested_checked(NESTED.decode(b))


def event(b: bytes) -> Any:
    """An export event's head, as `content` reads its content."""
    try:
        return EVENT.decode(b)
    except msgspec.ValidationError:
        e = NESTED_EVENT.decode(b)
    nested_checked(e.content)
    return e


def nested_checked(c: Any) -> Any:
    for p in (c.parts or ()) if c is not None else ():
        for d in (p.functionCall.args if p.functionCall else None, p.functionResponse.response if p.functionResponse else None):
            if type(d) is dict and not all(_nested_ok(x) for x in d.values()):
                raise msgspec.ValidationError("a nested number orjson would not read")
    return c


def _nested_ok(v: Any) -> bool:
    """A nested value decoded as Any: orjson writes it back only when every integer fits 64 bits
    (msgspec refuses a float past a double's range itself)."""
    if type(v) is not dict and type(v) is not list:
        return True
    try:
        orjson.dumps(v)
    except TypeError:
        return False
    return True


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
# whether every part is zero-valued, and its message's index fields (None: no message): its
# role, stop reason, source role, call ids, first result's call and every result's call (its
# `tool_result_ids()`, so that pairing a request needs no read of the message).
Head = tuple[str, str | None, str, tuple[str, ...], str | None, tuple[str, ...]]
Shape = tuple[str, bool, list[str], list[str], bool, bool, Head | None]

# The empty id list every head without calls, responses or long-running ids shares (the rules
# only read an event's lists; a session's events hold tens of thousands of them).
NONE: list[str] = []


def shape(c: Any, author: str, error_code: bool, finish: str | None, excluded: frozenset[str], finish_map: Any) -> Shape:
    """`c`'s shape, as `adk_go._shape` reads it from the whole event: `parts_shape`'s, where a
    content of one part (most events: one text, one call or one response) is read here without
    its loop and lists (tests/test_adk_go_heads.py holds the two equal)."""
    if c is None:
        return "", False, NONE, NONE, False, True, None
    role_raw = c.role
    parts = c.parts
    role = role_raw if role_raw is not None else ""
    if not parts:
        return role, False, NONE, NONE, False, True, None
    if len(parts) != 1:
        return parts_shape(c, author, error_code, finish, excluded, finish_map)
    p = parts[0]
    fc = p.functionCall
    fr = p.functionResponse
    if fr is not None and fc is None:  # a response: a tool message
        rid = fr.id
        if rid is _UNSET:
            rid = None
        zero = not (p.text or p.thought or p.thoughtSignature or fr.id is not _UNSET or fr.name is not _UNSET or fr.response is not _UNSET)
        return role, bool(role), NONE, [rid or ""], fr.name in excluded, zero, ("tool", None, "function_response", (), rid, (rid,) if rid else ())
    if fr is not None:
        return parts_shape(c, author, error_code, finish, excluded, finish_map)
    if role_raw == "model" or (author != "user" and role_raw != "user"):
        mrole = "assistant"
        source = author
        if error_code:
            stop: str | None = "error"
        elif fc is not None:
            stop = "tool_use"
        else:
            stop = finish_map(finish) if finish is not None else "stop"
    else:
        mrole, stop, source = "user", None, ("user" if author == "user" else author)
    if fc is None:  # a text, a thought or nothing
        zero = not (p.text or p.thought or p.thoughtSignature)
        return role, bool(role), NONE, NONE, False, zero, (mrole, stop, source, (), None, ())
    cid = fc.id
    zero = not (p.text or p.thought or p.thoughtSignature or cid is not _UNSET or fc.name is not _UNSET or fc.args is not _UNSET)
    ids = (cid,) if cid else ()
    return role, bool(role), [cid] if cid else [""], NONE, fc.name in excluded, zero, (mrole, stop, source, ids, None, ())


def parts_shape(c: Any, author: str, error_code: bool, finish: str | None, excluded: frozenset[str], finish_map: Any) -> Shape:
    """`shape`, part by part: any number of parts. (Its lists are made only for a part that
    fills them, and a call's or response's object tested for `{}` inline.)"""
    role_raw = c.role
    parts = c.parts
    role = role_raw if role_raw is not None else ""
    if not parts:
        return role, False, NONE, NONE, False, True, None
    calls: list[str] | None = None
    resps: list[str] | None = None
    call_ids: tuple[str, ...] = ()
    result_id: str | None = None
    result_ids: tuple[str, ...] = ()
    nresults = 0
    excl = False
    zero = True
    unset = _UNSET
    for p in parts:
        fc = p.functionCall
        fr = p.functionResponse
        if zero and (
            p.text
            or p.thought
            or p.thoughtSignature
            or (fc is not None and (fc.id is not unset or fc.name is not unset or fc.args is not unset))
            or (fr is not None and (fr.id is not unset or fr.name is not unset or fr.response is not unset))
        ):
            zero = False
        if fc is not None:
            cid = fc.id
            if calls is None:
                calls = []
            if cid:
                calls.append(cid)  # (an id that is UNSET is falsy)
                call_ids += (cid,)
            else:
                calls.append("")
            if fc.name in excluded:
                excl = True
        if fr is not None:
            rid = fr.id
            if rid is unset:
                rid = None
            if resps is None:
                resps = []
            resps.append(rid or "")
            if fr.name in excluded:
                excl = True
            if fc is None:
                if not nresults:
                    result_id = rid
                if rid:
                    result_ids += (rid,)
                nresults += 1
    if nresults and not calls:
        mrole = "tool"
    elif role_raw == "model" or (author != "user" and role_raw != "user"):
        mrole = "assistant"
    else:
        mrole = "user"
    stop = None
    if mrole == "assistant":
        if error_code:
            stop = "error"
        elif calls:
            stop = "tool_use"
        elif finish is not None:
            stop = finish_map(finish)
        else:
            stop = "stop"
    if mrole == "user":
        source = "user" if author == "user" else author
    else:
        source = "function_response" if mrole == "tool" else author
    return role, bool(role), calls or NONE, resps or NONE, excl, zero, (mrole, stop, source, call_ids, result_id, result_ids)

