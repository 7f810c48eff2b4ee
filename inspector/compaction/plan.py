"""Repair plans (DESIGN §5): what a repair would ask and install, computed without calling a
summarizer or writing anything.

`plan(report, strategy, budgets)` lists the summarizer requests (range, chunk boundaries, prompt
tokens, output budget), the checkpoint that would be installed (boundary, represents, retains,
shape, size) and the analysis of the session *after* it: the planned checkpoint is appended to an
in-memory copy of the ledger, read back through the format's own mapping, and analysed again.

Strategies:
- `compact`: summarize from the previous boundary to a safe cut, rolling the previous summary
  forward with the update prompt (pi's chained compaction). Chunked when one request cannot hold
  the range.
- `resummarize`: rebuild from source everything no trustworthy summary represents (holes, ranges
  of a truncated, dangling or carried-forward summary), in chunks that each fit the request budget.
- `recover`: the deterministic recent-source checkpoint, no model call.

Budgets: the session's own settings where it records them (native ledger header), pi's defaults
(reserveTokens 16384, keepRecentTokens 20000) for pi, the context window of a known model, and
the operator's flags over all of them. An unknown window is an error: guessing it could install a
checkpoint the model cannot take.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from inspector.analysis import analyze
from inspector.analysis.engine import HOLE, SUMMARIZED, CheckpointView, Finding, Report, summary_substance
from inspector.analysis.intervals import Interval, contains, merge
from inspector.analysis.protocol import (
    ESSENTIAL_MARKER,
    ESSENTIAL_SECTIONS,
    installable_part,
    summary_completeness,
)
from inspector.analysis.tokens import Tokenizer, get_tokenizer
from inspector.analysis.window import context_window
from inspector.compaction import STRATEGIES
from inspector.compaction.chunks import MAX_REQUESTS, Chunk, ChunkBudget, least_chunks, split_range
from inspector.compaction.cut import (
    PathIndex,
    Tail,
    active_user,
    choose_tail,
    message_intervals,
    proven_reply,
)
from inspector.compaction.entries import (
    CheckpointSpec,
    WriteError,
    build_entry,
    now_iso,
    with_entry,
    writer_of,
)
from inspector.compaction.prompts import (
    SYSTEM_PROMPT,
    build_prompt,
    clip_to_tokens,
    file_list_block,
    file_operations,
    merge_file_lists,
    quoted_request,
)
from inspector.compaction.recovery import Recovery, plan_recovery
from inspector.formats import registry
from inspector.formats.base import Runtime, template_incomplete
from inspector.ledger.model import Route, Usage

PI_RESERVE_TOKENS = 16_384
PI_KEEP_RECENT_TOKENS = 20_000
SUMMARY_TARGET_MAX = 4_000  # seed 004: a summary aims at most this many tokens
OUTPUT_HEADROOM = 0.10  # provider limit = target + at most 10%
MIN_SUMMARY_TOKENS = 200  # below this no summary is worth installing

class PlanError(Exception):
    """The plan cannot be made as asked (unknown window, impossible budgets, unknown strategy).

    `field` names the budget the operator must give for a plan to exist ("window", "reserve"), so
    that each shell says how in its own terms (a flag on the command line, a field in the app).
    """

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


@dataclass(frozen=True, slots=True)
class Budgets:
    """Operator overrides; None = take it from the session or the defaults."""

    window: int | None = None
    reserve: int | None = None
    keep_recent: int | None = None
    request: int | None = None  # max prompt tokens of one summarizer request


@dataclass(slots=True)
class ResolvedBudgets:
    window: int
    reserve: int
    keep_recent: int
    request: int | None  # None until the output budget is known (window - output)
    sources: dict[str, str]
    wrapper: int  # tokens the runtime wraps a summary in
    available: int  # window - reserve - wrapper: what summary + retained tail may take
    evidence: list[str] = field(default_factory=list)


@dataclass(slots=True)
class Carry:
    """The summary a new checkpoint would roll forward: the latest checkpoint's."""

    view: CheckpointView
    text: str
    tokens: int
    represents: list[Interval]
    trusted: bool
    why_not: str | None
    read_files: list[str]
    modified_files: list[str]


@dataclass(slots=True)
class Outlook:
    """The session as the analysis sees it (before, or after the planned checkpoint)."""

    report: Report
    coverage: dict[str, int]
    holes: int
    orphans: int
    unanswered: int
    context_tokens: int
    items: int
    findings: list[Finding]

    @classmethod
    def of(cls, report: Report) -> Outlook:
        cov = report.coverage_counts()
        return cls(
            report,
            cov,
            cov.get(HOLE, 0) + len([s for s in report.lost_to_runtime if report.states[s] != HOLE]),
            sum(1 for it in report.context if it.orphan),
            sum(len(it.unanswered) for it in report.context),
            report.context_tokens,
            len(report.context),
            list(report.findings),
        )


# What each plan action does, in one sentence (`{n}` requests, `{reason}` the plan's reason).
ACTION_WORDS: dict[str, str] = {
    "summarize": "summarize with {n} request(s), then install the checkpoint",
    "recover": "no model call: install the deterministic recovery ({reason})",
    "carry": "nothing new to summarize: roll the summary forward and move the boundary ({reason})",
    "noop": "nothing to do ({reason})",
}


# What the plan's budgets table calls the room a summary and its retained tail may take
# (window − reserve − summary wrapper): a budget, not a size.
AVAILABLE_LABEL = "summary + tail budget"


def action_sentence(p: RepairPlan) -> str:
    """The plan's action in one sentence. A carry that keeps hole messages raw says so: they fit
    the retained tail's budget, so no summarizer call is needed (not "nothing new to summarize")."""
    if p.action == "carry" and p.checkpoint is not None and p.before.holes:
        report = p.report
        retained = {p.index.path[i] for i in p.checkpoint.retains}
        holes = [s for s in report.path if report.states[s] == HOLE]
        kept = sum(1 for s in holes if s in retained)
        if kept:
            some = f"the {kept:,} hole messages" if kept == len(holes) else f"{kept:,} of the {len(holes):,} hole messages"
            return (
                f"{some} fit in the window: kept raw, no summarizer call (a {p.checkpoint.tail_tokens:,}-token tail "
                f"within the {p.checkpoint.budget_tokens:,}-token keep-recent budget); the summary rolls forward unchanged"
            )
    return ACTION_WORDS[p.action].format(n=len(p.requests), reason=p.reason)


def broken_promises(promised: Outlook, actual: Outlook) -> list[str]:
    """How the session as written differs from what the plan promised (empty: as promised)."""
    out: list[str] = []
    for name, a, b in (
        ("holes", promised.holes, actual.holes),
        ("orphaned tool results", promised.orphans, actual.orphans),
        ("unanswered tool calls", promised.unanswered, actual.unanswered),
        ("items in the next request", promised.items, actual.items),
        ("tokens in the next request", promised.context_tokens, actual.context_tokens),
    ):
        if a != b:
            out.append(f"{name}: {b:,}, promised {a:,}")
    if promised.coverage != actual.coverage:
        out.append(f"coverage {actual.coverage}, promised {promised.coverage}")
    return out


@dataclass(slots=True)
class RepairPlan:
    strategy: str
    action: str  # summarize | recover | carry | noop
    reason: str | None  # failure_reason of recover / carry, or why nothing is done (closed vocabulary)
    budgets: ResolvedBudgets
    report: Report
    index: PathIndex
    active: int | None
    carry: Carry | None
    range: tuple[int, int] | None  # path positions [lo, hi) the requests summarize
    requests: list[Chunk]
    target_tokens: int
    max_output_tokens: int
    installable_tokens: int
    checkpoint: CheckpointSpec | None
    summary: str | None  # the exact text for recover / carry; None for a summary not yet written
    recovery: Recovery | None  # what a failed summary falls back to
    route: Route | None
    proven: int | None  # position of the route's newest accepted reply (seed 002)
    notes: list[str]
    before: Outlook
    after: Outlook | None = None
    entry: dict[str, Any] | None = None  # the record the simulation appended
    lines: list[dict[str, Any]] | None = None  # every line appended with it (the entry among them)

    @property
    def tail(self) -> Tail | None:
        cp = self.checkpoint
        if cp is None:
            return None
        return Tail(cp.cut, cp.keep, cp.quote_active, cp.tail_tokens)


# ---------------------------------------------------------------------------------------- budgets


def resolve_budgets(report: Report, given: Budgets, tok: Tokenizer) -> ResolvedBudgets:
    led = report.ledger
    rt = report.runtime
    sources: dict[str, str] = {}
    evidence: list[str] = []
    st = led.settings

    def pick(name: str, flag: int | None, session: int | None, default: int | None, default_src: str) -> int | None:
        if flag is not None:
            sources[name] = "flag"
            return flag
        if session is not None:
            sources[name] = "session"
            return session
        if default is not None:
            sources[name] = default_src
        return default

    cw = context_window(led, report.path, given.window)  # the one resolution the app and CLI share
    window = cw.tokens
    if window is not None:
        sources["window"] = cw.source
    else:
        # What the session does say about its window, for the operator choosing --window.
        replies = [s for s in report.path if led.records[s].role == "assistant" and led.records[s].kind == "message"
                   and led.records[s].stop_reason not in rt.not_sent_as_written]
        led.load_messages(replies)
        largest = max((u.total for u in (led.records[s].message.usage for s in replies  # type: ignore[union-attr]
                                           if led.records[s].message is not None) if u is not None), default=0)
        if largest:
            evidence.append(f"the largest request the model accepted held {largest:,} tokens")
        befores = [v.checkpoint.tokens_before for v in report.checkpoints if v.checkpoint.tokens_before]
        if befores:
            evidence.append(f"the last compaction recorded tokensBefore {befores[-1]:,}")
        hint = f" ({'; '.join(evidence)})" if evidence else ""
        raise PlanError(f"the session does not record its model's context window{hint}", field="window")
    reserve = pick("reserve", given.reserve, st.reserve, PI_RESERVE_TOKENS, rt.budget_defaults_source)
    keep = pick("keep_recent", given.keep_recent, st.keep_recent, PI_KEEP_RECENT_TOKENS, rt.budget_defaults_source)
    assert reserve is not None and keep is not None
    if reserve >= window:
        raise PlanError(
            f"the reserve ({reserve:,} tokens, {sources['reserve']}) leaves nothing of the {window:,}-token window",
            field="reserve",
        )
    wrapper = tok.count(rt.summary_wrapper(led)) + 8
    available = window - reserve - wrapper
    if available < 2 * MIN_SUMMARY_TOKENS:
        raise PlanError(f"window {window:,} − reserve {reserve:,} leaves {available:,} tokens: too little for a summary and a tail")
    if given.request is not None:
        sources["request"] = "flag"
    return ResolvedBudgets(window, reserve, keep, given.request, sources, wrapper, available, evidence)


# ---------------------------------------------------------------------------------------- carry


def _details_files(view: CheckpointView) -> tuple[list[str], list[str]]:
    d = view.checkpoint.details
    if not isinstance(d, dict):
        return [], []

    def strs(*keys: str) -> list[str]:
        for k in keys:
            v = d.get(k)
            if isinstance(v, list):
                return [x for x in v if isinstance(x, str)]
        return []

    return strs("readFiles", "read_files"), strs("modifiedFiles", "modified_files")


def carried_summary(report: Report, ix: PathIndex, active: int | None) -> Carry | None:
    """The latest checkpoint's summary, with whether a new summary may build on it."""
    if not report.checkpoints:
        return None
    v = report.checkpoints[-1]
    cp = v.checkpoint
    sf = report.runtime.summary_format
    state = summary_completeness(cp.summary)
    if state is not None:
        text = installable_part(cp.summary) or ""
    else:
        body = report.runtime.summary_body(cp.summary)
        text = summary_substance(body) if sf is not None else body.strip()
    why: str | None = None
    if not text.strip() or v.empty_summary:
        why = "its summary is empty"
    elif state == "essential_incomplete" or cp.essential_complete is False:
        why = "its summary stops before the essential sections are complete"
    elif cp.truncated:
        why = "its summary is marked truncated"
    elif state is None and sf is not None and template_incomplete(cp.summary, sf):
        why = "its summary looks cut at the output limit"
    elif v.first_kept_found is False:
        why = "its boundary is not on the active path, so what its summary covers is unverified"
    elif active is not None and v.is_represented(active):
        why = "it summarized the active turn's own request"
    read, modified = _details_files(v)
    return Carry(v, text, ix.tok.count(text) if text else 0, list(v.rep), why is None, why, read, modified)


def _first_unrepresented(ix: PathIndex, rep: list[Interval]) -> int:
    """The first message position a summary must still represent (excluded ones need none)."""
    for i in ix.msg_pos:
        if not ix.excluded[i] and not contains(rep, i):
            return i
    return ix.end


# ---------------------------------------------------------------------------------------- placeholder


def placeholder_summary(tokens: int, tok: Tokenizer) -> str:
    """A protocol-complete stand-in of about `tokens` tokens, for simulating a summary not yet
    written (the analysis sizes and checks what the model would receive)."""
    head = "".join(f"## {name}\n(planned)\n\n" for name in ESSENTIAL_SECTIONS) + ESSENTIAL_MARKER + "\n"
    have = tok.count(head)
    if tokens <= have:
        return head
    filler = " planned" * (tokens - have)
    text = head + filler.strip()
    while tok.count(text) > tokens and len(filler) > 8:
        filler = filler[: -len(" planned")]
        text = head + filler.strip()
    return text


# ---------------------------------------------------------------------------------------- plan


@dataclass
class _Draft:
    """What every step of one plan shares: its inputs, the summary it builds on and its notes."""

    report: Report
    strategy: str
    tok: Tokenizer
    rb: ResolvedBudgets
    ix: PathIndex
    active: int | None
    carry: Carry | None
    simulate: bool
    before: Outlook
    notes: list[str]
    lo: int = 0
    use_carry: Carry | None = None
    base: dict[str, Any] = field(default_factory=dict)

    @property
    def rt(self) -> Runtime:
        return self.report.runtime

    @property
    def last(self) -> CheckpointView | None:
        return self.report.checkpoints[-1] if self.report.checkpoints else None

    @property
    def carried_text(self) -> str:
        return self.use_carry.text if self.use_carry is not None else ""

    @property
    def carried_rep(self) -> list[Interval]:
        return self.use_carry.represents if self.use_carry is not None else []

    @property
    def prev_files(self) -> tuple[list[str], list[str]]:
        """Files are cumulative over checkpoints, as pi keeps them."""
        return (self.carry.read_files, self.carry.modified_files) if self.carry is not None else ([], [])

    @property
    def current_first_raw(self) -> int:
        last = self.last
        return 0 if last is None else (last.cut if last.first_kept_found is not False else last.pos + 1)


def plan(
    report: Report,
    strategy: str,
    budgets: Budgets | None = None,
    *,
    route: Route | None = None,
    tokenizer: Tokenizer | None = None,
    simulate: bool = True,
) -> RepairPlan:
    """The dry run of a repair. Calls nothing, writes nothing."""
    if strategy not in STRATEGIES:
        raise PlanError(f"unknown strategy {strategy!r}: choose one of {', '.join(STRATEGIES)}")
    tok = tokenizer or get_tokenizer()
    rb = resolve_budgets(report, budgets or Budgets(), tok)
    ix = PathIndex(report, tok)
    if ix.last_message() is None:
        raise PlanError("the active path holds no message: there is nothing to compact")
    active = active_user(ix)
    d = _Draft(report=report, strategy=strategy, tok=tok, rb=rb, ix=ix, active=active,
               carry=carried_summary(report, ix, active), simulate=simulate, before=Outlook.of(report), notes=[])
    if ix.unsendable_last is not None:
        line = ix.records[ix.path[ix.unsendable_last]].line
        d.notes.append(f"{d.rt.name} fails on line {line} whenever a request holds it (request_fails): the retained tail starts after it")
    writer = registry.get(report.ledger.format).writer
    if writer is not None and (why := writer.refusal(report.ledger)) is not None:
        d.notes.append(f"repair cannot write this plan: {why}")
    d.lo, d.use_carry = _range_start(d)
    d.base = dict(
        strategy=strategy, budgets=rb, report=report, index=ix, active=active,
        carry=d.use_carry if strategy != "recover" else d.carry, route=route,
        proven=proven_reply(ix, route), notes=d.notes, before=d.before,
    )
    if strategy == "recover":
        return _recovery_plan(d, _recover_reason(report))
    tail, cap = _retained_tail(d)
    # The active request kept raw ahead of the tail (native) is never summarized.
    summarize = [i for i in ix.messages_in(d.lo, tail.cut) if not ix.excluded[i] and i not in tail.keep]
    read, modified = _files_for(d, d.lo, tail.cut) if summarize else d.prev_files
    if not summarize:
        return _plan_without_new_history(d, tail=tail, cap=cap, read=read, modified=modified)
    return _summary_plan(d, tail=tail, cap=cap, summarize=summarize, read=read, modified=modified)


def _range_start(d: _Draft) -> tuple[int, Carry | None]:
    """Where the range starts, and which summary it builds on."""
    carry, ix = d.carry, d.ix
    if d.strategy == "compact":
        lo = d.current_first_raw
        use_carry = carry if carry is not None and carry.text else None
        if carry is not None and not carry.trusted:
            d.notes.append(f"the latest checkpoint is not a sound base ({carry.why_not}); compact rolls it forward anyway: resummarize rebuilds from source")
        holes_before = [i for i in ix.msg_pos[: _bisect(ix.msg_pos, lo)] if d.report.states[ix.path[i]] == HOLE]
        if holes_before:
            d.notes.append(f"{len(holes_before)} messages before the previous boundary are holes; compact starts at that boundary and leaves them: resummarize fills them from source")
        return lo, use_carry
    use_carry = carry if carry is not None and carry.trusted else None
    if carry is not None and not carry.trusted:
        d.notes.append(f"the latest summary is not built on ({carry.why_not}): the range is summarized from source")
    return (_first_unrepresented(ix, use_carry.represents) if use_carry is not None else 0), use_carry


def _files_for(d: _Draft, lo: int, hi: int) -> tuple[list[str], list[str]]:
    """The files read and modified up to `hi`, merged into the carried lists."""
    pos = d.ix.messages_in(lo, hi)
    d.ix.load(pos)
    msgs = [d.ix.rec(i).message for i in pos]
    r, m = file_operations(x for x in msgs if x is not None)
    return merge_file_lists(*d.prev_files, r, m)


def _recovery(d: _Draft, reason: str, *, chosen: bool = True) -> Recovery:
    """The deterministic recovery checkpoint; `chosen=False` previews it as the fallback."""
    carry, recover = d.carry, d.strategy == "recover"
    r, m = _files_for(d, d.current_first_raw, d.ix.end) if d.rt.summary_format is not None else d.prev_files
    rec = plan_recovery(
        d.ix,
        reason=reason,
        carried_text=d.carried_text if not recover else (carry.text if carry is not None else ""),
        carried_represents=d.carried_rep if not recover else (carry.represents if carry is not None and carry.text else []),
        available=d.rb.available,
        keep_recent=d.rb.keep_recent,
        active=d.active,
        tokens_before=d.report.context_tokens,
        read_files=r,
        modified_files=m,
    )
    if rec is None:
        raise PlanError("no message on the active path can start a retained window")
    if not chosen:  # a preview of the fallback: its notes would only repeat the plan's
        return rec
    if rec.over_budget:
        d.notes.append("even the smallest safe window is larger than the budget leaves: the recovery keeps it anyway")
    if rec.spec.quote_active is not None:
        d.notes.append(f"the active request (line {d.ix.rec(rec.spec.quote_active).line}) does not fit {d.rt.name}'s contiguous window: it is quoted verbatim in the checkpoint")
    return rec


def _finish(d: _Draft, p: RepairPlan) -> RepairPlan:
    if d.simulate:
        simulate_plan(p)
    return p


def _recovery_plan(
    d: _Draft,
    reason: str,
    *,
    range_: tuple[int, int] | None = None,
    requests: list[Chunk] | None = None,
    target: int = 0,
    max_output: int = 0,
    installable: int = 0,
) -> RepairPlan:
    """The plan that installs the recovery checkpoint instead of a summary."""
    rec = _recovery(d, reason)
    if d.strategy == "recover" and _recovery_changes_nothing(d, rec):
        d.notes.append(
            "every message of the active path is already sent raw and no summary stands for any: a recovery "
            "checkpoint would remove nothing and only add its notice (another checkpoint that makes no progress)"
        )
        return _finish(d, RepairPlan(
            action="noop", reason="no_new_history", range=None, requests=[], target_tokens=0, max_output_tokens=0,
            installable_tokens=0, checkpoint=None, summary=None, recovery=None, **d.base))  # type: ignore[arg-type]
    return _finish(d, RepairPlan(
        action="recover", reason=reason, range=range_, requests=requests or [], target_tokens=target,
        max_output_tokens=max_output, installable_tokens=installable, checkpoint=rec.spec, summary=rec.summary,
        recovery=rec, **d.base))  # type: ignore[arg-type]


def _recovery_changes_nothing(d: _Draft, rec: Recovery) -> bool:
    """Whether the recovery keeps every message raw that is sent raw now, and nothing is summarized,
    lost or orphaned to bring back: then it would only add a checkpoint (seen on a real OpenClaw
    session looping on compactions that removed nothing: recover made the loop one longer)."""
    before = d.before
    if before.holes or before.orphans or before.coverage.get(SUMMARIZED, 0):
        return False
    spec = rec.spec
    removes = [p for p in d.ix.messages_in(0, spec.cut) if p not in spec.keep]
    return not removes and not spec.represents and not spec.dropped


def _retained_tail(d: _Draft) -> tuple[Tail, int]:
    """The retained tail: recent messages within keep-recent and what the summary leaves."""
    rb, ix = d.rb, d.ix
    target_max = min(SUMMARY_TARGET_MAX, rb.available // 2)
    cap = max(0, min(rb.keep_recent, rb.available - target_max))
    tail = choose_tail(ix, cap, rb.available - MIN_SUMMARY_TOKENS, d.active, contiguous_only=d.rt.contiguous_tail, floor=ix.tail_floor)
    if tail is None:
        raise PlanError("no message on the active path can start a retained tail (only tool results?)")
    if tail.over_cap:
        d.notes.append(f"the retained tail ({tail.tokens:,} tokens) is larger than the {cap:,} it was allowed: the active turn is kept raw")
    return tail, cap


def _boundary_must_move_back(d: _Draft, cut: int) -> bool:
    """Moving the boundary back is a repair of its own only when the current checkpoint removed
    what must be raw: the active request, everything (a boundary not on the path), the call of a
    tool result it kept (an orphan; the new tail starts at a safe cut), holes, or what a summary that
    cannot be trusted stands for (resummarize: raw is better than a broken summary)."""
    last, active, carry = d.last, d.active, d.carry
    return last is not None and (
        last.first_kept_found is False
        or (active is not None and last.is_removed(active) and cut <= active)
        or d.before.orphans > 0
        or d.before.holes > 0
        or (d.strategy == "resummarize" and carry is not None and not carry.trusted)
    )


def _plan_without_new_history(d: _Draft, *, tail: Tail, cap: int, read: list[str], modified: list[str]) -> RepairPlan:
    """Nothing before the retained tail is new: move the boundary back, recover, or do nothing."""
    c, lo = tail.cut, d.lo
    if _boundary_must_move_back(d, c) and c < d.current_first_raw:
        # Nothing new to summarize, but the boundary moves back (the active request, or a
        # dangling boundary's lost tail, comes back raw): roll the summary forward unchanged.
        text = d.carried_text or "No earlier history was removed from this conversation: every message follows verbatim."
        # Not a failed summary (no failure_reason): a boundary move that made no request.
        spec = tail_spec(d.ix, "carry", tail, d.carried_rep, None, cap, d.report.context_tokens, read, modified)
        text = "\n\n".join(x for x in (text, d.rt.file_lists(read, modified)) if x)
        return _finish(d, RepairPlan(
            action="carry", reason="no_new_history", range=(lo, max(lo, c)), requests=[], target_tokens=0,
            max_output_tokens=0, installable_tokens=0, checkpoint=spec, summary=text, recovery=None, **d.base))  # type: ignore[arg-type]
    if d.report.context_tokens > d.rb.window - d.rb.reserve:
        d.notes.append("nothing before the retained tail can be summarized and the next request is over budget")
        return _recovery_plan(d, "summary_budget")
    d.notes.append("the retained tail already holds everything after the previous boundary: nothing to summarize")
    return _finish(d, RepairPlan(
        action="noop", reason="no_new_history", range=None, requests=[], target_tokens=0, max_output_tokens=0,
        installable_tokens=0, checkpoint=None, summary=None, recovery=None, **d.base))  # type: ignore[arg-type]


def _quoted_active_text(d: _Draft, tail: Tail) -> str:
    """The active request quoted verbatim in the summary when a contiguous tail cannot keep it."""
    if tail.quote_active is None:
        return ""
    rec = d.ix.rec(tail.quote_active)
    m = rec.message
    d.notes.append(f"the active turn does not fit the window and {d.rt.name} keeps a contiguous tail: its request (line {rec.line}) is quoted verbatim in the summary")
    return quoted_request(m.text() if m is not None else "", rec.line)


def _fewest_chunks(
    d: _Draft, *, tail: Tail, target: int, read: list[str], modified: list[str]
) -> tuple[int, int, int, list[Chunk] | None]:
    """A smaller summary leaves later requests more room for messages: when the range does not go
    into 16 requests at the full target, smaller targets are tried. When nothing fits, the attempt
    with the fewest requests is what the plan shows (the first of them, at the largest target).
    Returns (target, max output, request, chunks).

    Counting a request's prompt whole is most of the cost, so a target whose requests packed on
    estimates already number more than 16 (the exact check only splits them further) is not
    counted whole unless it is the one shown."""
    rb = d.rb
    # Each attempt: (its requests, or a floor of them while not counted whole; its order; its
    # target, max output and request; its chunks, counted whole or not).
    tried: list[tuple[float, int, tuple[int, int, int], list[Chunk] | None, bool]] = []
    for k, t in enumerate(_targets(target)):
        mo = t + int(t * OUTPUT_HEADROOM)
        req = rb.request if rb.request is not None else rb.window - mo
        args = (d.ix, d.lo, tail.cut, d.carried_text, req, t, mo, read, modified)
        least = least_requests(*args, skip=set(tail.keep))
        if least is None:  # (no request can hold one message: the whole count makes none either)
            tried.append((_requests_of(None), k, (t, mo, req), None, True))
        elif least > MAX_REQUESTS:
            tried.append((least, k, (t, mo, req), None, False))
        else:
            got = chunk_range(*args, skip=set(tail.keep))
            if got is not None and len(got) <= MAX_REQUESTS:
                return t, mo, req, got
            tried.append((_requests_of(got), k, (t, mo, req), got, True))
    # The attempt with the fewest requests, the first of them: a floor is counted whole when it
    # comes first (a whole count is never below its floor).
    while True:
        tried.sort(key=lambda a: (a[0], a[1]))
        _, k, (t, mo, req), got, counted = tried[0]
        if counted:
            return t, mo, req, got
        got = chunk_range(d.ix, d.lo, tail.cut, d.carried_text, req, t, mo, read, modified, skip=set(tail.keep))
        tried[0] = (_requests_of(got), k, (t, mo, req), got, True)


def _requests_of(chunks: list[Chunk] | None) -> float:
    """An attempt's requests, for choosing the fewest: none made ranks after any number."""
    return math.inf if chunks is None else len(chunks)


def _summary_plan(
    d: _Draft, *, tail: Tail, cap: int, summarize: list[int], read: list[str], modified: list[str]
) -> RepairPlan:
    """The summarizer requests for the range before the tail, or the recovery when they cannot fit."""
    rb, ix, lo, c = d.rb, d.ix, d.lo, tail.cut
    # Output budget from the installable space (seed 004).
    quote_text = _quoted_active_text(d, tail)
    files_text = d.rt.file_lists(read, modified)
    installable = rb.available - tail.tokens - d.tok.count(quote_text) - d.tok.count(files_text)
    target = min(SUMMARY_TARGET_MAX, installable)
    if target < MIN_SUMMARY_TOKENS:
        d.notes.append(f"only {max(installable, 0):,} tokens are left for a summary after the retained tail")
        return _recovery_plan(d, "checkpoint_oversized", installable=installable)
    if "request" not in rb.sources:
        rb.sources["request"] = "window − output budget"
    # A range far past 16 requests is not tokenized to find that out: its file bytes bound its
    # tokens from below (a token is rarely more than 16 bytes of JSON).
    at_least = sum(ix.rec(i).length for i in summarize) // 16
    if at_least > MAX_REQUESTS * (rb.request if rb.request is not None else rb.window):
        d.notes.append(f"the range holds at least ~{at_least:,} tokens, more than {MAX_REQUESTS} requests can carry")
        return _recovery_plan(d, "summary_budget", range_=(lo, c), target=target,
                              max_output=target + int(target * OUTPUT_HEADROOM), installable=installable)
    target, max_output, rb.request, chunks = _fewest_chunks(d, tail=tail, target=target, read=read, modified=modified)
    represents = merge([*d.carried_rep, *message_intervals(ix, lo, c, set(tail.keep))])
    spec = tail_spec(ix, "summary", tail, represents, None, cap, d.report.context_tokens, read, modified)
    if chunks is None or len(chunks) > MAX_REQUESTS:
        d.notes.append(
            f"the range needs {len(chunks)} requests, more than {MAX_REQUESTS}" if chunks
            else "no request can hold even one message next to the carried summary and the instructions"
        )
        return _recovery_plan(d, "summary_budget", range_=(lo, c), requests=chunks or [], target=target,
                              max_output=max_output, installable=installable)
    clipped = sum(len(ch.clipped) for ch in chunks)
    if clipped:
        d.notes.append(f"{clipped} message(s) larger than one request are clipped in the prompt (head and tail kept)")
    return _finish(d, RepairPlan(
        action="summarize", reason=None, range=(lo, c), requests=chunks, target_tokens=target,
        max_output_tokens=max_output, installable_tokens=installable, checkpoint=spec, summary=None,
        recovery=_recovery(d, "summary_provider", chosen=False), **d.base))  # type: ignore[arg-type]


def _targets(target: int) -> list[int]:
    """The output targets to try, largest first, down to the smallest summary worth installing."""
    out = [target]
    t = target
    while t * 2 // 3 >= MIN_SUMMARY_TOKENS:
        t = t * 2 // 3
        out.append(t)
    if out[-1] > MIN_SUMMARY_TOKENS:
        out.append(MIN_SUMMARY_TOKENS)
    return out


def _bisect(a: list[int], x: int) -> int:
    from bisect import bisect_left

    return bisect_left(a, x)


def _recover_reason(report: Report) -> str:
    """Why a recovery the operator asked for has no summary, in the closed vocabulary: the latest
    checkpoint's own reason when it recorded one, else the summarizer's (none was asked)."""
    if report.checkpoints and report.checkpoints[-1].checkpoint.failure_reason:
        return report.checkpoints[-1].checkpoint.failure_reason  # type: ignore[return-value]
    return "summary_provider"


def tail_spec(
    ix: PathIndex,
    kind: str,
    tail: Tail,
    represents: list[Interval],
    failure_reason: str | None,
    cap: int,
    tokens_before: int,
    read: list[str],
    modified: list[str],
) -> CheckpointSpec:
    retains = [*tail.keep, *ix.messages_in(tail.cut, ix.end)]
    only_user = len(retains) == 1 and ix.rec(retains[0]).role == "user"
    return CheckpointSpec(
        kind=kind,
        cut=tail.cut,
        keep=tail.keep,
        retains=retains,
        represents=represents,
        shape="latest_user_message" if only_user else "recent_window",
        failure_reason=failure_reason,
        tail_tokens=tail.tokens,
        budget_tokens=cap,
        tokens_before=tokens_before,
        read_files=read,
        modified_files=modified,
        quote_active=tail.quote_active,
    )


def chunk_range(
    ix: PathIndex,
    lo: int,
    hi: int,
    carried_text: str,
    request: int,
    target: int,
    max_output: int,
    read: list[str],
    modified: list[str],
    skip: set[int] | None = None,
) -> list[Chunk] | None:
    """The summarizer requests for [lo, hi): contiguous chunks that each fit `request` tokens
    (messages in `skip`, kept raw, are not summarized)."""
    r = _RangeRequests(ix, lo, hi, carried_text, request, target, max_output, read, modified, skip)
    return split_range(lo, hi, r.positions, r.parts, r.budget, ix.safe, r.clip, ix.tok.count, r.exact)


def least_requests(
    ix: PathIndex,
    lo: int,
    hi: int,
    carried_text: str,
    request: int,
    target: int,
    max_output: int,
    read: list[str],
    modified: list[str],
    skip: set[int] | None = None,
) -> int | None:
    """How many requests `chunk_range` makes at the least (None: none can be made), without
    counting any request's prompt whole."""
    r = _RangeRequests(ix, lo, hi, carried_text, request, target, max_output, read, modified, skip)
    return least_chunks(r.positions, r.parts, r.budget, ix.safe, r.clip, ix.tok.count)


class _RangeRequests:
    """What the summarizer requests for a range are cut from: its messages (and their prompt
    texts), the budget of a request, the exact size of one."""

    def __init__(
        self, ix: PathIndex, lo: int, hi: int, carried_text: str, request: int, target: int, max_output: int,
        read: list[str], modified: list[str], skip: set[int] | None,
    ) -> None:  # fmt: skip
        self.tok, self.target, self.clipped = ix.tok, target, ix.clipped
        self.positions = [p for p in ix.messages_in(lo, hi) if not skip or p not in skip]
        self.parts = ix.prompt_parts(self.positions)
        self.files = file_list_block(read, modified)
        self.system = self.tok.count(SYSTEM_PROMPT)
        carry_tokens = self.tok.count(carried_text) if carried_text else 0
        self.budget = ChunkBudget(
            request=request,
            first_carry=carry_tokens,
            later_carry=max_output,
            file_list=max(self.exact([], False, True) - self.exact([], False, False), 0),
            overhead=max(self.exact([], True, False), self.exact([], False, False)),
        )

    def exact(self, texts: list[str], carries: bool, file_list: bool) -> int:
        prompt = build_prompt(texts, "…" if carries else None, self.files if file_list else None, self.target)
        return self.system + self.tok.count(prompt)

    def clip(self, text: str, n: int) -> str:
        """A message too large for any request, clipped (once per index: a target's floor and its
        chunks clip the same messages to the same size)."""
        got = self.clipped.get((text, n))
        if got is None:
            got = self.clipped[(text, n)] = clip_to_tokens(text, n, self.tok)
        return got


# ---------------------------------------------------------------------------------------- simulate


def simulate_plan(p: RepairPlan) -> None:
    """Append the planned checkpoint to an in-memory copy of the ledger and analyse it again."""
    if p.checkpoint is None:
        p.after = p.before
        return
    if registry.get(p.report.ledger.format).writer is None:
        # No writer: no record this runtime reads can be spelled, so none is read back; the plan
        # says what it would summarize and keep, not the coverage after.
        p.notes.append(f"{p.report.ledger.format} sessions are read only for now: the coverage after is not shown")
        return
    ix = p.index
    if p.summary is not None:
        text = p.summary
    else:
        text = placeholder_summary(p.target_tokens, ix.tok)
        if p.checkpoint.quote_active is not None:
            m = ix.rec(p.checkpoint.quote_active).message
            text = quoted_request(m.text() if m is not None else "", ix.rec(p.checkpoint.quote_active).line) + "\n\n" + text
        files = p.report.runtime.file_lists(p.checkpoint.read_files, p.checkpoint.modified_files)
        text = "\n\n".join(x for x in (text, files) if x)
    try:
        entry, lines = _planned_entry(p, ix, text)
        led = with_entry(p.report.ledger, entry, lines)
    except WriteError as e:  # the format cannot spell this checkpoint: repair refuses it the same way
        p.notes.append(f"this checkpoint cannot be written: {e}")
        return
    p.entry, p.lines = entry, lines
    p.after = Outlook.of(analyze(led, window=p.budgets.window, reserve=p.budgets.reserve, tokenizer=ix.tok))


def _planned_entry(p: RepairPlan, ix: PathIndex, text: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    assert p.checkpoint is not None
    return build_entry(
        ix,
        p.checkpoint,
        text,
        entry_id=writer_of(p.report.ledger).planned_id,
        timestamp=now_iso(),
        # What the requests would cost (prompt bounds in, target out): the record a repair writes
        # carries the summed usage the provider reports.
        usage=Usage(sum(ch.prompt_tokens for ch in p.requests), p.target_tokens) if p.requests else (Usage() if p.action == "carry" else None),
        requests=len(p.requests),
        truncated=False,
        essential_complete=True if p.checkpoint.kind == "summary" else None,
    )
