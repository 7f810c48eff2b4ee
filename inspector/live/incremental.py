"""Following one growing session file: parse only the appended bytes, update the report (issue 17.1).

A `Follower` holds the ledger and report of the file's complete lines and where they end. `poll()`
looks at the file again:

- unchanged: None;
- grown: the new complete lines are parsed (a partial last line, the agent mid-write, waits for
  its newline: it is read with the line it becomes), the format's `extend` grows the ledger and
  `analysis.incremental.extend_report` the report; where either needs the whole file (see them)
  the file is read again in full;
- shrunk or replaced (another inode, other bytes where the read ones were: `inspector undo`'s
  rename, a rotation): read again in full, and the update says why;
- a store whose Format can `follow` (the ADK, OpenClaw, adk-go and maka SQLite stores: their
  rows' own rowid, seq or session order) is looked at when the database, its -wal or its -journal
  changed (size, time, inode): the format reads only the rows after the last seen one (its note
  of them is taken right after each full read), and says when it must be read again in full
  instead (a row read before went or the last one was rewritten: `inspector undo`, a take-back;
  another session chosen; see the format's follow), which the update names. adk-go and maka
  build their ledgers across all their rows: they parse only the new rows, build the ledger
  again from the kept events, and the report is analysed again in full (`notes_changed`). Other
  stores (a JSON dump) are read again in full on every change.

The result always equals `analyze(load(prefix))` where prefix is the file up to its last newline,
or the store as it is (tests/test_incremental.py, tests/test_incremental_stores.py check it byte
for byte). Deleted, unreadable: `poll` raises what
`load` raises (LoadError, OSError); the caller keeps its last view.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from typing import Any

from inspector.analysis import Report, analyze
from inspector.analysis.incremental import extend_report, prepare
from inspector.formats import LoadError, load, load_bytes, registry, split_selector
from inspector.formats.appended import complete_lines
from inspector.formats.jsonl import open_regular
from inspector.ledger.model import Ledger

EDGE_BYTES = 4096  # the first and the last bytes read, compared on each look: a replaced file differs
GROWN = ""  # Update.whole when the file grew and was read from where the last read ended
FIRST = "first read"
REPLACED = "the file shrank or was replaced"
NOT_EXTENDABLE = "the append needs a full read"  # (a new checkpoint header, a diagnostic, a store, ...)
DAMAGED = "the store is damaged"  # (which rows a read reaches depends on how it walks the damaged pages)


@dataclass(slots=True)
class Update:
    """What one look at the file gave."""

    ledger: Ledger
    report: Report
    added: int  # records appended since the last update (all of them after a full read)
    whole: str  # GROWN, or why the file was read from the start
    pending: int  # bytes of a last line still waiting for its newline


@dataclass(slots=True)
class _Read:
    """Where the read part of the file ends, and what it looked like."""

    dev: int
    ino: int
    offset: int  # bytes of complete lines read
    lines: int  # lines they hold (blank ones included: line numbers go on from here)
    head: bytes
    tail: bytes
    hasher: Any  # sha256 of the bytes read, to be continued


class Follower:
    def __init__(
        self, path: str, *, fmt: str | None = None, window: int | None = None, reserve: int | None = None
    ) -> None:
        self.path = path
        self.fmt = fmt
        self.window = window
        self.reserve = reserve
        self.ledger: Ledger | None = None
        self.report: Report | None = None
        self._read: _Read | None = None
        self._extendable = False
        self._tail: Any = None  # a followed store's own note of its last read row (Format.follow)
        self._sides: tuple[tuple[int, ...], ...] | None = None  # the store's files as last looked at
        self.full_reads = 0  # how often the file was read from the start (tests, benchmark)

    # ---------------------------------------------------------------------------------- looking

    def poll(self) -> Update | None:
        """The report after the file changed, or None when it did not. Raises LoadError/OSError."""
        st = os.stat(split_selector(self.path)[0])
        rd = self._read
        if rd is None or self.ledger is None or self.report is None:
            return self._full(FIRST)
        if registry.get(self.ledger.format).is_store:
            return self._store_poll()  # (FILE#SESSION names no file to read lines from)
        if (st.st_dev, st.st_ino) != (rd.dev, rd.ino) or st.st_size < rd.offset:
            return self._full(REPLACED)
        with open_regular(self.path) as f:
            if not self._same_edges(f, rd):
                return self._full(REPLACED)
            if st.st_size == rd.offset:
                return None
            f.seek(rd.offset)
            data = f.read(st.st_size - rd.offset)
        lines, used, count = complete_lines(data, rd.offset, rd.lines + 1)
        if used == 0:
            return None  # only a partial line so far: it waits for its newline
        return self._grow(lines, data[:used], count, pending=len(data) - used)

    def adopt(self, ledger: Ledger, report: Report | None = None) -> Update:
        """Follow from a ledger already read (the app's own load) when it is the file's complete
        lines as they are now; else read the file in full."""
        if ledger.upto_line is not None or registry.get(ledger.format).is_store:
            return self._full(FIRST)
        rd = self._verified(ledger)
        if rd is None:
            return self._full(FIRST)
        return self._set(ledger, report or self._analyze(ledger), rd, len(ledger.records), FIRST, 0)

    # ---------------------------------------------------------------------------------- growing

    def _grow(self, lines: list[Any], data: bytes, count: int, *, pending: int) -> Update:
        old_led, old_rep, rd = self.ledger, self.report, self._read
        assert old_led is not None and old_rep is not None and rd is not None
        fmt = registry.get(old_led.format)
        led = fmt.extend(old_led, lines) if self._extendable and fmt.extend is not None and lines else None
        if led is None and lines:
            return self._full(NOT_EXTENDABLE)
        hasher = rd.hasher.copy()
        hasher.update(data)
        offset = rd.offset + len(data)
        tail = (rd.tail + data)[-EDGE_BYTES:]
        head = rd.head if len(rd.head) >= EDGE_BYTES else (rd.head + data)[:EDGE_BYTES]
        new_rd = _Read(rd.dev, rd.ino, offset, rd.lines + count, head, tail, hasher)
        if led is None:  # blank lines only
            led = old_led
        led.size = offset
        led.sha256 = hasher.hexdigest()
        added = len(led.records) - len(old_led.records)
        rep = (
            old_rep
            if added == 0
            else extend_report(old_rep, led, len(old_led.records), self.window, self.reserve)
        )
        return self._set(led, rep, new_rd, added, GROWN, pending)

    def _store_poll(self) -> Update | None:
        """A followed store: the rows after the last seen one, when its files changed; a store
        whose format cannot follow it is read again in full."""
        led, rep = self.ledger, self.report
        assert led is not None and rep is not None and self._read is not None
        sides = self._store_sides()
        fmt = registry.get(led.format)
        if sides == self._sides:
            return None  # (a store whose tail could not be noted is read in full on its next change)
        if fmt.follow is None:
            return self._full(NOT_EXTENDABLE)
        if any(d.problem == "damaged_database" for d in led.diagnostics):
            return self._full(DAMAGED)
        base, selector = split_selector(self.path)
        got = fmt.follow(base, selector, led, self._tail)
        if got.reload is not None:
            return self._full(got.reload)
        self._sides, self._tail = sides, got.tail
        if got.ledger is None:
            return None
        new = got.ledger
        new.size = os.stat(base).st_size
        # A full read hashes the whole database file; a growth does not (a store's repair
        # compares the format's digest of the rows, `store_state`, which the format kept).
        new.sha256 = None
        if got.notes_changed or got.added == 0:
            new_rep = self._analyze(new)
        else:
            new_rep = extend_report(rep, new, len(led.records), self.window, self.reserve)
        self.ledger, self.report = new, new_rep
        return Update(new, new_rep, got.added, GROWN, 0)

    def _prime(self) -> None:
        """Right after a full read of a followed store: the format notes where its rows end (its
        digest of them: one pass, part of the first read), so the next look reads only new rows.
        Rows it finds added meanwhile are left for that look; a reason to read again, too."""
        assert self.ledger is not None
        fmt = registry.get(self.ledger.format)
        assert fmt.follow is not None
        base, selector = split_selector(self.path)
        try:
            got = fmt.follow(base, selector, self.ledger, None)
        except (LoadError, OSError):
            return  # the next look tries again, and says why if it fails
        if got.reload is None and got.ledger is None:
            self._tail = got.tail

    def _store_sides(self) -> tuple[tuple[int, ...], ...]:
        """The database file, its -wal and its -journal as stat sees them (absent: empty)."""
        base, _ = split_selector(self.path)
        out: list[tuple[int, ...]] = []
        for p in (base, base + "-wal", base + "-journal"):
            try:
                st = os.stat(p)
            except FileNotFoundError:
                out.append(())
                continue
            out.append((st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns))
        return tuple(out)

    def _full(self, why: str) -> Update:
        """Read the file from the start: its complete lines (a partial last line waits)."""
        self.full_reads += 1
        sides = self._store_sides()  # before the read: a change while it reads is looked at again
        led = load(self.path, self.fmt)
        size = os.stat(split_selector(self.path)[0]).st_size
        fmt = registry.get(led.format)
        if fmt.is_store:
            st = os.stat(split_selector(self.path)[0])
            rd = _Read(st.st_dev, st.st_ino, size, 0, b"", b"", hashlib.sha256())
            self._extendable = False
            self._tail, self._sides = None, sides
            up = self._set(led, self._analyze(led), rd, len(led.records), why, 0)
            if fmt.follow is not None:
                self._prime()
            return up
        rd = self._verified(led)
        if rd is None:  # its last line is partial, or the file changed while it was read
            led, rd = self._complete_lines_only()
        pending = max(0, size - rd.offset)
        return self._set(led, self._analyze(led), rd, len(led.records), why, pending)

    def _complete_lines_only(self) -> tuple[Ledger, _Read]:
        with open_regular(self.path) as f:
            st = os.fstat(f.fileno())
            data = f.read()
        end = data.rfind(b"\n") + 1
        if end == 0:
            raise LoadError(f"{self.path}: line 1: no complete line yet (the first line has no newline)")
        led = load_bytes(data[:end], self.path, self.fmt)
        rd = _Read(
            st.st_dev,
            st.st_ino,
            end,
            data.count(b"\n", 0, end),
            data[:EDGE_BYTES],
            data[max(0, end - EDGE_BYTES) : end],
            hashlib.sha256(data[:end]),
        )
        return led, rd

    def _verified(self, led: Ledger) -> _Read | None:
        """Where `led`'s bytes end in the file as it is now, when they are still there and end
        with a newline; None when not (the caller reads the file again)."""
        h = hashlib.sha256()
        lines = 0
        head = b""
        last = b""
        with open_regular(self.path) as f:
            st = os.fstat(f.fileno())
            left = led.size
            while left > 0:
                chunk = f.read(min(left, 1 << 20))
                if not chunk:
                    return None
                h.update(chunk)
                lines += chunk.count(b"\n")
                if len(head) < EDGE_BYTES:
                    head += chunk[: EDGE_BYTES - len(head)]
                last = (last + chunk)[-EDGE_BYTES:]
                left -= len(chunk)
        if led.size == 0 or not last.endswith(b"\n") or h.hexdigest() != led.sha256:
            return None
        return _Read(st.st_dev, st.st_ino, led.size, lines, head, last, h)

    @staticmethod
    def _same_edges(f: Any, rd: _Read) -> bool:
        head = f.read(len(rd.head))
        if head != rd.head:
            return False
        f.seek(rd.offset - len(rd.tail))
        return bool(f.read(len(rd.tail)) == rd.tail)

    def _analyze(self, led: Ledger) -> Report:
        return analyze(led, window=self.window, reserve=self.reserve)

    def _set(self, led: Ledger, rep: Report, rd: _Read, added: int, why: str, pending: int) -> Update:
        if why != GROWN:
            # Records the runtime cannot see (a line it skips) take part in the full build's
            # duplicate-id and lost-record rules: such a file is read in full on every growth.
            self._extendable = registry.get(led.format).extend is not None and all(
                r.runtime_visible for r in led.records
            )
        if why != GROWN:
            prepare(rep)  # what extending the report needs, built with the full read
        self.ledger, self.report, self._read = led, rep, rd
        return Update(led, rep, added, why, pending)
