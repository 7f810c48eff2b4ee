"""The Format contract (DESIGN §3, §7; docs/formats-contract.md): everything one producer's adapter
declares about itself, as data. The registry (`inspector.formats.registry`) lists them in order;
nothing outside `inspector.formats` asks which format a session is, it asks the session's Format.

Layering: this module sits on `ledger` and `formats.jsonl` only. The analysis reads `Runtime`
(the next-request rules), the compaction code the summary conventions and the `Writer`, the app
and the CLI the rest. A writer takes plain data (`CheckpointDraft`), so no format imports the
compaction code that plans what to write.
"""

from __future__ import annotations

import glob
import os
import sqlite3
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, BinaryIO

from inspector.formats.jsonl import LoadError, RawLine
from inspector.ledger.jsontext import js_length
from inspector.ledger.model import Ledger, Record, Usage

if TYPE_CHECKING:
    from inspector.formats.parallel import ChunkCodec


class UnknownFormat(LoadError):
    """A format name no registered Format has (never a silent fallback to another's rules)."""


class Unwritable(Exception):
    """A writer cannot spell this checkpoint as a record its runtime reads (the repair is refused
    with this reason; the plan says so)."""


# ---------------------------------------------------------------------------------------- next request


@dataclass(frozen=True, slots=True)
class SummaryFormat:
    """What a runtime adds to the summaries it writes, and the template they follow (pi's
    `compaction.ts`): the file lists appended after the summary, the separator before a split
    turn's own summary, and the section headings a complete summary has."""

    file_list_tags: tuple[str, str]  # (read, modified): `<tag>\\npath\\n</tag>` blocks after the summary
    split_turn_separator: str  # joins the history summary and the split turn's prefix summary
    sections: tuple[str, ...]  # the history part's headings, first to last
    split_turn_sections: tuple[str, str]  # the split-turn part's first and closing heading
    # A bound on each file-list block, in UTF-16 code units (a JavaScript string's length), the
    # paths past it named as "...and N more" (OpenClaw's `formatBoundedFileList`); None: unbounded.
    file_list_chars: int | None = None

    def file_lists(self, read: list[str], modified: list[str]) -> str:
        """The file-list blocks the runtime appends to a summary it writes."""
        parts = [
            self._file_list(tag, paths)
            for tag, paths in zip(self.file_list_tags, (read, modified), strict=True)
            if paths
        ]
        return "\n\n".join(p for p in parts if p)

    def _file_list(self, tag: str, paths: list[str]) -> str:
        if self.file_list_chars is None:
            return f"<{tag}>\n" + "\n".join(paths) + f"\n</{tag}>"
        return bounded_file_list(tag, paths, self.file_list_chars)


def bounded_file_list(tag: str, paths: list[str], max_chars: int) -> str:
    """`<tag>` block of the paths that fit `max_chars`, then "...and N more" for the rest where
    that still fits; "" when none fits (OpenClaw 2026.9.6 `formatBoundedFileList`,
    dist/compaction-CAzwgOuQ.mjs:145-163). OpenClaw also cuts the two blocks together at 2,000
    characters (:168-170), which two blocks of at most 900 never reach."""
    if not paths or max_chars <= 0:
        return ""
    open_tag, close_tag = f"<{tag}>\n", f"\n</{tag}>"
    used = js_length(open_tag) + js_length(close_tag)
    lines: list[str] = []
    for i, path in enumerate(paths):
        line = path + "\n"
        remaining = len(paths) - i - 1
        overflow_line = f"...and {remaining} more\n" if remaining > 0 else ""
        if used + js_length(line) + js_length(overflow_line) > max_chars:
            overflow = f"...and {len(paths) - i} more\n"
            if used + js_length(overflow) <= max_chars:
                lines.append(overflow)
            break
        lines.append(line)
        used += js_length(line)
    # JavaScript's trimEnd: every trailing whitespace character, a path's own included.
    return f"{open_tag}{''.join(lines).rstrip(JS_WHITESPACE)}{close_tag}" if lines else ""


# String.prototype.trimEnd's WhiteSpace and LineTerminator code points (ECMA-262 §12.2, §12.3).
JS_WHITESPACE = "\t\n\v\f\r \xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"


def _headings(text: str) -> list[str]:
    return [ln.strip() for ln in text.splitlines() if ln.startswith("## ")]


def template_incomplete(summary: str, sf: SummaryFormat) -> str | None:
    """A summary that starts the runtime's template and stops early was most likely cut at the
    output limit (pi does not check finish_reason): why it looks cut, or None."""
    body = summary
    for tag in sf.file_list_tags:
        body = body.split(f"<{tag}>")[0]
    parts = body.split(sf.split_turn_separator)
    hist = _headings(parts[0])
    if hist and hist[0] == sf.sections[0] and sf.sections[-1] not in hist:
        missing = [h for h in sf.sections if h not in hist]
        return f"its history part stops before {missing[0]!r}"
    if len(parts) > 1:
        first, closing = sf.split_turn_sections
        prefix = _headings(parts[1])
        if prefix and prefix[0] == first and closing not in prefix:
            return f"its split-turn part stops before {closing!r}"
    return None


# A format's notes of an entry its runtime fails on (a TypeError in pi), by where it fails: when it
# opens a session whose active path holds the entry, or when it builds a request that holds it. The
# analysis weighs them against the path and the next request (`request_fails`); a repair keeps the
# second out of its retained tail, and refuses a session the first stops.
FAILS_ON_OPEN, FAILS_ON_SEND = "fails_on_open", "fails_on_send"


# A reply that failed: the provider's error, or the user's abort mid-stream.
FAILED_STOP_REASONS = frozenset({"error", "aborted"})


@dataclass(frozen=True, slots=True)
class JoinedRun:
    """Adjacent items of a request that the runtime sends as one message (`SentShape`)."""

    first: int  # the index of its first item
    last: int  # ... and of its last
    text: str  # what the message is sent as, when not its members' content as written ("")
    note: str  # why, as the item's note says it


@dataclass(frozen=True, slots=True)
class SentShape:
    """What the runtime does to the request's messages as it sends them, beyond each message's own
    rules (`Runtime.sent_shape`; OpenClaw: `formats.openclaw_turns`)."""

    runs: Sequence[JoinedRun] = ()  # items merged into one message (in order, none overlapping)
    # (the index of an item, the text it is sent as, the note): a message the runtime moves out of
    # the history into the next prompt's own message, ahead of the prompt, when it resumes the
    # session (a request of the turn in progress, whose own prompt it is, holds it as written)
    into_prompt: tuple[int, str, str] | None = None
    opens_with: tuple[str, str] | None = None  # (text, note): a user message the runtime sends first


@dataclass(frozen=True, slots=True)
class Runtime:
    """A producer's own rules for what it sends next (DESIGN §3). The analysis is
    format-independent; where runtimes differ it asks the ledger's Runtime."""

    name: str  # the runtime as findings name it ("pi sends a synthetic ... result")
    # A runtime states only where it differs from these: a flat history, every assistant message
    # sent, no synthetic results, no wrapper around a summary.
    tree: bool = False  # history is a tree (parent ids) and only the active path is sent
    drop_stop_reasons: frozenset[str] = frozenset()  # assistant messages dropped at send time
    # The text the runtime sends in place of a failed reply's content (FAILED_STOP_REASONS) that it
    # does not drop (OpenClaw's failed-turn marker): such a reply is sent, as that text alone (no
    # calls), and is live, retained or summarized as any message; the reader marks never sent each
    # failed reply the runtime drops whole. Empty: a failed reply is sent as written, unless
    # `drop_stop_reasons` drops it.
    failed_turn_marker: str = ""
    synthesize_missing_results: bool = False  # a call with no result gets a synthetic error result
    # A tool result whose call is not in the request is left out of it (OpenClaw's pairing repair),
    # not sent as an orphan.
    drops_orphan_results: bool = False
    synthetic_result_text: str = ""
    # ... that text for the calls the conversation ends on; for a call left unanswered before
    # the conversation goes on, this one where the runtime writes another (empty: the same).
    missing_result_text: str = ""
    # Consecutive user lines are one API message (Claude Code): a result among the user lines
    # after a reply answers its call, even after a user's text; only the next reply ends them.
    joins_user_lines: bool = False
    # ... and sends that message's results first: the ones it makes up for calls left unanswered,
    # then the lines holding a result, then the others, each group in order (Claude Code's `NU` /
    # `fXo` and `Pqi`). A line holding a result and other blocks is an item where its result is.
    results_first: bool = False
    # A user message carries only results answering the calls of the reply right before it, each
    # call once (Claude Code's `Pqi`): any other result is removed from it (not sent as an orphan),
    # a line left with nothing is not sent, and a message left with nothing is sent as
    # `emptied_message_text` (the request's first message, no reply before it:
    # `emptied_first_message_text`), in place of the first such line. False: a result is sent
    # where it stands, an orphan when its call is not in the request before it.
    results_answer_reply_before: bool = False
    emptied_message_text: str = ""
    # A tool call whose id an earlier call of the request already has is removed from its reply,
    # and a reply left with no block is sent as `emptied_reply_text` (Claude Code's `Pqi`); its
    # result then answers no call of the reply before it. False: every call is sent as written.
    removes_repeated_calls: bool = False
    # The replies it drops at send time (`drop_stop_reasons`) are taken out before the request is
    # built (Claude Code's `Ff` filter, before it joins and pairs), so one between a reply's calls and
    # their results neither ends those calls nor splits the user lines around it. False: a dropped
    # reply still ends the calls before it (pi-ai's transform-messages.js:146-158: the results it
    # makes up for them go in first).
    drops_before_pairing: bool = False
    emptied_reply_text: str = ""
    emptied_first_message_text: str = ""
    summary_prefix: str = ""
    summary_suffix: str = ""
    # "boundary": the latest checkpoint's cut (pi, native); "timestamp_ranges": ADK's surviving
    # compaction ranges (inspector/analysis/adk.py).
    context_rule: str = "boundary"
    # A checkpoint replaces all earlier history with its own replacement history, sent in that
    # order ahead of what came after it (Codex `compacted`); tool calls and results pair across
    # the whole request (one item per line), and a result whose call is gone is dropped.
    replaces_history: bool = False
    # One message can carry several tool results (Claude Code's user lines follow the Messages
    # API); elsewhere a tool message answers one call, read from the index without its content.
    many_results_per_message: bool = False
    # The record types of the user messages its turn rules pass over: sent, yet the conversation
    # does not go on with them, so a call before one is still the conversation's last (Claude
    # Code's local command notes, `system` lines it sends as user text).
    turn_neutral_types: frozenset[str] = frozenset()
    # The summaries it writes: file lists, split-turn separator, section template (None: the
    # summary is free text).
    summary_format: SummaryFormat | None = None
    sends_empty_summary: bool = False  # the wrapper is sent even around an empty summary
    # The summarizer is handed the assistant messages dropped at send time too (pi), so one in a
    # summarized range is represented by the summary, not only excluded.
    summarizes_dropped: bool = False
    # The retained tail is the path from the checkpoint's boundary on (pi's firstKeptEntryId): a
    # message kept ahead of it cannot be expressed, so a repair quotes it in the summary instead.
    contiguous_tail: bool = False
    # A boundary that is not on the path keeps nothing raw, silently (pi; DESIGN §3).
    missing_boundary_keeps_nothing: bool = False
    skips_glued_lines: bool = False  # a line holding two glued JSON objects is skipped whole
    # An answer whose own usage shows its request over the context window (a "silent overflow")
    # is taken out of the running process's messages to compact; when no compaction is written,
    # the process never sends it again (pi; `analysis.engine.forgotten_overflows`).
    forgets_silent_overflow: bool = False
    # What findings call a record's place (`Record.line`): "line" in a JSONL file, "event" where
    # the number counts a store's events (adk-go's event stream, what `--at` counts).
    record_place: str = "line"
    # Why the runtime reads none of a file it rejects whole (`Ledger.runtime_rejects_file`), as the
    # hole finding says it. None: pi's reason (no valid header).
    file_rejected: str | None = None
    # What the runtime does with a tool call left without a result, when it synthesizes none (the
    # end of the unanswered-call finding). None: providers reject such a request.
    unanswered_call: str | None = None
    needs_header: bool = False  # a file without its session header is ignored whole
    checkpoints_record_usage: bool = False  # every checkpoint states its usage (or why not)
    # Where the planner's reserve / keep-recent defaults come from, as the plan names it.
    budget_defaults_source: str = "default"
    # A checkpoint's summary as written holds the runtime's own wrapper around it (Claude Code's
    # summary line): the summary itself, out of that text. None: the text is the summary.
    unwrap_summary: Callable[[str], str] | None = None
    # The text of that wrapper as a repair writes it for this session (the summary left out): what
    # the planner budgets beside the summary. None: only summary_prefix/suffix wrap it.
    written_wrapper: Callable[[Ledger], str] | None = None
    # What the runtime itself adds when it resumes a conversation that ends inside a turn (as a
    # rule, the last thing sent is not a reply): (the session, the seqs of the messages sent, in
    # order, whether the last item sent is a reply) -> the reply's text and how many of the last
    # messages sent come after it (0: it is the last), or None when it adds none (Claude Code's
    # `<synthetic>` "No response requested.", spliced in before the local command notes that end
    # the conversation).
    resume_reply: Callable[[Ledger, list[int], bool], tuple[str, int] | None] | None = None
    # What the runtime sends in place of a reply's content as written (Claude Code's "(no content)"
    # for a reply without a content block), asked of each reply without calls as the request is
    # built: (its record) -> that text, or None when it sends the reply as written. It must not
    # read the file (the request is built from the index).
    reply_sent_as: Callable[[Record], str | None] | None = None
    # Why the runtime sends a reply less some of its blocks (Claude Code leaves out the signed
    # thinking of a model other than the request's), asked of each reply as the request is built:
    # (its record) -> the item's note and the text it sends in place of a reply left with no block
    # (None: the reply less those blocks, counted on what is sent: `RecordSource.sent_message`), or
    # None when it sends every block. It reads the file only for a reply that may be left with none.
    reply_trimmed: Callable[[Record], tuple[str, str | None] | None] | None = None
    # What the runtime sends before the next request when it resumes the session: (the session, the
    # items of that request, as the analysis lists them, its active path, the window and reserve
    # the analysis was given, None when not) -> why it compacts the session first and the seqs that
    # say so (Codex's pre-turn auto-compaction: `codex_resume`; pi's check before a prompt:
    # `pi_resume`), or None when it sends the request as it stands. It may read the file (a few lines).
    compacts_first: Callable[[Ledger, Sequence[Any], Sequence[int], int | None, int | None], tuple[str, list[int]] | None] | None = None
    # What the runtime rewrites of the messages of the next request for the model it goes to (pi-ai's
    # `transformMessages`: another model's thinking sent as text, images replaced by a placeholder
    # for a model without image input): (the session, its active path, items of that request) ->
    # None, marking each item it sends otherwise than as written (`ContextItem.trimmed`, the message
    # as sent in `ContextItem.sent`, a note). It may read the items' records.
    rewrites_sent: Callable[[Ledger, Sequence[int], Sequence[Any]], None] | None = None
    # ... and the model that request goes to, by the same rule (compared when the session grows:
    # a request to another model is rewritten otherwise, and built again).
    sent_to: Callable[[Ledger, Sequence[int]], object] | None = None
    # How the runtime reshapes the request's messages as it sends them: (the session, its active path,
    # the items as built, in order, whether they open the request) -> what it merges, moves into the
    # prompt and sends first, or None for nothing (OpenClaw's replay validation and orphan repair:
    # `formats.openclaw_turns`). It may read the file (a few records).
    sent_shape: Callable[[Ledger, Sequence[int], Sequence[Any], bool], SentShape | None] | None = None

    @property
    def marked_stop_reasons(self) -> frozenset[str]:
        """The stop reasons of the replies sent as `failed_turn_marker` (none without one)."""
        return FAILED_STOP_REASONS if self.failed_turn_marker else frozenset()

    @property
    def not_sent_as_written(self) -> frozenset[str]:
        """The stop reasons of the replies the runtime does not send as written: those it drops at
        send time and those it sends as its failed-turn marker (neither is an answer the provider
        gave to a request it accepted, and each is converted before it is dropped or replaced)."""
        return self.drop_stop_reasons | self.marked_stop_reasons

    def summary_body(self, text: str) -> str:
        """A checkpoint's summary without the wrapper the runtime writes around it."""
        return self.unwrap_summary(text) if self.unwrap_summary is not None else text

    def summary_wrapper(self, led: Ledger) -> str:
        """Everything the runtime sends around a summary in this session: the wrapper a repair
        writes into the record, then what it adds at send time."""
        written = self.written_wrapper(led) if self.written_wrapper is not None else ""
        return self.summary_prefix + written + self.summary_suffix

    def file_lists(self, read: list[str], modified: list[str]) -> str:
        """What this runtime appends to a summary it writes for these files ("" for none)."""
        return self.summary_format.file_lists(read, modified) if self.summary_format is not None else ""


# ---------------------------------------------------------------------------------------- writing


@dataclass(slots=True)
class CheckpointDraft:
    """The checkpoint a repair installs, in record ids: what every writer needs, in no format's
    words (the compaction code fills it in; the format's writer spells it)."""

    entry_id: str
    timestamp: str
    summary: str
    leaf_id: str | None  # the current leaf the record hangs under (tree formats)
    first_kept_id: str | None  # the first record of the retained tail
    boundary_id: str | None  # the last message the checkpoint was taken after
    keeps_ahead: bool  # messages are kept raw ahead of the tail (listed in `retains`)
    represents: list[list[str]]  # [first id, last id] ranges the summary stands for
    retains: list[str]  # ids kept raw, in path order
    shape: str  # recent_window | latest_user_message
    failure_reason: str | None
    tokens_before: int
    budget_tokens: int
    read_files: list[str]
    modified_files: list[str]
    usage: Usage | None
    requests: int
    truncated: bool
    essential_complete: bool | None
    producer: str


@dataclass(frozen=True, slots=True)
class Row:
    """One row a store writer inserts: the table and its column values."""

    table: str
    values: dict[str, Any]


@dataclass(frozen=True, slots=True)
class StoreWriter:
    """How a repair inserts a checkpoint into a database store (ADK, adk-go, OpenClaw): rows
    inserted in one transaction, never an existing row updated or deleted (DESIGN §5). The shell
    (`inspector.store`) opens, locks, backs up (SQLite's online backup), inserts, verifies, takes
    back and undoes; the format says only what its schema needs.

    - `refusal(con, ledger)`: why this store cannot take the rows (a schema version we do not
      know, a missing table), or None;
    - `rows(entry, lines, ledger, con)`: the rows to insert, in order (the entry's own row among
      them), from the lines the `Writer` spelled (`Writer.lines`, else the entry alone: what a
      repair result carries to the store); `con` is read inside the write transaction (e.g. for
      the next sequence number);
    - `state(con, ledger)`: a digest of the session's rows; the store is unchanged since it was
      analysed when it equals `ledger.store_state` (taken the same way at load);
    - `functions(con)`: registers the SQL functions the store's schema calls (in its CHECKs) that
      this SQLite may lack, before anything checks or inserts rows (None: it needs none).
    """

    refusal: Callable[[sqlite3.Connection, Ledger], str | None]
    rows: Callable[[dict[str, Any], list[dict[str, Any]], Ledger, sqlite3.Connection], list[Row]]
    state: Callable[[sqlite3.Connection, Ledger], str]
    functions: Callable[[sqlite3.Connection], None] | None = None


@dataclass(frozen=True, slots=True)
class Writer:
    """How a repair appends a checkpoint the runtime itself will read (DESIGN §3, write-back)."""

    record_name: str  # what the appended record is called ("compaction", "checkpoint")
    id_prefix: str  # a fresh id is this + 8 hex digits
    planned_id: str  # the id a dry-run plan gives its checkpoint
    refusal: Callable[[Ledger], str | None]  # why this session cannot take one, or None
    entry: Callable[[CheckpointDraft], dict[str, Any]]  # the JSON object to append
    # The entry read back by the format's own mapping: (entry, its line, seq) -> the record.
    read_back: Callable[[dict[str, Any], RawLine, int], Record]
    # Where the checkpoint is more than one line (Claude Code's boundary and summary lines, Codex's
    # `compacted` line and its event): (the entry, the draft, the session) -> every line appended,
    # in order, the entry among them. None: the entry alone. Each is read back with `read_back`.
    lines: Callable[[dict[str, Any], CheckpointDraft, Ledger], list[dict[str, Any]]] | None = None
    # Where one appended line's meaning depends on another (Claude Code's summary line is its
    # boundary's summary): (the records read back, their line objects) -> None, joining them in
    # place as the format's own reader does when it loads the file. None: each line stands alone.
    fold: Callable[[list[Record], list[dict[str, Any]]], None] | None = None
    # A database store inserts rows instead of appending lines (see StoreWriter).
    store: StoreWriter | None = None
    # Where a checkpoint's meaning depends on the history before it (Codex matches its replacement
    # history against the items already read): (the session, the lines appended) -> their records,
    # read together with the session as a reload reads them. None: each line alone (`read_back`).
    reread: Callable[[Ledger, list[dict[str, Any]]], list[Record]] | None = None
    # A file that is not JSON lines (a JSON dump): (its bytes, the lines) -> the whole new file,
    # written as a new file (`--out`) only. None: the lines are appended.
    copy: Callable[[bytes, list[dict[str, Any]]], bytes] | None = None
    # Where a new record changes what the records before it mean (adk-go: a response dropped from the
    # request is summarized once a record covers it): (the session, the lines) -> the session read
    # again with them, every record as a reload gives it. None: the records read before are kept
    # and the new ones appended (`reread`, `read_back`).
    rebuild: Callable[[Ledger, list[dict[str, Any]]], Ledger] | None = None


# ---------------------------------------------------------------------------------------- the format


@dataclass(frozen=True, slots=True)
class HomeOverride:
    """An environment variable that moves a runtime's home: the home is `below` under its value;
    `tilde`: a leading `~` in the value means the user's home (else it is a folder named `~`)."""

    variable: str
    below: str = ""
    tilde: bool = True


@dataclass(frozen=True, slots=True)
class Home:
    """A folder a runtime finds through its environment (NextClaw's `$NEXTCLAW_HOME`, OpenClaw's
    `$OPENCLAW_STATE_DIR` / `$OPENCLAW_HOME`): the first override set wins, else `default`, as
    the default places spell it ("~/.nextclaw"). A default place under `default` is looked for
    under the resolved home instead."""

    default: str
    overrides: tuple[HomeOverride, ...]

    def resolve(self, env: Mapping[str, str]) -> str:
        """The home as the runtime resolves it: a glob pattern that matches that folder only."""
        for o in self.overrides:
            value = env.get(o.variable, "").strip()
            if value:
                folder = os.path.abspath(os.path.expanduser(value) if o.tilde else value)
                return glob.escape(os.path.join(folder, o.below) if o.below else folder)
        return self.default

    def place(self, pattern: str, env: Mapping[str, str]) -> str:
        """A default place with this home resolved (a pattern outside it unchanged)."""
        if pattern == self.default or pattern.startswith(self.default + "/"):
            return self.resolve(env) + pattern[len(self.default) :]
        return pattern


LineBuilder = Callable[[list[RawLine], str | None, bytes | None], Ledger]
# (open file at 0, path, size, upto_line, start the hasher) -> (ledger, bytes consumed)
LineStreamer = Callable[[BinaryIO, str, int, "int | None", "Callable[[], None] | None"], tuple[Ledger, int]]
# (the ledger read so far, the complete lines appended after it, each parsed clean: one object, no
# diagnostic) -> the ledger a full build of all the lines would give, or None when that needs
# the whole file (the caller reloads it in full). Leaves the given ledger's records as they were (appended.grown).
LineExtender = Callable[[Ledger, list[RawLine]], "Ledger | None"]
# (path, open file at 64 KiB, the first 64 KiB, FILE#SESSION selection, upto_line) -> ledger
StoreLoader = Callable[[str, BinaryIO, bytes, "str | None", "int | None"], Ledger]



@dataclass(frozen=True, slots=True)
class StoreGrowth:
    """What a store gained past the rows a ledger was read from (issue 17.1), one of:

    - `reload` set: why the store must be read again in full (a row read before changed or went,
      another session is now the one read, a new row needs the whole build);
    - `ledger` None: nothing changed;
    - `ledger` set: the grown ledger (the given one's records unchanged, the new ones appended),
      `added` of them new; `notes_changed` when a diagnostic of the whole store (its -wal, which
      session was chosen) reads differently now, so the report is analysed again in full.

    `tail` is the store's own note of where the read ended, handed back on the next look.
    """

    ledger: Ledger | None
    tail: Any
    added: int = 0
    reload: str | None = None
    notes_changed: bool = False


# (the store's path, FILE#SESSION selection, the ledger read so far, the tail the last look
# returned or None right after a full load) -> StoreGrowth. Reads only the rows after the last seen.
StoreFollower = Callable[[str, "str | None", Ledger, Any], StoreGrowth]


@dataclass(frozen=True, slots=True)
class Format:
    """One producer's format. Exactly one of the two reading families is filled in:

    - a line format (JSONL): `looks_like` tests one parsed object, `build` maps the parsed lines
      (`stream`, optional, reads a big file from disk without parsing it whole);
    - a store (SQLite, a JSON dump): `claims` tests the file's head, `load_file` reads it, with
      the `FILE#SESSION` selection when `sessions_by_selector`; `looks_like_file` is the folder
      walk's own test (never raises); `claims_data`/`load_data` read one from memory.
    """

    name: str  # the --format value and Ledger.format
    label: str  # how the help text names it
    runtime: Runtime
    looks_like: Callable[[Any], bool] | None = None
    build: LineBuilder | None = None
    stream: LineStreamer | None = None
    # How a helper process decodes a big file's chunks for `stream` (`parallel`); with it, the app
    # forks that helper at its start (`formats.fork_reader_ahead`), before any thread runs.
    chunk_codec: ChunkCodec | None = None
    extend: LineExtender | None = None  # a line format that follows a growing file (issue 17.1)
    # A sub-agent forked from a session starts with a copy of its parent's history (Codex's
    # `InitialHistory::Forked`): its usage is the parent's, not the child's (analysis/sessions.py).
    forks_copy_parent_history: bool = False
    claims: Callable[[str, bytes], bool] | None = None
    load_file: StoreLoader | None = None
    # The loader of a read-only command (`load(..., fingerprint=False)`), for a store whose full
    # load also takes what only its write-back compares (its rows' digest); None: `load_file`.
    load_file_read_only: StoreLoader | None = None
    looks_like_file: Callable[[str], bool] | None = None
    follow: StoreFollower | None = None  # a store read on from its last seen row (issue 17.1)
    claims_data: Callable[[bytes], bool] | None = None
    load_data: Callable[[bytes, str, int | None], Ledger] | None = None
    sessions_by_selector: bool = False  # FILE#SESSION picks one session of a multi-session store
    # A multi-session store's sessions, as FILE#SESSION selectors take them ([] when it cannot
    # say): `inspector scan` and the triage browser give each its own row.
    session_ids: Callable[[str], list[str]] | None = None
    # File name endings the folder walk takes: a line format's are taken as sessions, a store's
    # only when `looks_like_file` says so.
    suffixes: tuple[str, ...] = (".jsonl",)
    default_places: tuple[str, ...] = ()  # glob patterns of folders (triage, bare `inspector`)
    # Homes the runtime resolves from its environment; default places under one move with it.
    homes: tuple[Home, ...] = ()
    not_session_files: tuple[str, ...] = ()  # fnmatch patterns of names there that are not sessions
    # The simulator's compaction model of this runtime: "threshold" (pi's: compact past window −
    # reserve, keep the recent tokens; window / reserve / keep-recent settings may be recorded),
    # "event_ranges" (ADK's invocation ranges, replayed in append order), or None (none modelled).
    simulator: str | None = None
    default_policy: str = "pi"  # the what-if policy the simulate screen starts on
    details_key: str | None = None  # the report JSON key a checkpoint's details go under
    writer: Writer | None = None
    # Without a writer: why this tool writes nothing the runtime would read (what the runtime
    # reads back, and why that is not proven here), as `repair --write` refuses.
    read_only_reason: str | None = None

    def places(self, env: Mapping[str, str] | None = None) -> tuple[str, ...]:
        """Its default places with its homes resolved from `env` (the process environment)."""
        env = os.environ if env is None else env
        out = []
        for pattern in self.default_places:
            for home in self.homes:
                pattern = home.place(pattern, env)
            out.append(pattern)
        return tuple(out)

    @property
    def is_store(self) -> bool:
        return self.load_file is not None

    def __post_init__(self) -> None:
        lines = self.looks_like is not None and self.build is not None
        if lines == (self.claims is not None and self.load_file is not None):
            raise ValueError(f"format {self.name!r}: give either looks_like + build or claims + load_file")

