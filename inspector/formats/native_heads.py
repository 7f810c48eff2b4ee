"""The index fields of a native `message` line, decoded without materializing its content
(issue 15: index first, content on demand, as pi's, Claude Code's and Codex's loaders do).

A line's head is decoded with msgspec against types no stricter than `native._Builder.message`'s
rules and then checked by `clean_message` for the rest of them (a non-empty id, an ISO timestamp,
a block's required fields): a head that passes both is a message line the full mapping reads
without a diagnostic. Anything else (a wrong type, a field missing, a line that is not clean JSON,
a record type other than `message`) is left to the general path, which parses the line whole.
"""

from __future__ import annotations

from typing import Annotated

import msgspec

from inspector.formats.claude_code_heads import DECODE_ERRORS, _Num
from inspector.ledger.model import ROLES, STOP_REASONS

__all__ = ["DECODER", "DECODE_ERRORS", "MessageHead", "clean_message"]

_UNSET = msgspec.UNSET
_Count = Annotated[int, msgspec.Meta(ge=0, le=(1 << 63) - 1)]
_TEXT_TYPES = frozenset({"text", "thinking", "tool_result"})


class _BlockHead(msgspec.Struct, gc=False):
    """One content block: the fields `native._Builder.blocks` checks, UNSET when not there."""

    type: str | None = None
    id: str | msgspec.UnsetType = _UNSET
    name: str | msgspec.UnsetType = _UNSET
    args: msgspec.Raw = msgspec.Raw(b"")
    text: str | msgspec.UnsetType = _UNSET
    call_id: str | msgspec.UnsetType = _UNSET
    is_error: bool | msgspec.UnsetType = _UNSET
    media_type: str | msgspec.UnsetType = _UNSET


class _UsageHead(msgspec.Struct, gc=False):
    input: _Count | msgspec.UnsetType = _UNSET
    output: _Count | msgspec.UnsetType = _UNSET
    cache_read: _Count = 0
    cache_write: _Count = 0


class MessageHead(msgspec.Struct, gc=False):
    """A line's record type, and a message's fields (`native._MESSAGE_KEYS`)."""

    type: str | None = None
    id: str | msgspec.UnsetType = _UNSET
    ts: str | _Num | msgspec.UnsetType = _UNSET
    run: str | None = None
    role: str | None = None
    content: str | list[_BlockHead] | msgspec.UnsetType = _UNSET
    stop_reason: str | None = None
    usage: _UsageHead | None = None
    error: str | None = None
    meta: bool | None = None


DECODER = msgspec.json.Decoder(MessageHead)


def clean_message(h: MessageHead, is_ts: object) -> bool:
    """Whether a decoded head is a message line the full mapping reads without a diagnostic
    (`is_ts`: native's timestamp test)."""
    if h.type != "message" or not h.id or h.ts is _UNSET or h.role not in ROLES or h.content is _UNSET:
        return False
    if h.stop_reason is not None and h.stop_reason not in STOP_REASONS:
        return False
    if h.run == "" or not is_ts(h.ts):  # type: ignore[operator]
        return False
    u = h.usage
    if u is not None and (u.input is _UNSET or u.output is _UNSET):
        return False
    c = h.content
    if type(c) is list:
        for b in c:
            t = b.type
            if t == "tool_call":
                if not b.id or b.name is _UNSET or not b.args:
                    return False
            elif t in _TEXT_TYPES:
                if b.text is _UNSET:
                    return False
                if t == "tool_result" and not b.call_id:
                    return False
            elif t == "image" and b.media_type is _UNSET:
                return False
    return True
