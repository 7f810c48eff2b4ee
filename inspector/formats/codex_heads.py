"""The index fields of a Codex rollout line, decoded without materializing the rest (issue 15:
index first, content on demand, as pi's and Claude Code's loaders do).

A line's head is decoded with msgspec against types that accept exactly what `fields.CODEX` lets
through unchanged: a line whose head decodes holds no field of a wrong type, so the full mapping
of that line would report nothing and remove nothing. A field the mapping only meets on lines
the general path reads (a replacement history) never decodes: when present, the line takes that
path, as a line without a type or a payload object does (their head fails to decode). Anything
else (a wrong type, an odd shape, a line that is not clean JSON, a header, a checkpoint, an item
type with rules of its own) is left to the general path, which parses the line whole
(`codex._Builder.add_head` says which lines a head maps). The fields Codex itself types
(`codex_lines`: a timestamp, an ordinal, a call's name and arguments, ...) are typed as Codex
reads them, and `codex._Builder._head_item` declines an item Codex would skip, so a line Codex
skips always takes the general path, which says why.
"""

from __future__ import annotations

from typing import Annotated, Any

import msgspec

from inspector.formats.heads import DECODE_ERRORS
from inspector.formats.heads import Int64 as _Int64
from inspector.formats.heads import Num as _Num

__all__ = ["DECODER", "DECODE_ERRORS", "LineHead", "PayloadHead", "TokensHead"]

_UNSET = msgspec.UNSET
# A type no JSON value decodes as (an integer at least 1 and at most 0): a field of it makes a line
# holding that field fail its head decode (the line takes the general path), whatever its value.
_Never = Annotated[int, msgspec.Meta(ge=1, le=0)]
# Codex's u64 (an ordinal, a history sequence; one past 64 bits is not told: `codex_lines`).
_U64 = Annotated[int, msgspec.Meta(ge=0)]


class _PartHead(msgspec.Struct, gc=False):
    """One part of a content list (`fields._CODEX_CONTENT`'s items; `text` UNSET when the key
    is not there: a history key tells a part without a text from one whose text is null)."""

    type: str | None = None
    text: str | msgspec.UnsetType | None = _UNSET
    image_url: str | None = None


_Content = str | list[_PartHead] | None


class TokensHead(msgspec.Struct, gc=False):
    """`fields._CODEX_TOKENS`."""

    input_tokens: _Int64 | None = None
    cached_input_tokens: _Int64 | None = None
    cache_write_input_tokens: _Int64 | None = None
    output_tokens: _Int64 | None = None


class _InfoHead(msgspec.Struct, gc=False):
    last_token_usage: TokensHead | None = None
    model_context_window: _Int64 | None = None


class _OutputHead(msgspec.Struct, gc=False):
    content: _Content = None
    text: str | None = None


class _InstructionsHead(msgspec.Struct, gc=False):
    text: str | None = None


class PayloadHead(msgspec.Struct, gc=False):
    """A line's payload: every field `fields._CODEX_PAYLOAD` declares, typed as it allows them
    (`type` UNSET when the key is not there: an item without one is a message). In the order
    Codex writes the keys (msgspec looks a key up from the field after the last one found)."""

    type: str | msgspec.UnsetType | None = _UNSET
    id: str | None = None
    role: str | None = None
    name: str | None = None
    namespace: str | None = None
    status: str | None = None
    arguments: str | None = None
    input: str | None = None
    call_id: str | None = None
    summary: list[_PartHead] | str | None = None
    content: _Content = None
    phase: str | None = None
    encrypted_content: str | None = None
    output: str | _OutputHead | list[Any] | bool | _Num | None = None
    info: _InfoHead | None = None
    message: str | dict[str, Any] | list[Any] | bool | _Num | None = None
    model: str | None = None
    model_provider: str | None = None
    session_id: str | None = None
    base_instructions: str | _InstructionsHead | None = None
    num_turns: _Int64 | None = None
    replacement_history: _Never = 0  # (present: the general path)
    usage: TokensHead | None = None


class _MetadataHead(msgspec.Struct, gc=False):
    history_sequence: _U64 | None = None
    compaction_output: Any = None


class LineHead(msgspec.Struct, gc=False, kw_only=True):
    """`fields.CODEX`: a line's timestamp, type, payload and metadata, in the order Codex writes
    them (a top-level `id`, which only a `compacted` line this tool wrote has, names that line's
    record: such a line takes the general path, so its head never reads it)."""

    timestamp: str  # (required, as the type and the payload: Codex skips a line without a timestamp string, `codex_lines`)
    ordinal: _U64 | None = None
    type: str  # (a line without one of these, or with null, takes the general path)
    payload: PayloadHead
    metadata: _MetadataHead | None = None


DECODER = msgspec.json.Decoder(LineHead)
