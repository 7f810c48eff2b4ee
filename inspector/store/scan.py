"""Scanning many sessions into the index (issue 18 points 1, 2, 6): the engine behind `inspector
scan`, `search` and `usage`, and meant for the triage browser too.

The walk streams paths; each is looked up in the index by its identity; only new or changed files
are read, by worker processes across the cores, at most a few per worker in flight, so memory
stays bounded by the rows however large the tree. Rows come out in the walk's order. A file that
cannot be read is a row with the reason, never a failed scan.
"""

from __future__ import annotations

import datetime as _dt
import os
import re
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, field

from inspector.analysis import analyze
from inspector.analysis.sessions import (
    ScanRow,
    SearchDocument,
    UsageEntry,
    scan_row,
    search_documents,
    usage_entries,
)
from inspector.formats import LoadError, load, store_sessions
from inspector.formats.jsonl import NotRegularFile
from inspector.ledger.jsontext import printable
from inspector.store.index import FileIdentity, SessionIndex, file_identity
from inspector.store.places import Found, parent_session, session_files

IN_PROCESS_BELOW = 8  # fewer files than this: no worker processes (starting them costs more)
IN_FLIGHT_PER_WORKER = 4


_AGO = re.compile(r"(\d+)\s*([dhm])")


def when(value: str) -> float:
    """Epoch seconds of a date, an ISO time (naive: UTC), or `7d` / `12h` / `30m` ago (ValueError
    naming what was expected otherwise)."""
    m = _AGO.fullmatch(value.strip().lower())
    try:
        if m:
            n, unit = int(m.group(1)), m.group(2)
            return time.time() - n * {"d": 86400, "h": 3600, "m": 60}[unit]
        d = _dt.datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        if d.tzinfo is None:
            d = d.replace(tzinfo=_dt.UTC)
        return d.timestamp()
    except (ValueError, OverflowError, OSError):
        raise ValueError(
            f"expected a date (2026-01-31), an ISO time (2026-01-31T12:00) or an age (7d, 12h, 30m), got {value[:40]!r}"
        ) from None


def iso_seconds(iso: str | None) -> float | None:
    """Epoch seconds of a row's ISO-8601 time."""
    if iso is None:
        return None
    return _dt.datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()


@dataclass(slots=True, frozen=True)
class SessionFilter:
    """What `--since/--until`, `--project` and `--format` keep, for `scan`, `search`, `usage` and
    the triage browser alike. A file that could not be read is always kept: a scan never hides a
    session it failed on. A filter on times drops sessions with no record time."""

    since: float | None = None
    until: float | None = None
    project: str | None = None
    format: str | None = None

    @property
    def active(self) -> bool:
        return any(v is not None for v in (self.since, self.until, self.project, self.format))

    def keeps(self, row: ScanRow) -> bool:
        if row.error is not None:
            return True
        if self.format is not None and (row.format or "").lower() != self.format.lower():
            return False
        if self.project is not None and self.project.lower() not in (row.project or "").lower():
            return False
        if self.since is not None:
            last = iso_seconds(row.last_activity)
            if last is None or last < self.since:
                return False
        if self.until is not None:
            first = iso_seconds(row.first_activity)
            if first is None or first > self.until:
                return False
        return True


@dataclass(slots=True)
class ReadSession:
    """What reading one file gives the index: its row, its usage, its searchable text."""

    row: ScanRow
    usage: list[UsageEntry] = field(default_factory=list)
    docs: list[SearchDocument] = field(default_factory=list)


def _strip_path(message: str, path: str) -> str:
    """Errors from the core start with the file's path; the row already names the file."""
    for prefix in (path + ": ", os.path.basename(path) + ": "):
        if message.startswith(prefix):
            return message[len(prefix) :]
    return message


def read_session(path: str, parent: str | None = None, size: int | None = None) -> ReadSession:
    """Load and analyse one file. Never raises: a failure is the row's `error`."""
    try:
        led = load(path)
        report = analyze(led)
        row = scan_row(report, path, size, parent)
        return ReadSession(row, usage_entries(led), list(search_documents(led)))
    except LoadError as e:
        return ReadSession(ScanRow(path=path, parent=parent, size=size, error=_strip_path(str(e), path)))
    except OSError as e:
        return ReadSession(ScanRow(path=path, parent=parent, size=size, error=f"cannot read ({e.strerror or e})"))
    except Exception as e:  # a core bug on one file must not end the scan of the others
        return ReadSession(
            ScanRow(path=path, parent=parent, size=size, error=f"analysis failed: {type(e).__name__}: {e}")
        )


@dataclass(slots=True)
class ScanStats:
    found: int = 0
    from_index: int = 0
    read: int = 0
    unreadable: int = 0
    missing: list[str] = field(default_factory=list)


@dataclass(slots=True)
class _Pending:
    path: str
    ident: FileIdentity | None = None
    row: ScanRow | None = None  # known already (from the index, or an error)
    future: Future[ReadSession] | None = None
    read: ReadSession | None = None  # read in this process
    last_of_file: bool = True  # the progress bar counts files: a store's last session ends its file


def sessions_of(f: Found) -> list[Found]:
    """What one found file gives the scan a row each for: itself, or each session of a
    multi-session store (ADK SQLite, OpenClaw SQLite, maka) as `FILE#SESSION`."""
    if f.missing:
        return [f]
    ids = store_sessions(f.path)
    if len(ids) < 2:
        return [f]
    return [Found(f"{f.path}#{sid}") for sid in ids]


def _worker_count(requested: int | None) -> int:
    """One per core by default; at most four per core whatever is asked (more only queue)."""
    try:
        cores = max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return cores if requested is None else max(1, min(requested, 4 * cores))


class Scanner:
    """Rows for every session under some paths, through one index.

    `found(total)` is called once the walk is over; `progress(done, total)` as rows come out
    (total: the files found)."""

    def __init__(
        self,
        index: SessionIndex,
        workers: int | None = None,
        progress: Callable[[int, int], None] | None = None,
        cancelled: Callable[[], bool] = lambda: False,
        found: Callable[[int], None] | None = None,
    ) -> None:
        self.index = index
        self.workers = _worker_count(workers)
        self.progress = progress
        self.cancelled = cancelled
        self.found = found
        self.stats = ScanStats()
        self.most_in_flight = 0  # the largest number of files pending at once (bounded memory)
        self._pool: ProcessPoolExecutor | None = None
        self._by_session_id: dict[str, str] = {}  # top-level sessions read so far: a child names its parent by id

    def rows(self, paths: Iterable[str]) -> Iterator[ScanRow]:
        try:
            yield from self._rows(paths)
        finally:
            self.index.commit()
            if self._pool is not None:
                self._pool.shutdown(wait=True, cancel_futures=True)
                self._pool = None

    def _rows(self, paths: Iterable[str]) -> Iterator[ScanRow]:
        # The walk first, paths only (a 100k-session tree is a few MB of names), so the progress
        # bar knows its total; then the rows, with at most `window` files pending at once.
        found: list[Found] = list(session_files(paths, self.cancelled))
        total = self.stats.found = len(found)
        if self.found is not None:
            self.found(total)
        use_pool = self.workers > 1 and total >= IN_PROCESS_BELOW  # the pool starts at its first file
        window = max(1, self.workers * IN_FLIGHT_PER_WORKER)
        pending: deque[_Pending] = deque()
        done = 0
        for f in found:
            units = sessions_of(f)
            if not f.missing:  # a store re-read: sessions deleted from it leave the index
                self.index.forget_gone_sessions(f.path, [u.path for u in units])
            for i, unit in enumerate(units):
                if self.cancelled():
                    return
                started = self._start(unit, use_pool)
                started.last_of_file = i == len(units) - 1
                pending.append(started)
                self.most_in_flight = max(self.most_in_flight, len(pending))
                while pending and (len(pending) >= window or pending[0].future is None or pending[0].future.done()):
                    item = pending.popleft()
                    yield self._finish(item)
                    if item.last_of_file:
                        done += 1
                        if self.progress:
                            self.progress(done, total)
        while pending:
            item = pending.popleft()
            yield self._finish(item)
            if item.last_of_file:
                done += 1
                if self.progress:
                    self.progress(done, total)

    def _start(self, f: Found, use_pool: bool) -> _Pending:
        if f.missing:
            self.stats.missing.append(f.path)
            return _Pending(f.path, row=ScanRow(path=f.path, error="no such file or directory"))
        try:
            ident = file_identity(f.path)
        except NotRegularFile as e:  # (as `analyze` says it)
            return _Pending(f.path, row=ScanRow(path=f.path, error=f"not a session file ({e.strerror})"))
        except OSError as e:
            return _Pending(f.path, row=ScanRow(path=f.path, error=f"cannot read ({e.strerror or e})"))
        row = self.index.cached_row(ident)
        if row is not None and row.parent is None and row.parent_session_id is not None:
            parent = self._spawner(row.parent_session_id)
            if parent is not None:  # read before its parent was: name it now, in the index too
                row = row.model_copy(update={"parent": printable(parent)})
                self.index.update_row(ident.real_path, row)
        if row is not None:
            self.stats.from_index += 1
            shown = printable(f.path)  # (as the row spells it)
            return _Pending(f.path, ident, row=row if row.path == shown else row.model_copy(update={"path": shown}))
        parent = parent_session(f.path)
        if parent is not None and not os.path.exists(parent):
            parent = None
        self.stats.read += 1
        if use_pool:
            if self._pool is None:
                self._pool = ProcessPoolExecutor(max_workers=self.workers)
            return _Pending(f.path, ident, future=self._pool.submit(read_session, f.path, parent, ident.size))
        return _Pending(f.path, ident, read=read_session(f.path, parent, ident.size))

    def _spawner(self, session_id: str) -> str | None:
        """The file of the session that spawned a child (Codex): one read in this scan, or one the
        index holds from an earlier scan."""
        path = self._by_session_id.get(session_id)
        if path is None:
            path = self.index.path_of_session(session_id)
        return path

    def _finish(self, item: _Pending) -> ScanRow:
        if item.row is not None:
            if item.row.error is not None:
                self.stats.unreadable += 1
            self._remember(item.row)
            return item.row
        if item.future is not None:
            try:
                got = item.future.result()
            except Exception as e:  # a worker died (killed, out of memory): that file's row says so
                got = ReadSession(ScanRow(path=item.path, error=f"worker failed: {type(e).__name__}: {e}"))
        else:
            assert item.read is not None
            got = item.read
        if got.row.error is not None:
            self.stats.unreadable += 1
        if got.row.parent is None and got.row.parent_session_id is not None:
            parent = self._spawner(got.row.parent_session_id)
            if parent is not None:
                got.row = got.row.model_copy(update={"parent": parent})
        if item.ident is not None:
            self.index.store(item.ident, got.row, got.usage, got.docs)
        self._remember(got.row)
        return got.row

    def _remember(self, row: ScanRow) -> None:
        if row.session_id is not None and row.parent_session_id is None:
            self._by_session_id.setdefault(row.session_id, row.path)
