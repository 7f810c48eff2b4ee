"""What one huge JSON line may cost (issue 11): decoding with bounded time and memory.

A line (or an ADK dump) up to `LARGE_LINE_BYTES` is parsed whole. A bigger one is split with
msgspec into its members, each left as raw bytes (`msgspec.Raw`: no Python objects made for what it
holds), and only then decoded member by member: a member up to `SMALL_VALUE_BYTES`, or any string
or number, whole (a 50 MB text is one string: cheap); a bigger object or list split again. A list
or object with more than `MAX_ITEMS` items in it (a line of millions of small objects, which would
cost tens of times its size as Python objects) keeps its first `MAX_ITEMS` items, read from at most
its first `PREFIX_BYTES`; the rest is not read, and a `Cut` says where and how much.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

import msgspec
import orjson

LARGE_LINE_BYTES = 4_000_000
SMALL_VALUE_BYTES = 1_000_000
MAX_ITEMS = 100_000
PREFIX_BYTES = 4_000_000

_OBJECT = msgspec.json.Decoder(dict[str, msgspec.Raw])
_LIST = msgspec.json.Decoder(list[msgspec.Raw])
_JSON = json.JSONDecoder()
_WS = " \t\r\n"


# orjson refuses what JSON.parse refuses, and more (a lone surrogate in a \u escape, which JSON.parse
# takes): Python's json reads what orjson refused. But Python's json also takes a bare NaN, Infinity
# or -Infinity, which none of the line formats' runtimes reads (JSON.parse, serde_json): a line
# holding one is not JSON to them, and is not here (`js_loads`, `js_raw_decode`).
_BARE = re.compile(r'"(?:[^"\\]|\\.)*"|(-?Infinity|NaN)', re.S)


def refuse_bare_constants(text: str, start: int = 0, end: int | None = None) -> None:
    """Raise json.JSONDecodeError at the first NaN, Infinity or -Infinity outside a string in
    text[start:end] (a string's own text is passed over)."""
    stop = len(text) if end is None else end
    if text.find("NaN", start, stop) < 0 and text.find("Infinity", start, stop) < 0:
        return
    for m in _BARE.finditer(text, start, stop):
        if m.group(1):
            raise json.JSONDecodeError(f"{m.group(1)} is not a JSON value", text, m.start(1))


def js_loads(text: str) -> Any:
    """`json.loads(text)` as JSON.parse reads it: a bare NaN or Infinity is an error."""
    value = json.loads(text)
    refuse_bare_constants(text)
    return value


def js_raw_decode(text: str, i: int) -> tuple[Any, int]:
    """`JSONDecoder.raw_decode(text, i)` as JSON.parse reads the value there (`js_loads`)."""
    value, end = _JSON.raw_decode(text, i)
    refuse_bare_constants(text, i, end)
    return value, end


class NotJson(ValueError):
    """A large line that is not one JSON value; the message says why and where (byte offset)."""


@dataclass(slots=True)
class Cut:
    """Items of a list or object in a large line that were not read."""

    path: str  # where, as `message.content` or `events[3].content.parts`
    kept: int  # items read
    unread_bytes: int  # bytes of it not read

    def sentence(self) -> str:
        return f"{self.path} after its first {self.kept:,} items ({mb(self.unread_bytes)})"


def mb(n: int) -> str:
    return f"{n / 1e6:.1f} MB"


def is_large(raw: bytes | memoryview) -> bool:
    return len(raw) > LARGE_LINE_BYTES


def loads_bounded(raw: bytes | memoryview) -> tuple[Any, list[Cut]]:
    """The JSON value of a large line, and what of it was not read. Raises NotJson when the line is
    not one well-formed JSON value, RecursionError when it nests too deep to read."""
    view = _strip(memoryview(raw))
    cuts: list[Cut] = []
    try:
        # msgspec checks the whole text as it splits the outermost value (what it leaves raw too),
        # so nothing below fails on syntax.
        return _value(view, "", cuts, view.tobytes().count(b",") >= MAX_ITEMS), cuts
    except msgspec.DecodeError as e:
        raise NotJson(str(e).removeprefix("JSON is malformed: ")) from None
    except json.JSONDecodeError as e:  # a value none of the three parsers reads (a byte-order mark first)
        raise NotJson(f"{e.msg} at byte {e.pos}") from None


def _strip(v: memoryview) -> memoryview:
    i, j = 0, len(v)
    while i < j and v[i] in b" \t\r\n":
        i += 1
    while j > i and v[j - 1] in b" \t\r\n":
        j -= 1
    return v[i:j]


def _value(v: memoryview, path: str, cuts: list[Cut], many: bool) -> Any:
    """`many`: the text may hold MAX_ITEMS items or more (it has as many commas, strings' included:
    an upper bound). Without, no list or object in it can, and none is counted again."""
    first = v[0] if len(v) else 0
    if len(v) <= SMALL_VALUE_BYTES or first not in b"[{":
        try:
            return orjson.loads(v)
        except orjson.JSONDecodeError:
            # orjson is stricter than JSON.parse (lone surrogates in \u escapes): read it as pi does.
            return js_loads(v.tobytes().decode("utf-8", errors="replace"))
    if many:
        head = _prefix(v, path, cuts)
        if head is not None:
            return head
    if first == ord("{"):
        members = list(_OBJECT.decode(v).items())
        members = _at_most(members, [len(r) for _, r in members], v, path, cuts)
        return {k: _member(r, f"{path}.{k}" if path else k, cuts, many) for k, r in members}
    items = _LIST.decode(v)
    items = _at_most(items, [len(r) for r in items], v, path, cuts)
    return [_member(r, f"{path}[{i}]", cuts, many) for i, r in enumerate(items)]


def _member(r: msgspec.Raw, path: str, cuts: list[Cut], many: bool) -> Any:
    v = memoryview(r)
    if many and len(v) > SMALL_VALUE_BYTES:
        many = v.tobytes().count(b",") >= MAX_ITEMS
    return _value(v, path, cuts, many)


def _at_most(items: list[Any], sizes: list[int], v: memoryview, path: str, cuts: list[Cut]) -> list[Any]:
    if len(items) <= MAX_ITEMS:
        return items
    cuts.append(Cut(path or "the line", MAX_ITEMS, len(v) - sum(sizes[:MAX_ITEMS])))
    return items[:MAX_ITEMS]


def _prefix(v: memoryview, path: str, cuts: list[Cut]) -> Any:
    """The first items of a list or object with (perhaps) very many, read from its first bytes;
    None when an item runs past those bytes (bigger items, so fewer of them than the commas said:
    the caller splits it instead, into at most len/(PREFIX_BYTES/MAX_ITEMS) raw items)."""
    head = v[:PREFIX_BYTES].tobytes().decode("utf-8", errors="replace")
    is_obj = head[0] == "{"
    out_obj: dict[str, Any] = {}
    out_list: list[Any] = []
    i, n, kept = 1, len(head), 0
    end = None  # where the value's text closes, when it was reached
    scan = json.decoder.scanstring
    while kept < MAX_ITEMS:
        while i < n and head[i] in _WS:
            i += 1
        if i >= n:
            return None  # (as below)
        if head[i] in "]}":
            end = i + 1
            break
        if head[i] == ",":
            i += 1
            continue
        try:
            if is_obj:
                key, i = scan(head, i + 1)
                while i < n and head[i] in _WS + ":":
                    i += 1
                item, i = js_raw_decode(head, i)
                out_obj[key] = item
            else:
                item, i = js_raw_decode(head, i)
                out_list.append(item)
        except ValueError:
            return None  # an item runs past the bytes read: big items, few of them
        kept += 1
    if end is None:
        read = len(head[:i].encode("utf-8", errors="replace"))
        cuts.append(Cut(path or "the line", kept, max(0, len(v) - read)))
    return out_obj if is_obj else out_list


def describe(cuts: list[Cut], unit: str = "line") -> str:
    """What a large line's (or file's) Cuts leave out, and why, for a diagnostic."""
    return (
        f"not read: {'; '.join(c.sentence() for c in cuts)} (inspector reads at most {MAX_ITEMS:,} items of one "
        f"list or object in a {unit} over {mb(LARGE_LINE_BYTES)})"
    )


def loads(data: bytes | memoryview) -> tuple[Any, list[Cut]]:
    """Any one JSON text (a row, a dump): parsed whole when small, bounded when large. Raises
    ValueError (orjson's or NotJson) when it is not JSON, RecursionError when too deep to read."""
    if is_large(data):
        return loads_bounded(data)
    return orjson.loads(data), []
