"""`--json` output: one encoder for every command, so every document it prints is valid JSON.

Numbers read from a session file reach the documents unchecked (token counts, `tokensBefore`, a
format version, ADK details) and through sums of them; a session can hold an integer of any
size (`"input": 99999999999999999999`), which orjson refuses to encode (it takes 64 bits). Such an
integer is written as the JSON number nearest to it that a reader can hold (a double: `1e+20`,
which a JSON Schema `integer` still accepts), or `null` when it is beyond even a double, the way
orjson writes infinity. A string can hold a lone surrogate too (JSON's `"\ud800"` escape, which the
JavaScript runtimes read into their strings as it is), which is not UTF-8 and which orjson refuses: such
a document is written with the surrogate as the escape it was read from (`jsontext.dumps`).
"""

from __future__ import annotations

import contextlib
import sys
from typing import Any

import orjson

from inspector.ledger.jsontext import dumps

_MIN = -(1 << 63)
_MAX = (1 << 64) - 1


def _encodable(obj: Any) -> Any:
    """`obj` with every integer orjson cannot take replaced by the nearest double (or None)."""
    if isinstance(obj, bool):
        return obj
    if isinstance(obj, int):
        if _MIN <= obj <= _MAX:
            return obj
        try:
            return float(obj)
        except OverflowError:
            return None
    if isinstance(obj, dict):
        return {k: _encodable(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_encodable(v) for v in obj]
    return obj


def json_bytes(obj: Any) -> bytes:
    """The document, indented, with a final newline."""
    try:
        data = orjson.dumps(obj, option=orjson.OPT_INDENT_2)
    except orjson.JSONEncodeError:  # an integer past 64 bits or a lone surrogate somewhere: rare, so walk only then
        data = dumps(_encodable(obj), option=orjson.OPT_INDENT_2)  # (a lone surrogate: `jsontext.dumps` escapes it)
    return data + b"\n"


def utf8(text: str) -> bytes:
    """`text` as UTF-8, a lone surrogate (which no UTF-8 holds) written as its `\\udXXX` escape."""
    return text.encode("utf-8", "backslashreplace")


def lenient_stdio() -> None:
    """A lone surrogate a session holds (JSON's `"\\ud800"`, which JavaScript runtimes read as it is)
    is printed as its escape rather than crashing the command that shows it."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            with contextlib.suppress(ValueError, OSError):  # (a stream already written through a buffer of its own)
                reconfigure(errors="backslashreplace")


def emit_json(obj: Any) -> None:
    sys.stdout.buffer.write(json_bytes(obj))
    sys.stdout.flush()


PIPED_WIDTH = 160  # a table printed into a pipe or a file: no terminal says how wide


def table_console() -> Any:
    """The console a table is printed on: the terminal's width, or `PIPED_WIDTH` columns when the
    output is a pipe or a file (rich would take 80 and cut every name to a few characters);
    `COLUMNS` overrides both."""
    import os

    from rich.console import Console

    if sys.stdout.isatty() or os.environ.get("COLUMNS"):
        return Console()
    return Console(width=PIPED_WIDTH)
