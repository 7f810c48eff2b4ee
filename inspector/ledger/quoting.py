"""File content in a message a person reads (issue 11): never raw control or binary bytes, never
megabytes. Every diagnostic and LoadError that quotes what a file holds goes through here."""

from __future__ import annotations

import reprlib
from typing import Any

QUOTE_CHARS = 80  # of one quoted value
TEXT_CHARS = 300  # of a library's message (which may carry the file's bytes)

_REPR = reprlib.Repr()
_REPR.maxstring = QUOTE_CHARS
_REPR.maxother = QUOTE_CHARS
_REPR.maxlist = _REPR.maxtuple = _REPR.maxdict = _REPR.maxset = 6
_REPR.maxlevel = 3


def escape(text: str, limit: int = TEXT_CHARS) -> str:
    """`text` with every character that is not printable (control characters, ESC, NUL, bidi
    overrides, U+FFFD from undecodable bytes kept as is) written as a Python escape, cut to about
    `limit` characters."""
    if len(text) > limit:
        text = text[:limit] + "…"
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)


def quote(value: Any) -> str:
    """A value read from a file, as a message quotes it: its repr (strings escaped), shortened."""
    if isinstance(value, bytes | bytearray | memoryview):
        value = bytes(value[: QUOTE_CHARS * 2])
    return escape(_REPR.repr(value), QUOTE_CHARS * 2)
