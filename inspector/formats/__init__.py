"""Format adapters: detect a file's producer by content and map it into the ledger model."""

from __future__ import annotations

from typing import Any

from inspector.formats import adk, claude_code, codex, native, openclaw_sqlite, pi
from inspector.formats.jsonl import (
    LoadError,
    PrefixHasher,
    RawLine,
    check_openable,
    hash_prefix,
    os_problem,
    parse_bytes,
    read_lines,
)
from inspector.ledger.model import Ledger
from inspector.ledger.quoting import quote

FORMATS: tuple[str, ...] = ("native", "pi", "codex", "claude_code", "adk", "openclaw")

__all__ = ["FORMATS", "LoadError", "detect", "load", "load_bytes"]


def detect(lines: list[RawLine]) -> str | None:
    """Which producer wrote these lines, judged by content (never by file name)."""
    for rl in lines[:50]:
        for o in rl.objects:
            if not isinstance(o, dict) or not isinstance(o.get("type"), str | None):
                continue  # a record type that is no string names no format
            if native.looks_like(o):
                return "native"
            if pi.looks_like(o):
                return "pi"
            if claude_code.looks_like(o):
                return "claude_code"
            if codex.looks_like(o):
                return "codex"
    if any(codex.looks_like_damaged(o) for rl in lines[:50] for o in rl.objects):
        return "codex"  # its lines' payloads are missing: read it, and say so line by line
    return None


def _build(
    lines: list[RawLine], name: str | None, fmt: str | None, size: int, digest: str, data: bytes | None = None
) -> Ledger:
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
        led = pi.build(lines, name, data)
    elif chosen == "native":
        led = native.build(lines, name)
    elif chosen == "claude_code":
        led = claude_code.build(lines, name, data)
    elif chosen == "codex":
        led = codex.build(lines, name)
    else:
        raise LoadError(f"{name}: unknown format {chosen!r}; formats: {', '.join(FORMATS)}")
    led.size = size
    led.sha256 = digest
    return led


def _first_problem(rl: RawLine) -> str:
    if rl.diagnostic is not None:
        # The line's problem without its per-line disposition ("; skipped"): here it is fatal.
        return rl.diagnostic.message.split(": ", 1)[-1].removesuffix("; skipped")
    o: Any = rl.objects[0] if rl.objects else None
    if isinstance(o, dict):
        return f"first record has type {quote(o.get('type'))}"
    return f"first line is a JSON {type(o).__name__}"


def _sniff(head: bytes) -> list[RawLine]:
    lines, _, _ = parse_bytes(head.rsplit(b"\n", 1)[0] + b"\n" if b"\n" in head else head, "<head>", 50)
    return lines


def load(path: str, fmt: str | None = None, upto_line: int | None = None) -> Ledger:
    """Read a session file. `upto_line`: the file as it stood when that line was the last written.

    pi files take the streaming path (index first, content read on demand; a big file's chunks
    decoded by a forked helper too) and are hashed on another thread meanwhile; other formats are
    parsed whole.
    """
    path, session_sel = adk.split_selector(path)  # ADK databases: FILE.db#SESSION_ID
    size = check_openable(path)
    try:
        f = open(path, "rb")  # noqa: SIM115 - closed below
    except OSError as e:
        raise LoadError(f"{path}: {os_problem(e)}") from None
    with f:
        head = f.read(65536)
        # SQLite (before the binary check): an OpenClaw agent store by its tables, else ADK's; or an
        # ADK session.model_dump() JSON object.
        if fmt == "openclaw" or (fmt is None and adk.is_sqlite(head) and openclaw_sqlite.looks_like_file(path)):
            led = openclaw_sqlite.load(path, session_sel, upto_line)
        elif fmt in (None, "adk") and adk.is_sqlite(head):
            led = adk.load_sqlite(path, path, session_sel, upto_line)
        elif fmt == "adk" or (fmt is None and adk.sniff_dump(head)):
            led = adk.load_json(head + f.read(), path, upto_line)
        else:
            led = None
        if led is not None:
            led.size = size
            led.sha256 = hash_prefix(path, size)
            led.upto_line = upto_line
            return led
        if b"\x00" in head[:8192]:
            raise LoadError(f"{path}: line 1: binary data (NUL bytes), not a JSONL session file")
        chosen = fmt or (detect(_sniff(head)) if head.strip() else None)
        if chosen == "pi":
            f.seek(0)
            hasher = PrefixHasher(path, size) if upto_line is None else None
            # The hashing thread starts only once any helper process is forked (a fork copies
            # just the calling thread).
            led, consumed = pi.load_stream(f, path, size, upto_line, hasher.start if hasher is not None else None)
            if not led.records and not led.diagnostics:
                raise LoadError(f"{path}: line 1: the file is empty (no records)")
            led.size = consumed
            led.sha256 = hasher.result() if hasher is not None else hash_prefix(path, consumed)
            led.upto_line = upto_line
            return led
    lines, size, digest = read_lines(path, upto_line)
    led = _build(lines, path, fmt or chosen, size, digest)
    led.upto_line = upto_line
    return led


def load_bytes(data: bytes, name: str = "<bytes>", fmt: str | None = None, upto_line: int | None = None) -> Ledger:
    if fmt == "adk" or (fmt is None and adk.sniff_dump(data[:65536])):
        led = adk.load_json(data, name, upto_line)
        led.upto_line = upto_line
        return led
    lines, size, digest = parse_bytes(data, name, upto_line)
    led = _build(lines, name, fmt, size, digest, data)
    led.upto_line = upto_line
    return led
