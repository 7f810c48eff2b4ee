"""Index-first reading of an ADK event (issue 15): a light typed decode of the event's JSON (its
"head") that tells everything the index of its record holds (kind, role, stop reason, tool-call
and response ids, never-sent) and what the compaction rules and the router read (author, branch,
run, actions, error code, scope, long-running calls), without building its content; the content
and the record's extra fields are read again from the same bytes when first asked for
(formats/adk.py `_RowLater`).

A head is taken only where it is sure to say what the whole parse says: every field the shared
guard types (`fields.ADK`) has its declared type (msgspec rejects any other, and the event is then
read the whole way, diagnostics and all), the JSON is one object orjson reads (not large enough to
be cut, a numeric timestamp), and the event is not a compaction (those are few, and read whole).
`None` otherwise.
"""

from __future__ import annotations

from typing import Annotated, Any

import msgspec
import orjson

from inspector.formats import bounded
from inspector.ledger.model import normalize_stop_reason

_NULL = msgspec.Raw(b"null")  # a field left out reads as this very object
_I64 = Annotated[int, msgspec.Meta(ge=-(2**63), le=2**63 - 1)]  # `fields.INT`: 64 bits, not a boolean
_QUOTE = 0x22
_LARGE = bounded.LARGE_LINE_BYTES  # (`bounded.is_large`)

_FINISH = {"STOP": "stop", "MAX_TOKENS": "length", "SAFETY": "other", "MALFORMED_FUNCTION_CALL": "error"}


def finish_stop(finish_reason: str) -> str | None:
    """A model reply's stored finish reason as a normalized stop reason (adk-go's too)."""
    return _FINISH.get(finish_reason) or normalize_stop_reason(finish_reason)


# Events ADK never puts in a request (`_is_auth_event` and friends).
FRAMEWORK_CALLS = frozenset({"adk_request_credential", "adk_request_confirmation", "adk_framework"})


class _Call(msgspec.Struct):
    id: str | None = None
    name: str | None = None


class _Part(msgspec.Struct):
    text: msgspec.Raw = _NULL  # a string or null (checked below): its text is not built
    thought: msgspec.Raw = _NULL
    thought_signature: msgspec.Raw = _NULL
    function_call: _Call | None = None
    function_response: _Call | None = None


class _Content(msgspec.Struct):
    role: str | None = None
    parts: list[_Part] | None = None


class _Usage(msgspec.Struct):
    prompt_token_count: _I64 | None = None
    candidates_token_count: _I64 | None = None
    cached_content_token_count: _I64 | None = None
    thoughts_token_count: _I64 | None = None


class _Actions(msgspec.Struct):
    transfer_to_agent: str | None = None
    compaction: msgspec.Raw = _NULL
    agent_state: msgspec.Raw = _NULL
    end_of_agent: msgspec.Raw = _NULL


class _Event(msgspec.Struct):
    id: str | None = None
    invocation_id: str | None = None
    author: str | None = None
    branch: str | None = None
    timestamp: int | float | None = None
    content: _Content | None = None
    finish_reason: str | None = None
    error_message: str | None = None
    error_code: msgspec.Raw = _NULL
    usage_metadata: _Usage | None = None
    actions: _Actions | None = None
    isolation_scope: msgspec.Raw = _NULL
    long_running_tool_ids: msgspec.Raw = _NULL


_DECODE = msgspec.json.Decoder(_Event).decode
_BLANK: tuple[Any, ...] = (None, {}, [], "")


def _value(raw: msgspec.Raw) -> Any:
    """A raw field's value as the whole parse reads it (orjson's, big integers included)."""
    return None if raw is _NULL else orjson.loads(memoryview(raw))


def _truthy(raw: msgspec.Raw) -> bool:
    if raw is _NULL:
        return False
    mv = memoryview(raw)
    if mv[0] == _QUOTE:
        return len(mv) > 2  # a string: empty only as ""
    return bool(orjson.loads(mv))


class Head(msgspec.Struct, gc=False):
    """What the index of one event's record holds, from its head. `fields` is the part of its record
    extra the analysis and the rules read (author, branch, scope, long-running calls, kept as the
    extra keeps them; the actions and error code the router reads, as stored)."""

    id: str | None
    ts: float
    raw_ts: int | float  # the timestamp as orjson reads it (`ts` is its float)
    author: str | None
    invocation_id: str | None
    fields: dict[str, Any]
    message: bool  # whether it carries a message (else a meta record)
    role: str | None = None
    stop_reason: str | None = None
    source_role: str | None = None
    call_ids: tuple[str, ...] = ()
    result_id: str | None = None
    response_ids: tuple[str, ...] = ()
    never_sent: bool = False
    # Whether any part holds a function call / response (whatever else it holds: a dump's append
    # order ranks events by them, `adk._kind_rank`).
    any_call: bool = False
    any_response: bool = False


def head(data: Any) -> Head | None:
    """The head of one event's JSON (bytes, or a dump's slice), or None when it must be read whole."""
    if (type(data) is not bytes and type(data) is not memoryview) or len(data) > _LARGE:
        return None
    try:
        # The record reads these bytes whole again on demand: orjson must read them as the whole
        # parse does. msgspec does not check what it skips or leaves raw the way orjson does (a
        # number out of a double's range, a lone surrogate, invalid UTF-8): such a row is read
        # whole now, its diagnostic and all. (Thrown away at once, this costs little: keeping
        # every event's objects was the expense.)
        whole = orjson.loads(data)
    except orjson.JSONDecodeError:
        return None
    try:
        h = _DECODE(data)
    except (msgspec.DecodeError, RecursionError):  # (a ValidationError too: a field of another type)
        return None
    ts = h.timestamp
    actions = h.actions
    if ts is None or (
        actions is not None and actions.compaction is not _NULL and _value(actions.compaction) is not None
    ):
        return None
    fields = _fields(h)
    content = h.content
    parts = content.parts if content is not None else None
    raw_ts = whole["timestamp"]  # (as stored: a dump's ties compare it)
    if not parts:
        return Head(h.id, float(ts), raw_ts, h.author, h.invocation_id, fields, False)
    return _message_head(h, float(ts), raw_ts, fields, content, parts)  # type: ignore[arg-type]


def _fields(h: _Event) -> dict[str, Any]:
    """The extra's fields the analysis and the rules read, with the extra's own rules (author and
    branch kept unless null, the others unless blank); the actions' the router reads, as stored."""
    out: dict[str, Any] = {}
    if h.author is not None:
        out["author"] = h.author
    if h.branch is not None:
        out["branch"] = h.branch
    if (
        (raw := h.isolation_scope) is not _NULL
        and (v := orjson.loads(memoryview(raw))) is not None
        and v not in _BLANK
    ):
        out["isolation_scope"] = v
    if (
        (raw := h.long_running_tool_ids) is not _NULL
        and (mv := memoryview(raw)) != b"[]"  # (most events hold []: blank, no parse)
        and (v := orjson.loads(mv)) is not None
        and v not in _BLANK
    ):
        out["long_running_tool_ids"] = v
    if h.error_code is not _NULL:
        out["error_code"] = orjson.loads(memoryview(h.error_code))
    a = h.actions
    if a is not None:
        acts: dict[str, Any] = {}
        if a.transfer_to_agent is not None:
            acts["transfer_to_agent"] = a.transfer_to_agent
        if a.agent_state is not _NULL:
            acts["agent_state"] = orjson.loads(memoryview(a.agent_state))
        if a.end_of_agent is not _NULL:
            acts["end_of_agent"] = orjson.loads(memoryview(a.end_of_agent))
        out["actions"] = acts
    return out


def _message_head(
    h: _Event, ts: float, raw_ts: Any, fields: dict[str, Any], content: _Content, parts: list[_Part]
) -> Head | None:
    """`adk._message_of`'s index, from the parts' heads (None: a text that is neither a string nor null)."""
    call_ids: list[str] = []
    response_ids: list[str] = []
    result_id = None
    calls = results = 0
    never = visible = signed = any_call = any_response = False
    for p in parts:
        text = p.text
        is_text = False
        if text is not _NULL:
            mv = memoryview(text)
            if mv[0] == _QUOTE:
                is_text = True
            elif mv != b"null":
                return None  # another type: the guard's diagnostic, from the whole parse
        if not signed and p.thought_signature is not _NULL:
            signed = _truthy(p.thought_signature)
        fc, fr = p.function_call, p.function_response
        any_call = any_call or fc is not None
        any_response = any_response or fr is not None
        if fc is not None:
            calls += 1
            if fc.id:
                call_ids.append(fc.id)
            never = never or fc.name in FRAMEWORK_CALLS
            visible = True
        elif fr is not None:
            if not results:
                result_id = fr.id
            if fr.id:
                response_ids.append(fr.id)
            results += 1
            never = never or fr.name in FRAMEWORK_CALLS
            visible = True
        elif is_text:
            if not visible and (p.thought is _NULL or not _truthy(p.thought)):
                visible = len(mv) > 2
        else:
            visible = True  # an `other` block
    role, stop, _, source = role_and_stop(
        str(h.author or ""), content.role, calls, results, fields.get("error_code"), h.finish_reason
    )
    if not visible and not signed:
        never = True
    return Head(
        h.id, ts, raw_ts, h.author, h.invocation_id, fields, True, role, stop, source, tuple(call_ids), result_id,
        tuple(response_ids), never, any_call, any_response,
    )  # fmt: skip


def role_and_stop(
    author: str, role_raw: Any, calls: int, results: int, error_code: Any, finish_reason: Any
) -> tuple[str, str | None, Any, str]:
    """An event's message's role, stop reason (normalized, and as stored) and source role, from its
    author, its content's role, how many calls and responses it makes and its error code and finish
    reason (`adk._message_of` and the head alike)."""
    if results and not calls:
        role = "tool"
    elif role_raw == "model" or (author != "user" and role_raw != "user"):
        role = "assistant"
    else:
        role = "user"
    stop = None
    stop_raw = finish_reason
    if role == "assistant":
        if error_code:
            stop, stop_raw = "error", error_code
        elif calls:
            stop = "tool_use"
        elif isinstance(finish_reason, str):
            stop = finish_stop(finish_reason)
        else:
            stop = "stop"
    source = (
        "user" if role == "user" and author == "user" else ("function_response" if role == "tool" else author)
    )
    return role, stop, stop_raw, source
