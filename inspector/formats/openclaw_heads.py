"""The head of an OpenClaw transcript row the index maps without parsing it whole (`openclaw_sqlite`):
pi's head (`pi._EntryHead`, every field `fields.PI` types typed alike) made as strict as OpenClaw's
own reading (`openclaw_model`), so that a row it decodes is one no rule of OpenClaw's touches: an
entry its schema recognizes (`indexedSessionEntrySchema`, transcript-payload-qsg5dB6v.mjs:15-125: a
string `id`, a `parentId` key, a string `timestamp` or none, a message with its role's fields), a
node of its tree hung where it says (no `appendMode`), whose message `@openclaw/ai` converts.
Any other row fails to decode, or `fast_ok` says no, and takes the general path, where the rules
read it whole.
"""

from __future__ import annotations

from typing import Any

import msgspec

from inspector.formats import openclaw_model, pi
from inspector.formats.base import JS_WHITESPACE

_Unset = msgspec.UnsetType
_UNSET: Any = msgspec.UNSET
_Absent = pi._Absent
_ABSENT = pi._ABSENT


class Block(msgspec.Struct, gc=False):
    type: str  # readableContentSchema: every block an object with a string type
    id: str | None = None
    text: str | None = None
    thinking: str | None = None
    name: str | None = None
    mimeType: str | None = None
    arguments: msgspec.Raw = msgspec.Raw()  # (a call's input, left unparsed: is it there, not null?)
    input: msgspec.Raw = msgspec.Raw()


_NULL = msgspec.Raw(b"null")
# The stop reasons of an answer OpenClaw's replay rules read (a failed one, one cut short): one
# they leave out whole (`openclaw_model.answer_left_out`) takes the general path, which marks it
# never sent (a few answers of a session); any other is mapped here (a failed one is then sent as
# OpenClaw's marker, `Runtime.failed_turn_marker`).
_REPLAY_RULED = (*openclaw_model.FAILED, "length")
_CALLS = frozenset({"toolCall", "toolUse", "functionCall"})


def _call_ok(b: Block) -> bool:
    """A call OpenClaw keeps (`openclaw_model.dropped_call` says none of its reasons)."""
    has_input = (len(b.arguments) and b.arguments != _NULL) or (len(b.input) and b.input != _NULL)
    return bool(has_input) and bool(b.id and b.id.strip()) and bool(b.name and b.name.strip())


class _Message(msgspec.Struct, gc=False, tag_field="role", kw_only=True):
    stopReason: Any = None
    model: str | None = None
    provider: str | None = None
    errorMessage: str | None = None
    usage: pi._UsageHead | None = None
    summary: str | None = None
    excludeFromContext: Any = None
    openclawDeliveryMirror: Any = None  # (a marker that may make an answer transcript-only)


class User(_Message, tag="user", kw_only=True):
    content: str | list[Block]
    toolCallId: str | None = None
    toolName: str | None = None


class Assistant(_Message, tag="assistant", kw_only=True):
    content: str | list[Block]
    toolCallId: str | None = None
    toolName: str | None = None


class ToolResult(_Message, tag="toolResult", kw_only=True):
    content: list[Block]
    toolCallId: str
    toolName: str
    isError: bool


class Custom(_Message, tag="custom", kw_only=True):
    customType: str
    content: str | list[Block]
    toolCallId: str | None = None
    toolName: str | None = None


class Entry(msgspec.Struct, gc=False):
    type: str
    id: str
    parentId: str | None  # the key must be there (without it, OpenClaw hangs the entry under its leaf)
    timestamp: str | _Unset = _UNSET
    message: User | Assistant | ToolResult | Custom | _Unset = _UNSET
    customType: str | _Unset = _UNSET
    appendMode: _Absent = _ABSENT
    version: _Absent = _ABSENT
    content: _Absent = _ABSENT
    summary: _Absent = _ABSENT
    firstKeptEntryId: _Absent = _ABSENT
    firstKeptEntryIndex: _Absent = _ABSENT
    tokensBefore: _Absent = _ABSENT
    details: _Absent = _ABSENT
    provider: _Absent = _ABSENT
    modelId: _Absent = _ABSENT


assert set(pi._EntryHead.__struct_fields__) - {"message"} <= set(Entry.__struct_fields__)
assert set(pi._MessageHead.__struct_fields__) <= set(User.__struct_fields__) & set(Assistant.__struct_fields__)
assert set(pi._BlockHead.__struct_fields__) <= set(Block.__struct_fields__)

DECODER = msgspec.json.Decoder(Entry)
ROLES: dict[type, tuple[str, str]] = {
    User: ("user", "user"),
    Assistant: ("assistant", "assistant"),
    ToolResult: ("toolResult", "tool"),
    Custom: ("custom", "user"),
}


def fast_ok(e: Entry) -> bool:
    """Whether a decoded head is one the index maps as it stands (else the general path): a
    message or `custom` entry with non-blank ids (`readNonBlankString`), a custom entry's type
    not empty, and a message whose every block `@openclaw/ai` converts and OpenClaw sends."""
    if not e.id.strip() or (e.parentId is not None and not e.parentId.strip()):
        return False
    m = e.message
    if e.type == "custom":
        return m is _UNSET and type(e.customType) is str and e.customType != ""
    if e.type != "message" or m is _UNSET or m.excludeFromContext is not None:
        return False
    if type(m) is Custom and m.customType == openclaw_model.RUNTIME_CONTEXT:
        return False  # (never sent, `openclaw_model.runtime_context`: the general path marks it)
    c = m.content
    if type(c) is not list:
        return type(m) is not Assistant  # (an answer's text: the general path maps it)
    if not c:
        return False  # (an empty content: OpenClaw leaves the message out)
    if type(m) is Assistant:
        if m.openclawDeliveryMirror is not None or (m.provider == "openclaw" and m.model in openclaw_model._TRANSCRIPT_ONLY_MODELS):
            return False  # (maybe OpenClaw's own record, never replayed: the general path decides)
        if m.stopReason in _REPLAY_RULED and openclaw_model.answer_left_out(m.stopReason, [(b.type, b.text) for b in c]):
            return False  # (never sent: the general path marks it so)
        if any(b.type in openclaw_model._DISPLAY_BLOCKS or (b.text is not None and "_" in b.text and openclaw_model.is_silent_reply(b.text.strip(JS_WHITESPACE))) for b in c):
            return False  # (maybe a silent answer, never sent: `openclaw_model.silent_answer`, the general path decides)
        return all(
            (b.text is not None) if b.type == "text" else b.type == "thinking" or (_call_ok(b) if b.type in _CALLS else b.id is not None)
            for b in c
        )
    if type(m) in (User, Custom):
        # (a block of no known kind: its `data` is trimmed; only blank texts: the message is left out)
        if not all((b.text is not None) if b.type == "text" else b.type in ("image", "video") for b in c):
            return False
        return any(b.type != "text" or b.text.strip() for b in c)  # type: ignore[union-attr]
    return True
