"""What-if: replay a recorded session turn by turn under another compaction policy (issue 7).

The replay takes the session's own messages (its recorded compactions are set aside) and walks
them in order. Before every model call (an assistant message) it computes the prompt the call
would have carried under the policy; at the points where the runtime compacts (pi: at the end of
a turn; ADK: before a model request and after an invocation) it applies the runtime's own
selection rule. The summarizer is not called: a simulated summary's size is a parameter
(`SummarySize`). Nothing here does I/O.

Vocabulary (DESIGN §2): a *checkpoint* here is one simulated compaction; it *represents* the events
its summarizer was handed (plus what a seed summary represented); a *hole* is an event a model
call lacks that no summary in that call represents; a *live question lost* is a model call whose
own turn's user question is not in its prompt raw (summarized out of its own prompt, or a hole).

Token counts. Every message gets a size from the project's tokenizer (an assistant reply that
recorded usage: its output tokens), then calibrated to the session's own usage (`_calibrate`:
between two recorded calls with no compaction between them, the prompt grew by exactly the
messages in between). A model call's prompt is the session's own recorded prompt (`usage.prompt`)
adjusted by what the what-if adds or removes relative to the context the call really had: where
the what-if's context equals the recorded one the number is the provider's, exactly. A call that
recorded no usage is priced as the session's typical overhead (system prompt, tools) plus its
context.

Runtime rules replayed:
- pi (0.73): after each turn (`agent_end`), if the last reply's total tokens exceed
  `context_window - reserve_tokens`, cut: walk back from the newest message accumulating tokens
  until `keep_recent_tokens`, then move forward to the next user/assistant message (never a tool
  result). The summary replaces everything before the cut (chained: it re-summarizes from the
  previous cut with the previous summary). A cut inside a turn costs two summarizer requests.
- ADK (google-adk 2.13, `apps/compaction.py`): token threshold before every model request (the
  signal: the latest prompt count this agent recorded since the latest compaction, else an
  estimate of the contents) and after each invocation; sliding window after each invocation when
  the token path did not fire. Candidates, the rolling seed, the split that keeps a retained
  response's call, the longest self-contained prefix, the "worth compacting" progress gate and
  the timestamp ranges (ties included) follow ADK's code; coverage in the prompt is by timestamp.
  Rewinds apply as ADK applies them when it reads the session (`_Rewinds`): what the rewinds
  appended so far drop, events and compactions, is neither sent nor compacted.
"""

from __future__ import annotations

import math
import re
import statistics
from bisect import bisect_left, bisect_right, insort
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

from inspector.analysis.engine import failed_turn_marker, message_text_for_tokens
from inspector.formats import registry
from inspector.formats.adk_compaction import rewind_target_of
from inspector.ledger.jsontext import dumps_text, py_str
from inspector.ledger.model import Ledger, Record
from inspector.ledger.times import epoch_seconds

# ---------------------------------------------------------------------------------------- policies

DEFAULT_SUMMARY_TOKENS = 500
# pi's defaults (settings.json `compaction`), used where a session does not say.
PI_CONTEXT_WINDOW = 200_000
PI_RESERVE_TOKENS = 16_384
PI_KEEP_RECENT_TOKENS = 20_000


@dataclass(frozen=True, slots=True)
class SummarySize:
    """How big a simulated summary is. `tokens` (fixed) wins over `ratio` (of the tokens it
    summarizes); neither: the median of the session's own summaries, else DEFAULT_SUMMARY_TOKENS.
    A simulated summary over exactly the range of a recorded one takes that one's size."""

    tokens: int | None = None
    ratio: float | None = None

    def describe(self) -> str:
        if self.tokens is not None:
            return f"{self.tokens} tokens"
        if self.ratio is not None:
            return f"{self.ratio:g} of what it summarizes"
        return "the session's median summary"


@dataclass(frozen=True, slots=True)
class PiPolicy:
    """pi's threshold compaction (`compaction` settings: contextWindow, reserveTokens,
    keepRecentTokens)."""

    context_window: int = PI_CONTEXT_WINDOW
    reserve_tokens: int = PI_RESERVE_TOKENS
    keep_recent_tokens: int = PI_KEEP_RECENT_TOKENS

    name = "pi"

    @property
    def threshold(self) -> int:
        return self.context_window - self.reserve_tokens

    def params(self) -> dict[str, Any]:
        return {
            "context_window": self.context_window,
            "reserve_tokens": self.reserve_tokens,
            "keep_recent_tokens": self.keep_recent_tokens,
        }


@dataclass(frozen=True, slots=True)
class AdkPolicy:
    """ADK's `EventsCompactionConfig`: the sliding window runs when `compaction_interval` and
    `overlap_size` are set, token threshold when `token_threshold` and `event_retention_size` are.
    `progress_gate` is ADK 2.13's "worth compacting" check (a range must be able to remove more
    than the last summary's size); off replays a runtime without it."""

    compaction_interval: int | None = None
    overlap_size: int | None = None
    token_threshold: int | None = None
    event_retention_size: int | None = None
    progress_gate: bool = True

    @property
    def sliding(self) -> bool:
        return self.compaction_interval is not None and self.overlap_size is not None

    @property
    def token(self) -> bool:
        return self.token_threshold is not None and self.event_retention_size is not None

    @property
    def name(self) -> str:
        if self.sliding and self.token:
            return "adk-both"
        return "adk-sliding" if self.sliding else "adk-token" if self.token else "adk-none"

    def params(self) -> dict[str, Any]:
        return {
            "compaction_interval": self.compaction_interval,
            "overlap_size": self.overlap_size,
            "token_threshold": self.token_threshold,
            "event_retention_size": self.event_retention_size,
            "progress_gate": self.progress_gate,
        }


Policy = PiPolicy | AdkPolicy


def adk_sliding(compaction_interval: int = 3, overlap_size: int = 1, progress_gate: bool = True) -> AdkPolicy:
    return AdkPolicy(compaction_interval, overlap_size, progress_gate=progress_gate)


def adk_token(token_threshold: int, event_retention_size: int = 5, progress_gate: bool = True) -> AdkPolicy:
    return AdkPolicy(
        token_threshold=token_threshold,
        event_retention_size=event_retention_size,
        progress_gate=progress_gate,
    )


# ---------------------------------------------------------------------------------------- events


@dataclass(slots=True)
class SimEvent:
    """One session event as the replay sees it (compaction records are set aside)."""

    pos: int  # index among replayed events
    seq: int  # the record's seq (for ADK: the event's index in the session)
    line: int
    ts: float
    inv: str  # invocation (ADK invocation_id) or turn key
    turn: int  # 1-based turn number (a new invocation / user question)
    author: str
    role: str | None  # None: an event without content (ADK actions only)
    tokens: int
    calls: frozenset[str] = frozenset()
    results: frozenset[str] = frozenset()
    long_running: frozenset[str] = frozenset()
    is_call: bool = False  # a model call produced it
    question: bool = False  # a user's question (the turn's live question)
    sent: bool = True  # sent in later prompts (error / aborted replies are dropped at send time)
    prompt: int | None = None  # recorded prompt tokens of the call that produced it
    output: int = 0  # recorded output tokens (pi's trigger reads prompt + output)
    chars4: int = 0  # pi's own estimate (`estimateTokens`: ceil(chars / 4)), which its cut walks
    # ADK: a node failure (an event with `error_code` and no content): the invocation raised
    failed: bool = False
    branch: str | None = None  # ADK: the branch of the agent that wrote it (a parallel sub-agent's own)
    chars: int = 0  # ADK: the serialized size of its content (what the "worth compacting" gate sums)
    errored: bool = False  # an answer that failed (stopReason error)
    aborted: bool = False  # an answer the user aborted (stopReason aborted)
    overflow: bool = False  # pi: that failure was the model refusing a context over its window
    counted: int = 0  # ADK: the characters its token estimate counts (`_count_chars_in_content`)
    counted_as_context: int = 0  # the same, of the user-role text another agent reads it as
    rewind_to: str | None = None  # ADK: the invocation this event rewinds to (`rewind_target`)


# The model's refusals of a context over its window, as pi-ai's isContextOverflow reads an error
# message (utils/overflow.js:29-50, 113-121); rate limits are not overflows (:60-64).
_OVERFLOW = re.compile(
    r"context[_ ]length[_ ]exceeded|maximum context length is \d+|exceeds the context window|prompt is too long"
    r"|reduce the length of the messages|too many tokens|token limit exceeded|request_too_large",
    re.IGNORECASE,
)
_NOT_OVERFLOW = re.compile(r"rate limit|too many requests", re.IGNORECASE)


def is_context_overflow(error_message: str | None) -> bool:
    return bool(error_message) and bool(_OVERFLOW.search(error_message or "")) and not _NOT_OVERFLOW.search(
        error_message or ""
    )


@dataclass(slots=True)
class Session:
    """A session prepared for replay."""

    name: str
    format: str
    events: list[SimEvent]
    recorded: list[Any]  # recorded compactions as _AdkComp / _CutComp, in stream order
    summary_tokens: list[int]  # recorded summaries' sizes
    overhead: int  # typical prompt tokens outside the messages (system prompt, tools)
    settings: dict[str, Any] = field(default_factory=dict)
    # False where the recorded context after a recorded compaction is not modelled here (a runtime
    # whose checkpoint replaces history with its own replacement items: Codex). Calls after it are
    # then priced from the overhead, and the baseline's coverage is left to `inspector analyze`.
    exact: bool = True
    index: Any = None  # _Index, built on first use
    trackers: dict[tuple[int, ...], Any] = field(default_factory=dict)  # recorded ADK contexts
    inferred: Any = None  # recorded_policy's answer, once worked out (it may replay many times)
    simulator: str | None = None  # the format's compaction model (Format.simulator)
    rewinds: Any = None  # ADK: the session's rewinds (`_Rewinds`), None when it has none
    orders: Any = None  # ADK: the events' orders every replay reads (`_Orders`), built on first use

    def modelled(self, pos: int) -> bool:
        return self.exact or not any(c.after <= pos for c in self.recorded)


_ts = epoch_seconds  # the one reading of a record's time (inspector.ledger.times)


def _pi_estimate(rec: Record) -> int:
    """pi's `estimateTokens`: text (user, tool result), text + thinking + tool name and JSON
    arguments (assistant), 4800 characters per image; ceil(chars / 4)."""
    m = rec.message
    if m is None:
        return 0
    chars = 0
    for b in m.blocks:
        if b.type == "text" or (b.type == "thinking" and m.role == "assistant") or b.type == "tool_result":
            chars += len(b.text or "")
        elif b.type == "tool_call" and m.role == "assistant":
            try:
                args = dumps_text(b.args)
            except TypeError:
                args = py_str(b.args)
            chars += len(b.name or "") + len(args)
        elif b.type == "image":
            chars += 4800
    return -(-chars // 4)


def _default_count(texts: list[str]) -> list[int]:
    from inspector.analysis.tokens import get_tokenizer

    return get_tokenizer().count_many(texts)


def prepare(led: Ledger, count: Callable[[list[str]], list[int]] | None = None) -> Session:
    """The session's events, sizes, recorded prompts and recorded compactions."""
    count = count or _default_count
    fmt = registry.get(led.format)
    rt = fmt.runtime
    adk = fmt.simulator == "event_ranges"
    path, ranks = _replay_order(led, rt=rt, adk=adk)
    records = led.records
    led.load_messages([s for s in path if records[s].kind == "message"])
    keep = [records[s] for s in path if records[s].kind == "message" or (adk and records[s].kind == "meta")]
    # (a failed reply the runtime sends as its marker costs the marker's tokens: `engine.marked_item`)
    sizes = count([failed_turn_marker(r, rt) or message_text_for_tokens(r) for r in keep])
    events = _sim_events(keep, sizes, rt=rt, adk=adk)
    rewinds = _rewinds_of(events, records) if adk else None
    recorded = _recorded_compactions(led, path, keep, events, ranks, count=count, rt=rt, adk=adk, rewinds=rewinds)
    summary_tokens = [c.tokens for c in recorded]
    ratio = _calibrate(events, [c.after for c in recorded])
    if ratio != 1.0:
        summary_tokens = [round(x * ratio) for x in summary_tokens]
        for c in recorded:
            c.tokens = round(c.tokens * ratio)
    sess = Session(led.path or "<session>", led.format, events, recorded, summary_tokens, 0)
    sess.exact = not rt.replaces_history
    sess.simulator = fmt.simulator
    sess.rewinds = rewinds
    sess.settings = {
        "window": led.settings.window,
        "reserve": led.settings.reserve,
        "keep_recent": led.settings.keep_recent,
    }
    sess.overhead = _typical_overhead(sess)
    return sess


def _replay_order(led: Ledger, *, rt: Any, adk: bool) -> tuple[list[int], list[int]]:
    """The seqs the replay walks, in order, and (ADK) every record's append rank."""
    if not adk:
        from inspector.analysis.engine import active_path

        path, _ = active_path(led, rt)
        return path, []
    # Replayed in append order (what the runtime held in memory when it compacted), which is
    # not the reload order when timestamps tie (DatabaseSessionService orders ties by id).
    hdr = led.header or {}
    ranks = hdr.get("append_ranks") if isinstance(hdr.get("append_ranks"), list) else []
    if len(ranks) != len(led.records):
        ranks = list(range(len(led.records)))
    return sorted((r.seq for r in led.records), key=lambda s: (ranks[s], s)), ranks


def _sim_events(keep: list[Record], sizes: list[int], *, rt: Any, adk: bool) -> list[SimEvent]:
    """The replayed events, each assigned its invocation and turn."""
    times = [_ts(r.timestamp) for r in keep]
    use_ts = all(t is not None for t in times)
    events: list[SimEvent] = []
    inv_turn: dict[str, int] = {}
    for pos, (r, n) in enumerate(zip(keep, sizes, strict=True)):
        extra = (r.extra or {}) if adk else {}  # a lazily read record would read its line again
        author = str(extra.get("author") or (r.role or ""))
        question = _is_question(r, author=author, adk=adk)
        inv, turn = _turn_of(r, pos=pos, question=question, inv_turn=inv_turn, adk=adk)
        ts = (times[pos] or 0.0) if use_ts else float(pos)
        events.append(
            _sim_event(
                r,
                n,
                pos=pos,
                ts=ts,
                inv=inv,
                turn=turn,
                author=author,
                question=question,
                rt=rt,
                extra=extra,
                adk=adk,
            )
        )
    return events


def _is_question(r: Record, *, author: str, adk: bool) -> bool:
    """A turn's live question: a user message that was sent (ADK: the user's event opening a run)."""
    if adk:
        return author == "user" and r.message is not None and not r.never_sent
    return r.message is not None and r.role == "user" and not r.never_sent


def _turn_of(r: Record, *, pos: int, question: bool, inv_turn: dict[str, int], adk: bool) -> tuple[str, int]:
    """The event's invocation key and 1-based turn; a question opens a new turn (in `inv_turn`)."""
    if adk:
        # Every `Runner.run_async` starts with the user's event: a question, or the answer to a
        # long-running call, which resumes an earlier invocation (same invocation id). A run is
        # a turn: its input is its live question, and post-invocation compaction follows it.
        if question or not inv_turn:
            inv_turn[f"run-{len(inv_turn) + 1}"] = len(inv_turn) + 1
        return str(r.run_id or f"#{pos}"), len(inv_turn)
    if question or not inv_turn:
        inv = f"turn-{len(inv_turn) + 1}"
    else:
        inv = f"turn-{len(inv_turn)}"
    if inv not in inv_turn:
        inv_turn[inv] = len(inv_turn) + 1
    return inv, inv_turn[inv]


def _sim_event(
    r: Record,
    n: int,
    *,
    pos: int,
    ts: float,
    inv: str,
    turn: int,
    author: str,
    question: bool,
    rt: Any,
    extra: dict[str, Any],
    adk: bool,
) -> SimEvent:
    """One record as the replay sees it: its size (`n`, or its recorded output), calls and usage."""
    m = r.message
    role = r.role if m is not None else None
    blocks = m.blocks if m else []
    calls = frozenset(b.call_id for b in blocks if b.type == "tool_call" and b.call_id)
    results = frozenset(b.call_id for b in blocks if b.type == "tool_result" and b.call_id)
    lr = extra.get("long_running_tool_ids")
    usage = m.usage if m is not None else None
    out = usage.output if usage is not None else 0
    sent = not r.never_sent and not (role == "assistant" and r.stop_reason in rt.drop_stop_reasons)
    tokens = out if role == "assistant" and out > 0 and r.stop_reason not in rt.marked_stop_reasons else n
    return SimEvent(
        pos,
        r.seq,
        r.line,
        ts,
        inv,
        turn,
        author,
        role,
        tokens if sent else 0,
        calls,
        results,
        frozenset(x for x in lr if isinstance(x, str)) if isinstance(lr, list) else frozenset(),
        is_call=role == "assistant",
        question=question,
        sent=sent,
        prompt=usage.prompt if usage is not None and usage.prompt > 0 else None,
        output=out,
        chars4=_pi_estimate(r),
        failed=adk and m is None and bool(extra.get("error_code")),
        # (another runtime's session replayed under ADK's policy: its text size)
        chars=int(extra.get("content_chars") or 0) if adk else 4 * _pi_estimate(r),
        errored=m is not None and m.stop_reason == "error",
        aborted=m is not None and m.stop_reason == "aborted",
        overflow=m is not None and m.stop_reason == "error" and is_context_overflow(m.error_message),
        counted=int(extra.get("counted_chars") or 0) if adk else 4 * _pi_estimate(r),
        counted_as_context=int(extra.get("counted_chars_as_context") or 0),
        branch=extra.get("branch") if isinstance(extra.get("branch"), str) else None,
        rewind_to=rewind_target_of(extra) if adk else None,
    )


def _recorded_compactions(
    led: Ledger,
    path: list[int],
    keep: list[Record],
    events: list[SimEvent],
    ranks: list[int],
    *,
    count: Callable[[list[str]], list[int]],
    rt: Any,
    adk: bool,
    rewinds: _Rewinds | None = None,
) -> list[Any]:
    """The session's own compactions, as _AdkComp (ADK) or _CutComp, in stream order."""
    records = led.records
    cps = [records[s] for s in path if records[s].kind == "checkpoint" and records[s].checkpoint is not None]
    cp_sizes = count([r.checkpoint.summary if r.checkpoint else "" for r in cps])
    if adk:
        rewound: set[int] = set()
        if rewinds is not None:
            # A compaction a later rewind dropped applied until then: it is replayed, and the
            # rewind drops it (`_Live`). One ADK ignores (no start, end or summary) never applied.
            spans = rewinds.live(len(events)).spans
            invalid = {d.line for d in led.diagnostics if d.problem == "invalid_compaction"}
            rewound = {r.seq for r in cps if r.line not in invalid and any(lo <= r.seq <= hi for lo, hi in spans)}
        return _recorded_adk(records, cps, cp_sizes, keep, events, ranks, rewound)
    from inspector.analysis.engine import checkpoint_views

    by_seq = {e.seq: e for e in events}
    recorded: list[Any] = []
    for v in checkpoint_views(led, path, rt):
        after = sum(1 for e in events if e.seq < v.seq)
        retained = set(v.retains)
        # The first replayed event the checkpoint keeps (retains or what came after it).
        cut = next((e.pos for e in events if e.seq in retained or e.seq > v.seq), len(events))
        rep = {by_seq[s].pos for s in v.represents if s in by_seq}
        size = count([v.checkpoint.summary])[0] if v.checkpoint.summary else 0
        recorded.append(_CutComp(after, cut, rep, size, "recorded", "recorded", seq=v.seq))
    return recorded


def _recorded_adk(
    records: list[Record],
    cps: list[Record],
    cp_sizes: list[int],
    keep: list[Record],
    events: list[SimEvent],
    ranks: list[int],
    rewound: set[int],
) -> list[Any]:
    """ADK's recorded compactions: their timestamp ranges, summarizer inputs and what they
    represent; those a rewind dropped too (`rewound`: their seqs), which applied until it came."""
    by_id = {e_rec.id: e.pos for e_rec, e in zip(keep, events, strict=True) if e_rec.id is not None}
    seq_of = {r.id: r.seq for r in records if r.id is not None}
    recorded: list[Any] = []
    for r, size in zip(cps, cp_sizes, strict=True):
        d = r.checkpoint.details if r.checkpoint and isinstance(r.checkpoint.details, dict) else {}
        start, end = d.get("start_timestamp"), d.get("end_timestamp")
        # An empty summary is a compaction all the same: ADK drops what its range spans
        # (`_get_compaction_ranges` needs only a compacted_content, apps/compaction.py:220-226).
        usable = d.get("surviving") or d.get("subsumed_by") is not None or r.seq in rewound
        if not isinstance(start, int | float) or not isinstance(end, int | float) or not usable:
            continue
        after = sum(1 for e in events if ranks[e.seq] < ranks[r.seq])
        inputs = [by_id[i] for i in d.get("summarizer_input_ids", []) if i in by_id]
        rep = {by_id[i] for i in d.get("represents_ids", []) if i in by_id}
        for lo_hi in d.get("represents") or []:
            # [first id, last id] ranges over the session's events (reload order)
            if isinstance(lo_hi, list) and len(lo_hi) == 2 and lo_hi[0] in seq_of and lo_hi[1] in seq_of:
                lo, hi = seq_of[lo_hi[0]], seq_of[lo_hi[1]]
                rep |= {e.pos for e in events if lo <= e.seq <= hi}
        extra = r.extra or {}
        recorded.append(
            _AdkComp(
                after,
                float(start),
                float(end),
                inputs,
                rep,
                size,
                "recorded",
                "recorded",
                seed=d.get("seed_compaction_id"),
                seq=r.seq,
                chars=int(extra.get("content_chars") or 0),
                counted=int(extra.get("counted_chars") or 0),
            )
        )
    return recorded


def _typical_overhead(sess: Session) -> int:
    """Recorded prompt minus the recorded context's messages, typical (median) over the calls."""
    diffs = []
    for e in sess.events:
        if e.is_call and e.prompt is not None and sess.modelled(e.pos):
            ctx = _recorded_context(sess, e.pos)
            diffs.append(e.prompt - ctx.content_tokens)
    return max(0, int(statistics.median(diffs))) if diffs else 0


def _calibrate(events: list[SimEvent], compaction_points: list[int]) -> float:
    """Bring the tokenizer's sizes to the provider's own count, in place.

    Between two model calls with recorded usage and no recorded compaction between them, the
    prompt grew by exactly the events appended in between: those events share that growth in
    proportion to their tokenizer counts. Everything else (before the first call, across a
    compaction, a session without usage) is scaled by the session's overall ratio, which is
    returned (1.0 when nothing could be calibrated).
    """
    calls = [e for e in events if e.is_call and e.prompt is not None]
    segments: list[tuple[list[SimEvent], int]] = []
    for a, b in pairwise(calls):
        if any(a.pos < p <= b.pos for p in compaction_points):
            continue
        assert a.prompt is not None and b.prompt is not None
        seg = [e for e in events[a.pos : b.pos] if e.sent and e.role is not None]
        delta = b.prompt - a.prompt
        if seg and delta > 0 and sum(e.tokens for e in seg) > 0:
            segments.append((seg, delta))
    est = sum(e.tokens for seg, _ in segments for e in seg)
    got = sum(d for _, d in segments)
    ratio = got / est if est else 1.0
    done: set[int] = set()
    for seg, delta in segments:
        total = sum(e.tokens for e in seg)
        cum_est = cum_out = 0
        for e in seg:
            cum_est += e.tokens
            share = round(delta * cum_est / total) - cum_out  # cumulative rounding: sums to delta
            cum_out += share
            e.tokens = share
            done.add(e.pos)
    if ratio != 1.0:
        for e in events:
            if e.pos not in done:
                e.tokens = round(e.tokens * ratio)
    return ratio


# ---------------------------------------------------------------------------------------- compactions


@dataclass(slots=True)
class _AdkComp:
    """An ADK compaction: a timestamp range and the events its summary represents."""

    after: int  # appended once this many events existed (stream position)
    start: float
    end: float
    inputs: list[int]  # event positions the summarizer was handed
    represents: set[int]
    tokens: int
    trigger: str  # token_threshold | sliding_window | recorded
    when: str  # pre_request | post_invocation | recorded
    seed: Any = None  # the compaction folded in as the seed (index into the list), when any
    seq: int | None = None  # recorded compactions: the record's seq
    chars: int = 0  # the summary's serialized size (ADK's unit for the "worth compacting" gate)
    counted: int = 0  # the summary's characters as ADK's token estimate counts them

    def key(self) -> tuple[float, float]:
        return (self.start, self.end)


@dataclass(slots=True)
class _CutComp:
    """A boundary compaction (pi, native): everything before `cut` leaves the prompt."""

    after: int
    cut: int  # first event position kept
    represents: set[int]
    tokens: int
    trigger: str
    when: str
    split_turn: bool = False
    seq: int | None = None
    rep_all: bool = False  # its summary stands for everything before `cut` (a replayed pi summary)
    hole_list: list[int] | None = None  # cached: positions before `cut` it leaves unrepresented

    def key(self) -> tuple[str, int]:
        return ("cut", self.cut)


@dataclass(slots=True)
class _Index:
    """Prefix sums over the replayed events, so a boundary context costs O(1) per call."""

    tokens: list[int]  # tokens[i] = tokens of the sent messages before position i
    count: list[int]  # count[i] = sent messages before position i
    question: dict[int, int]  # each turn's question position (ADK: each run's input)


def _index(sess: Session) -> _Index:
    if sess.index is None:
        tokens, count = [0], [0]
        question: dict[str, int] = {}
        for e in sess.events:
            sent = e.sent and e.role is not None
            tokens.append(tokens[-1] + (e.tokens if sent else 0))
            count.append(count[-1] + (1 if sent else 0))
            if e.question and e.turn not in question:
                question[e.turn] = e.pos
        sess.index = _Index(tokens, count, question)
    return sess.index


_EMPTY_SUMMARY_CHARS = len('{"parts":[],"role":"model"}')  # ADK's weightless summary content


def _compacted_chars(
    events: list[SimEvent], comps: list[_AdkComp], upto: int, live: _Live | None = None
) -> int:
    """ADK's `_serialized_size(_process_compaction_events(events))`: every event outside the
    surviving ranges plus each surviving summary, in serialized characters (of the events and
    compactions no rewind dropped, `live`)."""
    alive = _surviving(comps, live.compactions(comps) if live is not None else None)
    inside = _within_any([(comps[i].start, comps[i].end) for i in alive])
    total = sum(comps[i].chars for i in alive)
    gone = live.events if live is not None else frozenset()
    for e in events[:upto]:
        if e.pos not in gone and not inside(e.ts):
            total += e.chars
    return total


# Whether the ADK replay reads the sliding window and the worth-compacting gate from indexes kept
# up to date as it goes (`_Invocations`, `_ByTime`) rather than from the whole session at every
# invocation's end (O(events x invocations): a 36 MB store took minutes). The tests turn it off,
# to hold the two readings equal.
_INCREMENTAL = True


def _seq_ordered_prefix(events: list[SimEvent]) -> int:
    """How many events from the first have non-decreasing seqs (all of them: `len(events)`)."""
    for i in range(1, len(events)):
        if events[i].seq < events[i - 1].seq:
            return i
    return len(events)


class _ByTime:
    """The events' positions by their times (every time a number), to find those in a range."""

    def __init__(self, events: list[SimEvent]) -> None:
        self.order = sorted(range(len(events)), key=lambda p: events[p].ts)
        self.times = [events[p].ts for p in self.order]

    def between(self, start: float, end: float) -> list[int]:
        """The positions of the events whose time is in [start, end] (none when start > end)."""
        return self.order[bisect_left(self.times, start) : bisect_right(self.times, end)]


@dataclass(frozen=True, slots=True)
class _Orders:
    """What every ADK replay of a session reads of its events' orders (built once a session: the
    inference of a recorded policy replays it many times)."""

    in_seq_order: int  # `_seq_ordered_prefix`
    by_time: _ByTime | None  # None: a time is not a number


def _orders(sess: Session) -> _Orders:
    if sess.orders is None:
        ev = sess.events
        by_time = _ByTime(ev) if all(math.isfinite(e.ts) for e in ev) else None
        sess.orders = _Orders(_seq_ordered_prefix(ev), by_time)
    return sess.orders  # type: ignore[no-any-return]


def _finite_ranges(comps: list[_AdkComp]) -> bool:
    return all(math.isfinite(c.start) and math.isfinite(c.end) for c in comps)


def _removable_chars(events: list[SimEvent], comps: list[_AdkComp], weightless: _AdkComp, upto: int, by_time: _ByTime) -> int:
    """`_compacted_chars(events, comps, upto) - _compacted_chars(events, [*comps, weightless], upto)`
    (no rewinds, every time a number) without a pass over every event. A range `_surviving` drops
    lies inside one it keeps, so the union of the surviving ranges is the union of all of them:
    adding `weightless` makes inside exactly the events of its range that were outside, and
    changes which summaries survive; every other event counts the same on both sides."""
    with_it = [*comps, weightless]
    alive = _surviving(comps)
    before = sum(comps[i].chars for i in alive)
    after = sum(with_it[i].chars for i in _surviving(with_it))
    inside = _within_any([(comps[i].start, comps[i].end) for i in alive])
    newly = sum(
        events[p].chars for p in by_time.between(weightless.start, weightless.end) if p < upto and not inside(events[p].ts)
    )
    return before - after + newly


class _Invocations:
    """What ADK's sliding window reads of `present(upto)` when that is `ev[:upto]`, kept up to
    date as `upto` grows (one step per new event, not a pass over the session at each
    invocation's end): the invocations in the order they first appear, each one's latest time
    (from 0.0, as the whole reading takes it), first and last position, and which of them are
    newer than the last compaction's end (`bar`)."""

    def __init__(self, events: list[SimEvent]) -> None:
        self.events = events
        self.upto = 0
        self.order: list[str] = []
        self.index: dict[str, int] = {}
        self.latest: list[float] = []
        self.first: list[int] = []
        self.last: list[int] = []
        self.bar: float | None = None
        self.new: list[int] = []  # indexes in `order` whose latest time is above `bar`, ascending
        self.is_new: set[int] = set()
        self.answered: set[str] = set()  # the calls a result answers, of every event so far
        self.protected: set[str] = set()  # the long-running calls, of every event so far
        self.calls: _WindowCalls | None = None  # the calls of the window last read

    def advance(self, upto: int) -> None:
        if upto < self.upto:
            self.__init__(self.events)  # type: ignore[misc]
        latest, bar = self.latest, self.bar
        for p in range(self.upto, upto):
            e = self.events[p]
            i = self.index.get(e.inv)
            if i is None:
                i = self.index[e.inv] = len(self.order)
                self.order.append(e.inv)
                latest.append(max(0.0, e.ts))
                self.first.append(p)
                self.last.append(p)
            else:
                latest[i] = max(latest[i], e.ts)
                self.last[i] = p
            if bar is not None and latest[i] > bar and i not in self.is_new:
                insort(self.new, i)
                self.is_new.add(i)
            self.answered |= e.results
            self.protected |= e.long_running
        self.upto = upto

    def window(self, upto: int, last_end: float, pol: AdkPolicy) -> tuple[int, int] | None:
        """The first and last position of the sliding window's range (`_sliding_range`), None
        when fewer than `compaction_interval` invocations are new."""
        self.advance(upto)
        if self.bar != last_end:
            self.bar = last_end
            self.new = [i for i, t in enumerate(self.latest) if t > last_end]
            self.is_new = set(self.new)
        new = self.new
        assert pol.compaction_interval is not None and pol.overlap_size is not None
        if not new or len(new) < pol.compaction_interval:
            return None
        return self.first[max(0, new[0] - pol.overlap_size)], self.last[new[-1]]

    def self_contained(self, first: int, last: int) -> int:
        """How many events of the window `events[first : last + 1]` `_self_contained` keeps (of
        the session `events[:upto]`, `upto` as last advanced to), from the window's calls kept up
        to date while its start stays (`_WindowCalls`)."""
        wc = self.calls
        if wc is None or wc.positions[0] != first or wc.end > last + 1 - first:
            wc = self.calls = _WindowCalls(self.events, range(first, len(self.events)))
        return wc.contained(last + 1 - first, self)


def _sliding_range(present: list[SimEvent], comps: list[_AdkComp], live: _Live | None, pol: AdkPolicy) -> tuple[int, int] | None:
    """ADK's sliding window (apps/compaction.py `_run_compaction_for_sliding_window`) over the
    session as it holds it: the first and last index in `present` of the invocations it would
    summarize (the newest `compaction_interval` or more since the last compaction, and
    `overlap_size` before them), None when fewer are new."""
    assert pol.compaction_interval is not None and pol.overlap_size is not None
    kept = [c for c in comps if live is None or not live.dropped(c)]
    last_end = kept[-1].end if kept else 0.0
    latest_ts: dict[str, float] = {}
    for e in present:
        latest_ts[e.inv] = max(latest_ts.get(e.inv, 0.0), e.ts)
    invs = list(latest_ts)
    new = [i for i in invs if latest_ts[i] > last_end]
    if not new or len(new) < pol.compaction_interval:
        return None
    start_inv = invs[max(0, invs.index(new[0]) - pol.overlap_size)]
    end_inv = new[-1]
    last = max(i for i, e in enumerate(present) if e.inv == end_inv)
    first = min(i for i, e in enumerate(present) if e.inv == start_inv)
    return first, last


def _within_any(ranges: list[tuple[float, float]]) -> Callable[[float], bool]:
    """Whether a time lies in any of the closed `ranges`: their union, searched by bisection (a
    range holding nothing, its start after its end or not a number, left out)."""
    starts: list[float] = []
    ends: list[float] = []
    for a, b in sorted(r for r in ranges if r[0] <= r[1]):
        if ends and a <= ends[-1]:
            ends[-1] = max(ends[-1], b)
        else:
            starts.append(a)
            ends.append(b)

    def inside(ts: float) -> bool:
        i = bisect_right(starts, ts) - 1
        return i >= 0 and ts <= ends[i]

    return inside


def _surviving(comps: list[_AdkComp], among: list[int] | None = None) -> list[int]:
    """ADK's `_get_compaction_ranges`: indexes of the ranges no later or wider range contains
    (of those `among`, when given: the compactions no rewind dropped)."""
    order = sorted(range(len(comps)) if among is None else among, key=lambda i: (comps[i].start, -comps[i].end, -i))
    keep: set[int] = set()
    max_end: float | None = None
    for i in order:
        if max_end is None or comps[i].end > max_end:
            keep.add(i)
            max_end = comps[i].end
    return [i for i in range(len(comps)) if i in keep]


def held_seq(c: _AdkComp, events: list[SimEvent]) -> float:
    """Where a compaction sits among the events of the session reloaded (by their seqs): a
    recorded one at its own record, a simulated one after the event appended just before it."""
    if c.seq is not None:
        return float(c.seq)
    return events[c.after - 1].seq + 0.5 if c.after else -1.0


@dataclass(frozen=True, slots=True)
class _Live:
    """What ADK's `_apply_rewinds` leaves of the session once some rewinds were appended: the
    event positions they drop (`events`), and the spans of the reloaded session (by seq, both
    ends included) they drop, where a compaction event sitting inside one goes too."""

    events: frozenset[int]
    spans: tuple[tuple[float, float], ...]
    replayed: list[SimEvent]  # (where a compaction sits among them: `held_seq`)

    def dropped(self, c: _AdkComp) -> bool:
        at = held_seq(c, self.replayed)
        return any(lo <= at <= hi for lo, hi in self.spans)

    def compactions(self, comps: list[_AdkComp]) -> list[int]:
        """The indexes of `comps` no rewind dropped."""
        return [i for i, c in enumerate(comps) if not self.dropped(c)]


class _Rewinds:
    """An ADK session's rewinds, as the runtime applies them when it reads the session
    (events/_rewind_events.py:22-61, applied by the request, `_contents.py:509-516`, and by the
    compactor, apps/compaction.py:683-686, 790): a run reloads the session, so at any point the
    rewinds appended so far apply, walking the reloaded events (by seq) backward. A rewind to
    invocation X drops itself and every event back to X's first event when that lies before it,
    else itself alone; a rewind inside a range a later one dropped is never read. (X's first event
    is looked for among all the session's events, its compaction events too, by seq, as
    `adk_compaction.apply_rewinds` does: `first_seq`.)"""

    def __init__(self, events: list[SimEvent], first_seq: dict[str, int]) -> None:
        self.events = events
        self.at = [e.pos for e in events if e.rewind_to is not None]  # append positions, ascending
        self.order = sorted(events, key=lambda e: e.seq)
        self.seqs = [e.seq for e in self.order]
        self.first_seq = first_seq
        self._by_count: dict[int, _Live] = {}

    def live(self, upto: int) -> _Live:
        """What the rewinds among the first `upto` events appended leave."""
        k = bisect_left(self.at, upto)
        got = self._by_count.get(k)
        if got is None:
            got = self._by_count[k] = self._walk(self.at[:k])
        return got

    def _walk(self, rewinds: list[int]) -> _Live:
        dropped: set[int] = set()
        spans: list[tuple[float, float]] = []
        limit = math.inf
        for r in sorted((self.events[p] for p in rewinds), key=lambda e: e.seq, reverse=True):
            if r.seq >= limit:
                continue  # inside a range a later rewind dropped
            at = self.first_seq.get(r.rewind_to or "")
            first = at if at is not None and at < r.seq else r.seq
            dropped.update(e.pos for e in self.order[bisect_left(self.seqs, first) : bisect_right(self.seqs, r.seq)])
            spans.append((float(first), float(r.seq)))
            limit = first
        return _Live(frozenset(dropped), tuple(spans), self.events)


def _rewinds_of(events: list[SimEvent], records: list[Record]) -> _Rewinds | None:
    if not any(e.rewind_to is not None for e in events):
        return None
    first_seq: dict[str, int] = {}
    for r in records:  # (by seq)
        if isinstance(r.run_id, str) and r.run_id:
            first_seq.setdefault(r.run_id, r.seq)
    return _Rewinds(events, first_seq)


class _RawSoFar(Collection[int]):
    """The first `n` positions a tracker added to its raw events (it adds, never removes): the
    tracker's set as it was at one call, without a copy of it at every call."""

    __slots__ = ("n", "order", "where")

    def __init__(self, order: list[int], where: dict[int, int], n: int) -> None:
        self.order, self.where, self.n = order, where, n

    def __len__(self) -> int:
        return self.n

    def __contains__(self, p: object) -> bool:
        i = self.where.get(p)  # type: ignore[call-overload]
        return i is not None and i < self.n

    def __iter__(self) -> Iterator[int]:
        return iter(self.order[: self.n])


@dataclass(slots=True)
class _Context:
    raw: Collection[int] | None  # event positions sent raw; None: every sent message in [cut, upto)
    summaries: list[int]  # compaction indexes whose summary is sent
    content_tokens: int
    holes: list[int]  # event positions missing and represented by nothing
    cut: int = 0
    upto: int = 0
    raw_sum: int | None = None  # the tokens of the events in `raw`, where the maker counted them

    def raw_count(self, ix: _Index) -> int:
        return len(self.raw) if self.raw is not None else ix.count[self.upto] - ix.count[self.cut]

    def raw_tokens(self, ix: _Index, events: list[SimEvent]) -> int:
        if self.raw is None:
            return ix.tokens[self.upto] - ix.tokens[self.cut]
        if self.raw_sum is not None:
            return self.raw_sum
        return sum(events[p].tokens for p in self.raw)

    def raw_set(self, events: list[SimEvent]) -> Collection[int]:
        if self.raw is not None:
            return self.raw
        return {p for p in range(self.cut, self.upto) if events[p].sent and events[p].role is not None}

    def has_raw(self, p: int, events: list[SimEvent]) -> bool:
        if self.raw is not None:
            return p in self.raw
        return self.cut <= p < self.upto and events[p].sent and events[p].role is not None


class _AdkTracker:
    """ADK's prompt for a growing prefix of the events under a fixed list of compactions
    (`_process_compaction_events`): every surviving range drops the events whose timestamps it
    spans, a dropped call comes back beside a response still sent, each surviving summary is sent.
    Advancing from one call to the next visits only the new events."""

    def __init__(self, events: list[SimEvent], comps: list[_AdkComp], rewinds: _Rewinds | None = None) -> None:
        self.events = events
        self.comps = comps
        self.rewinds = rewinds
        self.live: _Live | None = None
        self._ranges()
        self._reset()

    def _ranges(self) -> None:
        """The ranges and summaries of the surviving compactions (those no rewind dropped)."""
        comps, live = self.comps, self.live
        self.alive = _surviving(comps, live.compactions(comps) if live is not None else None)
        self._inside = _within_any([(comps[i].start, comps[i].end) for i in self.alive])
        self.rep: set[int] = set()
        for i in self.alive:
            self.rep |= comps[i].represents
        self.summary_tokens = sum(comps[i].tokens for i in self.alive)

    def _reset(self) -> None:
        self.upto = 0
        self.raw: dict[int, int] = {}  # each event sent raw: when it was added (`_RawSoFar`)
        self.raw_order: list[int] = []
        self.holes: set[int] = set()
        self.tokens = 0
        self.removed_calls: dict[str, list[int]] = {}  # call id -> dropped events making it
        self.sent_results: set[str] = set()

    def at(self, upto: int) -> _Context:
        if upto < self.upto:
            self._reset()
        gone: frozenset[int] = frozenset()
        if self.rewinds is not None:
            live = self.rewinds.live(upto)
            if live is not self.live:  # (rewinds came: the prompt is built again without what they drop)
                self.live = live
                self._ranges()
                self._reset()
            gone = live.events
        ev = self.events
        for p in range(self.upto, upto):
            e = ev[p]
            if not e.sent or e.role is None or p in gone:
                continue
            if self._inside(e.ts) and not (e.calls and e.calls & self.sent_results):
                if e.pos not in self.rep:
                    self.holes.add(p)
                for c in e.calls:
                    self.removed_calls.setdefault(c, []).append(p)
                continue
            self.raw[p] = len(self.raw_order)
            self.raw_order.append(p)
            self.tokens += e.tokens
            for r in e.results:
                self.sent_results.add(r)
                for q in self.removed_calls.pop(r, []):  # re-injected beside this response
                    if q not in self.raw:
                        self.raw[q] = len(self.raw_order)
                        self.raw_order.append(q)
                        self.holes.discard(q)
                        self.tokens += ev[q].tokens
        self.upto = max(self.upto, upto)
        return _Context(
            _RawSoFar(self.raw_order, self.raw, len(self.raw_order)), list(self.alive), self.tokens + self.summary_tokens,
            sorted(self.holes), 0, upto, self.tokens,
        )


def _adk_context(events: list[SimEvent], comps: list[_AdkComp], upto: int, rewinds: _Rewinds | None = None) -> _Context:
    return _AdkTracker(events, comps, rewinds).at(upto)


def _cut_context(sess: Session, comps: list[_CutComp], upto: int) -> _Context:
    ix = _index(sess)
    last_i = next((i for i in range(len(comps) - 1, -1, -1) if comps[i].after <= upto), None)
    if last_i is None:
        return _Context(None, [], ix.tokens[upto], [], 0, upto)
    last = comps[last_i]
    cut = min(last.cut, upto)
    if last.hole_list is None:
        ev = sess.events
        last.hole_list = (
            []
            if last.rep_all
            else [
                p
                for p in range(last.cut)
                if ev[p].sent and ev[p].role is not None and p not in last.represents
            ]
        )
    holes = last.hole_list[: bisect_left(last.hole_list, upto)]  # (ascending: a prefix, not a pass per call)
    return _Context(None, [last_i], ix.tokens[upto] - ix.tokens[cut] + last.tokens, holes, cut, upto)


def _recorded_context(sess: Session, upto: int) -> _Context:
    comps = [c for c in sess.recorded if c.after <= upto]
    if sess.simulator == "event_ranges":
        key = tuple(i for i, c in enumerate(sess.recorded) if c.after <= upto)
        tracker = sess.trackers.get(key)
        if tracker is None:
            tracker = sess.trackers[key] = _AdkTracker(sess.events, comps, sess.rewinds)
        return tracker.at(upto)
    return _cut_context(sess, comps, upto)


# ---------------------------------------------------------------------------------------- results


@dataclass(slots=True)
class CallPoint:
    """One model call of the replay."""

    seq: int  # the record the call produced
    line: int
    turn: int
    prompt_tokens: int
    raw_events: int
    summaries: int
    holes: list[int]  # seqs missing from this prompt, represented by nothing
    live_question_lost: int | None  # seq of this turn's question when it is not in the prompt raw
    over_window: bool = False


@dataclass(slots=True)
class CompactionPoint:
    """One simulated (or recorded) compaction."""

    after_seq: int | None  # appended after this event (None: before any)
    turn: int
    trigger: str
    when: str
    summarized_seqs: list[int]  # what its summarizer was handed
    seeded_from: int | None  # index (into the series' compactions) of the summary folded in
    range_seqs: list[int]  # events whose timestamps its range spans (ADK) / it removes (pi)
    prompt_before: int
    prompt_after: int
    summary_tokens: int
    summarizer_requests: int = 1


@dataclass(slots=True)
class SimWarning:
    code: str
    message: str


@dataclass(slots=True)
class Series:
    label: str  # "recorded" | the policy's name
    policy: dict[str, Any]
    calls: list[CallPoint]
    compactions: list[CompactionPoint]
    warnings: list[SimWarning] = field(default_factory=list)
    next_holes: list[int] = field(default_factory=list)  # holes in the request after the last event
    # pi: turns that ended over the threshold where the cut found nothing to summarize (everything
    # there fits in keepRecentTokens), so no compaction was made
    nothing_to_cut: list[int] = field(default_factory=list)
    coverage_known: bool = True  # False: holes and lost questions are not modelled (see Session.exact)

    @property
    def summarizer_calls(self) -> int:
        return sum(c.summarizer_requests for c in self.compactions)

    @property
    def holes(self) -> list[int]:
        """Seqs missing from some model call's prompt (or from the next request) and represented
        by no summary."""
        out: set[int] = set(self.next_holes)
        for c in self.calls:
            out.update(c.holes)
        return sorted(out)

    @property
    def live_questions_lost(self) -> list[tuple[int, int]]:
        """(question seq, call seq) for every call whose own question is not in its prompt raw."""
        return [(c.live_question_lost, c.seq) for c in self.calls if c.live_question_lost is not None]

    @property
    def peak(self) -> int:
        return max((c.prompt_tokens for c in self.calls), default=0)

    @property
    def final(self) -> int:
        return self.calls[-1].prompt_tokens if self.calls else 0


@dataclass(slots=True)
class Simulation:
    session: str
    format: str
    events: int
    turns: int
    summary_size: str
    baseline: Series
    whatif: Series
    warnings: list[SimWarning]


# ---------------------------------------------------------------------------------------- pricing


class _Pricer:
    """Prompt tokens of a simulated context at a call: the recorded prompt, adjusted by the
    difference between the simulated and the recorded context."""

    def __init__(self, sess: Session, sim_tokens: Callable[[int], int]) -> None:
        self.sess = sess
        self._rec: dict[int, _Context] = {}
        self._sim_tokens = sim_tokens  # a simulated summary's size, by its index

    def recorded(self, pos: int) -> _Context:
        if pos not in self._rec:
            self._rec[pos] = _recorded_context(self.sess, pos)
        return self._rec[pos]

    def price(
        self, pos: int, ctx: _Context, summary_key: Callable[[int], Any], rec_key: Callable[[int], Any]
    ) -> int:
        e = self.sess.events[pos] if pos < len(self.sess.events) else None
        if e is None or e.prompt is None or not self.sess.modelled(pos):
            return self.sess.overhead + ctx.content_tokens
        rec = self.recorded(pos)
        ev = self.sess.events
        # What the simulated context sends raw and the recorded one does not, less the reverse:
        # the tokens of the one's raw events less the other's (each a prefix sum, or counted by
        # the tracker that built it), not a pass over their differences at every call.
        ix = _index(self.sess)
        delta = ctx.raw_tokens(ix, ev) - rec.raw_tokens(ix, ev)
        sim_s = {summary_key(i): i for i in ctx.summaries}
        rec_s = {rec_key(i): i for i in rec.summaries}
        for k, i in sim_s.items():
            if k not in rec_s:
                delta += self._sim_tokens(i)
        for k, i in rec_s.items():
            if k not in sim_s:
                delta -= self.sess.recorded[i].tokens
        return max(0, e.prompt + delta)


# ---------------------------------------------------------------------------------------- replay


def _summary_tokens(size: SummarySize, sess: Session, summarized: int) -> int:
    if size.tokens is not None:
        return size.tokens
    if size.ratio is not None:
        return max(1, int(summarized * size.ratio))
    if sess.summary_tokens:
        return int(statistics.median(sess.summary_tokens))
    return DEFAULT_SUMMARY_TOKENS


def _call_point(
    sess: Session, pos: int, ctx: _Context, prompt: int, window: int | None, *, modelled: bool = True
) -> CallPoint:
    """A model call's point; where the replay does not model the prompt (`Session.modelled`), no
    holes and no lost question (not computed: a long session's holes per call are quadratic)."""
    ev = sess.events
    e = ev[pos]
    ix = _index(sess)
    qpos = ix.question.get(e.turn)
    lost = ev[qpos].seq if modelled and qpos is not None and qpos < pos and not ctx.has_raw(qpos, ev) else None
    return CallPoint(
        e.seq,
        e.line,
        e.turn,
        prompt,
        ctx.raw_count(ix),
        len(ctx.summaries),
        [ev[p].seq for p in ctx.holes] if modelled else [],
        lost,
        over_window=window is not None and prompt > window,
    )


def _ends_invocation(events: list[SimEvent], pos: int) -> bool:
    """The last event of a turn (ADK: of a run, which a resumed invocation's next run follows)."""
    return (
        pos == len(events) - 1
        or events[pos + 1].inv != events[pos].inv
        or events[pos + 1].turn != events[pos].turn
    )


def baseline(sess: Session, window: int | None = None) -> Series:
    """What the session actually did: its recorded prompts and compactions."""
    ev = sess.events
    calls: list[CallPoint] = []
    for e in ev:
        if not e.is_call:
            continue
        ctx = _recorded_context(sess, e.pos)
        prompt = e.prompt if e.prompt is not None else sess.overhead + ctx.content_tokens
        calls.append(_call_point(sess, e.pos, ctx, prompt, window, modelled=sess.modelled(e.pos)))
    comps: list[CompactionPoint] = []
    for i, c in enumerate(sess.recorded):
        with_it = _recorded_context(sess, c.after)
        if sess.simulator == "event_ranges":
            prior = _adk_context(ev, sess.recorded[:i], c.after, sess.rewinds)
            rng = sorted(ev[p].seq for p in range(c.after) if c.start <= ev[p].ts <= c.end)
            inputs = [ev[p].seq for p in c.inputs]
        else:
            prior = _cut_context(sess, sess.recorded[:i], c.after)
            rng = [ev[p].seq for p in range(min(c.cut, c.after))]
            inputs = [ev[p].seq for p in sorted(c.represents)]
        turn = ev[c.after - 1].turn if c.after else 0
        comps.append(
            CompactionPoint(
                ev[c.after - 1].seq if c.after else None,
                turn,
                "recorded",
                "recorded",
                inputs,
                None,
                rng,
                sess.overhead + prior.content_tokens,
                sess.overhead + with_it.content_tokens,
                c.tokens,
            )
        )
    end = _recorded_context(sess, len(ev))
    known = sess.modelled(len(ev))
    return Series(
        "recorded",
        {},
        calls,
        comps,
        next_holes=[ev[p].seq for p in end.holes] if known else [],
        coverage_known=known,
    )


def simulate(
    led: Ledger,
    policy: Policy,
    summary: SummarySize = SummarySize(),
    count: Callable[[list[str]], list[int]] | None = None,
    session: Session | None = None,
) -> Simulation:
    """Replay `led` under `policy`; the baseline (what the session did) comes along."""
    sess = session or prepare(led, count)
    window = policy.context_window if isinstance(policy, PiPolicy) else sess.settings.get("window")
    base = baseline(sess, window)
    if isinstance(policy, PiPolicy):
        what = _replay_pi(sess, policy, summary)
    else:
        what = _replay_adk(sess, policy, summary)
    warnings = policy_warnings(sess, policy) + run_warnings(what, policy)
    what.warnings = warnings
    turns = len({e.inv for e in sess.events})
    return Simulation(
        sess.name, sess.format, len(sess.events), turns, summary.describe(), base, what, warnings
    )


def _valid_cut(ev: list[SimEvent], cut: int, upto: int) -> int:
    """The first valid cut point at or after `cut`: a user or assistant message, never a tool
    result (compaction.js findValidCutPoints); `upto` when there is none before it."""
    while cut < upto and ev[cut].role not in ("user", "assistant"):
        cut += 1
    return cut


def _pi_trigger(
    ev: list[SimEvent], e: SimEvent, last_total: int, threshold: int, recovering: bool
) -> tuple[tuple[str, str] | None, bool]:
    """Whether pi compacts after this event, as (trigger, when) or None, and whether an overflow
    compaction was made for this prompt (`_overflowRecoveryAttempted`) from then on."""
    if e.overflow:
        # The refusal ends the run: pi compacts at once and retries, once per prompt; a second
        # refusal gets no compaction, nor a threshold check (agent-session.js:1398-1416).
        return (None if recovering else ("overflow", "overflow")), True
    if not _ends_invocation(ev, e.pos) or last_total <= threshold:
        return None, recovering
    if e.calls and e.pos == len(ev) - 1:
        # The session ends on a call whose tools never answered: pi was stopped while they ran,
        # so its run had no agent_end (agent-session.js:327-341); a restarted pi checks the same
        # answer only before its next prompt (:755-757), and none came.
        return None, recovering
    if e.aborted:
        # An aborted run is not checked (agent-session.js:1381-1382), and the check before the
        # next prompt reads the aborted answer's usage, which is zero (:755-757, :1440-1443).
        return None, recovering
    return ("threshold", "turn_end"), recovering  # after agent_end: the last reply is over the threshold


def _pi_failed_total(ev: list[SimEvent], e: SimEvent, answered: tuple[int, int] | None, compacted_at: int) -> int:
    """What pi reads as the context after a failed answer, which has no usage of its own: the last
    answer's usage and pi's own estimates of the messages after it (compaction.js:120-146; the
    failed attempts it retried are gone from its messages, agent-session.js:1971-1975); 0 (no
    compaction) when no answer has usage since the latest compaction (:1421-1438)."""
    if answered is None or answered[0] < compacted_at:
        return 0
    pos, total = answered
    return total + sum(ev[p].chars4 for p in range(pos + 1, e.pos) if not ev[p].errored) + e.chars4


def _pi_cut(ev: list[SimEvent], prev_cut: int, upto: int, keep_recent: int) -> int:
    """Where pi cuts: the newest events whose own chars/4 estimates reach `keep_recent` are kept
    (pi walks its estimates, not a tokenizer's), moved to a valid cut point."""
    acc = 0
    cut = prev_cut
    for p in range(upto - 1, prev_cut - 1, -1):
        acc += ev[p].chars4
        if acc >= keep_recent:
            cut = p
            break
    cut = _valid_cut(ev, cut, upto)
    if cut >= upto:
        # No valid cut point at or after the budget: pi keeps its default, the first valid cut
        # point from the previous boundary on (compaction.js:311), else that boundary (:307).
        cut = _valid_cut(ev, prev_cut, upto)
        cut = prev_cut if cut >= upto else cut
    return cut


def _pi_summary_tokens(sess: Session, comps: list[_CutComp], prev_cut: int, cut: int, size: SummarySize) -> int:
    """The size of the summary pi writes at `cut`: the one it recorded there when the policy sets
    none, else the policy's size of what it summarizes (the events since the previous cut and the
    previous summary)."""
    ev = sess.events
    summarized = sum(ev[p].tokens for p in range(prev_cut, cut)) + (comps[-1].tokens if comps else 0)
    tokens = _summary_tokens(size, sess, summarized)
    rec_match = next((r for r in sess.recorded if isinstance(r, _CutComp) and r.cut == cut), None)
    if rec_match is not None and size.tokens is None and size.ratio is None:
        tokens = rec_match.tokens
    return tokens


def _pi_splits_turn(ev: list[SimEvent], prev_cut: int, cut: int) -> bool:
    """A split turn: the cut is not at a question and the turn's question is after the previous
    boundary (findTurnStartIndex searches back to it only, compaction.js:348)."""
    return not ev[cut].question and any(ev[p].question for p in range(prev_cut, cut))


def _replay_pi(sess: Session, pol: PiPolicy, size: SummarySize) -> Series:
    ev = sess.events
    comps: list[_CutComp] = []
    points: list[CompactionPoint] = []
    calls: list[CallPoint] = []
    pricer = _Pricer(sess, lambda i: comps[i].tokens)

    def skey(i: int) -> Any:
        return ("cut", comps[i].cut)

    def rkey(i: int) -> Any:
        return sess.recorded[i].key()

    last_total = 0
    answered: tuple[int, int] | None = None  # the last answer with usage: (position, its total)
    nothing_to_cut: list[int] = []
    recovering = False  # an overflow compaction was made for this prompt (_overflowRecoveryAttempted)
    for e in ev:
        if e.is_call:
            ctx = _cut_context(sess, comps, e.pos)
            prompt = pricer.price(e.pos, ctx, skey, rkey)
            calls.append(_call_point(sess, e.pos, ctx, prompt, pol.context_window))
            e_out = e.output or e.tokens
            last_total = prompt + e_out
            if e.errored:
                last_total = _pi_failed_total(ev, e, answered, comps[-1].after if comps else 0)
            elif not e.aborted:
                answered = (e.pos, last_total)
        if e.role == "user" or (e.role == "assistant" and not e.errored):
            recovering = False  # agent-session.js:273-274, 314-315
        fired, recovering = _pi_trigger(ev, e, last_total, pol.threshold, recovering)
        if fired is None:
            continue
        trigger, when = fired
        upto = e.pos + 1
        prev_cut = comps[-1].cut if comps else 0
        cut = _pi_cut(ev, prev_cut, upto, pol.keep_recent_tokens)
        if cut <= prev_cut:
            # Nothing new before the cut: pi compacts all the same, its summarizer handed only the
            # previous summary (compaction.js:499-503 summarizes nothing; agent-session.js:1476-1487
            # gives up only when prepareCompaction returns nothing).
            nothing_to_cut.append(e.turn)
            cut = prev_cut
        q = next((x.pos for x in ev[upto:] if x.is_call), None)

        def at(ctx: _Context, q: int | None = q) -> int:
            return pricer.price(q, ctx, skey, rkey) if q is not None else sess.overhead + ctx.content_tokens

        before = _cut_context(sess, comps, upto)
        tokens = _pi_summary_tokens(sess, comps, prev_cut, cut, size)
        split = _pi_splits_turn(ev, prev_cut, cut)
        comps.append(_CutComp(upto, cut, set(), tokens, trigger, when, split, rep_all=True))
        after = _cut_context(sess, comps, upto)
        points.append(
            CompactionPoint(
                e.seq,
                e.turn,
                trigger,
                when,
                [ev[p].seq for p in range(prev_cut, cut)],
                len(points) - 1 if len(points) else None,
                [ev[p].seq for p in range(prev_cut, cut)],
                at(before),
                at(after),
                tokens,
                2 if split else 1,
            )
        )
        last_total = at(after)
    end = _cut_context(sess, comps, len(ev))
    return Series(
        pol.name,
        pol.params(),
        calls,
        points,
        next_holes=[ev[p].seq for p in end.holes],
        nothing_to_cut=nothing_to_cut,
    )


# ---- ADK


def _safe_split(cands: list[SimEvent], retention: int) -> int:
    """ADK's `_safe_token_compaction_split_index`: move the split earlier so a retained response
    keeps its call."""
    initial = len(cands) - retention
    if initial <= 0:
        return 0
    unmatched: set[str] = set()
    for i in range(len(cands) - 1, -1, -1):
        unmatched |= cands[i].results
        unmatched -= cands[i].calls
        if not unmatched and i <= initial:
            return i
    return 0


class _WindowCalls:
    """The calls of a window of events, `events[positions[i]]` for i from 0 (`_self_contained`'s
    two passes, read as the window grows; `positions` may grow meanwhile). Where
    `_self_contained` passes over the window with the calls it takes as never answerable (`dead`)
    left out, the calls still open after event i are those open in the pass that leaves none out,
    less `dead`; and `dead` are calls never answered, so still open at the window's end. So a
    place is closed for `dead` when no call open there is answered later in the window (the spans
    from a call's opening to its answer, `covered`, merged) and every call open at the end that
    opened at or before it is in `dead` (`open_since`)."""

    def __init__(self, events: list[SimEvent], positions: Sequence[int]) -> None:
        self.events, self.positions = events, positions
        self.end = 0  # the window's first `end` events read
        self.open_since: dict[str, int] = {}  # each call open at the end: where it opened (in the window)
        self.made_by: dict[str, set[str]] = {}  # each call: the invocations of the window's events making it
        self.covered_starts: list[int] = []  # the merged spans (start inclusive, end exclusive) where a
        self.covered_ends: list[int] = []  # call that is answered later in the window is open

    def extend(self, end: int) -> None:
        opened, made_by, events, positions = self.open_since, self.made_by, self.events, self.positions
        for i in range(self.end, end):
            e = events[positions[i]]
            for c in e.results:
                o = opened.pop(c, None)
                if o is not None:
                    self._cover(o, i)
            for c in e.calls:
                opened.setdefault(c, i)
                made_by.setdefault(c, set()).add(e.inv)
        self.end = max(self.end, end)

    def _cover(self, a: int, b: int) -> None:
        """Add the span [a, b) (b: the place being read, beyond every span so far)."""
        starts, ends = self.covered_starts, self.covered_ends
        while ends and ends[-1] >= a:
            a = min(a, starts.pop())
            b = max(b, ends.pop())
        starts.append(a)
        ends.append(b)

    def safe(self, below: int) -> int:
        """1 + the last place before `below` (and within what was read) that no span covers; 0
        when there is none: the length of the prefix `_self_contained`'s pass keeps when the calls
        open at the end that opened before `below` are left out."""
        i = min(below, self.end) - 1
        k = bisect_right(self.covered_starts, i) - 1
        if i >= 0 and k >= 0 and i < self.covered_ends[k]:
            i = self.covered_starts[k] - 1
        return max(0, i + 1)

    def contained(self, n: int, seen: _Invocations) -> int:
        """`len(_self_contained(window, present))` for the window's first `n` events, `present`
        being `events[:seen.upto]` (its newest invocation, the calls it answers and its
        long-running ones as `seen` keeps them)."""
        if n < self.end:
            raise ValueError("a window read further than asked")
        self.extend(n)
        opened = self.open_since
        safe = self.safe(min(opened.values(), default=n))
        at = self.positions
        if safe == n or (safe > 0 and self.events[at[safe - 1]].inv != self.events[at[safe]].inv):
            return safe
        newest = self.events[seen.upto - 1].inv if seen.upto else None
        answered, protected = seen.answered, seen.protected
        dead = {
            c for c in opened
            if c not in answered and c not in protected and any(inv != newest for inv in self.made_by[c])
        }  # fmt: skip
        if not dead:
            return safe
        return max(safe, self.safe(min((o for c, o in opened.items() if c not in dead), default=n)))


class _Later:
    """The positions of `events[:upto]` whose time is after a bar (ascending), kept up to date as
    `upto` grows while the bar stays (ADK's token-threshold candidates, `token_pass`), with the
    calls of the prefix of them last read (`_WindowCalls`)."""

    def __init__(self, events: list[SimEvent], by_time: _ByTime) -> None:
        self.events, self.by_time = events, by_time
        self.bar: float | None = None
        self.upto = 0
        self.positions: list[int] = []
        self.first_call: dict[str, int] = {}  # each call id: the first of the positions whose event makes it
        self.calls: _WindowCalls | None = None

    def after(self, bar: float, upto: int) -> list[int]:
        events = self.events
        if bar != self.bar or upto < self.upto:
            t = self.by_time
            self.positions, self.first_call = sorted(p for p in t.order[bisect_right(t.times, bar) :] if p < upto), {}
            self.bar, self.calls, new = bar, None, 0
        else:
            new = len(self.positions)
            self.positions.extend(p for p in range(self.upto, upto) if events[p].ts > bar)
        first_call = self.first_call
        for i in range(new, len(self.positions)):
            for c in events[self.positions[i]].calls:
                first_call.setdefault(c, i)
        self.upto = upto
        return self.positions

    def split(self, retention: int) -> int:
        """`_safe_split` of the candidates, walking from the end only while a call can still
        match: a result whose call no candidate at or before it makes stays unmatched to the
        start, so the split is 0 at once (the whole walk, at every call, was most of a long
        token-threshold replay where a kept response answers a call already summarized)."""
        ps, events, first_call = self.positions, self.events, self.first_call
        initial = len(ps) - retention
        if initial <= 0:
            return 0
        unmatched: set[str] = set()
        for i in range(len(ps) - 1, -1, -1):
            e = events[ps[i]]
            for r in e.results:
                k = first_call.get(r)
                if k is None or k > i:
                    return 0
            unmatched |= e.results
            unmatched -= e.calls
            if not unmatched and i <= initial:
                return i
        return 0

    def contained(self, n: int, seen: _Invocations) -> int:
        """`len(_self_contained(...))` of the first `n` positions (`_WindowCalls.contained`)."""
        wc = self.calls
        if wc is None or wc.end > n:
            wc = self.calls = _WindowCalls(self.events, self.positions)
        return wc.contained(n, seen)


class _EventsAt(Sequence[SimEvent]):
    """The events at `positions`, without a list of them made (a compaction's inputs: listed only
    once the gate said yes)."""

    __slots__ = ("events", "positions")

    def __init__(self, events: list[SimEvent], positions: list[int]) -> None:
        self.events, self.positions = events, positions

    def __len__(self) -> int:
        return len(self.positions)

    def __getitem__(self, i: Any) -> Any:  # (an index only: no caller slices it)
        return self.events[self.positions[i]]


def _self_contained(window: list[SimEvent], present: list[SimEvent]) -> list[SimEvent]:
    """ADK's `_longest_self_contained_prefix`: end where no call is open; a second pass ignores
    calls that provably can never be answered (no response anywhere, not long-running, not in the
    newest invocation)."""

    def run(dead: set[str]) -> int:
        open_ids: set[str] = set()
        safe = 0
        for i, e in enumerate(window):
            open_ids -= e.results
            open_ids |= e.calls - dead
            if not open_ids:
                safe = i + 1
        return safe

    safe = run(set())
    if safe == len(window):
        return window
    if safe > 0 and window[safe - 1].inv != window[safe].inv:
        return window[:safe]
    newest = present[-1].inv if present else None
    answered: set[str] = set()
    protected: set[str] = set()
    for e in present:
        answered |= e.results
        protected |= e.long_running
    dead = {c for e in window if e.inv != newest for c in e.calls if c not in answered and c not in protected}
    if not dead:
        return window[:safe]
    return window[: max(safe, run(dead))]


def _latest_response_cut(ev: list[SimEvent], raw: list[int]) -> int | None:
    """Where the contents end once the last one answers a call made before the one just before
    it: the index in `raw` of the call's event (None: no such cut)."""
    if len(raw) < 2 or not ev[raw[-1]].results:
        return None
    k = next((k for k in range(len(raw) - 2, -1, -1) if ev[raw[k]].calls & ev[raw[-1]].results), None)
    return k if k is not None and k != len(raw) - 2 else None


def _on_branch(event_branch: str | None, branch: str | None) -> bool:
    """ADK's `_is_event_belongs_to_branch` (flows/llm_flows/context/_contents.py:768-781): an
    agent on `branch` reads events of no branch, of its own, and of those it descends from."""
    if not branch or not event_branch:
        return True
    mine, theirs = branch.split("."), event_branch.split(".")
    return mine[: len(theirs)] == theirs


def _replay_adk(sess: Session, pol: AdkPolicy, size: SummarySize) -> Series:
    ev = sess.events
    replay = _replay_adk_run(sess, pol, size)
    end = replay.context(len(ev))
    return Series(
        pol.name, pol.params(), replay.calls, replay.points, next_holes=[ev[p].seq for p in end.holes]
    )


def _parallel_first_calls(ev: list[SimEvent], pos: int) -> list[int]:
    """The model calls a parallel agent's sub-agents start together (agents/parallel_agent.py):
    from `pos`, the consecutive calls of one invocation on distinct sibling branches, each the
    first of its branch in the run. Each ran its request processors before any of them was
    appended, so none saw another's pre-request compaction (an awaited session append yields).
    That is a matter of scheduling, not a rule of ADK's: each pass reads the shared in-memory
    `session.events` unlocked (apps/compaction.py:686), which gains a compaction only once its
    append has finished (sessions/sqlite_session_service.py:556). A sub-agent that awaits I/O
    before its request processors (a callback, a plugin) can check after a sibling's compaction
    landed, and then reads no count past it (apps/compaction.py:295) and may not compact. The
    session does not record which happened; the scripted differential never awaits there."""
    e = ev[pos]
    if e.branch is None or "." not in e.branch:
        return [pos]
    parent = e.branch.rsplit(".", 1)[0]
    in_run = {x.branch for x in ev[:pos] if x.inv == e.inv and x.branch}
    out: list[int] = []
    seen: set[str] = set()
    for x in ev[pos:]:
        b = x.branch
        if not x.is_call or x.inv != e.inv or b is None or "." not in b or b.rsplit(".", 1)[0] != parent:
            break
        if b in seen or b in in_run:
            break
        seen.add(b)
        out.append(x.pos)
    return out or [pos]


def _replay_adk_run(sess: Session, pol: AdkPolicy, size: SummarySize, want: _Wanted | None = None) -> _AdkReplay:
    """ADK's compactions over the session under `pol`, event by event; given `want` (the recorded
    compactions a policy is tried against), the replay stops, `parted`, as soon as the compactions
    it made can no longer be those."""
    ev = sess.events
    replay = _AdkReplay(sess, pol, size)
    if want is not None:
        want.checked = (-1, -1)
    run_failed = False  # the current run of the invocation ended in a node failure
    checked: set[int] = set()  # calls whose pre-request pass already ran (parallel siblings)
    for e in ev:
        if e.pos == 0 or ev[e.pos - 1].inv != e.inv:
            run_failed = False
        run_failed = run_failed or e.failed
        if e.failed and pol.token:
            # the failed call ran it first
            replay.token_pass(e.pos, agent=e.author, branch=e.branch, when="pre_request")
        if e.is_call:
            if pol.token and e.pos not in checked:
                group = _parallel_first_calls(ev, e.pos)
                if len(group) > 1:
                    replay.concurrent_token_passes(e.pos, group)
                    checked.update(group)
                else:
                    replay.token_pass(e.pos, agent=e.author, branch=e.branch, when="pre_request")
            replay.model_call(e.pos)
        if _ends_invocation(ev, e.pos) and not run_failed and e.rewind_to is None:
            # (`Runner.rewind_async` appends its event and compacts nothing, runners.py:1399-1437)
            # A failed run raises out of `Runner.run_async` before its post-invocation compaction
            # (google/adk/runners.py, `run_async`: `_run_post_invocation_compaction` follows the
            # event loop; a node failure is an error event without content, `_node_runner.py`).
            upto = e.pos + 1
            fired = pol.token and replay.token_pass(upto, agent=None, when="post_invocation")
            if not fired and pol.sliding:
                replay.sliding_pass(upto)
        if want is not None and want.parted(replay.comps, e.pos + 1):
            replay.parted = True
            break
    return replay


class _AdkReplay:
    """One ADK replay: the simulated compactions so far, the calls priced and the points taken."""

    def __init__(self, sess: Session, pol: AdkPolicy, size: SummarySize) -> None:
        self.sess, self.pol, self.size = sess, pol, size
        self.ev = sess.events
        self.comps: list[_AdkComp] = []
        self.points: list[CompactionPoint] = []
        self.calls: list[CallPoint] = []
        self.sim_prompt: dict[int, int] = {}
        self.pricer = _Pricer(sess, lambda i: self.comps[i].tokens)
        self.rec_by_key = {c.key(): i for i, c in enumerate(sess.recorded) if isinstance(c, _AdkComp)}
        # The recorded compaction a simulated one is (its range, appended at the same point): a
        # range can be summarized again later (after a rewind dropped the first summary of it).
        self.rec_at = {(c.key(), c.after): i for i, c in enumerate(sess.recorded) if isinstance(c, _AdkComp)}
        # A simulated summary's serialized size: its tokens at the session's own characters per token.
        sized = [e for e in self.ev if e.chars > 0 and e.tokens > 0]
        self.chars_per_token = sum(e.chars for e in sized) / sum(e.tokens for e in sized) if sized else 4.0
        # The prompt under the current compactions, advanced call by call; rebuilt when one is added.
        self.rewinds: _Rewinds | None = sess.rewinds
        self.tracker = _AdkTracker(self.ev, self.comps, self.rewinds)
        self.reloaded: dict[int, list[SimEvent]] = {}  # run input position -> the events before it, reloaded
        self.reloaded_seqs: dict[int, list[int]] = {}  # the same, their seqs
        self.parted = False  # stopped: its compactions could no longer be the wanted ones
        # How many events from the first are in seq order (non-decreasing): up to there, ADK's
        # reloaded list is the append order, so `present(upto)` is `ev[:upto]` when no rewind drops any.
        orders = _orders(sess)
        self.in_seq_order = orders.in_seq_order
        self.seqs: list[int] | None = None  # every event's seq, in append order (once asked for)
        # What the sliding window and the worth-compacting gate read, kept up to date as the replay
        # goes (where `present(upto)` is `ev[:upto]` and every time a number: see `_incremental`).
        self.invocations = _Invocations(self.ev)
        self.by_time = orders.by_time
        self.later = _Later(self.ev, self.by_time) if self.by_time is not None else None

    def present(self, upto: int) -> list[SimEvent]:
        """The session's events as ADK holds them once `upto` events were appended: a run starts
        by reloading the session (runners.py:992, `get_session`: by timestamp, ties by rowid or by
        event id, sessions/database_session_service.py:776), which is the ledger's order, and
        appends its own events to that list as they come (`self.ev` is the append order)."""
        ev = self.ev
        q = next((p for p in range(upto - 1, -1, -1) if ev[p].question), 0)
        if q not in self.reloaded:
            # (a stable sort of a prefix already in seq order is that prefix)
            self.reloaded[q] = ev[:q] if q <= self.in_seq_order else sorted(ev[:q], key=lambda e: e.seq)
        if self.rewinds is not None:  # (what the rewinds appended so far drop, ADK never reads)
            gone = self.rewinds.live(upto).events
            return [e for e in self.reloaded[q] if e.pos not in gone] + [e for e in ev[q:upto] if e.pos not in gone]
        return self.reloaded[q] + ev[q:upto]

    def live(self, upto: int) -> _Live | None:
        """What the rewinds appended before `upto` leave (None: the session has none)."""
        return self.rewinds.live(upto) if self.rewinds is not None else None

    def alive(self, upto: int) -> list[int]:
        """The surviving compactions among those no rewind dropped, at `upto`."""
        live = self.live(upto)
        return _surviving(self.comps, live.compactions(self.comps) if live is not None else None)

    def context(self, upto: int) -> _Context:
        if upto < self.tracker.upto:
            return _adk_context(self.ev, self.comps, upto, self.rewinds)
        return self.tracker.at(upto)

    def summary_key(self, i: int) -> Any:
        return self.comps[i].key()

    def recorded_key(self, i: int) -> Any:
        return self.sess.recorded[i].key()

    def model_call(self, pos: int) -> None:
        ctx = self.context(pos)
        prompt = self.pricer.price(pos, ctx, self.summary_key, self.recorded_key)
        self.sim_prompt[pos] = prompt
        self.calls.append(_call_point(self.sess, pos, ctx, prompt, None))

    def signal(self, upto: int, *, agent: str | None, branch: str | None = None) -> int:
        """ADK's `_latest_prompt_token_count` (apps/compaction.py:277-308): the latest prompt count
        (by this agent) among the events held after the last compaction in the list ADK holds
        (`present`), else an estimate of the contents (chars/4 over the assembled contents)."""
        for e in reversed(self.held_since_compaction(upto)):
            if e.is_call and e.pos in self.sim_prompt and (agent is None or e.author == agent):
                return self.sim_prompt[e.pos]
        return self.estimate(upto, agent, branch)

    def held_since_compaction(self, upto: int) -> list[SimEvent]:
        """The events `present(upto)` holds after its last compaction event. A compaction made
        in the run in progress sits where it was appended; one made before was reloaded with the
        rest, in the service's order (a recorded one: its own place; a simulated one: after the
        event appended just before it), so events tied with it may come after it in that list."""
        ev = self.ev
        q = next((p for p in range(upto - 1, -1, -1) if ev[p].question), 0)
        live = self.live(upto)
        comps = self.comps if live is None else [c for c in self.comps if not live.dropped(c)]
        in_run = [c.after for c in comps if q < c.after <= upto]
        if in_run:
            held = ev[max(in_run) : upto]
        else:
            last = max((self.held_seq(c) for c in comps if c.after <= q), default=-math.inf)
            if q <= self.in_seq_order:  # (the reloaded events are `ev[:q]`: see `present`)
                if self.seqs is None:
                    self.seqs = [e.seq for e in ev]
                held = ev[bisect_right(self.seqs, last, 0, q) : upto]
            else:
                self.present(upto)
                reloaded = self.reloaded[q]  # by seq
                if q not in self.reloaded_seqs:
                    self.reloaded_seqs[q] = [e.seq for e in reloaded]
                held = reloaded[bisect_right(self.reloaded_seqs[q], last) :] + ev[q:upto]
        return held if live is None else [e for e in held if e.pos not in live.events]

    def held_seq(self, c: _AdkComp) -> float:
        """Where a compaction sits among reloaded events (by their seqs): a simulated one that is
        a recorded one (`rec_at`) at the recorded one's place."""
        k = self.rec_at.get((c.key(), c.after))
        rec = self.sess.recorded[k] if k is not None else None
        return held_seq(rec if rec is not None and rec.seq is not None else c, self.ev)

    def estimate(self, upto: int, agent: str | None, branch: str | None = None) -> int:
        """ADK's `_estimate_prompt_token_count` (apps/compaction.py:244-274): the characters
        `_count_chars_in_content` counts over the contents `agent`'s next request carries on its
        `branch` (raw events of its branch and those it descends from, `_contents.py:768-781`;
        another agent's as the context text it reads them as, `_contents.py:607-629`; and
        summaries), floor-divided by 4; 0 (no count, no compaction) when there are none."""
        ctx = self.context(upto)
        ev = self.ev
        raw = sorted(
            (p for p in ctx.raw_set(ev) if _on_branch(ev[p].branch, branch)), key=lambda p: (ev[p].ts, p)
        )
        summaries = ctx.summaries
        cut = _latest_response_cut(ev, raw)
        if cut is not None:
            # `_rearrange_events_for_latest_function_response` (tools/_rearranger.py:378-440): a
            # request ending in the answer to an older call drops what came between them.
            raw = [*raw[: cut + 1], raw[-1]]
            summaries = [i for i in summaries if self.comps[i].end <= ev[raw[cut]].ts]
        chars = sum(
            ev[p].counted_as_context if agent and ev[p].author not in (agent, "user") else ev[p].counted
            for p in raw
        )
        chars += sum(self.comps[i].counted for i in summaries)
        return chars // 4

    def prompt_at(self, upto: int, ctx: _Context) -> int:
        # Priced against the next call's recorded prompt: its recorded context minus what was
        # appended after `upto` (see _Pricer).
        q = next((e.pos for e in self.ev[upto:] if e.is_call), None)
        if q is None:
            return self.sess.overhead + ctx.content_tokens
        return self.pricer.price(q, ctx, self.summary_key, self.recorded_key)

    def add(self, c: _AdkComp, upto: int) -> None:
        ev = self.ev
        p_before = self.prompt_at(upto, self.context(upto))
        self.comps.append(c)
        self.tracker = _AdkTracker(ev, self.comps, self.rewinds)
        p_after = self.prompt_at(upto, self.context(upto))
        self.points.append(
            CompactionPoint(
                ev[upto - 1].seq if upto else None,
                ev[upto - 1].turn,
                c.trigger,
                c.when,
                [ev[p].seq for p in c.inputs],
                c.seed,
                sorted(ev[p].seq for p in range(upto) if c.start <= ev[p].ts <= c.end),
                p_before,
                p_after,
                c.tokens,
            )
        )

    def make(
        self, inputs: list[SimEvent], *, seed: int | None, upto: int, trigger: str, when: str
    ) -> _AdkComp:
        comps, sess = self.comps, self.sess
        start = comps[seed].start if seed is not None else inputs[0].ts
        end = inputs[-1].ts
        rep = {e.pos for e in inputs} | (comps[seed].represents if seed is not None else set())
        summarized = sum(e.tokens for e in inputs) + (comps[seed].tokens if seed is not None else 0)
        tokens = _summary_tokens(self.size, sess, summarized)
        chars = round(tokens * self.chars_per_token)
        counted = 4 * tokens
        if self.size.tokens is None and self.size.ratio is None and (start, end) in self.rec_by_key:
            match = sess.recorded[self.rec_by_key[(start, end)]]
            tokens, chars, counted = match.tokens, match.chars or chars, match.counted
        # (the recorded compaction it is, appended at this point, sits at that one's place among the
        # reloaded events: `held_seq`, which a rewind's span is told by)
        at = self.rec_at.get(((start, end), upto))
        return _AdkComp(
            upto, start, end, [e.pos for e in inputs], rep, tokens, trigger, when, seed,
            seq=sess.recorded[at].seq if at is not None else None, chars=chars, counted=counted,
        )  # fmt: skip

    def worth(self, start: float, end: float, upto: int) -> bool:
        # ADK's `_is_range_worth_compacting` (apps/compaction.py), in its own unit: what the range
        # would remove from `_process_compaction_events` (serialized content sizes), priced with an
        # empty summary, must exceed the latest surviving summary's size.
        if not self.pol.progress_gate:
            return True
        comps = self.comps
        weightless = _AdkComp(upto, start, end, [], set(), 0, "", "", chars=_EMPTY_SUMMARY_CHARS)
        live = self.live(upto)
        if self._incremental(upto) and self.by_time is not None and _finite_ranges([*comps, weightless]):
            removable = _removable_chars(self.ev, comps, weightless, upto, self.by_time)
        else:
            removable = _compacted_chars(self.ev, comps, upto, live) - _compacted_chars(
                self.ev, [*comps, weightless], upto, live
            )
        alive = self.alive(upto)
        prev = comps[alive[-1]].chars if alive else 0
        return removable > prev

    def token_pass(self, upto: int, *, agent: str | None, when: str, branch: str | None = None) -> bool:
        pol = self.pol
        assert pol.token_threshold is not None and pol.event_retention_size is not None
        if self.signal(upto, agent=agent, branch=branch) < pol.token_threshold:
            return False
        alive = self.alive(upto)
        latest = alive[-1] if alive else None
        last_end = self.comps[latest].end if latest is not None else 0.0
        if self._incremental(upto) and self.later is not None and math.isfinite(last_end):
            # (the same, from the candidates and their calls kept up to date: see `_incremental`)
            ps = self.later.after(last_end, upto)
            if len(ps) <= pol.event_retention_size:
                return False
            n = len(ps) if pol.event_retention_size == 0 else self.later.split(pol.event_retention_size)
            self.invocations.advance(upto)
            n = self.later.contained(n, self.invocations)
            return bool(n) and self.compact(_EventsAt(self.ev, ps[:n]), seed=latest, upto=upto, trigger="token_threshold", when=when)
        present = self.present(upto)
        cands = [e for e in present if e.ts > last_end]
        if len(cands) <= pol.event_retention_size:
            return False
        if pol.event_retention_size == 0:
            chosen = cands
        else:
            chosen = cands[: _safe_split(cands, pol.event_retention_size)]
        chosen = _self_contained(chosen, present)
        if not chosen:
            return False
        return self.compact(chosen, seed=latest, upto=upto, trigger="token_threshold", when=when)

    def concurrent_token_passes(self, upto: int, calls: list[int]) -> None:
        """Each parallel sub-agent's pre-request token pass over the session as it was before any
        of them compacted; every compaction they make is appended (in their order)."""
        n = len(self.comps)
        made: list[_AdkComp] = []
        for p in calls:
            self.comps[n:] = []
            self.tracker = _AdkTracker(self.ev, self.comps, self.rewinds)
            if self.token_pass(upto, agent=self.ev[p].author, branch=self.ev[p].branch, when="pre_request"):
                made.append(self.comps[-1])
        self.comps[n:] = made
        self.tracker = _AdkTracker(self.ev, self.comps, self.rewinds)

    def _incremental(self, upto: int) -> bool:
        """Whether `present(upto)` is `ev[:upto]` (no rewinds; the reloaded events in append
        order), so the sliding window and the gate may read the kept-up indexes (`_INCREMENTAL`:
        the tests turn them off, to hold them against the whole reading)."""
        return _INCREMENTAL and self.rewinds is None and upto <= self.in_seq_order

    def sliding_pass(self, upto: int) -> bool:
        pol = self.pol
        assert pol.compaction_interval is not None and pol.overlap_size is not None
        if self._incremental(upto) and (not self.comps or math.isfinite(self.comps[-1].end)):
            got = self.invocations.window(upto, self.comps[-1].end if self.comps else 0.0, pol)
            if got is None:
                return False
            first, last = got
            window = self.ev[first : first + self.invocations.self_contained(first, last)]
        else:
            present = self.present(upto)
            got = _sliding_range(present, self.comps, self.live(upto), pol)
            if got is None:
                return False
            first, last = got
            window = _self_contained(present[first : last + 1], present)
        if not window:
            return False
        return self.compact(window, seed=None, upto=upto, trigger="sliding_window", when="post_invocation")

    def compact(
        self, inputs: Sequence[SimEvent], *, seed: int | None, upto: int, trigger: str, when: str
    ) -> bool:
        """Summarize `inputs` (folding in `seed`) when the range is worth compacting (asked
        first: the range's ends are all the gate reads, and a gate that says no makes nothing)."""
        start = self.comps[seed].start if seed is not None else inputs[0].ts
        if not self.worth(start, inputs[-1].ts, upto):
            return False
        self.add(self.make(list(inputs), seed=seed, upto=upto, trigger=trigger, when=when), upto)
        return True


# ---------------------------------------------------------------------------------------- warnings


def _events_before_call_in_turn(sess: Session) -> int:
    """The most events a turn holds at one of its model calls (question, calls, responses)."""
    best = 0
    count: dict[str, int] = {}
    for e in sess.events:
        if e.is_call:
            best = max(best, count.get(e.inv, 0))
        count[e.inv] = count.get(e.inv, 0) + 1
    return best


def _tool_round_events(sess: Session) -> int:
    """Events of one tool round including its turn's question: question + call + response."""
    has_tools = any(e.calls for e in sess.events)
    return 3 if has_tools else 1


def policy_warnings(sess: Session, pol: Policy) -> list[SimWarning]:
    """What the seeds show to be broken in this configuration, before replaying anything."""
    out: list[SimWarning] = []
    if isinstance(pol, PiPolicy):
        return out  # what pi's settings do is read off the replay (run_warnings)
    if pol.token:
        assert pol.event_retention_size is not None
        if pol.event_retention_size == 0:
            out.append(
                SimWarning(
                    "retention_zero",
                    "event_retention_size 0: a pre-request compaction summarizes the turn in progress, its own "
                    "question included (seed 003; ADK corpus retention_zero)",
                )
            )
        else:
            need = _tool_round_events(sess)
            held = _events_before_call_in_turn(sess)
            if pol.event_retention_size < max(need, held):
                out.append(
                    SimWarning(
                        "retention_below_tool_round",
                        f"event_retention_size {pol.event_retention_size} is smaller than one turn's events at a "
                        f"model call here (up to {held}; a tool round alone is {need}: question, call, response): "
                        "a pre-request compaction can summarize the live question",
                    )
                )
        if not pol.progress_gate:
            out.append(
                SimWarning(
                    "no_progress_gate",
                    "no progress gate: nothing stops a compaction that cannot shrink the prompt from running again "
                    "before the next model call (a storm of summarizer calls, seed 003)",
                )
            )
    if pol.sliding and pol.token:
        assert pol.compaction_interval is not None and pol.event_retention_size is not None
        turns = max(1, len({e.inv for e in sess.events}))
        per_turn = len(sess.events) / turns
        between = per_turn * pol.compaction_interval
        if between <= pol.event_retention_size:
            out.append(
                SimWarning(
                    "sliding_starves_tail",
                    f"compaction_interval {pol.compaction_interval} leaves about {between:.0f} events between "
                    f"sliding-window compactions, no more than event_retention_size {pol.event_retention_size} "
                    "holds back: token-threshold compaction never finds a window and the prompt is not bounded "
                    "(seed 003's interval/retention table)",
                )
            )
    return out


def run_warnings(s: Series, pol: Policy) -> list[SimWarning]:
    """What the replay itself shows."""
    out: list[SimWarning] = []
    per_turn: dict[int, int] = {}
    for c in s.compactions:
        per_turn[c.turn] = per_turn.get(c.turn, 0) + c.summarizer_requests
    worst = max(per_turn.items(), key=lambda kv: kv[1], default=None)
    useless = [c for c in s.compactions if c.prompt_after >= c.prompt_before]
    if worst is not None and worst[1] >= 3:
        out.append(
            SimWarning(
                "storm",
                f"{worst[1]} summarizer calls in turn {worst[0]}: a compaction storm",
            )
        )
    if useless:
        out.append(
            SimWarning(
                "no_progress",
                f"{len(useless)} compaction(s) did not shrink the prompt (prompt after >= before)",
            )
        )
    if s.live_questions_lost:
        q = sorted({a for a, _ in s.live_questions_lost})
        out.append(
            SimWarning(
                "live_question_lost",
                f"{len(s.live_questions_lost)} model call(s) lacked their own turn's question "
                f"(question event(s) {', '.join(map(str, q[:8]))}{' …' if len(q) > 8 else ''})",
            )
        )
    if s.holes:
        out.append(SimWarning("holes", f"{len(s.holes)} event(s) left the prompt represented by no summary"))
    piled = max((c.summaries for c in s.calls), default=0)
    if piled >= 3:
        floors = [c.prompt_after for c in s.compactions]
        out.append(
            SimWarning(
                "summaries_accumulate",
                f"up to {piled} summaries in one prompt: ranges that only partly overlap never subsume one "
                "another, so every summary stays and the prompt is not bounded"
                + (
                    f" (after a compaction: {floors[0]:,} at first, {floors[-1]:,} at last)" if floors else ""
                ),
            )
        )
    if isinstance(pol, AdkPolicy) and pol.sliding and pol.token and s.calls:
        token = sum(1 for c in s.compactions if c.trigger == "token_threshold")
        assert pol.token_threshold is not None
        over = sum(1 for c in s.calls if c.prompt_tokens >= pol.token_threshold)
        if token == 0 and over:
            out.append(
                SimWarning(
                    "tail_starved",
                    f"token-threshold compaction never ran although {over} call(s) were over token_threshold "
                    f"{pol.token_threshold}: the sliding window starves it",
                )
            )
    if isinstance(pol, PiPolicy):
        out += pi_warnings(s, pol)
    return out


def pi_threshold(pol: PiPolicy) -> str:
    """pi's compaction threshold as the sum it is (a negative one reads as what it is)."""
    return (
        f"contextWindow − reserveTokens = {pol.context_window:,} − {pol.reserve_tokens:,} = {pol.threshold:,}"
    )


def _compacting_turns(s: Series) -> tuple[int, int, int]:
    """The longest run of consecutive turns that each ended in a compaction: (length, first, last)."""
    best = (0, 0, 0)
    turns = sorted({c.turn for c in s.compactions})
    start = 0
    for i, t in enumerate(turns):
        if i and t != turns[i - 1] + 1:
            start = i
        if i - start + 1 > best[0]:
            best = (i - start + 1, turns[start], t)
    return best


def pi_warnings(s: Series, pol: PiPolicy) -> list[SimWarning]:
    """What pi's settings did in this replay: each claim is read off the replay it sits under."""
    out: list[SimWarning] = []
    k = pol.keep_recent_tokens
    if k >= pol.threshold:
        head = f"keepRecentTokens {k:,} ≥ the threshold ({pi_threshold(pol)})"
        run, first, last = _compacting_turns(s)
        idle = len(s.nothing_to_cut)
        if run >= 3:
            out.append(
                SimWarning(
                    "keep_recent_over_threshold",
                    f"{head}: what a compaction keeps raw is already at the threshold, so the next turn ends over it "
                    f"again: the replay compacts at the end of {run} turns in a row (turns {first}–{last}), a storm"
                    + (f", {idle} of its compactions summarizing nothing new (only the previous summary)" if idle else ""),
                )
            )
        elif idle:
            turns = ", ".join(map(str, s.nothing_to_cut[:8])) + (" …" if idle > 8 else "")
            out.append(
                SimWarning(
                    "keep_recent_over_threshold",
                    f"{head}: {idle} turn(s) ended over the threshold (turn {turns}) with everything not yet "
                    f"summarized inside the {k:,} recent tokens pi keeps raw (by pi's chars/4 estimate), so there was "
                    "nothing new to summarize: pi compacts there all the same, its summarizer handed only the "
                    "previous summary, and nothing bounds the prompt",
                )
            )
    over = [c for c in s.calls if c.over_window]
    if over:
        peak = max(c.prompt_tokens for c in over)
        why = (
            "pi checks only at the end of a turn, so a turn that grows past the window overflows before it compacts"
            if s.compactions
            else "the replay never compacts"
        )
        out.append(
            SimWarning(
                "over_window",
                f"{len(over)} call(s) above the context window {pol.context_window:,} (up to {peak:,} tokens): {why}",
            )
        )
    return out


# ---------------------------------------------------------------------------------------- recorded policy


INFER_MAX_EVENTS = 2000  # inferring a token-threshold policy replays the session many times


Made = tuple[int | None, list[int], float, float]  # moment, summarizer input, timestamp range


class _Wanted:
    """The recorded compactions a replay must make, to stop one as soon as it cannot.

    A replay appends compactions in the order of `after` (the events that existed: it only grows),
    so once `upto` events were replayed, every compaction with `after < upto` is final, and a
    replay that makes the recorded ones has made exactly the recorded ones before `upto`."""

    def __init__(self, sess: Session, rec: list[_AdkComp]) -> None:
        self.sess = sess
        self.made = _wanted(sess, rec)
        self.after = sorted(c.after for c in rec)
        self.checked = (-1, -1)  # (compactions made, recorded ones before upto) at the last check

    def parted(self, comps: list[_AdkComp], upto: int) -> bool:
        if len(comps) > len(self.made):
            return True
        k = bisect_left(self.after, upto)
        if (len(comps), k) == self.checked:
            return False
        self.checked = (len(comps), k)
        final = [c for c in comps if c.after < upto]
        return len(final) != k or _made(self.sess, final) != self.made[:k]


def _reproduces(sess: Session, pol: AdkPolicy, want: _Wanted) -> bool:
    """Does the replay make the recorded compactions: same moment, same summarizer input, same
    range (which a seed widens to the seed's start, apps/compaction.py:470-478)?"""
    replay = _replay_adk_run(sess, pol, SummarySize(), want)
    return not replay.parted and _made(sess, replay.comps) == want.made


def _made(sess: Session, comps: list[_AdkComp]) -> list[Made]:
    ev = sess.events
    return [
        (ev[c.after - 1].seq if c.after else None, sorted(ev[p].seq for p in c.inputs), c.start, c.end)
        for c in sorted(comps, key=lambda c: c.after)
    ]


def _wanted(sess: Session, rec: list[_AdkComp]) -> list[Made]:
    return _made(sess, rec)


def _infer_adk_token(sess: Session, rec: list[_AdkComp]) -> tuple[Policy | None, str]:
    """ADK stores no EventsCompactionConfig in the session: find one whose replay makes exactly the
    recorded compactions. Thresholds tried: the prompt of the latest model call before each
    recorded compaction (what its trigger read); retention 0..12; then, with a sliding window too
    (interval 1..4, overlap 0..2) for short sessions."""
    ev = sess.events
    if len(ev) > INFER_MAX_EVENTS:
        return None, (
            f"token-threshold compactions: threshold and retention are not stored in the session, and "
            f"inferring them by replay is limited to {INFER_MAX_EVENTS} events; pass them"
        )
    ordered = sorted(rec, key=lambda c: c.after)
    want = _Wanted(sess, rec)
    thresholds: set[int] = set()
    for c in ordered:
        last = next((e for e in reversed(ev[: c.after]) if e.is_call and e.prompt is not None), None)
        if last is not None and last.prompt is not None:
            thresholds.add(last.prompt)
    slidings: list[tuple[int | None, int | None]] = [(None, None)]
    if len(ev) <= 300:
        slidings += [(i, o) for i in range(1, 5) for o in range(3)]
    for interval, overlap in slidings:
        for t in sorted(thresholds, reverse=True):
            for r in range(13):
                pol = AdkPolicy(interval, overlap, t, r)
                if _reproduces(sess, pol, want):
                    how = "token threshold" + (" and sliding window" if interval is not None else "")
                    return pol, (
                        f"{how} inferred by replay: these settings make exactly the {len(want.made)} recorded "
                        "compactions (others may too; ADK does not store its config in the session)"
                    )
    return None, "no token-threshold setting tried reproduces the recorded compactions; pass them"


SLIDING_MAX_INTERVAL = 10  # the sliding windows tried when the recorded ranges do not say one


def _infer_adk_sliding(sess: Session, rec: list[_AdkComp]) -> tuple[Policy, str] | None:
    """A sliding window whose replay makes exactly the recorded compactions, when one does. The
    ranges suggest one (the invocations the first summarizer saw, those the second saw again), but
    a window is trimmed to its longest self-contained prefix (apps/compaction.py:877), so an open
    long-running call can hide invocations it spanned: then every interval up to the invocations
    completed by the first compaction is tried, each overlap up to the interval."""
    ev = sess.events
    if len(ev) > INFER_MAX_EVENTS:
        return None

    def invs_of(c: _AdkComp) -> list[str]:
        out: list[str] = []
        for p in c.inputs:
            if ev[p].inv not in out:
                out.append(ev[p].inv)
        return out

    ordered = sorted(rec, key=lambda c: c.after)
    first = invs_of(ordered[0])
    guess = (len(first), len([i for i in invs_of(ordered[1]) if i in first]) if len(rec) > 1 else 0)
    done = len({e.inv for e in ev[: ordered[0].after]})
    tries = [guess] + [
        (i, o) for i in range(1, min(done, SLIDING_MAX_INTERVAL) + 1) for o in range(i + 1) if (i, o) != guess
    ]
    want = _Wanted(sess, rec)
    for interval, overlap in tries:
        if _reproduces(sess, adk_sliding(interval, overlap), want):
            how = (
                "from the recorded ranges"
                if (interval, overlap) == guess
                else "by replay (the ranges alone do not say it: a window was trimmed)"
            )
            return adk_sliding(interval, overlap), (
                f"sliding window (interval {interval}, overlap {overlap}) inferred {how}: it makes exactly "
                f"the {len(rec)} recorded compactions (others may too; ADK does not store its config)"
            )
    return None


def recorded_policy(led: Ledger, sess: Session | None = None) -> tuple[Policy | None, str]:
    """The policy the session was recorded with, when it can be inferred, and how."""
    if sess is not None and sess.inferred is not None:
        return sess.inferred  # type: ignore[no-any-return]
    answer = _recorded_policy(led, sess)
    if sess is not None:
        sess.inferred = answer
    return answer


def _recorded_policy(led: Ledger, sess: Session | None) -> tuple[Policy | None, str]:
    s = led.settings
    simulator = registry.get(led.format).simulator
    if simulator == "threshold" and s.window:
        pol = PiPolicy(
            s.window,
            s.reserve if s.reserve is not None else PI_RESERVE_TOKENS,
            s.keep_recent if s.keep_recent is not None else PI_KEEP_RECENT_TOKENS,
        )
        return pol, "the session's recorded compaction settings"
    if simulator == "event_ranges":
        sess = sess or prepare(led)
        rec = [c for c in sess.recorded if isinstance(c, _AdkComp)]
        if not rec:
            return None, "no compaction recorded: ADK stores no policy in the session"
        if any(c.seed for c in rec):
            return _infer_adk_token(sess, rec)
        return _infer_adk_sliding(sess, rec) or _infer_adk_token(sess, rec)
    if simulator == "threshold":
        return None, (
            "the session records no compaction settings (pi keeps them in settings.json): use --policy pi "
            "with --context-window, --reserve-tokens, --keep-recent-tokens"
        )
    return None, f"{led.format} sessions do not record a compaction policy"


# ---------------------------------------------------------------------------------------- export


def series_json(s: Series) -> dict[str, Any]:
    return {
        "label": s.label,
        "policy": s.policy,
        "summarizer_calls": s.summarizer_calls,
        "compactions": len(s.compactions),
        "peak_prompt_tokens": s.peak,
        "final_prompt_tokens": s.final,
        "coverage_known": s.coverage_known,
        "holes": s.holes if s.coverage_known else None,
        "holes_in_next_request": s.next_holes if s.coverage_known else None,
        "live_questions_lost": [{"question_seq": q, "call_seq": c} for q, c in s.live_questions_lost]
        if s.coverage_known
        else None,
        "calls": [
            {
                "seq": c.seq,
                "line": c.line,
                "turn": c.turn,
                "prompt_tokens": c.prompt_tokens,
                "raw_events": c.raw_events,
                "summaries": c.summaries,
                "holes": c.holes,
                "live_question_lost": c.live_question_lost,
            }
            for c in s.calls
        ],
        "compaction_points": [
            {
                "after_seq": c.after_seq,
                "turn": c.turn,
                "trigger": c.trigger,
                "when": c.when,
                "summarized_seqs": c.summarized_seqs,
                "seeded_from": c.seeded_from,
                "range_seqs": c.range_seqs,
                "prompt_before": c.prompt_before,
                "prompt_after": c.prompt_after,
                "summary_tokens": c.summary_tokens,
                "summarizer_requests": c.summarizer_requests,
            }
            for c in s.compactions
        ],
        "warnings": [{"code": w.code, "message": w.message} for w in s.warnings],
    }


SIMULATE_SCHEMA = "inspector.simulate/1"


def simulation_json(sim: Simulation) -> dict[str, Any]:
    return {
        "schema": SIMULATE_SCHEMA,
        "session": sim.session,
        "format": sim.format,
        "events": sim.events,
        "turns": sim.turns,
        "summary_size": sim.summary_size,
        "baseline": series_json(sim.baseline),
        "whatif": series_json(sim.whatif),
        "warnings": [{"code": w.code, "message": w.message} for w in sim.warnings],
    }


def plot_points(s: Series) -> list[tuple[int, int]]:
    """(call number, prompt tokens) for a plot, one point per model call."""
    return [(i + 1, c.prompt_tokens) for i, c in enumerate(s.calls)]
