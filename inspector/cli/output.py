"""`--json` output: one encoder for every command, so every document it prints is valid JSON.

Numbers read from a session file reach the documents unchecked (token counts, `tokensBefore`, a
format version, ADK details) and through sums of them; a session can hold an integer of any
size (`"input": 99999999999999999999`), which orjson refuses to encode (it takes 64 bits). Such an
integer is written as the JSON number nearest to it that a reader can hold (a double: `1e+20`,
which a JSON Schema `integer` still accepts), or `null` when it is beyond even a double, the way
orjson writes infinity.
"""

from __future__ import annotations

import sys
from typing import Any

import orjson

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
    except orjson.JSONEncodeError:  # an integer past 64 bits somewhere: rare, so walk only then
        data = orjson.dumps(_encodable(obj), option=orjson.OPT_INDENT_2)
    return data + b"\n"


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
