"""The index fields of a Claude Code transcript line, decoded without materializing the rest
(issue 15: index first, content on demand, as pi's loader does).

A line's head is decoded with msgspec against types that accept exactly what `fields.CLAUDE_CODE`
lets through unchanged: a line whose head decodes holds no field of a wrong type, so the
full mapping of that line would report nothing and remove nothing. Anything else (a wrong type,
an odd shape, a line that is not clean JSON, a compact boundary or its summary, an API-error
reply, a line type with its own rules) is left to the general path, which parses the line whole.
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from inspector.formats.heads import DECODE_ERRORS, FIRST_BYTE, Int64, Num
from inspector.formats.pi_sending import truthy
from inspector.ledger.model import normalize_stop_reason

_Int64, _Num = Int64, Num
_UNSET = msgspec.UNSET


class _PartHead(msgspec.Struct, gc=False):
    """One part of a tool result's content (`fields._CC_BLOCK["content"]`)."""

    type: str | None = None
    text: str | None = None


class _BlockHead(msgspec.Struct, gc=False):
    """One content block (`fields._CC_BLOCK`). Its text, thinking and content are not built (a
    transcript's texts, decoded into strings only to be freed, cost more than the rest of the
    block): msgspec checks their JSON as it skips them, as strictly as it decodes a string, and
    `blocks_clean` checks their types (an empty `Raw`: the key is not there)."""

    type: str | None = None
    text: msgspec.Raw = msgspec.Raw(b"")  # a string or null
    thinking: msgspec.Raw = msgspec.Raw(b"")  # a string or null
    id: str | None = None
    name: str | None = None
    tool_use_id: str | None = None
    content: msgspec.Raw = msgspec.Raw(b"")  # a string, null or a list of parts (`_PartHead`)
    signature: msgspec.Raw = msgspec.Raw(b"")  # a thinking block's (any JSON value)


class _UsageHead(msgspec.Struct, gc=False):
    input_tokens: _Int64 | None = None
    output_tokens: _Int64 | None = None
    cache_read_input_tokens: _Int64 | None = None
    cache_creation_input_tokens: _Int64 | None = None


class MessageHead(msgspec.Struct, gc=False):
    id: str | None = None
    role: str | None = None
    model: str | None = None
    content: str | list[_BlockHead] | None = None
    usage: _UsageHead | None = None
    stop_reason: Any = None


class ToolUseResultHead(msgspec.Struct, gc=False):
    agentId: str | None = None


# Line types Claude Code writes that carry no message: kept as meta records.
BOOKKEEPING = frozenset(
    {
        "progress",
        "attachment",
        "summary",
        "file-history-snapshot",
        "queue-operation",
        "last-prompt",
        "custom-title",
        "ai-title",
        "agent-name",
        "permission-mode",
        "mode",
        "tools-used",
        "cost-state",
        "atis-latch",
        "api-request",
        "api-request-shape",
        "api-request-blob",
        "worktree-state",
        "frame-link",
        "pr-link",
        "started",
        "result",
        "relocated",
        "bridge-session",
        "tag",
    }
)
# The line types a head is read for (the general path reads any other): msgspec gives each as the
# one string of this Literal, not a string of its own per line (a record and its light object keep
# it: 64 bytes a line, issue 15).
LineType = Literal[tuple(sorted(BOOKKEEPING | {"user", "assistant", "system"}))]  # type: ignore[valid-type]


class LineHead(msgspec.Struct, gc=False):
    """The fields of a line the mapping reads before any content (see the module docstring).
    An `UNSET` default or an empty `Raw` tells a key that is not there from one that is null."""

    type: LineType | None = None  # (another type fails the decode: the general path)
    subtype: str | None = None
    uuid: str | msgspec.UnsetType | None = _UNSET
    parentUuid: str | msgspec.UnsetType | None = _UNSET
    logicalParentUuid: str | None = None
    sessionId: str | msgspec.UnsetType | None = _UNSET
    agentId: str | None = None
    requestId: str | msgspec.UnsetType | None = _UNSET  # (left out or null: `claude_code._undefined_id`)
    timestamp: str | _Num | None = None
    message: MessageHead | None = None
    compactMetadata: msgspec.Raw = msgspec.Raw(b"")
    toolUseResult: ToolUseResultHead | str | bool | _Num | list[Any] | None = None
    isSidechain: Any = None
    isCompactSummary: Any = None
    isApiErrorMessage: Any = None
    messageId: msgspec.Raw = msgspec.Raw(b"")
    snapshot: msgspec.Raw = msgspec.Raw(b"")
    leafUuid: msgspec.Raw = msgspec.Raw(b"")
    content: msgspec.Raw = msgspec.Raw(b"")  # a system line's (a local command's text, when a string)


DECODER = msgspec.json.Decoder(LineHead)
_PARTS = msgspec.json.Decoder(list[_PartHead])
_STRING_OR_NULL = (ord('"'), ord("n"))  # (the only JSON values that start so)
_LIST = ord("[")
_QUOTE = ord('"')


def blocks_clean(blocks: list[_BlockHead]) -> bool:
    """Whether each block has a string type, its text and thinking, as msgspec skipped them, are
    strings or null (or absent), and its content a string, null, absent or a list of parts of the types `_PartHead`
    takes (decoded here, the rare case), as `_BlockHead` took them when it decoded them."""
    first = FIRST_BYTE
    for b in blocks:
        if b.type is None:
            return False  # (a block without a string type: Claude Code removes it, the general path says so)
        t, k, c = b.text, b.thinking, b.content
        if (t and first(t)[0] not in _STRING_OR_NULL) or (k and first(k)[0] not in _STRING_OR_NULL):
            return False
        if c and first(c)[0] not in _STRING_OR_NULL:
            if first(c)[0] != _LIST:
                return False
            try:
                _PARTS.decode(c)
            except DECODE_ERRORS:
                return False
    return True


def signed_thinking(b: _BlockHead) -> bool:
    """Whether a block is one Claude Code leaves out of a reply of another model (`Uqr`, offset
    322904029): a redacted_thinking block, or a thinking block whose `signature` is there and true
    as JavaScript tests a value (an empty string, null, false or 0 is not)."""
    t = b.type
    if t == "redacted_thinking":
        return True
    if t != "thinking" or not b.signature:
        return False
    raw = b.signature
    if FIRST_BYTE(raw)[0] == _QUOTE:
        return len(raw) > 2  # (a string: false only as "")
    return truthy(msgspec.json.decode(raw))


_STOPS: dict[Any, str | None] = {}


def stop_reason(raw: Any) -> str | None:
    """`normalize_stop_reason`, remembered for the few strings a transcript uses."""
    if type(raw) is not str:
        return normalize_stop_reason(raw)
    hit = _STOPS.get(raw, _STOPS)
    if hit is _STOPS:
        hit = normalize_stop_reason(raw)
        if len(_STOPS) < 64:  # (a file of made-up stop reasons does not grow it without bound)
            _STOPS[raw] = hit
    return hit  # type: ignore[return-value]
