"""The Report of a grown ledger from the Report before it grew (issue 17, point 1). Pure: no I/O.

`extend_report(old, ledger, added)` is what `analyze(ledger)` would return, computed from `old`
(the report of the ledger's first `added` records) where an append cannot change it:

- the active path gains the new records at its end (each one's parent is the previous leaf, or
  the format keeps no tree);
- the checkpoint views, the coverage of every earlier record and the findings of the history
  rules (`findings.find_history`) are the old ones: no checkpoint and no diagnostic came, and
  the new messages are live (after the latest checkpoint) or excluded by the runtime's rules;
- the next request is rebuilt from the latest checkpoint on (that is what it holds), with the
  token counts of the items it shares with the old one reused; the tail rules
  (`findings.find_tail`: live question, tool pairing, over budget) run again.

Everything else falls back to a full `analyze` of the grown ledger, because a rule then needs the
whole path: a new checkpoint (every view after it and the coverage of all it removes change), a
branch or a re-parented record (the path itself changes), a diagnostic (malformed-line findings,
lost records), records the runtime cannot see, a header, a format whose next request replaces its
history (Codex: the replacement pairs calls across the whole request) or follows timestamp ranges
(ADK), or changed session settings (window, reserve).
"""

from __future__ import annotations

import dataclasses

from inspector.analysis.engine import (
    EXCLUDED,
    LIVE,
    ContextItem,
    Report,
    analyze,
    context_total,
    effective_context,
)
from inspector.analysis.findings import TAIL_CODES, find_tail, ordered
from inspector.analysis.tokens import Tokenizer
from inspector.ledger.model import Ledger, Record


def extend_report(
    old: Report,
    led: Ledger,
    added: int,
    window: int | None = None,
    reserve: int | None = None,
    tokenizer: Tokenizer | None = None,
) -> Report:
    """The report of `led`, a ledger that grew from `old.ledger` (its first `added` records are
    the old ones, the rest were appended). Equal to `analyze(led, window, reserve)`."""
    grown = path_growth(old, led, added)
    win = window if window is not None else led.settings.window
    res = reserve if reserve is not None else led.settings.reserve
    if grown is None or (win, res) != (old.window, old.reserve):
        return analyze(led, window=window, reserve=reserve, tokenizer=tokenizer)
    records = led.records
    rt = old.runtime
    tok = old._tokenizer
    path = old.path + grown
    states = list(old.states)
    summarized_by = list(old.summarized_by)
    on_path = bytearray(old.on_path)
    drop = rt.drop_stop_reasons
    for r in records[added:]:
        states.append(None)
        summarized_by.append(0)
        on_path.append(1)
        if r.kind == "message":
            excluded = r.never_sent or (r.stop_reason in drop and r.role == "assistant")
            states[r.seq] = EXCLUDED if excluded else LIVE
    views = old.checkpoints
    ctx = effective_context(led, path, views, rt, tok)
    reuse_tokens(old.context, ctx, old.ledger.records, records)
    total, source = context_total(led, ctx, views, tok)
    report = dataclasses.replace(  # what the append cannot change is the old report's
        old,
        ledger=led,
        path=path,
        on_path=on_path,
        states=states,
        summarized_by=summarized_by,
        context=ctx,
        context_tokens=total,
        tokens_source=source,
        window=win,
        reserve=res,
        findings=[],
    )
    history = [f for f in old.findings if f.code not in TAIL_CODES]
    report.findings = ordered([*history, *find_tail(report)])
    return report


def path_growth(old: Report, led: Ledger, added: int) -> list[int] | None:
    """The seqs the append adds to the end of the active path, in order; None when the append
    does more than extend the path with messages and meta records (see the module's list)."""
    rt = old.runtime
    if rt.context_rule != "boundary" or rt.replaces_history:
        return None
    if led.runtime_rejects_file or led.resolved_path is not None or old.lost_to_runtime or old.broken_tree:
        return None
    if len(led.diagnostics) != len(old.ledger.diagnostics) or old.ledger.runtime_rejects_file:
        return None
    new = led.records[added:]
    if any(not r.runtime_visible or r.kind in ("checkpoint", "header") for r in new):
        return None
    if not rt.tree:
        return [r.seq for r in new]
    return _tree_growth(old, led, new)


def _tree_growth(old: Report, led: Ledger, new: list[Record]) -> list[int] | None:
    """A tree format: each new record hangs under the one before it, the first under the old leaf
    (the end of the old path), and the last is the new leaf."""
    if not new or led.leaf_seq != new[-1].seq:
        return None
    by_id = led.by_id()
    prev = old.path[-1] if old.path else None
    if prev is not None and old.ledger.leaf_seq != prev:
        return None
    for r in new:
        pid = r.parent_id
        parent = by_id.get(pid) if pid is not None else None
        if parent != prev:
            return None
        if r.id is not None and by_id.get(r.id) != r.seq:
            return None
        prev = r.seq
    return [r.seq for r in new]


def _token_key(it: ContextItem) -> tuple[object, ...]:
    # What an item's count is a function of: its record (usage, or the text of its content), or
    # for a synthetic result the call it answers (its text is the runtime's constant).
    return (it.seq, it.kind, it.synthetic, it.tool_result_id if it.synthetic else None)


def reuse_tokens(
    old: list[ContextItem], new: list[ContextItem], old_records: list[Record], records: list[Record]
) -> None:
    """Give the items of the new next request the counts their twins in the old one had, where
    their record is the same one (an append may give an earlier record a new one: Claude Code's
    reply that gains a block)."""
    counted = {_token_key(it): (it.tokens, it.tokens_from) for it in old if it.tokens is not None}
    for it in new:
        got = counted.get(_token_key(it))
        if got is not None and (it.seq is None or old_records[it.seq] is records[it.seq]):
            it.tokens, it.tokens_from = got
