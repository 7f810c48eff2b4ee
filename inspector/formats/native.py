"""Native ledger format (placeholder until the adapter lands)."""

from __future__ import annotations

from typing import Any

from inspector.formats.jsonl import RawLine
from inspector.ledger.model import Ledger

FORMAT = "native"


def looks_like(obj: Any) -> bool:
    return isinstance(obj, dict) and obj.get("type") == "ledger" and obj.get("format") == "inspector-ledger"


def build(lines: list[RawLine], path: str | None) -> Ledger:
    raise NotImplementedError
