"""Edits of a JSON object at a dotted path, as the runtime probes damage their lines
(`tests/peers/*/type_probe.py`): `set_at("message.content.0.text", 5)`, `drop_at("message.role")`."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

Edit = Callable[[dict[str, Any]], None]


def holder(o: Any, path: str) -> tuple[Any, Any]:
    """The object holding the field at a dotted PATH (a list's items by number), and the field's
    name (its index, in a list)."""
    *keys, last = path.split(".")
    for k in keys:
        o = o[int(k)] if isinstance(o, list) else o[k]
    return o, (int(last) if isinstance(o, list) else last)


def set_at(path: str, value: Any) -> Edit:
    """The field at PATH set to a copy of VALUE (each probe's own: one may edit it further)."""

    def edit(o: dict[str, Any]) -> None:
        h, k = holder(o, path)
        h[k] = copy.deepcopy(value)

    return edit


def drop_at(path: str) -> Edit:
    def edit(o: dict[str, Any]) -> None:
        h, k = holder(o, path)
        del h[k]

    return edit


Make = Callable[[str], dict[str, Any]]  # a probe's marker -> its damaged entry
Line = Callable[[str], bytes]  # a probe's marker -> the line's bytes (no newline)


def edited_line(make: Make, *edits: Edit) -> Line:
    """The entry MAKE builds, EDITS applied, as one JSON line."""

    def line(marker: str) -> bytes:
        o = make(marker)
        for e in edits:
            e(o)
        return json.dumps(o).encode()

    return line


def with_block(make: Make, block: Any) -> Line:
    """The entry MAKE builds with one more content block after its marker text."""
    return edited_line(make, lambda o: o["message"]["content"].append(block))


def with_raw_field(make: Make, text: bytes) -> Line:
    """The entry MAKE builds with a field `x` of raw JSON TEXT (a field no runtime reads)."""

    def line(marker: str) -> bytes:
        o = make(marker)
        o["x"] = "@@raw@@"
        return json.dumps(o).encode().replace(b'"@@raw@@"', text)

    return line


def whole(text: bytes) -> Line:
    """The line as TEXT, whatever the marker."""
    return lambda marker: text
