"""Format adapters: detect a file's producer by content and map it into the ledger model."""

from __future__ import annotations

import os
import stat
from typing import Any

from inspector.formats import codex, parallel, registry, sqlite_files
from inspector.formats.base import Format, UnknownFormat
from inspector.formats.jsonl import (
    READ_BUFFER_BYTES,
    LoadError,
    PrefixHasher,
    RawLine,
    check_openable,
    hash_prefix,
    open_regular,
    os_problem,
    parse_bytes,
    read_lines,
)
from inspector.formats.whole_lines import collector_paused
from inspector.ledger.model import Ledger
from inspector.ledger.quoting import quote

__all__ = ["LoadError", "UnknownFormat", "detect", "fork_reader_ahead", "load", "load_bytes", "store_sessions"]


def detect(lines: list[RawLine]) -> str | None:
    """Which producer wrote these lines, judged by content (never by file name): the first line
    format in registry order whose object test takes one of the first 50 lines' objects."""
    tests = [(f.name, f.looks_like) for f in registry.line_formats() if f.looks_like is not None]
    heads = _typed_heads(lines)
    for o in heads:
        for name, looks_like in tests:
            if looks_like(o):
                return name
    if any(codex.looks_like_damaged(o) for o in heads):
        return codex.NAME  # its lines' payloads are missing: read it, and say so line by line
    return None


def _typed_heads(lines: list[RawLine]) -> list[dict[str, Any]]:
    """The objects of the first 50 lines that a format test may look at: a record type that is no
    string names no format (and would not even hash)."""
    return [o for rl in lines[:50] for o in rl.objects if isinstance(o, dict) and isinstance(o.get("type"), str | None)]


def _named(fmt: str, name: str | None) -> Format:
    try:
        return registry.get(fmt)
    except UnknownFormat as e:
        raise UnknownFormat(f"{name}: {e}") from None


def split_selector(path: str) -> tuple[str, str | None]:
    """`FILE#SESSION` -> (FILE, SESSION) for a multi-session store, when FILE#SESSION itself is no file."""
    if "#" in path and not os.path.exists(path):
        base, sid = path.rsplit("#", 1)
        return base, sid or None
    return path, None


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
            f"formats: {', '.join(registry.names())} (use --format to force one)"
        )
    f = _named(chosen, name)
    if f.build is None:
        raise LoadError(f"{name}: {f.name} is a session store, not a JSONL file: read it from its file")
    led = f.build(lines, name, data)
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


def _sniff(head: bytes, upto_line: int | None = None) -> list[RawLine]:
    """The lines `detect` judges a file by: its first 50, or its first `upto_line` (`--at LINE`: the
    file as it stood then, whose later lines were not written yet), as reading it whole judges it."""
    lines, _, _ = parse_bytes(head.rsplit(b"\n", 1)[0] + b"\n" if b"\n" in head else head, "<head>", min(50, upto_line or 50))
    return lines


def _claimed_store(path: str, head: bytes) -> Format | None:
    for f in registry.stores():
        if f.claims is not None and f.claims(path, head):
            return f
    return None


def store_sessions(path: str) -> list[str]:
    """The sessions of a multi-session store at `path`, as `FILE#SESSION` selects them (a
    format's `session_ids`); [] for a line file, a one-session store or one it cannot read."""
    try:
        with open_regular(path) as f:  # (a walk's find: a named pipe there is never waited on)
            head = f.read(65536)
    except OSError:
        return []
    store = _claimed_store(path, head)
    if store is None or store.session_ids is None:
        return []
    return store.session_ids(path)


def fork_reader_ahead(path: str) -> bool:
    """For the app, at its start, while it is still one thread: a big session of a line format
    whose loader shares a file's chunks with a helper process (`Format.chunk_codec`) gets that
    helper forked now, to decode on the second core while the app starts; the app's load of the
    same unchanged file, later in a worker thread (where no fork is safe), takes it over
    (`parallel.fork_ahead`). False, and nothing forked, for anything else (a small file, a store,
    `FILE#SESSION`, not a regular file, no second core)."""
    path, selector = split_selector(path)
    try:
        st = os.stat(path)
    except OSError:
        return False
    if selector is not None or not stat.S_ISREG(st.st_mode) or st.st_size < parallel.PARALLEL_MIN_BYTES:
        return False
    try:
        with open(path, "rb") as f:
            head = f.read(65536)
    except OSError:
        return False
    if not head.strip() or b"\x00" in head[:8192] or _claimed_store(path, head) is not None:
        return False
    name = detect(_sniff(head))
    fmt = registry.get(name) if name is not None else None
    if fmt is None or fmt.chunk_codec is None:
        return False
    return parallel.fork_ahead(path, fmt.chunk_codec)


def load(
    path: str, fmt: str | None = None, upto_line: int | None = None, *, fingerprint: bool = True, digest: bool | None = None
) -> Ledger:
    """Read a session file. `upto_line`: the file as it stood when that line was the last written.
    `FILE#SESSION` picks one session of a multi-session store.

    A store (SQLite, a JSON dump) is recognised by its head; a line format with a streaming loader
    (pi) reads the file index first, content on demand (a big file's chunks decoded by a forked
    helper too), and is hashed on another thread meanwhile; other line formats are parsed whole.

    `fingerprint=False`: the file's bytes are not hashed (`Ledger.sha256` stays None), nor a
    store's rows digested where its format can skip that (`Format.load_file_read_only`:
    `Ledger.store_state` stays None), for a command that only reads: the hash and the digest are
    what a write-back compares before it touches the file. `digest` (default: as `fingerprint`) says
    apart whether a store's rows are digested: the app hashes a file after its analysis landed
    (tui/fingerprint.py) but has no such late step for a database's rows, so it asks for them here.
    """
    forced = _named(fmt, path) if fmt is not None else None
    path, selector = split_selector(path)
    size = check_openable(path)
    try:
        f = open(path, "rb", buffering=READ_BUFFER_BYTES)  # noqa: SIM115 - closed below
    except OSError as e:
        raise LoadError(f"{path}: {os_problem(e)}") from None
    with f:
        head = f.read(65536)
        # Stores first (a SQLite file is binary: before the NUL check).
        store = forced if forced is not None and forced.is_store else None
        if forced is None:
            store = _claimed_store(path, head)
        if store is not None and store.load_file is not None:
            rows_digest = fingerprint if digest is None else digest
            loader = store.load_file_read_only if not rows_digest and store.load_file_read_only else store.load_file
            with collector_paused():  # (see whole_lines: a store's rows make no cycles either)
                led = loader(path, f, head, selector, upto_line)
            led.size = size
            # A database's state is its rows' digest (`store_state`, which its write-back checks);
            # its file's bytes change with every checkpoint of its -wal, and nothing reads a hash
            # of them. A JSON dump is its bytes: `repair --out` copies them only if unchanged.
            if fingerprint and led.sha256 is None and not head.startswith(sqlite_files.SQLITE_MAGIC):
                led.sha256 = hash_prefix(path, size)
            led.upto_line = upto_line
            return led
        if b"\x00" in head[:8192]:
            raise LoadError(f"{path}: line 1: binary data (NUL bytes), not a JSONL session file")
        name = forced.name if forced is not None else (detect(_sniff(head, upto_line)) if head.strip() else None)
        chosen = registry.get(name) if name is not None else None
        if selector is not None and chosen is not None:
            raise LoadError(f"{path}: a {chosen.name} file holds one session: #{selector} selects nothing")
        if chosen is not None and chosen.stream is not None:
            f.seek(0)
            hasher = PrefixHasher(path, size) if upto_line is None and fingerprint else None
            # The hashing thread starts only once any helper process is forked (a fork copies
            # just the calling thread).
            led, consumed = chosen.stream(f, path, size, upto_line, hasher.start if hasher is not None else None)
            if not led.records and not led.diagnostics:
                raise LoadError(f"{path}: line 1: the file is empty (no records)")
            led.size = consumed
            if hasher is not None:
                led.sha256 = hasher.result()
            elif fingerprint:
                led.sha256 = hash_prefix(path, consumed)
            led.upto_line = upto_line
            return led
    with collector_paused():  # (see whole_lines: parsing and mapping make no cycles)
        lines, size, digest = read_lines(path, upto_line)
        led = _build(lines, path, name, size, digest)
    led.upto_line = upto_line
    return led


def load_bytes(data: bytes, name: str = "<bytes>", fmt: str | None = None, upto_line: int | None = None) -> Ledger:
    forced = _named(fmt, name) if fmt is not None else None
    head = data[:65536]
    if forced is not None and forced.is_store:
        if forced.load_data is None:
            raise LoadError(f"{name}: {forced.name} sessions are read from their file, not from bytes")
        store: Format | None = forced
    else:
        store = next((f for f in registry.stores() if f.claims_data is not None and f.claims_data(head)), None)
        store = store if forced is None else None
    if store is not None and store.load_data is not None:
        led = store.load_data(data, name, upto_line)
        led.upto_line = upto_line
        return led
    lines, size, digest = parse_bytes(data, name, upto_line)
    led = _build(lines, name, fmt, size, digest, data)
    led.upto_line = upto_line
    return led
