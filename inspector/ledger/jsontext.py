"""The text of a value read from a session, however deeply it nests (issue 11: any input).

The readers take values nested up to 1024 levels (orjson's limit; a deeper line is a diagnostic,
`bounded`), but orjson writes at most 254 levels and Python's `json`, `str` and `repr` recurse once
a level against the interpreter's recursion limit (1000, less the caller's own stack). A tool
call's arguments nested 300 deep crashed the token count, the summarizer's prompt, the writers.
Everything that writes a session's value as text goes through here: the fast path first, and
only when a value nests too deep for it, the same text again with room to recurse.
"""

from __future__ import annotations

import contextlib
import json
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import orjson

T = TypeVar("T")

# Levels of recursion added while a deep value is written: the deepest a reader makes (1024) for
# each of a few recursive frames a level may take, with the caller's stack besides.
_ROOM = 6000
_room_lock = threading.RLock()  # (the limit is the process's: one deep write at a time raises it; re-entrant)


@contextlib.contextmanager
def _recursion_room() -> Iterator[None]:
    with _room_lock:
        was = sys.getrecursionlimit()
        sys.setrecursionlimit(was + _ROOM)
        try:
            yield
        finally:
            sys.setrecursionlimit(was)


def deep(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """`fn(*args, **kwargs)`, run again with room to recurse when it hits the recursion limit
    (`json.dumps`, `str` of a nested value, a recursive walk of one)."""
    try:
        return fn(*args, **kwargs)
    except RecursionError:
        with _recursion_room():
            return fn(*args, **kwargs)


def _too_deep(e: orjson.JSONEncodeError) -> bool:
    return "ecursion" in str(e)  # ("Recursion limit reached")


def printable(text: str) -> str:
    """`text`, a lone surrogate in it (JSON's `"\\ud800"`, which JavaScript runtimes read as it is; a
    file name's undecodable byte) spelled as its `\\udXXX` escape: what a terminal, a JSON document,
    a file or a database can be given (each takes UTF-8 only)."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def loads(data: bytes) -> Any:
    """`orjson.loads(data)`, or Python's json's reading when orjson refuses it: a document `dumps`
    wrote with a lone surrogate's escape (which orjson refuses and json reads back as it was).
    Raises orjson's error when neither reads it."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as e:
        try:
            return json.loads(data)
        except (ValueError, RecursionError):
            raise e from None


def _lone_surrogate(e: orjson.JSONEncodeError) -> bool:
    return "surrogates" in str(e)  # ("str is not valid UTF-8: surrogates not allowed")


def dumps(value: Any, option: int = 0) -> bytes:
    """`orjson.dumps(value, option=option)`, also for a value nested past orjson's 254 levels or a
    string holding a lone surrogate (JSON's `"\\ud800"`, which JSON.parse reads as it is and orjson
    cannot write): then Python's `json` writes the same text (compact, or indented by two with
    OPT_INDENT_2; keys sorted with OPT_SORT_KEYS; UTF-8, a lone surrogate as its `\\udXXX` escape,
    which reads back as the same string). Any other error is orjson's (a value it cannot write)."""
    try:
        return orjson.dumps(value, option=option)
    except orjson.JSONEncodeError as e:
        if not (_too_deep(e) or _lone_surrogate(e)):
            raise
    indent = 2 if option & orjson.OPT_INDENT_2 else None
    text = deep(
        json.dumps,
        value,
        ensure_ascii=False,
        indent=indent,
        separators=(",", ": ") if indent else (",", ":"),
        sort_keys=bool(option & orjson.OPT_SORT_KEYS),
        allow_nan=False,
    )
    return text.encode("utf-8", "backslashreplace")  # (only a lone surrogate is not UTF-8: escaped)


def dumps_text(value: Any, option: int = 0) -> str:
    """`dumps` as a string."""
    return dumps(value, option).decode("utf-8")


def json_dumps(value: Any, **kwargs: Any) -> str:
    """`json.dumps(value, **kwargs)` (its exact text, where a runtime's own formatting is matched),
    for a value nested however deep."""
    return deep(json.dumps, value, **kwargs)


def py_str(value: Any) -> str:
    """`str(value)` (a Python runtime's own formatting of a decoded value), however deep it nests."""
    return deep(str, value)
