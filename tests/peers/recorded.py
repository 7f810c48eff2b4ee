"""What a real runtime did with each probe, recorded, so that CI resumes only a few probes with it.

A probe command (e.g. `python -m tests.peers.openclaw.type_probe --record`) resumes every probe
with the installed runtime and keeps its verdict here, in a JSON file next to the probes, under the
key of everything the runtime was given: the runtime's version, the probe's input (a store's every
row, a transcript's bytes), the prompt, and the harness's own sources (its config, the scripted
model). The tests then hold inspector's prediction to the recorded verdict of every probe, and
resume a few probes with the real runtime each run, whose verdicts must still be the recorded
ones. A probe whose key is not in the record (the probe, its base or the harness changed since)
is never given a stale verdict: the tests name it and the command that records it again.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Iterable
from pathlib import Path
from typing import Any


class StaleRecord(AssertionError):
    """Probes whose input is not the one their verdict was recorded for."""


def key_of(*parts: str | bytes) -> str:
    """One key of several inputs (each length-prefixed: no two splits of the same bytes agree)."""
    h = hashlib.sha256()
    for p in parts:
        b = p.encode("utf-8", "surrogatepass") if isinstance(p, str) else p
        h.update(len(b).to_bytes(8, "big"))
        h.update(b)
    return h.hexdigest()


def sources_key(files: Iterable[Path]) -> str:
    """The key of a harness: its source files' bytes (a changed config or model records again)."""
    return key_of(*(f.name.encode() + b"\0" + f.read_bytes() for f in files))


def store_rows_key(store: Path) -> str:
    """The key of a SQLite store's content: every table's schema and rows, whatever the file's
    page layout or the SQLite version that wrote it (the rows of a table sorted: the same rows
    written in another order are the same store to a reader ordering by its own columns)."""
    con = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    con.text_factory = bytes  # (a damaged row's TEXT need not be UTF-8)
    try:
        parts: list[str | bytes] = []
        for name, sql in con.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table' ORDER BY name").fetchall():
            rows = sorted(repr(tuple(r)) for r in con.execute(f'SELECT * FROM "{name.decode()}"'))
            parts += [name, sql or b"", *rows]
        return key_of(*parts)
    finally:
        con.close()


class Record:
    """The recorded verdicts of one probe set (`name`) in the JSON file `path`: probe name ->
    {"key", "verdict", "why"}."""

    def __init__(self, path: Path, name: str) -> None:
        self.path, self.name = path, name
        data = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
        self.entries: dict[str, dict[str, Any]] = data.get(name, {})

    def get(self, probe: str, key: str) -> tuple[Any, str] | None:
        """The verdict (as recorded: JSON) and why, for PROBE given exactly KEY; else None."""
        e = self.entries.get(probe)
        return (e["verdict"], e["why"]) if e is not None and e["key"] == key else None

    def put(self, probe: str, key: str, verdict: Any, why: str) -> None:
        self.entries[probe] = {"key": key, "verdict": verdict, "why": why}

    def save(self) -> None:
        data = json.loads(self.path.read_text(encoding="utf-8")) if self.path.exists() else {}
        data[self.name] = dict(sorted(self.entries.items()))
        tmp = self.path.with_name(self.path.name + ".tmp")
        tmp.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        tmp.replace(self.path)


def recorded_verdicts(book: Record, wanted: dict[str, str], command: str) -> dict[str, tuple[Any, str]]:
    """The recorded (verdict, why) of each probe in WANTED (name -> its key now); StaleRecord
    naming every probe recorded for another input or not at all."""
    got = {name: book.get(name, key) for name, key in wanted.items()}
    stale = sorted(name for name, v in got.items() if v is None)
    if stale:
        raise StaleRecord(
            f"{book.path} holds no verdict of {len(stale)} {book.name} probe(s) for their input as it is now "
            f"(the probe, its base or the harness changed since it was recorded): {stale[:8]}{' ...' if len(stale) > 8 else ''}; "
            f"record them with the real runtime: `{command} --only NAME ...` (or all of them)"
        )
    return {name: v for name, v in got.items() if v is not None}


def settle(book: Record, lived: dict[str, tuple[str, Any, str]], record: bool, command: str) -> None:
    """The verdicts the runtime just gave (name -> (key, verdict as JSON, why)): kept in the
    record when RECORD; else each must be the one recorded for the same key (StaleRecord names
    those that are not: the installed runtime no longer does what was recorded)."""
    if record:
        for name, (key, verdict, why) in lived.items():
            book.put(name, key, verdict, why)
        book.save()
        return
    moved = moved_verdicts(book, lived)
    if moved:
        raise StaleRecord(
            f"the real runtime's verdict is not the one in {book.path} for the same input: {moved}; "
            f"if the runtime's behaviour changed on purpose (a new pin), record again: `{command}`"
        )


def moved_verdicts(book: Record, lived: dict[str, tuple[str, Any, str]]) -> dict[str, str]:
    """The probes whose verdict just given is not the one recorded for the same key."""
    moved = {}
    for name, (key, verdict, _why) in lived.items():
        was = book.get(name, key)
        if was is not None and was[0] != verdict:
            moved[name] = f"now {verdict}, recorded {was[0]}"
    return moved
