"""The ledger model (DESIGN §2): one session's records in file order, format-independent.

Every adapter in `inspector.formats` maps a producer's file into these types. They are plain
slotted dataclasses, not pydantic models: a 100k-record file builds hundreds of thousands of them
and validation would dominate load time (issue 2, point 8).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import msgspec

from inspector.ledger.quoting import quote

Role = Literal["system", "user", "assistant", "tool"]
ROLES: tuple[str, ...] = ("system", "user", "assistant", "tool")

StopReason = Literal["stop", "tool_use", "length", "error", "aborted", "deferred", "other"]
STOP_REASONS: tuple[str, ...] = ("stop", "tool_use", "length", "error", "aborted", "deferred", "other")

# Closed vocabulary of a fallback checkpoint's reason (ADR 0302).
FAILURE_REASONS: tuple[str, ...] = ("no_new_history", "summary_budget", "summary_provider", "checkpoint_oversized")

# Retained-tail shapes (ADR 0302 wording).
TAIL_SHAPES: tuple[str, ...] = ("recent_window", "latest_user_message")

_STOP_MAP: dict[str, str] = {
    "stop": "stop",
    "end_turn": "stop",
    "stop_sequence": "stop",
    "complete": "stop",
    "completed": "stop",
    "tooluse": "tool_use",
    "tool_use": "tool_use",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "length": "length",
    "max_tokens": "length",
    "max_output_tokens": "length",
    "error": "error",
    "aborted": "aborted",
    "abort": "aborted",
    "cancelled": "aborted",
    "canceled": "aborted",
    "deferred": "deferred",
    "pause_turn": "deferred",
}


def normalize_stop_reason(raw: Any) -> str | None:
    """Map a producer's stop reason onto the closed vocabulary; None when there is none."""
    if raw is None:
        return None
    if not isinstance(raw, str):
        return "other"
    return _STOP_MAP.get(raw.lower(), "other")


@dataclass(slots=True)
class Usage:
    """Token usage a provider recorded for one request (or summed over several)."""

    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0

    @property
    def prompt(self) -> int:
        """Tokens the request carried in: fresh input plus cache reads and writes."""
        return self.input + self.cache_read + self.cache_write

    @property
    def total(self) -> int:
        return self.prompt + self.output

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input + other.input,
            self.output + other.output,
            self.cache_read + other.cache_read,
            self.cache_write + other.cache_write,
        )

    def to_dict(self) -> dict[str, int]:
        return {
            "input": self.input,
            "output": self.output,
            "cache_read": self.cache_read,
            "cache_write": self.cache_write,
        }


@dataclass(slots=True, frozen=True)
class Route:
    """(model, connection) of the request that produced an assistant message (DESIGN §2)."""

    model_id: str | None
    connection_id: str | None

    def label(self) -> str:
        return f"{self.model_id or '?'} @ {self.connection_id or '?'}"


@dataclass(slots=True)
class Block:
    """One content block. `type` is text | thinking | tool_call | tool_result | image | other."""

    type: str
    text: str = ""
    call_id: str | None = None
    name: str | None = None
    args: Any = None
    is_error: bool = False
    raw: Any = None  # the producer's block, kept for `other` blocks (unknown types are shown)


@dataclass(slots=True)
class Message:
    role: str  # one of ROLES
    blocks: list[Block]
    stop_reason: str | None = None  # normalized, one of STOP_REASONS
    stop_reason_raw: Any = None
    usage: Usage | None = None
    route: Route | None = None
    error_message: str | None = None
    # The producer's own role name (pi: toolResult, bashExecution, custom, ...), for display.
    source_role: str | None = None
    # Set by adapters for records the runtime never sends by design (pi: bashExecution with
    # excludeFromContext; Claude Code: isMeta). Coverage state `excluded`.
    never_sent: bool = False

    def text(self, sep: str = "\n") -> str:
        """The message's visible text: its text blocks and tool-result text (not thinking, not
        tool-call arguments)."""
        parts: list[str] = []
        for b in self.blocks:
            if b.type in ("text", "tool_result") and b.text:
                parts.append(b.text)
        return sep.join(parts)

    def first_line(self) -> str:
        for b in self.blocks:
            if b.type in ("text", "tool_result", "thinking") and b.text.strip():
                return b.text.strip().splitlines()[0]
            if b.type == "tool_call":
                return f"{b.name}(…)"
        return ""

    def tool_call_ids(self) -> list[str]:
        return [b.call_id for b in self.blocks if b.type == "tool_call" and b.call_id]

    def tool_result_ids(self) -> list[str]:
        return [b.call_id for b in self.blocks if b.type == "tool_result" and b.call_id]


@dataclass(slots=True)
class Checkpoint:
    """A compaction record as the producer wrote it (DESIGN §2).

    The three sets (removes / represents / retains) are *derived* by `inspector.analysis`, because
    for most producers they depend on the tree and on the checkpoints before it. A native ledger
    states them explicitly: those statements live in `explicit_*`.
    """

    summary: str = ""
    # pi: firstKeptEntryId (the first retained record); None when the checkpoint keeps nothing raw.
    first_kept_id: str | None = None
    tokens_before: int | None = None
    trigger: str | None = None  # auto | manual | overflow | ...
    failure_reason: str | None = None  # FAILURE_REASONS, or None for a successful summary
    usage: Usage | None = None
    truncated: bool | None = None
    essential_complete: bool | None = None
    retained_tail_shape: str | None = None  # TAIL_SHAPES
    from_hook: bool | None = None
    # The last of the messages it keeps raw that its summarizer was given too (they are then both
    # represented and retained, DESIGN §2: Claude Code's auto-compaction and its preserved segment).
    summarized_through_id: str | None = None
    details: Any = None  # the producer's details object, kept verbatim
    # Native ledgers only: explicit boundary (id of the last removed record), represents (list of
    # inclusive [from_id, to_id] ranges) and retains (record ids kept raw).
    explicit_boundary: str | None = None
    explicit_represents: list[tuple[str, str]] | None = None
    explicit_retains: list[str] | None = None
    budget_tokens: int | None = None  # tokens the retained tail was allowed, when recorded
    first_kept_index: int | None = None  # pi v1: firstKeptEntryIndex, before migration
    # Codex: the history this checkpoint installs in place of everything before it, in order
    # (`compacted.replacement_history`, or what Codex rebuilds when a file has none).
    replacement: list[HistoryItem] | None = None
    # The replacement holds, where the runtime sends them, the records after the checkpoint too: none
    # of them is appended after it (NextClaw, when it drops or reorders some of them).
    replacement_holds_later: bool = False
    # The summary is state only the provider reads (maka v3: encrypted provider state), so `summary`
    # is empty although the checkpoint represents what it states: what it is, or None (readable text).
    opaque_summary: str | None = None


@dataclass(slots=True)
class HistoryItem:
    """One item of a checkpoint's replacement history: a record it keeps raw (`seq`), or content
    the checkpoint itself puts into the next request (its summary, re-injected instructions), which
    no record of the file holds on its own."""

    role: str  # the role the model sees
    text: str = ""
    seq: int | None = None  # the record kept raw, when the item is one
    kind: str = "message"  # message | summary
    id: str | None = None  # the producer's item id, when it has one
    call_id: str | None = None  # a tool call's id (assistant) or the call a tool result answers (tool)
    call_ids: tuple[str, ...] = ()  # an assistant item's tool calls, when it holds more than `call_id` says
    # The results of the record kept raw that the runtime leaves out of it (adk-go: a response a
    # later response to the same call replaces): `ContextItem.removed_results`.
    removed_results: tuple[str, ...] = ()


class RecordSource:
    """Where a lazily-read record's full content lives (toolong's model: index first, parse on
    demand). Adapters subclass it to turn the record's JSON object back into a Message."""

    def obj(self, rec: Record) -> Any:  # pragma: no cover - interface
        raise NotImplementedError

    def message(self, rec: Record) -> Message | None:  # pragma: no cover - interface
        raise NotImplementedError

    def extra(self, rec: Record) -> dict[str, Any] | None:  # pragma: no cover - interface
        raise NotImplementedError

    def load_many(self, recs: list[Record]) -> None:
        """Fill in many records' messages; sources that can batch reads override this."""
        for r in recs:
            r._message = self.message(r)

    def sent_message(self, rec: Record) -> Message | None:
        """The message as the runtime sends it, for a reply it trims (`Runtime.reply_trimmed`): its
        message less the blocks it leaves out. Read anew: the record's message stays as written."""
        return self.message(rec)

    def result_ids(self, rec: Record) -> list[str] | None:
        """Every call a tool message answers (its message's `tool_result_ids()`) when the source
        indexed them at load, so the message need not be read for them; None: read it."""
        return None


class _Unread:
    """`Record._extra` before a lazily-read record's unknown fields are read (one instance)."""

    __slots__ = ()

    def __reduce__(self) -> str:
        return "UNREAD"  # pickles as this module's singleton


UNREAD: Any = _Unread()

_StructMeta = type(msgspec.Struct)


class _RecordMeta(_StructMeta):  # type: ignore[misc, valid-type]
    """Gives `Record` its public constructor (the message / extra / source / lazy_extra keywords
    map onto private fields); `record_from_fields` skips it for loaders that fill every field."""

    def __call__(  # type: ignore[override]
        cls,
        seq: int,
        line: int,
        kind: str,
        type: str,
        id: str | None = None,
        parent_id: str | None = None,
        timestamp: Any = None,
        message: Message | None = None,
        checkpoint: Checkpoint | None = None,
        run_id: str | None = None,
        extra: dict[str, Any] | None = None,
        runtime_visible: bool = True,
        offset: int = 0,
        length: int = 0,
        *,
        role: str | None = None,
        stop_reason: str | None = None,
        never_sent: bool = False,
        source_role: str | None = None,
        source: RecordSource | None = None,
        lazy_extra: bool = False,
        call_ids: tuple[str, ...] | list[str] = (),
        result_id: str | None = None,
    ) -> Record:
        rec: Record = _struct_new(
            cls,
            seq,
            line,
            id,
            parent_id,
            timestamp,
            offset,
            length,
            role,
            stop_reason,
            source_role,
            call_ids,
            result_id,
            source,
            kind,
            type,
            runtime_visible,
            never_sent,
            message,
            checkpoint,
            run_id,
            UNREAD if lazy_extra else extra,
        )
        if message is not None:
            rec._take(message)
        return rec


_struct_new = _StructMeta.__call__


class Record(msgspec.Struct, metaclass=_RecordMeta, gc=False, eq=False, array_like=True):
    """One entry of the ledger, in file order.

    `kind` is what the analysis cares about: message | checkpoint | header | run | meta | unknown.
    `type` is the producer's own type string (pi: message, compaction, model_change, ...).

    A message record carries its role, normalized stop reason and never-sent flag eagerly; its
    full content (`message`) and unknown fields (`extra`) may be read lazily from the file the
    first time they are asked for, so a 100k-record file loads at close to JSON-parse speed.

    A msgspec Struct rather than a slotted class: built in C, and never tracked by the cyclic
    garbage collector (`gc=False`; a record refers to nothing that refers back to it), which
    would otherwise rescan every one of a 100k-record ledger's records several times over.
    Identity equality, as for plain objects (`eq=False`).
    """

    # Field order is internal (the public constructor above maps its arguments): first what every
    # record has its own value for, then what a lazily-read message record shares, with that as
    # the default. A loader's helper process sends records as msgpack arrays of just the first
    # fields (`array_like`), decoded straight into records.
    seq: int
    line: int
    id: str | None = None
    parent_id: str | None = None
    timestamp: Any = None
    offset: int = 0
    length: int = 0
    # The closed vocabularies as Literal types: a record decoded from msgpack (see above) then
    # shares one string object per value instead of holding a copy.
    role: Role | None = None
    stop_reason: StopReason | None = None
    source_role: str | None = None
    # The tool-call ids an assistant message makes / the call a tool result answers: kept in the
    # index so the next request's pairing needs no content.
    call_ids: tuple[str, ...] = ()
    result_id: str | None = None
    _source: Any = None  # RecordSource | None
    kind: str = "message"
    type: str = "message"
    runtime_visible: bool = True
    never_sent: bool = False
    _message: Message | None = None
    checkpoint: Checkpoint | None = None
    run_id: str | None = None
    _extra: dict[str, Any] | None = UNREAD

    def _take(self, m: Message) -> None:
        self.role = m.role
        self.stop_reason = m.stop_reason
        self.never_sent = m.never_sent
        self.source_role = m.source_role
        self.call_ids = tuple(m.tool_call_ids())
        self.result_id = next((b.call_id for b in m.blocks if b.type == "tool_result"), None)

    @property
    def message(self) -> Message | None:
        m = self._message
        if m is None and self.kind == "message" and self._source is not None:
            m = self._message = self._source.message(self)
        return m

    @message.setter
    def message(self, m: Message | None) -> None:
        self._message = m
        if m is not None:
            self._take(m)

    @property
    def extra(self) -> dict[str, Any] | None:
        e = self._extra
        if e is UNREAD:
            e = self._extra = self._source.extra(self) if self._source is not None else None
        return e

    @extra.setter
    def extra(self, value: dict[str, Any] | None) -> None:
        self._extra = value

    @property
    def is_message(self) -> bool:
        return self.kind == "message"

    def raw(self) -> Any:
        """The producer's JSON object for this record, read again from its source."""
        if self._source is None:
            return None
        return self._source.obj(self)

    def __repr__(self) -> str:
        return f"Record(seq={self.seq}, line={self.line}, kind={self.kind!r}, type={self.type!r}, id={self.id!r}, role={self.role!r})"

    def __rich_repr__(self) -> Any:
        yield "seq", self.seq
        yield "line", self.line
        yield "kind", self.kind
        yield "type", self.type
        yield "id", self.id
        yield "role", self.role

    def __reduce__(self) -> Any:
        return _struct_new, (Record, *(getattr(self, f) for f in self.__struct_fields__))


# A Record from its fields, positionally in declaration order (those left out take their
# defaults), without the public constructor's keyword mapping: a loader's hot path,
# `record_from_fields(Record, seq, line, id, parent_id, ...)`.
record_from_fields = _StructMeta.__call__


@dataclass(slots=True)
class Diagnostic:
    """Something wrong with the input itself: a line we could not read as written."""

    line: int
    problem: str  # short code: malformed_json, glued_objects, invalid_utf8, binary, ...
    message: str  # one sentence naming the line and what was wrong
    recovered: str = ""  # what we recovered from it, if anything
    severity: str = "warning"
    seqs: list[int] = field(default_factory=list)  # records recovered from that line


@dataclass(slots=True)
class RunHeader:
    """Route of a run (native ledgers: `run` records; pi: model_change entries)."""

    id: str
    route: Route
    seq: int


@dataclass(slots=True)
class SessionSettings:
    """Compaction settings the session recorded, when it did."""

    window: int | None = None
    reserve: int | None = None
    keep_recent: int | None = None


def seqs_without(left_out: list[int], n: int, ints: Sequence[int] | None = None) -> list[int]:
    """0 .. n-1 without the seqs `left_out` (ascending), made a run at a time (in C): a linear
    runtime's path without its off-path records, a loader's marks without its unmarked ones.
    `ints`: 0 .. n-1 as a list of existing int objects (`RecordIndex.seqs`), taken instead of
    new ones."""
    src: Sequence[int] = range(n) if ints is None else ints
    out: list[int] = []
    start = 0
    for s in left_out:
        out += src[start:s]
        start = s + 1
    tail = src[start:n]
    if not out and type(tail) is list:  # (one run, a slice of `ints`: the list it is, not a copy of it)
        return tail
    out += tail
    return out


@dataclass(slots=True, eq=False)
class RecordIndex:
    """What a loader listed of its records as it made them, so the analysis need not read every
    record (issue 15: half a Codex rollout's records are meta records no pass looks at): the seqs
    of the message and checkpoint records (`marks`), and of the records a runtime whose history
    is the file order leaves out of it (`off_path`: the header, what is not runtime-visible;
    None: not listed). Valid only for the records list it was taken with, at the length it had
    then (`Ledger.record_index`): a ledger grown or rebuilt since reads its records."""

    records: list[Record]
    count: int
    marks: list[int] | None  # (None: the loader gives `codes` instead)
    off_path: list[int] | None
    # The loader's own lookup of ids -> seqs, resolving each as `Ledger.by_id` does (the last
    # runtime-visible record with that id), without walking the records; None: walk them.
    find_ids: Callable[[set[str]], dict[str, int]] | None = None
    # What the analysis's path scan reads of each record, one `mark_code` byte per record (the
    # marks are the records whose code is a message's or a checkpoint's), made by the loader while
    # the record was at hand; None: read the records.
    codes: bytes | bytearray | None = None
    # A dict whose values, in order, are the seqs of the records of the file-order path (every
    # record but `off_path`) as the records hold them: the loader's id index when exactly those
    # records have an id, each their own. The path is then a list of those int objects rather
    # than of new ones (unless the dict has grown since: `appended.grown`); None: made anew.
    path_of: dict[Any, int] | None = None
    # 0 .. count-1 as the records' seqs hold them (seqs[k] == k, the same int object where the
    # loader numbered the record with it): a file-order path is a list of these objects rather
    # than of new ones; None: made anew.
    seqs: list[int] | None = None


# A record's `mark_code`. Its kind in bits 6-7: a message (0), a checkpoint record (MARK_CHECKPOINT,
# with MARK_HAS_CHECKPOINT when its checkpoint is read), any other record (MARK_OTHER). A message's
# normalized stop reason in bits 0-2 (0 none, else its place in STOP_REASONS plus one), and whether
# it is an assistant message, never sent, a user message that starts a turn (its source role none,
# user or custom).
MARK_STOP: dict[str | None, int] = {None: 0} | {s: i + 1 for i, s in enumerate(STOP_REASONS)}
MARK_ASSISTANT, MARK_NEVER_SENT, MARK_TURN = 0x08, 0x10, 0x20
MARK_CHECKPOINT, MARK_OTHER, MARK_HAS_CHECKPOINT = 0x40, 0x80, 0xC0
MARK_KIND = 0xC0  # (the kind's bits)
TURN_SOURCE_ROLES = (None, "user", "custom")


def mark_code(rec: Record) -> int:
    """The byte `RecordIndex.codes` holds for a record."""
    kind = rec.kind
    if kind == "checkpoint":
        return MARK_HAS_CHECKPOINT if rec.checkpoint is not None else MARK_CHECKPOINT
    if kind != "message":
        return MARK_OTHER
    role = rec.role
    return (
        MARK_STOP[rec.stop_reason]
        | (MARK_ASSISTANT if role == "assistant" else 0)
        | (MARK_NEVER_SENT if rec.never_sent else 0)
        | (MARK_TURN if role == "user" and rec.source_role in TURN_SOURCE_ROLES else 0)
    )


@dataclass(slots=True, repr=False)
class Ledger:
    path: str | None
    format: str  # native | pi
    session_id: str | None
    header: dict[str, Any] | None
    records: list[Record]
    diagnostics: list[Diagnostic] = field(default_factory=list)
    settings: SessionSettings = field(default_factory=SessionSettings)
    runs: dict[str, RunHeader] = field(default_factory=dict)
    version: int | None = None  # the producer's format version as written
    migrated: bool = False  # read through an in-memory migration (pi v1/v2)
    # The record the runtime treats as the current leaf (pi: last entry in file order).
    leaf_seq: int | None = None
    # The byte size and sha256 of what was read: write-back refuses if the file changed since.
    size: int = 0
    sha256: str | None = None
    # A database store's digest of the session's rows as they were read (the format's
    # `StoreWriter.state`): write-back refuses if the rows changed since. None for files.
    store_state: str | None = None
    # Set when only the first N lines were read (`--at LINE`).
    upto_line: int | None = None
    # True when the producer's loader would reject the whole file (pi: no valid header).
    runtime_rejects_file: bool = False
    # The active path as the adapter resolved it, root to leaf, where the parent ids cannot
    # express it (Claude Code: a cycle through reused uuids); None: walk the parent ids.
    resolved_path: list[int] | None = None
    _by_id: dict[str, int] | None = None
    # The instructions the runtime sends ahead of the history, when the file records them (Codex:
    # `session_meta.base_instructions`), and how they differ from what the file records, when they do.
    instructions: str | None = None
    instructions_note: str | None = None
    # The history the runtime sends, in order, when its format builds it and no checkpoint's
    # replacement holds it while the messages as written would say otherwise (adk-go with no
    # compaction record: another agent's events as "For context:" user text, a response moved to
    # its call or dropped, the continuation turn); None: the messages as written.
    sent_history: list[HistoryItem] | None = None
    # What a format's `extend` (formats.base.LineExtender) needs to map lines appended to this
    # ledger as its full build would, when more than the records (Codex: the ids taken, the
    # record awaiting its usage); None: nothing, or a full build is needed.
    extension: Any = field(default=None, repr=False, compare=False)
    # What the loader listed of the records (`RecordIndex`; read it through `record_index`).
    index: RecordIndex | None = field(default=None, repr=False, compare=False)
    # The ids the records name that no record has (`formats.appended.unresolved_ids`), with the
    # number of records they were taken from (a ledger grown since takes them again); None: not taken.
    unresolved: tuple[int, set[str]] | None = field(default=None, repr=False, compare=False)

    def __repr__(self) -> str:
        # Not every record's repr: a worker's name, a log line or a traceback that shows a ledger
        # would build a string as big as the session (a 500 MB file's, in the app's worker name).
        return f"Ledger({self.format}, {self.path!r}, {len(self.records):,} records, {len(self.diagnostics):,} diagnostics)"

    def record_index(self) -> RecordIndex | None:
        """The loader's `RecordIndex` of these records, when it is still theirs."""
        ix = self.index
        if ix is None or ix.records is not self.records or ix.count != len(self.records):
            return None
        return ix

    def by_id(self) -> dict[str, int]:
        """id -> seq of the record the runtime resolves that id to (the last one written wins)."""
        if self._by_id is None:
            self._by_id = {r.id: r.seq for r in self.records if r.id is not None and r.runtime_visible}
        return self._by_id

    def ids_to_seqs(self, ids: set[str]) -> dict[str, int]:
        """`by_id` for these ids only (an id no record has is left out): the index when it is
        built, else one pass that builds no entry for the other records' ids."""
        if self._by_id is not None:
            by_id = self._by_id
            return {i: by_id[i] for i in ids if i in by_id}
        if not ids:
            return {}
        ix = self.record_index()
        if ix is not None and ix.find_ids is not None:
            return ix.find_ids(ids)
        m: dict[str, int] = {}
        for r in self.records:
            if r.id in ids and r.runtime_visible:
                m[r.id] = r.seq
        return m

    def load_messages(self, seqs: list[int]) -> None:
        """Read the content of many lazily-read records in one pass (fewer opens and seeks)."""
        todo = [self.records[s] for s in seqs]
        todo = [r for r in todo if r._message is None and r._source is not None and r.kind == "message"]
        if not todo:
            return
        src = todo[0]._source
        assert src is not None
        src.load_many(todo)

    def messages(self) -> list[Record]:
        return [r for r in self.records if r.message is not None]


def report_duplicate_ids(led: Ledger, resolution: str, *, word: str = "id", visible_only: bool = False) -> dict[str, int]:
    """Add a `duplicate_id` diagnostic for every record reusing an earlier record's id, and return
    the id -> seq index with the last one written winning (as every runtime resolves it).
    `resolution` ends the message and says how the runtime resolves it (`{line}`: the later line)."""
    seen: dict[str, Record] = {}
    by_id: dict[str, int] = {}
    for r in led.records:
        rid = r.id
        if rid is None or (visible_only and not r.runtime_visible):
            continue
        first = seen.get(rid)
        if first is not None:
            led.diagnostics.append(
                Diagnostic(
                    r.line,
                    "duplicate_id",
                    f"line {r.line}: {word} {quote(rid)} was already used on line {first.line}" + resolution.format(line=r.line),
                    seqs=[first.seq, r.seq],
                )
            )
        else:
            seen[rid] = first = r
        by_id[rid] = r.seq
    return by_id
