"""Where a checkpoint may cut the active path, and what the pieces cost (DESIGN §5).

Everything here works on *path positions* (indexes into `Report.path`), the coordinates the
analysis already uses for a checkpoint's sets. A cut at position c removes the messages before c
and keeps [c, end) raw.

Safe cut (pi's `findCutPoint`, and what a provider accepts): c is a user or assistant message,
never a tool result, and no tool call before c has its result at or after c. A cut never passes
the active turn's own user message (seed 003: a live question summarized out of its own prompt);
where a runtime can keep only a contiguous tail (pi) and that turn does not fit, the request is
quoted verbatim instead (see `choose_tail`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from inspector.analysis.engine import Report, failed_turn_marker, message_text_for_tokens
from inspector.analysis.tokens import Tokenizer
from inspector.compaction.prompts import serialize_message
from inspector.formats.base import FAILS_ON_SEND
from inspector.ledger.model import Record, Route


class PathIndex:
    """The active path's messages with what the repair engine asks of them: safe cut points,
    tool-call pairing, token counts (read and counted only for the positions asked for)."""

    def __init__(self, report: Report, tok: Tokenizer) -> None:
        self.report = report
        self.tok = tok
        self.path = report.path
        self.records = report.ledger.records
        self.end = len(self.path)
        records = self.records
        self.msg_pos: list[int] = [i for i, s in enumerate(self.path) if records[s].kind == "message"]
        self.pos_of: dict[int, int] = {s: i for i, s in enumerate(self.path)}
        drop = report.runtime.drop_stop_reasons
        self.excluded = bytearray(self.end)
        for i in self.msg_pos:
            r = records[self.path[i]]
            if r.never_sent or (r.role == "assistant" and r.stop_reason in drop):
                self.excluded[i] = 1
        # A cut at c is unsafe when a call before c is answered at or after c: difference array
        # over the (call position, result position) pairs.
        self.call_at: dict[str, int] = {}
        self.result_at: dict[str, int] = {}
        diff = [0] * (self.end + 2)
        for i in self.msg_pos:
            r = records[self.path[i]]
            for c in r.call_ids:
                self.call_at[c] = i
            if r.role == "tool" and r.result_id is not None:
                self.result_at.setdefault(r.result_id, i)
                a = self.call_at.get(r.result_id)
                if a is not None and a < i:
                    diff[a + 1] += 1
                    diff[i + 1] -= 1
        self.crossing = [0] * (self.end + 1)
        run = 0
        for c in range(self.end + 1):
            run += diff[c]
            self.crossing[c] = run
        # Tool results a request would carry without their call: the call is not on the path, or
        # a reply the runtime drops (error, aborted) made it. Providers reject such a request, so a
        # retained tail starts after the last of them (it is summarized instead).
        sent: set[str] = set()
        self.orphan_results: list[int] = []
        for i in self.msg_pos:
            r = records[self.path[i]]
            if r.role == "assistant" and not self.excluded[i]:
                sent.update(r.call_ids)
            elif r.role == "tool" and not self.excluded[i] and (r.result_id is None or r.result_id not in sent):
                self.orphan_results.append(i)
        self.tail_floor = self.orphan_results[-1] + 1 if self.orphan_results else 0
        # A message the runtime fails on whenever a request holds it (`FAILS_ON_SEND`): the retained
        # tail starts after the last of them too, so that the repaired session can be sent at all.
        unsendable = {s for d in report.ledger.diagnostics if d.problem == FAILS_ON_SEND for s in d.seqs}
        self.unsendable_last = max((i for i in self.msg_pos if self.path[i] in unsendable), default=None) if unsendable else None
        if self.unsendable_last is not None:
            self.tail_floor = max(self.tail_floor, self.unsendable_last + 1)
        self._ctx_tokens: dict[int, int] = {}
        self._prompt: dict[int, tuple[str, int]] = {}
        self.clipped: dict[tuple[str, int], str] = {}  # (a message's prompt text, tokens) -> the text clipped to them

    # ------------------------------------------------------------------------------ records

    def rec(self, i: int) -> Record:
        return self.records[self.path[i]]

    def is_message(self, i: int) -> bool:
        return 0 <= i < self.end and self.rec(i).kind == "message"

    def messages_in(self, lo: int, hi: int) -> list[int]:
        """Message positions in [lo, hi)."""
        from bisect import bisect_left

        a = bisect_left(self.msg_pos, lo)
        b = bisect_left(self.msg_pos, hi)
        return self.msg_pos[a:b]

    def last_message(self) -> int | None:
        return self.msg_pos[-1] if self.msg_pos else None

    def safe(self, c: int) -> bool:
        """May a retained tail start at position c?"""
        if not self.is_message(c):
            return False
        r = self.rec(c)
        return r.role != "tool" and self.crossing[c] == 0

    def latest_safe_at_or_before(self, p: int, floor: int = 0) -> int | None:
        for i in reversed(self.messages_in(floor, p + 1)):
            if self.safe(i):
                return i
        return None

    # ------------------------------------------------------------------------------ tokens

    def load(self, positions: Iterable[int]) -> None:
        self.report.ledger.load_messages([self.path[i] for i in positions])

    def context_tokens(self, positions: list[int]) -> list[int]:
        """Tokens each message costs in the next request (0 for one the runtime never sends),
        counted the way the analysis counts the effective context."""
        todo = [i for i in positions if i not in self._ctx_tokens]
        if todo:
            self.load(todo)
            texts: list[tuple[int, str]] = []
            rt = self.report.runtime
            for i in todo:
                r = self.rec(i)
                m = r.message
                if self.excluded[i] or m is None:
                    self._ctx_tokens[i] = 0
                elif marker := failed_turn_marker(r, rt):  # (sent as the runtime's marker: its tokens)
                    texts.append((i, marker))
                elif m.role == "assistant" and m.usage is not None and m.usage.output > 0:
                    self._ctx_tokens[i] = m.usage.output
                else:
                    texts.append((i, message_text_for_tokens(r)))
            for (i, _), n in zip(texts, self.tok.count_many([t for _, t in texts]), strict=True):
                self._ctx_tokens[i] = n
        return [self._ctx_tokens[i] for i in positions]

    def tail_tokens(self, c: int, keep: Iterable[int] = ()) -> int:
        ks = [k for k in keep if k < c]
        return sum(self.context_tokens(ks + self.messages_in(c, self.end)))

    def prompt_parts(self, positions: list[int]) -> list[tuple[str, int]]:
        """(serialized text, tokens) of each message as summarizer input; excluded messages
        (never sent by design) are not summarized and give ("", 0)."""
        todo = [i for i in positions if i not in self._prompt]
        if todo:
            self.load(todo)
            texts: list[tuple[int, str]] = []
            for i in todo:
                m = self.rec(i).message
                if self.excluded[i] or m is None:
                    self._prompt[i] = ("", 0)
                else:
                    texts.append((i, serialize_message(m)))
            for (i, t), n in zip(texts, self.tok.count_many([t for _, t in texts]), strict=True):
                self._prompt[i] = (t, n)
        return [self._prompt[i] for i in positions]


def message_intervals(ix: PathIndex, lo: int, hi: int, skip: set[int] | frozenset[int] = frozenset()) -> list[tuple[int, int]]:
    """The messages of [lo, hi) except `skip`, as path intervals (runs of consecutive messages)."""
    out: list[tuple[int, int]] = []
    start: int | None = None
    prev: int | None = None
    for p in ix.messages_in(lo, hi):
        if p in skip:
            if start is not None and prev is not None:
                out.append((start, prev + 1))
            start = None
            continue
        if start is None:
            start = p
        prev = p
    if start is not None and prev is not None:
        out.append((start, prev + 1))
    return out


# ---------------------------------------------------------------------------------------- turns


def active_user(ix: PathIndex) -> int | None:
    """Path position of the active turn's own user message: the last real user message, when no
    final answer (an assistant message that stopped without tool calls) came after it. The same
    rule the `live_question_summarized` finding uses."""
    for i in reversed(ix.msg_pos):
        r = ix.rec(i)
        if r.role == "assistant" and r.stop_reason in ("stop", "length") and not r.call_ids:
            return None
        if r.role == "user" and r.source_role in ("user", None):
            return i
    return None


# ---------------------------------------------------------------------------------------- tails


@dataclass(frozen=True, slots=True)
class Tail:
    """The raw part of a checkpoint: [cut, end) plus `keep` ahead of it."""

    cut: int
    keep: tuple[int, ...] = ()
    quote_active: int | None = None  # position of an active request quoted in the summary (pi)
    tokens: int = 0
    over_cap: bool = False  # no safe tail fits the cap: the smallest one was taken


def earliest_cut_within(ix: PathIndex, cap: int, floor: int = 0) -> int | None:
    """The earliest safe position c ≥ floor whose tail [c, end) costs at most `cap` tokens."""
    best: int | None = None
    total = 0
    positions = ix.messages_in(floor, ix.end)
    # Walk back in batches: only the tail that fits the cap (and one batch more) is read and counted.
    hi = len(positions)
    batch = 64
    while hi > 0:
        lo = max(0, hi - batch)
        part = positions[lo:hi]
        for i, cost in zip(reversed(part), reversed(ix.context_tokens(part)), strict=True):
            total += cost
            if total > cap:
                return best
            if ix.safe(i):
                best = i
        hi = lo
        batch = min(batch * 2, 4096)
    return best


def choose_tail(
    ix: PathIndex, cap: int, hard_cap: int, active: int | None, contiguous_only: bool, floor: int = 0
) -> Tail | None:
    """The retained tail: the newest safe tail within `cap`; the active turn's user message kept
    raw ahead of it (ahead of the window when the runtime allows a non-contiguous tail, else by
    starting the tail at it while that fits `hard_cap`, else quoted). None when the path has no
    safe cut at all."""
    last = ix.last_message()
    if last is None:
        return None
    smallest = ix.latest_safe_at_or_before(last, floor)
    if smallest is None and floor:
        floor = 0  # nothing safe after the floor: the smallest tail there is
        smallest = ix.latest_safe_at_or_before(last)
    if smallest is None:
        return None
    c = earliest_cut_within(ix, cap, floor)
    over = c is None
    if c is None:
        c = smallest
    if active is None or c <= active:
        return Tail(c, tokens=ix.tail_tokens(c), over_cap=over)
    if not contiguous_only:
        return Tail(c, keep=(active,), tokens=ix.tail_tokens(c, (active,)), over_cap=over)
    at_active = ix.latest_safe_at_or_before(active, floor)
    if at_active is not None:
        t = ix.tail_tokens(at_active)
        if t <= hard_cap:
            return Tail(at_active, tokens=t, over_cap=t > cap)
    return Tail(c, quote_active=active, tokens=ix.tail_tokens(c), over_cap=over)


# ---------------------------------------------------------------------------------------- proven span


def proven_reply(ix: PathIndex, route: Route | None) -> int | None:
    """Path position of the newest reply this route produced (seed 002): an assistant message
    with that (model, connection) that the provider accepted (not an error or abort). Everything
    before it was that request's input, so it is within this route's capacity. A reply produced
    on another route proves nothing, and no route means nothing is proven."""
    if route is None or (route.model_id is None and route.connection_id is None):
        return None
    drop = ix.report.runtime.not_sent_as_written  # (a failed reply sent as a marker is no answer either)
    for i in reversed(ix.msg_pos):
        r = ix.rec(i)
        if r.role != "assistant" or r.stop_reason in drop:
            continue
        m = r.message
        if m is not None and m.route is not None and m.route == route:
            return i
    return None
