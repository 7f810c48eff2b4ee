"""Which stored events google-adk 2.13's own `Event` model refuses: then the whole session is.

`SqliteSessionService.get_session` validates every event row of the session with
`Event.model_validate_json(event_data)` (sessions/sqlite_session_service.py:368-371) and lets the
first error through: one row ADK cannot validate makes the session unreadable, the Runner stops
before any model call and nothing is sent (tests/test_adk_line_rule.py asks the real ADK). A row it
cannot even decode as text (invalid UTF-8 in a TEXT column: the sqlite3 module raises) is refused
the same way.

This mirrors the pydantic models it validates against, field by field, in pydantic's lax JSON mode:
`Event` (events/event.py:87-154, extra keys ignored) and its base `LlmResponse`
(models/llm_response.py:29-188), `EventActions` and `EventCompaction` (events/event_actions.py:58-204,
extra keys forbidden), `NodeInfo` (events/event.py:35-65), `ToolConfirmation`
(tools/tool_confirmation.py:25-39), and google-genai's `Content`, `Part`, `FunctionCall`,
`FunctionResponse`, `Blob`, `FileData`, usage metadata (genai/types.py; genai/_common.py:600-607:
extra keys forbidden, bytes as base64). The models it leaves unchecked inside (grounding, citation,
logprobs, transcription, live-session metadata, a part's video metadata, code, tool calls: they
only need to be an object here), the camelCase spellings of keys pydantic also accepts, and the
convenience keys `Event` rewrites before validating (`message`, `state`, `route`, `node_path`,
events/event.py:167-239) are not mirrored. Only the events the strict decode of the load path
(`adk_heads._SEvent`) does not take are checked here: it takes none that ADK refuses.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from inspector.ledger.quoting import escape

# pydantic's lax bool from a string (pydantic-core's str -> bool), case-insensitive, unstripped.
_BOOL_STRINGS = frozenset({"0", "off", "f", "false", "n", "no", "1", "on", "t", "true", "y", "yes"})
_INT_STRING = re.compile(r"\s*[+-]?\d+(?:\.0*)?\s*")
_BASE64 = re.compile(r"[A-Za-z0-9+/_-]*={0,2}")
# jiter's recursion limit, as pydantic's JSON parse meets it: a value nested deeper is invalid JSON.
MAX_DEPTH = 201

Check = Callable[[Any], str | None]


def _str(v: Any) -> str | None:
    return None if type(v) is str else "not a string"


def _bool(v: Any) -> str | None:
    if type(v) is bool or (type(v) in (int, float) and v in (0, 1)):
        return None
    if type(v) is str and v.lower() in _BOOL_STRINGS:
        return None
    return "not a boolean"


def _int(v: Any) -> str | None:
    if type(v) in (int, bool) or (type(v) is float and v.is_integer()):
        return None
    if type(v) is str and _INT_STRING.fullmatch(v):
        return None
    return "not an integer"


def _float(v: Any) -> str | None:
    if type(v) in (int, float, bool):
        return None
    if type(v) is str:
        try:
            float(v)
        except ValueError:
            return "not a number"
        return None
    return "not a number"


def _bytes(v: Any) -> str | None:
    """`val_json_bytes='base64'`: standard or URL-safe alphabet, padding optional."""
    if type(v) is not str:
        return "not a base64 string"
    if not _BASE64.fullmatch(v) or len(v.rstrip("=")) % 4 == 1:
        return "not valid base64"
    return None


def _dict(v: Any) -> str | None:
    return None if type(v) is dict else "not an object"


def _any(v: Any) -> str | None:
    return None


def _opt(check: Check) -> Check:
    return lambda v: None if v is None else check(v)


def _list(check: Check) -> Check:
    def list_of(v: Any) -> str | None:
        if type(v) is not list:
            return "not a list"
        for i, x in enumerate(v):
            if (why := check(x)) is not None:
                return f"[{i}]: {why}"
        return None

    return list_of


def _values(check: Check) -> Check:
    def dict_of(v: Any) -> str | None:
        if type(v) is not dict:
            return "not an object"
        for k, x in v.items():
            if (why := check(x)) is not None:
                return f"[{k!r}]: {why}"
        return None

    return dict_of


def _model(fields: dict[str, Check], forbid: bool = True, required: tuple[str, ...] = ()) -> Check:
    """An object whose known keys hold what their checks take (a key left out: its default),
    with no other key when FORBID."""

    def model(v: Any) -> str | None:
        if type(v) is not dict:
            return "not an object"
        for k in required:
            if k not in v:
                return f"no {k}"
        for k, x in v.items():
            check = fields.get(k)
            if check is None:
                if forbid:
                    return f"{k!r}: a key the model does not have"
                continue
            if (why := check(x)) is not None:
                return f"{k}: {why}"
        return None

    return model


_OSTR, _OBOOL, _OINT, _OOBJ = _opt(_str), _opt(_bool), _opt(_int), _opt(_dict)

_CALL = _model({"id": _OSTR, "args": _OOBJ, "name": _OSTR, "partial_args": _opt(_list(_dict)), "will_continue": _OBOOL})
_RESPONSE = _model({
    "will_continue": _OBOOL, "scheduling": _OSTR, "parts": _opt(_list(_dict)), "id": _OSTR, "name": _OSTR,
    "response": _OOBJ,
})  # fmt: skip
_BLOB = _model({"data": _opt(_bytes), "display_name": _OSTR, "mime_type": _OSTR})
_FILE = _model({"display_name": _OSTR, "file_uri": _OSTR, "mime_type": _OSTR})
_PART = _model({
    "media_resolution": _OOBJ, "code_execution_result": _OOBJ, "executable_code": _OOBJ, "file_data": _opt(_FILE),
    "function_call": _opt(_CALL), "function_response": _opt(_RESPONSE), "inline_data": _opt(_BLOB), "text": _OSTR,
    "thought": _OBOOL, "thought_signature": _opt(_bytes), "video_metadata": _OOBJ, "tool_call": _OOBJ,
    "tool_response": _OOBJ, "part_metadata": _OOBJ, "audio_transcription": _OOBJ, "media_processing": _OOBJ,
    "speech_metadata": _OOBJ,
})  # fmt: skip
CONTENT = _model({"parts": _opt(_list(_PART)), "role": _OSTR})
_MODALITY = _opt(_list(_model({"modality": _OSTR, "token_count": _OINT})))
_USAGE = _model({
    **{k: _OINT for k in ("cached_content_token_count", "candidates_token_count", "prompt_token_count",
                          "thoughts_token_count", "tool_use_prompt_token_count", "total_token_count")},
    **{k: _MODALITY for k in ("cache_tokens_details", "candidates_tokens_details", "prompt_tokens_details",
                              "tool_use_prompt_tokens_details")},
    "traffic_type": _OSTR,
})  # fmt: skip
COMPACTION = _model(
    {"start_timestamp": _float, "end_timestamp": _float, "compacted_content": CONTENT},
    required=("start_timestamp", "end_timestamp", "compacted_content"),
)
_ROUTE_ITEM: Check = lambda v: None if type(v) in (bool, int, str) else "not a boolean, integer or string"  # noqa: E731
_ACTIONS = _model({
    "skip_summarization": _OBOOL, "state_delta": _dict, "artifact_delta": _values(_int), "transfer_to_agent": _OSTR,
    "transfer_reason": _OSTR, "escalate": _OBOOL, "requested_auth_configs": _dict,
    "requested_tool_confirmations": _values(_model({"hint": _str, "confirmed": _bool, "payload": _any})),
    "compaction": _opt(COMPACTION), "end_of_agent": _OBOOL, "agent_state": _OOBJ, "rewind_before_invocation_id": _OSTR,
    "route": _opt(lambda v: _list(_ROUTE_ITEM)(v) if type(v) is list else _ROUTE_ITEM(v)),
    "render_ui_widgets": _opt(_list(_dict)), "set_model_response": _any,
})  # fmt: skip
_NODE_INFO = _model({"path": _str, "output_for": _opt(_list(_str)), "message_as_output": _OBOOL}, forbid=False)
_ENUM = _opt(_str)  # (genai's enums take any string, with a warning: a number fails in `_missing_`)
EVENT = _model({
    "model_version": _OSTR, "content": _opt(CONTENT), "grounding_metadata": _OOBJ, "partial": _OBOOL,
    "turn_complete": _OBOOL, "turn_complete_reason": _ENUM, "interaction_status": _ENUM, "finish_reason": _ENUM,
    "error_code": _OSTR, "error_message": _OSTR, "interrupted": _OBOOL, "custom_metadata": _OOBJ,
    "usage_metadata": _opt(_USAGE), "live_session_resumption_update": _OOBJ, "live_session_id": _OSTR,
    "go_away": _OOBJ, "voice_activity": _OOBJ, "input_transcription": _OOBJ, "output_transcription": _OOBJ,
    "avg_logprobs": _opt(_float), "logprobs_result": _OOBJ, "cache_metadata": _OOBJ, "citation_metadata": _OOBJ,
    "interaction_id": _OSTR, "environment_id": _OSTR, "invocation_id": _str, "author": _str, "actions": _ACTIONS,
    "output": _any, "node_info": _NODE_INFO, "long_running_tool_ids": _opt(_list(_str)), "branch": _OSTR,
    "isolation_scope": _OSTR, "id": _str, "timestamp": _float,
}, forbid=False)  # fmt: skip

_STRING_OR_BRACKET = re.compile(rb'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.S)


def too_deep(data: bytes) -> bool:  # (bytes: a memoryview has no `count`)
    """Does the JSON nest deeper than pydantic's parse reads (`MAX_DEPTH`)?"""
    if data.count(b"[") + data.count(b"{") <= MAX_DEPTH:
        return False
    depth = 0
    for m in _STRING_OR_BRACKET.finditer(data):
        c = data[m.start()]
        if c == 0x5B or c == 0x7B:  # [ {
            depth += 1
            if depth > MAX_DEPTH:
                return True
        elif c == 0x5D or c == 0x7D:  # ] }
            depth -= 1
    return False


def refusal(obj: Any) -> str | None:
    """Why ADK's `Event` model refuses this parsed event (None: it validates)."""
    return EVENT(obj)


def _surrogate(v: Any) -> bool:
    """Does a parsed value hold a lone surrogate (a pair is one character once parsed)?"""
    if type(v) is str:
        return any("\ud800" <= c <= "\udfff" for c in v)
    if type(v) is dict:
        return any(_surrogate(k) or _surrogate(x) for k, x in v.items())
    if type(v) is list:
        return any(map(_surrogate, v))
    return False


def lenient_json(data: bytes) -> Any:
    """A row orjson refuses as pydantic's parser reads it, where that differs: NaN, Infinity or a
    number past a double's range (Python's json module reads them as pydantic does); None where
    the row is not JSON to either (or holds a lone surrogate, which pydantic refuses)."""
    try:
        obj = json.loads(data.decode("utf-8"), parse_int=_orjson_int)
        return None if _surrogate(obj) else obj
    except (ValueError, RecursionError):
        return None


def _orjson_int(text: str) -> int | float:
    """An integer as orjson reads one: past 64 bits a float (infinite past a double's range)."""
    n = int(text)
    return n if -(2**63) <= n < 2**64 else float(text)


def _json_refusal(data: bytes) -> str | None:
    """Why pydantic's JSON parse refuses a row orjson cannot read (None: it reads it: NaN,
    Infinity or a number past a double's range, which orjson refuses and pydantic's parser takes)."""
    try:
        text = data.decode("utf-8")
        obj = json.loads(text)
        if _surrogate(obj):
            return "not valid JSON: a lone surrogate escape"
    except (ValueError, RecursionError) as e:
        return f"not valid JSON: {escape(str(e))}"
    return None if type(obj) is dict else "not a JSON object"


def row_refusal(data: bytes, obj: Any, bad_utf8: bool) -> str | None:
    """Why ADK cannot load a row of these bytes, which inspector read as OBJ (None: unreadable)."""
    if bad_utf8:
        return "event_data is not valid UTF-8: the sqlite3 module cannot read it as text"
    if obj is None:
        return _json_refusal(data)
    if too_deep(data):
        return f"event_data nests deeper than {MAX_DEPTH} levels, past pydantic's JSON parser"
    if type(obj) is not dict:
        return "event_data is not a JSON object"
    if (why := refusal(obj)) is not None:
        return f"its Event model refuses it: {why}"
    return None


def state_refusal(data: Any) -> str | None:
    """Why SqliteSessionService cannot read a stored state (`_decode_state`,
    sessions/sqlite_session_service.py:184-199: `json.loads` of the column, then a JSON object),
    given the column's bytes (None: it reads it)."""
    if not isinstance(data, bytes):
        return "not JSON text"
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return "not valid UTF-8: the sqlite3 module cannot read it as text"
    try:
        obj = json.loads(text)
    except (ValueError, RecursionError) as e:
        return f"not valid JSON: {escape(str(e))}"
    return None if type(obj) is dict else "not a JSON object"
