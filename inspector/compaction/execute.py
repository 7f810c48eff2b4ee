"""Carrying a repair plan out (DESIGN §5): the summarizer calls, the summary protocol, the retreat,
the fallbacks, and the record to append. Writes nothing: the caller writes `RepairResult.entry`.

The rules, each from the seeds:

- Summary protocol (seed 004). Only closed sections are installed (`protocol.installable_part`).
  A summary cut before the essential marker is incomplete: the request is retried with strictly
  smaller input (the oldest assistant and tool messages of that request are dropped; the user's
  messages and the carried summary are protected), never with input that is not smaller, and at
  most two retries in all, so a one-request summary makes at most 3 calls. Then the deterministic
  recovery. The summary is size-checked against the installable space before it is installed
  (`checkpoint_oversized`).
- Retreat (seed 002). `input_too_large` retreats once to the proven span of the summarizer's own
  route: the fold ends where the newest reply this model produced on this connection begins. A
  second rejection, or no reply from this route in the session, fails open with the provider's
  own reason: nothing is installed, and that reason is shown, never persisted.
- Chunks (ADR 0302). Each request after the first carries the previous request's summary through
  the update prompt; the file list rides on the last; usage is summed over every call.
- `auth` and `network` are reported as themselves and install nothing. Other provider failures
  fall back to the recovery with `summary_provider`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from inspector.analysis import analyze
from inspector.analysis.intervals import merge
from inspector.analysis.protocol import installable_part, summary_completeness
from inspector.compaction.chunks import Chunk
from inspector.compaction.cut import PathIndex, Tail, message_intervals, proven_reply
from inspector.compaction.entries import CheckpointSpec, build_entry, fresh_id, now_iso, with_entry
from inspector.compaction.plan import MIN_SUMMARY_TOKENS, Outlook, RepairPlan, tail_spec
from inspector.compaction.prompts import SYSTEM_PROMPT, build_prompt, file_list_block, quoted_request
from inspector.compaction.recovery import plan_recovery
from inspector.compaction.types import REPORTED_AS_THEMSELVES, SummaryRequest, as_result, route_of
from inspector.ledger.model import Usage

MAX_EXTRA_CALLS = 2  # retries and the retreat, beyond the planned requests

# progress(request i, of n, what is happening)
Progress = Callable[[int, int, str], None]
# cancel(): true once the operator has asked to stop (e.g. `threading.Event().is_set`)
Cancel = Callable[[], bool]


class _Cancelled(Exception):
    """Raised between summarizer calls once `cancel()` is true; the run ends installing nothing."""


@dataclass(slots=True)
class CallRecord:
    request: int  # 1-based planned request
    attempt: int  # 1-based attempt at that request
    kind: str  # initial | update | retry | retreat
    lo: int  # path positions [lo, hi) of the messages it carried
    hi: int
    messages: int
    prompt_tokens: int
    max_output_tokens: int
    outcome: str
    status: int | None
    usage: Usage | None
    attempts: int
    detail: str  # the provider's own words: shown, never persisted
    accepted: bool = False


# How the app and the CLI colour each status (rich style names): one table both front ends read.
STATUS_STYLE = {"built": "bold green", "recovered": "bold yellow", "failed": "bold red", "noop": "bold"}


@dataclass(slots=True)
class RepairResult:
    plan: RepairPlan
    status: str  # built | recovered | failed | noop (built: in memory; installing is the store's job)
    outcome: str | None  # the last summarizer outcome
    reason: str  # for the operator; a failure's own provider text (never persisted)
    failure_reason: str | None  # persisted, closed vocabulary
    checkpoint: CheckpointSpec | None = None
    summary: str | None = None
    entry: dict[str, Any] | None = None
    lines: list[dict[str, Any]] | None = None  # every line appended with the entry, in order
    calls: list[CallRecord] = field(default_factory=list)
    usage: Usage | None = None
    dropped: list[int] = field(default_factory=list)  # positions left out after a truncation
    retreated: bool = False
    truncated: bool = False
    essential_complete: bool | None = None
    after: Outlook | None = None
    cancelled: bool = False  # the operator stopped the run: status failed, nothing installed

    @property
    def complete(self) -> bool:
        """Built a summary that represents its whole range."""
        return self.status == "built" and not self.dropped


def _installable(text: str, outcome: str) -> tuple[str | None, bool | None]:
    """(what may be installed, essential_complete) of one summarizer answer."""
    if not text.strip():
        return None, None
    state = summary_completeness(text)
    if state is None:
        # Not the protocol: a finished answer is taken as it is, a cut one cannot be verified.
        return (text.strip(), None) if outcome == "ok" else (None, None)
    part = installable_part(text)
    if part is None:
        return None, False
    return part.strip(), True


def _drop_older(ix: PathIndex, ch: Chunk, dropped: set[int]) -> set[int]:
    """The oldest unprotected messages of a request, about half its droppable tokens: assistant
    and tool messages only (the user's words carry the task and its constraints)."""
    cand = [
        (p, n)
        for p, t, n in zip(ch.positions, ch.texts, ch.tokens, strict=True)
        if t and p not in dropped and ix.rec(p).role in ("assistant", "tool")
    ]
    if not cand:
        return set()
    total = sum(n for _, n in cand)
    out: set[int] = set()
    acc = 0
    for p, n in cand:
        out.add(p)
        acc += n
        if acc * 2 >= total:
            break
    return out


def repair(
    plan: RepairPlan,
    summarizer: Any = None,
    *,
    progress: Progress | None = None,
    entry_id: str | None = None,
    timestamp: str | None = None,
    max_extra_calls: int = MAX_EXTRA_CALLS,
    cancel: Cancel | None = None,
) -> RepairResult:
    """Carry the plan out. `summarizer` is needed only when the plan summarizes. `cancel` is asked
    before every summarizer call and before the record is built: once it is true the run ends as
    `failed` (`cancelled`), with no entry, whatever it had received so far (a call in flight is
    not interrupted: it is the provider's timeout that bounds it)."""
    if cancel is not None and cancel():
        res = RepairResult(plan, "failed", None, "cancelled before it started: nothing installed", None)
        res.cancelled = True
        return res
    if plan.action == "noop":
        return RepairResult(plan, "noop", None, "; ".join(plan.notes) or "nothing to do", plan.reason)
    if plan.action in ("recover", "carry"):
        assert plan.checkpoint is not None and plan.summary is not None
        if plan.action == "recover":
            res = RepairResult(plan, "recovered", None, plan.reason or "", plan.reason, plan.checkpoint, plan.summary)
        else:  # a boundary move: no request was made, so its usage is zero (not unknown)
            res = RepairResult(plan, "built", None, "; ".join(plan.notes) or "boundary moved", None, plan.checkpoint,
                               plan.summary, usage=Usage())
        return _install(res, entry_id, timestamp, requests=0)
    if summarizer is None:
        raise ValueError("this plan summarizes: a summarizer is needed")
    run = _Run(plan, summarizer, progress, max_extra_calls, cancel)
    try:
        return run.run(entry_id, timestamp)
    except _Cancelled:
        return run.cancelled()


class _Run:
    def __init__(self, plan: RepairPlan, summarizer: Any, progress: Progress | None, extra: int,
                 cancel: Cancel | None = None) -> None:
        self.plan = plan
        self.cancel = cancel
        self.ix = plan.index
        self.tok = plan.index.tok
        self.summarizer = summarizer
        self.progress = progress
        self.extra = extra
        assert plan.checkpoint is not None and plan.range is not None
        self.spec = plan.checkpoint
        self.lo = plan.range[0]
        self.cut = plan.checkpoint.cut
        self.chunks = list(plan.requests)
        self.carry_text = plan.carry.text if plan.carry is not None and plan.carry.text else None
        self.carry_rep = plan.carry.represents if self.carry_text else []
        self.calls: list[CallRecord] = []
        self.usage: Usage | None = None
        self.dropped: set[int] = set()
        self.retreated = False
        self.truncated = False
        self.essential_complete: bool | None = None

    # ------------------------------------------------------------------------------ outcomes

    def _result(self, status: str, outcome: str | None, reason: str, failure_reason: str | None) -> RepairResult:
        return RepairResult(
            self.plan,
            status,
            outcome,
            reason,
            failure_reason,
            calls=self.calls,
            usage=self.usage,
            dropped=sorted(self.dropped),
            retreated=self.retreated,
        )

    def _check_cancel(self) -> None:
        if self.cancel is not None and self.cancel():
            raise _Cancelled

    def cancelled(self) -> RepairResult:
        done = sum(1 for c in self.calls if c.accepted)
        res = self._result("failed", self.calls[-1].outcome if self.calls else None,
                           f"cancelled by the operator after {len(self.calls)} call(s) ({done} of {len(self.chunks)} "
                           "request(s) answered): nothing installed", None)
        res.cancelled = True
        return res

    def fail_open(self, outcome: str, reason: str) -> RepairResult:
        return self._result("failed", outcome, reason, None)

    def fall_back(self, outcome: str | None, reason: str, failure_reason: str, summary: str | None, upto: int,
                  entry_id: str | None, timestamp: str | None) -> RepairResult:
        """Deterministic recovery; a summary already produced for [lo, upto) is carried."""
        self._check_cancel()
        plan = self.plan
        if summary is not None and upto > self.lo:
            text = summary
            rep = merge([*self.carry_rep, *message_intervals(self.ix, self.lo, upto, self.dropped | set(self.spec.keep))])
        else:
            text = self.carry_text or ""
            rep = list(self.carry_rep)
        assert plan.recovery is not None
        prev = plan.recovery.spec
        rec = plan_recovery(
            self.ix,
            reason=failure_reason,
            carried_text=text,
            carried_represents=rep,
            available=plan.budgets.available,
            keep_recent=plan.budgets.keep_recent,
            active=plan.active,
            tokens_before=prev.tokens_before,
            read_files=prev.read_files,
            modified_files=prev.modified_files,
        )
        assert rec is not None  # the plan made one for the same path
        res = self._result("recovered", outcome, reason, failure_reason)
        res.checkpoint = rec.spec
        res.summary = rec.summary
        return _install(res, entry_id, timestamp, requests=len(self.calls))

    # ------------------------------------------------------------------------------ calls

    def _request(self, k: int, ch: Chunk, summary: str | None) -> tuple[SummaryRequest, int, list[int]]:
        keep = [(p, t) for p, t in zip(ch.positions, ch.texts, strict=True) if p not in self.dropped]
        texts = [t for _, t in keep if t]
        last = k == len(self.chunks) - 1
        files = file_list_block(self.spec.read_files, self.spec.modified_files) if last else None
        prompt = build_prompt(texts, summary, files or None, self.plan.target_tokens)
        req = SummaryRequest(SYSTEM_PROMPT, prompt, self.plan.max_output_tokens)
        return req, self.tok.count(SYSTEM_PROMPT) + self.tok.count(prompt), [p for p, _ in keep]

    def _call(self, k: int, attempt: int, kind: str, ch: Chunk, req: SummaryRequest, tokens: int, carried: list[int]) -> Any:
        self._check_cancel()
        if self.progress is not None:
            self.progress(k + 1, len(self.chunks), f"request {k + 1} of {len(self.chunks)}" + (f" ({kind})" if kind in ("retry", "retreat") else ""))
        res = as_result(self.summarizer.summarize(req))
        if res.usage is not None:
            self.usage = res.usage if self.usage is None else self.usage + res.usage
        self.calls.append(
            CallRecord(k + 1, attempt, kind, ch.lo, ch.hi, len(carried), tokens, req.max_output_tokens, res.outcome,
                       res.status, res.usage, res.attempts, res.detail)
        )
        return res

    def run(self, entry_id: str | None, timestamp: str | None) -> RepairResult:
        summary = self.carry_text
        k = 0
        attempt = 1
        kind = "update" if summary else "initial"
        last_size: dict[int, int] = {}
        last_unusable = "summary_provider"
        while k < len(self.chunks):
            ch = self.chunks[k]
            req, size, carried = self._request(k, ch, summary)
            if k in last_size and size >= last_size[k]:
                # Seed 004: never a call whose input is not smaller than the one that failed.
                return self.fall_back(self.calls[-1].outcome, "the retry would not be smaller than the failed request",
                                      last_unusable, summary, ch.lo, entry_id, timestamp)
            last_size[k] = size
            res = self._call(k, attempt, kind, ch, req, size, carried)
            if res.outcome in ("ok", "truncated"):
                part, essential = _installable(res.text, res.outcome)
                if part is not None:
                    self.calls[-1].accepted = True
                    summary = part
                    self.truncated = res.outcome == "truncated"
                    self.essential_complete = essential
                    k += 1
                    attempt = 1
                    kind = "update"
                    continue
                last_unusable = "summary_budget" if res.outcome == "truncated" or essential is False else "summary_provider"
                drop = _drop_older(self.ix, ch, self.dropped) if self.extra > 0 else set()
                if not drop:
                    why = "no retry left" if self.extra <= 0 else "nothing older left to drop"
                    return self.fall_back(res.outcome, f"the summary was unusable ({res.outcome}) and {why}",
                                          last_unusable, summary, ch.lo, entry_id, timestamp)
                self.dropped |= drop
                self.extra -= 1
                attempt += 1
                kind = "retry"
                continue
            if res.outcome == "input_too_large":
                why = res.detail or "the summarizer rejected the input as too large"
                if self.retreated or self.extra <= 0:
                    return self.fail_open(res.outcome, why)
                proven = proven_reply(self.ix, route_of(self.summarizer))
                if proven is None:
                    return self.fail_open(res.outcome, f"{why} (no reply from this route in the session: no proven span to retreat to)")
                b = self.ix.latest_safe_at_or_before(proven)
                if b is None or b >= ch.hi or not [p for p in ch.positions if p < b and p not in self.dropped and not self.ix.excluded[p]]:
                    return self.fail_open(res.outcome, f"{why} (the proven span of this route holds nothing smaller to retreat to)")
                self._retreat(k, b)
                self.retreated = True
                self.extra -= 1
                attempt += 1
                kind = "retreat"
                continue
            if res.outcome in REPORTED_AS_THEMSELVES:
                return self.fail_open(res.outcome, res.detail or res.outcome)
            return self.fall_back(res.outcome, res.detail or res.outcome, "summary_provider", summary, ch.lo, entry_id, timestamp)
        assert summary is not None
        return self._finish(summary, entry_id, timestamp)

    def _retreat(self, k: int, b: int) -> None:
        """The fold ends before the proven reply: request k keeps what lies before b, later
        requests are dropped, the retained tail starts at b."""
        ch = self.chunks[k]
        n = sum(1 for p in ch.positions if p < b)
        self.chunks = [*self.chunks[:k], Chunk(ch.lo, b, ch.positions[:n], ch.texts[:n], ch.tokens[:n],
                                                [p for p in ch.clipped if p < b], ch.prompt_tokens, ch.budget,
                                                ch.carry_tokens, True)]
        self.cut = b

    # ------------------------------------------------------------------------------ install

    def _finish(self, summary: str, entry_id: str | None, timestamp: str | None) -> RepairResult:
        self._check_cancel()
        plan, ix = self.plan, self.ix
        spec0 = self.spec
        keep = tuple(p for p in spec0.keep if p < self.cut)
        quote = spec0.quote_active if spec0.quote_active is not None and spec0.quote_active < self.cut else None
        tail = Tail(self.cut, keep, quote, ix.tail_tokens(self.cut, keep))
        represents = merge([*self.carry_rep, *message_intervals(ix, self.lo, self.cut, self.dropped | set(keep))])
        spec = tail_spec(ix, "summary", tail, represents, None, spec0.budget_tokens, spec0.tokens_before,
                     spec0.read_files, spec0.modified_files)
        text = summary
        if quote is not None:
            m = ix.rec(quote).message
            text = quoted_request(m.text() if m is not None else "", ix.rec(quote).line) + "\n\n" + text
        files = plan.report.runtime.file_lists(spec.read_files, spec.modified_files)
        text = "\n\n".join(x for x in (text, files) if x)
        installable = plan.budgets.available - tail.tokens
        size = self.tok.count(text)
        if size > installable or installable < MIN_SUMMARY_TOKENS:
            return self.fall_back(self.calls[-1].outcome if self.calls else None,
                                  f"the summary ({size:,} tokens) is larger than the {max(installable, 0):,} the checkpoint may take",
                                  "checkpoint_oversized", None, self.lo, entry_id, timestamp)
        res = self._result("built", self.calls[-1].outcome if self.calls else None,
                           f"{len(self.calls)} call(s), summary of {size:,} tokens", None)
        res.checkpoint = spec
        res.summary = text
        res.truncated = self.truncated
        res.essential_complete = self.essential_complete
        return _install(res, entry_id, timestamp, requests=len(self.calls))


def _install(res: RepairResult, entry_id: str | None, timestamp: str | None, requests: int) -> RepairResult:
    """Build the record to append and analyse the session with it."""
    plan = res.plan
    assert res.checkpoint is not None and res.summary is not None
    led = plan.report.ledger
    res.entry, res.lines = build_entry(
        plan.index,
        res.checkpoint,
        res.summary,
        entry_id=entry_id or fresh_id(led),
        timestamp=timestamp or now_iso(),
        usage=res.usage,
        requests=requests,
        truncated=res.truncated,
        essential_complete=res.essential_complete if res.checkpoint.kind == "summary" else None,
    )
    after = analyze(with_entry(led, res.entry, res.lines), window=plan.budgets.window, reserve=plan.budgets.reserve, tokenizer=plan.index.tok)
    res.after = Outlook.of(after)
    return res
