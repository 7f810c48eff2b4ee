"""The formats this tool reads, in detection order (DESIGN §7; docs/formats-contract.md).

Everything that lists formats reads this one tuple at call time: detection, `--format` choices,
the help text, the writable formats, default places and triage discovery. Adding a format is one
line here and a `FORMAT = Format(...)` in its module.
"""

from __future__ import annotations

from inspector.formats import (
    adk,
    adk_go,
    claude_code,
    codex,
    maka,
    native,
    nextclaw,
    nextclaw_legacy,
    openclaw_sqlite,
    pi,
)
from inspector.formats.base import Format, UnknownFormat

# Line formats are tested object by object in this order; stores by their file head, in this order.
REGISTRY: tuple[Format, ...] = (
    native.FORMAT,
    pi.FORMAT,
    openclaw_sqlite.FORMAT,
    claude_code.FORMAT,
    codex.FORMAT,
    nextclaw.FORMAT,
    nextclaw_legacy.FORMAT,  # core's SessionStore files, beside the journal folder
    adk_go.FORMAT,  # before ADK: adk-go's GORM tables look like ADK's v0 schema
    maka.FORMAT,
    adk.FORMAT,  # the last store: it claims any SQLite file
)


def get(name: str) -> Format:
    for f in REGISTRY:
        if f.name == name:
            return f
    raise UnknownFormat(f"unknown format {name!r}; formats: {', '.join(names())}")


def names() -> tuple[str, ...]:
    """The --format values, in registry order."""
    return tuple(f.name for f in REGISTRY)


def labels() -> str:
    """The formats as the help text names them."""
    return ", ".join(f.label for f in REGISTRY)


def writable() -> tuple[str, ...]:
    """The formats a repair can append a checkpoint to (DESIGN §3, write-back column)."""
    return tuple(f.name for f in REGISTRY if f.writer is not None)


def places() -> tuple[str, ...]:
    """Every format's default places (glob patterns of folders), in registry order, each under
    its runtime's home as the environment sets it now (`Format.homes`)."""
    return tuple(dict.fromkeys(p for f in REGISTRY for p in f.places()))


def not_session_files() -> tuple[str, ...]:
    """fnmatch patterns of file names that a format's folders hold but that are not sessions."""
    return tuple(dict.fromkeys(p for f in REGISTRY for p in f.not_session_files))


def line_formats() -> tuple[Format, ...]:
    return tuple(f for f in REGISTRY if not f.is_store)


def stores() -> tuple[Format, ...]:
    return tuple(f for f in REGISTRY if f.is_store)
