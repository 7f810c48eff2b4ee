"""load -> Ledger -> analyze -> Report (DESIGN §4). Pure functions: no UI, no I/O.

Steps: the active path the runtime walks; each checkpoint's three sets (removes / represents /
retains); the coverage state of every message; the effective context after the runtime's
send-time rules; token counts; findings (in `findings.py`).
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import compress, islice, repeat
from operator import attrgetter, lt, sub
from typing import Any

import msgspec

from inspector.analysis.intervals import Interval, clip, contains, merge, subtract
from inspector.analysis.tokens import Tokenizer, get_tokenizer
from inspector.formats import registry
from inspector.formats.base import FAILED_STOP_REASONS, Runtime
from inspector.ledger.jsontext import dumps_text, py_str
from inspector.ledger.model import (
    MARK_ASSISTANT,
    MARK_CHECKPOINT,
    MARK_HAS_CHECKPOINT,
    MARK_KIND,
    MARK_NEVER_SENT,
    MARK_STOP,
    MARK_TURN,
    TURN_SOURCE_ROLES,
    Checkpoint,
    Diagnostic,
    Ledger,
    Message,
    Record,
    seqs_without,
)

# The `producer` a checkpoint this tool's repair wrote names in its details (pi, native).
REPAIR_PRODUCER = "inspector"

# Coverage states (DESIGN §2), plus `inactive` for messages on another branch of a tree.
LIVE, RETAINED, SUMMARIZED, EXCLUDED, HOLE, INACTIVE = "live", "retained", "summarized", "excluded", "hole", "inactive"
STATES: tuple[str, ...] = (LIVE, RETAINED, SUMMARIZED, EXCLUDED, HOLE, INACTIVE)


def written_by_repair(cp: Checkpoint) -> bool:
    """Did this tool's repair write the checkpoint (its details name us as the producer)?"""
    d = cp.details
    return isinstance(d, dict) and d.get("producer") == REPAIR_PRODUCER


class CheckpointView:
    """A checkpoint on the active path with its three sets.

    Internally the sets are ranges of path positions: `removes` = messages in [0, cut) except
    `keep`; `retains` = `keep` + messages in [cut, pos); `represents` = messages in `rep`.
    The list/set properties materialize them for callers that want sequence numbers.
    """

    __slots__ = (
        "_path",
        "_records",
        "carried_forward",
        "checkpoint",
        "cut",
        "empty_summary",
        "fallback",
        "first_kept_found",
        "first_kept_seq",
        "index",
        "keep",
        "own",
        "pos",
        "record",
        "rep",
        "repair",
        "seq",
        "shape",
    )

    def __init__(
        self,
        index: int,
        record: Record,
        pos: int,
        cut: int,
        keep: frozenset[int],
        rep: list[Interval],
        own: list[Interval],
        first_kept_seq: int | None,
        first_kept_found: bool | None,
        carried_forward: bool,
        empty_summary: bool,
        path: list[int],
        records: list[Record],
    ) -> None:
        self.index = index  # 1-based, in path order
        self.record = record
        self.seq = record.seq
        assert record.checkpoint is not None
        self.checkpoint: Checkpoint = record.checkpoint
        self.pos = pos
        self.cut = cut
        self.keep = keep
        self.rep = rep
        self.own = own
        self.first_kept_seq = first_kept_seq
        self.first_kept_found = first_kept_found  # None when the checkpoint names no boundary
        self.carried_forward = carried_forward
        self.empty_summary = empty_summary
        self.repair = written_by_repair(self.checkpoint)
        # A repair that carries a sound summary while it moves the boundary is not a fallback: it
        # made no request on purpose (its failure reason, if any, still makes it one).
        self.fallback = (carried_forward and not self.repair) or self.checkpoint.failure_reason is not None
        self._path = path
        self._records = records
        shape = self.checkpoint.retained_tail_shape
        if shape is None:
            kept = self.retains
            if kept:
                only_user = len(kept) == 1 and records[kept[0]].role == "user"
                shape = "latest_user_message" if only_user else "recent_window"
        self.shape = shape  # recent_window | latest_user_message | None (keeps nothing raw)

    def _msgs(self, lo: int, hi: int) -> list[int]:
        recs = self._records
        return [s for s in self._path[lo:hi] if recs[s].kind == "message"]

    @property
    def removes(self) -> list[int]:
        """Seqs of the messages it takes out of the next request."""
        return [s for s in self._msgs(0, self.cut) if s not in self.keep]

    @property
    def retains(self) -> list[int]:
        """Seqs of the messages it keeps raw, in path order."""
        if not self.keep:
            return self._msgs(self.cut, self.pos)
        recs = self._records
        return [
            s
            for i, s in enumerate(self._path[: self.pos])
            if recs[s].kind == "message" and (i >= self.cut or s in self.keep)
        ]

    @property
    def represents(self) -> set[int]:
        """Seqs of the messages its summary stands for."""
        out: set[int] = set()
        for lo, hi in self.rep:
            out.update(self._msgs(lo, hi))
        return out

    @property
    def represented_and_retained(self) -> list[Interval]:
        """Path intervals of the messages it keeps raw that its summary stands for too (the
        summarizer was given them: Claude Code's auto-compaction mid turn; the earlier user
        messages Codex keeps in its replacement history, issue 16 point 4)."""
        both = clip(self.rep, self.cut, self.pos)
        if self.keep:
            path = self._path
            both += [(i, i + 1) for i in range(self.cut) if path[i] in self.keep and contains(self.rep, i)]
        return merge(both)

    @property
    def own_range(self) -> list[int]:
        """Seqs its own summarizer call covered (empty for a fallback or an empty summary)."""
        out: list[int] = []
        for lo, hi in self.own:
            out.extend(self._msgs(lo, hi))
        return out

    def is_removed(self, i: int) -> bool:
        """Is path position i taken out of the request by this checkpoint?"""
        return i < self.cut and self._path[i] not in self.keep

    def is_represented(self, i: int) -> bool:
        return contains(self.rep, i)

    def split_unrepresented(self, positions: list[int]) -> tuple[list[int], list[int]]:
        """Of these sorted path positions, (those it removes and does not represent, the others),
        both sorted: `is_removed and not is_represented` for each, a slice of them at a time."""
        if type(self).is_removed is not CheckpointView.is_removed:  # its own removal rule (ADK)
            gone: list[int] = []
            rest: list[int] = []
            for i in positions:
                (gone if self.is_removed(i) and not self.is_represented(i) else rest).append(i)
            return gone, rest
        below = bisect_left(positions, self.cut)
        gone, rest = [], []
        j = 0
        for lo, hi in self.rep:  # merged and sorted: the represented runs below the cut
            if j >= below:
                break
            a = bisect_left(positions, lo, j, below)
            b = bisect_left(positions, hi, a, below)
            gone += positions[j:a]
            rest += positions[a:b]
            j = b
        gone += positions[j:below]
        if self.keep:
            path, keep = self._path, self.keep
            kept = [i for i in gone if path[i] in keep]
            if kept:
                gone = [i for i in gone if path[i] not in keep]
                rest = sorted(rest + kept)
        return gone, rest + positions[below:]


class ContextItem(msgspec.Struct, gc=False):
    """One item of what the runtime sends next. (A msgspec Struct, not a dataclass: built in C,
    at a third of the cost, once per message of the next request: 66k of them on a 100 MB pi
    session. Nothing it holds refers back to it: untracked by the cyclic collector.)"""

    index: int
    role: str  # the role the model sees: system | user | assistant | tool
    kind: str  # summary | message
    seq: int | None
    record_id: str | None
    line: int | None
    synthetic: bool
    # The item's own text, sent as it stands: a summary's, a synthetic item's, or what the runtime
    # sends in place of its record's content (`Runtime.reply_sent_as`, `Runtime.failed_turn_marker`);
    # "": the record's content is sent.
    text: str
    tokens: int | None = None  # None until counted (Report.ensure_tokens)
    tokens_from: str = "tiktoken"  # usage | tiktoken
    # The call lists are read, never changed in place (an assistant item is given a list of its
    # own; a list is assigned where calls go unanswered): an item without one shares the empty
    # tuple, not two new lists each (~5 MB and 63k allocations over a 100 MB native ledger's 32k
    # items; a list default was ~0.25 us an item more, a factory's twice that).
    tool_call_ids: Sequence[str] = ()
    tool_result_id: str | None = None
    orphan: bool = False  # a tool result whose call is not in the context
    # The results of this line the runtime removes from the request (it sends the rest of the
    # line: Claude Code's `Pqi`); whole lines removed are the report's `dropped_results`.
    removed_results: Sequence[str] = ()
    unanswered: Sequence[str] = ()  # calls with no result in the context
    note: str | None = None  # how the runtime derives this item from the file, when not as written
    # Added (or, not synthetic, changed) by the runtime when it resumes the session, not while it
    # runs (Claude Code's reply to a turn it finds unfinished; OpenClaw's trailing user message moved
    # into the next prompt): a request sent before the session stopped does not hold it so.
    on_resume: bool = False
    # The runtime sends its record's content less some blocks (`Runtime.reply_trimmed`), or
    # rewritten (`Runtime.rewrites_sent`): counted on what it sends (`sent`, else
    # `RecordSource.sent_message`), not on the usage the reply recorded.
    trimmed: bool = False
    sent: Message | None = None  # the message as the runtime sends it, where `Runtime.rewrites_sent` rewrote it
    # The records whose content the runtime sends in this item's message after its own record's
    # (`Runtime.sent_shape`: OpenClaw merges adjacent answers, and adjacent user messages): counted
    # with it, on the text of them all.
    joined: Sequence[int] = ()

    @property
    def last_seq(self) -> int | None:
        """The last record this item sends (its own, or the last it joins)."""
        return self.joined[-1] if self.joined else self.seq


@dataclass(slots=True)
class Finding:
    code: str
    severity: str  # error | warning | info
    message: str
    records: list[int]  # seqs
    by_role: dict[str, int] | None = None
    data: dict[str, Any] | None = None


@dataclass(slots=True)
class Report:
    ledger: Ledger
    runtime: Runtime
    path: list[int]  # seqs root..leaf (the runtime's view)
    on_path: bytearray  # per seq: 1 when on the active path
    states: list[str | None]  # per seq: coverage state for messages, None otherwise
    summarized_by: list[int]  # per seq: checkpoint index that represents it (0 = none), retained ones too
    checkpoints: list[CheckpointView]
    context: list[ContextItem]
    context_tokens: int
    tokens_source: str
    tokenizer: str
    tokenizer_offline: bool
    window: int | None
    reserve: int | None
    findings: list[Finding]
    lost_to_runtime: list[int]  # seqs on the recovered path the runtime cannot reach
    broken_tree: list[Diagnostic]
    _tokenizer: Tokenizer
    # The seqs of the lines holding only tool results the runtime removes from the next request, a
    # result it cannot pair with a call of the request (Claude Code, OpenClaw, Codex): excluded,
    # never read by the model. A line it sends the rest of names them in `ContextItem.removed_results`.
    dropped_results: list[int] = field(default_factory=list)
    # What extending this report after an append needs beyond it (analysis.incremental), built on
    # the first extension; None until then.
    _growth: Any = None
    # What `analyze` read of the path's records (`PathScan`), for the rules that read them again
    # (valid while its `path` is this report's path).
    _scan: Any = None

    def coverage_counts(self) -> dict[str, int]:
        counts = dict.fromkeys(STATES, 0)
        for s, n in Counter(self.states).items():  # (the tally in C)
            if s is not None:
                counts[s] += n
        return counts

    def record(self, seq: int) -> Record:
        return self.ledger.records[seq]

    def ensure_tokens(self, items: list[ContextItem] | None = None) -> list[ContextItem]:
        """Count the tokens of every item of the next request (analysis counts only what the
        total needs), or of `items`, some of them (a caller counting a part at a time); returns
        the items."""
        count_tokens(self.ledger, self.context if items is None else items, self._tokenizer)
        return self.context


# ---------------------------------------------------------------------------------------- path


def walk_path(led: Ledger, leaf_seq: int | None, include_invisible: bool) -> tuple[list[int], Diagnostic | None]:
    """Seqs from root to leaf following parent ids, guarding against cycles (pi would loop)."""
    if leaf_seq is None:
        return [], None
    records = led.records
    if include_invisible:
        by_id: dict[str, int] = {}
        for r in records:
            if r.id is not None:
                by_id[r.id] = r.seq
    else:
        by_id = led.by_id()
        chain = _linear_chain(records, by_id, leaf_seq)
        if chain is not None:
            return chain, None
    path: list[int] = []
    append = path.append
    get = by_id.get
    limit = len(records)
    cur: int | None = leaf_seq
    # No `seen` set on the hot path: a walk longer than the ledger must have met a cycle.
    while cur is not None and len(path) <= limit:
        append(cur)
        pid = records[cur].parent_id
        cur = get(pid) if pid is not None else None
    problem: Diagnostic | None = None
    if cur is not None:
        seen: set[int] = set()
        path = []
        cur = leaf_seq
        while cur is not None and cur not in seen:
            seen.add(cur)
            path.append(cur)
            pid = records[cur].parent_id
            cur = by_id.get(pid) if pid is not None else None
        r = records[cur] if cur is not None else records[path[-1]]
        problem = Diagnostic(
            r.line,
            "parent_cycle",
            f"line {r.line}: parentId {r.parent_id!r} leads back into its own ancestry (a cycle); "
            "pi's context builder would never finish walking it",
            severity="error",
            seqs=[r.seq],
        )
    path.reverse()
    return path, problem


_PARENT_ID = attrgetter("parent_id")


def _linear_chain(records: list[Record], by_id: dict[str, int], leaf_seq: int) -> list[int] | None:
    """`walk_path`'s path, checked in C rather than walked, when the ids form one chain in the
    id index's order (the common ledger: each entry's parent the entry before it, the leaf the
    last): the index's seqs, each record's parent the id before its own, the first's parent no
    record's. None: not so (a branch, a reused id, another leaf); walk it."""
    if not by_id:
        return None
    seqs = list(by_id.values())
    if seqs[-1] != leaf_seq:
        return None
    parents = list(map(_PARENT_ID, map(records.__getitem__, seqs)))
    first = parents[0]
    if (first is not None and first in by_id) or parents[1:] != list(islice(by_id, len(seqs) - 1)):
        return None
    return seqs


def active_path(led: Ledger, rt: Runtime) -> tuple[list[int], Diagnostic | None]:
    if led.runtime_rejects_file:
        return [], None
    if not rt.tree:
        ix = led.record_index()
        if ix is not None and ix.off_path is not None:
            if ix.path_of is not None and len(ix.path_of) == ix.count - len(ix.off_path):
                return list(ix.path_of.values()), None
            return seqs_without(ix.off_path, len(led.records), ix.seqs if ix.seqs is not None and len(ix.seqs) == ix.count else None), None
        return [r.seq for r in led.records if r.runtime_visible and r.kind != "header"], None
    if led.resolved_path is not None:
        return list(led.resolved_path), None
    return walk_path(led, led.leaf_seq, include_invisible=False)


def recovered_path(led: Ledger, rt: Runtime) -> list[int]:
    """The path as it would be had every line been readable (recovered glued objects included)."""
    if not rt.tree or led.version == 1:
        # v1 pi files have no ids: their history is the file order, every readable line included.
        return [r.seq for r in led.records if r.kind != "header"]
    leaf = None
    for r in reversed(led.records):
        if r.kind != "header":
            leaf = r.seq
            break
    path, _ = walk_path(led, leaf, include_invisible=True)
    return path


class PathScan:
    """What the analysis reads of the path's records, read in one pass (issue 15: each pass over
    every record of a 100 MB ledger costs its time in cache misses): the path positions of the
    checkpoint records (`breaks`; `cps`: those with a checkpoint), of the messages (`msgs`, with
    `codes`: 2 never sent, 1 a reply the runtime drops by its stop reason, 0 otherwise) and of the
    user messages that start a turn (`turns`). Given the loader's `marks` (the seqs of every
    message and checkpoint record, ascending) and a path that is a run of seqs (file order, none
    left out: a linear runtime's whole file but its header), only the marked records are read;
    given its `codes` (`RecordIndex.codes`) and such a path, none is."""

    __slots__ = ("_in_order", "breaks", "codes", "cps", "msgs", "path", "turns")

    def __init__(
        self,
        records: list[Record],
        path: list[int],
        rt: Runtime,
        in_order: bool | None = None,
        marks: list[int] | None = None,
        codes: bytes | bytearray | None = None,
    ) -> None:
        drop = rt.drop_stop_reasons
        self.path = path
        self._in_order: bool | None = in_order
        self.cps: list[int] = []
        self.breaks: list[int] = []
        self.msgs: list[int] = []
        self.codes = bytearray()
        self.turns: list[int] = []
        if codes is not None and len(codes) == len(records) and in_order and path and path[-1] - path[0] == len(path) - 1:
            self._read_codes(codes[path[0] : path[-1] + 1], drop)
            return
        msgs, scan_codes, turns = self.msgs, self.codes, self.turns
        for i, s in _positions(path, in_order, marks):
            r = records[s]
            k = r.kind
            if k == "message":
                msgs.append(i)
                role = r.role
                scan_codes.append(2 if r.never_sent else 1 if role == "assistant" and r.stop_reason in drop else 0)
                if role == "user" and r.source_role in TURN_SOURCE_ROLES:
                    turns.append(i)
            elif k == "checkpoint":
                self.breaks.append(i)
                if r.checkpoint is not None:
                    self.cps.append(i)

    def _read_codes(self, codes: bytes | bytearray, drop: frozenset[str]) -> None:
        """The scan of a path that is a run of seqs from the loader's `mark_code` of each of its
        records (`codes`), each list picked out in C (`picked`): no record read, and each position
        the path's own int object (path[i] == path[0] + i: position i >= path[0] is
        path[i - path[0]], no list of the positions built)."""
        path = self.path
        head = min(path[0], len(path))  # (the positions below path[0]: no path item is their int)

        def pick(table: bytes) -> list[int]:
            flags = codes.translate(table)
            out = picked(path, flags[head:])
            out[:0] = [i for i in range(head) if flags[i]]  # (a move, not a copy of each int's reference)
            return out

        self.msgs = pick(_IS_MESSAGE)
        self.codes = bytearray(codes.translate(_code_table(drop), _NOT_MESSAGE_CODES))
        self.turns = pick(_IS_TURN)
        self.breaks = pick(_IS_CHECKPOINT)
        self.cps = pick(_HAS_CHECKPOINT)

    def in_order(self) -> bool:
        """Whether the path's seqs strictly increase (file order: each seq once), read once."""
        if self._in_order is None:
            self._in_order = _increasing(self.path)
        return self._in_order


def picked(items: list[int], flags: bytes | bytearray) -> list[int]:
    """`list(compress(items, flags))` for flags of 0 and 1 (`items` as long as `flags` or longer),
    without a step per item where the flags are mostly one value (`compress` reads every flag,
    ~15 ns each: four lists over a 100 MB ledger's 160k records were 10 ms): few 1s, each found by
    a search (~150 ns a find); few 0s, the slices between them."""
    n, ones = len(flags), flags.count(1)
    if ones * _FEW > n:
        if (n - ones) * _FEW > n:
            return list(compress(items, flags))
        out: list[int] = []
        start, j = 0, flags.find(0)
        while j >= 0:
            out += items[start:j]
            start, j = j + 1, flags.find(0, j + 1)
        out += items[start:n]
        return out
    out = []
    j = flags.find(1)
    while j >= 0:
        out.append(items[j])
        j = flags.find(1, j + 1)
    return out


_FEW = 12  # (a flag value is the minority one when under 1/12 of the flags)


def _positions(path: list[int], in_order: bool | None, marks: list[int] | None) -> Iterable[tuple[int, int]]:
    """(position, seq) of the path's records `PathScan` reads: every one, or, when the path is a
    run of seqs, only the marked ones in it (their positions by subtraction, in C)."""
    if marks is None or not in_order or not path or path[-1] - path[0] != len(path) - 1:
        return enumerate(path)
    base = path[0]
    seqs = marks[bisect_left(marks, base) : bisect_right(marks, path[-1])]
    return zip(map(sub, seqs, repeat(base, len(seqs))), seqs, strict=True)


def _flags(test: Callable[[int], bool]) -> bytes:
    """The 256-byte table `bytes.translate` maps each `mark_code` with: 1 where `test` holds."""
    return bytes(1 if test(c) else 0 for c in range(256))


_IS_MESSAGE = _flags(lambda c: c & MARK_KIND == 0)
_IS_TURN = _flags(lambda c: c & MARK_KIND == 0 and bool(c & MARK_TURN))
_IS_CHECKPOINT = _flags(lambda c: c & MARK_KIND in (MARK_CHECKPOINT, MARK_HAS_CHECKPOINT))
_HAS_CHECKPOINT = _flags(lambda c: c & MARK_KIND == MARK_HAS_CHECKPOINT)
_NOT_MESSAGE_CODES = bytes(c for c in range(256) if c & MARK_KIND)
_STOP_OF_MARK = {v: k for k, v in MARK_STOP.items()}
# 1 for each `PathScan.codes` but a never-sent message's (2).
SENT_CODES = bytes(0 if c == 2 else 1 for c in range(256))


@lru_cache(maxsize=8)
def _code_table(drop: frozenset[str]) -> bytes:
    """`PathScan.codes` of a message by its `mark_code`: 2 never sent, 1 an assistant reply the
    runtime drops by its stop reason (`drop`), else 0."""
    return bytes(
        2 if c & MARK_NEVER_SENT else 1 if c & MARK_ASSISTANT and _STOP_OF_MARK.get(c & 7) in drop else 0 for c in range(256)
    )


def _increasing(path: list[int]) -> bool:
    return all(map(lt, path, islice(path, 1, None)))


# ---------------------------------------------------------------------------------------- summaries

_FILE_LISTS = re.compile(r"<(read-files|modified-files)>.*?</\1>", re.S)
_SPLIT_SEP = "---\n\n**Turn Context (split turn):**"
# What pi writes as the history part of a split turn with nothing before it, asking no summarizer
# (compaction.js:564-566).
_NO_PRIOR_HISTORY = "No prior history."


def no_prior_history(summary: str) -> bool:
    """A split-turn summary whose history part pi wrote itself: no summarizer was asked for it,
    and so none was handed the previous summary (compaction.js:562-566)."""
    head, sep, _ = summary.partition(_SPLIT_SEP)
    return bool(sep) and head.strip() == _NO_PRIOR_HISTORY


def split_turn_answers(summary: str) -> tuple[bool, bool] | None:
    """Whether each half of a split-turn summary holds an answer: (history, turn prefix), None when
    the summary is not split. pi joins the history summarizer's answer, the separator and the
    turn-prefix summarizer's answer, then appends the file lists (compaction.js:561-576); either
    summarizer may answer nothing, and a history part pi wrote itself asked no one (:566)."""
    s = _FILE_LISTS.sub("", summary)
    head, sep, tail = s.partition(_SPLIT_SEP)
    if not sep:
        return None
    return bool(head.strip()) and not no_prior_history(s), bool(tail.strip())


def _starts_turn(rec: Record) -> bool:
    """pi's turn start: a user or `!command` message, a custom message or a branch summary
    (findTurnStartIndex, compaction.js:272-289)."""
    if rec.type in ("branch_summary", "custom_message"):
        return True
    return rec.type == "message" and rec.source_role in ("user", "bashExecution")


def _summarizer_ranges(
    summary: str, path: list[int], records: list[Record], start: int, cut: int, end: int
) -> tuple[list[Interval], bool]:
    """The path ranges a boundary summary's answers stand for, and whether it stands for the
    previous summary too. One summarizer was handed [start, end) and the previous summary. When
    the cut splits a turn (a split-turn summary) two were asked at once (compaction.js:561-570):
    the history one [start, turn start) with the previous summary (prepareCompaction :497-503),
    the turn-prefix one [turn start, cut) without it (:506-513, :592-596); each half stands for
    its own input only when it answered (issue 16: seed 5's split turns)."""
    answers = split_turn_answers(summary)
    turn = next((i for i in range(cut, start - 1, -1) if _starts_turn(records[path[i]])), None) if answers else None
    if answers is None or turn is None:
        return ([(start, end)] if end > start else []), True
    history, prefix = answers
    out = [(start, turn)] if history and turn > start else []
    if prefix and end > turn:
        out.append((turn, end))
    return out, history


def summary_substance(summary: str) -> str:
    """The summary text with pi's own additions (file lists, split-turn separator, the history
    part it writes itself) removed."""
    s = _FILE_LISTS.sub("", summary)
    head, _, tail = s.partition(_SPLIT_SEP)
    if no_prior_history(s):
        head = ""
    return (head + tail).strip()


def forgotten_overflows(led: Ledger, path: list[int], rt: Runtime, window: int | None) -> frozenset[int]:
    """The answers the running pi took out of its messages as a context overflow and never got
    back. pi checks a run's last answer at agent_end (agent-session.js:327-341): one that succeeded
    while its usage shows its request's input and cache reads over the model's window, or was cut
    with no output at 99% of it, is an overflow (pi-ai utils/overflow.js:114-135); pi removes it
    from the agent's messages (it stays in the file) and compacts (agent-session.js:1397-1417).
    Only a written compaction rebuilds the messages from the file (:1544-1546): after a failed
    one the process never sends the answer again (a restarted pi reads it back). The window is
    the model's, which a pi session does not record: nothing is forgotten when it is not known."""
    if not rt.forgets_silent_overflow or window is None:
        return frozenset()
    records = led.records
    last_cp = max((i for i, s in enumerate(path) if records[s].kind == "checkpoint"), default=-1)
    out: set[int] = set()
    for s in path[last_cp + 1 :]:
        r = records[s]
        if r.kind != "message" or r.role != "assistant" or r.stop_reason not in ("stop", "length"):
            continue
        u = r.message.usage if r.message is not None else None
        if u is None:
            continue
        seen = u.input + u.cache_read
        if seen > window if r.stop_reason == "stop" else (u.output == 0 and seen >= 0.99 * window):
            out.add(s)
    return frozenset(out)


def _dropped_at_send(rec: Record, rt: Runtime) -> bool:
    if rec.kind != "message" or rec.never_sent:
        return True
    return rec.role == "assistant" and rec.stop_reason in rt.drop_stop_reasons


# ---------------------------------------------------------------------------------------- checkpoints


class PathPositions:
    """Where each seq on the path is: `seq in pos`, `pos[seq]`. A path in file order (every
    runtime that is not a tree, and most trees) is searched by bisection: no 100k-entry dict for
    the few boundaries and ranges the checkpoints name."""

    __slots__ = ("_at", "_path")

    def __init__(self, path: list[int], in_order: bool | None = None) -> None:
        self._path = path
        if in_order is None:
            in_order = _increasing(path)
        self._at: dict[int, int] | None = None if in_order else {s: i for i, s in enumerate(path)}

    def __contains__(self, seq: object) -> bool:
        if self._at is not None:
            return seq in self._at
        if not isinstance(seq, int):
            return False
        i = bisect_left(self._path, seq)
        return i < len(self._path) and self._path[i] == seq

    def __getitem__(self, seq: int) -> int:
        if self._at is not None:
            return self._at[seq]
        i = bisect_left(self._path, seq)
        if i < len(self._path) and self._path[i] == seq:
            return i
        raise KeyError(seq)


def _explicit_sets(
    cp: Checkpoint, by_id: dict[str, int], pos_of: PathPositions, ci: int
) -> tuple[int, bool | None, frozenset[int], list[Interval]]:
    """A checkpoint that states its sets (native, Codex, maka): where its boundary cuts the path,
    whether the boundary was found on it, the records it retains ahead of the cut, and the path
    ranges it represents."""
    cut = 0
    found: bool | None = None
    if cp.explicit_boundary is not None:
        b = by_id.get(cp.explicit_boundary)
        found = b is not None and b in pos_of and pos_of[b] < ci
        cut = pos_of[b] + 1 if found and b is not None else ci
    keep = frozenset(by_id[i] for i in (cp.explicit_retains or []) if i in by_id and by_id[i] in pos_of and pos_of[by_id[i]] < cut)
    ivs: list[Interval] = []
    for a, b2 in cp.explicit_represents or []:
        sa, sb = by_id.get(a), by_id.get(b2)
        if sa is None or sb is None or sa not in pos_of or sb not in pos_of:
            continue
        lo, hi = sorted((pos_of[sa], pos_of[sb]))
        ivs.append((lo, hi + 1))
    return cut, found, keep, merge(ivs)


def named_ids(cps: list[Checkpoint | None]) -> set[str]:
    """Every record id these checkpoints name (boundaries, what they keep and represent): all
    `checkpoint_views` looks up."""
    out: set[str] = set()
    for cp in cps:
        if cp is None:
            continue
        out.update((cp.explicit_boundary, cp.first_kept_id, cp.summarized_through_id))
        out.update(cp.explicit_retains or ())
        for pair in cp.explicit_represents or ():
            out.update(pair)
        d = cp.details
        if isinstance(d, dict) and isinstance(d.get("represents"), list):
            for pair in d["represents"]:
                if isinstance(pair, list):
                    out.update(x for x in pair if isinstance(x, str))
    return {i for i in out if isinstance(i, str)}


def checkpoint_views(led: Ledger, path: list[int], rt: Runtime, scan: PathScan | None = None) -> list[CheckpointView]:
    records = led.records
    if scan is not None:
        cps = scan.cps
    else:
        cps = [i for i, s in enumerate(path) if records[s].kind == "checkpoint" and records[s].checkpoint is not None]
    if not cps:
        return []
    pos_of = PathPositions(path, scan.in_order() if scan is not None else None)
    by_id = led.ids_to_seqs(named_ids([records[path[ci]].checkpoint for ci in cps]))
    views: list[CheckpointView] = []
    prev: CheckpointView | None = None
    prev_start = 0  # path position where the next summarizer range starts
    for ci in cps:
        rec = records[path[ci]]
        cp = rec.checkpoint
        assert cp is not None
        keep: frozenset[int] = frozenset()
        first_kept_seq: int | None = None
        found: bool | None = None
        prev_rep = prev.rep if prev is not None else []
        if cp.explicit_boundary is not None or cp.explicit_retains is not None or cp.explicit_represents is not None:
            # Native: explicit boundary (last removed record), retains and represents.
            cut, found, keep, rep = _explicit_sets(cp, by_id, pos_of, ci)
            # Its summarizer call was given what came after the previous checkpoint and what that
            # one kept raw (Codex sends the replacement history whole, the kept user messages
            # among it): only what reached it through the previous summary is not its own.
            prev_gone = _represented_only(prev, pos_of)
            own: list[Interval] = [part for iv in rep for part in subtract(iv, prev_gone)]
            carried = prev is not None and bool(cp.summary) and cp.summary == prev.checkpoint.summary
            empty = not cp.summary.strip() and cp.opaque_summary is None
            start_next = cut
        else:
            # pi: summary, then entries from firstKeptEntryId up to the compaction, then after it.
            cut = ci
            if cp.first_kept_id is not None:
                k = by_id.get(cp.first_kept_id)
                found = k is not None and k in pos_of and pos_of[k] < ci
                if found and k is not None:
                    cut = pos_of[k]
                    first_kept_seq = k
            substance = summary_substance(rt.summary_body(cp.summary))
            empty = not substance
            carried = prev is not None and bool(substance) and substance == summary_substance(rt.summary_body(prev.checkpoint.summary))
            # Its summarizer call covered what came after the previous one up to the messages
            # it keeps raw, or up to itself when it was given those too (they are then both
            # represented and retained: DESIGN §2, issue 16 point 4).
            end = cut
            if cp.summarized_through_id is not None and by_id.get(cp.summarized_through_id) in pos_of:
                end = max(cut, min(ci, pos_of[by_id[cp.summarized_through_id]] + 1))
            body = rt.summary_body(cp.summary)
            own, inherits = _summarizer_ranges(body, path, records, prev_start, cut, end)
            stated = _stated_represents(cp, by_id, pos_of, ci)
            if empty:
                rep = []
            elif stated is not None:
                # Written by this tool's repair: the summary was rebuilt from source for exactly
                # these ranges, so pi's chaining rule (previous + own range) does not apply.
                rep = stated
                own = [part for iv in rep for part in subtract(iv, prev_rep)]
            elif carried or cp.failure_reason is not None:
                rep = list(prev_rep)
            else:
                # What the previous summary stood for is lost when no answering summarizer had it.
                rep = merge([*(prev_rep if inherits else []), *own])
            start_next = cut if found else ci + 1
        if carried or empty or cp.failure_reason is not None:
            own = []
        view = CheckpointView(
            len(views) + 1, rec, ci, cut, keep, rep, own, first_kept_seq, found, carried, empty, path, records
        )
        views.append(view)
        prev = view
        prev_start = start_next
    return views


def _represented_only(v: CheckpointView | None, pos_of: PathPositions) -> list[Interval]:
    """Path intervals V's summary stands for that it took out of the request (not kept raw)."""
    if v is None:
        return []
    kept = merge([(pos_of[s], pos_of[s] + 1) for s in v.keep if s in pos_of] + [(v.cut, v.pos)])
    return merge([part for iv in v.rep for part in subtract(iv, kept)])


def _stated_represents(cp: Checkpoint, by_id: dict[str, int], pos_of: PathPositions, ci: int) -> list[Interval] | None:
    """A pi compaction's own statement of what its summary stands for (`details.represents`, a
    list of [first id, last id] ranges), as path intervals before it; None when it states none.
    pi itself ignores the field; ranges whose ends are not on the path before it are dropped."""
    d = cp.details
    if not isinstance(d, dict) or not isinstance(d.get("represents"), list):
        return None
    ivs: list[Interval] = []
    for pair in d["represents"]:
        if not (isinstance(pair, list) and len(pair) == 2 and all(isinstance(x, str) for x in pair)):
            continue
        a, b = by_id.get(pair[0]), by_id.get(pair[1])
        if a is None or b is None or a not in pos_of or b not in pos_of:
            continue
        lo, hi = sorted((pos_of[a], pos_of[b]))
        if hi < ci:
            ivs.append((lo, hi + 1))
    return merge(ivs)


# ---------------------------------------------------------------------------------------- context


def message_text_for_tokens(rec: Record) -> str:
    """The text a tokenizer counts for a message: its texts, tool names and call arguments."""
    return text_for_tokens(rec.message)


def text_for_tokens(m: Message | None) -> str:
    """`message_text_for_tokens` of a message."""
    if m is None:
        return ""
    parts: list[str] = []
    for b in m.blocks:
        if b.type in ("text", "thinking", "tool_result"):
            if b.text:
                parts.append(b.text)
        elif b.type == "tool_call":
            parts.append(str(b.name or ""))
            try:
                parts.append(dumps_text(b.args))
            except TypeError:
                parts.append(py_str(b.args))
    return "\n".join(parts)


def effective_context(
    led: Ledger,
    path: list[int],
    views: list[CheckpointView],
    rt: Runtime,
    tok: Tokenizer,
    forgotten: frozenset[int] = frozenset(),
    scan: PathScan | None = None,
    left_out: list[int] | None = None,
) -> list[ContextItem]:
    """The next request's items (`sent_items` after the latest checkpoint's summary and retained
    tail); `left_out` gets the seqs of the results the runtime removes whole."""
    if rt.replaces_history:
        from inspector.analysis.replacement import replacement_context

        return replacement_context(led, path, views, rt, scan, left_out)
    records = led.records
    items: list[ContextItem] = []
    sources: list[int]
    if views:
        last = views[-1]
        cp = last.checkpoint
        if cp.summary or rt.sends_empty_summary:
            text = rt.summary_prefix + cp.summary + rt.summary_suffix
            items.append(
                ContextItem(0, "user", "summary", last.seq, last.record.id, last.record.line, False, text)
            )
        if scan is not None:
            sources = list(last.retains) + [path[i] for i in scan.msgs[bisect_right(scan.msgs, last.pos) :]]
        else:
            sources = list(last.retains) + [s for s in path[last.pos + 1 :] if records[s].kind == "message"]
    elif scan is not None:  # (`sent_items` passes over a message never sent: not listed)
        sources = sent_messages_after(scan, path)
    else:
        sources = [s for s in path if records[s].kind == "message"]

    items += sent_items(records, sources, rt, set(), forgotten, left_out, opens_request=not items)
    append_resume_reply(led, items, rt)
    items = shaped(led, path, items, rt, True)
    for i, it in enumerate(items):
        it.index = i
    if rt.rewrites_sent is not None:
        rt.rewrites_sent(led, path, items)
    return items


def shaped(led: Ledger, path: Sequence[int], items: list[ContextItem], rt: Runtime, opens: bool) -> list[ContextItem]:
    """`items` as the runtime sends them (`Runtime.sent_shape`; `opens`: they open the request):
    each run it merges one item (its first record's, joining the others), a message it moves into
    the next prompt on resume sent as that text (`on_resume`: a request of the turn in progress,
    whose prompt it is, holds it as written), a message it sends first added. Not renumbered."""
    shape = rt.sent_shape(led, path, items, opens) if rt.sent_shape is not None and items else None
    if shape is None:
        return items
    out: list[ContextItem] = []
    if shape.opens_with is not None:
        text, note = shape.opens_with
        out.append(ContextItem(0, "user", "message", None, None, None, True, text, note=note))
    runs = {r.first: r for r in shape.runs}
    i = 0
    while i < len(items):
        run = runs.get(i)
        if run is None:
            out.append(items[i])
            i += 1
            continue
        members = items[run.first : run.last + 1]
        out.append(
            msgspec.structs.replace(
                members[0], text=run.text, note=run.note, tokens=None, tokens_from="tiktoken", trimmed=False,
                joined=[s for it in members[1:] for s in (it.seq, *it.joined) if s is not None],
                tool_call_ids=[] if run.text else [c for it in members for c in it.tool_call_ids],
                unanswered=[] if run.text else [c for it in members for c in it.unanswered],
            )
        )  # fmt: skip
        i = run.last + 1
    if shape.into_prompt is not None:
        k, text, note = shape.into_prompt
        moved = items[k]
        at = next(j for j in range(len(out) - 1, -1, -1) if out[j] is moved)
        out[at] = msgspec.structs.replace(moved, text=text, note=note, tokens=None, tokens_from="tiktoken", on_resume=True)
    return out


def sent_items(
    records: list[Record], sources: list[int], rt: Runtime, in_context_calls: set[str],
    forgotten: frozenset[int] = frozenset(), left_out: list[int] | None = None, opens_request: bool = False,
) -> list[ContextItem]:
    """The items the runtime sends for `sources` (messages in request order), each assistant's calls
    paired with the results after it up to the next assistant or user message (a call left without
    one flagged, and given the runtime's synthetic result). `in_context_calls`: the calls of the
    items before them (updated; a result whose call is not among them is an orphan); `forgotten`:
    answers the running process dropped (`forgotten_overflows`), left out as dropped stop reasons
    are; `left_out` gets the results the runtime removes whole; `opens_request`: no summary before."""
    items: list[ContextItem] = []
    append, pending = items.append, ()  # (pending: the call ids of the last assistant's calls)
    # The answers since those calls were made (read only while some are pending: cleared when a
    # reply makes calls, not made anew when they are settled).
    answered: set[str] = set()
    pending_item: ContextItem | None = None
    went_on = False  # a user's message came after those calls (`Runtime.joins_user_lines`: they stay pending)
    drop, many_results = rt.drop_stop_reasons, rt.many_results_per_message
    marked, scoped = rt.marked_stop_reasons, rt.results_answer_reply_before
    msg = UserMessage(0, opens_request) if rt.results_first or scoped else None  # (the user message being built)
    for s in sources:
        rec = records[s]
        if rec.never_sent:
            continue
        role = rec.role
        if role == "assistant":
            stop = rec.stop_reason
            if (stop in drop or s in forgotten) and rt.drops_before_pairing:
                continue  # (taken out before the request is built: it ends no calls, splits no message)
            if pending:  # (settled: each call answered, the usual case, found in C)
                if not answered.issuperset(pending):
                    flag_unanswered(items, pending_item, pending, answered, rt)
                pending = ()
            if stop in drop or s in forgotten:
                continue
            if msg is not None:
                msg.close(items, rt, left_out)
            if stop in marked:  # (none but where the runtime has a failed-turn marker)
                append(marked_item(rec, rt))
                continue
            item, calls = reply_item(rec, rt, in_context_calls)
            append(item)
            if calls:
                pending, pending_item, went_on = calls, item, False
                answered.clear()
                in_context_calls.update(calls)
        elif role == "tool":
            rid = rec.result_id
            if many_results:
                rids = result_ids(rec, rid)
                if scoped and not (len(rids) == 1 and rids[0] in pending and rids[0] not in answered):
                    unpaired_results(items, rec, rids, pending, answered, rt, msg, left_out)  # type: ignore[arg-type]
                    answered.update(rids)
                    continue
                answered.update(rids)
                orphan = not scoped and (not rids or not in_context_calls.issuperset(rids))
            elif rid is not None:  # (one result: no list, no generator per result)
                answered.add(rid)
                orphan = rid not in in_context_calls
            else:
                orphan = True
            if orphan and rt.drops_orphan_results:  # (removed whole)
                left_out.append(s) if left_out is not None else None
                continue
            append(ContextItem(0, "tool", "message", s, rec.id, rec.line, False, "", tool_result_id=rid, orphan=orphan))
        elif role is not None:
            if role == "user" and pending and rec.type not in rt.turn_neutral_types:
                went_on = True
                if not rt.joins_user_lines:
                    if not answered.issuperset(pending):
                        flag_unanswered(items, pending_item, pending, answered, rt)
                    pending = ()
            append(ContextItem(0, role, "message", s, rec.id, rec.line, False, ""))
    if pending and not answered.issuperset(pending):
        flag_unanswered(items, pending_item, pending, answered, rt, ends=not went_on)
    if msg is not None:
        msg.close(items, rt, left_out, last=True)
    return items


def reply_item(rec: Record, rt: Runtime, earlier: set[str]) -> tuple[ContextItem, tuple[str, ...]]:
    """A reply's item as the runtime sends it, and the calls it makes there: its calls less those
    repeating an earlier call's id where the runtime removes them (`earlier`: the request's calls
    so far), or, making none, the text the runtime sends in place of its content, if any."""
    calls = rec.call_ids
    item = ContextItem(0, "assistant", "message", rec.seq, rec.id, rec.line, False, "", tool_call_ids=[*calls])
    if calls and rt.removes_repeated_calls and (not earlier.isdisjoint(calls) or (len(calls) > 1 and len(set(calls)) < len(calls))):
        calls = without_repeated_calls(item, rec, earlier, rt)
    elif not calls and rt.reply_sent_as is not None and (text := rt.reply_sent_as(rec)) is not None:
        # (the item's text: what is sent, counted in place of the record's)
        item.text, item.note = text, f"{rt.name} sends this text in place of the reply's content as written"
    if rt.reply_trimmed is not None and not item.text and (got := rt.reply_trimmed(rec)) is not None:
        why, text = got
        item.note = why if item.note is None else f"{item.note}; {why}"
        if text is None:
            item.trimmed = True
        else:
            item.text = text  # (what is sent, counted in place of the record's)
    return item, calls


def without_repeated_calls(item: ContextItem, rec: Record, earlier: set[str], rt: Runtime) -> tuple[str, ...]:
    """The calls of `rec`'s item as the runtime sends them (`Runtime.removes_repeated_calls`): each
    call whose id an earlier call of the request (`earlier`) or of the reply has is removed; a reply
    left with no block is sent as `Runtime.emptied_reply_text`. Returns the calls kept."""
    kept: list[str] = []
    gone: list[str] = []
    for c in rec.call_ids:
        (gone if c in earlier or c in kept else kept).append(c)
    item.tool_call_ids = kept
    m = rec.message
    if m is not None and all(b.type == "tool_call" for b in m.blocks) and len(m.blocks) == len(gone):
        item.text = rt.emptied_reply_text  # (the item's text: what is sent, counted in place of the record's)
    many = len(gone) > 1
    item.note = (
        f"{rt.name} removes {'these calls' if many else 'this call'} ({', '.join(gone)}): an earlier call of the request has "
        f"{'their ids' if many else 'its id'}" + (f"; the reply is sent as {item.text!r}" if item.text else "")
    )
    return tuple(kept)


def result_ids(rec: Record, rid: str | None) -> list[str]:
    """Every call a tool message answers (`Runtime.many_results_per_message`): from the index when
    the source kept them (no read), else from its message."""
    src = rec._source
    many = src.result_ids(rec) if src is not None else None
    if many is None and rec.message is not None:
        many = rec.message.tool_result_ids()
    return many or ([rid] if rid is not None else [])


@dataclass(slots=True)
class UserMessage:
    """The user message `sent_items` is building, for a runtime that joins its user lines into one
    and sends it results first (`Runtime.results_first`) or removes the results it does not pair
    (`Runtime.results_answer_reply_before`)."""

    start: int  # the index of its first item
    # None: a reply is right before it; True: it opens the request; False: it follows what was sent
    # before `sent_items`' messages (the summary, joined to it)
    opens: bool | None
    emptied: ContextItem | None = None  # the item of the first line all of whose blocks were removed

    def close(self, items: list[ContextItem], rt: Runtime, left_out: list[int] | None, last: bool = False) -> None:
        """The message ends (a reply follows, or the request does): its items as sent, and a new one after them."""
        start = self.start
        if self.emptied is not None and len(items) == start and self.opens is not False:  # (nothing left: its text)
            it = self.emptied
            it.text = rt.emptied_first_message_text if self.opens else rt.emptied_message_text
            it.note = f"{rt.name} sends this text in place of a user message all of whose results it removed"
            items.append(it)
            if left_out is not None:
                left_out.remove(it.seq)  # type: ignore[arg-type]
        elif rt.results_first and len(items) > start + 1:
            # (the results it makes up for calls left unanswered first; those it adds on resume for
            # the calls the conversation ends on are a line appended last: after the lines' results)
            run = items[start:]
            ending = rt.synthetic_result_text if rt.missing_result_text else None
            items[start:] = [it for it in run if it.synthetic and it.text != ending] + [
                it for it in run if it.role == "tool" and not it.synthetic
            ] + [it for it in run if it.synthetic and it.text == ending] + [it for it in run if it.role != "tool"]
        if not last:
            self.start, self.opens, self.emptied = len(items) + 1, None, None


def unpaired_results(
    items: list[ContextItem], rec: Record, rids: list[str], pending: tuple[str, ...], answered: set[str], rt: Runtime,
    msg: UserMessage, left_out: list[int] | None,
) -> None:
    """The item of a line some of whose results do not answer a call of the reply right before it
    that no result before them answered (`Runtime.results_answer_reply_before`): the runtime
    removes those and sends the rest of the line, its other results (a tool item) or its other
    blocks (a user item), appended to `items`; nothing when nothing is left (`left_out`)."""
    kept: list[str] = []
    other = False
    m = rec.message
    for b in m.blocks if m is not None else ():
        if b.type != "tool_result":
            other = True
        elif b.call_id is not None and b.call_id in pending and b.call_id not in answered and b.call_id not in kept:
            kept.append(b.call_id)
    gone = [r for r in rids if r not in kept]
    note = f"{rt.name} removes its result{'s' if len(gone) != 1 else ''} for {', '.join(gone) or 'a call with no id'}: no call of the reply right before its message"
    item = ContextItem(
        0, "tool" if kept else "user", "message", rec.seq, rec.id, rec.line, False, "", tool_result_id=kept[0] if kept else None, note=note,
        removed_results=gone,
    )
    if kept or other:
        items.append(item)
        return
    if left_out is not None:
        left_out.append(rec.seq)
    if msg.emptied is None:
        msg.emptied = item


def failed_turn_marker(rec: Record, rt: Runtime) -> str:
    """What the runtime sends in place of this message's content: its failed-turn marker for a
    failed reply it sends (`Runtime.failed_turn_marker`); "" when it sends the content."""
    return rt.failed_turn_marker if rec.role == "assistant" and rec.stop_reason in rt.marked_stop_reasons else ""


def marked_item(rec: Record, rt: Runtime) -> ContextItem:
    """The item of a failed reply the runtime sends as its failed-turn marker: that text alone, its
    content (text and calls) left out, its tokens the marker's."""
    note = f"{rt.name} sends this failed reply (stop reason {rec.stop_reason}) as its failed-turn marker, not as written"
    return ContextItem(0, "assistant", "message", rec.seq, rec.id, rec.line, False, rt.failed_turn_marker, note=note)


def exclude(states: list[Any], seqs: list[int]) -> None:
    """The messages the runtime leaves out as it builds the request though they stand where one is
    sent (`sent_items`'s `left_out`): excluded, not live."""
    for s in seqs:
        if states[s] in (LIVE, RETAINED):
            states[s] = EXCLUDED


def flag_unanswered(
    items: list[ContextItem], item: ContextItem | None, calls: Sequence[str], answered: set[str], rt: Runtime, ends: bool = False
) -> None:
    """`item`'s `calls` with no result among `answered`: flagged on it, in their order, each
    followed by the runtime's synthetic result where it makes one up (`ends`: the calls the
    conversation ends on, `Runtime.missing_result_text`)."""
    missing = [c for c in calls if c not in answered]
    if item is None or not missing:
        return
    item.unanswered = missing
    if rt.synthesize_missing_results:
        text = rt.synthetic_result_text if ends or not rt.missing_result_text else rt.missing_result_text
        items += [synthetic_result(c, rt, text) for c in missing]


def synthetic_result(call_id: str, rt: Runtime, text: str | None = None) -> ContextItem:
    """The output the runtime adds after a call that has none."""
    out = rt.synthetic_result_text if text is None else text
    return ContextItem(0, "tool", "message", None, None, None, True, out, tool_result_id=call_id)


def sent_messages_after(scan: PathScan, path: list[int], pos: int = -1) -> list[int]:
    """The seqs of the messages on `path` after position `pos` (all: -1), read from its `scan`
    (no record read), but those never sent (code 2)."""
    msgs, codes = scan.msgs, scan.codes
    k = bisect_right(msgs, pos)
    if k:
        msgs, codes = msgs[k:], codes[k:]
    return [path[i] for i in compress(msgs, codes.translate(SENT_CODES))]


def append_resume_reply(led: Ledger, items: list[ContextItem], rt: Runtime) -> None:
    """The reply the runtime appends itself on resume when the conversation ends inside a turn
    (as a rule, the last item is not a reply): a synthetic item, not in the file."""
    if rt.resume_reply is None or not items:
        return
    sent = [it.seq for it in items if it.seq is not None and it.kind == "message"]
    got = rt.resume_reply(led, sent, items[-1].role == "assistant")
    if got is None:
        return
    reply, after = got
    where = "appends this reply" if after <= 0 else f"adds this reply before the last {after} message{'s' if after > 1 else ''} sent"
    note = f"{rt.name} {where} on resume: the conversation ends inside a turn"
    item = ContextItem(0, "assistant", "message", None, None, None, True, reply, note=note, on_resume=True)
    if after <= 0:
        items.append(item)
        return
    first_after = sent[-after]
    at = next(i for i in range(len(items) - 1, -1, -1) if items[i].seq == first_after and items[i].kind == "message")
    items.insert(at, item)


def count_tokens(led: Ledger, items: list[ContextItem], tok: Tokenizer) -> None:
    """Fill in the tokens of items not counted yet: the provider's output count for a reply
    that recorded usage, tiktoken otherwise. Content is read in one pass over the file."""
    todo = [it for it in items if it.tokens is None]
    if not todo:
        return
    records = led.records
    # (an item with a text of its own is sent as that text: a summary, a synthetic item, a failed
    # reply sent as the runtime's marker)
    led.load_messages(
        [s for it in todo if it.seq is not None and it.kind == "message" and not it.text and not it.trimmed for s in (it.seq, *it.joined)]
    )
    to_count: list[tuple[ContextItem, str]] = []
    for it in todo:
        if it.joined and not it.text:  # (one message of several records' content: their texts)
            to_count.append((it, "\n".join(message_text_for_tokens(records[s]) for s in (it.seq, *it.joined))))  # type: ignore[misc]
        elif it.trimmed:  # (what is sent: its own usage counted the blocks left out)
            to_count.append((it, text_for_tokens(sent_message(records, it))))
        elif it.seq is not None and it.kind == "message" and not it.text:
            rec = records[it.seq]
            m = rec.message
            if m is not None and m.role == "assistant" and m.usage is not None and m.usage.output > 0:
                it.tokens = m.usage.output
                it.tokens_from = "usage"
            else:
                to_count.append((it, message_text_for_tokens(rec) if m is not None else ""))
        else:
            to_count.append((it, it.text))
    for (it, _), n in zip(to_count, tok.count_many([t for _, t in to_count]), strict=True):
        it.tokens = n


def sent_message(records: list[Record], it: ContextItem) -> Message | None:
    """A trimmed item's message as the runtime sends it (`ContextItem.sent`, else its source's)."""
    if it.sent is not None:
        return it.sent
    rec = records[it.seq]  # type: ignore[index]
    src = rec._source
    return src.sent_message(rec) if src is not None else None


def context_total(
    led: Ledger, items: list[ContextItem], views: list[CheckpointView], tok: Tokenizer
) -> tuple[int, str]:
    """pi's estimate: the newest usage the provider reported for this context, plus what came after.

    Only a reply produced after the latest checkpoint counts: an older one measured a request that
    still held the messages the checkpoint removed. Only the items after that reply are counted.
    """
    records = led.records
    last_cp_seq = views[-1].seq if views else -1
    anchor = None
    for it in reversed(items):
        # (the item's last record: the latest reply of answers sent as one, `ContextItem.joined`)
        s = it.last_seq
        if s is None or it.kind != "message" or s < last_cp_seq or records[s].role != "assistant":
            continue
        # (a failed reply sent as the runtime's marker is no anchor: the estimate skips errored and
        # aborted replies' usage, `getAssistantUsage`, OpenClaw 2026.9.6 dist/compaction-CAzwgOuQ.mjs:
        # 401-404, as pi's compaction.ts does; a reply sent as another text in place of an empty
        # content, Claude Code's "(no content)", reported the usage of a request it accepted)
        if it.text and records[s].stop_reason in FAILED_STOP_REASONS:
            continue
        m = records[s].message
        if m is not None and m.usage is not None and m.usage.total > 0:
            anchor = it
            break
    if anchor is None:
        count_tokens(led, items, tok)
        return sum(it.tokens or 0 for it in items), "tiktoken"
    m = records[anchor.last_seq].message  # type: ignore[index]
    assert m is not None and m.usage is not None
    after = items[anchor.index + 1 :]
    count_tokens(led, after, tok)
    return m.usage.total + sum(it.tokens or 0 for it in after), "usage+tiktoken"


# ---------------------------------------------------------------------------------------- coverage


def coverage(
    led: Ledger,
    path: list[int],
    views: list[CheckpointView],
    rt: Runtime,
    lost: set[int],
    forgotten: frozenset[int] = frozenset(),
    scan: PathScan | None = None,
) -> tuple[list[str | None], list[int], bytearray]:
    records = led.records
    n = len(records)
    states: list[str | None] = [None] * n
    summarized_by = [0] * n
    on_path = bytearray(n)
    if scan is None:  # (a path the report's scan did not read: a grown report's)
        scan = PathScan(records, path, rt)
    in_order = scan.in_order()
    if in_order and path and path[-1] - path[0] == len(path) - 1:  # a run of seqs: one slice
        on_path[path[0] : path[-1] + 1] = b"\x01" * len(path)
    else:
        for s in path:
            on_path[s] = 1
    if in_order:  # (each seq once: the states set a run of messages at a time)
        _run_states(path, views, rt, scan, states, summarized_by)
    else:
        _scanned_states(path, views, rt, scan, states, summarized_by)
    # Messages off the active path: another branch (inactive), or lost to the runtime's reader.
    if lost or len(path) < len(records) - 1:
        for r in records:
            if r.kind == "message" and not on_path[r.seq]:
                states[r.seq] = HOLE if r.seq in lost else INACTIVE
    if led.runtime_rejects_file:
        drop = rt.drop_stop_reasons
        for r in records:
            if r.kind == "message" and not (r.never_sent or (r.role == "assistant" and r.stop_reason in drop)):
                states[r.seq] = HOLE
    for s in forgotten:  # after the latest checkpoint, sent by no one and summarized by none
        states[s] = HOLE
    return states, summarized_by, on_path


def _first_rep(views: list[CheckpointView], n: int, default: int = 0) -> list[int]:
    """Which checkpoint first represented each path position (its own summarizer range;
    `default` where none did)."""
    first_rep = [default] * n
    covered: list[Interval] = []
    for v in views:
        for iv in v.own or v.rep:
            for lo, hi in subtract(iv, covered):
                first_rep[lo:hi] = [v.index] * (hi - lo)
            covered = merge([*covered, iv])
    return first_rep


def _scanned_states(
    path: list[int], views: list[CheckpointView], rt: Runtime, scan: PathScan, states: list[str | None], summarized_by: list[int]
) -> None:
    """The coverage state of each message on the path, from the path's `PathScan` (no record read
    again)."""
    msgs, codes = scan.msgs, scan.codes
    if not views:
        for i, c in zip(msgs, codes, strict=True):
            states[path[i]] = EXCLUDED if c else LIVE
        return
    last = views[-1]
    first_rep = _first_rep(views, len(path))
    rep = last.rep
    n_rep = len(rep)
    ri = 0
    keep = last.keep
    cut = last.cut
    pos = last.pos
    summarizes = rt.summarizes_dropped
    for i, c in zip(msgs, codes, strict=True):  # (c: 2 never sent, 1 dropped by its stop reason)
        s = path[i]
        if c and (c == 2 or not summarizes or i > pos or i >= cut or s in keep):
            states[s] = EXCLUDED
        elif i > pos:
            states[s] = LIVE
        elif i >= cut or s in keep:
            states[s] = RETAINED
            if contains(rep, i):  # kept raw and given to its summarizer too: both (DESIGN §2)
                summarized_by[s] = first_rep[i] or last.index
        else:
            while ri < n_rep and rep[ri][1] <= i:
                ri += 1
            if ri < n_rep and rep[ri][0] <= i:
                states[s] = SUMMARIZED
                summarized_by[s] = first_rep[i] or last.index
            else:
                states[s] = EXCLUDED if c else HOLE


def _rep_split(msgs: list[int], lo: int, hi: int, rep: list[Interval]) -> tuple[list[list[int]], list[list[int]]]:
    """The positions msgs[lo:hi] (sorted) split by `rep` (merged, sorted): (the runs in it, the
    runs between them)."""
    inside, outside = [], []
    for a, b in rep:
        i, j = bisect_left(msgs, a, lo, hi), bisect_left(msgs, b, lo, hi)
        if lo < i:
            outside.append(msgs[lo:i])
        if i < j:
            inside.append(msgs[i:j])
        lo = max(lo, j)
    if lo < hi:
        outside.append(msgs[lo:hi])
    return inside, outside


def _spans(positions: list[int]) -> list[tuple[int, int, bool]]:
    """`positions` (strictly increasing) cut into index ranges [lo, hi) in order, by halving until
    each is a run of consecutive positions (True), or short (False: stored one at a time): a few
    cuts for the few records between a path's messages (its checkpoints)."""
    out: list[tuple[int, int, bool]] = []
    todo = [(0, len(positions))]
    while todo:
        lo, hi = todo.pop()
        if lo >= hi:
            continue
        if positions[hi - 1] - positions[lo] == hi - 1 - lo:
            out.append((lo, hi, True))
        elif hi - lo <= _SHORT_SPAN:
            out.append((lo, hi, False))
        else:
            mid = (lo + hi) // 2
            todo += ((mid, hi), (lo, mid))
    return out


_SHORT_SPAN = 32


def _store(states: list[Any], path: list[int], base: int | None, positions: list[int], state: Any, by_position: list[Any] | None = None) -> None:
    """states[path[i]] = state (or by_position[i]) for each path position i of `positions`
    (increasing), a slice at a time for each run of consecutive positions when the path is a run
    of seqs (`base`: path[0], the path's seqs strictly increasing by one; else None)."""
    # (one loop per case: a test of `by_position` per position was half a short run's store)
    if base is None:
        if by_position is None:
            for i in positions:
                states[path[i]] = state
        else:
            for i in positions:
                states[path[i]] = by_position[i]
        return
    for lo, hi, consecutive in _spans(positions):
        if consecutive:
            a, b = positions[lo], positions[hi - 1] + 1
            states[base + a : base + b] = [state] * (hi - lo) if by_position is None else by_position[a:b]
        elif by_position is None:
            for i in positions[lo:hi]:
                states[base + i] = state
        else:
            for i in positions[lo:hi]:
                states[base + i] = by_position[i]


def _nonzero(codes: bytearray) -> list[int]:
    """The positions of the nonzero codes, in order, each found by a search (few messages have a
    code: `compress(count(), codes)` made an int for every message)."""
    flags = codes.translate(_NONZERO_AS_1)
    out: list[int] = []
    j = flags.find(1)
    while j >= 0:
        out.append(j)
        j = flags.find(1, j + 1)
    return out


_NONZERO_AS_1 = bytes([0] + [1] * 255)


def _run_states(
    path: list[int], views: list[CheckpointView], rt: Runtime, scan: PathScan, states: list[str | None], summarized_by: list[int]
) -> None:
    """`_scanned_states` for a path whose seqs strictly increase (each seq once), a run of
    messages at a time (a loop that only stores, per state): the messages taken as sent (live past
    the latest checkpoint, retained in its kept tail or `keep`, else summarized where its summary
    stands for them and a hole where not), then the few with a code (never sent, or dropped by
    their stop reason) made excluded as `_scanned_states` says."""
    msgs, codes = scan.msgs, scan.codes
    base = path[0] if path and path[-1] - path[0] == len(path) - 1 else None  # path[i] == base + i
    if not views:  # every message live but those with a code, excluded (a run at a time: a runtime that
        # sends a window of the last messages has almost all of them never sent)
        _store(states, path, base, msgs, LIVE)
        _store(states, path, base, list(compress(msgs, codes)), EXCLUDED)
        return
    else:
        last = views[-1]
        rep, keep, cut, pos = last.rep, last.keep, last.cut, last.pos
        a = bisect_left(msgs, min(cut, pos + 1))  # msgs[:a] removed, msgs[a:b] kept raw, msgs[b:] live
        b = bisect_right(msgs, pos)
        _store(states, path, base, msgs[b:], LIVE)
        _store(states, path, base, msgs[a:b], RETAINED)
        summarized, holes = _rep_split(msgs, 0, a, rep)
        for run in holes:
            _store(states, path, base, run, HOLE)
        for run in summarized:
            _store(states, path, base, run, SUMMARIZED)
        fr = _first_rep(views, len(path), last.index)  # (`first_rep[i] or last.index`)
        for run in summarized + _rep_split(msgs, a, b, rep)[0]:  # kept raw and given to its summarizer too: both (DESIGN §2)
            _store(summarized_by, path, base, run, None, fr)
        for s in keep:  # removed but kept raw: retained
            i = bisect_left(path, s)
            j = bisect_left(msgs, i, 0, a)
            if j < a and msgs[j] == i and path[i] == s:
                states[s] = RETAINED
    summarizes = rt.summarizes_dropped
    last_pos, last_cut, last_keep = (views[-1].pos, views[-1].cut, views[-1].keep) if views else (-1, -1, frozenset())
    for j in _nonzero(codes):  # (c: 2 never sent, 1 dropped by its stop reason)
        i = msgs[j]
        s = path[i]
        if not views or codes[j] == 2 or not summarizes or i > last_pos or i >= last_cut or s in last_keep:
            states[s] = EXCLUDED
            summarized_by[s] = 0
        elif states[s] == HOLE:
            states[s] = EXCLUDED


# ---------------------------------------------------------------------------------------- analyze


def analyze(
    led: Ledger,
    window: int | None = None,
    reserve: int | None = None,
    tokenizer: Tokenizer | None = None,
    reloaded: bool = False,
) -> Report:
    """The report of the session; its next request is what the process that wrote the file sends
    next, or with `reloaded` what a runtime that reads the file afresh (a resume) sends: that
    one forgets nothing a running process had only in memory (`forgotten_overflows`)."""
    from inspector.analysis.findings import find_all

    rt = registry.get(led.format).runtime
    tok = tokenizer or get_tokenizer()
    scan: PathScan | None = None
    path, cycle = active_path(led, rt)
    broken: list[Diagnostic] = [cycle] if cycle else []
    lost: list[int] = []
    if rt.tree and (any(not r.runtime_visible for r in led.records) or cycle):
        rp = recovered_path(led, rt)
        on = set(path)
        lost = [s for s in rp if s not in on and led.records[s].kind == "message"]
    if led.runtime_rejects_file:
        lost = [r.seq for r in led.records if r.kind == "message"]
    left_out: list[int] = []
    if rt.context_rule == "timestamp_ranges":
        from inspector.analysis import adk

        at = adk.path_times(led, path)
        views = adk.views(led, path, at)
        agent = led.header.get("next_agent") if led.header else None
        branch = led.header.get("next_agent_branch") if led.header else None
        ctx, reinjected = adk.next_request(led, agent, branch, left_out)
        total, source = context_total(led, ctx, views, tok)
        states, summarized_by, on_path = adk.coverage(led, path, views, reinjected, at)
        exclude(states, left_out)
    else:
        if scan is None:
            # (a linear runtime's path is its records in file order, each once: `active_path`)
            ix = led.record_index()
            scan = PathScan(led.records, path, rt, True if not rt.tree else None, ix.marks if ix is not None else None, ix.codes if ix is not None else None)
        views = checkpoint_views(led, path, rt, scan)
        forgotten = frozenset() if reloaded else forgotten_overflows(led, path, rt, window if window is not None else led.settings.window)
        ctx = effective_context(led, path, views, rt, tok, forgotten, scan, left_out)
        total, source = context_total(led, ctx, views, tok)
        states, summarized_by, on_path = coverage(led, path, views, rt, set(lost), forgotten, scan)
        exclude(states, left_out)
    win = window if window is not None else led.settings.window
    res = reserve if reserve is not None else led.settings.reserve
    report = Report(
        ledger=led,
        runtime=rt,
        path=path,
        on_path=on_path,
        states=states,
        summarized_by=summarized_by,
        checkpoints=views,
        context=ctx,
        context_tokens=total,
        tokens_source=source,
        tokenizer=tok.name,
        tokenizer_offline=tok.offline_fallback,
        window=win,
        reserve=res,
        findings=[],
        lost_to_runtime=lost,
        broken_tree=broken,
        _tokenizer=tok,
        dropped_results=left_out,
        _scan=scan,
    )
    report.findings = find_all(report)
    return report
