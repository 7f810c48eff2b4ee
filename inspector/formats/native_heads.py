"""The index fields of a native `message` line, decoded without building its content (issue 15:
index first, content on demand, as the pi and Claude Code loaders do).

A line's head is decoded with msgspec against types that accept exactly the message lines
`native._Builder.message` maps without a single diagnostic: every field of its right type, no
field it does not know, every block of a known type with no field of its own type unknown. Such a
line loads as a record whose content is read again from the file when it is asked for (through
the same builder, so the content is what a whole-line load gives). Anything else (a wrong type, a
missing field, an unknown key or block type, a line that is not clean JSON, another record type)
is left to the general path, which parses the line whole and says what is wrong.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

import msgspec

from inspector.formats.heads import FIRST_BYTE, Int64
from inspector.ledger.model import Role, StopReason

# The JSON values the builder accepts, as msgspec types. msgspec takes no bool for an int and no
# float for an int, as `_is_int` does; ints past 64 bits fail here and take the general path.
_Int64 = Int64
_Count = Annotated[int, msgspec.Meta(ge=0, le=(1 << 63) - 1)]  # `_is_int(v) and v >= 0`
_Id = Annotated[str, msgspec.Meta(min_length=1)]  # `_is_id`
# `_ISO_TS` (native.py), matched as `re.match` matches it (msgspec searches with the same anchors).
ISO_TS_PATTERN = r"^\d{4}-\d{2}-\d{2}([Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([Zz]|[+-]\d{2}(:?\d{2})?)?)?$"
_Ts = Annotated[str, msgspec.Meta(pattern=ISO_TS_PATTERN)] | _Int64 | float  # `_is_ts`


# A block's text is not built (a 100 MB ledger's texts, decoded into strings only to be freed, were
# ~0.1 s of its load): msgspec checks its JSON as it skips it, as strictly as it decodes a string,
# and the loader checks that it is one (`is_text`: a string's JSON starts with its quote).


class Text(msgspec.Struct, forbid_unknown_fields=True, gc=False, tag_field="type", tag="text"):
    text: msgspec.Raw  # required, a string (`is_text`)


class Thinking(msgspec.Struct, forbid_unknown_fields=True, gc=False, tag_field="type", tag="thinking"):
    text: msgspec.Raw  # required, a string (`is_text`)


class ToolCall(msgspec.Struct, forbid_unknown_fields=True, gc=False, tag_field="type", tag="tool_call"):
    id: _Id
    name: str
    args: msgspec.Raw  # required (any JSON value, null included), not built


class ToolResult(msgspec.Struct, forbid_unknown_fields=True, gc=False, tag_field="type", tag="tool_result"):
    call_id: _Id
    text: msgspec.Raw  # required, a string (`is_text`)
    is_error: bool = False


class Image(msgspec.Struct, forbid_unknown_fields=True, gc=False, tag_field="type", tag="image"):
    media_type: str


_Block = Text | Thinking | ToolCall | ToolResult | Image


QUOTE = (ord('"'),)


def is_text(raw: msgspec.Raw) -> bool:
    """Whether a block's `text`, as msgspec skipped it, is a JSON string (its first byte a quote)."""
    return FIRST_BYTE(raw) == QUOTE


class _Usage(msgspec.Struct, gc=False):
    """`_Builder.usage`: input and output present, every count a non-negative integer; other keys
    are not read (and not diagnosed)."""

    input: _Count
    output: _Count
    cache_read: _Count = 0
    cache_write: _Count = 0


class MessageHead(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """A message line as `_Builder.message` reads it without a diagnostic (`_MESSAGE_KEYS`)."""

    type: Literal["message"]
    id: _Id
    ts: _Ts
    role: Role
    content: str | list[_Block]
    stop_reason: StopReason | None = None
    stop_reason_raw: msgspec.Raw = msgspec.Raw(b"")
    usage: _Usage | None = None
    error: str | None = None
    meta: bool | None = None
    run: _Id | None = None


class UncheckedTimeHead(MessageHead):
    """`MessageHead` with its time's pattern left unchecked (a string is taken as it is): the
    pattern, checked by msgspec line by line, cost 15 ms of a 20 MB ledger's ~130 ms load (one
    regex call per line). The loader checks the times of every head it took at once
    (`all_times_valid`) and reads the file again with `DECODER` if one is not."""

    ts: str | _Int64 | float


# One regex over every time of a file's heads, one per line (the pattern, anchored per time).
_TIME = ISO_TS_PATTERN[1:-1].replace("(", "(?:")  # (no groups: a long repetition keeps no marks)
_TIMES = re.compile(rf"(?:{_TIME}\n)*{_TIME}")


def all_times_valid(times: list[str | int | float]) -> bool:
    """Whether each string of `times` matches `ISO_TS_PATTERN` as `re.match` matches it (a number is
    a valid time: epoch seconds), checked a thousand at a time in one regex call (after
    `_all_in_the_usual_shape`, which answers for most files with no regex at all). The pattern never
    matches a newline, so with no newline inside a time the lines of the joined text are the times (a
    time ending in a newline, which `$` lets through, is counted invalid here: the caller then checks
    the slow way). The loader lists every head's time, numbers too (no type test per line): a join
    meeting a number, the strings are checked alone."""
    try:
        return _all_in_the_usual_shape(times) or _all_match(times)
    except TypeError:  # (a number among the times)
        return all_times_valid([t for t in times if type(t) is str])


def _all_match(times: list[Any]) -> bool:
    """`all_times_valid` by the regex, a part of `_TIMES_AT_ONCE` times per call."""
    for i in range(0, len(times), _TIMES_AT_ONCE):
        part = times[i : i + _TIMES_AT_ONCE]
        joined = "\n".join(part)
        if joined.count("\n") != len(part) - 1 or _TIMES.fullmatch(joined) is None:
            return False
    return True


# The shape JavaScript's `Date.toISOString` writes, its digits read as 0 (`_DIGITS_AS_0`), once
# per time of a part of `_SHAPES_AT_ONCE` times (a part's transient copies stay small: at 1024
# times, ~25 KB each, the allocator reuses the same heap memory part after part; at 8192, 200 KB
# each, every join, encode, translate and slice was a fresh mapping, 1.3k page faults a 100 MB
# ledger, 14 -> 8.5 ms).
_USUAL_SHAPE = "0000-00-00T00:00:00.000Z"
_DIGITS_AS_0 = bytes.maketrans(b"0123456789", b"0000000000")
_SHAPES_AT_ONCE = 1024
_USUAL_LINES = ((_USUAL_SHAPE + "\n") * _SHAPES_AT_ONCE).encode()


def _all_in_the_usual_shape(times: list[Any]) -> bool:
    """Whether every one of `times` is `YYYY-MM-DDTHH:MM:SS.mmmZ` in ASCII digits, a shape
    `ISO_TS_PATTERN` matches: the joined times, each ASCII digit read as 0, are that shape once per
    time with a newline between (as many newlines as the join put in, so no time holds one). A
    fifth of the regex's cost; False sends the caller to the regex, which decides."""
    for i in range(0, len(times), _SHAPES_AT_ONCE):
        part = times[i : i + _SHAPES_AT_ONCE]
        # (a character past ASCII is two bytes or more past 0x7f in UTF-8: never the shape's)
        if "\n".join(part).encode().translate(_DIGITS_AS_0) != _USUAL_LINES[: len(part) * (len(_USUAL_SHAPE) + 1) - 1]:
            return False
    return True


# Times per regex call: the regex engine keeps a backtracking frame per repetition, so one call
# over all of a 100 MB ledger's 160k times took 200 MB.
_TIMES_AT_ONCE = 1024


# `whole_lines.read_heads_upto` checks a line's UTF-8 and size before it decodes it (msgspec does
# not check the UTF-8 of what it skips: `args`, `stop_reason_raw`).
DECODER = msgspec.json.Decoder(MessageHead)
UNCHECKED_TIME_DECODER = msgspec.json.Decoder(UncheckedTimeHead)
