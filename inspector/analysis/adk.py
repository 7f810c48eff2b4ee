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

import math
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Sequence
from itertools import accumulate, compress, islice, pairwise, repeat
from operator import is_, lt, mul, not_
from typing import Any

from inspector.analysis.engine import (
    EXCLUDED,
    HOLE,
    INACTIVE,
    LIVE,
    RETAINED,
    SUMMARIZED,
    CheckpointView,
    ContextItem,
)
from inspector.analysis.intervals import Interval, contains, merge, subtract
from inspector.formats import adk_compaction as rules
from inspector.formats.adk import (
    STAMPED_AT_LOAD,
    event_head,
    event_heads,
    idless_parts,
    message_response_ids_by_seq,
    unsent_or_scoped,
)
from inspector.formats.adk_heads import AUTH_CALL, DATA_PARTS, TRANSCRIPTIONS, transcription_text
from inspector.ledger.model import Block, Ledger, Record
from inspector.ledger.order import non_decreasing


class AdkCheckpointView(CheckpointView):
    """The next request's state right after one ADK compaction (what a pi checkpoint's sets say for
    pi): `removes` = every message inside the ranges that survive by then, whatever its position
    (not a prefix of the path); `represents` = what the summaries sent then stand for (their inputs,
    through seeds too); `own_range` = what this compaction's summarizer was handed (inferred)."""

    __slots__ = ("removed", "summary_rep", "surviving")

    def __init__(
        self,
        index: int,
        rec: Record,
        pos: int,
        path: list[int],
        records: list[Record],
        removed: list[Interval],
        rep: list[Interval],
        own: list[Interval],
        surviving: bool,
        summary_rep: list[Interval],
    ) -> None:
        self.removed = removed
        self.surviving = surviving
        self.summary_rep = summary_rep  # what this summary alone stands for
        cut = removed[-1][1] if removed else 0
        gaps = subtract((0, cut), removed)
        keep = frozenset(
            path[i] for lo, hi in gaps for i in range(lo, hi) if records[path[i]].kind == "message"
        )
        empty = rec.checkpoint is None or not rec.checkpoint.summary.strip()
        super().__init__(index, rec, pos, cut, keep, rep, own, None, None, False, empty, path, records)

    @property
    def removes(self) -> list[int]:
        out: list[int] = []
        for lo, hi in self.removed:
            out.extend(self._msgs(lo, hi))
        return out

    @property
    def retains(self) -> list[int]:
        out: list[int] = []
        for lo, hi in subtract((0, self.pos), self.removed):
            out.extend(self._msgs(lo, hi))
        return out

    def is_removed(self, i: int) -> bool:
        return contains(self.removed, i)

    def split_unrepresented(self, positions: list[int]) -> tuple[list[int], list[int]]:
        """`is_removed and not is_represented` of each sorted position, by intervals (the removed
        ranges less the represented runs) rather than two bisections per position."""
        gone: list[int] = []
        rest: list[int] = []
        j = 0
        for lo, hi in (iv for r in self.removed for iv in subtract(r, self.rep)):
            a = bisect_left(positions, lo, j)
            b = bisect_left(positions, hi, a)
            rest += positions[j:a]
            gone += positions[a:b]
            j = b
        rest += positions[j:]
        return gone, rest


def path_times(led: Ledger, path: list[int]) -> tuple[list[Record], list[float]]:
    """The records on `path` and their send times (`send_times`), which `views` and `coverage` both read."""
    on_path = [led.records[s] for s in path]
    return on_path, send_times(on_path, led)


def views(led: Ledger, path: list[int], at: tuple[list[Record], list[float]] | None = None) -> list[CheckpointView]:
    """`at`: `path_times(led, path)`, where the caller has it."""
    recs = led.records
    # (comprehensions: a Record's attribute read by specialized bytecode costs less than attrgetter's)
    on_path, ts = at if at is not None else path_times(led, path)
    kinds = [r.kind for r in on_path]
    checkpoints = [i for i, k in enumerate(kinds) if k == "checkpoint"]  # (their path positions)
    by_id = _positions_by_id(recs, path, on_path, [recs[path[i]] for i in checkpoints])
    monotone = non_decreasing(ts)  # (each pair `a <= b`, in C)

    def positions(cover: list[tuple[float, float]]) -> list[Interval]:
        if monotone:  # the service returns events by timestamp: a range is a run of positions
            return merge([(bisect_left(ts, a), bisect_right(ts, b)) for a, b in cover])
        return merge([(i, i + 1) for i, t in enumerate(ts) if rules.in_ranges(t, cover)])

    # Messages before each position: intervals split only by non-messages (compaction events)
    # are joined, so a rolling history stays one interval.
    before = list(accumulate(map(_MESSAGE.__eq__, kinds), initial=0))

    def bridged(ivs: list[Interval]) -> list[Interval]:
        out: list[Interval] = []
        for lo, hi in merge(ivs):
            if out and before[lo] == before[out[-1][1]]:
                out[-1] = (out[-1][0], hi)
            else:
                out.append((lo, hi))
        return out

    out: list[CheckpointView] = []
    ranges: list[tuple[float, float]] = []
    rep: list[Interval] = []
    alive = _surviving(recs, path, checkpoints)
    for pos, s in [(i, path[i]) for i in checkpoints]:
        r = recs[s]
        d = r.checkpoint.details if r.checkpoint is not None else None
        if not isinstance(d, dict) or d.get("start_timestamp") is None or d.get("end_timestamp") is None:
            continue
        # A range ADK drops lies inside one it keeps: the union of all is the union of survivors.
        ranges = rules.union([*ranges, (d["start_timestamp"], d["end_timestamp"])])
        mine = [
            (by_id[a], by_id[b] + 1)
            for a, b in d.get("represents") or []
            if a in by_id and b in by_id and by_id[a] <= by_id[b]
        ]
        rep = bridged([*rep, *mine])
        # (each input's position, in C; their runs found on a bytemap: an input list names most events)
        own = bridged(_runs(map(by_id.__getitem__, filter(by_id.__contains__, d.get("summarizer_input_ids") or [])), len(path)))
        view = AdkCheckpointView(
            len(out) + 1,
            r,
            pos,
            path,
            recs,
            positions(ranges),
            rep,
            own,
            s in alive,
            bridged(mine),
        )
        out.append(view)
    return out


_MESSAGE = "message"


def _runs(positions: Iterable[int], n: int) -> list[Interval]:
    """`merge([(p, p + 1) for p in positions])` of positions in [0, n): marked on a bytemap, whose
    runs are found by `find` (an input list is a few runs of many positions)."""
    mark = bytearray(n + 1)  # (a 0 past the end closes the last run)
    for p in positions:
        mark[p] = 1
    out: list[Interval] = []
    lo = mark.find(1)
    while lo >= 0:
        hi = mark.find(0, lo)
        out.append((lo, hi))
        lo = mark.find(1, hi)
    return out


def _positions_by_id(recs: list[Record], path: list[int], on_path: list[Record], checkpoints: list[Record]) -> dict[Any, int]:
    """Path position by event id (the last record of an id on the path, in seq order), of the ids
    these checkpoints' details name (their ranges' ends and their summarizers' inputs): only those,
    but of every id where they are most of a path in seq order (the views read no other; the same
    views, tests/test_adk_compaction_rules.py). (`on_path`: the records of `path`, in its order.)"""
    named: set[Any] = set()
    for r in checkpoints:
        d = r.checkpoint.details if r.checkpoint is not None else None
        if isinstance(d, dict):
            for pair in d.get("represents") or []:
                named.update(pair)
            named.update(d.get("summarizer_input_ids") or [])
    named.discard(None)
    if not named:
        return {}
    if all(map(lt, path, islice(path, 1, None))):  # the path in seq order (a linear session's): in C
        ids = [r.id for r in on_path]
        if len(named) * 2 < len(ids):
            return dict(compress(zip(ids, range(len(ids)), strict=True), map(named.__contains__, ids)))
        # (most ids named, as a compaction's inputs name most events: every id's position, no test
        # per id; only named ids are looked up, and None, which no detail names, left out)
        by_id = dict(zip(ids, range(len(ids)), strict=True))
        by_id.pop(None, None)
        return by_id
    pos_of = dict(zip(path, range(len(path)), strict=True))
    return {r.id: pos_of[r.seq] for r in recs if r.id in named and r.seq in pos_of}


def _surviving(recs: list[Record], path: list[int], checkpoints: list[int]) -> set[int]:
    """The seqs of the compactions ADK keeps, decided over the records as they are now (a
    compaction appended later, such as a repair's, can subsume one the loader saw surviving).
    (`checkpoints`: their positions on `path`.)"""
    evs: list[rules.Ev] = []
    for i, s in [(i, path[i]) for i in checkpoints]:
        r = recs[s]
        d = r.checkpoint.details if r.checkpoint is not None else None
        # Usable at load: it survived or was subsumed (an unusable one is neither).
        if not isinstance(d, dict) or not (d.get("surviving") or d.get("subsumed_by") is not None):
            continue
        e = rules.Ev(i, i, r.id, float(r.timestamp or 0.0), "", r.run_id, {})
        e.start, e.end, e.summary_content = d.get("start_timestamp"), d.get("end_timestamp"), r.checkpoint.summary
        if e.start is not None and e.end is not None:
            evs.append(e)
    return {path[e.index] for e in rules.surviving_ranges(evs)}


# ---------------------------------------------------------------------------------------- request


_obj = event_head  # the event's fields the analysis reads (its content's sizes left uncounted, its content unread)


def _author(rec: Record) -> str:
    return str(_obj(rec).get("author") or "")


def _ids_in(v: Any) -> set[str]:
    """An event's long-running call ids: its list's strings (an id is a string; another member,
    a list say, names no call, as `simulate` and `incremental` read it)."""
    return {x for x in v if isinstance(x, str)} if isinstance(v, list) else set()


def _calls(rec: Record) -> list[str]:
    return list(rec.call_ids)  # (the message's tool-call ids, kept in the record's index)


def _in_scope(rec: Record) -> bool:
    o = _obj(rec)
    # The agent is unscoped (what the session can tell): it sees unscoped events only.
    return o.get("isolation_scope") is None


def _on_branch(rec: Record, branch: str | None) -> bool:
    """ADK's `_is_event_belongs_to_branch` (flows/llm_flows/context/_contents.py:768-781): an agent
    on `branch` sees events of no branch, of its own, and of the branches it descends from (a
    parallel agent's sub-agent does not see its siblings')."""
    return _on_branch_of(_obj(rec).get("branch"), branch)


def _on_branch_of(b: object, branch: str | None) -> bool:
    """`_on_branch` of an event whose `branch` field is `b`."""
    if not branch or not isinstance(b, str) or not b:
        return True
    mine, theirs = branch.split("."), b.split(".")
    return mine[: len(theirs)] == theirs


def next_request(
    led: Ledger, agent: str | None, branch: str | None = None, dropped: list[int] | None = None
) -> tuple[list[ContextItem], set[int]]:
    """The contents ADK sends on the next model call of `agent` running on `branch`, and the seqs
    it re-injected; `dropped` gets the events ADK drops for responses to no call before them (an
    item sent without some of its responses names them, `ContextItem.removed_results`). (Each
    event's fields read once, `heads`, by seq: every pass reads them.)"""
    heads = event_heads(led.records)
    filt = _memory_order(led, heads)
    if branch:
        filt = [r for r in filt if _on_branch_of(heads[r.seq].get("branch"), branch)]
    seq_list = _compacted_timeline(filt, send_times(filt, led))
    # (each sent message's response ids, read once for every pass; every message's where a
    # compacted call can come back)
    resp = message_response_ids_by_seq([r for r, summ in seq_list if not summ])
    seq_list, reinjected, resp = _recover_compacted_function_calls(filt, seq_list, resp)
    seq_list, joined = joined_transcriptions(seq_list, heads)
    removed: dict[int, list[str]] = {}
    rows = _rows_for_agent(seq_list, agent, heads, resp, dropped, removed)
    rows = _rearrange_for_async_responses(_rearrange_for_latest_response(rows))
    ctx = _context_items(rows, heads)
    for i, it in enumerate(ctx):
        it.index = i
        if removed and it.seq in removed and it.kind == "message":
            it.removed_results = removed[it.seq]
        if joined and it.seq in joined and it.kind == "message":
            # (another agent's speech is joined first, then presented as user-role context)
            it.text, folded, _ = joined[it.seq]
            it.note = f"ADK sends the transcriptions of {len(folded) + 1} events as this one message"
    return ctx, reinjected


def joined_transcriptions(
    seq_list: list[tuple[Record, bool]], heads: dict[int, dict[str, Any]]
) -> tuple[list[tuple[Record, bool]], dict[int, tuple[str, list[int], str | None]]]:
    """ADK's transcription aggregation (flows/llm_flows/context/_contents.py:569-605): an event
    without content whose input (else output) transcription has a text is sent as a user (model)
    turn of that text, unless the next event's transcription of that kind has a text too (whether
    or not that event has content): its text then waits, and goes at the front of the next such
    turn sent (none: never sent). An event holding a transcription of no text ends such a run and
    is sent as nothing. Returns the list without the events whose text waited and those, and for
    each turn sent with more than its own text, that text, the seqs of the events it joins and its
    role."""
    if not any(r.source_role in _TRANSCRIBED or r.kind == "meta" for r, summ in seq_list if not summ):
        return seq_list, {}
    waiting: dict[str, tuple[str, list[int]]] = {}
    out: list[tuple[Record, bool]] = []
    joined: dict[int, tuple[str, list[int], str | None]] = {}
    for k, (r, summ) in enumerate(seq_list):
        if not summ and r.kind == "meta":
            continue  # (a transcription of no text: `_holds_transcription`)
        key = None if summ else r.source_role
        if key not in _TRANSCRIBED:
            out.append((r, summ))
            continue
        text, seqs = waiting.pop(key, ("", []))
        text += transcription_text(heads[r.seq], key)
        nxt = seq_list[k + 1] if k + 1 < len(seq_list) else None
        if nxt is not None and not nxt[1] and transcription_text(heads[nxt[0].seq], key):
            waiting[key] = (text, [*seqs, r.seq])
            continue
        if seqs:
            joined[r.seq] = (text, seqs, r.role)
        out.append((r, summ))
    return out, joined


_TRANSCRIBED = frozenset(key for key, _ in TRANSCRIPTIONS)


def _memory_order(led: Ledger, heads: dict[int, dict[str, Any]]) -> list[Record]:
    """The sendable events in the order ADK holds them at the next model call: `Runner.run_async`
    reloads the session when a run starts (runners.py:992, `get_session`: by timestamp, ties by
    rowid or, DatabaseSessionService, by event id, sessions/database_session_service.py:776) and
    appends the run's events to that list as they come (the run starts with the user's input), so
    the run's own events follow in append order. Once the run has ended (its last event is a
    final reply), the next call belongs to a new run, which reloads everything."""
    recs = _sendable_events(led, heads)
    hdr = led.header or {}
    ranks = hdr.get("append_ranks")
    if not isinstance(ranks, list) or len(ranks) != len(led.records):
        return recs
    held = [ranks[r.seq] for r in recs]
    if non_decreasing(held):
        return recs  # appended in the order they are read: the reordering below keeps that order
    # (`_author(r) == "user"`: an author's str() is "user" only when it is that string)
    inputs = [ranks[r.seq] for r in recs if r.kind == "message" and heads[r.seq].get("author") == "user"]
    if not inputs:
        return recs
    msgs = [r for r in recs if r.kind == "message"]
    # (the first message of the highest rank, as `max` by rank picks it, without a call per message)
    msg_ranks = [ranks[r.seq] for r in msgs]
    if _final_reply(msgs[msg_ranks.index(max(msg_ranks))]) and hdr.get("next_call_in_run") is not True:
        return recs
    start = max(inputs)
    before = [r for r in recs if ranks[r.seq] < start]
    return before + sorted((r for r in recs if ranks[r.seq] >= start), key=lambda r: ranks[r.seq])


def _final_reply(rec: Record) -> bool:
    """An agent's reply that ends its run: model text without a function call."""
    m = rec.message
    return _author(rec) != "user" and rec.role == "assistant" and m is not None and not _calls(rec)


def _sendable_events(led: Ledger, heads: dict[int, dict[str, Any]]) -> list[Record]:
    """The in-scope events ADK reads: messages that were sent, and checkpoints (`_in_scope` of
    each from `heads`), but those a rewind dropped (off the path: `formats/adk._rewound`; ADK
    drops them first, flows/llm_flows/context/_contents.py:509-516, so a compaction among them
    applies no range either)."""
    return [
        r
        for r in led.records
        if r.runtime_visible
        and heads[r.seq].get("isolation_scope") is None
        and (
            (r.kind == "message" and not r.never_sent)
            or (r.kind == "checkpoint" and r.checkpoint is not None)
            or (r.kind == "meta" and _holds_transcription(heads[r.seq]))
        )
    ]


def holds_transcription(rec: Record) -> bool:
    """Whether an event is a live session's speech or holds a transcription beside its content:
    what ADK sends of it can depend on the events next to it (`joined_transcriptions`)."""
    return rec.source_role in _TRANSCRIBED or _holds_transcription(event_head(rec))


def _holds_transcription(fields: dict[str, Any]) -> bool:
    """An event of no message holding a transcription (of no text): ADK keeps it among the events
    it builds the request from (`_contains_empty_content`, flows/llm_flows/context/_contents.py:
    256-285), where it ends a run of transcriptions (`joined_transcriptions`), and sends nothing of it."""
    return any(isinstance(fields.get(key), dict) for key in _TRANSCRIBED)


def send_times(recs: list[Record], led: Ledger) -> list[float]:
    """Each record's timestamp as ADK holds it when it builds the next request: the stored one,
    but for an event stored without one (`formats/adk.STAMPED_AT_LOAD`), which ADK stamps with
    the time it loads the session (events/event.py:153): after every stored time (infinity: no
    compaction range reaches it, and it sorts after every other event, flows/llm_flows/context/
    _compaction.py:138-144; those stamped alike keep their order, as ADK's load stamps them)."""
    ts = [float(r.timestamp or 0.0) for r in recs]
    late = (led.header or {}).get(STAMPED_AT_LOAD)
    if late:
        late = set(late)
        ts = [math.inf if r.seq in late else t for r, t in zip(recs, ts, strict=True)]
    return ts


def _compacted_timeline(filt: list[Record], ts: list[float]) -> list[tuple[Record, bool]]:
    """(record, is_summary) in send order: each surviving summary at its range's end, and every
    message no surviving range covers, by timestamp (`ts`, each record's: `send_times`)."""
    alive, cover = _surviving_summaries(filt)
    if non_decreasing(ts) and all(e.end == e.end for e in alive):  # (in C; no NaN end)
        return _timeline_in_order(filt, ts, alive, cover)
    return _timeline_sorted(filt, ts, alive, cover)


def _surviving_summaries(filt: list[Record]) -> tuple[list[rules.Ev], list[tuple[float, float]]]:
    """The compactions among `filt` that survive (each at its index in `filt`), and the union of
    their ranges."""
    evs = []  # the compactions (only they can survive), each at its index in `filt`
    for i, r in [(i, r) for i, r in enumerate(filt) if r.kind == "checkpoint"]:
        d = (
            r.checkpoint.details
            if r.checkpoint is not None and isinstance(r.checkpoint.details, dict)
            else {}
        )
        e = rules.Ev(i, i, r.id, float(r.timestamp or 0.0), _author(r), r.run_id, {})
        e.start, e.end = d.get("start_timestamp"), d.get("end_timestamp")
        e.summary_content = r.checkpoint.summary if r.checkpoint is not None else None
        evs.append(e)
    alive = rules.surviving_ranges(evs)
    return alive, rules.union([(e.start, e.end) for e in alive if e.start is not None and e.end is not None])


def _timeline_sorted(
    filt: list[Record], ts: list[float], alive: list[rules.Ev], cover: list[tuple[float, float]]
) -> list[tuple[Record, bool]]:
    """`_compacted_timeline`'s list from the surviving compactions `alive` (their indexes in
    `filt`) and the union of their ranges `cover`."""
    items: list[tuple[float, int, Record, bool]] = []  # (ts, index, record, is_summary)
    for e in alive:
        assert e.end is not None
        items.append((e.end, e.index, filt[e.index], True))
    # (`rules.in_ranges` inline: one bisection of the few covered ranges' starts per message)
    starts = [a for a, _ in cover]
    items += [
        (t, i, r, False)
        for i, r in enumerate(filt)
        if r.kind != "checkpoint"
        and not ((k := bisect_right(starts, (t := ts[i])) - 1) >= 0 and t <= cover[k][1])
    ]
    # `_process_compaction_events` sorts by (timestamp, position), when any compaction event is
    # there (flows/llm_flows/context/_contents.py:541-556); else the list's own order. (Sorted
    # as tuples: the positions differ, so no record or flag is ever compared.)
    if any(r.kind == "checkpoint" for r in filt):
        items.sort()
    return [(r, summ) for _, _, r, summ in items]


def _timeline_in_order(
    filt: list[Record], ts: list[float], alive: list[rules.Ev], cover: list[tuple[float, float]]
) -> list[tuple[Record, bool]]:
    """`_compacted_timeline` of events whose timestamps `ts` are in order (as the session service
    returns them): each covered range is a run of positions, the messages outside every run keep
    their order, and each surviving summary goes where its (end, position) sorts among them (a
    message's key is its (timestamp, position)): no key built or sorted per message."""
    keep = bytearray([r.kind != "checkpoint" for r in filt])  # (messages; events of a transcription)
    for a, b in cover:
        lo, hi = bisect_left(ts, a), bisect_right(ts, b)
        keep[lo:hi] = bytes(hi - lo)
    pos = list(compress(range(len(filt)), keep))
    out: list[tuple[Record, bool]] = [(filt[i], False) for i in pos]
    # Inserted from the last: an insertion moves only what follows it.
    for e in sorted(alive, key=lambda e: (e.end, e.index), reverse=True):
        # The messages before the summary: those stamped before its end, and those stamped at it
        # from an earlier position.
        at = min(max(e.index, bisect_left(ts, e.end)), bisect_right(ts, e.end))
        out.insert(bisect_left(pos, at), (filt[e.index], True))
    return out


def _recover_compacted_function_calls(
    filt: list[Record], seq_list: list[tuple[Record, bool]], resp: dict[int, Sequence[str]]
) -> tuple[list[tuple[Record, bool]], set[int], dict[int, Sequence[str]]]:
    """`_recover_compacted_function_calls`: a surviving response whose call was compacted away gets
    its call (and the call's other compacted responses) back, just before it. Also the seqs
    re-injected, and the response ids of the messages it holds. (`resp`:
    `message_response_ids_by_seq` of the messages `seq_list` holds.)"""
    present = {r.seq for r, s in seq_list if not s}
    if not _answers_compacted_call(filt, present, resp):
        return list(seq_list), set(), resp  # (what the loop below makes of it: nothing to re-inject)
    resp = message_response_ids_by_seq(filt)  # (a call compacted away, and its responses, may come back)
    owner, resp_by_call = _call_owners(filt, resp)
    reinjected: set[int] = set()
    out: list[tuple[Record, bool]] = []
    for r, summ in seq_list:
        if not summ:
            for rid in resp.get(r.seq, ()):
                call = owner.get((r.seq, rid))
                if call is None or call.seq in present or call.seq in reinjected:
                    continue
                out.append((call, False))
                reinjected.add(call.seq)
                for sib in call.call_ids:
                    sr = resp_by_call.get((call.seq, sib))
                    if sr is not None and sr.seq not in present and sr.seq not in reinjected:
                        out.append((sr, False))
                        reinjected.add(sr.seq)
        out.append((r, summ))
    return out, reinjected, resp


def _answers_compacted_call(filt: list[Record], present: set[int], resp: dict[int, Sequence[str]]) -> bool:
    """Does a message sent answer a call id some message compacted away makes? Only then can a
    call be re-injected: the latest call a response answers is either sent or compacted away.
    (`resp`: the response ids of the sent messages, at least.)"""
    gone = {c for r in filt if r.call_ids and r.seq not in present and r.kind == "message" for c in r.call_ids}
    return bool(gone) and any(not gone.isdisjoint(ids) for seq, ids in resp.items() if seq in present)


def _call_owners(
    filt: list[Record], resp: dict[int, Sequence[str]]
) -> tuple[dict[tuple[int, str], Record], dict[tuple[int, str], Record]]:
    """Over every message: (response seq, call id) -> the latest earlier event making that call,
    and (call seq, call id) -> the latest response to it. (Only the messages making a call or
    answering one are looked at.)"""
    latest_call: dict[str, Record] = {}
    owner: dict[tuple[int, str], Record] = {}
    resp_by_call: dict[tuple[int, str], Record] = {}
    for r in [r for r in filt if r.kind == "message" and (r.call_ids or r.seq in resp)]:
        for c in r.call_ids:
            latest_call[c] = r
        for rid in resp.get(r.seq, ()):
            call = latest_call.get(rid)
            if call is None:
                continue
            owner[(r.seq, rid)] = call
            key = (call.seq, rid)
            prev = resp_by_call.get(key)
            if prev is None or float(r.timestamp or 0) >= float(prev.timestamp or 0):
                resp_by_call[key] = r
    return owner, resp_by_call


def _rows_for_agent(
    seq_list: list[tuple[Record, bool]],
    agent: str | None,
    heads: dict[int, dict[str, Any]],
    resp: dict[int, Sequence[str]],
    dropped: list[int] | None = None,
    removed: dict[int, list[str]] | None = None,
) -> list[Row]:
    """One row per event: other agents' events marked for conversion to context, responses kept
    only to calls seen before them (`_drop_orphaned_function_responses`: an event left with none
    to `dropped`, the responses removed from one kept to `removed`). (`_author` of each from
    `heads`, its response ids from `resp`.)"""
    # Whose calls are these (other agents' responses are presented as context too).
    call_author: dict[str, str] = {}
    for r, summ in seq_list:
        if not summ and r.call_ids:
            a = str(heads[r.seq].get("author") or "")
            for c in r.call_ids:
                call_author[c] = a

    mine = (agent, "user")
    # The calls of another agent (neither `agent`'s nor the user's): a response to one is converted.
    foreign = {c for c, a in call_author.items() if a not in mine} if agent else set()
    rows: list[Row] = []
    seen_calls: set[str] = set()
    idless_calls: set[str] = set()  # the names of the calls without an id seen so far
    for r, summ in seq_list:
        # Converted to context: another agent's event, or a response to another agent's call.
        # (Each message's calls from its index and responses from `resp`, which holds every
        # message of `seq_list`: `_calls` and `response_ids` inline.)
        ids = resp.get(r.seq, ())
        conv = (
            not summ
            and bool(agent)
            and (str(heads[r.seq].get("author") or "") not in mine or not foreign.isdisjoint(ids))
        )
        if conv and not (r.call_ids or ids):  # (a call or a response is presented: its message not read)
            shown = _presented_parts(r)
            if shown == 0:
                continue  # nothing but the preamble would remain: ADK leaves the event out
            conv = shown is not None  # (None: a content of no parts, sent as it is)
        calls, resps = ([], []) if (summ or conv) else (list(r.call_ids), list(ids))
        # (a call or response without an id: paired by its name, read from its message)
        loose = r.message.blocks if not (summ or conv) and idless_parts(r) and r.message is not None else None
        if resps or loose:
            kept = [x for x in resps if x in seen_calls]
            if not kept and not _idless_answer(loose, idless_calls) and r.message is not None and all(
                b.type == "tool_result" for b in r.message.blocks
            ):
                if dropped is not None:
                    dropped.append(r.seq)
                continue  # _drop_orphaned_function_responses
            if len(kept) != len(resps) and removed is not None:
                removed[r.seq] = [x for x in resps if x not in kept]
            resps = kept
        seen_calls.update(calls)
        if loose:
            idless_calls.update(b.name for b in loose if b.type == "tool_call" and not b.call_id and isinstance(b.name, str) and b.name)
        rows.append((r, summ, conv, calls, resps))
    return rows


def _presented_parts(rec: Record) -> int | None:
    """How many parts `_present_other_agent_message` (flows/llm_flows/context/_fencing.py:255-355)
    makes of another agent's event, its preamble aside: a text that is not blank, a call, a
    response and a relayed part each one, a thought none (`include_thoughts_from_other_agents`
    unset, its default). 0: nothing but the preamble, the event is left out; None: its content has
    no parts (an event holding a transcription), sent as it is, not presented."""
    m = rec.message
    if m is None or not m.blocks:
        return None
    n = 0
    for b in m.blocks:
        if b.type == "text":
            n += bool(b.text.strip())
        elif b.type in ("tool_call", "tool_result"):
            n += 1
        elif b.type == "other" and isinstance(b.raw, dict) and not b.raw.get("thought"):
            n += any(b.raw.get(k) is not None for k in DATA_PARTS)
    return n


def _idless_answer(blocks: list[Block] | None, idless_calls: set[str]) -> bool:
    """Whether one of `blocks` is a response without an id that ADK pairs with an earlier call
    without one (by a name they share: `_drop_orphaned_function_responses`, tools/_rearranger.py:239-246)."""
    return blocks is not None and any(
        b.type == "tool_result" and not b.call_id and isinstance(b.name, str) and b.name in idless_calls for b in blocks
    )


def _context_items(rows: list[Row], heads: dict[int, dict[str, Any]]) -> list[ContextItem]:
    """The request's contents from the rows (unindexed): calls without a response are dropped,
    except long-running ones (`drop_orphaned_function_calls`)."""
    all_resps = {x for _, _, _, _, rs in rows for x in rs}
    long_running: set[str] = set()
    for r, summ, _conv, _, _ in rows:
        if not summ and isinstance(v := heads[r.seq].get("long_running_tool_ids"), list):
            long_running |= _ids_in(v)
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
        kept_calls = [c for c in calls if c in all_resps or c in long_running] if calls else []
        # (its message read only where that can drop it: most are not read by the analysis at all)
        # (a call without an id is never dropped: tools/_rearranger.py:305-342)
        if calls and not kept_calls and (m := r.message) is not None and all(b.type == "tool_call" and b.call_id for b in m.blocks):
            continue  # drop_orphaned_function_calls removed every part
        role = r.role or "user"
        it = ContextItem(0, role, "message", r.seq, r.id, r.line, False, "")
        if role == "assistant":
            it.tool_call_ids = kept_calls
        elif role == "tool":
            it.tool_result_id = resps[0] if resps else None
        ctx.append(it)
    return ctx


Row = tuple[Record, bool, bool, list[str], list[str]]  # record, summary?, converted?, calls, responses


def _owning_call(rows: list[Row], upto: int, call_id: str) -> int:
    """The newest row before `upto` making the call (`_find_owning_call_event_index`), or -1."""
    for k in range(upto - 1, -1, -1):
        if call_id in rows[k][3]:
            return k
    return -1


def _merged(parts: list[tuple[Record, list[str]]]) -> Row:
    """`merge_function_response_events`: the first event's responses, each replaced by a later
    response to the same call (others appended). Named after the event of its first payload."""
    payload: dict[str, Record] = {}
    for rec, ids in parts:
        for x in ids:
            payload[x] = rec
    ids = list(payload)
    return (payload[ids[0]], False, False, [], ids)


def _rearrange_for_latest_response(rows: list[Row]) -> list[Row]:
    """ADK's `rearrange_events_for_latest_function_response` (flows/llm_flows/tools/_rearranger.py):
    when the request ends with responses to a call made earlier than the event just before them
    (a long-running call answered later), everything after that call is left out, and the call's
    responses are merged into one content right after it."""
    if len(rows) < 2 or not rows[-1][4]:
        return rows
    trailing = rows[-1]
    by_call: dict[int, list[str]] = {}
    for x in trailing[4]:
        k = _owning_call(rows, len(rows) - 1, x)
        if k != -1:
            by_call.setdefault(k, []).append(x)
    if not by_call:
        return rows
    latest = max(by_call)
    if latest == len(rows) - 2 and len(by_call) == 1:
        return rows
    out: list[Row] = []
    for i in range(latest + 1):
        r, summ, conv, calls, resps = rows[i]
        if resps:
            kept = [x for x in resps if _owning_call(rows, i, x) not in by_call]
            if not kept and not calls:
                continue
            resps = kept
        out.append((r, summ, conv, calls, resps))
        if i in by_call:
            parts: list[tuple[Record, list[str]]] = []
            for j in range(i + 1, len(rows) - 1):
                mine = [x for x in rows[j][4] if _owning_call(rows, j, x) == i]
                if mine:
                    parts.append((rows[j][0], mine))
            parts.append((trailing[0], by_call[i]))
            out.append(_merged(parts))
    return out


def _stale_text_reply(row: Row, inv: str | None) -> bool:
    r, summ, conv, calls, _ = row
    m = r.message
    return (
        not summ
        and not conv
        and r.run_id == inv
        and _author(r) != "user"
        and r.role == "assistant"
        and not calls
        and m is not None
        and any(b.type == "text" and b.text for b in m.blocks)
    )


def _rearrange_for_async_responses(rows: list[Row]) -> list[Row]:
    """ADK's `rearrange_events_for_async_function_responses_in_history` (_rearranger.py): each
    call is followed by the last response to it (a long-running call's later answer replaces its
    intermediate one, wherever it sits), responses sit nowhere else, and model text replies
    between two updates of one call in one invocation by one author are dropped."""
    call_rows: dict[str, list[int]] = {}
    for i, row in enumerate(rows):
        if row[4]:
            continue
        for c in row[3]:
            call_rows.setdefault(c, []).append(i)
    by_call: dict[tuple[str, int], list[int]] = {}
    any_response = False
    for i, row in enumerate(rows):
        for x in row[4]:
            any_response = True
            owners = call_rows.get(x)
            if not owners:
                continue
            k = bisect_left(owners, i)
            by_call.setdefault((x, owners[max(k - 1, 0)]), []).append(i)
    if not any_response:
        return rows
    stale: set[int] = set()
    for idxs in by_call.values():
        for a, b in pairwise(idxs):
            ra, rb = rows[a][0], rows[b][0]
            if ra.run_id != rb.run_id or _author(ra) != _author(rb):
                continue
            run = range(a + 1, b)
            if run and all(_stale_text_reply(rows[k], ra.run_id) for k in run):
                stale.update(run)
    out: list[Row] = []
    for i, row in enumerate(rows):
        if i in stale or row[4]:
            continue
        out.append(row)
        if not row[3]:
            continue  # (no call: no answer follows it)
        answers = sorted({by_call[(c, i)][-1] for c in row[3] if (c, i) in by_call})
        if len(answers) == 1:
            out.append(rows[answers[0]])
        elif answers:
            out.append(_merged([(rows[k][0], rows[k][4]) for k in answers]))
    return out


# ---------------------------------------------------------------------------------------- coverage


def coverage(
    led: Ledger,
    path: list[int],
    vs: list[CheckpointView],
    reinjected: set[int],
    at: tuple[list[Record], list[float]] | None = None,
) -> tuple[list[str | None], list[int], bytearray]:
    """`at`: `path_times(led, path)`, where the caller has it."""
    recs = led.records
    alive = [v for v in vs if isinstance(v, AdkCheckpointView) and v.surviving]
    cover = rules.union(
        [
            (v.checkpoint.details["start_timestamp"], v.checkpoint.details["end_timestamp"])
            for v in alive
            if isinstance(v.checkpoint.details, dict)
        ]
    )
    # What the summaries actually sent stand for (exactly: survivors only), by path position.
    represented = bytearray(len(path))
    for lo, hi in merge([iv for v in alive for iv in v.summary_rep]):  # type: ignore[attr-defined]
        represented[lo:hi] = b"\x01" * (hi - lo)
    on_path, ts = at if at is not None else path_times(led, path)
    if (
        len(path) == len(recs)
        and len(path) > 1
        and all(map(lt, path, islice(path, 1, None)))  # (then path[i] == i)
        and non_decreasing(ts)
    ):
        return _coverage_by_runs(on_path, ts, vs, alive, cover, represented, reinjected)
    return _coverage_by_position(recs, path, ts, vs, alive, cover, represented, reinjected)


def _first_reps(vs: list[CheckpointView], n: int) -> list[int]:
    """Which checkpoint's summarizer first saw each path position (its index; 0: none)."""
    first_rep = [0] * n
    seen: list[Interval] = []  # (merged: the positions some earlier summarizer saw)
    for v in vs:
        for lo, hi in (iv for own in v.own for iv in subtract(own, seen)):
            first_rep[lo:hi] = [v.index] * (hi - lo)
        seen = merge([*seen, *v.own])
    return first_rep


def _coverage_by_runs(
    on_path: list[Record],
    ts: list[float],
    vs: list[CheckpointView],
    alive: list[CheckpointView],
    cover: list[tuple[float, float]],
    represented: bytearray,
    reinjected: set[int],
) -> tuple[list[str | None], list[int], bytearray]:
    """`_coverage_by_position` of a path that is every record in seq order, their timestamps in
    order (as the session service returns them): each covered range a run of positions, the
    states laid out by slices, then kept for messages only."""
    n = len(on_path)
    last_pos = vs[-1].pos if vs else -1
    st: list[str | None] = [RETAINED] * min(last_pos + 1, n) + [LIVE] * max(n - last_pos - 1, 0)
    sb = [0] * n
    first_rep = _first_reps(vs, n)
    fallback = alive[-1].index if alive else 0
    for lo, hi in merge([(bisect_left(ts, a), bisect_right(ts, b)) for a, b in cover]):
        st[lo:hi] = map(_REPRESENTED.__getitem__, represented[lo:hi])  # (a byte 1 or 0: in C)
        sb[lo:hi] = [f or fallback for f in first_rep[lo:hi]]
    messages = [r.kind == _MESSAGE for r in on_path]
    unsent = unsent_or_scoped(on_path, compress(range(n), messages))  # (`_excluded` of each message)
    for i in unsent:  # (one a summarizer read keeps its range's state: summarized, or a hole)
        if not ((st[i] is SUMMARIZED or st[i] is HOLE) and summarizer_reads(on_path[i])):
            st[i] = EXCLUDED
    for s in reinjected.difference(unsent):  # (never a call that was not sent)
        if 0 <= s < n and st[s] is not LIVE and st[s] is not RETAINED:
            st[s] = RETAINED  # a compacted call ADK sends raw again next to its response
    # (in C: None for the few records that are no message; a summary's index where summarized, else 0)
    states = st
    for i in compress(range(n), map(not_, messages)):
        states[i] = None
    summarized_by = list(map(mul, sb, map(is_, states, repeat(SUMMARIZED))))
    return states, summarized_by, bytearray(b"\x01" * n)


_REPRESENTED = (HOLE, SUMMARIZED)  # (a covered position's state, by its byte: a summary stands for it)


def _excluded(r: Record) -> bool:
    return r.never_sent or _obj(r).get("isolation_scope") is not None  # (`_in_scope`)


def summarizer_reads(r: Record) -> bool:
    """Whether ADK's summarizer writes a line of an event never sent to the model (inside a
    compacted range, its state is then summarized, or a hole where no summary stands for it, as a
    sent event's): a text or a thought of some text, a call or a
    response (apps/llm_event_summarizer.py:84-120, `_format_events_for_prompt`: thoughts included,
    the content's role not read), but for an auth event's (`_is_auth_event`, skipped there) and a
    scoped event's (left excluded)."""
    m = r.message
    if m is None or not r.never_sent:
        return False
    blocks = m.blocks
    if any(b.type in ("tool_call", "tool_result") and b.name == AUTH_CALL for b in blocks):
        return False
    return any(b.type in ("tool_call", "tool_result") or (b.type in ("text", "thinking") and b.text) for b in blocks)


def _coverage_by_position(
    recs: list[Record],
    path: list[int],
    ts: list[float],
    vs: list[CheckpointView],
    alive: list[CheckpointView],
    cover: list[tuple[float, float]],
    represented: bytearray,
    reinjected: set[int],
) -> tuple[list[str | None], list[int], bytearray]:
    n = len(recs)
    states: list[str | None] = [None] * n
    summarized_by = [0] * n
    on_path = bytearray(n)
    first_rep = _first_reps(vs, len(path))
    starts = [a for a, _ in cover]
    last_pos = vs[-1].pos if vs else -1
    for i, s in enumerate(path):
        on_path[s] = 1
        r = recs[s]
        if r.kind != "message":
            continue
        # (`rules.in_ranges`, inline: bisected by the ranges' starts)
        in_range = (k := bisect_right(starts, (t := ts[i])) - 1) >= 0 and t <= cover[k][1]
        if _excluded(r):
            if not (in_range and summarizer_reads(r)):
                states[s] = EXCLUDED
            elif represented[i]:  # (never sent, but summarized)
                states[s] = SUMMARIZED
                summarized_by[s] = first_rep[i] or (alive[-1].index if alive else 0)
            else:  # (... and the summary that stood for it is gone)
                states[s] = HOLE
        elif in_range:
            if s in reinjected:
                states[s] = RETAINED  # a compacted call ADK sends raw again next to its response
            elif represented[i]:
                states[s] = SUMMARIZED
                summarized_by[s] = first_rep[i] or (alive[-1].index if alive else 0)
            else:
                states[s] = HOLE
        else:
            states[s] = LIVE if i > last_pos else RETAINED
    if len(path) < n:  # rewound (formats/adk._rewound): off the path, as an abandoned branch is
        for r in recs:
            if r.kind == "message" and not on_path[r.seq]:
                states[r.seq] = INACTIVE
    return states, summarized_by, on_path
