"""What `inspector watch` keeps about each session, and how a change of its file updates it.

A small summary is kept per session; the Ledger and Report only for the `FOLLOWED` sessions that
changed last (`inspector.live.incremental.Follower`: a change parses only the appended bytes), so
hundreds of watched sessions cost little memory. `refresh(state, path)` is the one seam between a
file change and the new summary.
"""

from __future__ import annotations

import os
from collections import OrderedDict
from dataclasses import dataclass, field
from operator import attrgetter
from typing import TYPE_CHECKING, Any

from inspector.analysis import Finding, Report
from inspector.analysis.findings import SEVERITY_RANK
from inspector.formats import LoadError

if TYPE_CHECKING:
    from inspector.live.incremental import Follower

WATCH_SCHEMA = "inspector.watch/1"  # a `watch --json` line (inspector/contracts/live.py)

FOLLOWED = 8  # sessions whose ledger and report are kept between changes (the others re-read in full)
_followers: OrderedDict[str, Follower] = OrderedDict()


def follower(path: str) -> Follower:
    """The session's Follower, the most recently changed `FOLLOWED` kept."""
    # (imported here: the app's session view reads this module's findings terms at its landing,
    # and the incremental analysis under Follower was a share of the app's start; issue 15.3)
    from inspector.live.incremental import Follower

    f = _followers.pop(path, None) or Follower(path)
    _followers[path] = f
    while len(_followers) > FOLLOWED:
        _followers.popitem(last=False)
    return f

OK = "ok"
DELETED = "deleted"
UNREADABLE = "unreadable"


@dataclass(frozen=True, slots=True)
class FindingKey:
    """A finding's identity across re-analyses of a growing file: its code and first line (its
    message's counts grow with the file, its place does not)."""

    code: str
    line: int


@dataclass(frozen=True, slots=True)
class SeenFinding:
    key: FindingKey
    severity: str
    message: str


@dataclass(slots=True)
class SessionState:
    """The last report summary of one session file."""

    path: str
    status: str = OK  # ok | deleted | unreadable
    error: str = ""  # unreadable: why
    size: int = -1
    mtime_ns: int = -1
    format: str = ""
    records: int = 0
    tokens: int = 0
    window: int | None = None
    last_checkpoint_line: int | None = None
    findings: tuple[SeenFinding, ...] = field(default_factory=tuple)

    @property
    def worst(self) -> SeenFinding | None:
        return min(self.findings, key=lambda f: SEVERITY_RANK.get(f.severity, 3)) if self.findings else None


_LINE = attrgetter("line")


def finding_key(report: Report, f: Finding) -> FindingKey:
    # (in C: a hole finding of a big session names hundreds of thousands of records)
    lines = map(_LINE, map(report.ledger.records.__getitem__, f.records))
    return FindingKey(f.code, min(lines, default=0))


def summary_of(path: str, report: Report, size: int, mtime_ns: int) -> SessionState:
    cps = report.checkpoints
    return SessionState(
        path=path,
        size=size,
        mtime_ns=mtime_ns,
        format=report.ledger.format,
        records=len(report.ledger.records),
        tokens=report.context_tokens,
        window=report.window,
        last_checkpoint_line=cps[-1].record.line if cps else None,
        findings=tuple(SeenFinding(finding_key(report, f), f.severity, f.message) for f in report.findings),
    )


def refresh(state: SessionState | None, path: str) -> SessionState:
    """The session's new summary after its file changed (or first seen). Never raises: a deleted
    file keeps the last summary marked deleted, an unreadable one says why."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return _marked(state, path, DELETED, "the file was deleted")
    except OSError as e:
        return _marked(state, path, UNREADABLE, e.strerror or str(e))
    if not os.access(path, os.R_OK):
        return _marked(state, path, UNREADABLE, "permission denied")
    mtime = _changed_ns(path, st)
    if state is not None and state.status == OK and (st.st_size, mtime) == (state.size, state.mtime_ns):
        return state
    try:
        f = follower(path)
        f.poll()
        report = f.report
        assert report is not None
    except LoadError as e:
        return _marked(state, path, UNREADABLE, str(e).removeprefix(path + ": "))
    except OSError as e:
        return _marked(state, path, UNREADABLE, e.strerror or str(e))
    except Exception as e:  # a core bug on one file must not stop the watch over the others
        _followers.pop(path, None)
        return _marked(state, path, UNREADABLE, f"analysis failed: {type(e).__name__}: {e}")
    return summary_of(path, report, st.st_size, mtime)


def _changed_ns(path: str, st: os.stat_result) -> int:
    """When the session last changed: the file's time, or a database's -wal's when later (a
    SQLite store in WAL mode gains its rows there, the database file untouched until a checkpoint)."""
    try:
        return max(st.st_mtime_ns, os.stat(path + "-wal").st_mtime_ns)
    except OSError:
        return st.st_mtime_ns


def _marked(state: SessionState | None, path: str, status: str, error: str) -> SessionState:
    base = state if state is not None else SessionState(path=path)
    return SessionState(
        path=base.path, status=status, error=error, size=base.size, mtime_ns=base.mtime_ns, format=base.format,
        records=base.records, tokens=base.tokens, window=base.window,
        last_checkpoint_line=base.last_checkpoint_line, findings=base.findings,
    )  # fmt: skip


def changes(old: SessionState | None, new: SessionState, fail_on: str) -> list[dict[str, Any]]:
    """The events a watcher reports for one refresh: each finding at or above `fail_on` the
    session did not have before, and the file becoming deleted, unreadable or readable again."""
    events: list[dict[str, Any]] = []
    was = old.status if old is not None else OK
    if new.status != was:
        if new.status == DELETED:
            events.append(_event("deleted", new, message=f"{new.path}: the file was deleted; its last report is kept"))
        elif new.status == UNREADABLE:
            events.append(_event("unreadable", new, message=f"{new.path}: cannot be read any more ({new.error})"))
        elif old is not None:
            events.append(_event("readable", new, message=f"{new.path}: readable again"))
    if new.status != OK:
        return events
    before = {f.key for f in old.findings} if old is not None else set()
    limit = SEVERITY_RANK[fail_on]
    for f in new.findings:
        if f.key not in before and SEVERITY_RANK.get(f.severity, 3) <= limit:
            events.append(
                _event("finding", new, code=f.key.code, severity=f.severity, line=f.key.line, message=f"{f.key.code}: {f.message}")
            )
    return events


def _event(kind: str, s: SessionState, **kw: Any) -> dict[str, Any]:
    return {"schema": WATCH_SCHEMA, "event": kind, "file": s.path, "format": s.format, "records": s.records, **kw}
