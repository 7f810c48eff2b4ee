"""The session file's sha256 for the app, taken after its analysis landed (issue 15.3).

The hash is only what a write-back compares before it touches the file (store/writeback.py). The
CLI's read-only commands never take it; `inspector repair` does, as it loads. The app may write
(the repair screen), so it needs it too, but not before the user has seen anything: hashing a
500 MB rollout during the load is half a second of CPU on the other core, which the loading and
painting threads then share with it. So the app loads without it and hashes the same prefix
(`Ledger.size` bytes) once the analysis is on screen, in a thread of its own; an install waits
for it.

The file is stat'ed before the load began, before the hash and after it; if anything changed (its
size, its time, its inode: an append, a rewrite, a rename over it) the prefix hashed may not be the
bytes analysed, so the ledger gets a digest no file has and a write-back refuses, as it refuses a
changed file. What this no longer catches: a rewrite of the same size that also puts the file's
modification time back, made between the load and the hash (the load's own hash, read beside the
parse, had a window too, during the load).
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections.abc import Callable
from typing import Any

from inspector.formats import split_selector
from inspector.formats.jsonl import hash_prefix
from inspector.formats.sqlite_files import has_magic
from inspector.ledger.model import Ledger

CHANGED = "changed on disk before it was hashed"  # (never a sha256: every write-back check fails)
BACKGROUND_NICE = 10  # the hashing thread's nice value (Linux)


class LateFingerprint:
    """`ensure()` sets `ledger.sha256` as `load` would have, once; a second caller waits."""

    def __init__(self, ledger: Ledger, stamp: Any, stamp_of: Callable[[str], Any]) -> None:
        self.ledger = ledger
        self.stamp = stamp  # the file as it was when the load began
        self.stamp_of = stamp_of
        self._lock = threading.Lock()
        self._done = False
        self._started = False

    def start(self) -> None:
        """Hash in a thread of its own, once (a second call does nothing)."""
        if self._started:
            return
        self._started = True
        threading.Thread(target=self._background, daemon=True, name="fingerprint").start()

    def _background(self) -> None:
        # Behind the app's own threads for the CPU (Linux: a thread has its own nice value): on a
        # busy machine the half second of hashing a 500 MB file must not delay a key's repaint. The
        # hash and the reads hold no GIL, so a low priority here never stalls the other threads.
        if sys.platform == "linux":
            with contextlib.suppress(OSError):
                os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), BACKGROUND_NICE)
        self.ensure()

    def ensure(self) -> None:
        with self._lock:
            if self._done:
                return
            self._done = True
            led = self.ledger
            if led.sha256 is not None or led.path is None or self.stamp is None:
                return
            path = split_selector(led.path)[0]
            try:
                if has_magic(path):
                    return  # a database is never hashed whole (its rows' digest is its state)
                if self.stamp_of(led.path) != self.stamp:
                    led.sha256 = CHANGED
                    return
                digest = hash_prefix(path, led.size)
            except Exception:  # unreadable now: nothing the write-back could trust
                led.sha256 = CHANGED
                return
            led.sha256 = digest if self.stamp_of(led.path) == self.stamp else CHANGED
