"""The next request of a runtime whose checkpoints replace the whole history (Codex, DESIGN §3).

Codex sends its base instructions, then the history: after a `compacted` record that is the
checkpoint's replacement history, in its own order (records kept raw interleaved with items only
the checkpoint holds: its summary, re-injected instructions), then every message written after
it. Before sending, Codex normalizes the history (codex-rs `context_manager` normalize): a call
with no output anywhere gets a synthetic "aborted" output right after it, and an output whose
call is not in the history is removed. One call or output per line, so pairing spans the whole
request, not one assistant message.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from inspector.formats.base import Runtime
from inspector.ledger.model import HistoryItem, Ledger, Record

if TYPE_CHECKING:
    from inspector.analysis.engine import CheckpointView, ContextItem, PathScan


def replacement_context(
    led: Ledger, path: list[int], views: list[CheckpointView], rt: Runtime, scan: PathScan | None = None,
    left_out: list[int] | None = None,
) -> list[ContextItem]:
    """`scan`: the path's `PathScan`, where the messages sent are read from (else the records);
    `left_out` gets the outputs the runtime removes for want of their call."""
    from inspector.analysis.engine import ContextItem

    records = led.records
    header_line = next((r.line for r in records if r.kind == "header"), None)
    entries = history_entries(led, path, views, scan)
    calls, answered = paired_ids(records, entries, rt)
    items: list[ContextItem] = []
    if led.instructions:
        items.append(ContextItem(0, "system", "message", None, None, header_line, False, led.instructions, note=led.instructions_note))
    elif led.instructions_note:  # (the runtime's own, which the file does not hold: added by it, no text here)
        items.append(ContextItem(0, "system", "message", None, None, header_line, True, "", note=led.instructions_note))
    items += request_items(records, entries, calls, answered, rt, left_out)
    hist = led.sent_history if not views else views[-1].checkpoint.replacement
    removed = {h.seq: h.removed_results for h in hist or () if h.removed_results and h.seq is not None}
    for i, it in enumerate(items):
        it.index = i
        if removed and it.seq in removed and it.kind == "message":
            it.removed_results = list(removed[it.seq])  # (sent less those results)
    return items


def history_entries(led: Ledger, path: list[int], views: list[CheckpointView], scan: PathScan | None = None) -> list[int | ContextItem]:
    """What the request holds after the instructions, before pairing: the latest checkpoint's
    replacement history (its kept records still visible, and its own items), then the messages
    on the path after it; with no checkpoint, the history the format gives (`Ledger.sent_history`)
    or the messages on the path; the records never sent left out (found by the path's `scan` when
    given: its messages and their codes, no record read)."""
    from inspector.analysis.engine import sent_messages_after

    records = led.records
    if not views:
        if led.sent_history is not None:
            return _entries(records, led.sent_history, None, None)
        return sent_messages(records, path) if scan is None else sent_messages_after(scan, path)  # type: ignore[return-value]
    last = views[-1]
    entries = _entries(records, last.checkpoint.replacement or [], last.seq, last.record.line)
    if last.checkpoint.replacement_holds_later:
        return entries  # (the records after it are in its history, where the runtime sends them)
    after = sent_messages(records, path[last.pos + 1 :]) if scan is None else sent_messages_after(scan, path, last.pos)
    return entries + after  # type: ignore[operator]


def _entries(records: list[Record], history: list[HistoryItem], seq: int | None, line: int | None) -> list[int | ContextItem]:
    """A history's items as request entries: a record kept raw (still visible, sent), else an item
    of its own (`seq`, `line`: the checkpoint's, whose summary it may be)."""
    from inspector.analysis.engine import ContextItem

    entries: list[int | ContextItem] = []
    for h in history:
        if h.seq is not None:
            if records[h.seq].runtime_visible:  # not rolled back since
                entries.append(h.seq)
            continue
        is_summary = h.kind == "summary"
        entries.append(
            ContextItem(
                0,
                h.role,
                "summary" if is_summary else "message",
                seq if is_summary else None,
                h.id,
                line,
                False,
                h.text,
                tool_call_ids=list(h.call_ids) if h.call_ids else [h.call_id] if h.role == "assistant" and h.call_id else [],
                tool_result_id=h.call_id if h.role == "tool" else None,
            )
        )
    return [e for e in entries if not isinstance(e, int) or not records[e].never_sent]


def sent_messages(records: list[Record], seqs: list[int]) -> list[int | ContextItem]:
    """The messages among `seqs` the runtime sends (in order)."""
    return [s for s in seqs if records[s].kind == "message" and not records[s].never_sent]


def paired_ids(records: list[Record], entries: list[int | ContextItem], rt: Runtime) -> tuple[set[str], set[str]]:
    """The call ids and the result ids the entries hold (pairing spans the whole request)."""
    calls: set[str] = set()
    answered: set[str] = set()
    many = rt.many_results_per_message
    add_calls, add_answer = calls.update, answered.add
    for e in entries:
        if type(e) is int:  # (a record: one per message of the request, read from the index)
            rec = records[e]
            ids = rec.call_ids
            if ids:
                add_calls(ids)
            if rec.role == "tool":
                rid = rec.result_id
                if rid is not None:
                    if many:
                        answered.update(result_ids(rec))
                    add_answer(rid)
            continue
        calls.update(e.tool_call_ids)  # type: ignore[union-attr]
        rid = e.tool_result_id  # type: ignore[union-attr]
        if rid is not None:
            answered.add(rid)
    return calls, answered


def result_ids(rec: Record) -> list[str]:
    """Every call a tool message answers: from its source's index where it kept them at load
    (`RecordSource.result_ids`, as the engine's pairing reads them), else from its message."""
    src = rec._source
    ids = src.result_ids(rec) if src is not None else None
    if ids is None:
        m = rec.message
        ids = m.tool_result_ids() if m is not None else []
    return ids


def result_id(rec: Record) -> str | None:
    """The call a record answers, when it is a tool output."""
    return rec.result_id if rec.role == "tool" else None


def request_items(
    records: list[Record], entries: list[int | ContextItem], calls: set[str], answered: set[str], rt: Runtime,
    left_out: list[int] | None = None,
) -> list[ContextItem]:
    """The items of `entries` as the runtime sends them, given every call and result id of the
    request: an output whose call is not in it removed (its record's seq to `left_out`), a call
    with no output anywhere followed by the runtime's synthetic one (indexes not set)."""
    from inspector.analysis.engine import ContextItem, flag_unanswered

    items: list[ContextItem] = []
    append, settled = items.append, answered.issuperset
    for e in entries:
        if type(e) is int:
            rec = records[e]
            role = rec.role
            if role == "tool":
                rid = rec.result_id
                if rid is None or rid not in calls:
                    if left_out is not None:
                        left_out.append(e)
                    continue  # Codex removes an output whose call is not in the history
                append(ContextItem(0, "tool", "message", e, rec.id, rec.line, False, "", tool_result_id=rid))
                continue
            if role == "assistant":
                ids = rec.call_ids
                item = ContextItem(0, "assistant", "message", e, rec.id, rec.line, False, "", tool_call_ids=list(ids))
                append(item)
                if ids and not settled(ids):  # (every call answered: one test in C, no list made)
                    flag_unanswered(items, item, item.tool_call_ids, answered, rt)
            elif role is not None:
                append(ContextItem(0, role, "message", e, rec.id, rec.line, False, ""))
            continue
        item = e
        if item.role == "tool" and (item.tool_result_id is None or item.tool_result_id not in calls):
            continue
        append(item)
        if item.tool_call_ids and not settled(item.tool_call_ids):
            flag_unanswered(items, item, item.tool_call_ids, answered, rt)
    return items
