"""What the index-first loaders share (pi, Claude Code, Codex, native; issue 15): the msgspec types
of the numbers a line's head may hold, the errors a head decode raises, and the UTF-8 check msgspec
leaves to us (it does not check the UTF-8 of what it skips), and the result ids a head kept."""

from __future__ import annotations

import struct
from typing import Annotated, Any

import msgspec

# What orjson reads as an int (a 64-bit one) and as a float; a head that holds anything wider
# fails to decode and the line takes its format's general path.
Int64 = Annotated[int, msgspec.Meta(ge=-(1 << 63), le=(1 << 63) - 1)]
Num = Int64 | Annotated[float, msgspec.Meta(ge=-(1 << 63), lt=1 << 63)]
DECODE_ERRORS = (msgspec.DecodeError, msgspec.ValidationError, RecursionError)

# A skipped value's (`msgspec.Raw`) first byte, as a 1-tuple: half the cost of `memoryview(raw)[0]`;
# its JSON type shows there (a string's quote, null's n, a list's bracket).
FIRST_BYTE = struct.Struct("B").unpack_from


def kept_result_ids(results: dict[int, list[str]], rec: Any) -> list[str] | None:
    """A tool record's result ids as its head gave them (`RecordSource.result_ids`): the list kept
    at read time where it is not just the record's `result_id`, else that id; None once its
    message was read (the caller reads them from it)."""
    if rec._message is not None:
        return None
    got = results.get(rec.seq)
    if got is not None:
        return got
    return [rec.result_id] if rec.result_id else []


def valid_utf8(raw: bytes) -> bool:
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
