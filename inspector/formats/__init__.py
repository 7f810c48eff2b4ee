"""Format adapters: detect a file's producer by content and map it into the ledger model."""

from __future__ import annotations

from typing import Any

from inspector.formats import native, pi
from inspector.formats.jsonl import LoadError, RawLine, parse_bytes, read_lines
from inspector.ledger.model import Ledger

FORMATS: tuple[str, ...] = ("native", "pi")

__all__ = ["FORMATS", "LoadError", "detect", "load", "load_bytes"]


def detect(lines: list[RawLine]) -> str | None:
    """Which producer wrote these lines, judged by content (never by file name)."""
    for rl in lines[:50]:
        for o in rl.objects:
            if native.looks_like(o):
                return "native"
            if pi.looks_like(o):
                return "pi"
    return None


def _build(lines: list[RawLine], name: str | None, fmt: str | None, size: int, digest: str) -> Ledger:
    if not lines:
        raise LoadError(f"{name}: line 1: the file is empty (no records)")
    chosen = fmt or detect(lines)
    if chosen is None:
        first = lines[0]
        what = _first_problem(first)
        raise LoadError(
            f"{name}: line {first.line}: not a session ledger this tool knows ({what}); "
            f"formats: {', '.join(FORMATS)} (use --format to force one)"
        )
    if chosen == "pi":
        led = pi.build(lines, name)
    elif chosen == "native":
        led = native.build(lines, name)
    else:
        raise LoadError(f"{name}: unknown format {chosen!r}; formats: {', '.join(FORMATS)}")
    led.size = size
    led.sha256 = digest
    return led


def _first_problem(rl: RawLine) -> str:
    if rl.diagnostic is not None:
        return rl.diagnostic.message.split(": ", 1)[-1]
    o: Any = rl.objects[0] if rl.objects else None
    if isinstance(o, dict):
        return f"first record has type {o.get('type')!r}"
    return f"first line is a JSON {type(o).__name__}"


def load(path: str, fmt: str | None = None, upto_line: int | None = None) -> Ledger:
    """Read a session file. `upto_line`: the file as it stood when that line was the last written."""
    lines, size, digest = read_lines(path, upto_line)
    led = _build(lines, path, fmt, size, digest)
    led.upto_line = upto_line
    return led


def load_bytes(data: bytes, name: str = "<bytes>", fmt: str | None = None, upto_line: int | None = None) -> Ledger:
    lines, size, digest = parse_bytes(data, name, upto_line)
    led = _build(lines, name, fmt, size, digest)
    led.upto_line = upto_line
    return led
