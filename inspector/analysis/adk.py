"""Google ADK's next request and coverage (google-adk 2.13 `_get_contents`), for the engine.

ADK has no single boundary: every surviving compaction range (see formats/adk_compaction.py)
removes the raw events whose timestamps it spans, and its summary is sent at its end_timestamp,
as the agent's own (model-role) turn. Then, in ADK's order: a function call removed by a range is
re-injected before a surviving response to it; other agents' events reach the model as user-role
"For context" text; responses without a preceding call and calls without a response (except
long-running ones) are dropped.

Coverage: a message inside a surviving range is `summarized` when some surviving summary
represents it (its summarizer saw it, directly or through the seed it folded in), else a `hole`.
"""

from __future__ import annotations

from typing import Any

from inspector.analysis.engine import EXCLUDED, HOLE, LIVE, RETAINED, SUMMARIZED, CheckpointView, ContextItem
from inspector.analysis.intervals import Interval, merge
from inspector.formats import adk_compaction as rules
from inspector.ledger.model import Ledger, Record


def _ivs(seqs: set[int] | list[int]) -> list[Interval]:
    return merge([(s, s + 1) for s in seqs])


class AdkCheckpointView(CheckpointView):
    """A compaction whose removed set is a timestamp range, not a prefix of the path."""

    __slots__ = ("range_set", "surviving")

    def __init__(self, index: int, rec: Record, path: list[int], records: list[Record]) -> None:
        d: dict[str, Any] = (
            rec.checkpoint.details
            if rec.checkpoint is not None and isinstance(rec.checkpoint.details, dict)
            else {}
        )
        by_id = {r.id: r.seq for r in records if r.id is not None and r.kind != "checkpoint"}
        rng = {by_id[i] for i in d.get("range_event_ids", []) if i in by_id}
        msgs = {s for s in rng if records[s].kind == "message"}
        rep = {by_id[i] for i in d.get("represents_ids", []) if i in by_id}
        own = {by_id[i] for i in d.get("summarizer_input_ids", []) if i in by_id}
        cut = max(msgs) + 1 if msgs else 0
        keep = frozenset(s for s in path[:cut] if records[s].kind == "message" and s not in msgs)
        self.range_set = frozenset(msgs)
        self.surviving = bool(d.get("surviving"))
        empty = rec.checkpoint is None or not rec.checkpoint.summary.strip()
        super().__init__(
            index, rec, rec.seq, cut, keep, _ivs(rep), _ivs(own), None, None, False, empty, path, records
        )

    @property
    def removes(self) -> list[int]:
        return sorted(self.range_set)

    @property
    def retains(self) -> list[int]:
        recs = self._records
        return [s for s in self._path[: self.pos] if recs[s].kind == "message" and s not in self.range_set]

    def is_removed(self, i: int) -> bool:
        return self._path[i] in self.range_set


def views(led: Ledger, path: list[int]) -> list[CheckpointView]:
    recs = led.records
    out: list[CheckpointView] = []
    for s in path:
        r = recs[s]
        if r.kind == "checkpoint" and r.checkpoint is not None:
            d = r.checkpoint.details
            if (
                isinstance(d, dict)
                and d.get("start_timestamp") is not None
                and d.get("end_timestamp") is not None
            ):
                out.append(AdkCheckpointView(len(out) + 1, r, path, recs))
    return out


# ---------------------------------------------------------------------------------------- request


def _obj(rec: Record) -> dict[str, Any]:
    e = rec.extra or {}
    return e


def _author(rec: Record) -> str:
    return str(_obj(rec).get("author") or "")


def _long_running(rec: Record) -> set[str]:
    v = _obj(rec).get("long_running_tool_ids")
    return set(v) if isinstance(v, list) else set()


def _calls(rec: Record) -> list[str]:
    m = rec.message
    return [b.call_id for b in m.blocks if b.type == "tool_call" and b.call_id] if m is not None else []


def _responses(rec: Record) -> list[str]:
    m = rec.message
    return [b.call_id for b in m.blocks if b.type == "tool_result" and b.call_id] if m is not None else []


def _in_scope(rec: Record) -> bool:
    o = _obj(rec)
    # The agent is unscoped and on the root branch (what the session can tell): it sees unscoped
    # events of every branch (ADK's _is_event_belongs_to_branch with no invocation branch).
    return o.get("isolation_scope") is None


def next_request(led: Ledger, agent: str | None) -> tuple[list[ContextItem], set[int]]:
    """The contents ADK sends on `agent`'s next model call, and the seqs it re-injected."""
    recs = led.records
    filt = [
        r
        for r in recs
        if _in_scope(r)
        and (
            (r.kind == "message" and not r.never_sent)
            or (r.kind == "checkpoint" and r.checkpoint is not None)
        )
    ]
    evs = []
    for i, r in enumerate(filt):
        d = (
            r.checkpoint.details
            if r.checkpoint is not None and isinstance(r.checkpoint.details, dict)
            else {}
        )
        e = rules.Ev(i, i, r.id, float(r.timestamp or 0.0), _author(r), r.run_id, {})
        if r.kind == "checkpoint":
            e.start, e.end = d.get("start_timestamp"), d.get("end_timestamp")
            e.summary_content = r.checkpoint.summary if r.checkpoint is not None else None
        evs.append(e)
    alive = rules.surviving_ranges(evs)
    cover = rules.union([(e.start, e.end) for e in alive if e.start is not None and e.end is not None])
    items: list[tuple[float, int, Record, bool]] = []  # (ts, index, record, is_summary)
    for e in alive:
        assert e.end is not None
        items.append((e.end, e.index, filt[e.index], True))
    for i, r in enumerate(filt):
        if r.kind == "message" and not rules.in_ranges(float(r.timestamp or 0.0), cover):
            items.append((float(r.timestamp or 0.0), i, r, False))
    items.sort(key=lambda t: (t[0], t[1]))
    seq_list: list[tuple[Record, bool]] = [(r, summ) for _, _, r, summ in items]

    # _recover_compacted_function_calls: a surviving response whose call was compacted away gets
    # its call (and the call's other compacted responses) back, just before it.
    present = {r.seq for r, s in seq_list if not s}
    latest_call: dict[str, Record] = {}
    owner: dict[tuple[int, str], Record] = {}
    resp_by_call: dict[tuple[int, str], Record] = {}
    for r in filt:
        if r.kind != "message":
            continue
        for c in _calls(r):
            latest_call[c] = r
        for rid in _responses(r):
            call = latest_call.get(rid)
            if call is None:
                continue
            owner[(r.seq, rid)] = call
            key = (call.seq, rid)
            prev = resp_by_call.get(key)
            if prev is None or float(r.timestamp or 0) >= float(prev.timestamp or 0):
                resp_by_call[key] = r
    reinjected: set[int] = set()
    out: list[tuple[Record, bool]] = []
    for r, summ in seq_list:
        if not summ:
            for rid in _responses(r):
                call = owner.get((r.seq, rid))
                if call is None or call.seq in present or call.seq in reinjected:
                    continue
                out.append((call, False))
                reinjected.add(call.seq)
                for sib in _calls(call):
                    sr = resp_by_call.get((call.seq, sib))
                    if sr is not None and sr.seq not in present and sr.seq not in reinjected:
                        out.append((sr, False))
                        reinjected.add(sr.seq)
        out.append((r, summ))
    seq_list = out

    # Whose calls are these (other agents' responses are presented as context too).
    call_author: dict[str, str] = {}
    for r, summ in seq_list:
        if not summ:
            for c in _calls(r):
                call_author[c] = _author(r)

    def other(r: Record, summ: bool) -> bool:
        if summ or not agent:
            return False
        a = _author(r)
        if a not in (agent, "user"):
            return True
        return any(call_author.get(rid) not in (None, agent, "user") for rid in _responses(r))

    # (record, summary?, converted?, kept call ids, kept response ids)
    rows: list[tuple[Record, bool, bool, list[str], list[str]]] = []
    seen_calls: set[str] = set()
    for r, summ in seq_list:
        conv = other(r, summ)
        calls, resps = ([], []) if (summ or conv) else (_calls(r), _responses(r))
        if resps:
            kept = [x for x in resps if x in seen_calls]
            if not kept and r.message is not None and all(b.type == "tool_result" for b in r.message.blocks):
                continue  # _drop_orphaned_function_responses
            resps = kept
        seen_calls.update(calls)
        rows.append((r, summ, conv, calls, resps))
    all_resps = {x for _, _, _, _, rs in rows for x in rs}
    long_running: set[str] = set()
    for r, summ, _conv, _, _ in rows:
        if not summ:
            long_running |= _long_running(r)
    ctx: list[ContextItem] = []
    for r, summ, conv, calls, resps in rows:
        if summ:
            cp = r.checkpoint
            assert cp is not None
            ctx.append(ContextItem(0, "assistant", "summary", r.seq, r.id, r.line, False, cp.summary))
            continue
        if conv:
            ctx.append(ContextItem(0, "user", "message", r.seq, r.id, r.line, False, ""))
            continue
        kept_calls = [c for c in calls if c in all_resps or c in long_running]
        m = r.message
        if calls and not kept_calls and m is not None and all(b.type == "tool_call" for b in m.blocks):
            continue  # drop_orphaned_function_calls removed every part
        role = r.role or "user"
        it = ContextItem(0, role, "message", r.seq, r.id, r.line, False, "")
        if role == "assistant":
            it.tool_call_ids = kept_calls
        elif role == "tool":
            it.tool_result_id = resps[0] if resps else None
        ctx.append(it)
    for i, it in enumerate(ctx):
        it.index = i
    return ctx, reinjected


# ---------------------------------------------------------------------------------------- coverage


def coverage(
    led: Ledger, path: list[int], vs: list[CheckpointView], reinjected: set[int]
) -> tuple[list[str | None], list[int], bytearray]:
    recs = led.records
    n = len(recs)
    states: list[str | None] = [None] * n
    summarized_by = [0] * n
    on_path = bytearray(n)
    alive = [v for v in vs if isinstance(v, AdkCheckpointView) and v.surviving]
    cover = rules.union(
        [
            (v.checkpoint.details["start_timestamp"], v.checkpoint.details["end_timestamp"])
            for v in alive
            if isinstance(v.checkpoint.details, dict)
        ]
    )
    first_rep: dict[int, int] = {}
    for v in vs:
        for s in v.represents:
            first_rep.setdefault(s, v.index)
    represented: set[int] = set()
    for v in alive:
        represented |= v.represents
    last_pos = vs[-1].pos if vs else -1
    for i, s in enumerate(path):
        on_path[s] = 1
        r = recs[s]
        if r.kind != "message":
            continue
        if r.never_sent or not _in_scope(r):
            states[s] = EXCLUDED
        elif rules.in_ranges(float(r.timestamp or 0.0), cover):
            if s in reinjected:
                states[s] = RETAINED  # a compacted call ADK sends raw again next to its response
            elif s in represented:
                states[s] = SUMMARIZED
                summarized_by[s] = first_rep.get(s, 0)
            else:
                states[s] = HOLE
        else:
            states[s] = LIVE if i > last_pos else RETAINED
    return states, summarized_by, on_path
