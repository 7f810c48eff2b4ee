"""The Report of a grown ledger from the Report before it grew (issue 17, point 1). Pure: no I/O.

`extend_report(old, ledger, added)` is what `analyze(ledger)` would return, computed from `old`
(the report of the ledger's first `added` records) where an append cannot change it:

- the active path gains the new records at its end (each one's parent is the previous leaf, or
  the format keeps no tree);
- the checkpoint views, the coverage of every earlier record and the findings of the history
  rules (`findings.find_history`) are the old ones: no checkpoint and no diagnostic came, and
  the new messages are live (after the latest checkpoint) or excluded by the runtime's rules;
- the next request keeps the old items before its latest user or assistant item (pairing has
  settled before it: `SentGrowth`) and is built again from there (`extend_sent`), with the
  token counts of the items it shares with the old one reused; the tail rules
  (`findings.find_tail`: live question, tool pairing, over budget) run again.

ADK (timestamp ranges, `extend_adk`): its request pairs calls and responses across the whole
history (re-injected calls, merged and rearranged responses, calls dropped for want of a response,
other agents' events turned into context). The report keeps a cut (`AdkGrowth`): the start of a
turn (a user's own message) after every compaction, before which no call, response or
long-running id reappears, where timestamps only grow and no range reaches. The request is the
old one's items from before the cut, then `analysis.adk.next_request` of the records after it
(the turn in progress) alone; the cut moves on to the latest such turn start as turns end.
An ADK append falls back to a full analysis when: there is no such cut; a new record is a
compaction, is not a message or meta event, comes with a diagnostic, has an earlier timestamp
than one before it or falls in a compaction range; it names an id used before the cut (a
response to an older call, a reused id); the next agent changes (other agents' events read
differently); the tail re-injects a call; or the settings change.

Everything else falls back to a full `analyze` of the grown ledger, because a rule then needs the
whole path: a new checkpoint (every view after it and the coverage of all it removes change), a
branch or a re-parented record (the path itself changes), a diagnostic (malformed-line findings,
lost records), records the runtime cannot see, a header, changed session settings (window,
reserve), or an answer the running pi forgot as an overflow (`engine.forgotten_overflows`). A format whose checkpoint replaces the history (Codex) extends like the others between
checkpoints. Its request pairs calls and outputs across all of it (`analysis.replacement`), so the
report keeps that pairing (`ReplacementGrowth`: every call and result id, the outputs removed for
want of a call, the calls still waiting) and `extend_replacement` adds the new entries' items to
the old ones; an earlier call the append answers loses its synthetic output. An earlier record
the append changed (Codex: the reply a `token_count` line gives its usage, a copy in the grown
ledger) is counted again, not given its old count. The request is rebuilt whole when the
instructions change or a new call is one whose output was removed before.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from itertools import accumulate, islice
from operator import gt

import msgspec

from inspector.analysis import replacement
from inspector.analysis.engine import (
    EXCLUDED,
    INACTIVE,
    LIVE,
    ContextItem,
    Report,
    analyze,
    append_resume_reply,
    context_total,
    effective_context,
    exclude,
    forgotten_overflows,
    sent_items,
    shaped,
)
from inspector.analysis.findings import TAIL_CODES, appended_order, find_tail, ordered
from inspector.analysis.tokens import Tokenizer
from inspector.formats import adk_compaction as rules
from inspector.formats.base import Runtime
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
    win = window if window is not None else led.settings.window
    res = reserve if reserve is not None else led.settings.reserve
    if (win, res) != (old.window, old.reserve):
        return analyze(led, window=window, reserve=reserve, tokenizer=tokenizer)
    if old.runtime.context_rule == "timestamp_ranges":
        return extend_adk(old, led, added) or analyze(led, window=window, reserve=reserve, tokenizer=tokenizer)
    grown = path_growth(old, led, added)
    if grown is None or forgotten_overflows(led, old.path + grown, old.runtime, win) or _sent_elsewhere(old, led, grown):
        return analyze(led, window=window, reserve=reserve, tokenizer=tokenizer)
    records = led.records
    rt = old.runtime
    tok = old._tokenizer
    path = old.path + grown
    # Messages off the path are inactive once more than one record is (engine.coverage): an
    # append that crosses that line changes an earlier record's state.
    inactive = len(path) < len(records) - 1
    if inactive and len(old.path) >= len(old.ledger.records) - 1 and len(old.path) < len(old.ledger.records):
        return analyze(led, window=window, reserve=reserve, tokenizer=tokenizer)
    states = list(old.states)
    summarized_by = list(old.summarized_by)
    on_path = bytearray(old.on_path)
    drop = rt.drop_stop_reasons
    on = set(grown)
    for r in records[added:]:
        states.append(None)
        summarized_by.append(0)
        on_path.append(r.seq in on)
        if r.kind != "message":
            continue
        if r.seq not in on:
            states[r.seq] = INACTIVE if inactive else None
        else:
            excluded = r.never_sent or (r.stop_reason in drop and r.role == "assistant")
            states[r.seq] = EXCLUDED if excluded else LIVE
    views = old.checkpoints
    left_out: list[int] = []
    ctx = extend_replacement(old, led, grown, left_out) if rt.replaces_history else extend_sent(old, led, path, left_out)
    dropped = {*old.dropped_results, *left_out}  # (an append removes no earlier line's result, nor sends one removed)
    if ctx is None:
        left_out.clear()
        ctx = effective_context(led, path, views, rt, tok, left_out=left_out)
        if not set(old.dropped_results).issubset(left_out):
            # An earlier result now sent (its call came after it): its state is no longer the
            # exclusion the old report gave it, which only the whole analysis words.
            return analyze(led, window=window, reserve=reserve, tokenizer=tokenizer)
        reuse_tokens(old.context, ctx, old.ledger.records, records)
        dropped = set(left_out)
    exclude(states, left_out)
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
        dropped_results=sorted(dropped),
        _growth=old._growth,
    )
    old._growth = None  # (handed on: it is changed in place)
    history = [f for f in old.findings if f.code not in TAIL_CODES]
    report.findings = ordered([*history, *find_tail(report)])
    return report


def _sent_elsewhere(old: Report, led: Ledger, grown: list[int]) -> bool:
    """The append sends the request to another model, which the runtime rewrites it for otherwise
    (`Runtime.sent_to`): the items kept from the old request were rewritten for the old one."""
    to = old.runtime.sent_to
    return to is not None and bool(grown) and to(old.ledger, old.path) != to(led, old.path + grown)


def path_growth(old: Report, led: Ledger, added: int) -> list[int] | None:
    """The seqs the append adds to the end of the active path, in order; None when the append
    does more than extend the path with messages and meta records (see the module's list)."""
    rt = old.runtime
    if rt.context_rule != "boundary":
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
    """A tree format: the new leaf's chain back to the old leaf (the end of the old path), all of
    it new records; the other new records are off the path (another branch, a sub-agent's lines)."""
    if not new:
        return None
    by_id = led.by_id()
    prev = old.path[-1] if old.path else None
    if prev is not None and old.ledger.leaf_seq != prev:
        return None
    n = len(old.ledger.records)
    out: list[int] = []
    cur = led.leaf_seq
    while cur is not None and cur != prev:
        r = led.records[cur]
        if cur < n or len(out) > len(new) or (r.id is not None and by_id.get(r.id) != cur):
            return None
        out.append(cur)
        pid = r.parent_id
        cur = by_id.get(pid) if pid is not None else None
        if pid is not None and cur is None:
            return None
    if cur != prev:
        return None
    out.reverse()
    return out


def _token_key(it: ContextItem) -> tuple[object, ...]:
    # What an item's count is a function of: its record (usage, or the text of its content), or
    # for a synthetic result the call it answers and its text (one of the runtime's constants:
    # Claude Code's changes once the conversation goes on past the call); an item no record holds
    # (a Codex checkpoint's own replacement items, the instructions) by its text.
    if it.seq is None and not it.synthetic:
        return (None, it.kind, it.role, it.text)
    if it.synthetic:
        return (it.seq, it.kind, True, it.tool_result_id, it.text)
    if it.joined or it.text:
        # (several records sent as one message, or a text of its own that can change with what
        # follows: OpenClaw's trailing user message moved into the prompt, `Runtime.sent_shape`)
        return (it.seq, it.kind, False, tuple(it.joined), it.text)
    return (it.seq, it.kind, False, None)


def reuse_tokens(
    old: list[ContextItem], new: list[ContextItem], old_records: list[Record] | None = None, records: list[Record] | None = None
) -> None:
    """Give the items of the new next request the counts their twins in the old one had (given
    both ledgers' records: only where the item's record is the same record in both)."""
    counted = {_token_key(it): (it.tokens, it.tokens_from) for it in old if it.tokens is not None}
    for it in new:
        seq = it.seq
        if records is not None and old_records is not None and seq is not None and _replaced(it, old_records, records):
            continue
        got = counted.get(_token_key(it))
        if got is not None:
            it.tokens, it.tokens_from = got


def _replaced(it: ContextItem, old_records: list[Record], records: list[Record]) -> bool:
    """Whether a record the item sends (its own, those it joins) is not the same record in both ledgers."""
    return any(s >= len(old_records) or old_records[s] is not records[s] for s in (it.seq, *it.joined) if s is not None)


# ------------------------------------------------------------------- the boundary rule (pi, CC)


@dataclass(slots=True)
class SentGrowth:
    """Where the next request of a boundary-rule report can be built on from (`extend_sent`): the
    latest user or assistant item, before which pairing has settled (each assistant's calls are
    paired with the results up to the next such message). The latest assistant item where the
    runtime joins consecutive user lines into one message (`Runtime.joins_user_lines`): a result
    after a user's line still answers the reply before it, and may be sent ahead of that line
    (`Runtime.results_first`), so the whole message is built again; and where it reshapes the
    messages it sends (`Runtime.sent_shape`: a trailing user message OpenClaw moves into the
    prompt is merged with the one before it once an answer follows)."""

    item: int  # its index in the request
    pos: int  # the position of its record on the path
    calls: set[str]  # the calls of the items before it


def sent_growth(rep: Report) -> SentGrowth | None:
    """The latest user or assistant item after the latest checkpoint of a report (None when there is none)."""
    ctx, path = rep.context, rep.path
    floor = rep.checkpoints[-1].pos if rep.checkpoints else -1
    roles = _growth_roles(rep.runtime)
    for it in reversed(ctx):
        if it.seq is None or it.synthetic or it.kind != "message" or it.role not in roles:
            continue
        pos = _path_pos(path, it.seq, floor)
        if pos is None:
            return None
        return SentGrowth(it.index, pos, {c for x in ctx[: it.index] if x.role == "assistant" for c in x.tool_call_ids})
    return None


def _growth_roles(rt: Runtime) -> tuple[str, ...]:
    """The roles of the items an extension may build on from (`SentGrowth`)."""
    return ("assistant",) if rt.joins_user_lines or rt.sent_shape is not None else ("user", "assistant")


def _path_pos(path: list[int], seq: int, floor: int) -> int | None:
    """The position of `seq` on the path after position `floor`, looked for from the end."""
    for i in range(len(path) - 1, floor, -1):
        if path[i] == seq:
            return i
    return None


def extend_sent(old: Report, led: Ledger, path: list[int], left_out: list[int] | None = None) -> list[ContextItem] | None:
    """The next request of `old` grown along `path` (the old path and what the append added), for
    the boundary rule: the old items before its latest user or assistant item are kept, the rest
    built again from there (`engine.sent_items`, the runtime's reply on resume after them). None
    when it needs building whole: no such item after the latest checkpoint, or a record before
    it was replaced by the append."""
    st = old._growth if isinstance(old._growth, SentGrowth) else sent_growth(old)
    old._growth = None
    if st is None:
        return None
    records, o_recs = led.records, old.ledger.records
    keep = old.context[: st.item]
    if any(it.seq is not None and _replaced(it, o_recs, records) for it in keep):
        return None
    sources = [s for s in path[st.pos :] if records[s].kind == "message"]
    rest = sent_items(records, sources, old.runtime, set(st.calls), left_out=left_out)
    # (what the runtime does to the messages it sends: the items from there on, the same as built whole
    # where its runs start at an assistant item, `_growth_roles`)
    rest = shaped(led, path, rest, old.runtime, not keep)
    if old.runtime.rewrites_sent is not None:
        old.runtime.rewrites_sent(led, path, rest)
    reuse_tokens(old.context[st.item :], rest, o_recs, records)
    ctx = keep + rest
    append_resume_reply(led, ctx, old.runtime)
    for i in range(st.item, len(ctx)):
        ctx[i].index = i
    _advance_sent(st, ctx, path, _growth_roles(old.runtime))
    old._growth = st  # (extend_report hands it on to the new report)
    return ctx


def _advance_sent(st: SentGrowth, ctx: list[ContextItem], path: list[int], roles: tuple[str, ...]) -> None:
    """Move the point the next extension builds from to the request's latest item of `roles`."""
    for it in reversed(ctx[st.item + 1 :]):
        if it.seq is None or it.synthetic or it.kind != "message" or it.role not in roles:
            continue
        pos = _path_pos(path, it.seq, st.pos)
        if pos is None:
            return
        st.calls.update(c for x in ctx[st.item : it.index] if x.role == "assistant" for c in x.tool_call_ids)
        st.item, st.pos = it.index, pos
        return


# --------------------------------------------------------------------- a history replaced (Codex)


@dataclass(slots=True)
class ReplacementGrowth:
    """What extending a request whose pairing spans all of it (`Runtime.replaces_history`,
    `analysis.replacement`) needs to know of it, kept up to date as it grows."""

    calls: set[str]  # the call ids of every entry
    answered: set[str]  # the result ids of every entry (its output kept or removed)
    removed: set[str]  # the result ids of outputs removed for want of their call
    waiting: dict[str, int]  # an unanswered call's id -> the index of the first item making it


def replacement_growth(rep: Report) -> ReplacementGrowth:
    """The pairing of a report's request from its entries (O(request), once per full analysis)."""
    led = rep.ledger
    records = led.records
    entries = replacement.history_entries(led, rep.path, rep.checkpoints)
    calls, answered = replacement.paired_ids(records, entries, rep.runtime)
    removed = {rid for e in entries if (rid := _entry_result(records, e)) is not None and rid not in calls}
    waiting: dict[str, int] = {}
    for it in rep.context:
        for c in it.unanswered:
            waiting.setdefault(c, it.index)
    return ReplacementGrowth(calls, answered, removed, waiting)


def _entry_result(records: list[Record], e: int | ContextItem) -> str | None:
    return replacement.result_id(records[e]) if isinstance(e, int) else e.tool_result_id if e.role == "tool" else None


def extend_replacement(old: Report, led: Ledger, grown: list[int], left_out: list[int] | None = None) -> list[ContextItem] | None:
    """The next request of `old` grown by the path's new seqs `grown`, for a runtime whose request
    pairs calls and outputs across all of it: the old items, then the new entries' items; an
    earlier call the append answers loses its synthetic output (the items after it renumbered);
    an earlier record the append replaced (Codex: the reply a `token_count` line gives its usage)
    is counted again. None when it needs the whole request rebuilt: the instructions changed, a
    replaced record pairs differently, a new call is one whose output was removed before, the
    latest checkpoint's history holds the records after it (NextClaw: a new one may go anywhere),
    or the format gives the history itself (`Ledger.sent_history`: adk-go)."""
    if old.checkpoints and old.checkpoints[-1].checkpoint.replacement_holds_later:
        return None
    if led.sent_history is not None or old.ledger.sent_history is not None:
        return None  # (the format's history: built whole)
    st = old._growth if isinstance(old._growth, ReplacementGrowth) else replacement_growth(old)
    old._growth = None
    o_led = old.ledger
    if (led.instructions, led.instructions_note) != (o_led.instructions, o_led.instructions_note):
        return None
    records, o_recs = led.records, o_led.records
    ctx = list(old.context)
    for i, it in enumerate(ctx):
        s = it.seq
        if s is None or records[s] is o_recs[s]:
            continue
        if it.kind != "message" or not _pairs_alike(o_recs[s], records[s]):
            return None
        ctx[i] = msgspec.structs.replace(it, tokens=None, tokens_from="tiktoken")
    rt = old.runtime
    new_entries = replacement.sent_messages(records, grown)
    new_calls, new_answered = replacement.paired_ids(records, new_entries, rt)
    if not new_calls.isdisjoint(st.removed):
        return None
    st.calls |= new_calls
    st.answered |= new_answered
    settled = {c for c in new_answered if c in st.waiting}
    if settled:
        _settle_calls(ctx, st, settled)
    for rid in (_entry_result(records, e) for e in new_entries):
        if rid is not None and rid not in st.calls:
            st.removed.add(rid)
    for it in replacement.request_items(records, new_entries, st.calls, st.answered, rt, left_out):
        it.index = len(ctx)
        ctx.append(it)
        for c in it.unanswered:
            st.waiting.setdefault(c, it.index)
    old._growth = st  # (extend_report hands it on to the new report)
    return ctx


def _pairs_alike(a: Record, b: Record) -> bool:
    """Two versions of a record that the request holds and pairs alike."""
    return (a.role, a.id, a.line, a.call_ids, a.result_id, a.never_sent, a.runtime_visible, a.kind) == (
        b.role,
        b.id,
        b.line,
        b.call_ids,
        b.result_id,
        b.never_sent,
        b.runtime_visible,
        b.kind,
    )


def _settle_calls(ctx: list[ContextItem], st: ReplacementGrowth, settled: set[str]) -> None:
    """Earlier calls the append answered: their synthetic outputs leave the request, their items
    no longer wait, and the items after the first of them are renumbered (copies: the old report
    keeps its own)."""
    start = min(st.waiting[c] for c in settled)
    st.waiting = {c: i for c, i in st.waiting.items() if i < start}
    rest: list[ContextItem] = []
    for it in ctx[start:]:
        if it.synthetic and it.tool_result_id in settled and it.seq is None:
            continue
        pos = start + len(rest)
        left = [c for c in it.unanswered if c not in settled]
        if pos != it.index or len(left) != len(it.unanswered):
            it = msgspec.structs.replace(it, index=pos, unanswered=left)
        for c in left:
            st.waiting.setdefault(c, pos)
        rest.append(it)
    ctx[start:] = rest


# ---------------------------------------------------------------------------------------- ADK


@dataclass(slots=True)
class AdkGrowth:
    """Where an ADK report's settled history ends (see the module's ADK paragraph)."""

    cut: int  # seq of the first record of the turn in progress
    prefix_items: int  # items of the next request that come from the records before `cut`
    prefix_ids: set[str]  # call, response and long-running ids of the records before `cut`
    latest_ts: float  # the greatest timestamp of any record (or range end) so far
    prefix_ts: float  # the greatest timestamp (or range end) before `cut`
    cover: list[tuple[float, float]]  # the surviving compaction ranges
    appended_order: list[int]  # the path in the order its records were appended (findings.appended_order)


def _ids(r: Record) -> list[str]:
    """The call, response and long-running ids a record names (what ADK pairs across history); a
    call or response without an id by its name, as ADK pairs those (a key only a made-up id could
    share: then the tail is read with the history, as for any id both name)."""
    m = r.message
    out = [b.call_id or f"\0name {b.name}" for b in m.blocks if b.type in ("tool_call", "tool_result")] if m else []
    lr = (r.extra or {}).get("long_running_tool_ids")
    if isinstance(lr, list):
        out += [x for x in lr if isinstance(x, str)]
    return out


def _ts(r: Record) -> float:
    return float(r.timestamp or 0.0)


def _turn_start(r: Record) -> bool:
    """A user's own message ADK sends: where a turn starts."""
    m = r.message
    return (
        r.kind == "message"
        and m is not None
        and not r.never_sent
        and r.role == "user"
        and (r.extra or {}).get("author") == "user"
        and (r.extra or {}).get("isolation_scope") is None
        and not any(b.type == "tool_result" for b in m.blocks)
    )


def _adk_cover(rep: Report) -> list[tuple[float, float]]:
    return rules.union(
        [
            (v.checkpoint.details["start_timestamp"], v.checkpoint.details["end_timestamp"])
            for v in rep.checkpoints
            if getattr(v, "surviving", False) and isinstance(v.checkpoint.details, dict)
        ]
    )


def _latest_cut(
    recs: list[Record], lo: int, prior: set[str], cover: list[tuple[float, float]], floor_ts: float
) -> int | None:
    """The latest turn start j >= lo such that no id of records[j:] is in `prior` or in
    records[lo:j], timestamps grow from j on and from `floor_ts` (the greatest before lo), and no
    compaction, covered record or transcription lies at or after j; None when there is none."""
    from inspector.analysis.adk import holds_transcription  # (deferred, as `extend_adk`'s)

    first: dict[str, int] = {}
    ts = [_ts(r) for r in recs[lo:]]
    before = list(accumulate(ts, max, initial=floor_ts))  # before[k]: greatest timestamp before lo+k
    for k, r in enumerate(recs[lo:]):
        for x in _ids(r):
            first.setdefault(x, k)
    best = None
    min_first = len(ts)
    growing = True
    for k in range(len(ts) - 1, -1, -1):
        r = recs[lo + k]
        if r.kind == "checkpoint" or not r.runtime_visible or rules.in_ranges(ts[k], cover):
            break  # (a rewound record: the turn in progress is cut after every rewind)
        if holds_transcription(r):
            break  # (what ADK sends of a transcription depends on its neighbours: cut after it)
        ids = _ids(r)
        if any(x in prior for x in ids):
            break
        for x in ids:
            min_first = min(min_first, first[x])
        if k + 1 < len(ts) and ts[k] > ts[k + 1]:
            growing = False
        if not growing:
            break
        if min_first >= k and _turn_start(r) and ts[k] >= before[k]:
            best = lo + k
            break
    return best


def _prefix_items(ctx: list[ContextItem], cut: int) -> int | None:
    """How many leading items come from records before `cut` (None when items of both interleave)."""
    n = 0
    while n < len(ctx) and ctx[n].seq is not None and ctx[n].seq < cut:  # type: ignore[operator]
        n += 1
    if any(it.seq is None or it.seq < cut for it in ctx[n:]):
        return None
    return n


def adk_growth(rep: Report) -> AdkGrowth | None:
    """The cut of a fully analysed ADK report (O(records), once per full analysis), or None. None
    too where an event was stored without a timestamp: ADK stamps it when it loads the session and
    sends it after every other, the new ones too (`analysis.adk.send_times`)."""
    # (deferred, as `analysis.adk` is: ADK's reader loads with it)
    from inspector.formats.adk import STAMPED_AT_LOAD

    recs = rep.ledger.records
    if (rep.ledger.header or {}).get(STAMPED_AT_LOAD):
        return None
    cover = _adk_cover(rep)
    ends = max((b for _, b in cover), default=float("-inf"))
    cut = _latest_cut(recs, 0, set(), cover, ends)
    if cut is None:
        return None
    n = _prefix_items(rep.context, cut)
    if n is None:
        return None
    ids = {x for r in recs[:cut] for x in _ids(r)}
    before = max((_ts(r) for r in recs[:cut]), default=ends)
    latest = max(ends, *(_ts(r) for r in recs))
    order = appended_order(rep)
    return AdkGrowth(cut, n, ids, latest, max(before, ends), cover, order)


def _appended_after(order: list[int], rep: Report, new: list[int]) -> list[int]:
    """The appended order of a path grown by `new`: the old order, then the new records by rank
    when they rank after every old one (as the rows a follow reads do); else sorted whole."""
    ranks = (rep.ledger.header or {}).get("append_ranks")
    if not isinstance(ranks, list) or len(ranks) != len(rep.ledger.records):
        return rep.path
    grown = sorted(new, key=ranks.__getitem__)
    if order and grown and ranks[grown[0]] <= ranks[order[-1]]:
        return sorted(sorted(rep.path), key=ranks.__getitem__)
    return order + grown


def prepare(rep: Report) -> None:
    """Build what the next extension of `rep` needs now (a follower's first read), where it needs any."""
    if rep._growth is not None:
        return
    if rep.runtime.context_rule == "timestamp_ranges":
        rep._growth = adk_growth(rep)
    elif rep.runtime.replaces_history:
        rep._growth = replacement_growth(rep)
    elif rep.runtime.context_rule == "boundary":
        rep._growth = sent_growth(rep)


def _appended_out_of_order(led: Ledger, cut: int) -> bool:
    """Whether events from `cut` on (the latest turn, which `extend_adk` analyses alone) were appended
    in another order than they are read, or before one read earlier (timestamps that tie, read in id
    order: DatabaseSessionService): ADK holds the running turn's events as appended
    (`adk._memory_order`), an order only the whole session's ranks give."""
    ranks = (led.header or {}).get("append_ranks")
    if not isinstance(ranks, list) or len(ranks) != len(led.records):
        return False  # (no ranks: read order is the order in memory)
    tail = ranks[cut:]
    if any(map(gt, tail, islice(tail, 1, None))):
        return True
    return bool(tail) and cut > 0 and tail[0] <= max(ranks[:cut])


def extend_adk(old: Report, led: Ledger, added: int) -> Report | None:
    """`extend_report` for ADK's timestamp-range rule; None when it needs a full analysis."""
    from inspector.analysis import adk

    st: AdkGrowth | None = old._growth if old._growth is not None else adk_growth(old)
    old._growth = None  # handed on to the new report (it is changed in place)
    o_led = old.ledger
    if st is None or old.lost_to_runtime or old.broken_tree or led.runtime_rejects_file:
        return None
    if len(led.diagnostics) != len(o_led.diagnostics):
        return None
    if (led.header or {}).get("next_agent") != (o_led.header or {}).get("next_agent"):
        return None
    if _appended_out_of_order(led, st.cut):
        return None
    new = led.records[added:]
    latest = st.latest_ts
    for r in new:
        if not r.runtime_visible or r.kind not in ("message", "meta") or adk.holds_transcription(r):
            return None
        t = _ts(r)
        if t < latest or rules.in_ranges(t, st.cover) or any(x in st.prefix_ids for x in _ids(r)):
            return None
        latest = t
    recs = led.records
    tail = dataclasses.replace(led, records=recs[st.cut :], diagnostics=[])
    agent = (led.header or {}).get("next_agent")
    tail_dropped: list[int] = []
    tail_ctx, reinjected = adk.next_request(tail, agent, dropped=tail_dropped)
    if reinjected:
        return None
    old_tail = old.context[st.prefix_items :]
    for i, it in enumerate(tail_ctx):
        it.index = st.prefix_items + i
    reuse_tokens(old_tail, tail_ctx)
    ctx = [*old.context[: st.prefix_items], *tail_ctx]
    states = list(old.states)
    for r in new:
        if r.kind == "message":
            out = r.never_sent or (r.extra or {}).get("isolation_scope") is not None
            states.append(EXCLUDED if out else LIVE)
        else:
            states.append(None)
    exclude(states, tail_dropped)  # (a response kept or dropped by the calls before it: none of the prefix's changes)
    tok = old._tokenizer
    total, source = context_total(led, ctx, old.checkpoints, tok)
    report = dataclasses.replace(
        old,
        ledger=led,
        path=old.path + [r.seq for r in new],
        on_path=old.on_path + bytearray(b"\x01" * len(new)),
        states=states,
        summarized_by=old.summarized_by + [0] * len(new),
        context=ctx,
        context_tokens=total,
        tokens_source=source,
        findings=[],
        dropped_results=[s for s in old.dropped_results if s < st.cut] + tail_dropped,
        _growth=None,
    )
    st.appended_order = _appended_after(st.appended_order, report, [r.seq for r in new])
    report._growth = st  # (the turn in progress goes by the appended order: find_tail reads it)
    history = [f for f in old.findings if f.code not in TAIL_CODES]
    report.findings = ordered([*history, *find_tail(report)])
    # Move the cut on to the latest turn start the tail settled.
    st.latest_ts = latest
    nxt = _latest_cut(recs, st.cut, st.prefix_ids, st.cover, st.prefix_ts)
    if nxt is not None and nxt > st.cut:
        n = _prefix_items(ctx, nxt)
        if n is not None:
            settled = recs[st.cut : nxt]
            st.prefix_ids.update(x for r in settled for x in _ids(r))
            st.prefix_ts = max(st.prefix_ts, *(_ts(r) for r in settled))
            st.cut, st.prefix_items = nxt, n
    report._growth = st
    return report
