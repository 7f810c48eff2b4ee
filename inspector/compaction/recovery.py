"""Deterministic recent-source recovery (ADR 0302): no model call, nothing invented.

The checkpoint is the carried summary (if any) + a recovery notice + the real recent window: the
newest contiguous messages of every role, bounded by the keep-recent target and by what the budget
leaves once the summary and the notice are paid for. It drops the assistant messages the runtime
drops anyway (error, aborted, deferred) and any tool result whose call is not in the window, keeps
the active task's user message ahead of the window, and records `retainedTailShape: recent_window`
with a `failureReason` from the closed vocabulary.

pi keeps the entries from `firstKeptEntryId` up to the compaction, so its window is contiguous:
the active request is kept by starting the window at it when that fits, and otherwise quoted
verbatim in the checkpoint's text (a native ledger lists it in `retains` instead). Messages pi drops
at send time stay inside a pi window and are dropped by pi.
"""

from __future__ import annotations

from dataclasses import dataclass

from inspector.compaction.cut import PathIndex, earliest_cut_within
from inspector.compaction.entries import CheckpointSpec
from inspector.compaction.prompts import quoted_request, recovery_notice

_REASON_WORDS = {
    "no_new_history": "there was no new history to summarize",
    "summary_budget": "the summary did not fit its budget",
    "summary_provider": "the summarizer did not return a usable summary",
    "checkpoint_oversized": "the summary was larger than the space the checkpoint may take",
}


@dataclass(slots=True)
class Recovery:
    spec: CheckpointSpec
    summary: str
    over_budget: bool  # even the smallest safe window is above what the budget leaves


def reason_words(reason: str) -> str:
    return _REASON_WORDS.get(reason, reason)


def plan_recovery(
    ix: PathIndex,
    *,
    reason: str,
    carried_text: str,
    carried_represents: list[tuple[int, int]],
    available: int,
    keep_recent: int,
    active: int | None,
    tokens_before: int,
    read_files: list[str],
    modified_files: list[str],
) -> Recovery | None:
    """The recovery checkpoint, or None when the path has no message a window could start at."""
    start = _window_floor(ix)
    if start is None:
        return None
    floor, smallest = start
    files = ix.report.runtime.file_lists(read_files, modified_files)
    budget_left = available - _fixed_cost(ix, reason, carried_text, files)
    cap = max(0, min(keep_recent, budget_left))
    c = earliest_cut_within(ix, cap, floor)
    over = c is None
    if c is None:
        c = smallest
    c, keep, quote = _place_active(ix, active, c, floor, budget_left)
    window, dropped = _window(ix, c)
    retains = [*keep, *window]
    summary = _recovery_text(ix, reason, carried_text, quote, window, files)
    spec = CheckpointSpec(
        kind="recovery",
        cut=c,
        keep=keep,
        retains=retains,
        represents=list(carried_represents),
        shape="recent_window",
        failure_reason=reason,
        tail_tokens=sum(ix.context_tokens(retains)),
        budget_tokens=cap,
        tokens_before=tokens_before,
        read_files=read_files,
        modified_files=modified_files,
        quote_active=quote,
        dropped=dropped,
    )
    return Recovery(spec, summary, over)


def _window_floor(ix: PathIndex) -> tuple[int, int] | None:
    """Where a window may start at the earliest (its floor) and the smallest safe window's start.

    pi's window is contiguous: it starts after any result whose call is never sent. A native
    window lists what it keeps, so it drops such a result instead (`_window`).
    """
    last = ix.last_message()
    if last is None:
        return None
    floor = ix.tail_floor if ix.report.runtime.contiguous_tail else 0
    smallest = ix.latest_safe_at_or_before(last, floor)
    if smallest is None:
        floor = 0
        smallest = ix.latest_safe_at_or_before(last)
    if smallest is None:
        return None
    return floor, smallest


def _fixed_cost(ix: PathIndex, reason: str, carried_text: str, files: str) -> int:
    """Tokens the checkpoint's text takes whatever the window: carried summary, notice, file lists."""
    tok = ix.tok
    # The notice names the window's lines; its size barely depends on them.
    notice_cost = tok.count(recovery_notice(reason_words(reason), 999_999, 999_999))
    return tok.count(carried_text) + notice_cost + tok.count(files) + 4


def _place_active(
    ix: PathIndex, active: int | None, c: int, floor: int, budget_left: int
) -> tuple[int, tuple[int, ...], int | None]:
    """Keep the active task's request ahead of a window that starts after it: (cut, keep, quote).

    A native window lists it in `keep`; pi's contiguous window starts at it when that fits and
    otherwise quotes it verbatim in the checkpoint's text.
    """
    if active is None or active >= c:
        return c, (), None
    if not ix.report.runtime.contiguous_tail:
        return c, (active,), None
    at = ix.latest_safe_at_or_before(active, floor)
    if at is not None and ix.tail_tokens(at) <= budget_left:
        return at, (), None
    return c, (), active


def _window(ix: PathIndex, c: int) -> tuple[list[int], list[int]]:
    """The messages from the cut on that the window keeps, and those a native window drops."""
    contiguous = ix.report.runtime.contiguous_tail
    window: list[int] = []
    dropped: list[int] = []
    in_window_calls: set[str] = set()
    for i in ix.messages_in(c, ix.end):
        r = ix.rec(i)
        if ix.excluded[i] and not contiguous:
            dropped.append(i)
            continue
        if r.role == "assistant" and not ix.excluded[i]:
            in_window_calls.update(r.call_ids)
        if r.role == "tool" and (r.result_id is None or r.result_id not in in_window_calls) and not contiguous:
            dropped.append(i)  # a provider rejects a result whose call is not in the request
            continue
        window.append(i)
    return window, dropped


def _recovery_text(
    ix: PathIndex, reason: str, carried_text: str, quote: int | None, window: list[int], files: str
) -> str:
    """The checkpoint's text: carried summary, the quoted request, the recovery notice, file lists."""
    parts: list[str] = []
    if carried_text:
        parts.append(carried_text)
    if quote is not None:
        m = ix.rec(quote).message
        parts.append(quoted_request(m.text() if m is not None else "", ix.rec(quote).line))
    first_line = ix.rec(window[0]).line if window else None
    last_line = ix.rec(window[-1]).line if window else None
    parts.append(recovery_notice(reason_words(reason), first_line, last_line))
    if files:
        parts.append(files)
    return "\n\n".join(parts)
