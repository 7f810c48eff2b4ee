"""`repair --out FILE`: a copy of the session with the repair's record appended. The session file
itself is only read (`repair --write` appends into it: inspector.store.writeback).

The copy is the session's bytes exactly as they were analysed (refused if the file changed since:
size and sha256 of the analysed prefix), a newline if its last line lacks one, and the record.
Written atomically: a temporary file in the target's directory, fsync, rename. The target must be a
new name in an existing writable folder or a writable regular file: a device, a named pipe, a folder
or a symbolic link is refused (a rename would replace the node or the link with a regular file).
"""

from __future__ import annotations

import hashlib
import os
from typing import Any

from inspector.compaction.entries import WriteError, appended_bytes
from inspector.formats import registry
from inspector.ledger.model import Ledger
from inspector.store import dbwrite
from inspector.store.files import check_destination, mode_of, os_cause, write_atomic


def read_unchanged(led: Ledger) -> bytes:
    """The session file's bytes, provided they are still what was analysed."""
    if led.path is None:
        raise WriteError("the session was not read from a file")
    try:
        with open(led.path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise WriteError(f"{led.path}: cannot read it again ({os_cause(e)})") from e
    if len(data) != led.size or (led.sha256 is not None and hashlib.sha256(data).hexdigest() != led.sha256):
        raise WriteError(f"{led.path} changed since it was analysed ({led.size:,} → {len(data):,} bytes): analyse it again")
    return data


def write_copy(led: Ledger, entry: dict[str, Any], out: str, lines: list[dict[str, Any]] | None = None) -> int:
    """Write the session plus `entry` to `out`; returns the bytes written. Never touches the
    session file. `out` must be a new path in an existing writable folder or a writable regular
    file (never a link, a folder or a device: inspector.store.files.check_destination)."""
    check_copy_target(led, out)
    w = registry.get(led.format).writer
    if w is not None and w.store is not None and led.path is not None and dbwrite.is_database(led.path):
        return dbwrite.write_copy(led, entry, lines or [entry], out)
    original = read_unchanged(led)
    data = w.copy(original, lines or [entry]) if w is not None and w.copy is not None else appended_bytes(original, entry, lines)
    write_atomic(out, data, label="--out", mode=mode_of(led.path))  # (as private as the session)
    return len(data)



def check_copy_target(led: Ledger, out: str) -> None:
    """Refuse an `--out` the copy must not be written to (the CLI asks before the summarizer runs,
    `write_copy` again before writing)."""
    if led.path is not None and _same_file(out, led.path):
        raise WriteError(f"--out {out} is the session file itself: a repair writes a copy (give another path, or use --write)")
    check_destination(out, "--out")


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:  # one of them does not exist (or cannot be looked at: check_destination says why)
        return False
