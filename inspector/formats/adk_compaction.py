"""Google ADK's compaction rules (google-adk 2.13), as pure functions over a session's events.

ADK stores a compaction as an event whose `actions.compaction` holds `start_timestamp`,
`end_timestamp` and the summary (`compacted_content`). What the runtime sends next depends only on
those timestamps (`_process_compaction_events`): a range contained in a later wider (or identical,
later) one is dropped; every surviving summary is materialized at its `end_timestamp`; every raw
event whose timestamp lies inside any surviving range is left out, summarized or not.

What each summarizer was actually handed is not stored anywhere. It is inferred here from ADK's
own selection rules (token threshold: the previous summary as a seed plus events newer than its
end; sliding window: whole invocations) and the append order; where timestamps tie at a range's
end, from the summarizer's recorded prompt size (`usage_metadata.prompt_token_count` on the
compaction event), otherwise conservatively (an event that may not have been seen counts as not
seen). The facts and the inference are kept on each checkpoint's `details` (issue 7 builds a
policy simulator on them).
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import compress, islice, repeat
from operator import add, attrgetter, lt, ne, not_
from typing import Any

import msgspec

from inspector.ledger.jsontext import py_str
from inspector.ledger.order import non_decreasing

# LlmEventSummarizer._DEFAULT_PROMPT_TEMPLATE (google-adk 2.13): only its length matters here.
SUMMARIZER_TEMPLATE = (
    "The following is a conversation history between a user and an AI agent."
    " It may or may not start from a compacted history. Please identify and"
    " reiterate the user request, summarize the context so far, focusing on"
    " key decisions made and information obtained, as well as any unresolved"
    " questions or tasks. "
    "CRITICAL INSTRUCTIONS: "
    "1. Explicitly identify and state the primary language used by the user "
    'at the top of your summary (e.g., "Conversation Language: English"). '
    "2. If the agent called any tools, accurately list the exact tool names "
    "used to maintain tool grounding. "
    "The rest of the summary should be concise and capture the"
    " essence of the interaction.\n\n{conversation_history}"
)
MAX_TOOL_CONTENT_CHARS = 2000


class Ev(msgspec.Struct, gc=False):
    """One session event as the compaction rules see it. (A Struct: made in C, one per event; it
    holds the event's fields and its row, which never refer back to it.)"""

    index: int  # position in the order the session service returns (the ledger's seq)
    rank: int  # append order (SQLite rowid; list position for a JSON dump)
    id: str | None
    ts: float
    author: str
    invocation_id: str | None
    obj: dict[str, Any]  # the event as stored
    start: float | None = None  # compaction events only
    end: float | None = None
    summary_content: Any = None
    # An event read index first (formats/adk.py `_RowLater`): `obj` holds only the fields these
    # rules and the router read but its content, which this reads again on demand.
    later: Any = None
    # `lines_size(author, content)`: from the event's head where it was read index first, else
    # counted at the first prompt that holds it (None until then).
    lines_size: int | None = None

    def content(self) -> Any:
        """The event's `content`, read again from its row when it was loaded index first."""
        return self.obj.get("content") if self.later is None else self.later.content()

    @property
    def is_compaction(self) -> bool:
        return self.start is not None or self.end is not None or self.summary_content is not None

    @property
    def valid_compaction(self) -> bool:
        return self.summary_content is not None and self.start is not None and self.end is not None


def compaction_of(obj: dict[str, Any]) -> dict[str, Any] | None:
    actions = obj.get("actions")
    c = actions.get("compaction") if isinstance(actions, dict) else None
    return c if isinstance(c, dict) else None


def _num(v: Any) -> float | None:
    if isinstance(v, bool) or not isinstance(v, int | float):
        return None
    try:
        return float(v)
    except OverflowError:  # (an integer of hundreds of digits)
        return None


def _lax_num(v: Any) -> float | None:
    """A compaction's start or end as ADK's `EventCompaction` reads it (events/event_actions.py:68-71,
    a float in pydantic's lax mode: a boolean or a numeric string too); None where it refuses it
    (then ADK refuses the whole session: formats/adk_model.py)."""
    try:
        return float(v) if isinstance(v, str | int | float) else None
    except (ValueError, OverflowError):  # (an integer of hundreds of digits: a row read past orjson)
        return None


def make_events(objs: list[dict[str, Any]], ranks: list[int]) -> list[Ev]:
    out: list[Ev] = []
    for i, (o, rank) in enumerate(zip(objs, ranks, strict=True)):
        ts = _num(o.get("timestamp"))
        e = Ev(
            i,
            rank,
            o.get("id"),
            ts if ts is not None else 0.0,
            str(o.get("author") or ""),
            o.get("invocation_id"),
            o,
        )
        c = compaction_of(o)
        if c is not None:
            e.start = _lax_num(c.get("start_timestamp"))
            e.end = _lax_num(c.get("end_timestamp"))
            e.summary_content = c.get("compacted_content")
        out.append(e)
    return out


def rewind_target(e: Ev) -> str | None:
    """The invocation `e` rewinds to: its `actions.rewind_before_invocation_id` when that is a
    string ADK takes as true (events/_rewind_events.py:46 tests its truth: "" rewinds nothing;
    another type ADK refuses outright, formats/adk_model.py), else None."""
    return rewind_target_of(e.obj)


def rewind_target_of(obj: dict[str, Any]) -> str | None:
    """`rewind_target` of an event's JSON object (or of a record's fields holding its actions)."""
    actions = obj.get("actions")
    target = actions.get("rewind_before_invocation_id") if type(actions) is dict else None
    return target if type(target) is str and target else None


@dataclass(frozen=True, slots=True)
class Rewind:
    """One rewind ADK applies: it drops the events from index `first` to its own (inclusive).
    `first` is its own index when the invocation it names has no earlier event (it drops itself
    alone)."""

    event: Ev
    first: int

    @property
    def matched(self) -> bool:
        return self.first < self.event.index


def apply_rewinds(events: list[Ev], rewinds: list[Ev]) -> list[Rewind]:
    """ADK's `_apply_rewinds` (events/_rewind_events.py:22-61) over `events` (each at its index,
    in the session's order), given the rewind events among them (`rewind_target`): walking
    backward, a rewind to invocation X drops itself and every event back to X's first event
    (the first of X in the whole list, :47-51), when that lies before it (:55-56); else itself
    alone. A rewind inside a range a later one dropped is never read (:56: the walk jumps past
    it). The rewinds applied, latest first."""
    first_of: dict[str, int] = {}
    for e in events:
        inv = e.invocation_id
        if type(inv) is str and inv and inv not in first_of:
            first_of[inv] = e.index
    out: list[Rewind] = []
    limit = len(events)
    for r in sorted(rewinds, key=_INDEX, reverse=True):
        if r.index >= limit:
            continue  # inside a range a later rewind dropped
        at = first_of.get(rewind_target(r) or "")
        first = at if at is not None and at < r.index else r.index
        out.append(Rewind(r, first))
        limit = first
    return out


def rewound_indexes(applied: list[Rewind]) -> set[int]:
    """The indexes of the events these rewinds drop (themselves included)."""
    return {i for rw in applied for i in range(rw.first, rw.event.index + 1)}


def surviving_ranges(events: list[Ev]) -> list[Ev]:
    """ADK's `_get_compaction_ranges`: the compactions no later range contains, in list order."""
    ranges = [e for e in events if e.valid_compaction]
    retained: set[int] = set()
    comparable: list[Ev] = []
    for e in ranges:
        assert e.start is not None and e.end is not None
        if math.isnan(e.start) or math.isnan(e.end):
            retained.add(e.index)
        else:
            comparable.append(e)
    # By start, widest first, latest first: each containing range comes before what it contains.
    comparable.sort(key=lambda e: (e.start, -(e.end or 0.0), -e.index))
    max_end: float | None = None
    for e in comparable:
        assert e.end is not None
        if max_end is None or e.end > max_end:
            retained.add(e.index)
            max_end = e.end
    return [e for e in ranges if e.index in retained]


def union(ranges: list[tuple[float, float]]) -> list[tuple[float, float]]:
    out: list[tuple[float, float]] = []
    for start, end in sorted(r for r in ranges if r[0] <= r[1]):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


def in_ranges(ts: float, ranges: list[tuple[float, float]]) -> bool:
    """Is ts inside one of these sorted, disjoint ranges (a `union`)? ADK's _is_timestamp_compacted."""
    i = bisect_right(ranges, (ts, math.inf)) - 1
    return i >= 0 and ts <= ranges[i][1]


def _content_text(content: Any) -> str:
    if not isinstance(content, dict):
        return ""
    return "".join(p.get("text") or "" for p in content.get("parts") or [] if isinstance(p, dict))


def _py(v: Any) -> str:
    # The summarizer formats arguments and responses with Python's str() of the decoded JSON.
    return py_str(v)


def _trunc(text: str) -> str:
    if len(text) <= MAX_TOOL_CONTENT_CHARS:
        return text
    return f"{text[:MAX_TOOL_CONTENT_CHARS]}... [truncated {len(text) - MAX_TOOL_CONTENT_CHARS} chars]"


def _format_lines(author: str, content: Any, is_compaction: bool = False) -> list[str]:
    """LlmEventSummarizer._format_events_for_prompt for one event."""
    lines: list[str] = []
    if not isinstance(content, dict):
        return lines
    for p in content.get("parts") or []:
        if not isinstance(p, dict):
            continue
        if p.get("thought") and p.get("text"):
            if not is_compaction:
                lines.append(f"{author} (thought): {p['text']}")
        elif p.get("text"):
            lines.append(f"{author}: {p['text']}")
        fc = p.get("function_call")
        if isinstance(fc, dict):
            lines.append(f"{author} called tool: {fc.get('name')}({_trunc(_py(fc.get('args')))})")
        fr = p.get("function_response")
        if isinstance(fr, dict):
            lines.append(f"Tool response from {fr.get('name')}: {_trunc(_py(fr.get('response')))}")
    return lines


def trunc_len(text: str) -> int:
    """len(_trunc(text))."""
    return truncated_len(len(text))


def truncated_len(n: int) -> int:
    """len(_trunc(text)) of a text of `n` characters."""
    return n if n <= MAX_TOOL_CONTENT_CHARS else MAX_TOOL_CONTENT_CHARS + len(f"... [truncated {n - MAX_TOOL_CONTENT_CHARS} chars]")


def _lines_size(author: str, content: Any) -> tuple[int, int]:
    """(the characters of `_format_lines(author, content)`'s lines, how many): their lengths
    added up, the lines themselves (copies of every text) never built."""
    chars = lines = 0
    if not isinstance(content, dict):
        return 0, 0
    a = len(author)
    for p in content.get("parts") or []:
        if not isinstance(p, dict):
            continue
        t = p.get("text")
        if t:
            chars += a + (12 if p.get("thought") else 2) + (len(t) if type(t) is str else len(f"{t}"))  # " (thought): " | ": "
            lines += 1
        fc = p.get("function_call")
        if isinstance(fc, dict):
            chars += a + 16 + len(f"{fc.get('name')}") + trunc_len(_py(fc.get("args")))  # " called tool: " "(" ")"
            lines += 1
        fr = p.get("function_response")
        if isinstance(fr, dict):
            chars += 21 + len(f"{fr.get('name')}") + trunc_len(_py(fr.get("response")))  # "Tool response from " ": "
            lines += 1
    return chars, lines


def lines_size(author: str, content: Any) -> int:
    """What one event adds to the summarizer prompt it is handed: the characters of its
    `_format_lines`' lines and one newline each (`_lines_size`: none when it has no line)."""
    chars, lines = _lines_size(author, content)
    return chars + lines


def prompt_chars(inputs: list[Ev], seed: Ev | None) -> int:
    """Characters of the summarizer prompt ADK builds for these events (default template): the
    length of `_format_lines`' lines joined by newlines, from their sizes (`lines_size`: every
    line's characters and a newline, one newline less in all). An event's size is its head's,
    else counted from its content once and kept on it."""
    total = lines_size("model", seed.summary_content) if seed is not None else 0
    for e in inputs:
        size = e.lines_size
        if size is None:
            size = e.lines_size = lines_size(f"{e.author}", e.content())
        total += size
    # (A line is never empty: a total of 0 is no line at all, which no newline joins.)
    return len(SUMMARIZER_TEMPLATE) - len("{conversation_history}") + total - (total > 0)


Ivs = list[tuple[int, int]]  # sorted, disjoint, half-open ranges of event indexes


def ivs_of(indexes: list[int] | set[int]) -> Ivs:
    xs = sorted(indexes)
    if all(map(lt, xs, islice(xs, 1, None))):  # (no index twice: the runs' starts found in C)
        starts = [0, *compress(range(1, len(xs)), map(ne, islice(xs, 1, None), map(add, xs, repeat(1))))]
        return [(xs[a], xs[b - 1] + 1) for a, b in zip(starts, [*starts[1:], len(xs)], strict=True)] if xs else []
    out: Ivs = []
    for i in xs:
        if out and out[-1][1] == i:
            out[-1] = (out[-1][0], i + 1)
        else:
            out.append((i, i + 1))
    return out


def merge_ivs(*lists: Ivs) -> Ivs:
    out: Ivs = []
    for lo, hi in sorted(iv for lst in lists for iv in lst):
        if out and lo <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        else:
            out.append((lo, hi))
    return out


def in_ivs(i: int, ivs: Ivs) -> bool:
    k = bisect_right(ivs, (i, math.inf)) - 1
    return k >= 0 and i < ivs[k][1]


def outside_ivs(xs: list[int], ivs: Ivs) -> list[int]:
    """The members of sorted `xs` in none of `ivs` (`not in_ivs(x, ivs)` of each, in order), by
    bisecting `xs` at each range's ends instead of each member into the ranges."""
    out: list[int] = []
    j = 0
    for lo, hi in ivs:
        a = bisect_left(xs, lo, j)
        out += xs[j:a]
        j = max(a, bisect_left(xs, hi, a))
    out += xs[j:]
    return out


def ivs_size(ivs: Ivs) -> int:
    return sum(hi - lo for lo, hi in ivs)


@dataclass(slots=True)
class CompactionFacts:
    """What one compaction event means (kept on Checkpoint.details as plain data)."""

    ev: Ev
    range_events: list[int] = field(default_factory=list)  # raw events whose timestamp is in [start, end]
    surviving: bool = False
    subsumed_by: int | None = None
    seed: int | None = None  # index of the compaction whose summary was folded in as the seed
    inputs: list[int] = field(default_factory=list)  # raw events the summarizer was handed (inferred)
    represents: Ivs = field(default_factory=list)  # inputs plus what the seed represented
    inference: str = ""
    hypotheses: int = 1
    usage_prompt_tokens: int | None = None
    estimated_prompt_tokens: int | None = None

    def details(self, by_index: Sequence[Any]) -> dict[str, Any]:
        """What the facts say, the events named by their ids (`by_index`: each event's id, by index)."""

        def ids(xs: list[int]) -> list[Any]:
            return list(map(by_index.__getitem__, sorted(xs)))  # (in C)

        return {
            "start_timestamp": self.ev.start,
            "end_timestamp": self.ev.end,
            "timestamp": self.ev.ts,
            "invocation_id": self.ev.invocation_id,
            "branch": self.ev.obj.get("branch"),
            "surviving": self.surviving,
            "subsumed_by": by_index[self.subsumed_by] if self.subsumed_by is not None else None,
            "range_event_ids": ids(self.range_events),
            "seed_compaction_id": by_index[self.seed] if self.seed is not None else None,
            "summarizer_input_ids": ids(self.inputs),
            # What the summary stands for: its input plus (through the seed) what the seed's did,
            # as [first event id, last event id] ranges of the session's events.
            "represents": [[by_index[lo], by_index[hi - 1]] for lo, hi in self.represents],
            "in_range_not_summarized_ids": ids(outside_ivs(self.range_events, self.represents)),
            "inference": self.inference,
            "summarizer_prompt_tokens": self.usage_prompt_tokens,
            "estimated_prompt_tokens": self.estimated_prompt_tokens,
        }


def _contains(q: Ev, p: Ev) -> bool:
    """Does q's range make ADK drop p's (wider, or identical and later)?"""
    assert q.start is not None and q.end is not None and p.start is not None and p.end is not None
    if q is p or math.isnan(q.start) or math.isnan(q.end) or math.isnan(p.start) or math.isnan(p.end):
        return False
    return (q.start, -q.end, -q.index) < (p.start, -p.end, -p.index) and q.end >= p.end


def _dropped(p: Ev, by_start: dict[float, list[Ev]], max_end: dict[float, float]) -> bool:
    """Does an earlier-appended range make ADK drop p's?"""
    assert p.start is not None and p.end is not None
    for st, lst in by_start.items():
        if st < p.start and max_end[st] >= p.end:
            return True
        if st == p.start and any(_contains(q, p) for q in lst):
            return True
    return False


_RANK = attrgetter("rank")
_INDEX = attrgetter("index")
_TS_RANK = attrgetter("ts", "rank")


def _compactions_among(events: list[Ev], comps: list[Ev] | None) -> tuple[list[Ev], list[bool]]:
    """The compactions among `events` (the caller's, where it knows them) and, per event, whether it is one."""
    if comps is None:
        # (`is_compaction` inline, once: a session holds few compactions among many events)
        is_comp = [e.start is not None or e.end is not None or e.summary_content is not None for e in events]
        return list(compress(events, is_comp)), is_comp
    is_comp = [False] * len(events) if comps else []
    for c in comps:  # (marked at their positions)
        is_comp[c.index] = True
    return comps, is_comp


def analyze_compactions(
    events: list[Ev], rewinds: list[Ev] | None = None, comps: list[Ev] | None = None
) -> dict[int, CompactionFacts]:
    """Facts for every compaction event, in append order (each can depend on earlier ones).
    `rewinds`: the rewind events among `events` (`rewind_target`): each compaction is judged over
    the events live when it was made, and only the compactions live now survive. `comps`: the
    compactions among `events`, in their order, where the caller knows them (each one's `index`
    its position in `events`): else found here."""
    facts: dict[int, CompactionFacts] = {}
    comps, is_comp = _compactions_among(events, comps)
    if not comps:
        return facts
    at = _RewoundAt(events, rewinds or [])
    surviving_now = {e.index for e in surviving_ranges([c for c in comps if c.index not in at.now])}
    by_rank, comp_at, raw_by_ts, raw_ts = _orders(events, is_comp)
    # (`is_run_input`: a rewind event is the user's but starts no run)
    input_ranks = sorted([e.rank for e in raw_by_ts if e.author == "user" and e.rank not in at.ranks])
    by_invocation: dict[Any, list[Ev]] | None = None  # the raw events of each invocation (at the first need)
    prior_comps: list[Ev] = []  # valid compactions appended so far
    by_start: dict[float, list[Ev]] = {}
    max_end: dict[float, float] = {}
    for pos in comp_at:
        c = by_rank[pos]
        f = CompactionFacts(c)
        facts[c.index] = f
        if not c.valid_compaction:
            f.inference = "not a usable compaction (missing start, end or summary): ADK ignores it"
            continue
        assert c.start is not None and c.end is not None
        f.surviving = c.index in surviving_now
        span = raw_by_ts[bisect_left(raw_ts, c.start) : bisect_right(raw_ts, c.end)]
        # (ADK's compactor drops what was rewound then before it selects: apps/compaction.py:683-686, 790)
        gone = at.before(c)
        if gone:
            span = [e for e in span if e.index not in gone]
        f.range_events = sorted([e.index for e in span])
        # ADK's _latest_compaction_event then: the newest range no other earlier one drops.
        # Only a previous range with the same start can have been folded in as a seed, so the
        # search (quadratic in the worst case) runs only when one exists.
        seeds: list[Ev] = []
        run_seeds_all_known = False
        live, starts, ends = _live_compactions(prior_comps, gone) if gone else (prior_comps, by_start, max_end)
        if c.start in starts:
            prev = next((p for p in reversed(live) if not _dropped(p, starts, ends)), None)
            run = _compactions_just_before(by_rank, pos)
            concurrent = _seeds_before_concurrent(live, run)
            run_seeds_all_known = prev is not None and all(p is not None for p in concurrent)
            seeds = _with_twins([p for p in [prev, *concurrent] if p is not None], starts)
        prior_comps.append(c)
        by_start.setdefault(c.start, []).append(c)
        max_end[c.start] = max(max_end.get(c.start, -math.inf), c.end)
        usage = c.obj.get("usage_metadata")
        ptc = usage.get("prompt_token_count") if isinstance(usage, dict) else None
        f.usage_prompt_tokens = ptc if isinstance(ptc, int) and not isinstance(ptc, bool) else None
        held = _held_from(c, input_ranks)
        in_range = _in_held_order([e for e in span if e.rank < c.rank], held)
        # Where a window can start: which of the events stamped start_timestamp opens its
        # invocation (in the order ADK held the events then); only their invocations are looked at.
        if by_invocation is None:
            by_invocation = _opening_invocations(comps, raw_by_ts)
        opening = {e.invocation_id for e in in_range if e.ts == c.start}
        held_then = (x for inv in opening for x in by_invocation[inv] if x.rank < c.rank and x.index not in gone)
        first_of_inv = _first_events_of_invocations(_in_held_order(list(held_then), held))
        candidates = _selections(c, in_range, first_of_inv, seeds, facts)
        if not candidates:
            f.inference = "no event appended before it ends at its end_timestamp: nothing it summarized can be identified"
            continue
        f.hypotheses = len(candidates)
        chosen = _choose(
            f, candidates, facts, bool(seeds) and run_seeds_all_known and _made_mid_run(by_rank, pos)
        )
        seed, inputs = chosen
        f.seed = seed.index if seed is not None else None
        f.inputs = [e.index for e in inputs]
        f.represents = _represents(chosen, facts)
        f.estimated_prompt_tokens = prompt_chars(inputs, seed) // 4
    _name_subsumers(facts, surviving_now, at.now)
    _say_rewound(facts, at.now)
    return facts


def _say_rewound(facts: dict[int, CompactionFacts], rewound: set[int]) -> None:
    """Each rewound compaction's inference says so first (what it was made of follows)."""
    for i in sorted(rewound & facts.keys()):
        f = facts[i]
        f.inference = (
            "rewound: ADK drops it, as every event a rewind annuls, before it applies any compaction "
            f"(events/_rewind_events.py:22-61, flows/llm_flows/context/_contents.py:509-516); made as: {f.inference}"
        )


class _RewoundAt:
    """Which events were rewound when each compaction was made: ADK's compactor applies the
    rewinds of the session it holds (those appended before the compaction) first (apps/
    compaction.py:683-686, 790), so a summary never stands for what was rewound by then. `now`:
    what the rewinds of the whole session drop. (Each set computed once per number of rewinds
    appended before: the events appended between two rewinds are after the earlier one, which
    drops nothing of them. The first event of an invocation is looked for among all the events,
    those appended after a compaction too: they differ only where timestamps run back.)"""

    __slots__ = ("_by_count", "_events", "_rewinds", "now", "ranks")

    def __init__(self, events: list[Ev], rewinds: list[Ev]) -> None:
        self._events = events
        self._rewinds = sorted(rewinds, key=_RANK)
        self.ranks = {r.rank for r in rewinds}
        self._by_count: dict[int, set[int]] = {0: set()}
        self.now = self._of(len(rewinds)) if rewinds else set()

    def _of(self, k: int) -> set[int]:
        got = self._by_count.get(k)
        if got is None:
            got = self._by_count[k] = rewound_indexes(apply_rewinds(self._events, self._rewinds[:k]))
        return got

    def before(self, c: Ev) -> set[int]:
        """The indexes of the events rewound when `c` was appended."""
        if not self._rewinds:
            return self._by_count[0]
        return self._of(bisect_left([r.rank for r in self._rewinds], c.rank))


def _live_compactions(
    prior: list[Ev], gone: set[int]
) -> tuple[list[Ev], dict[float, list[Ev]], dict[float, float]]:
    """The compactions of `prior` not in `gone`, and their ranges by start and each start's
    widest end (what `analyze_compactions` keeps of every compaction appended so far)."""
    live = [p for p in prior if p.index not in gone]
    starts: dict[float, list[Ev]] = {}
    ends: dict[float, float] = {}
    for p in live:
        assert p.start is not None and p.end is not None
        starts.setdefault(p.start, []).append(p)
        ends[p.start] = max(ends.get(p.start, -math.inf), p.end)
    return live, starts, ends


def _orders(events: list[Ev], is_comp: list[bool]) -> tuple[list[Ev], list[int], list[Ev], list[float]]:
    """`events` by append rank (a stable sort), the compactions' positions in that list, the other
    events by (timestamp, rank), and their timestamps. Where the ranks rise along `events` and the
    other events' timestamps do not fall (a store appends in timestamp order, and the service
    returns events by timestamp), every list is `events`' own order: nothing is sorted."""
    ranks = [e.rank for e in events]  # (comprehensions: an Ev's attribute costs less so than attrgetter's)
    raw = list(compress(events, map(not_, is_comp)))
    raw_ts = [e.ts for e in raw]
    if all(map(lt, ranks, islice(ranks, 1, None))):
        by_rank = events
        comp_at = list(compress(range(len(events)), is_comp))
        if non_decreasing(raw_ts):  # (in C; a NaN fails it: sorted below)
            return by_rank, comp_at, raw, raw_ts
    else:
        order = sorted(range(len(events)), key=ranks.__getitem__)  # (stable: `sorted(events, key=_RANK)`)
        by_rank = [events[i] for i in order]
        comp_at = list(compress(range(len(order)), map(is_comp.__getitem__, order)))
    raw_by_ts = sorted(raw, key=_TS_RANK)
    return by_rank, comp_at, raw_by_ts, [e.ts for e in raw_by_ts]


def _opening_invocations(comps: list[Ev], raw_by_ts: list[Ev]) -> dict[Any, list[Ev]]:
    """The raw events (in `raw_by_ts` order) of each invocation a window can open: those of the raw
    events stamped some compaction's start (the only invocations `analyze_compactions` looks up),
    and possibly a few more."""
    starts = {c.start for c in comps}
    wanted = {e.invocation_id for e in raw_by_ts if e.ts in starts}
    out: dict[Any, list[Ev]] = {}
    for e in [e for e in raw_by_ts if e.invocation_id in wanted]:
        out.setdefault(e.invocation_id, []).append(e)
    return out


Selection = tuple[Ev | None, list[Ev]]  # (the previous summary taken as a seed, the events summarized)


def is_run_input(e: Ev) -> bool:
    """The user's event that starts a `Runner.run_async` (a question, or the answer to a
    long-running call): the user-authored events that are neither compactions nor rewinds
    (`Runner.rewind_async` writes its event as the user's, sessions/_rewind_utils.py:199-210)."""
    return e.author == "user" and not e.is_compaction and rewind_target(e) is None


def _held_from(c: Ev, input_ranks: list[int]) -> int:
    """Where the order of the session's events in ADK's memory when compaction `c` was made
    changes (`_in_held_order`): the rank of the run input that started the run in progress."""
    k = bisect_left(input_ranks, c.rank) - 1
    return input_ranks[k] if k >= 0 else -1


def _in_held_order(evs: list[Ev], start: int) -> list[Ev]:
    """`evs` in the order ADK held them when a compaction was made: the run in progress (started
    by the run input of rank `start`, `_held_from`) began by reloading the session (runners.py:992,
    `get_session`: the service's order, which is the ledger's, `index`), then appended its own
    events (`rank`) to that list; the compaction selections run over that list
    (apps/compaction.py:789-879, 686-701). (Sorted by the key `(0, index)` below `start`, else
    `(1, rank)`: two stable sorts in C.)"""
    return sorted([e for e in evs if e.rank < start], key=_INDEX) + sorted(
        [e for e in evs if e.rank >= start], key=_RANK
    )


def _first_events_of_invocations(held: list[Ev]) -> set[int]:
    """The first event of each invocation in the order ADK held them: where a sliding window can
    start."""
    first: set[int] = set()
    seen: set[Any] = set()
    for e in held:
        if not e.is_compaction and e.invocation_id not in seen:
            seen.add(e.invocation_id)
            first.add(e.index)
    return first


def _compactions_just_before(by_rank: list[Ev], pos: int) -> int:
    """How many usable compactions were stored just before `by_rank[pos]` (a compaction) with no
    other event between that existed before it: an event stamped after it was made while its
    summarizer ran (concurrent appends interleave their inserts, sessions/
    sqlite_session_service.py:461-556), so it does not show its selection came later."""
    c, run = by_rank[pos], 0
    for j in range(pos - 1, -1, -1):
        e = by_rank[j]
        if e.is_compaction:
            run += e.valid_compaction
        elif e.ts <= c.ts:
            break
    return run


def _made_mid_run(by_rank: list[Ev], pos: int) -> bool:
    """Was the compaction at `by_rank[pos]` stored inside a run (the events stored just before and
    after it, compactions aside, are of one invocation and the later is no run input; the newest
    event: after a run input or a tool round that is not a long-running call's pause)? Then it is
    a token-threshold compaction before a model call (a sliding window runs after the
    invocation, runners.py `_run_post_invocation_compaction`), and with a summary before it
    that one is its seed (apps/compaction.py:427-480: `_events_to_compact_for_token_threshold`
    always folds the latest summary in)."""
    before = next((by_rank[j] for j in range(pos - 1, -1, -1) if not by_rank[j].is_compaction), None)
    after = next((by_rank[j] for j in range(pos + 1, len(by_rank)) if not by_rank[j].is_compaction), None)
    if before is None:
        return False
    if after is None:  # the newest event: inside a run when a model call must follow what came before
        return is_run_input(before) or (
            _has_tool_parts(before) and not before.obj.get("long_running_tool_ids")
        )
    return (
        before.invocation_id is not None
        and before.invocation_id == after.invocation_id
        and not is_run_input(after)
    )


def _has_tool_parts(e: Ev) -> bool:
    content = e.content()
    parts = content.get("parts") if isinstance(content, dict) else None
    return any(
        isinstance(p, dict) and (p.get("function_call") or p.get("function_response")) for p in parts or []
    )


def _with_twins(seeds: list[Ev], by_start: dict[float, list[Ev]]) -> list[Ev]:
    """Each seed and every earlier compaction with its very range: of identical ranges ADK keeps
    (and seeds from) the one latest in the list it holds (apps/compaction.py:202-241), and
    concurrent appends join that list in the order they finish, not the order they were stored
    (sessions/sqlite_session_service.py:461-556), so any of them may be the one."""
    out: list[Ev] = []
    for p in seeds:
        for q in [p, *(q for q in by_start.get(p.start or 0.0, []) if q.end == p.end)]:
            if not any(q is o for o in out):
                out.append(q)
    return out


def _seeds_before_concurrent(prior_comps: list[Ev], run: int) -> list[Ev | None]:
    """The seeds a compaction would have taken had the last `run` compactions (stored just before
    it, `_compactions_just_before`) not been in the session yet. A `ParallelAgent`'s sub-agents
    each run the token-threshold check before their first model call
    (flows/llm_flows/context/_compaction.py:40-61) concurrently, over the one shared session:
    each selects its seed and events (apps/compaction.py:686-712), awaits its summarizer, and
    only then appends (:723), so a sibling's compaction appended in between is one it never saw."""
    out: list[Ev | None] = []
    for k in range(1, min(run, len(prior_comps)) + 1):
        alive = surviving_ranges(prior_comps[:-k])
        out.append(max(alive, key=lambda e: e.rank) if alive else None)
    return out


def _selections(
    c: Ev,
    in_range: list[Ev],
    first_of_inv: set[int],
    seeds: list[Ev],
    facts: dict[int, CompactionFacts],
) -> list[Selection]:
    """Every selection ADK could have summarized for compaction `c` (its in-range events, in append order)."""
    out: list[Selection] = []
    # Sliding window (or a first token compaction): the in-range events from the first event
    # of an invocation stamped start_timestamp to one stamped end_timestamp; with ties at
    # either end, each possible window.
    start, end = c.start, c.end
    starts = [j for j, e in enumerate(in_range) if e.ts == start and e.index in first_of_inv] or [0]
    ends = [k for k, e in enumerate(in_range, 1) if e.ts == end]  # (each window's possible ends, once)
    for j in starts:
        out.extend((None, in_range[j:k]) for k in reversed(ends) if k > j)
    for n, prev in enumerate(seeds):
        if (
            any(p is prev for p in seeds[:n])
            or prev.start != c.start
            or prev.end is None
            or prev.index not in facts
        ):
            continue
        # Token threshold: the previous summary as a seed, plus events newer than its end.
        newer = [e for e in in_range if e.ts > prev.end]
        for k in range(len(newer), 0, -1):
            if newer[k - 1].ts == c.end:
                out.append((prev, newer[:k]))
    return out


def _represents(cand: Selection, facts: dict[int, CompactionFacts]) -> Ivs:
    """The summarizer's inputs, plus what the seed stood for when the summarizer was shown any of
    it: `LlmEventSummarizer._format_events_for_prompt` (apps/llm_event_summarizer.py:98-120) writes
    a line only for a part with text, a call or a response, so an empty seed summary hands over
    nothing of what it was made from (and a seed prompt is built from `compacted_content`,
    apps/compaction.py:470-478)."""
    seed, inputs = cand
    own = ivs_of([e.index for e in inputs])
    if seed is None or not _format_lines("model", seed.summary_content):
        return own
    return merge_ivs(facts[seed.index].represents, own)


def _choose(
    f: CompactionFacts, candidates: list[Selection], facts: dict[int, CompactionFacts], seeded: bool = False
) -> Selection:
    """The selection taken as what the summarizer saw, and why (`f.inference`); where the
    evidence ties, a seeded one when the compaction must have been seeded (`_made_mid_run`)."""
    if len(candidates) == 1:
        f.inference = "unambiguous: one selection ADK could have made ends at end_timestamp"
        return candidates[0]
    if f.usage_prompt_tokens is not None:
        est = [
            (abs(prompt_chars(inp, seed) / 4 - f.usage_prompt_tokens), seeded and seed is None, n)
            for n, (seed, inp) in enumerate(candidates)
        ]
        f.inference = (
            f"{len(candidates)} selections fit the timestamps (ties at start or end, or a possible seed); "
            "chose the one whose prompt size is nearest the summarizer's recorded prompt_token_count"
        )
        return candidates[min(est)[2]]
    # No evidence: what may not have been seen counts as not seen (a hole is reported rather
    # than hidden).
    f.inference = (
        f"{len(candidates)} selections fit the timestamps and the summarizer's usage is not recorded; "
        "assumed the smallest (events it may not have seen count as not summarized)"
    )
    return min(candidates, key=lambda cand: (ivs_size(_represents(cand, facts)), seeded and cand[0] is None))


def _name_subsumers(
    facts: dict[int, CompactionFacts], surviving_now: set[int], rewound: set[int] | frozenset[int] = frozenset()
) -> None:
    """Which later range drops each dropped one (a rewound one is dropped by its rewind)."""
    alive = sorted((facts[i] for i in surviving_now if i in facts), key=lambda g: g.ev.index)
    for f in facts.values():
        if f.surviving or not f.ev.valid_compaction or f.ev.index in rewound:
            continue
        f.subsumed_by = next((g.ev.index for g in alive if _contains(g.ev, f.ev)), None)
