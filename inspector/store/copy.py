"""`repair --out FILE`: a copy of the session with the repair's record appended. The session file
itself is only read (`repair --write` appends into it: inspector.store.writeback).

The copy is the session's bytes exactly as they were analysed (refused if the file changed since:
size and sha256 of the analysed prefix), a newline if its last line lacks one, and the record.
Written atomically: a temporary file in the target's directory, fsync, rename.
"""

from __future__ import annotations

import hashlib
import os
from typing import Any

from inspector.compaction.entries import WriteError, appended_bytes
from inspector.ledger.model import Ledger
from inspector.store.writeback import write_atomic


def read_unchanged(led: Ledger) -> bytes:
    """The session file's bytes, provided they are still what was analysed."""
    if led.path is None:
        raise WriteError("the session was not read from a file")
    try:
        with open(led.path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise WriteError(f"{led.path}: cannot read it again ({e.strerror or e})") from e
    if len(data) != led.size or (led.sha256 is not None and hashlib.sha256(data).hexdigest() != led.sha256):
        raise WriteError(f"{led.path} changed since it was analysed ({led.size:,} → {len(data):,} bytes): analyse it again")
    return data


def write_copy(led: Ledger, entry: dict[str, Any], out: str) -> int:
    """Write the session plus `entry` to `out`; returns the bytes written. Never touches the
    session file."""
    if led.path is not None and os.path.exists(out) and os.path.samefile(out, led.path):
        raise WriteError("--out names the session file itself: a repair writes a copy (give another path)")
    data = appended_bytes(read_unchanged(led), entry)
    write_atomic(out, data)
    return len(data)
