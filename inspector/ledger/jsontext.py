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
import re
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


def js_length(text: str) -> int:
    """A JavaScript string's `.length`: its UTF-16 code units (a lone surrogate one)."""
    return len(text) if text.isascii() else len(text.encode("utf-16-le", "surrogatepass")) // 2


# A surrogate that is not half of a pair: JavaScript keeps it in a string, and ES2019's
# JSON.stringify writes it as its escape.
_LONE_SURROGATE = re.compile("[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]")


def js_string_json(text: str) -> str:
    """`JSON.stringify(text)` of a string: Python's `ensure_ascii=False` escaping (orjson's, where it
    can write the text), a lone surrogate as its `\\udXXX` escape, a pair as the character it makes."""
    try:
        return orjson.dumps(text).decode()
    except TypeError:
        out = _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", json.dumps(text, ensure_ascii=False))
        return out.encode("utf-16-le", "surrogatepass").decode("utf-16-le")


def js_stringify(value: Any) -> str:
    """`JSON.stringify(value)` (compact) of a value JSON.parse made, as a JavaScript runtime writes
    it into a prompt or counts it: numbers as JavaScript writes them (an integer JSON.parse read as
    a double too), strings as `js_string_json`, an object's array-index keys first in numeric order
    (JavaScript's own key order), however deep it nests."""
    return deep(_js_stringify, value)


def _js_stringify(v: Any) -> str:
    if isinstance(v, str):
        return js_string_json(v)
    if isinstance(v, dict):
        keys = _js_key_order(v)
        return "{" + ",".join(js_string_json(k) + ":" + _js_stringify(v[k]) for k in keys) + "}"
    if isinstance(v, list):
        return "[" + ",".join(map(_js_stringify, v)) + "]"
    if v is None or v is True or v is False:
        return "null" if v is None else "true" if v else "false"
    if isinstance(v, int) and -(2**53) <= v <= 2**53:
        return str(v)
    if isinstance(v, int | float):
        x = _js_double(v)
        return "null" if x != x or x in (_INF, -_INF) else _js_number(x)
    return js_string_json(py_str(v))  # (nothing JSON.parse makes)


_INF = float("inf")


def _js_double(v: int | float) -> float:
    """The double JSON.parse reads a number as (an integer past the doubles' range: infinite)."""
    try:
        return float(v)
    except OverflowError:
        return _INF if v > 0 else -_INF


def _js_key_order(o: dict[Any, Any]) -> list[Any]:
    """An object's keys in JavaScript's order: array indexes (canonical integers below 2**32 - 1)
    ascending, then the rest as inserted."""
    keys = list(o)
    index = [k for k in keys if isinstance(k, str) and k.isascii() and k.isdigit() and (k == "0" or k[0] != "0") and int(k) < 2**32 - 1]
    if not index:
        return keys
    taken = set(index)
    return sorted(index, key=int) + [k for k in keys if k not in taken]


def py_str(value: Any) -> str:
    """`str(value)` (a Python runtime's own formatting of a decoded value), however deep it nests."""
    return deep(str, value)


def js_string(value: Any) -> str:
    """`String(value)` in JavaScript, of a value JSON.parse made (`UNDEFINED`: a missing field):
    what a runtime in JavaScript writes when it puts such a value into text."""
    if value is UNDEFINED:
        return "undefined"
    if value is None:
        return "null"
    if value is True or value is False:
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if isinstance(value, int | float):
        return _js_number(float(value))
    if isinstance(value, list):  # Array.prototype.join: null and undefined as ""
        return ",".join("" if v is None else deep(js_string, v) for v in value)
    return "[object Object]"


class _Undefined:
    def __repr__(self) -> str:
        return "UNDEFINED"


UNDEFINED: Any = _Undefined()  # a field JSON.parse's object does not have (`o.get(key, UNDEFINED)`)


def _js_number(x: float) -> str:
    """Number.prototype.toString of a double: the shortest digits that read back as it, in
    exponent form from 1e21 up and below 1e-6."""
    if x != x:
        return "NaN"
    if x in (float("inf"), float("-inf")):
        return "Infinity" if x > 0 else "-Infinity"
    if x == 0:
        return "0"
    digits, exp = _shortest(abs(x))
    sign = "-" if x < 0 else ""
    n = exp + 1  # the position of the decimal point after the first digit
    if -6 < n <= 0:
        return f"{sign}0.{'0' * -n}{digits}"
    if 0 < n <= 21:
        return f"{sign}{digits[:n]}.{digits[n:]}" if len(digits) > n else f"{sign}{digits}{'0' * (n - len(digits))}"
    mantissa = digits[0] + (f".{digits[1:]}" if len(digits) > 1 else "")
    return f"{sign}{mantissa}e{'+' if exp >= 0 else '-'}{abs(exp)}"


def _shortest(x: float) -> tuple[str, int]:
    """The shortest digits that read back as positive `x` (Python's repr finds the same ones as
    JavaScript), and the decimal exponent of the first."""
    text = repr(x)
    if "e" in text:
        m, _, e = text.partition("e")
        return m.replace(".", "").rstrip("0") or "0", int(e)
    whole, _, frac = text.partition(".")
    whole = whole.lstrip("0")
    if whole:
        return (whole + frac).rstrip("0"), len(whole) - 1
    return frac.lstrip("0").rstrip("0"), -(len(frac) - len(frac.lstrip("0"))) - 1
