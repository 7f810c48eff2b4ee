"""What the index-first loaders share (pi, Claude Code, Codex, native; issue 15): the msgspec types
of the numbers a line's head may hold, the errors a head decode raises, and the UTF-8 check msgspec
leaves to us (it does not check the UTF-8 of what it skips)."""

from __future__ import annotations

from typing import Annotated

import msgspec

# What orjson reads as an int (a 64-bit one) and as a float; a head that holds anything wider
# fails to decode and the line takes its format's general path.
Int64 = Annotated[int, msgspec.Meta(ge=-(1 << 63), le=(1 << 63) - 1)]
Num = Int64 | Annotated[float, msgspec.Meta(ge=-(1 << 63), lt=1 << 63)]
DECODE_ERRORS = (msgspec.DecodeError, msgspec.ValidationError, RecursionError)


def valid_utf8(raw: bytes) -> bool:
    """Whether `raw` is UTF-8 (`raw.decode("utf-8")` would not raise), decoded a part of
    `_UTF8_PART` bytes at a time and only the parts that are not ASCII. A transcript's line of
    50 KB with one emoji decoded whole made a 200 KB string (one code unit of 4 bytes per
    character), allocated and freed line after line: 0.115 s of a 100 MB Claude Code transcript's
    load against 0.03 s for its parts of 4 KiB (issue 15). A part never ends between a lead
    byte and its continuation bytes (0x80-0xBF): the cut moves back, at most 3 bytes, to a byte
    that starts a character; where 4 continuation bytes stand in a row (never UTF-8) the next
    part starts with one and its decode fails. So `raw` is UTF-8 exactly when every part is."""
    n = len(raw)
    if n <= _UTF8_PART:
        return _decodes(raw)
    start = 0
    while start < n:
        end = start + _UTF8_PART
        if end >= n:
            end = n
        else:
            floor = end - 3
            while end > floor and 0x80 <= raw[end] < 0xC0:
                end -= 1
        part = raw[start:end]
        if not part.isascii() and not _decodes(part):
            return False
        start = end
    return True


_UTF8_PART = 4096


def _decodes(raw: bytes) -> bool:
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def utf8_replaced(raw: bytes) -> tuple[bytes, int]:
    """`raw` as it is when it is valid UTF-8, else with each invalid sequence read as U+FFFD; and
    the offset of the first invalid byte (-1 when there is none), for the diagnostic to name."""
    if raw.isascii():
        return raw, -1
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as u:
        return raw.decode("utf-8", errors="replace").encode("utf-8"), u.start
    return raw, -1
