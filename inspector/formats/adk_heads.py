"""Index-first reading of an ADK event (issue 15): a light typed decode of the event's JSON (its
"head") that tells everything the index of its record holds (kind, role, stop reason, tool-call
and response ids, never-sent) and what the compaction rules and the router read (author, branch,
run, actions, error code, scope, long-running calls), without building its content; the content
and the record's extra fields are read again from the same bytes when first asked for
(formats/adk.py `_RowLater`).

A head is taken only where it is sure to say what the whole parse says: every field the shared
guard types (`fields.ADK`) has its declared type (msgspec rejects any other, and the event is then
read the whole way, diagnostics and all), the JSON is one object orjson reads (not large enough to
be cut, a numeric timestamp), and the event is neither a compaction, a rewind nor of an isolation
scope (those are few, and read whole: the loader finds the rewinds and the scopes among the events
read whole, `adk.build`).
`None` otherwise.
"""

from __future__ import annotations

from typing import Annotated, Any

import msgspec
import orjson

from inspector.formats import adk_model, bounded
from inspector.formats.adk_compaction import MAX_TOOL_CONTENT_CHARS as _MAX_TOOL_CHARS
from inspector.formats.adk_compaction import lines_size, truncated_len
from inspector.ledger.jsontext import py_str
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
AUTH_CALL = "adk_request_credential"  # (REQUEST_EUC_FUNCTION_CALL_NAME: `_is_auth_event`)
FRAMEWORK_CALLS = frozenset({AUTH_CALL, "adk_request_confirmation", "adk_framework"})


class _Call(msgspec.Struct):
    id: str | None = None
    name: str | None = None


class _Part(msgspec.Struct):
    text: msgspec.Raw = _NULL  # a string or null (checked below): its text is not built
    thought: msgspec.Raw = _NULL
    thought_signature: msgspec.Raw = _NULL
    function_call: _Call | None = None
    function_response: _Call | None = None
    # What makes a part of no text, call or response visible to ADK (`other_part_visible`).
    tool_call: msgspec.Raw = _NULL
    tool_response: msgspec.Raw = _NULL
    inline_data: msgspec.Raw = _NULL
    file_data: msgspec.Raw = _NULL
    executable_code: msgspec.Raw = _NULL
    code_execution_result: msgspec.Raw = _NULL


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
    rewind_before_invocation_id: msgspec.Raw = _NULL


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
_DECODE_ERRORS = (msgspec.DecodeError, RecursionError)  # (a ValidationError is a DecodeError)

# The strict decode, every row's first try: the fields above and every other key ADK writes,
# each of one type and decoded (no key undeclared: `forbid_unknown_fields`; nothing skipped or
# left raw but the values of the actions' deltas, which `_deltas_ok` checks). Where it decodes,
# orjson reads the row too, as it would: msgspec checks each string's UTF-8 and escapes, each
# number's syntax and range (an integer to 64 bits, where orjson would read a float past them),
# and nests no deeper than these structs. Such a row need not be parsed a second time to prove
# it, and its head is read from these typed values (`_typed_head`). Anything else (an unknown
# key, a nested call argument, a value of another type, a compaction) takes the ordinary way
# above. tests/test_adk_heads.py holds both ways equal to the whole parse. (Each struct's fields
# in the order ADK writes them: msgspec matches a key against the next field first.)
_Unset = msgspec.UnsetType
_UNSET: Any = msgspec.UNSET
_Scalars = dict[str, str | _I64 | float | bool | None]


# The fields typed `None` below are what ADK's JSON dumps write for every event as null (pydantic's
# model_dump keeps unset fields): taken only as null, which the whole parse reads as absent; any
# other value is read the ordinary way.
class _SCall(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    id: str | None = None
    args: _Scalars | None = None
    name: str | None = None
    partial_args: None = None
    will_continue: None = None


class _SResponse(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    id: str | None = None
    name: str | None = None
    response: _Scalars | None = None
    parts: None = None
    scheduling: None = None
    will_continue: None = None


# base64 as pydantic reads bytes from JSON (`val_json_bytes='base64'`, genai/_common.py:600-607):
# either alphabet, padding optional, never one character past a multiple of four (`adk_model._bytes`)
_B64 = Annotated[str, msgspec.Meta(pattern=r"^(?:[A-Za-z0-9+/_-]{4})*(?:[A-Za-z0-9+/_-]{2,3})?={0,2}$")]


class _SPart(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    text: str | None = None
    thought: bool | None = None
    thought_signature: _B64 | None = None
    function_call: _SCall | None = None
    function_response: _SResponse | None = None
    audio_transcription: None = None
    code_execution_result: None = None
    executable_code: None = None
    file_data: None = None
    inline_data: None = None
    media_processing: None = None
    media_resolution: None = None
    part_metadata: None = None
    speech_metadata: None = None
    tool_call: None = None
    tool_response: None = None
    video_metadata: None = None


class _SContent(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    parts: list[_SPart] | None = None
    role: str | None = None


class _SModality(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    modality: str | None = None
    token_count: _I64 | None = None


class _SUsage(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    cache_tokens_details: list[_SModality] | None = None
    cached_content_token_count: _I64 | None = None
    candidates_token_count: _I64 | None = None
    candidates_tokens_details: list[_SModality] | None = None
    prompt_token_count: _I64 | None = None
    prompt_tokens_details: list[_SModality] | None = None
    thoughts_token_count: _I64 | None = None
    tool_use_prompt_token_count: _I64 | None = None
    tool_use_prompt_tokens_details: list[_SModality] | None = None
    total_token_count: _I64 | None = None
    traffic_type: str | None = None


class _SConfirmation(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    hint: str = ""
    confirmed: bool = False
    payload: msgspec.Raw = _NULL


class _SNodeInfo(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    path: str = ""
    output_for: list[str] | None = None
    message_as_output: bool | None = None


# What ADK's models refuse is never taken here (adk_model): a field they do not make Optional is
# `_Unset`, not None (null is another type), or checked in `head` (the event's own).
class _SActions(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    skip_summarization: bool | None = None
    state_delta: dict[str, msgspec.Raw] | _Unset = _UNSET
    artifact_delta: dict[str, _I64] | _Unset = _UNSET
    transfer_to_agent: str | None = None
    escalate: bool | None = None
    requested_auth_configs: dict[str, msgspec.Raw] | _Unset = _UNSET
    requested_tool_confirmations: dict[str, _SConfirmation] | _Unset = _UNSET
    compaction: None = None  # (a compaction is read whole)
    end_of_agent: bool | _Unset | None = _UNSET
    agent_state: _Scalars | _Unset | None = _UNSET
    render_ui_widgets: None = None
    # (a rewind is read whole, as a compaction is: few, and the loader finds the rewinds among
    # the events read whole, so the head path pays nothing for them: `_head_of`)
    rewind_before_invocation_id: None = None
    route: None = None
    set_model_response: None = None
    transfer_reason: None = None


class _SEvent(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    model_version: str | None = None
    content: _SContent | None = None
    partial: bool | None = None
    turn_complete: bool | None = None
    finish_reason: str | None = None
    error_code: str | _Unset | None = _UNSET
    error_message: str | None = None
    interrupted: bool | None = None
    custom_metadata: _Scalars | None = None
    usage_metadata: _SUsage | None = None
    avg_logprobs: float | None = None
    interaction_id: str | None = None
    # (left out: None, as the head reads it; null is another type, which ADK refuses: events/
    # event.py:105-110, 151-153. msgspec checks no default: these cost the decode nothing.)
    invocation_id: str = None  # type: ignore[assignment]
    author: str = None  # type: ignore[assignment]
    actions: _SActions = None  # type: ignore[assignment]
    node_info: _SNodeInfo | _Unset = _UNSET
    long_running_tool_ids: list[str] | _Unset | None = _UNSET
    branch: str | None = None
    id: str = None  # type: ignore[assignment]
    timestamp: _I64 | float = None  # type: ignore[assignment]
    # (a scope other than "" is read whole, as `_head_of` reads it: `adk.task_scope` finds them
    # among the events read whole)
    isolation_scope: _Unset | None = _UNSET
    cache_metadata: None = None
    citation_metadata: None = None
    environment_id: None = None
    go_away: None = None
    grounding_metadata: None = None
    input_transcription: None = None
    interaction_status: None = None
    live_session_id: None = None
    live_session_resumption_update: None = None
    logprobs_result: None = None
    output: None = None
    output_transcription: None = None
    turn_complete_reason: None = None
    voice_activity: None = None


_STRICT = msgspec.json.Decoder(_SEvent).decode


def _lean(cls: type[msgspec.Struct], **types: Any) -> Any:
    """`cls` without its fields typed `None` (null or left out: what ADK's JSON dumps write null and
    its SQLite stores leave out), of the same options, its other fields as they are (`types`: a
    field's type where it is another lean struct). A key it lacks is an unknown field to it: the
    row is then decoded the strict way (`_lean_head`)."""
    kept = [
        (f.name, types.get(f.name, f.type), f.default)
        for f in msgspec.structs.fields(cls)
        if f.type is not type(None)
    ]
    return msgspec.defstruct(f"_Lean{cls.__name__}", kept, forbid_unknown_fields=True, gc=False)


# The strict decode of a row that writes no null field (ADK's SQLite stores'): the same structs less
# the fields only null is taken for, which every such row leaves out. Each decoded struct fills
# in, and frees, every field it declares: a third fewer per event (`heads`).
_LeanCall = _lean(_SCall)
_LeanResponse = _lean(_SResponse)
_LeanPart = _lean(_SPart, function_call=_LeanCall | None, function_response=_LeanResponse | None)
_LeanContent = _lean(_SContent, parts=list[_LeanPart] | None)  # type: ignore[valid-type]
_LEAN = msgspec.json.Decoder(
    _lean(_SEvent, content=_LeanContent | None, actions=_lean(_SActions))  # type: ignore[operator]
).decode
_PROBE = 32  # the rows `heads` tries the lean decode on first
_BLANK: tuple[Any, ...] = (None, {}, [], "")
_DEEP = 500  # brackets in a delta's value past which it is not judged here (orjson nests to 1024)


def _delta_ok(raw: msgspec.Raw) -> bool:
    """Does orjson read this raw value (a delta's: any JSON)?"""
    b = bytes(raw)
    if b.count(b"[") + b.count(b"{") > _DEEP:
        return False
    try:
        orjson.loads(b)
    except orjson.JSONDecodeError:
        return False
    return True


def _deltas_ok(a: _SActions | None) -> bool:
    if a is None:
        return True
    for d in (a.state_delta, a.requested_auth_configs):
        if d and not all(map(_delta_ok, d.values())):
            return False
    confirmations = a.requested_tool_confirmations
    return not confirmations or all(c.payload is _NULL or _delta_ok(c.payload) for c in confirmations.values())


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
    # The event's share of a summarizer prompt it is handed (`adk_compaction.lines_size`: its
    # lines' characters and one newline each), counted as it is decoded (None: count it from its
    # content when asked).
    prompt: int | None = None
    # Why google-adk's own Event model refuses the event (`adk_model.row_refusal`): then its
    # SqliteSessionService refuses the whole session.
    refused: str | None = None
    # Whether a function call or response part has no id (ADK pairs those by name: `adk.idless_parts`).
    idless: bool = False


def heads(datas: list[Any]) -> list[Head | None]:
    """`head` of each row's JSON. Where most of the first rows decode lean (`_LEAN`: a store that
    writes no null field, as ADK's SQLite stores write none), each row is decoded lean first, the
    strict way where it does not (`_lean_head`); else (a writer of null fields, whose every row the
    lean decode would refuse) each the strict way only."""
    probe = datas[:_PROBE]
    if sum(map(_leans, probe)) * 2 > len(probe):
        return list(map(_lean_head, datas))
    return list(map(head, datas))


def _leans(data: Any) -> bool:
    if type(data) is not bytes:  # (a row's JSON NULL, or text: `head` says what it is)
        return False
    try:
        _LEAN(data)
    except _DECODE_ERRORS:
        return False
    return True


def _lean_head(data: Any) -> Head | None:
    """`head`, by the lean decode where it decodes (the same typed values: the fields it leaves out
    are those `_typed_head` never reads, each null or left out), else `head`'s own way."""
    if type(data) is bytes and len(data) <= _LARGE:
        try:
            s = _LEAN(data)
        except _DECODE_ERRORS:
            return head(data)
        if (
            (a := s.actions) is None
            or not (a.state_delta or a.artifact_delta or a.requested_auth_configs or a.requested_tool_confirmations)
            or _deltas_ok(a)
        ):
            return _typed_head(s)
    return head(data)


def head(data: Any) -> Head | None:
    """The head of one event's JSON (bytes, or a dump's slice), or None when it must be read whole."""
    if (type(data) is not bytes and type(data) is not memoryview) or len(data) > _LARGE:
        return None
    try:
        s = _STRICT(data)
    except _DECODE_ERRORS:
        s = None
    # (`_deltas_ok` only where a delta holds anything: most actions' are all empty)
    if s is not None and (
        (a := s.actions) is None
        or not (a.state_delta or a.artifact_delta or a.requested_auth_configs or a.requested_tool_confirmations)
        or _deltas_ok(a)
    ):
        return _typed_head(s)
    try:
        # The record reads these bytes whole again on demand: orjson must read them as the whole
        # parse does. msgspec does not check what it skips or leaves raw the way orjson does (a
        # number out of a double's range, a lone surrogate, invalid UTF-8): such a row is read
        # whole now, its diagnostic and all. (Thrown away at once, this costs little: keeping
        # every event's objects was the expense.)
        whole = orjson.loads(data)
    except orjson.JSONDecodeError:
        return None
    if type(whole) is not dict:
        return None
    try:
        h = _DECODE(data)
    except _DECODE_ERRORS:  # (a ValidationError too: a field of another type)
        return None
    got = _head_of(h, whole)
    if got is not None:  # (the strict decode takes no event ADK refuses: only this way needs asking)
        got.refused = adk_model.row_refusal(data if type(data) is bytes else bytes(data), whole, False)
    return got


TRANSCRIPTIONS = (("input_transcription", "user"), ("output_transcription", "assistant"))


def transcription_text(o: dict[str, Any], key: str) -> str:
    """The text of an event's `key` transcription ("": none, or none ADK converts: its `text` empty)."""
    t = o.get(key)
    text = t.get("text") if isinstance(t, dict) else None
    return text if isinstance(text, str) else ""


def _head_of(h: _Event, whole: dict[str, Any]) -> Head | None:
    """The head of an event decoded the ordinary way (`whole`: orjson's read of it)."""
    ts = h.timestamp
    raw_ts = whole.get("timestamp")
    actions = h.actions
    if ts is None or (
        actions is not None
        and (
            (actions.compaction is not _NULL and _value(actions.compaction) is not None)
            or _truthy(actions.rewind_before_invocation_id)  # a rewind (events/_rewind_events.py:46): read whole
        )
    ):
        return None
    fields = _fields(h)
    if "isolation_scope" in fields:
        return None  # (scoped: read whole, `adk.task_scope` finds them among those)
    content = h.content
    if any(isinstance(whole.get(key), dict) for key, _ in TRANSCRIPTIONS):
        # (a live session's speech: read whole, its transcription in its fields, where the analysis
        # looks for it, `analysis.adk.joined_transcriptions`; without content, a message of it,
        # `adk._transcription_message`)
        return None
    parts = content.parts if content is not None else None
    if not parts:
        return Head(h.id, float(ts), raw_ts, h.author, h.invocation_id, fields, False, prompt=0)
    got = _message_head(h, float(ts), raw_ts, fields, content, parts)  # type: ignore[arg-type]
    if got is not None:
        got.prompt = lines_size(h.author or "", whole.get("content"))
    return got


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


# The fields of a part that make it visible to ADK unless it is a thought (data, code and its result,
# which another agent's event relays as they are: _fencing.py:338-346), and those that make it
# visible even then (flows/llm_flows/context/_contents.py:205-253, `_is_part_invisible`).
DATA_PARTS = ("inline_data", "file_data", "executable_code", "code_execution_result")
_ECHOED = ("tool_call", "tool_response")


def other_part_visible(p: dict[str, Any]) -> bool:
    """Whether ADK sends a part of no text, call or response (`adk._message_of`'s `other` block):
    a server-side tool's call or response, or data, code or its result that is not a thought (its
    thought signature aside, which the caller checks)."""
    if any(p.get(k) is not None for k in _ECHOED):
        return True
    return not p.get("thought") and any(p.get(k) is not None for k in DATA_PARTS)


def _other_head_visible(p: _Part) -> bool:
    """`other_part_visible` of a part's head (a field written null reads as null)."""
    if _given(p.tool_call) or _given(p.tool_response):
        return True
    return not _truthy(p.thought) and any(map(_given, (p.inline_data, p.file_data, p.executable_code, p.code_execution_result)))


def _given(raw: msgspec.Raw) -> bool:
    """Whether a raw field holds a value (not left out, not null)."""
    return raw is not _NULL and memoryview(raw) != b"null"


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
        elif not visible:  # an `other` block
            visible = _other_head_visible(p)
    role, stop, _, source = role_and_stop(
        str(h.author or ""), content.role, calls, results, fields.get("error_code"), h.finish_reason
    )
    if (not visible and not signed) or not content.role:
        never = True  # (a content without a role too, `adk._message_of`)
    return Head(
        h.id, ts, raw_ts, h.author, h.invocation_id, fields, True, role, stop, source, tuple(call_ids), result_id,
        tuple(response_ids), never, any_call, any_response, idless=calls > len(call_ids) or results > len(response_ids),
    )  # fmt: skip


# The fields of an event holding its author and empty actions only (most events), one dict per
# author, shared by its events (nothing changes a head's fields): kept for a few hundred authors.
_PLAIN: dict[str, dict[str, Any]] = {}
_PLAIN_MAX = 512


def _plain_fields(author: str) -> dict[str, Any]:
    got = _PLAIN.get(author)
    if got is None:
        got = {"author": author, "actions": {}}
        if len(_PLAIN) < _PLAIN_MAX:
            _PLAIN[author] = got
    return got


def _typed_fields(s: _SEvent, author: str | None) -> dict[str, Any]:
    """`_fields` of a strict decode, in its order, from typed values (most events hold their
    author and empty actions only: one shared dict, `_plain_fields`)."""
    a = s.actions
    if (
        author is not None
        and a is not None
        and s.branch is None
        and not s.long_running_tool_ids
        and s.error_code is _UNSET
        and a.transfer_to_agent is None
        and a.agent_state is _UNSET
        and a.end_of_agent is _UNSET
    ):
        return _plain_fields(author)
    out: dict[str, Any] = {"author": author} if author is not None else {}
    if s.branch is not None:
        out["branch"] = s.branch
    if s.long_running_tool_ids:
        out["long_running_tool_ids"] = s.long_running_tool_ids
    if (code := s.error_code) is not _UNSET:
        out["error_code"] = code
    if (a := s.actions) is not None:
        if a.transfer_to_agent is None and a.agent_state is _UNSET and a.end_of_agent is _UNSET:
            out["actions"] = {}
        else:
            acts: dict[str, Any] = {}
            if a.transfer_to_agent is not None:
                acts["transfer_to_agent"] = a.transfer_to_agent
            if a.agent_state is not _UNSET:
                acts["agent_state"] = a.agent_state
            if a.end_of_agent is not _UNSET:
                acts["end_of_agent"] = a.end_of_agent
            out["actions"] = acts
    return out


def _typed_head(s: _SEvent) -> Head | None:
    """`_head_of` for a strict decode: the same head, from typed values instead of raw ones (and
    `_message_head`'s index from typed parts, where a text is a string or null; `role_and_stop`
    inline)."""
    ts = s.timestamp
    if ts is None:
        return None
    author = s.author
    acts = s.actions
    if (  # (`_typed_fields`' shared case inline: most events hold their author and empty actions only)
        author is not None
        and acts is not None
        and s.branch is None
        and not s.long_running_tool_ids
        and s.error_code is _UNSET
        and acts.transfer_to_agent is None
        and acts.agent_state is _UNSET
        and acts.end_of_agent is _UNSET
        and (out := _PLAIN.get(author)) is not None
    ):
        author = out["author"]  # (its shared fields' string: one per author, not per event)
    else:
        out = _typed_fields(s, author)
        author = out.get("author", author)
    content = s.content
    if content is None or not (parts := content.parts):
        return Head(s.id, float(ts), ts, author, s.invocation_id, out, False, prompt=0)
    if not content.role:  # never sent (`adk._message_of`)
        got = _parts_head(s, ts, author, out, content, parts)
        got.never_sent = True
        return got
    if len(parts) == 1:  # (one part: most events)
        p = parts[0]
        fc, fr = p.function_call, p.function_response
        if fc is None and fr is None:
            if p.text is not None:
                return _text_head(s, ts, author, out, content, p)
        elif p.text is None and (fc is None or fr is None):
            return _tool_head(s, ts, author, out, content, p, fc, fr)
    return _parts_head(s, ts, author, out, content, parts)


def _parts_head(
    s: _SEvent,
    ts: int | float,
    author: str | None,
    out: dict[str, Any],
    content: _SContent,
    parts: list[_SPart],
) -> Head:
    """`_typed_head` of an event's parts, walked one by one."""
    call_ids: list[str] = []
    response_ids: list[str] = []
    result_id = None
    calls = results = 0
    never = visible = signed = any_call = any_response = False
    a = len(author) if author else 0
    prompt = 0  # (`adk_compaction._lines_size`: each line's characters, and a newline)
    for p in parts:
        fc, fr = p.function_call, p.function_response
        if (text := p.text) is not None:
            if text:
                prompt += a + (13 if p.thought else 3) + len(text)  # "{a} (thought): {t}" | "{a}: {t}"
            if fc is None and fr is None:  # a text part (the most common)
                if not visible and not p.thought:
                    visible = text != ""
                if not signed and p.thought_signature:
                    signed = True
                continue
        if not signed and p.thought_signature:
            signed = True
        if fc is not None:  # "{a} called tool: {name}({args})"
            try:  # (str() in place: a call of `py_str` per part costs the head path; it is the fallback)
                n = len(str(fc.args))
            except RecursionError:
                n = len(py_str(fc.args))
            prompt += a + 17 + len(f"{fc.name}") + (n if n <= _MAX_TOOL_CHARS else truncated_len(n))
        if fr is not None:  # "Tool response from {name}: {response}"
            try:
                n = len(str(fr.response))
            except RecursionError:
                n = len(py_str(fr.response))
            prompt += 22 + len(f"{fr.name}") + (n if n <= _MAX_TOOL_CHARS else truncated_len(n))
        if fc is not None:
            any_call = visible = True
            any_response = any_response or fr is not None
            calls += 1
            if fc.id:
                call_ids.append(fc.id)
            never = never or fc.name in FRAMEWORK_CALLS
        elif fr is not None:
            any_response = visible = True
            if not results:
                result_id = fr.id
            if fr.id:
                response_ids.append(fr.id)
            results += 1
            never = never or fr.name in FRAMEWORK_CALLS
        # (else an `other` block: every field that makes one visible to ADK is null in `_SPart`,
        # `other_part_visible`; a thought signature is `signed`)
    # (`role_and_stop`, inline: a call per event cost a tenth of the head)
    if results and not calls:
        role, stop, source = "tool", None, "function_response"
    elif content.role == "model" or (author != "user" and content.role != "user"):
        role, source = "assistant", author or ""
        code = s.error_code
        if code is not _UNSET and code:
            stop = "error"
        elif calls:
            stop = "tool_use"
        else:
            stop = finish_stop(s.finish_reason) if isinstance(s.finish_reason, str) else "stop"
    else:
        role, stop, source = "user", None, author or ""  # ("user" when the author is)
    return Head(
        s.id, float(ts), ts, author, s.invocation_id, out, True, role, stop, source,
        tuple(call_ids) if call_ids else (), result_id, tuple(response_ids) if response_ids else (),
        never or not (visible or signed), any_call, any_response, prompt,
        idless=calls > len(call_ids) or results > len(response_ids),  # (a call or response without an id)
    )  # fmt: skip


def _text_head(s: _SEvent, ts: int | float, author: str | None, out: dict[str, Any], content: _SContent, p: _SPart) -> Head:
    """`_typed_head` of an event whose content is one text part `p` (no call, no response): the
    same head without the walk over its parts."""
    text: str = p.text  # type: ignore[assignment]
    prompt = (len(author) if author else 0) + (13 if p.thought else 3) + len(text) if text else 0
    visible = not p.thought and text != ""
    # (`role_and_stop` of no call and no response, inline: a call per event cost a tenth of the head)
    source = author or ""
    if (r := content.role) == "model" or (source != "user" and r != "user"):
        role = "assistant"
        if (code := s.error_code) is not _UNSET and code:
            stop: str | None = "error"
        else:
            stop = finish_stop(s.finish_reason) if isinstance(s.finish_reason, str) else "stop"
    else:
        role, stop = "user", None
    return Head(
        s.id, float(ts), ts, author, s.invocation_id, out, True, role, stop, source, (), None, (),
        not (visible or p.thought_signature), False, False, prompt,
    )  # fmt: skip


def _tool_head(
    s: _SEvent,
    ts: int | float,
    author: str | None,
    out: dict[str, Any],
    content: _SContent,
    p: _SPart,
    fc: _SCall | None,
    fr: _SResponse | None,
) -> Head:
    """`_typed_head` of an event whose content is one part `p` holding no text and either a call
    `fc` or a response `fr`: the same head without the walk over its parts."""
    if fc is not None:  # "{a} called tool: {name}({args})"
        try:
            n = len(str(fc.args))
        except RecursionError:
            n = len(py_str(fc.args))
        prompt = (len(author) if author else 0) + 17 + len(f"{fc.name}")
        prompt += n if n <= _MAX_TOOL_CHARS else truncated_len(n)
        # (`role_and_stop` of one call, inline)
        stop: str | None = None
        role = "user"
        if (r := content.role) == "model" or (author != "user" and r != "user"):
            role, stop = "assistant", "error" if (code := s.error_code) is not _UNSET and code else "tool_use"
        return Head(
            s.id, float(ts), ts, author, s.invocation_id, out, True, role, stop, author or "",
            (fc.id,) if fc.id else (), None, (), fc.name in FRAMEWORK_CALLS, True, False, prompt, idless=not fc.id,
        )  # fmt: skip
    assert fr is not None
    try:
        n = len(str(fr.response))  # "Tool response from {name}: {response}"
    except RecursionError:
        n = len(py_str(fr.response))
    prompt = 22 + len(f"{fr.name}") + (n if n <= _MAX_TOOL_CHARS else truncated_len(n))
    return Head(
        s.id, float(ts), ts, author, s.invocation_id, out, True, "tool", None, "function_response", (), fr.id,
        (fr.id,) if fr.id else (), fr.name in FRAMEWORK_CALLS, False, True, prompt, idless=not fr.id,
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
