"""Edits of a JSON object at a dotted path, as the runtime probes damage their lines
(`tests/peers/*/type_probe.py`): `set_at("message.content.0.text", 5)`, `drop_at("message.role")`."""

from __future__ import annotations

import copy
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
