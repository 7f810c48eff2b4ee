"""Claude Code transcript JSONL (`~/.claude/projects/<project>/<session>.jsonl`; DESIGN §3).

Mapping into the ledger model (the repair's write-back: `claude_code_writer`), checked against what Claude Code 2.1.328 sent
(`../shared/peers/claude_code/`). What the runtime does, and so what we do:

- Lines are `user`, `assistant`, `system`, `attachment`, `progress` records linked by
  `uuid`/`parentUuid`, plus bookkeeping lines without a uuid (queue-operation, last-prompt, ...).
  Only `user` and `assistant` lines are conversation messages; the rest are kept as meta records
  (attachments are re-injected by the runtime as reminders, not sent as written).
- An assistant reply is written one content block per line, every line with the same
  `message.id`: the lines are merged into one message (on the first line; the others become
  meta records saying so), usage counted once per `message.id` + `requestId`.
- The next request follows `parentUuid` from the newest line back to the root, but parallel tool
  calls fan out: each result hangs off its own call's line and the next reply off whichever result
  was written last, so the others are off the chain. Claude Code still sends all of them, so we
  put every line of a reply and every result answering it on the active path, in file order.
- A compaction is a `system` line, subtype `compact_boundary` (`parentUuid: null`,
  `logicalParentUuid` = the last message before it, `compactMetadata{trigger, preTokens,
  preservedSegment?, preservedMessages?}`), then a `user` line with `isCompactSummary: true`
  holding the summary. We follow `logicalParentUuid` so the earlier messages are on the active
  path (and get a coverage state); the boundary is the checkpoint, the summary line folds into it.
  Messages `preservedSegment`/`preservedMessages` name are sent verbatim after the summary: we
  move them just ahead of the boundary, where a checkpoint's retained tail sits.
- Claude Code 1.0.x wrote a compaction as the summary line alone (`isCompactSummary`,
  `parentUuid: null`, no boundary before it), a new chain after the earlier lines: that line is
  the checkpoint, and the main thread's newest line before it stands in for its logical parent
  (`_summaries_without_boundary`).
- `isMeta` user lines are sent (Claude Code hides them from the user, not from the model: the
  peer corpus shows them in the requests), so they are ordinary messages here.
- A reply of another model than the request's is sent without its signed thinking (`reply_trimmed`):
  the request's model on resume is not in the file, so we take the newest real reply's; the
  ledger keeps the blocks as written, the item is counted on what is sent.
- Sub-agents (`isSidechain: true`) are not part of the main chain; their own files
  (`<session>/subagents/agent-*.jsonl`) load as sessions of their own, and the tool result that
  started one names its file (`extra["subagent_transcript"]`).

The parent links the analysis walks (`Record.parent_id`) are the ones the runtime effectively
uses; where that differs from the line's own `parentUuid`, the line's value is kept in `extra`.
Bad input never raises: each problem is a Diagnostic naming the line.
"""

from __future__ import annotations

import functools
import io
import math
import os
from bisect import bisect_left, bisect_right
from collections import ChainMap
from collections.abc import Callable, Container, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from operator import attrgetter
from typing import Any, BinaryIO

import msgspec
from msgspec import UNSET
from msgspec.structs import astuple

from inspector.formats import (
    appended,
    bounded,
    claude_code_compact,
    claude_code_resume,
    claude_code_writer,
    fields,
    parallel,
)
from inspector.formats.base import Format, Runtime, Writer
from inspector.formats.claude_code_heads import (
    BOOKKEEPING as _BOOKKEEPING,
)
from inspector.formats.claude_code_heads import DECODER as HEAD_DECODER
from inspector.formats.claude_code_heads import (
    LineHead,
    MessageHead,
    ToolUseResultHead,
    blocks_clean,
    signed_thinking,
)
from inspector.formats.claude_code_heads import stop_reason as head_stop_reason
from inspector.formats.heads import DECODE_ERRORS, FIRST_BYTE, kept_result_ids, valid_utf8
from inspector.formats.jsonl import RawLine, line_object, parse_line
from inspector.formats.pi_sending import truthy
from inspector.formats.whole_lines import collector_paused, read_heads_upto
from inspector.ledger.jsontext import deep, py_str
from inspector.ledger.model import (
    UNREAD,
    Block,
    Checkpoint,
    Diagnostic,
    Ledger,
    Message,
    Record,
    RecordSource,
    Route,
    Usage,
    normalize_stop_reason,
    report_duplicate_ids,
)
from inspector.ledger.model import (
    record_from_fields as new_record,
)
from inspector.ledger.quoting import quote
from inspector.ledger.times import epoch_seconds

NAME = "claude_code"

# Lines the runtime chains by uuid and may pick as the newest one (the leaf).
_CHAINED = frozenset({"user", "assistant", "system", "attachment"})
_NONE: set[int] = set()  # (no seqs: never changed)
# Fields the model above represents; everything else on a line is kept in `extra`.
_MAPPED = frozenset({"type", "uuid", "parentUuid", "timestamp", "message"})
_USAGE_KEYS = ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")


def looks_like(obj: Any) -> bool:
    """Content sniffing: a Claude Code conversation line (type user/assistant/system/attachment/
    progress with a `parentUuid` key or a `sessionId`), or one of its bookkeeping lines."""
    if not isinstance(obj, dict):
        return False
    t = obj.get("type")
    if t in ("user", "assistant"):
        return isinstance(obj.get("message"), dict) and ("parentUuid" in obj or "sessionId" in obj)
    if t in ("system", "attachment", "progress"):
        return "parentUuid" in obj and ("uuid" in obj or "sessionId" in obj)
    if t in ("file-history-snapshot", "queue-operation", "last-prompt"):
        return "sessionId" in obj or "messageId" in obj or "snapshot" in obj or "leafUuid" in obj
    if t == "summary":
        return "leafUuid" in obj
    return False


class _Source(RecordSource):
    """Re-reads a record's line as written (the detail pane's "as written"), and the content and
    unknown fields of a line read from its head only (`claude_code_heads`), on demand."""

    __slots__ = (
        "added", "agents", "answered", "bridged", "called", "chain_leaf", "dangling", "data", "foreign", "groups",
        "last_checkpoint", "last_prompt", "merged", "merges_by_path", "newest", "path", "records", "relinked", "repeated",
        "replies", "request_model", "results", "signed", "tail_calls", "thinking", "thinking_left_out",
    )  # fmt: skip

    def __init__(self, path: str | None, data: bytes | None) -> None:
        self.path = path
        self.data = data
        self.records: list[Record] = []
        # Lazily-read records only, by seq: a merged reply's lines, a tool line's result ids
        # (where they are not just `result_id`), a sub-agent's id, fields the mapping added.
        self.groups: dict[int, list[int]] = {}
        self.results: dict[int, list[str]] = {}
        self.agents: dict[int, str] = {}
        self.added: dict[int, dict[str, Any]] = {}
        # What `extend` needs of the whole file: every reply's lines by its key, the
        # logicalParentUuid values boundaries name, the line the main thread's chain is walked
        # from (`chain_leaf`: its newest line, or the one a last-prompt line names instead) and
        # its newest line (`newest`; None: no main thread), the newest checkpoint (-1: none).
        self.replies: dict[tuple[Any, ...], list[int]] = {}
        self.merged: dict[int, list[int]] = {}  # a reply written on several lines: first seq -> its lines
        self.last_checkpoint = -1
        self.last_prompt = -1  # the newest last-prompt line after it (`_newest_last_prompt`)
        self.bridged: frozenset[str] = frozenset()
        self.chain_leaf: int | None = None
        self.newest: int | None = None
        self.answered: set[str] | None = None  # every call a tool line answers (built by `extend`)
        self.called: set[str] | None = None  # every call a reply makes (built by `extend`)
        # The parentUuids the path's linking replaced (`_active_path`): the records no longer name
        # them, and a line appended with one of them needs the full build (`appended.fresh_ids`).
        self.relinked: set[str] = set()
        # The path's calls no line answers (`_leave_out_unanswered`): their replies' fate changes
        # with what is appended after them, so `extend` rebuilds when it could.
        self.dangling: frozenset[str] = frozenset()
        self.tail_calls: tuple[frozenset[str], ...] = ()  # the calls of each reply the path ends on
        self.repeated: frozenset[str] = frozenset()  # ... of those, the ids more than one reply on the path makes
        # The assistant lines whose content is thinking blocks only (`THINKING_BLOCKS`), and the
        # path's replies all of whose lines are such, which Claude Code leaves out (`_leave_out_thinking_only`).
        self.thinking: set[int] = set()
        self.thinking_left_out: dict[int, str | None] = {}  # seq -> its message.id
        # The assistant lines holding a block Claude Code leaves out of a reply of another model
        # (`claude_code_heads.signed_thinking`), by seq, with their message.model as written; the
        # model we take the session to resume with (`_request_model`), and of those lines the ones
        # of another model (`_foreign`), whose thinking is left out of what is sent.
        self.signed: dict[int, Any] = {}
        self.request_model: str | None = None
        self.foreign: set[int] = set()
        # Whether what merges into a reply depends on the path (`_merge_as_requested`: a reply
        # without a message.id, an id written again); `extend` reads the file in full then.
        self.merges_by_path = False

    def _raw(self, rec: Record, f: BinaryIO | None = None) -> bytes | None:
        """A record's line as written: from the bytes the ledger was built from, or, for a line
        past them (appended to a followed file since: `extend`), and for a ledger read from its
        file, from the file."""
        data = self.data
        if data is not None and (rec.offset + rec.length <= len(data) or self.path is None):
            return data[rec.offset : rec.offset + rec.length]
        if f is not None:
            f.seek(rec.offset)
            return f.read(rec.length)
        if self.path is None:
            return None
        try:
            with open(self.path, "rb") as f:
                f.seek(rec.offset)
                return f.read(rec.length)
        except OSError:
            return None

    def obj(self, rec: Record, f: BinaryIO | None = None) -> Any:
        raw = self._raw(rec, f)
        return None if raw is None else line_object(raw, rec.line, rec.offset) or None

    def _line(self, rec: Record, f: BinaryIO | None = None, *, check: bool = False) -> dict[str, Any]:
        """A line's object read again (`check`: its fields checked as the first read checked them;
        a line read from its head has none of a wrong type)."""
        o = self.obj(rec, f)
        if not isinstance(o, dict):
            return {}
        if check:
            fields.check_fields(o, fields.CLAUDE_CODE)
        return o

    def message(self, rec: Record, f: BinaryIO | None = None) -> Message | None:
        seqs = self.groups.get(rec.seq)
        if seqs is not None:
            return _merged_message([self._own_message(self.records[s], f) for s in seqs])
        return self._own_message(rec, f)[0]

    def sent_message(self, rec: Record) -> Message | None:
        """A reply as Claude Code sends it: each of its lines of another model than the request's
        less its signed thinking (`_sent_content`), merged as `message` merges them."""
        seqs = self.merged.get(rec.seq) or [rec.seq]
        parts = [self._own_message(self.records[s], sent=True) for s in seqs]
        return _merged_message(parts) if len(parts) > 1 else parts[0][0]

    def load_many(self, recs: list[Record]) -> None:
        """Many records' messages read through one open file, in file order."""
        if self.data is not None or self.path is None:
            super().load_many(recs)
            return
        try:
            f = open(self.path, "rb")  # noqa: SIM115 - closed below
        except OSError:
            super().load_many(recs)
            return
        with f:
            for r in sorted(recs, key=lambda r: r.offset):
                r._message = self.message(r, f)

    def _own_message(self, rec: Record, f: BinaryIO | None = None, *, check: bool = False, sent: bool = False) -> tuple[Message, Any]:
        """The message one line holds, and its requestId (`sent`: as Claude Code sends it)."""
        o = self._line(rec, f, check=check)
        note = _local_command_note(o)
        if note is not None:
            return note, None
        m = o.get("message")
        if sent and isinstance(m, dict) and _foreign(m.get("model"), self.request_model):
            m = _sent_content(m)
        msg = _message(o, m if isinstance(m, dict) else {})
        return msg, o.get("requestId")

    def extra(self, rec: Record) -> dict[str, Any] | None:
        o = self._line(rec)
        # (a user or assistant line read from its head is a message line, merged into another or not)
        m = o.get("message") if rec.type in ("user", "assistant") else None
        base = _extra(o, m if isinstance(m, dict) else None)
        add = self.added.get(rec.seq)
        if add:
            base = {**(base or {}), **add}
        return base

    def result_ids(self, rec: Record) -> list[str] | None:
        return kept_result_ids(self.results, rec)


def _add_extra(r: Record, key: str, value: Any, *, keep: bool = False) -> None:
    """Note a field the mapping adds to a record's `extra` (`keep`: unless it is there already);
    a lazily-read record's own fields are not read for it."""
    src = r._source
    if r._extra is UNREAD and isinstance(src, _Source):
        add = src.added.setdefault(r.seq, {})
        if keep:
            add.setdefault(key, value)
        else:
            add[key] = value
        return
    e = dict(r.extra or {})
    if keep:
        e.setdefault(key, value)
    else:
        e[key] = value
    r.extra = e


def _result_ids(r: Record) -> list[str]:
    """Every call a tool line answers (a Claude Code user line may carry several results)."""
    src = r._source
    ids = src.result_ids(r) if isinstance(src, _Source) else None
    if ids is not None:
        return ids
    m = r.message
    return m.tool_result_ids() if m is not None else []


def _show(v: Any) -> str:
    s = deep(repr, v)
    return s if len(s) <= 60 else s[:57] + "..."


def _text_of(content: Any) -> str:
    """A tool result's content (a string or a list of text/image blocks) as text."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for b in content:
            if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str):
                parts.append(b["text"])
            elif isinstance(b, str):
                parts.append(b)
        return "\n".join(parts)
    return ""


# What Claude Code 2.1.328 makes of a user or assistant line's message as it loads a transcript
# (`jrn`, offset 317322164; `Brn`, offset 317321174, runs it on every such row): a message that is
# not an object, content that is neither a string nor a list, a list none of whose blocks is an
# object with a string `type`, and an assistant's string content that is blank (`trim()`) drop the
# row; its children are linked to its parent (`Brn`'s `finish`), so the chain goes on past it. A
# block that is not an object with a string `type` is removed from the list (`Irn`); an assistant's
# other string content is wrapped in one text block. (Observed: `python -m
# tests.peers.claude_code_resume.type_probe`.)
_JS_SPACE = frozenset("\t\n\v\f\r \u00a0\u1680\u2028\u2029\u202f\u205f\u3000\ufeff" + "".join(map(chr, range(0x2000, 0x200B))))


def _js_blank(text: str) -> bool:
    """Whether JavaScript's `trim` leaves nothing of `text` (Python's whitespace is another set)."""
    return all(ch in _JS_SPACE for ch in text)


def _read_block(b: Any) -> bool:
    """A content block Claude Code keeps (`Irn`): an object with a string type."""
    return isinstance(b, dict) and isinstance(b.get("type"), str)


def _dropped_because(t: Any, m: dict[str, Any]) -> str | None:
    """Why Claude Code drops a user or assistant line whose message is `m` (`jrn`), None: it keeps it."""
    c = m.get("content")
    if isinstance(c, str):
        return "is blank text" if t == "assistant" and _js_blank(c) else None
    if not isinstance(c, list):
        return "is not a string or a list" if "content" in m else "is missing or not a string or a list"
    if c and not any(_read_block(b) for b in c):
        return "holds no block that is an object with a string type"
    return None


def _blocks(content: Any) -> list[Block]:
    if isinstance(content, str):
        return [Block("text", content)]
    if not isinstance(content, list):
        return []
    out: list[Block] = []
    for b in content:
        if not _read_block(b):
            continue  # (Claude Code removes it: `Irn`)
        t = b.get("type")
        if t == "text":
            out.append(Block("text", b.get("text") if isinstance(b.get("text"), str) else ""))
        elif t == "thinking":
            out.append(Block("thinking", b.get("thinking") if isinstance(b.get("thinking"), str) else ""))
        elif t == "tool_use":
            out.append(Block("tool_call", call_id=_call_key(b.get("id")), name=b.get("name"), args=b.get("input")))
        elif t == "tool_result":
            out.append(
                Block(
                    "tool_result",
                    _text_of(b.get("content")),
                    call_id=_call_key(b.get("tool_use_id")),
                    is_error=b.get("is_error") is True,
                )
            )
        elif t == "image":
            out.append(Block("image", raw=b))
        else:
            # redacted_thinking, server tool use, documents, fixtures' own block types: kept whole.
            out.append(Block("other", raw=b))
    return out


def _call_key(v: Any) -> str | None:
    """A `tool_use`'s `id` or a `tool_result`'s `tool_use_id` as the index keys its call: a string as
    it is; a number as its JSON text marked so ("5 (a number)"), no string id taken for it: Claude
    Code counts any value as a call and answers it by the same value (`lre`: `===`), so a reply
    whose only call has the id 5 goes unanswered and is left out (observed: type probe "reply call
    id a number"); None (no call) for anything else (`fields.CLAUDE_CODE` removes the other types)."""
    if isinstance(v, str):
        return v
    if isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v):
        return f"{int(v) if v == int(v) else v!r} (a number)"
    return None


def _usage(u: Any) -> Usage | None:
    if not isinstance(u, dict):
        return None
    vals = [u.get(k) for k in _USAGE_KEYS]
    if all(v is None for v in vals):
        return None
    n = [v if isinstance(v, int) and not isinstance(v, bool) and v >= 0 else 0 for v in vals]
    return Usage(input=n[0], output=n[1], cache_read=n[2], cache_write=n[3])


# A `system` line of subtype `local_command` (a local command's output Claude Code writes itself,
# as "Error during compaction: ..." when `/compact` fails, `Yb`, offset 322901492) is sent as a user
# message, joined to a user message just before it: its API conversion (offset 322778400,
# `case"system":{if(!aO(ts))continue; ... He({content:ts.content, ...})`) skips every other system line.
LOCAL_COMMAND_NOTE = "system:local_command"


def _local_command_note(o: dict[str, Any]) -> Message | None:
    if o.get("type") != "system" or o.get("subtype") != "local_command" or not isinstance(o.get("content"), str):
        return None
    return Message("user", _blocks(o["content"]), source_role="system")


def _thinking_block(b: Block) -> bool:
    return b.type == "thinking" or (b.type == "other" and isinstance(b.raw, dict) and b.raw.get("type") == "redacted_thinking")


def _sent_order(blocks: list[Block]) -> list[Block]:
    """A reply's blocks in the order Claude Code 2.1.328 sends them (`cXo`, offset 322793006,
    applied to each reply as its request builder takes it in and again to each merge, `Rzi`,
    offset 322792083): its calls moved after every other block, their own order and the others'
    kept, unless a call sits between two thinking blocks (a thinking block, calls, a thinking
    block: "tengu_reorder_tool_uses_skipped_for_thinking"), when nothing moves."""
    first = next((i for i, b in enumerate(blocks) if b.type == "tool_call"), None)
    if first is None or all(b.type == "tool_call" for b in blocks[first:]):
        return blocks
    prev_thinking = after_call = False
    for b in blocks:
        if b.type == "tool_call":
            after_call = True
            continue
        thinking = _thinking_block(b)
        if thinking and prev_thinking and after_call:
            return blocks
        prev_thinking, after_call = thinking, False
    return [b for b in blocks if b.type != "tool_call"] + [b for b in blocks if b.type == "tool_call"]


def _message(o: dict[str, Any], m: dict[str, Any]) -> Message:
    blocks = _blocks(m.get("content"))
    if o.get("type") == "assistant":
        blocks = _sent_order(blocks)
        stop_raw = m.get("stop_reason")
        stop = normalize_stop_reason(stop_raw)
        err = None
        model = m.get("model")
        if o.get("isApiErrorMessage") is True and model == "<synthetic>":
            # A synthetic reply standing for a failed request: no request ever produced it, and
            # Claude Code leaves it out of the next (`dV`, offset 305859984, in `Ff`'s filter); an
            # API error line naming a real model is sent as any reply (observed: the type probe).
            stop = "error"
            err = next((b.text for b in blocks if b.type == "text" and b.text), None) or str(o.get("error") or "")
        return Message(
            "assistant",
            blocks,
            stop_reason=stop,
            stop_reason_raw=stop_raw,
            usage=_usage(m.get("usage")),
            # "<synthetic>": written by Claude Code itself (e.g. on resume), no request produced it.
            route=Route(model, None) if isinstance(model, str) and model != "<synthetic>" else None,
            error_message=err,
            source_role="assistant",
        )
    role = "tool" if any(b.type == "tool_result" for b in blocks) else "user"
    # A user line whose content is an empty list is loaded (its children hang off it) but its row
    # is skipped as the request is built (`tft`, offset 322753589, tested first in `mTe`'s
    # `case"user"`, offset 322778752): nothing of it is sent, so it joins no user message.
    return Message(role, blocks, source_role="user", never_sent=m.get("content") == [])


def _extra(o: dict[str, Any], m: dict[str, Any] | None) -> dict[str, Any] | None:
    out = {k: v for k, v in o.items() if k not in _MAPPED}
    if m is not None:
        # The API message's own fields (id, model, usage, ...), not its content.
        rest = {k: v for k, v in m.items() if k not in ("role", "content")}
        if rest:
            out["message"] = rest
    elif "message" in o:
        out["message"] = o["message"]
    return out or None


def _group_key(o: dict[str, Any], m: dict[str, Any]) -> tuple[Any, ...] | None:
    mid = m.get("id")
    if not isinstance(mid, str) or not mid:
        return None
    return (o.get("isSidechain") is True, o.get("agentId"), mid)


@dataclass(slots=True)
class _Reading:
    """What reading a transcript's lines in file order has gathered so far."""

    source: _Source
    diags: list[Diagnostic] = field(default_factory=list)
    records: list[Record] = field(default_factory=list)
    objs: list[dict[str, Any]] = field(default_factory=list)  # per seq, the line's object
    session_id: str | None = None
    # assistant reply groups: key -> seqs in file order
    groups: dict[tuple[Any, ...], list[int]] = field(default_factory=dict)
    by_uuid: dict[str, int] = field(default_factory=dict)
    uuids: int = 0  # records with a uuid: more than `by_uuid` holds when one repeats
    invisible: int = 0  # records Claude Code skips (not runtime-visible)
    # The seqs of the checkpoints and of the tool lines read (in file order): the passes of
    # `_build` that only concern those visit them alone. (No record becomes either later.)
    checkpoints: list[int] = field(default_factory=list)
    tools: list[int] = field(default_factory=list)
    thinking: list[int] = field(default_factory=list)  # the assistant lines holding thinking blocks only
    signed: dict[int, Any] = field(default_factory=dict)  # `_Source.signed` of the lines read
    no_id: list[int] = field(default_factory=list)  # the assistant lines without a message.id (`_undefined_id`)
    summaries: list[int] = field(default_factory=list)  # the user lines marked isCompactSummary (never read from a head)
    looks: bool = False  # a line read from its head is a Claude Code line (`looks_like`)
    likes: dict[str, Record] = field(default_factory=dict)  # what a head's record starts from (`_head_likes`)

    def __post_init__(self) -> None:
        self.likes = _head_likes(self.source)


def build(lines: list[RawLine], path: str | None, data: bytes | None = None) -> Ledger:
    """Map a Claude Code transcript's lines into the model. Never raises on bad content."""
    with collector_paused():  # (see whole_lines: nothing here makes cycles)
        return _build(_read_lines(lines, source=_Source(path, data)), path)


def stream(
    f: BinaryIO, path: str, limit: int, upto_line: int | None, after_fork: Callable[[], Any] | None = None
) -> tuple[Ledger, int]:
    """The file read from disk (`base.LineStreamer`): a line whose head decodes clean
    (`claude_code_heads`) becomes its record from the head alone, its content and unknown fields
    read again when asked for; any other line is parsed whole, as `build` reads it. A big file's
    chunks are decoded by a forked helper too (`parallel`, `_CODEC`); the ledger is the same."""
    with parallel.helper_of(f, limit, _CODEC, upto_line) as helper:
        if after_fork is not None:
            after_fork()  # (the hasher's thread: started once the helper is forked)
        with collector_paused():
            st = _Reading(_Source(path, None))
            if helper is None:
                consumed = read_heads_upto(
                    f, limit, upto_line, HEAD_DECODER.decode, functools.partial(_read_head, st), functools.partial(_read_line, st=st)
                )
            else:
                consumed = _read_with_helper(st, f, limit, helper)
            return _build(st, path), consumed


def _read_head(st: _Reading, h: LineHead, raw: bytes, line: int, offset: int) -> bool:
    """A user, assistant or bookkeeping line's record from its head (False: the line takes the
    general path: a compact summary, an API-error reply, a line type with rules of its own)."""
    t = h.type
    m = h.message
    if h.compactMetadata or h.isCompactSummary is True:
        return False
    raw_pid = h.parentUuid
    sid = h.sessionId
    conversation = t == "user" or t == "assistant"
    if conversation:
        if m is None or h.isApiErrorMessage is True or (raw_pid is UNSET and sid is UNSET):
            return False
        c = m.content
        if c is None or (t == "assistant" and type(c) is str and _js_blank(c)):
            return False  # (a line Claude Code drops: `_dropped_because`)
        if not c and type(c) is list:
            return False  # (sent as nothing, or as "(no content)": `_message`, `sent_in_place`; rare, read whole)
    elif t not in _BOOKKEEPING and (t != "system" or h.subtype == "compact_boundary"):
        return False
    if m is not None and type(m.content) is list and not blocks_clean(m.content):
        return False  # (a block's text, thinking or content of a wrong type: the general path says so)
    records = st.records
    seq = len(records)
    uuid = h.uuid or None
    pid = raw_pid or None
    if sid is not UNSET and sid is not None and st.session_id is None:
        st.session_id = sid
    # What the mapping reads of a line's object: its type, parent, sidechain and agent, message id.
    light: dict[str, Any] = {"type": t, "isSidechain": h.isSidechain, "agentId": h.agentId}
    if raw_pid is not UNSET:
        light["parentUuid"] = raw_pid
    if conversation:
        assert m is not None
        rec = _head_message_record(h, m, seq, line, offset, len(raw), st)
        if rec is None:
            return False
        rec.id = uuid
        rec.parent_id = pid
        light["message"] = {"id": m.id, "model": m.model} if t == "assistant" else {"id": m.id}
        if not m.id and t == "assistant" and h.requestId is not UNSET:
            light["requestId"] = h.requestId  # (`_undefined_id`)
        st.looks = True  # (a conversation line with a parentUuid or sessionId: `looks_like`)
    else:
        like, rt = (st.likes["meta"], t) if t != "system" else _system_like(st, h)
        rec = _new(like, seq=seq, line=line, id=uuid, parent_id=pid, timestamp=h.timestamp, offset=offset, length=len(raw), type=rt)
        if not st.looks and _bookkeeping_looks_like(h, t):
            st.looks = True
    records.append(rec)
    st.objs.append(light)
    if uuid is not None:
        st.by_uuid[uuid] = seq
        st.uuids += 1
    if conversation:
        tur = h.toolUseResult
        if type(tur) is ToolUseResultHead and tur.agentId is not None:
            st.source.agents[seq] = tur.agentId
        if t == "assistant":
            mid = m.id  # (`_group_key` of the light object, from the head)
            _join_group((h.isSidechain is True, h.agentId, mid) if mid else None, seq, st)
    return True


# -- a big file read by two processes (`parallel`): a forked helper reads chunks of lines ahead of
# this one with the serial path's own `_read_head` (on a reading of its own, `_heads_of_range`);
# this one indexes every line in file order: the helper's records as `_read_head` indexes them
# (`_index_chunk`), and any line the helper left (the general path's, or one whose isSidechain is
# not a plain value) read here exactly as the serial path reads it (`_read_one_line`).


class _Chunk(msgspec.Struct, array_like=True, gc=False):
    """What the helper made of a chunk's lines (`_heads_of_range`), as msgpack brings it."""

    lines: list[int]  # per line: 0 when its record is the next of `records`, else its length (read it here)
    records: list[Record]  # numbered, and given their source, here
    lights: list[dict[str, Any]]  # `_read_head`'s light object of each
    session_id: str | None  # the first sessionId `_read_head` took, from record `session_at`
    session_at: int
    looks: bool  # a line made the file a Claude Code transcript (`looks_like`)
    agents: dict[int, str]  # by record: its toolUseResult's agentId
    results: dict[int, list[str]]  # by record: the calls a tool line answers, where its result_id is not all
    tools: list[int]  # the tool lines' records
    thinking: list[int]  # the records of the lines holding thinking blocks only
    signed: dict[int, str | None]  # by record: the model of a line holding signed thinking (`_Source.signed`)


_PLAIN_SIDECHAIN = (bool, type(None))  # (any other isSidechain value: the line is read here)
_SENT_FIELDS = 15  # a record's first fields, through `type`, are sent (the rest keep their defaults)


def _heads_of_range(fd: int, start: int, end: int) -> list[Any]:
    """In the helper: bytes `start`..`end` (a chunk: whole lines), split as iterating the file
    splits them, each line through `_read_head` as the serial path reads it, on this chunk's own
    `_Reading` (records numbered from 0); a `_Chunk`, as msgpack-encodable lists."""
    st = _Reading(_Source(None, None))
    st.likes = _head_likes(None)  # (records sent without a source)
    lines: list[int] = []
    session_at = -1
    at = start
    for raw in io.BytesIO(parallel.read_range(fd, start, end)):
        n = len(raw)
        h = None
        if n <= bounded.LARGE_LINE_BYTES and (raw.isascii() or valid_utf8(raw)):
            try:
                h = HEAD_DECODER.decode(raw)
            except DECODE_ERRORS:
                h = None
        if h is not None and type(h.isSidechain) in _PLAIN_SIDECHAIN and _read_head(st, h, raw, 0, at):
            lines.append(0)
            if session_at < 0 and st.session_id is not None:
                session_at = len(st.records) - 1
        else:
            lines.append(n)
        at += n
    records = [astuple(r)[:_SENT_FIELDS] for r in st.records]
    src = st.source
    return [lines, records, st.objs, st.session_id, session_at, st.looks, src.agents, src.results, st.tools, st.thinking, st.signed]


_CHUNK = msgspec.msgpack.Decoder(_Chunk)


def _records_of_range(fd: int, start: int, end: int) -> _Chunk:
    """A chunk this process decodes ahead (the helper holds the one before): as the helper's."""
    return _CHUNK.decode(msgspec.msgpack.encode(_heads_of_range(fd, start, end)))


_CODEC = parallel.ChunkCodec(_heads_of_range, _records_of_range, _CHUNK)  # type: ignore[arg-type]


def _read_with_helper(st: _Reading, f: BinaryIO, limit: int, helper: parallel.Helper) -> int:
    """Every line up to `limit`, in file order: the chunks the helper leaves read here, the ones
    it read indexed from its answer. Returns the bytes consumed."""
    offset = line = 0
    step: Any = helper.step(0)
    while True:
        if type(step) is _Chunk:
            offset, line = _index_chunk(st, step, f.fileno(), (offset, line), limit)
        else:  # ours to read (None: the helper failed, so the rest is)
            offset, line = _read_own_chunk(st, f, (offset, line), limit if step is None else step, limit)
            if step is None:
                return offset
        if offset >= limit:
            return offset
        step = helper.step(offset)


def _read_own_chunk(st: _Reading, f: BinaryIO, at: tuple[int, int], stop: int, limit: int) -> tuple[int, int]:
    """The lines from `at` (offset, lines before) to byte `stop`, read as the serial path reads
    them; returns where that left the offset and line count."""
    offset, line = at
    f.seek(offset)
    for raw in f:
        line += 1
        n = len(raw)
        if offset + n > limit:  # appended while we read: stop at the size we started with
            raw = raw[: limit - offset]
            n = len(raw)
            if not n:
                break
        _read_one_line(st, raw, line, offset, offset + n >= limit)
        offset += n
        if offset >= stop:
            break
    return offset, line


def _read_one_line(st: _Reading, raw: bytes, line: int, offset: int, last: bool) -> None:
    """One line as `read_heads_upto` reads it: from its head if it decodes clean and
    `_read_head` takes it, else parsed whole (`last`: the last line of the read)."""
    h = None
    if len(raw) <= bounded.LARGE_LINE_BYTES and (raw.isascii() or valid_utf8(raw)):
        try:
            h = HEAD_DECODER.decode(raw)
        except DECODE_ERRORS:
            h = None
    if h is None or not _read_head(st, h, raw, line, offset):
        rl = parse_line(raw, line, offset, last)
        if rl is not None:
            _read_line(rl, st=st)


def _index_chunk(st: _Reading, chunk: _Chunk, fd: int, at: tuple[int, int], limit: int) -> tuple[int, int]:
    """A chunk the helper read, indexed in order as `_read_head` indexed its records there (their
    reply groups joined here, where the reply before the chunk is known); each line it left read
    here. Returns where that left the offset and line count."""
    offset, line = at
    records, objs, by_uuid, source = st.records, st.objs, st.by_uuid, st.source
    tools, agents, results = iter((*chunk.tools, -1)), chunk.agents, chunk.results
    tool = next(tools)
    thinking = iter((*chunk.thinking, -1))
    thought = next(thinking)
    signed = chunk.signed
    k = 0  # the chunk's own number of the next record
    for n in chunk.lines:
        line += 1
        if n:
            _read_one_line(st, os.pread(fd, n, offset), line, offset, offset + n >= limit)
            offset += n
            continue
        rec, light = chunk.records[k], chunk.lights[k]
        seq = len(records)
        rec.seq, rec.line, rec._source = seq, line, source
        if k == chunk.session_at and st.session_id is None:
            st.session_id = chunk.session_id
        if k == tool:
            answered = results.get(k)
            if answered is not None:
                source.results[seq] = answered
            st.tools.append(seq)
            tool = next(tools)
        if k in agents:
            source.agents[seq] = agents[k]
        if k == thought:
            st.thinking.append(seq)
            thought = next(thinking)
        if signed and k in signed:
            st.signed[seq] = signed[k]
        records.append(rec)
        objs.append(light)
        uuid = rec.id
        if uuid is not None:
            by_uuid[uuid] = seq
            st.uuids += 1
        t = light["type"]
        if t == "assistant":
            mid = light["message"]["id"]
            _join_group((light["isSidechain"] is True, light["agentId"], mid) if mid else None, seq, st)
        offset += rec.length
        k += 1
    if chunk.looks:
        st.looks = True
    return offset, line


def _system_like(st: _Reading, h: LineHead) -> tuple[Record, str]:
    """A system line's record from its head (not a compact boundary: those take the general
    path), as `_record_of` maps it: a local command with text content a message no request
    carries (its content read when asked for: `_Source._own_message`); any other a meta record
    `system:<subtype>`."""
    sub = h.subtype
    if sub == "local_command" and h.content and FIRST_BYTE(h.content) == _QUOTE:  # (`_local_command_note`)
        return st.likes["note"], LOCAL_COMMAND_NOTE
    return st.likes["meta"], "system" if sub is None else f"system:{sub}"


_QUOTE = (ord('"'),)  # a JSON string's first byte, as `FIRST_BYTE` gives it


def _bookkeeping_looks_like(h: LineHead, t: str | None) -> bool:
    """`looks_like` of a bookkeeping or system line, from its head."""
    if t in ("attachment", "progress", "system"):
        return h.parentUuid is not UNSET and (h.uuid is not UNSET or h.sessionId is not UNSET)
    if t in ("file-history-snapshot", "queue-operation", "last-prompt"):
        return h.sessionId is not UNSET or bool(h.messageId) or bool(h.snapshot) or bool(h.leafUuid)
    if t == "summary":
        return bool(h.leafUuid)
    return False


# A record read from a head is a copy of the record its kind starts from (`_head_likes`), with its
# own fields set by keyword (`msgspec.structs.replace`, in C: `record_from_fields` goes through
# `type.__call__`'s argument tuples, as native's loader measured).
_new = msgspec.structs.replace


def _head_likes(src: _Source | None) -> dict[str, Record]:
    """The records a head's record starts from: a bookkeeping line's (`meta`), an assistant
    line's, a user line's and a tool line's, every other field as `record_from_fields` leaves it."""

    def like(role: str | None, source_role: str | None, kind: str, type_: str) -> Record:
        return new_record(
            Record, 0, 0, None, None, None, 0, 0, role, None, source_role, (), None, src, kind, type_, True, False, None,
            None, None, UNREAD,
        )  # fmt: skip

    return {
        "meta": like(None, None, "meta", "meta"),
        "assistant": like("assistant", "assistant", "message", "assistant"),
        "user": like("user", "user", "message", "user"),
        "tool": like("tool", "user", "message", "user"),
        "note": like("user", "system", "message", LOCAL_COMMAND_NOTE),
    }


def _head_message_record(h: LineHead, m: MessageHead, seq: int, line: int, offset: int, length: int, st: _Reading) -> Record | None:
    """A message record from a line's head, its index fields as `_message` would give them."""
    c = m.content
    blocks = c if type(c) is list else ()
    if h.type == "assistant":
        calls: tuple[str, ...] = ()
        only_thinking = bool(blocks)
        signed = False
        for b in blocks:
            bt = b.type
            if bt == "tool_result":
                return None  # (a result inside a reply: the general path)
            if bt == "tool_use" and b.id:
                calls += (b.id,)
            if bt not in THINKING_BLOCKS:
                only_thinking = False
            elif not signed:
                signed = signed_thinking(b)
        if only_thinking:
            st.thinking.append(seq)
        if signed:
            st.signed[seq] = m.model
        return _new(
            st.likes["assistant"], seq=seq, line=line, timestamp=h.timestamp, offset=offset, length=length,
            stop_reason=head_stop_reason(m.stop_reason), call_ids=calls,
        )  # fmt: skip
    results = [b for b in blocks if b.type == "tool_result"]
    if not results:
        return _new(st.likes["user"], seq=seq, line=line, timestamp=h.timestamp, offset=offset, length=length)
    first = results[0].tool_use_id
    ids = [b.tool_use_id for b in results if b.tool_use_id]
    if ids != ([first] if first else []):
        st.source.results[seq] = ids
    st.tools.append(seq)
    return _new(st.likes["tool"], seq=seq, line=line, timestamp=h.timestamp, offset=offset, length=length, result_id=first)


def _build(st: _Reading, path: str | None) -> Ledger:
    records, objs, diags = st.records, st.objs, st.diags
    st.source.records = records
    led = Ledger(path=path, format=NAME, session_id=st.session_id, header=None, records=records, diagnostics=diags)
    if not records:
        return led
    _escalate_glued_messages(records=records, diags=diags)
    _report_not_this_format(records=records, objs=objs, diags=diags, looks=st.looks)
    _link_subagents(records, path)
    merged = _merge_replies(records, st.groups)
    st.source.replies = st.groups
    st.source.merged = merged
    st.source.thinking = set(st.thinking)
    st.source.signed = st.signed
    _attach_summaries(records, objs, st.checkpoints)
    _summaries_without_boundary(records, objs, st.summaries)
    if st.uuids != len(st.by_uuid):  # (a uuid repeats: the record-by-record pass says where)
        report_duplicate_ids(led, " (references to it resolve to the last line written with it, as in Claude Code)", word="uuid")
    if not st.invisible:  # every record runtime-visible: the uuid index is `Ledger.by_id`
        led._by_id = st.by_uuid
    _active_path(led, objs, merged, st.checkpoints, st.tools, st.no_id)
    return led


def _read_lines(lines: list[RawLine], *, source: _Source) -> _Reading:
    """One record per JSON object on the lines, in file order; a non-object is a diagnostic."""
    st = _Reading(source)
    for rl in lines:
        _read_line(rl, st)
    return st


def _read_line(rl: RawLine, st: _Reading) -> None:
    """A line's records. Claude Code 2.1.328 reads a line's first JSON value and ignores whatever
    follows it on the line (observed on resume: a second object glued on, a number, a comma, text
    that is not JSON), so that value is a record it reads and the rest are not."""
    if rl.diagnostic is not None:
        st.diags.append(rl.diagnostic)
    values = rl.objects
    if not values and rl.leading is not None:
        values = [rl.leading]
        if rl.diagnostic is not None:
            rl.diagnostic.recovered = "its first JSON value, which Claude Code reads (it ignores the rest of the line)"
    for k, o in enumerate(values):
        if not isinstance(o, dict):
            st.diags.append(
                Diagnostic(rl.line, "not_an_object", f"line {rl.line}: a JSON {type(o).__name__}, not a record object; ignored")
            )
            continue
        _read_object(o, rl=rl, st=st, first=k == 0)


def _read_object(o: dict[str, Any], *, rl: RawLine, st: _Reading, first: bool = True) -> None:
    """Check one line object's fields, map it to its record and index it (`first`: the line's
    first value, the one Claude Code reads)."""
    seq = len(st.records)
    wrong = fields.check_fields(o, fields.CLAUDE_CODE)
    if wrong:
        st.diags.extend(fields.line_diagnostics(rl.line, wrong))
    uuid = o.get("uuid") if isinstance(o.get("uuid"), str) and o.get("uuid") else None
    if st.session_id is None and isinstance(o.get("sessionId"), str):
        st.session_id = o["sessionId"]
    rec = _record_of(o, rl=rl, seq=seq, uuid=uuid, st=st)
    rec._source = st.source
    if rl.runtime_skips and not (first and (rl.objects or rl.leading is not None)):
        # What Claude Code does not read of a line (`_read_line`): what we recovered from it
        # never reaches the model.
        rec.runtime_visible = False
        st.invisible += 1
    if rec.kind == "checkpoint":
        st.checkpoints.append(seq)
    elif rec.kind == "message" and rec.role == "tool":
        st.tools.append(seq)
    if rec.kind == "message" and o.get("isCompactSummary") is True:
        st.summaries.append(seq)
    st.records.append(rec)
    st.objs.append(o)
    if uuid is not None:
        st.by_uuid[uuid] = seq
        st.uuids += 1
    if rl.diagnostic is not None:
        rl.diagnostic.seqs.append(seq)


def _record_of(o: dict[str, Any], *, rl: RawLine, seq: int, uuid: str | None, st: _Reading) -> Record:
    """The record a line's type makes: a message, a compact boundary, a meta or an unknown record."""
    t = o.get("type")
    pid = o.get("parentUuid") if isinstance(o.get("parentUuid"), str) and o.get("parentUuid") else None
    ts = o.get("timestamp")
    if t in ("user", "assistant"):
        return _conversation_record(o, rl=rl, seq=seq, uuid=uuid, pid=pid, st=st)
    if t == "system":
        sub = o.get("subtype")
        if sub == "compact_boundary":
            return _boundary(o, rl, seq, uuid, ts, st.diags)
        note = _local_command_note(o)
        if note is not None:
            return Record(
                seq, rl.line, "message", LOCAL_COMMAND_NOTE, uuid, pid, ts, message=note,
                extra=_extra(o, None), offset=rl.offset, length=rl.length,
            )
        return Record(
            seq, rl.line, "meta", f"system:{sub}" if isinstance(sub, str) else "system", uuid, pid, ts,
            extra=_extra(o, None), offset=rl.offset, length=rl.length,
        )
    if t in _BOOKKEEPING:
        return Record(seq, rl.line, "meta", str(t), uuid, pid, ts, extra=_extra(o, None), offset=rl.offset, length=rl.length)
    # Unknown line type: kept whole and shown, never fatal.
    return Record(
        seq, rl.line, "unknown", t if isinstance(t, str) else py_str(t), uuid, pid, ts,
        extra=_extra(o, None), offset=rl.offset, length=rl.length,
    )


def _conversation_record(
    o: dict[str, Any], *, rl: RawLine, seq: int, uuid: str | None, pid: str | None, st: _Reading
) -> Record:
    """A user or assistant line: a message record, or (no message object) one no request carries."""
    t = o.get("type")
    ts = o.get("timestamp")
    m = o.get("message")
    if not isinstance(m, dict):
        why = f"field 'message' is {'missing' if m is None else 'not an object (' + _show(m) + ')'}"
    else:
        dropped = _dropped_because(t, m)
        why = None if dropped is None else f"its message's content {dropped}, so Claude Code drops the line"
    if why is not None:
        st.diags.append(Diagnostic(rl.line, "invalid_field", f"line {rl.line}: {t} line: {why}; kept as a record no request carries", seqs=[seq]))
        return Record(seq, rl.line, "unknown", str(t), uuid, pid, ts, extra=_extra(o, None), offset=rl.offset, length=rl.length)
    assert isinstance(m, dict)
    rec = Record(
        seq, rl.line, "message", str(t), uuid, pid, ts, message=_message(o, m),
        extra=_extra(o, m), offset=rl.offset, length=rl.length,
    )
    if t == "assistant":
        _join_reply(o, m, seq, st)
        if _holds_only_thinking(m):
            st.thinking.append(seq)
        if _holds_signed_thinking(m):
            st.signed[seq] = m.get("model")
    return rec


# The block types of a reply Claude Code leaves out when it holds nothing else (`dre`, offset 322904840).
THINKING_BLOCKS = frozenset({"thinking", "redacted_thinking"})


def _holds_only_thinking(m: dict[str, Any]) -> bool:
    """Whether a reply line's content, as Claude Code reads it (`Irn`: the blocks that are objects
    with a string type), is thinking blocks and nothing else."""
    c = m.get("content")
    if not isinstance(c, list):
        return False
    kept = [b for b in c if _read_block(b)]
    return bool(kept) and all(b["type"] in THINKING_BLOCKS for b in kept)


def _holds_signed_thinking(m: dict[str, Any]) -> bool:
    """Whether a reply line's content holds a block Claude Code leaves out of a reply of another
    model (`signed_thinking`, of the blocks as it reads them: `Irn`)."""
    c = m.get("content")
    return isinstance(c, list) and any(_read_block(b) and _signed(b) for b in c)


def _signed(b: dict[str, Any]) -> bool:
    """`claude_code_heads.signed_thinking` of a parsed block (`Uqr`)."""
    t = b.get("type")
    return t == "redacted_thinking" or (t == "thinking" and "signature" in b and truthy(b["signature"]))


def _join_reply(o: dict[str, Any], m: dict[str, Any], seq: int, st: _Reading) -> None:
    """Put an assistant line into the reply group it is a block of (by message.id)."""
    _join_group(_group_key(o, m), seq, st)


def _join_group(key: tuple[Any, ...] | None, seq: int, st: _Reading) -> None:
    """`_join_reply` given the line's `_group_key`. A line without a message.id is a reply of its
    own here: which of those Claude Code merges depends on the path (`_merge_undefined_ids`)."""
    if key is None:
        st.no_id.append(seq)
        key = ("line", seq)
    st.groups.setdefault(key, []).append(seq)


def _escalate_glued_messages(*, records: list[Record], diags: list[Diagnostic]) -> None:
    """Glued objects after the first that hold a message or checkpoint: Claude Code ignores them, so it is an error."""
    for d in diags:
        if d.problem == "glued_objects" and any(records[x].kind in ("message", "checkpoint") for x in d.seqs[1:]):
            d.message += "; we recovered them all, but Claude Code reads only the first, so the others never reach the model"
            d.severity = "error"


def _report_not_this_format(
    *, records: list[Record], objs: list[dict[str, Any]], diags: list[Diagnostic], looks: bool = False
) -> None:
    """Forced with --format onto another producer's file: say so instead of looking healthy."""
    if looks or any(looks_like(o) for o in objs):
        return
    diags.append(
        Diagnostic(
            records[0].line,
            "not_this_format",
            f"line {records[0].line}: no line of this file is a Claude Code transcript line "
            f"(the first has type {quote(objs[0].get('type'))}); every line was kept as an unknown record",
            severity="error",
        )
    )


def _link_subagents(records: list[Record], path: str | None) -> None:
    """A Task/Agent tool result names the sub-agent it started (`toolUseResult.agentId`); its
    transcript is `<session>/subagents/agent-<id>.jsonl` next to this file: say where, when it is there."""
    if path is None:
        return
    base = os.path.join(os.path.dirname(path), os.path.basename(path).removesuffix(".jsonl"), "subagents")
    if not os.path.isdir(base):
        return
    for r in records:
        aid = _subagent_id(r) if r.kind == "message" else None
        if isinstance(aid, str) and aid:
            f = os.path.join(base, f"agent-{aid}.jsonl")
            if os.path.isfile(f):
                _add_extra(r, "subagent_transcript", f)


def _subagent_id(r: Record) -> Any:
    """The `toolUseResult.agentId` of a message line (from the index when read from its head)."""
    src = r._source
    if r._extra is UNREAD and isinstance(src, _Source):
        return src.agents.get(r.seq)
    tur = (r.extra or {}).get("toolUseResult")
    return tur.get("agentId") if isinstance(tur, dict) else None


def _boundary(o: dict[str, Any], rl: RawLine, seq: int, uuid: str | None, ts: Any, diags: list[Diagnostic]) -> Record:
    meta = o.get("compactMetadata")
    if not isinstance(meta, dict):
        if meta is not None:
            diags.append(
                Diagnostic(rl.line, "invalid_field", f"line {rl.line}: compact_boundary: field 'compactMetadata' is not an object ({_show(meta)}); read as empty", seqs=[seq])
            )
        meta = {}
    pre = meta.get("preTokens")
    seg = meta.get("preservedSegment")
    head = seg.get("headUuid") if isinstance(seg, dict) and isinstance(seg.get("headUuid"), str) else None
    cp = Checkpoint(
        summary="",
        first_kept_id=head,
        tokens_before=pre if isinstance(pre, int) and not isinstance(pre, bool) else None,
        trigger=_typed(meta, "trigger", str),
        # What this tool's repair records beside Claude Code's own fields (claude_code_writer).
        failure_reason=_typed(meta, "failureReason", str),
        usage=_usage(_named_usage(meta.get("usage"))),
        truncated=_typed(meta, "truncated", bool),
        essential_complete=_typed(meta, "essentialComplete", bool),
        retained_tail_shape=_typed(meta, "retainedTailShape", str),
        budget_tokens=_typed(meta, "retainedTailBudgetTokens", int),
        details=meta or None,
    )
    lp = o.get("logicalParentUuid")
    # The runtime's chain stops here (parentUuid null); the analysis follows the logical parent
    # so what came before has a coverage state.
    parent = lp if isinstance(lp, str) and lp else None
    return Record(
        seq, rl.line, "checkpoint", "system:compact_boundary", uuid, parent, ts, checkpoint=cp,
        extra=_extra(o, None), offset=rl.offset, length=rl.length,
    )


def _typed(meta: dict[str, Any], key: str, kind: type) -> Any:
    """meta[key] when it has that type (a bool is no int here), else None."""
    v = meta.get(key)
    return v if isinstance(v, kind) and (kind is bool or not isinstance(v, bool)) else None


def _named_usage(u: Any) -> dict[str, Any] | None:
    """A usage our writer recorded ({input, output, cacheRead, cacheWrite}) in the API's key names."""
    if not isinstance(u, dict):
        return None
    return dict(zip(_USAGE_KEYS, (u.get("input"), u.get("output"), u.get("cacheRead"), u.get("cacheWrite")), strict=True))


def appended_record(o: dict[str, Any], rl: RawLine, seq: int) -> Record:
    """One line this tool appends (claude_code_writer), read by this module's own mapping."""
    st = _Reading(_Source(None, None))
    uuid = o.get("uuid") if isinstance(o.get("uuid"), str) and o.get("uuid") else None
    rec = _record_of(o, rl=rl, seq=seq, uuid=uuid, st=st)
    rec._source = st.source
    return rec


def _merge_replies(records: list[Record], groups: dict[tuple[Any, ...], list[int]]) -> dict[int, list[int]]:
    """One message per API reply: the blocks of every line sharing `message.id`, in file order,
    on the first line; usage once per `message.id` + `requestId` (each line repeats it).
    Returns first seq -> the seqs of all its lines, for replies written on several lines."""
    merged: dict[int, list[int]] = {}
    for seqs in groups.values():
        if len(seqs) < 2:
            continue
        first = records[seqs[0]]
        merged[first.seq] = seqs
        lines = [records[s] for s in seqs]
        src = first._source
        if isinstance(src, _Source) and all(r._message is None for r in lines):
            _merge_lazily(first, lines, src)
        else:
            first.message = _merged_message([(r.message, (r.extra or {}).get("requestId")) for r in lines])  # type: ignore[misc]
        _add_extra(first, "merged_lines", [r.line for r in lines])
        for r in lines[1:]:
            r._message = None
            r.kind = "meta"
            r.role = None
            r.stop_reason = None
            r.call_ids = ()
            _add_extra(r, "merged_into_line", first.line)
    return merged


def _merge_lazily(first: Record, lines: list[Record], src: _Source) -> None:
    """A reply whose lines were all read from their heads: its index fields now, as
    `_merged_message` gives them; its content when asked for (`_Source.message`)."""
    stop = None
    calls: list[str] = []
    seen: set[str] = set()
    for r in lines:
        if r.stop_reason is not None:
            stop = r.stop_reason
        for c in r.call_ids:
            if c not in seen:
                seen.add(c)
                calls.append(c)
    first.stop_reason = stop
    first.call_ids = tuple(calls)
    src.groups[first.seq] = [r.seq for r in lines]


def _blank_text(b: Block) -> bool:
    return b.type == "text" and bool(b.text) and _js_blank(b.text)


def _without_blank_texts(blocks: list[Block]) -> list[Block]:
    """A merge's blocks as Claude Code 2.1.328 keeps them (`Rzi`, offset 322792083, at each line
    merged): a text of whitespace only goes, unless it sits between two thinking blocks; when
    only thinking would be left, nothing goes."""
    kept = [
        b
        for i, b in enumerate(blocks)
        if not _blank_text(b) or (i and i + 1 < len(blocks) and _thinking_block(blocks[i - 1]) and _thinking_block(blocks[i + 1]))
    ]
    return kept if len(kept) == len(blocks) or not all(map(_thinking_block, kept)) else blocks


def _merged_message(parts: list[tuple[Message, Any]]) -> Message:
    """One reply's message from its lines' (message, requestId), in file order."""
    m = parts[0][0]
    blocks: list[Block] = []
    seen_calls: set[str] = set()
    stop_raw: Any = None
    stop: str | None = None
    usage_by_request: dict[Any, Usage] = {}
    err: str | None = None
    for k, (rm, rid) in enumerate(parts):
        for b in rm.blocks:
            if b.type == "tool_call" and b.call_id is not None:
                if b.call_id in seen_calls:
                    continue  # a line repeating an earlier block: once is what was sent
                seen_calls.add(b.call_id)
            blocks.append(b)
        if k:
            blocks = _sent_order(_without_blank_texts(blocks))  # (the first line's came in so: `_message`)
        if rm.stop_reason is not None:
            stop, stop_raw = rm.stop_reason, rm.stop_reason_raw
        err = rm.error_message or err
        if rm.usage is not None:
            usage_by_request[rid] = rm.usage  # the last line's count is the final one
    total: Usage | None = None
    for u in usage_by_request.values():
        total = u if total is None else total + u
    return Message(
        "assistant",
        blocks,
        stop_reason=stop,
        stop_reason_raw=stop_raw,
        usage=total,
        route=m.route,
        error_message=err,
        source_role="assistant",
    )


def _attach_summaries(records: list[Record], objs: list[dict[str, Any]], checkpoints: list[int] | None = None) -> None:
    """The `isCompactSummary` user line after a boundary holds its summary: it becomes the
    checkpoint's summary, and the line a meta record (the summary item stands for it): the first
    message after each boundary, unless another boundary comes first. `checkpoints`: the
    boundaries' positions in `records`, when known (else every record is looked at)."""
    if checkpoints is None:
        checkpoints = [i for i, r in enumerate(records) if r.kind == "checkpoint"]
    n = len(records)
    for c in checkpoints:
        i = c + 1
        while i < n and records[i].kind not in ("message", "checkpoint"):
            i += 1
        if i < n and records[i].kind == "message":
            _attach_summary(records[c], records[i], objs[i])


def _attach_summary(pending: Record, r: Record, o: dict[str, Any]) -> None:
    if o.get("type") == "user" and o.get("isCompactSummary") is True and r.message is not None:
        cp = pending.checkpoint
        assert cp is not None
        cp.summary = r.message.text()
        r._message = None
        r.kind = "meta"
        r.role = None
        _add_extra(r, "summary_of_line", pending.line)
        _add_extra(pending, "summary_line", r.line)
        _add_extra(pending, "summary_uuid", r.id)


def _summaries_without_boundary(records: list[Record], objs: list[dict[str, Any]], summaries: list[int]) -> None:
    """Claude Code 1.0.x wrote a compaction as its summary line alone: no compact_boundary line
    before it, a `user` line marked `isCompactSummary` whose parentUuid is null, starting a new
    chain after the main thread's earlier lines (a real 1.0.90 transcript: SWORDIntel/
    claude-backups's e1ffaf02-....jsonl, line 134). Claude Code 2.1.328 still takes such a line for
    a compaction where it looks for one (`son`, offset 317278019: `if(XAe(h)||h.isCompactSummary===!0)return`;
    `Yjr`, offset 317099614: a summary line or a boundary), and its chain walk stops there (`lwn`,
    offset 317457289: `if(!H)break`), so it sends the summary and what follows (observed: the real
    CLI resumed that transcript so). The line is the checkpoint: its text the summary, the main
    thread's lines before it what the summary represents (`_walk_chain`). It is no boundary to the
    rules that follow Claude Code's (`w_r` deletes nothing before it), so it is not in `checkpoints`.
    `summaries`: the seqs of the lines marked so; one already a boundary's summary stays that."""
    for s in summaries:
        r = records[s]
        if r.kind == "message" and r.type == "user" and r.parent_id is None and _main_thread(objs[s]) and _follows_main_thread(records, objs, s):
            _summary_as_checkpoint(r)


def _main_thread(o: dict[str, Any]) -> bool:
    return o.get("isSidechain") is not True


def _follows_main_thread(records: list[Record], objs: list[dict[str, Any]], s: int) -> bool:
    """Whether a message or checkpoint of the main thread is written before seq `s`."""
    return any(records[i].kind in ("message", "checkpoint") and _main_thread(objs[i]) for i in range(s - 1, -1, -1))


def _summary_as_checkpoint(r: Record) -> None:
    """A summary line that stands for its compaction (`_summaries_without_boundary`)."""
    m = r.message
    assert m is not None
    r.checkpoint = Checkpoint(summary=m.text())
    r._message = None
    r.kind = "checkpoint"
    r.role = None
    _add_extra(r, "compaction_without_boundary", True)


def _active_path(
    led: Ledger,
    objs: list[dict[str, Any]],
    merged: dict[int, list[int]],
    checkpoints: list[int],
    tools: list[int],
    no_id: list[int],
) -> None:
    """Find the leaf, walk to the root, put the off-chain lines the runtime still sends on the
    path, and link the path's records to each other so the analysis walks exactly it.
    `checkpoints`, `tools`, `no_id`: the seqs of the checkpoints, of the tool lines and of the
    assistant lines without a message.id."""
    records = led.records
    by_id = led.by_id()
    last, main = _newest_chained(records, objs)
    if last is None:
        return
    # The main thread's chained lines (a sub-agent's own file: all), listed when first needed.
    cands = functools.cache(functools.partial(_chained, records, objs, main))
    newest = leaf = by_id.get(last.id or "", last.seq)
    lp_seq = _newest_last_prompt(records, checkpoints[-1] if checkpoints else -1) if main else -1
    if lp_seq >= 0:
        leaf = _last_prompt_leaf(records, by_id, lp_seq, leaf)
    bridged = _boundaries_by_logical_parent(records, objs, checkpoints)
    src = records[0]._source
    if isinstance(src, _Source):
        src.bridged = frozenset(bridged)
        src.chain_leaf, src.newest = (leaf, newest) if main else (None, None)
        src.last_checkpoint = checkpoints[-1] if checkpoints else -1
        src.last_prompt = lp_seq
    chain, seen, cur = _walk_chain(led, objs, leaf, checkpoints, bridged, cands)
    cycle = cur is not None
    if cycle:
        assert cur is not None
        led.diagnostics.append(_cycle_diagnostic(records, chain, cur, cands()))
    elif main and records[chain[-1]].parent_id is not None:
        # The chain ends at a parent Claude Code does not hold, with nothing to fall back to: it
        # stops there too, so nothing written before it reaches the model.
        led.diagnostics.append(_chain_stops(records, by_id, chain[-1], seen, checkpoints))
    chain.reverse()
    if cycle:
        # The parent links give no order past the cycle; a transcript is written in order, so
        # the main thread's lines written before it stand in for the rest of the chain.
        start = chain[0]
        chain = [r.seq for r in cands() if r.seq < start and r.seq not in seen] + chain
    on_chain = set(chain) if no_id else _NONE
    undefined = {x for x in no_id if x in on_chain and _undefined_id(objs[x])}
    path = _with_parallel_results(records, chain, merged, tools, undefined)
    if checkpoints:
        path = _preserved_before_boundaries(records, path, by_id)
    if isinstance(src, _Source):
        _merge_as_requested(records, path, undefined, src)
    # Link the path: each record's parent is the one before it (the line's own parentUuid is
    # kept in `extra` where that differs).
    prev_id: str | None = None
    relinked = src.relinked if isinstance(src, _Source) else set()
    for s in path:
        r = records[s]
        if r.parent_id != prev_id:
            _add_extra(r, "parentUuid", objs[s].get("parentUuid"), keep=True)
            if r.parent_id is not None:
                relinked.add(r.parent_id)
            r.parent_id = prev_id
        prev_id = r.id
    led.leaf_seq = path[-1] if path else None
    thinking = _leave_out_thinking_only(records, objs, path, src, led.diagnostics) if isinstance(src, _Source) else {}
    lines_of = _reply_lines(src) if isinstance(src, _Source) else lambda _: None
    repeated: list[frozenset[str]] = []
    dangling = _leave_out_unanswered(records, path, led.diagnostics, lines_of, frozenset(thinking), repeated)
    if isinstance(src, _Source):
        src.request_model = _request_model(records, objs, path)
        src.foreign = _foreign_lines(src.signed, src.request_model)
        src.thinking_left_out = thinking
        src.dangling, src.tail_calls = dangling
        src.repeated = repeated[0] if repeated else frozenset()
    if cycle or not _linked_by_ids(records, path):
        led.resolved_path = path


def _linked_by_ids(records: list[Record], path: list[int]) -> bool:
    """Whether the path's records, each linked to the one before it by id, are walked back by id
    along the path: each has an id, no two the same. Not so (reused uuids; a line without one,
    which the walk reached by time or the path took in as a line of a reply on it or a result
    answering one), links by id would resolve to the wrong line or to none: the full build hands
    the path over (`Ledger.resolved_path`), and `extend` leaves such a growth to it."""
    ids = [records[s].id for s in path]
    return None not in ids and len(set(ids)) == len(path)


# Claude Code 2.1.328's chain walk (`lwn`, offset 317457379 "tengu_chain_timestamp_fallback"; `ton`,
# offset 317275895): a line whose parentUuid is set but names no line it keeps, or one already on
# the chain, continues from the line written last at most `Ogr` = 5,000 ms before it, on the same
# isSidechain side, not on the chain yet, not a file_snapshot system line (of those written at the
# same millisecond, the first in the file). Only then does the chain stop.
FALLBACK_MS = 5000
_KEPT_TYPES = ("user", "assistant", "attachment")  # (and system lines): what its map of a transcript's lines holds


def _names_a_parent(o: dict[str, Any]) -> bool:
    """Whether Claude Code looks for a line's parent: its parentUuid is set (JavaScript-truthy)."""
    p = o.get("parentUuid")
    return p is not None and p is not msgspec.UNSET and p not in ("", 0, False)


def _js_ms(ts: Any) -> int | None:
    """`new Date(ts).getTime()` of an ISO time (None: NaN)."""
    secs = epoch_seconds(ts) if isinstance(ts, str) else None
    return None if secs is None else int(secs * 1000 // 1)


class _TimeFallback:
    """The parent Claude Code's chain walk falls back to (`FALLBACK_MS`), its candidates indexed by
    side and time when first asked."""

    def __init__(self, records: list[Record], objs: list[dict[str, Any]], checkpoints: list[int], by_id: Mapping[str, int]) -> None:
        self.records, self.objs, self.checkpoints, self.by_id = records, objs, checkpoints, by_id
        self.sides: dict[Any, tuple[list[tuple[int, int]], list[int]]] | None = None
        self.preserved: set[int] | None = None

    def _preserved(self) -> set[int]:
        """The lines before the newest compact boundary that it preserves (`preservedMessages`)."""
        last = self.records[self.checkpoints[-1]]
        details = last.checkpoint.details if last.checkpoint is not None else None
        pm = details.get("preservedMessages") if isinstance(details, dict) else None
        uuids = pm.get("uuids") if isinstance(pm, dict) else None
        found = (self.by_id.get(u) if isinstance(u, str) else None for u in (uuids if isinstance(uuids, list) else ()))
        return {s for s in found if s is not None and s < last.seq}

    def deleted(self, seq: int) -> bool:
        """Whether Claude Code no longer holds line `seq` once it has read the newest compact
        boundary: it deletes every line before it that the boundary does not preserve (`w_r`)."""
        if not self.checkpoints or seq >= self.checkpoints[-1]:
            return False
        if self.preserved is None:
            self.preserved = self._preserved()
        return seq not in self.preserved

    def _kept(self) -> Iterator[Record]:
        """The lines Claude Code's map still holds (`deleted`)."""
        if not self.checkpoints:
            yield from self.records
            return
        if self.preserved is None:
            self.preserved = self._preserved()
        yield from (self.records[s] for s in sorted(self.preserved))
        yield from self.records[self.checkpoints[-1] :]

    def _index(self) -> dict[Any, tuple[list[tuple[int, int]], list[int]]]:
        by_side: dict[Any, list[tuple[int, int, int]]] = {}
        for r in self._kept():
            t, kept = r.type, r.kind != "unknown" and r.runtime_visible
            if not kept or not (t in _KEPT_TYPES or t.startswith("system")) or t == "system:file_snapshot":
                continue
            ms = _js_ms(r.timestamp)
            if ms is not None:
                by_side.setdefault(_side(self.objs[r.seq]), []).append((ms, -r.seq, r.seq))
        out = {}
        for side, entries in by_side.items():
            entries.sort()
            out[side] = ([(ms, neg) for ms, neg, _ in entries], [seq for _, _, seq in entries])
        return out

    def parent(self, child: int, seen: set[int], diags: list[Diagnostic]) -> int | None:
        t = _js_ms(self.records[child].timestamp)
        if t is None:
            return None
        if self.sides is None:
            self.sides = self._index()
        keys, seqs = self.sides.get(_side(self.objs[child]), ([], []))
        i = bisect_right(keys, (t, 1))
        while i > 0 and seqs[i - 1] in seen:
            i -= 1
        if i == 0 or t - keys[i - 1][0] > FALLBACK_MS:
            return None
        found, r = seqs[i - 1], self.records[child]
        diags.append(
            Diagnostic(
                r.line,
                "dangling_parent",
                f"line {r.line}: parentUuid {quote(self.objs[child].get('parentUuid'))} names no line Claude Code holds; "
                f"Claude Code continues from line {self.records[found].line}, the line written last at most "
                f"{FALLBACK_MS // 1000} s before it",
                seqs=[r.seq],
            )
        )
        return found


def _side(o: dict[str, Any]) -> Any:
    """A line's isSidechain as Claude Code groups lines by it (`Map.groupBy`: equal scalars of one
    type together, an object or array a group of its own; absent and null alike here)."""
    v = o.get("isSidechain")
    if v is None or v is msgspec.UNSET:
        return None
    return (type(v).__name__, v) if isinstance(v, bool | int | float | str) else ("object", id(o))


def _leave_out_thinking_only(
    records: list[Record], objs: list[dict[str, Any]], path: list[int], src: _Source, diags: list[Diagnostic]
) -> dict[int, str | None]:
    """Claude Code 2.1.328 removes from the conversation it resumes, and from every request, each
    assistant line whose content is thinking blocks only (`THINKING_BLOCKS`) unless a line of the
    same message.id holds another block (`xXo`, offset 322908522, with `wqi`; at load, `v4`, before
    the line rule and the pairing). So a reply all of whose lines are such is never sent, and the
    rules after it see the conversation without it (observed on resume: order probes "thinking-only
    reply, then text typed" and "... between a call and its result": the reply is not sent and the
    result answers the call; "unanswered call, then thinking-only reply, session ends": the call
    is answered on resume as the conversation's last). Returns those replies' seqs, with their message.ids."""
    thinking = src.thinking
    if not thinking:
        return {}
    merged = src.merged
    candidates = [x for x in thinking if records[x].kind == "message" and all(y in thinking for y in merged.get(x, ()))]
    if not candidates:
        return {}
    on = set(path)
    candidates = [x for x in sorted(candidates) if x in on and not records[x].never_sent]
    if not candidates:
        return {}
    # (`wqi`: the message.ids of the other replies sent, one of which keeps a line of its id)
    others = set(candidates)
    ids = {_message_id(objs[x]) for x in path if x not in others and records[x].role == "assistant" and not records[x].never_sent}
    ids.discard(None)
    out: dict[int, str | None] = {}
    for s in candidates:
        r = records[s]
        mid = _message_id(objs[s])
        if mid not in ids:
            r.never_sent = True
            out[s] = mid
            diags.append(
                Diagnostic(
                    r.line,
                    "skipped_by_runtime",
                    f"line {r.line}: this reply holds thinking blocks only: Claude Code leaves it out of the conversation it "
                    "resumes and of what it sends; kept here, never sent",
                    seqs=[s],
                )
            )
    return out


# Claude Code 2.1.328 builds each request (`eio`, offset 320159186) from the conversation less, in
# every reply whose message.model is not a string, or is neither "<synthetic>" nor the request's
# model (`Aze`, offset 322909716; nor a name it canonicalizes alike, or one the running process
# was served for it: neither is read here, the names are compared as written), each signed thinking
# block and each redacted_thinking (`yio` / `vqi` / `Uqr`). The request's model on resume is the
# user's, which the transcript does not record: we take the newest real reply's on the path, the
# model a user resuming with the one they last used has. Observed with the real CLI (tests/
# test_claude_code_thinking.py, docs/runtimes/claude_code.md): a reply given another model is sent
# without its signed thinking.
SYNTHETIC_MODEL = "<synthetic>"


def _request_model(records: list[Record], objs: list[dict[str, Any]], path: list[int], first: int = 0) -> str | None:
    """The model we take the session to resume with: the newest reply's on the path whose
    message.model is a string other than "<synthetic>" (None: no such reply). `objs`: the lines'
    objects from seq `first` on."""
    for s in reversed(path):
        if records[s].role == "assistant":
            model = _model(objs[s - first])
            if type(model) is str and model != SYNTHETIC_MODEL:
                return model
    return None


def _model(o: dict[str, Any]) -> Any:
    """A line's message.model as written (None: no message object, or no model)."""
    m = o.get("message")
    return m.get("model") if isinstance(m, dict) else None


def _foreign(model: Any, request: str | None) -> bool:
    """Whether Claude Code leaves out the signed thinking of a line of `model` from a request of
    `request` (`Aze`)."""
    return type(model) is not str or (model != SYNTHETIC_MODEL and model != request)


def _foreign_lines(signed: dict[int, Any], request: str | None) -> set[int]:
    """The lines of `signed` (`_Source.signed`) whose signed thinking a request of `request` leaves out."""
    return {s for s, model in signed.items() if _foreign(model, request)} if signed else set()


def _sent_content(m: dict[str, Any]) -> dict[str, Any]:
    """A reply line's message of another model as Claude Code sends it: without its signed thinking."""
    c = m.get("content")
    if not isinstance(c, list):
        return m
    return {**m, "content": [b for b in c if not (isinstance(b, dict) and _signed(b))]}


def reply_trimmed(rec: Record) -> tuple[str, str | None] | None:
    """`Runtime.reply_trimmed`: why Claude Code leaves out signed thinking of this reply, from the
    index (a line of it of another model than the one we take the session to resume with), and
    "(no content)" where that leaves it with no block (`Eqi` runs after: `reply_sent_as`). Only a
    reply all of whose lines hold thinking only (kept because another reply shares its message.id:
    `_leave_out_thinking_only`) may be left so: it alone is read."""
    src = rec._source
    if not isinstance(src, _Source) or not src.foreign:
        return None
    foreign = src.foreign
    seqs = src.merged.get(rec.seq) or (rec.seq,)
    model = next((src.signed[s] for s in seqs if s in foreign), _NO_LINE)
    if model is _NO_LINE:
        return None
    request = src.request_model
    wrote = repr(model) if type(model) is str else "no model name"
    why = f"Claude Code leaves out this reply's signed thinking: the reply names {wrote}, not the model of the request, " + (
        f"which we take to be {request!r}, the newest reply's (the user's model on resume is not in the file)"
        if request is not None
        else "which the file does not name"
    )
    if all(s in src.thinking for s in seqs) and not src.sent_message(rec).blocks:  # type: ignore[union-attr]
        return f"{why}; left with no block, it is sent as {NO_CONTENT!r}", NO_CONTENT
    return why, None


_NO_LINE = object()


def _message_id(o: dict[str, Any]) -> str | None:
    """A line's message.id as Claude Code keys a reply by it (`wqi`: a non-empty one)."""
    m = o.get("message")
    mid = m.get("id") if isinstance(m, dict) else None
    return mid if isinstance(mid, str) and mid else None


def _leave_out_unanswered(
    records: list[Record],
    path: list[int],
    diags: list[Diagnostic],
    lines_of: Callable[[int], list[tuple[tuple[str, ...], bool]] | None],
    thinking: frozenset[int] = frozenset(),
    repeated: list[frozenset[str]] | None = None,
) -> tuple[frozenset[str], tuple[frozenset[str], ...]]:
    """Claude Code 2.1.328 leaves out of what it sends each assistant line all of whose tool calls
    go without a result when the conversation goes on after it (`lre`, offset 322803002, on
    resume; observed with the real CLI: a reply `[text, call]` on one line followed by a user line
    is not sent at all, its text neither; a reply's parallel calls, written a line each, lose the
    lines of the calls not answered, no result made up for them, and a line of its text is sent;
    a line some of whose calls are answered is sent, the others given "[Tool result missing due to
    internal error]"; the calls of the replies the conversation ends on get its "[Tool call
    interrupted ...]" results instead). A reply left with no line, or with lines of thinking only
    (which Claude Code then leaves out too: `_leave_out_thinking_only`; observed: order probe
    "thinking line, then its call line, unanswered, text"), after the path's newest checkpoint, is
    marked never sent; one left with some loses the calls of the others (`lines_of`: the calls of
    each line of a reply written on several, and whether it holds thinking only); each with a
    diagnostic. The replies of thinking only (`thinking`) are not in the conversation these rules
    see. Returns the calls on the path no line answers, and the calls of each reply the path ends
    on (`extend` keeps both); `repeated` gets those of them more than one reply makes."""
    answered = {c for s in path if (r := records[s]).kind == "message" and r.role == "tool" for c in _result_ids(r)}
    calls = [s for s in path if records[s].call_ids]
    dangling = frozenset(c for s in calls for c in records[s].call_ids if c not in answered)
    if not dangling:
        return dangling, ()
    if repeated is not None:
        repeated.append(_repeated_calls(records, calls, dangling))
    start = _sent_from(records, path)
    tail = len(path)  # the replies the conversation ends on: its last lines, replies' lines making calls all
    while tail > start + 1:
        last = path[tail - 1]
        if records[last].kind == "message" and last not in thinking and records[last].type != LOCAL_COMMAND_NOTE:
            if not _makes_calls(records[last]):
                break
            if not all(calls for calls, _ in lines_of(last) or ()):
                tail -= 1
                break  # (a line of that reply makes no call: the lines before it end no more)
        tail -= 1
    ending = tuple(frozenset(records[s].call_ids) for s in path[tail:] if records[s].call_ids)
    after = set(path[start + 1 : tail])
    open_turn = _open_turn(records, path, thinking)
    for s in calls:
        r = records[s]
        if s not in after or r.role != "assistant" or r.never_sent or all(c in answered for c in r.call_ids):
            continue
        lines = lines_of(s)
        calls_of = [calls for calls, _ in lines] if lines is not None else [r.call_ids]
        gone = [*dict.fromkeys(c for line in calls_of for c in line if not any(x in answered for x in line))]
        if not gone:
            continue  # (a line holding an answered call keeps its others: results made up for them)
        kept = [] if lines is None else [only for calls, only in lines if not calls or any(x in answered for x in calls)]
        whole = not kept
        if not whole and s in open_turn:
            continue  # (the turn the session stopped in: Claude Code answers such calls on resume instead)
        whole = whole or all(kept)  # (the lines left hold thinking only: left out too)
        if whole:
            r.never_sent = True
        else:
            r.call_ids = tuple(c for c in r.call_ids if c not in gone)
        diags.append(_left_out_diagnostic(r, gone, whole))
    return dangling, ending


def _makes_calls(r: Record) -> bool:
    """A reply making calls. The replies a conversation ends on are those after its last message
    of any other kind: a reply without calls (an API error's, any other) ends their turn, so the
    lines of the calls before it none of which is answered are left out on resume, no "[Tool call
    interrupted ...]" result made up for them (observed with the real CLI: order probes "an API
    error after an unanswered call, session ends", "a reply after ...", "an API error between two
    unanswered calls, ...": the first call's line left out, the second answered on resume). The
    rule is Claude Code's, line by line: a line of a reply written on several that makes no call
    ends the turn of the calls before it too (order probe "a call, then a reply's text and call
    lines, session ends": the first call's line left out, the reply's call answered on resume)."""
    return r.role == "assistant" and bool(r.call_ids)


def _open_turn(records: list[Record], path: list[int], thinking: frozenset[int] = frozenset()) -> set[int]:
    """The messages of the turn the session stopped in, when it stopped before the turn was done
    (its last message not a reply without calls): after its prompt (a user's message; a line of
    tool results is none). Claude Code answers the calls of such a turn that no line answers with
    its "[Tool call interrupted ...]" results on resume (observed: order probe "parallel calls on
    their own lines, one answered, session ends"), so none of its lines is left out for them."""
    out: set[int] = set()
    for s in reversed(path):
        r = records[s]
        if r.kind != "message" or s in thinking or r.type == LOCAL_COMMAND_NOTE:
            continue  # (a local command's system line: Claude Code's rules pass over system lines)
        if not out and r.role == "assistant" and not r.call_ids:
            return out  # (the turn is done)
        if r.role == "user":
            break
        out.add(s)
    return out


def _left_out_diagnostic(r: Record, gone: list[str], whole: bool) -> Diagnostic:
    many = len(gone) > 1
    ids = ", ".join(quote(c) for c in gone)
    what = (
        "Claude Code leaves the whole reply out of what it sends; kept here, never sent" if whole
        else f"Claude Code leaves the line{'s' if many else ''} making {'them' if many else 'it'} out of what it sends (no result "
        "is made up for it), and sends the reply's other lines"
    )
    return Diagnostic(
        r.line,
        "skipped_by_runtime",
        f"line {r.line}: the tool call{'s' if many else ''} {ids} of this reply never get{'' if many else 's'} a result, and the "
        f"conversation goes on after it: {what}",
        seqs=[r.seq],
    )


def _reply_lines(src: _Source) -> Callable[[int], list[tuple[tuple[str, ...], bool]] | None]:
    """The calls of each line of a reply written on several (`_Source.merged`), read from its
    lines (a few replies: those with a call left unanswered), and whether the line holds thinking
    blocks only; None for a reply on one line."""

    def lines_of(seq: int) -> list[tuple[tuple[str, ...], bool]] | None:
        seqs = src.merged.get(seq)
        if not seqs:
            return None
        return [(tuple(src._own_message(src.records[x])[0].tool_call_ids()), x in src.thinking) for x in seqs]

    return lines_of


def _sent_from(records: list[Record], path: list[int]) -> int:
    """The place in `path` after which every message is sent: the newest checkpoint's, or, when it
    keeps messages verbatim (a boundary's preserved segment: on the path just before it,
    `_preserved_before_boundaries`), the place before the first of them, which Claude Code sends
    right after the summary. -1: no checkpoint."""
    start = next((i for i in range(len(path) - 1, -1, -1) if records[path[i]].kind == "checkpoint"), -1)
    cp = records[path[start]].checkpoint if start >= 0 else None
    first = cp.first_kept_id if cp is not None else None
    if first is not None:
        i = start - 1
        while i >= 0 and records[path[i]].id != first:
            i -= 1
        if i >= 0:
            return i - 1
    return start


def _repeated_calls(records: list[Record], replies: list[int], dangling: frozenset[str]) -> frozenset[str]:
    """The unanswered call ids more than one of `replies` makes (a result for one answers every
    reply making it: `lre` keys calls by id)."""
    seen: set[str] = set()
    out: set[str] = set()
    for s in replies:
        for c in records[s].call_ids:
            if c in dangling:
                (out if c in seen else seen).add(c)
    return frozenset(out)


def _keeps_unanswered_as_they_were(src: _Source, records: list[Record], segment: list[int]) -> bool:
    """Whether the lines `segment` adds to the path leave every reply's fate under
    `_leave_out_unanswered` as it was: no late result for a reply left out, no reply the path
    ended on left without any result once a message follows it, nor once a reply without calls
    ends it, no new reply left out. Updates
    `src`'s dangling calls when so."""
    results = {c for s in segment if (r := records[s]).kind == "message" and r.role == "tool" for c in _result_ids(r)}
    ending = frozenset().union(*src.tail_calls)
    if results & ((src.dangling - ending) | src.repeated):
        return False  # (a late result for a reply left out: also one whose id a reply the path ends on repeats)
    if any(c in src.dangling for s in segment for c in records[s].call_ids):
        return False  # (a new call repeating an unanswered one's id)
    msgs = [s for s in segment if records[s].kind == "message"]
    k = len(msgs)
    while k and records[msgs[k - 1]].role == "assistant":
        k -= 1
    replies = [*src.tail_calls, *(frozenset(records[s].call_ids) for s in msgs[:k] if records[s].call_ids)] if k else []
    if any(not results & calls for calls in replies):
        return False  # (a reply none of whose calls is answered, the conversation going on after it)
    tail = tuple(frozenset(records[s].call_ids) for s in msgs[k:] if records[s].call_ids)
    calls_before = not k and bool(src.tail_calls)
    for s in msgs[k:]:
        if records[s].call_ids:
            calls_before = True
        elif calls_before:
            return False  # (a reply without calls after calls ends their turn: their lines left out, `_makes_calls`)
    src.dangling = (src.dangling - results) | frozenset().union(*tail)
    src.tail_calls = tail if k else (*src.tail_calls, *tail)
    return True


def _left_out_lines_change(
    led: Ledger, src: _Source, records: list[Record], leaf: int, segment: list[int], merged: dict[int, list[int]]
) -> bool:
    """Whether the lines `segment` adds change which lines `_leave_out_unanswered` leaves out
    (`extend` reads the file in full then; `src`'s unanswered calls are updated when not)."""
    if not _keeps_unanswered_as_they_were(src, records, segment) or _lines_left_out_later(led, records, leaf, segment, src.merged, merged):
        return True
    return bool(src.dangling) and _reopens_turn(led, records, leaf, segment)


def _reopens_turn(led: Ledger, records: list[Record], leaf: int, segment: list[int]) -> bool:
    """Whether the lines `segment` adds go on with the turn the old path ended, no prompt between
    (its last message a reply without calls: `_open_turn` held nothing; once more messages follow
    the turn is open again, back to its prompt, and the lines `_leave_out_unanswered` left out of
    it are answered on resume instead; `python -m tests.fuzz_live`, seed 850 case 242)."""
    msgs = [records[s] for s in segment if records[s].kind == "message"]
    if any(r.role == "user" for r in msgs):
        return False
    src = records[0]._source
    thinking = src.thinking_left_out if isinstance(src, _Source) else {}
    old, by_id = led.records, led.by_id()
    cur: int | None = leaf
    steps = 0
    while cur is not None and steps <= len(old):  # (back to the old path's last message; links round: once)
        r, steps = old[cur], steps + 1
        if r.kind == "message" and cur not in thinking:
            # (no message added: that reply's own next line, which may bring it calls)
            return r.role == "assistant" and not r.call_ids and (bool(msgs) or bool(records[cur].call_ids))
        cur = by_id.get(r.parent_id) if r.parent_id is not None else None
    return False


def _lines_left_out_later(
    led: Ledger, records: list[Record], leaf: int, segment: list[int], merged: dict[int, list[int]], new_merged: dict[int, list[int]]
) -> bool:
    """Whether the lines `segment` adds to the path make Claude Code leave out a line of a reply the
    old path holds or `segment` brings (`_leave_out_unanswered`: a reply on several lines with a
    call no line answers, once its turn is over): the segment opens a new turn (a user's prompt),
    or ends the path on a reply without calls (the turn done), and a reply of the turn before it,
    written on several lines (`merged`, the source's; `new_merged`, the append's), has such a call."""
    msgs = [records[s] for s in segment if records[s].kind == "message"]
    if not msgs or not (any(r.role == "user" for r in msgs) or (msgs[-1].role == "assistant" and not msgs[-1].call_ids)):
        return False
    by_id = led.by_id()
    several = lambda s: s in merged or s in new_merged  # noqa: E731
    replies = [s for s in segment if records[s].kind == "message" and records[s].role == "assistant" and several(s)]
    answered = {c for r in msgs if r.role == "tool" for c in _result_ids(r)}
    cur: int | None = leaf
    steps = 0
    while cur is not None and steps <= len(records):  # (the old path's last turn, back to its prompt; links round: once)
        r, steps = records[cur], steps + 1
        if r.kind == "message" and r.role == "user":
            break
        if r.kind == "message" and r.role == "tool":
            answered.update(_result_ids(r))
        elif r.kind == "message" and r.role == "assistant" and several(cur):
            replies.append(cur)
        cur = by_id.get(r.parent_id) if r.parent_id is not None else None
    return any(not answered.issuperset(records[s].call_ids) for s in replies)


def _walk_chain(
    led: Ledger,
    objs: list[dict[str, Any]],
    leaf: int,
    checkpoints: list[int],
    bridged: dict[str, list[int]],
    cands: Callable[[], list[Record]],
) -> tuple[list[int], set[int], int | None]:
    """Claude Code's walk from `leaf` up the parent links (`lwn`): the chain (leaf first), the
    seqs on it, and the seq it came back to when the links loop (None: it ended)."""
    records, by_id = led.records, led.by_id()
    chain: list[int] = []
    seen: set[int] = set()
    fallback = _TimeFallback(records, objs, checkpoints, by_id)
    cur: int | None = leaf
    crossed = False  # the chain went through the newest boundary (before it, Claude Code holds only what it preserves)
    while cur is not None and cur not in seen:
        seen.add(cur)
        chain.append(cur)
        crossed = crossed or (bool(checkpoints) and cur == checkpoints[-1])
        pid = records[cur].parent_id
        nxt = by_id.get(pid) if pid is not None else None
        if pid in bridged:  # (a boundary's logical parent: the walk crosses the boundary there)
            nxt = _across_boundary(cands, bridged[pid], cur, nxt)
        elif nxt is not None and not crossed and fallback.deleted(nxt):
            nxt = None  # (deleted as Claude Code read the boundary: the walk falls back)
        if nxt is not None and not _held(records[nxt]):
            nxt = None  # (a line Claude Code never holds: the walk falls back)
        if nxt is None:
            # A boundary's summary line whose parent names nothing: Claude Code sends it all the
            # same, the lines it preserves after it (relinked there before the walk), so the walk
            # goes on to the boundary the summary belongs to; else it falls back by time.
            nxt = _boundary_of_summary(records, cur)
        if nxt is None and pid is not None and pid not in by_id and records[cur].kind == "checkpoint":
            nxt = _compacted_up_to(records, cands(), cur, seen, led.diagnostics)
        elif nxt is None and pid is None and _summary_without_boundary(records[cur]):
            nxt = _newest_main_line_before(cands(), cur, seen)  # (what it summarized: Claude Code's chain stops here)
        if nxt is None and _names_a_parent(objs[cur]):
            nxt = fallback.parent(cur, seen, led.diagnostics)
        cur = nxt
    return chain, seen, cur


LOGICAL_PARENT_ASSUMED = "logical_parent_assumed"
_seq_of = attrgetter("seq")


def _compacted_up_to(records: list[Record], cands: list[Record], boundary: int, seen: set[int], diags: list[Diagnostic]) -> int | None:
    """The line a compact boundary whose logicalParentUuid names no line of the file follows: the
    main thread's newest line written before it (not on the chain yet). Claude Code's own chain
    stops at every boundary (its parentUuid is null), so what it sends is the same either way; the
    logical parent only says what the compaction summarized. Real transcripts have such a boundary
    (marot/spotter 4d5611e5...: written 87 s after the line before it, the summarizer's call, naming
    a uuid no line holds); read as a dangling parent, its 132 messages were a hole and the compaction
    one that summarized nothing."""
    before = _newest_main_line_before(cands, boundary, seen)
    if before is None:
        return None
    b = records[boundary]
    diags.append(
        Diagnostic(
            b.line,
            LOGICAL_PARENT_ASSUMED,
            f"line {b.line}: the compact boundary's logicalParentUuid {quote(b.parent_id)} names no line of this file; "
            f"what it summarized is taken to end at line {records[before].line}, the main thread's last line before it "
            "(Claude Code's own chain stops at a boundary whatever it names: what it sends is the same)",
            severity="info",
            seqs=[boundary],
        )
    )
    return before


def _newest_main_line_before(cands: list[Record], checkpoint: int, seen: set[int]) -> int | None:
    """The seq of the main thread's newest line written before `checkpoint` that Claude Code holds
    and the chain has not been through (`cands`: the main thread's chained lines, in file order)."""
    i = bisect_left(cands, checkpoint, key=_seq_of)  # (the lines before it: a damaged file may hold many checkpoints)
    return next((cands[j].seq for j in range(i - 1, -1, -1) if cands[j].seq not in seen and _held(cands[j])), None)


def _summary_without_boundary(r: Record) -> bool:
    """Whether a checkpoint is a summary line standing for its compaction (`_summaries_without_boundary`)."""
    return r.kind == "checkpoint" and r.type == "user"


def _boundary_of_summary(records: list[Record], s: int) -> int | None:
    """The boundary whose summary line `s` holds (`_attach_summaries`), None when it holds none."""
    line = (records[s].extra or {}).get("summary_of_line") if records[s].kind == "meta" else None
    return next((i for i in range(s - 1, -1, -1) if records[i].line == line), None) if isinstance(line, int) else None


# A chain that stops at a parent Claude Code does not hold, with no message before it (`_chain_stops`).
CHAIN_FROM_ELSEWHERE = "chain_from_elsewhere"


def _chain_stops(records: list[Record], by_id: Mapping[str, int], end: int, seen: set[int], checkpoints: list[int]) -> Diagnostic:
    """The error of a chain that stops at line `end`, whose parent Claude Code does not hold."""
    r = records[end]
    before = sum(1 for x in records[: r.seq] if x.kind == "message" and x.seq not in seen)
    skipped = next((x for x in records if x.id == r.parent_id and not x.runtime_visible), None)
    named = by_id.get(r.parent_id) if r.parent_id is not None else None
    if skipped is not None:
        where = f"names the record of line {skipped.line} that Claude Code does not read (it reads a line's first JSON value only)"
    elif named is not None and not _held(records[named]):
        where = f"names line {records[named].line}, whose type Claude Code does not know (it never holds such a line)"
    elif named is not None and checkpoints:
        where = (
            f"names line {records[named].line}, which Claude Code no longer holds once it has read the compaction "
            f"at line {records[checkpoints[-1]].line} (it keeps only what that compaction preserves)"
        )
    else:
        where = "names no line of this file"
    where += f", and no line it holds was written in the {FALLBACK_MS // 1000} s before it to continue from"
    if named is None and skipped is None and r.line == r.seq + 1 and all(x.kind == "meta" for x in records[: r.seq]):
        # Nothing but bookkeeping is written before it: the conversation begins here as far as
        # this file goes (a session continued from another transcript names that one's last line),
        # and nothing is left out (observed: real Claude Code 1.0.90 transcripts begin so; the
        # real CLI sends them from that line on, as predicted). A line before it that is not read
        # (damaged, skipped, of a type Claude Code does not know) keeps the error.
        return Diagnostic(
            r.line,
            CHAIN_FROM_ELSEWHERE,
            f"line {r.line}: parentUuid {quote(r.parent_id)} {where}; the chain Claude Code sends starts here, "
            "and no message of this file is written before it, so none is left out",
            severity="info",
            seqs=[r.seq],
        )
    return Diagnostic(
        r.line,
        "dangling_parent",
        f"line {r.line}: parentUuid {quote(r.parent_id)} {where}; the chain Claude Code "
        f"sends stops here, so the {before:,} messages written before it are not sent",
        severity="error",
        seqs=[r.seq],
    )


def _held(r: Record) -> bool:
    """Whether Claude Code's map of a transcript's lines holds this line, or walks through it (a
    line it drops is linked past; `Brn`): a line of a type it does not know it never holds."""
    return r.kind != "unknown" or r.type in ("user", "assistant")


def _newest_last_prompt(records: list[Record], after: int, known: int = -1) -> int:
    """The seq of the newest `last-prompt` line after seq `after` (`known` when there is none)."""
    for i in range(len(records) - 1, after, -1):
        r = records[i]
        if r.kind == "meta" and r.type == "last-prompt":
            return i
    return known


def _last_prompt_leaf(records: list[Record], by_id: Mapping[str, int], lp_seq: int, leaf: int) -> int:
    """Where Claude Code 2.1.328 resumes when the newest line does not descend from the line the
    newest `last-prompt` line names (its leafUuid, after the newest compact boundary): from that
    line, when no user or assistant line hangs off it (`zan`'s leaf choice, offset 317544987: with
    several chains ending in such lines, the checkpoint's leaf unless the newest line descends from
    it, `rin`). Observed on resume: a line appended whose parentUuid is null, missing or not a
    string, or under a line the CLI does not read, is not resumed from; the checkpoint's leaf is.
    `lp_seq`: that last-prompt line (`_newest_last_prompt`; -1: none)."""
    o = records[lp_seq].raw() if lp_seq >= 0 else None
    named = o.get("leafUuid") if isinstance(o, dict) else None
    target = by_id.get(named) if isinstance(named, str) and named else None
    if target is None or target == leaf or records[target].kind == "unknown":
        return leaf
    seen: set[int] = set()
    cur: int | None = leaf
    while cur is not None and cur not in seen:  # (the newest line descends from it: resumed from there)
        if cur == target:
            return leaf
        seen.add(cur)
        pid = records[cur].parent_id
        cur = by_id.get(pid) if pid is not None else None
        cur = cur if cur is not None and _held(records[cur]) else None
    if any(r.parent_id == named and r.kind == "message" and r.runtime_visible for r in records):
        return leaf  # (a line goes on from it: it ends no chain)
    t = records[target]
    if t.kind == "message" and t.role == "tool" and by_id.get(t.parent_id or "") in seen:
        # (a result of parallel calls, hanging off its call's line on the newest line's chain: the
        # chain goes on through the reply's next call line; observed on resume, differential seed
        # 914 scenario 8: the CLI resumes from the newest line)
        return leaf
    return target


def _newest_chained(records: list[Record], objs: list[dict[str, Any]]) -> tuple[Record | None, bool]:
    """The newest line of the main thread's chain (True), else of any chain (False: a sub-agent's
    own file is all sidechain, its newest line its leaf); (None, False) when no line chains."""
    any_chained: Record | None = None
    for i in range(len(records) - 1, -1, -1):
        r = records[i]
        o = objs[i]
        if r.id is not None and r.runtime_visible and o.get("type") in _CHAINED:
            if o.get("isSidechain") is not True:
                return r, True
            if any_chained is None:
                any_chained = r
    return any_chained, False


def _chained(records: list[Record], objs: list[dict[str, Any]], main: bool) -> list[Record]:
    """The lines that chain (`main`: of the main thread only), in file order."""
    return [
        r
        for r, o in zip(records, objs, strict=True)
        if r.id is not None and r.runtime_visible and o.get("type") in _CHAINED and (not main or o.get("isSidechain") is not True)
    ]


def _boundaries_by_logical_parent(records: list[Record], objs: list[dict[str, Any]], checkpoints: list[int]) -> dict[str, list[int]]:
    """logicalParentUuid -> the seqs of the compact boundaries (`checkpoints`) that name it, in file order."""
    out: dict[str, list[int]] = {}
    for s in checkpoints:
        lp = objs[s].get("logicalParentUuid")
        if records[s].kind == "checkpoint" and isinstance(lp, str):
            out.setdefault(lp, []).append(s)
    return out


def _across_boundary(cands: Callable[[], list[Record]], boundaries: list[int] | None, child: int, parent: int | None) -> int | None:
    """The parent the runtime walks to from `child`. With a SessionStart hook configured, Claude
    Code 2.1.328 writes the hook's attachments before the boundary and hangs the first line after
    the summary (the /compact caveat) off the last of them, the line the boundary names as its
    logicalParentUuid: the parentUuid then skips the boundary and its summary, yet the runtime sends
    the summary (tests/peers/claude_code_hook/). Such a link crosses the boundary: it continues from
    the newest main-thread line written between the boundary and the child (the summary)."""
    if not boundaries or parent is None:
        return parent
    crossed = [b for b in boundaries if parent < b < child]
    if not crossed:
        return parent
    b = crossed[-1]
    between = [r.seq for r in cands() if b <= r.seq < child]
    return between[-1] if between else parent


def _cycle_diagnostic(records: list[Record], chain: list[int], back: int, cands: list[Record]) -> Diagnostic:
    """The lines whose parentUuid values loop, and, when the loop goes through a reused uuid, how
    many lines share it."""
    loop = chain[chain.index(back) :] if back in chain else chain[-1:]
    lines = sorted(records[s].line for s in loop)
    r = records[chain[-1]]
    named = ", ".join(str(x) for x in lines[:8]) + (f" and {len(lines) - 8} more" if len(lines) > 8 else "")
    shared = [x.line for x in records if x.id is not None and x.id == r.parent_id]
    why = ""
    if len(shared) > 1:
        why = (
            f"; {len(shared)} lines ({shared[0]}–{shared[-1]}) share the uuid {quote(r.parent_id)} and a reference to it "
            f"resolves to the last one written (line {shared[-1]})"
        )
    earlier = sum(1 for x in cands if x.seq < min(loop) and x.kind == "message")
    rest = f"the {earlier:,} earlier main-thread messages are read in file order instead" if earlier else "nothing was written before it"
    return Diagnostic(
        lines[0],  # the first line the message names
        "parent_cycle",
        f"line {r.line}: parentUuid leads back into its own ancestry (a cycle through line{'s' if len(lines) > 1 else ''} "
        f"{named}){why}; "
        f"the parent links cannot be walked past it, so {rest}",
        severity="error",
        seqs=sorted(loop),
    )


def _with_parallel_results(
    records: list[Record], chain: list[int], merged: dict[int, list[int]], tools: list[int], undefined: set[int]
) -> list[int]:
    """The chain plus every line of each reply on it and every result answering that reply,
    each placed after the newest line of the same reply/results before it in file order.
    `tools`: the seqs of the tool lines; `undefined`: the replies without a message.id, which get
    neither (`O_r`, offset 317461900, recovers lines by message.id and skips a reply without one:
    observed, a real session with its ids taken out resumed by the real CLI)."""
    results = _results_by_call([records[s] for s in tools])
    src = records[0]._source if records else None
    if isinstance(src, _Source):
        src.answered = set(results)  # (what `extend` checks a new call against)
    return _placed_families(records, chain, merged, results, undefined)


def _undefined_id(o: dict[str, Any]) -> bool:
    """Whether Claude Code 2.1.328 reads this line as a reply whose message.id is missing: it has
    none but has a requestId key (a line with neither gets a fresh id of its own when the
    transcript is loaded: `iKn`, offset 319235030, "stamped a message.id on ... id-less assistant
    entries"; a reply of its own, as we read it)."""
    if o.get("type") != "assistant" or "requestId" not in o:
        return False
    m = o.get("message")
    return isinstance(m, dict) and not m.get("id")


def _merge_as_requested(records: list[Record], path: list[int], undefined: set[int], src: _Source) -> None:
    """The path's replies merged as Claude Code 2.1.328's request builder merges them (`yo`,
    offset 322784184): the groups by message.id regrouped where the path says otherwise
    (`_split_repeated_ids`), then the replies without one merged (`_merge_undefined_ids`). Either
    makes what merges depend on the path (`src.merges_by_path`: a follow then reads in full)."""
    split = bool(src.merged) and _split_repeated_ids(records, path, src)
    if undefined:
        _merge_undefined_ids(records, path, undefined, src)
    src.merges_by_path = split or bool(undefined)


def _merge_undefined_ids(records: list[Record], path: list[int], undefined: set[int], src: _Source) -> None:
    """Claude Code 2.1.328 builds a request by merging each reply into the message of the latest
    one of the same message.id since the last user message holding no tool result (its request
    builder, offset 322784184: `yo`, a Map by message.id, cleared at such a message, after
    consecutive user lines are joined; `Rzi` merges), and a missing message.id (`undefined`:
    `_undefined_id`) is one such id: along the path, each reply without one joins the latest
    before it, across tool results (observed: order probes "no-id: ...", the answer after a
    call's result merged into the call's reply). The lines no request carries are passed: a line
    of thinking only (`xXo` removes it first), a synthetic API error's (`dV`)."""
    groups: dict[tuple[Any, ...], list[int]] = {}
    first: int | None = None
    for s, cleared in _replies_taken_in(records, path, src, _NONE):
        if cleared:
            first = None
        if s in undefined:
            if first is None:
                first = s
            else:
                groups.setdefault(("line", first), [first]).append(s)
    if groups:
        src.merged.update(_merge_replies(records, groups))
        src.replies.update(groups)


def _request_merges(records: list[Record], path: list[int], src: _Source, into: dict[int, int]) -> dict[int, list[int]]:
    """Where Claude Code 2.1.328's request builder merges the path's lines of replies written on
    several lines (`into`: line -> its reply's first line, by message.id): each into the latest
    line of its message.id since the last user message holding no tool result, after consecutive
    user lines are joined, or a compact boundary (`yo`, offset 322784184). Returns, per line merged
    into, its lines in path order."""
    latest: dict[int, int] = {}
    out: dict[int, list[int]] = {}
    for s, cleared in _replies_taken_in(records, path, src, into):
        if cleared:
            latest.clear()
        if s in into:
            out.setdefault(latest.setdefault(into[s], s), []).append(s)
    return out


def _replies_taken_in(records: list[Record], path: list[int], src: _Source, lines: Container[int]) -> Iterator[tuple[int, bool]]:
    """Each reply line Claude Code 2.1.328's request builder takes in along the path (`lines`,
    a reply's later lines, always), and whether its map by message.id (`yo`, offset 322784184)
    was cleared since the one before: by a compact boundary, or by a user message holding no tool
    result (its consecutive user lines joined first). The lines no request carries are passed: a
    line of thinking only (`xXo` removes it first), a synthetic API error's (`dV`)."""
    cleared = users = result = False  # (the user lines since the last reply, and whether one holds a result)
    for s in path:
        r = records[s]
        if r.kind == "checkpoint":
            cleared, users, result = True, False, False
        elif s in lines or (r.kind == "message" and r.type == "assistant"):
            if s not in lines and ((s in src.thinking and s not in src.merged) or _synthetic_error(r)):
                continue  # (no request carries it)
            yield s, cleared or (users and not result)
            cleared = users = result = False
        elif r.kind == "message" and r.type in ("user", LOCAL_COMMAND_NOTE) and not r.never_sent:
            users, result = True, result or r.role == "tool"


def _split_repeated_ids(records: list[Record], path: list[int], src: _Source) -> bool:
    """Merge again, as `_request_merges` says, each reply of several lines that Claude Code does
    not send as one message on the first of its lines: a message.id written again after a prompt
    (a damaged or hand-edited transcript, a line copied from another branch) starts a message of
    its own, a line not on the path is in none, and the first line on the path is the one merged
    into (order probes "id repeated after a prompt ...", "... across a compact boundary").
    Whether any was."""
    into = {x: f for f, xs in src.merged.items() for x in xs}
    merges = _request_merges(records, path, src, into)
    changed = {into[t] for t, xs in merges.items() if t not in src.merged or src.merged[t] != xs}
    for g in changed:
        for x in src.merged.pop(g):
            r = records[x]
            r.kind = "message"
            r.message = src._own_message(r)[0]
            _drop_extra(r, "merged_lines")
            _drop_extra(r, "merged_into_line")
        src.groups.pop(g, None)
    again = {("merge", t): xs for t, xs in merges.items() if into[t] in changed and len(xs) > 1}
    if again:
        src.merged.update(_merge_replies(records, again))
    return bool(changed)


def _drop_extra(r: Record, key: str) -> None:
    """Take a field `_add_extra` added off a record's `extra`."""
    src = r._source
    if r._extra is UNREAD and isinstance(src, _Source):
        src.added.get(r.seq, {}).pop(key, None)
    elif r.extra and key in r.extra:
        r.extra = {k: v for k, v in r.extra.items() if k != key}


def _synthetic_error(r: Record) -> bool:
    """A synthetic API error's reply (`_message`: its error message kept), which no request carries."""
    return r.stop_reason == "error" and r._message is not None and r._message.error_message is not None


def _results_by_call(records: list[Record]) -> dict[str, list[int]]:
    """Call id -> the seqs of the result lines answering it (any branch)."""
    results: dict[str, list[int]] = {}
    for r in records:
        if r.kind == "message" and r.role == "tool":
            for cid in _result_ids(r):
                results.setdefault(cid, []).append(r.seq)
    return results


def _placed_families(
    records: list[Record],
    chain: list[int],
    merged: Mapping[int, list[int]],
    results: dict[str, list[int]],
    undefined: set[int] = _NONE,
    fresh: Mapping[int, list[int]] | None = None,
) -> list[int]:
    """`_with_parallel_results` given the result lines by call. `fresh`: the replies of `merged`
    whose first line may be off the chain (default: all; a follow's, the ones its new lines made:
    the path it grows placed every earlier reply's first line already, else it was split and is
    read in full)."""
    on = set(chain)
    if not chain:
        return []
    # The path as a linked list (seq -> the next one), once a line goes in (right after its anchor).
    after: dict[int, int | None] | None = None
    # A line merged into a reply whose first line is off the chain stands for that line: Claude Code
    # recovers a reply's lines by message.id from its first line on the chain (`O_r`: order probe
    # "id repeated after a prompt, the first off the chain"). Rare: mostly empty.
    off = {x: f for f, xs in (merged if fresh is None else fresh).items() if f not in on for x in xs if x in on}
    for s in chain:
        first = off.get(s, s)
        r = records[first]
        if r.kind != "message" or r.role != "assistant" or (not r.call_ids and first not in merged) or s in undefined:
            continue  # (a reply of one line and no call is its own family, on the chain)
        family = set(merged.get(first, (first,)))
        for cid in r.call_ids:
            family.update(results.get(cid, ()))
        if first != s:  # (Claude Code no longer holds a line written before its last boundary off the chain)
            floor = max((x for x in chain if records[x].kind == "checkpoint"), default=-1)
            family = {x for x in family if x > floor or x in on}
        if family <= on:  # (the common case: the reply's lines and results are on the chain already)
            continue
        missing = sorted(x for x in family if x not in on)
        if after is None:
            after = dict(zip(chain, [*chain[1:], None], strict=True))
        for x in missing:
            before = [p for p in family if p < x and (p in on)]
            anchor = max(before) if before else s
            after[x] = after[anchor]
            after[anchor] = x
            on.add(x)
    if after is None:  # (nothing went in)
        return list(chain)
    path = []
    cur: int | None = chain[0]
    while cur is not None:
        path.append(cur)
        cur = after[cur]
    return path


def _preserved_list(records: list[Record], pm: dict[str, Any], by_id: dict[str, int]) -> list[int]:
    """The lines a boundary's `preservedMessages` keeps, in its order, as Claude Code 2.1.328
    relinks them after the summary (`w_r`, offset 317455350): none when a listed uuid names no
    line it holds (its "relink walk broken") or when the anchor (the summary line they hang
    from) is not a line it holds, wherever on the chain the lines were (the relink puts them
    there; no logicalParentUuid is needed). (Observed: `python -m
    tests.peers.claude_code_resume.compaction_probe`.)"""
    uuids, anchor = pm["uuids"], pm.get("anchorUuid")
    seqs = [by_id.get(u) if isinstance(u, str) else None for u in uuids]
    a = by_id.get(anchor) if isinstance(anchor, str) else None
    if not seqs or None in seqs or a is None or records[a].kind == "unknown":
        return []
    return list(dict.fromkeys(s for s in seqs if s is not None and _held(records[s])))


def _plain_anchor(records: list[Record], pm: dict[str, Any], by_id: dict[str, int], later: set[int]) -> int | None:
    """The line the preserved messages hang from (`anchorUuid`) when it is a plain message after
    the boundary, not a summary the boundary holds: Claude Code sends it, then what it preserves."""
    a = pm.get("anchorUuid")
    seq = by_id.get(a) if isinstance(a, str) else None
    return seq if seq is not None and seq in later and records[seq].kind == "message" else None


def _preserved_before_boundaries(records: list[Record], path: list[int], by_id: dict[str, int]) -> list[int]:
    """Move the messages a boundary keeps verbatim to just before it (the runtime sends them
    right after the summary), so the checkpoint's retained tail is exactly them."""
    for s in list(path):
        r = records[s]
        if r.kind != "checkpoint" or r.checkpoint is None:
            continue
        cp = r.checkpoint
        meta = cp.details if isinstance(cp.details, dict) else {}
        pos = path.index(s)
        before = path[:pos]
        kept: list[int] = []
        pm = meta.get("preservedMessages")
        seg = meta.get("preservedSegment")
        if isinstance(pm, dict) and isinstance(pm.get("uuids"), list):
            later = set(path[pos:])
            kept = [x for x in _preserved_list(records, pm, by_id) if x not in later]  # (one already after it stays)
            if not kept:
                cp.first_kept_id = None  # (Claude Code relinks nothing: `w_r`)
                continue
            anchor = _plain_anchor(records, pm, by_id, later)
            if anchor is not None:
                kept = [anchor, *kept]
                path = [x for x in path if x != anchor]
                pos = path.index(s)
                before = path[:pos]
        elif isinstance(seg, dict) and isinstance(seg.get("headUuid"), str) and isinstance(seg.get("tailUuid"), str):
            h, t = by_id.get(seg["headUuid"]), by_id.get(seg["tailUuid"])
            if h in before and t in before:
                i, j = sorted((before.index(h), before.index(t)))  # type: ignore[arg-type]
                kept = before[i : j + 1]
        if not kept:
            continue
        keep = set(kept)
        rest = [x for x in before if x not in keep]
        path = rest + kept + path[pos:]
        first_msg = next((x for x in kept if records[x].kind == "message"), None)
        cp.first_kept_id = records[first_msg].id if first_msg is not None else cp.first_kept_id
        if meta.get("producer") != "inspector":  # a repair states what its summary represents
            cp.summarized_through_id = claude_code_compact.kept_round_shown(records, rest, kept, _line_content)
        _release_taken_tails(records, rest, keep, r)
    return path


def _line_content(r: Record) -> Any:
    """A line's `message.content` as written (the merged reply's for an in-memory record)."""
    src = r._source
    o = src.obj(r) if isinstance(src, _Source) else None
    m = o.get("message") if isinstance(o, dict) else None
    if isinstance(m, dict):
        return m.get("content")
    msg = r.message if r.kind == "message" else None
    return claude_code_compact.api_content(msg) if msg is not None else None


def _release_taken_tails(records: list[Record], rest: list[int], kept: set[int], later: Record) -> None:
    """An earlier boundary whose preserved messages a later one keeps too: on resume Claude Code
    relinks them after the later summary and drops every other line before the later boundary,
    the earlier boundary among them (its `w_r`), so the earlier one keeps nothing raw any more."""
    by_id = {records[x].id: x for x in kept if records[x].id is not None}
    for x in rest:
        cp = records[x].checkpoint
        if records[x].kind != "checkpoint" or cp is None or cp.first_kept_id not in by_id:
            continue
        e = dict(records[x].extra or {})
        e["preserved_taken_by_line"] = later.line
        records[x].extra = e
        cp.first_kept_id = None


# ---------------------------------------------------------------------------------------- following


def extend(led: Ledger, lines: list[RawLine]) -> Ledger | None:
    """The ledger grown by appended lines (base.LineExtender): new lines, each a message or
    bookkeeping line of its own (a reply's lines may come together, or continue a reply begun
    before), whose path (`_grown_path`) only grows at its end: the chain from the newest
    main-thread line, with the lines of every reply on it and the results answering them
    (parallel results hanging off earlier call lines), as the full build places them; lines off
    it (a sub-agent's, a branch's) are off the path. Anything that changes what was read before
    needs the full build: a compaction, a result or line the path would place earlier, a reply begun
    before the newest checkpoint, a field of the wrong type, a reused uuid, a reply of thinking only."""
    records = led.records
    src = records[0]._source if records else None
    leaf = led.leaf_seq
    if not isinstance(src, _Source) or leaf is None or src.chain_leaf is None or led.resolved_path is not None or src.merges_by_path:
        return None
    if not appended.clean(lines) or any(d.problem == "not_this_format" for d in led.diagnostics):
        return None
    st = _appended_lines(led, src, lines)
    if st is None:
        return None
    new = st.records[len(records) :]
    if st.diags or not appended.fresh_ids(led, new, src.relinked):
        return None
    answered = _answered(src, records)
    if any(c in answered for r in new for c in r.call_ids):
        return None  # (a result written before its call: the path would place it earlier)
    earlier = {k: [x for x in src.replies.get(k, ()) if x < len(records)] for k in st.groups}
    continued = {k: v for k, v in earlier.items() if v}
    replaced = None if _thinking_only_changes(src, st, continued) else _continue_replies(led, continued, st)
    if replaced is None:
        return None
    merged = _merge_replies(st.records, {k: v for k, v in st.groups.items() if k not in continued})
    merged.update({v[0]: [*v, *st.groups[k]] for k, v in continued.items()})
    for r in replaced:
        st.records[r.seq] = r
    grown_path = _grown_path(led, st, merged)
    if grown_path is None:
        return None
    segment, chain_leaf = grown_path
    if not _linked_by_ids(st.records, segment):
        return None  # (the full build hands the path over; the old path is linked by id, the new ids are fresh)
    newest = chain_leaf if chain_leaf >= len(records) else src.newest  # (the full build's walk starts from it)
    lp_seq = _newest_last_prompt(st.records, len(records) - 1, src.last_prompt)  # (the new lines only are looked at)
    if newest is None or _last_prompt_leaf(st.records, ChainMap(st.by_uuid, led.by_id()), lp_seq, newest) != chain_leaf:
        return None  # (Claude Code resumes from another line: a last-prompt line's, or the newest one again)
    if _left_out_lines_change(led, src, st.records, leaf, segment, merged):
        return None
    request = _request_model(st.records, st.objs, segment, len(records)) or src.request_model
    if request != src.request_model and (src.foreign or _foreign_lines(src.signed, request)):
        return None  # (a reply of another model: the signed thinking left out, or its notes, change along the path)
    _link_subagents(new, led.path)
    _link_segment(st, src, segment, records[leaf].id, len(records))
    out = appended.grown(led, new)
    for r in replaced:
        out.records[r.seq] = r
    out.leaf_seq = segment[-1] if segment else leaf
    src.replies.update((k, [*earlier[k], *seqs]) for k, seqs in st.groups.items())
    src.merged.update(merged)
    _note_grown(src, st, new, answered, request)
    src.chain_leaf, src.newest = chain_leaf, newest
    src.last_prompt = lp_seq
    return out


def _appended_lines(led: Ledger, src: _Source, lines: list[RawLine]) -> _Reading | None:
    """The records of the appended lines, read on after the ledger's (`extend`), or None when one
    of them cannot extend it alone (`_extends_alone`)."""
    st = _Reading(src)
    st.records = list(led.records)  # (seq numbering and parent lookups run on): the new ones appended
    st.by_uuid = {}
    for rl in lines:
        o = rl.objects[0]
        if not _extends_alone(o, src, led):
            return None
        seq = len(st.records)
        uuid = o.get("uuid") if isinstance(o.get("uuid"), str) and o.get("uuid") else None
        rec = _record_of(o, rl=rl, seq=seq, uuid=uuid, st=st)
        rec._source = src
        st.records.append(rec)
        st.objs.append(o)
        if uuid is not None:
            st.by_uuid[uuid] = seq
    return st


def _link_segment(st: _Reading, src: _Source, segment: list[int], prev_id: str | None, base: int) -> None:
    """Link the grown path's new records each to the one before it (`extend`), as the full build
    links the path, keeping a line's own parentUuid where it differs."""
    for s in segment:
        r = st.records[s]
        if r.parent_id != prev_id:
            _add_extra(r, "parentUuid", st.objs[s - base].get("parentUuid"), keep=True)
            if r.parent_id is not None:
                src.relinked.add(r.parent_id)
            r.parent_id = prev_id
        prev_id = r.id


def _note_grown(src: _Source, st: _Reading, new: list[Record], answered: set[str], request: str | None) -> None:
    """What the source keeps of the appended records (`extend`): thinking lines, the request's
    model and the lines of another, the calls answered and made."""
    src.thinking.update(st.thinking)
    src.request_model = request
    if st.signed:
        src.signed.update(st.signed)
        src.foreign.update(_foreign_lines(st.signed, request))
    answered.update(c for r in new if r.kind == "message" and r.role == "tool" for c in _result_ids(r))
    if src.called is not None:  # (built when a result first needs it)
        src.called.update(c for r in new if r.kind == "message" for c in r.call_ids)


def _thinking_only_changes(src: _Source, st: _Reading, continued: dict[tuple[Any, ...], list[int]]) -> bool:
    """Whether the appended lines may change which replies `_leave_out_thinking_only` leaves out:
    a reply whose lines so far hold thinking only (new, or one begun before), a reply left out
    that goes on, or a reply of the message.id of one left out."""
    left_out = src.thinking_left_out
    if not st.thinking and not left_out:
        return False
    new = set(st.thinking)
    for k, seqs in st.groups.items():
        if all(x in new for x in seqs) and all(x in src.thinking for x in continued.get(k, ())):
            return True
        if k in continued and continued[k][0] in left_out:
            return True
    return bool(left_out) and any(_message_id(o) in left_out.values() for o in st.objs if o.get("type") == "assistant")


def _grown_path(led: Ledger, st: _Reading, merged: dict[int, list[int]]) -> tuple[list[int], int] | None:
    """The seqs the path gains at its end, in order, and the new chain leaf (the newest
    main-thread line): the path of the turn in progress (from the latest prompt or checkpoint on
    the old path) placed again as the full build places it (`_placed_families`). None when the path changes
    before its end, a new call or result pairs with a line before that prompt, or the walk meets
    what only the full build reads (a checkpoint, a line of no known parent)."""
    src = st.source
    recs = st.records
    n = len(led.records)
    new = recs[n:]
    assert src.chain_leaf is not None and led.leaf_seq is not None
    main = [r for r, o in zip(new, st.objs, strict=True) if r.id is not None and r.runtime_visible and o.get("type") in _CHAINED and o.get("isSidechain") is not True]
    leaf = main[-1].seq if main else src.chain_leaf
    by_id = led.by_id()
    seg: list[int] = []
    cur = leaf
    while cur >= n:  # the chain from the newest main-thread line back to the first old line on it
        seg.append(cur)
        pid = recs[cur].parent_id
        nxt = st.by_uuid.get(pid, by_id.get(pid)) if pid is not None else None
        # (a line before the newest compact boundary may be one Claude Code no longer holds, `w_r`:
        # then it continues from another line, `_TimeFallback`; the full build tells)
        if nxt is None or nxt in seg or nxt < src.last_checkpoint:
            return None
        cur = nxt
    if _fallback_may_change(led, src, new, seg, cur):
        return None
    seg.reverse()
    turn = _turn_path(led, recs)
    if turn is None:
        return None
    start = turn[0]
    joined = _chain_to(recs, by_id, cur, start, set(turn))  # the old chain from the turn's prompt to the junction
    if joined is None:
        return None
    region = recs[start:]
    results = _results_by_call(region)
    calls = {c for r in region if r.kind == "message" for c in r.call_ids}
    for r in new:
        if r.kind != "message" or r.role != "tool":
            continue
        outside = [c for c in _result_ids(r) if c not in calls]
        if outside and not _called(src, led.records).isdisjoint(outside):
            return None  # (it answers a reply before the turn: the full build places it there)
    if any(first < start for first in merged):
        return None  # (a reply begun before the turn goes on: the full build places its lines there)
    placed = _placed_families(recs, joined + seg, ChainMap(merged, src.merged), results, fresh=merged)
    if placed[: len(turn)] != turn or any(x < n for x in placed[len(turn) :]):
        return None
    return placed[len(turn) :], leaf


def _fallback_may_change(led: Ledger, src: _Source, new: list[Record], seg: list[int], junction: int) -> bool:
    """Whether the full build's walk may fall back by time (`_TimeFallback`) otherwise than the old
    walk did, when that one fell back or stopped at a parent Claude Code does not hold (a
    dangling_parent diagnostic): the chain from the newest line joins the old one below the old
    chain leaf (`junction`), so the lines between are no longer walked nor, as lines on the chain,
    passed over as lines to fall back to; or an appended line off the chain is one to fall back to."""
    if not any(d.problem in ("dangling_parent", CHAIN_FROM_ELSEWHERE) for d in led.diagnostics):
        return False
    if junction != src.chain_leaf:
        return True
    on = set(seg)
    return any(r.seq not in on and r.kind != "unknown" and r.runtime_visible and (r.type in _KEPT_TYPES or r.type.startswith("system")) for r in new)


def _turn_path(led: Ledger, recs: list[Record]) -> list[int] | None:
    """The old path from its latest prompt, or the newest checkpoint when that comes later (the
    messages it keeps are placed before it), to its end, walked back along the path's own links;
    None when there is neither, or the links go round (ids a line reuses: the full build says so)."""
    by_id = led.by_id()
    out: list[int] = []
    cur: int | None = led.leaf_seq
    while cur is not None and len(out) < len(recs):
        r = recs[cur]
        out.append(cur)
        if r.kind == "checkpoint" or (r.kind == "message" and r.role == "user" and not _result_ids(r)):
            out.reverse()
            return out
        cur = by_id.get(r.parent_id) if r.parent_id is not None else None
    return None


_NO_PARENT = object()


def _bridged(r: Record) -> frozenset[str]:
    src = r._source
    return src.bridged if isinstance(src, _Source) else frozenset()


def _line_parent(r: Record) -> Any:
    """The parentUuid a line was written with (the path's link replaced it where they differ)."""
    src = r._source
    e = (src.added.get(r.seq) or {}) if r._extra is UNREAD and isinstance(src, _Source) else (r.extra or {})
    got = e.get("parentUuid", _NO_PARENT)
    return r.parent_id if got is _NO_PARENT else got


def _chain_to(recs: list[Record], by_id: dict[str, int], junction: int, start: int, turn: set[int]) -> list[int] | None:
    """The chain as written from the turn's prompt `start` to `junction`, every line of it on the
    turn's path; None when it leaves the turn."""
    out = [junction]
    cur = junction
    while cur != start:
        pid = _line_parent(recs[cur])
        nxt = by_id.get(pid) if isinstance(pid, str) and pid not in _bridged(recs[cur]) else None
        if nxt is None or nxt not in turn or nxt in out:
            return None
        out.append(nxt)
        cur = nxt
    out.reverse()
    return out


def _continue_replies(led: Ledger, continued: dict[tuple[Any, ...], list[int]], st: _Reading) -> list[Record] | None:
    """Appended blocks of replies begun before the append, merged as `_merge_replies` merges them:
    each reply's first line as a new record (the old ledger keeps its own), the appended lines
    meta records. None when the full build is needed: the reply is before the newest checkpoint,
    a line of it was diagnosed, or it was or becomes a reply the runtime drops."""
    if not continued:
        return []
    src = st.source
    records = st.records
    diagnosed = {x for d in led.diagnostics for x in d.seqs}
    drop = FORMAT.runtime.drop_stop_reasons
    out: list[Record] = []
    for k, old in continued.items():
        first = records[old[0]]
        new = st.groups[k]
        if old[0] <= src.last_checkpoint or first.kind != "message" or any(x in diagnosed for x in old):
            return None
        parts = [src._own_message(records[x], check=True) for x in old]
        parts += [(records[x].message, (records[x].extra or {}).get("requestId")) for x in new]  # type: ignore[misc]
        grown_first = msgspec.structs.replace(first)
        grown_first.message = _merged_message(parts)  # type: ignore[arg-type]
        if first.stop_reason in drop or grown_first.stop_reason in drop:
            return None
        extra = dict(first.extra or {})
        relinked = extra.pop("parentUuid", _NOT_ADDED)  # (added after the merge by the path's links)
        extra["merged_lines"] = [records[x].line for x in [*old, *new]]
        if relinked is not _NOT_ADDED:
            extra["parentUuid"] = relinked
        grown_first.extra = extra
        for x in new:
            r = records[x]
            r._message = None
            r.kind = "meta"
            r.role = None
            r.stop_reason = None
            r.call_ids = ()
            _add_extra(r, "merged_into_line", first.line)
        out.append(grown_first)
    return out


_NOT_ADDED = object()


def _answered(src: _Source, records: list[Record]) -> set[str]:
    if src.answered is None:
        src.answered = {c for r in records if r.kind == "message" and r.role == "tool" for c in _result_ids(r)}
    return src.answered


def _called(src: _Source, records: list[Record]) -> set[str]:
    if src.called is None:
        src.called = {c for r in records if r.kind == "message" for c in r.call_ids}
    return src.called


def _extends_alone(o: dict[str, Any], src: _Source, led: Ledger) -> bool:
    """Can this appended line be mapped without the lines before it (see `extend`)?"""
    if fields.check_fields(o, fields.CLAUDE_CODE) or o.get("isCompactSummary") is True:
        return False
    t = o.get("type")
    if isinstance(o.get("sessionId"), str) and led.session_id is None:
        return False
    pid = o.get("parentUuid")
    if isinstance(pid, str) and pid in src.bridged:
        return False  # (the walk may cross a boundary there)
    if t in ("user", "assistant"):
        m = o.get("message")
        if not isinstance(m, dict) or _dropped_because(t, m) is not None:
            return False
        mid = m.get("id")
        return t == "user" or (isinstance(mid, str) and bool(mid))  # (a reply's block without an id may join the one before)
    if t == "system":
        return o.get("subtype") != "compact_boundary"
    return t in _BOOKKEEPING


# ---------------------------------------------------------------------------------------- resume

# Claude Code 2.1.328's own reply to a conversation it resumes inside a turn (its `w2`, offset
# 305859308, a `<synthetic>` assistant line). Loading the transcript on resume (`iKn`, offset
# 319235030) splices it in (offset 319247653) right after the last line that is not a system or
# progress line when that one is a user line (a prompt, a tool result, the summary), unless those
# last lines are a local command's (`L4`, offset 319254069); the line is written to the file.
RESUME_REPLY = claude_code_compact.RESUME_REPLY
# The first words of a local command's lines (its `nM`, offset 308147108): the command itself,
# its output, and the caveat Claude Code writes ahead of them.
_LOCAL_COMMAND_PARTS = (
    ("<command-name>", "record"),
    ("<local-command-stdout>", "output"),
    ("<local-command-stderr>", "output"),
    ("<local-command-caveat>", "caveat"),
)


def _last_text(m: Message) -> str | None:
    return next((b.text for b in reversed(m.blocks) if b.type == "text" and b.text is not None), None)


def _local_command_part(rec: Record) -> str | None:
    """What part of a local command a user line is (`Gqn`, offset 319255074): "record" (the
    command), "bareRecord" (a line that is the bare "/command"), "output", "caveat" (only as a
    meta line), or None for any other line."""
    m = rec.message
    e = rec.extra or {}
    if m is None or m.source_role != "user" or e.get("promptSource") is not None:
        return None
    meta = e.get("isMeta") is True
    text = _last_text(m)
    part = next((p for tag, p in _LOCAL_COMMAND_PARTS if text is not None and text.startswith(tag)), None)
    if part == "caveat" and not meta:
        return None
    if part is None and not meta and m.blocks and m.blocks[-1].type == "text" and (m.blocks[-1].text or "").strip().startswith("/"):
        return "bareRecord"
    return part


def _instant(ts: str | None) -> float | None:
    try:
        return datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp() if ts else None
    except ValueError:
        return None


def _ends_on_local_command(led: Ledger, sent: list[int]) -> bool:
    """Are the last lines sent a local command's (its caveat, the command, its output)? Claude
    Code's `L4`: walking back from the last line, a caveat ends the command (written no earlier
    than a bare "/command" line seen on the way); otherwise only when every line of it is a meta line."""
    records = led.records
    if not sent or _local_command_part(records[sent[-1]]) is None:
        return False
    seen_record = False
    bare_at: float | None = None
    all_meta = True
    for s in reversed(sent):
        rec = records[s]
        part = _local_command_part(rec)
        if part == "caveat":
            at = _instant(rec.timestamp)
            return bare_at is None or (at is not None and at >= bare_at)
        if part is None or seen_record:
            break
        seen_record = part in ("record", "bareRecord")
        if part == "bareRecord":
            at = _instant(rec.timestamp)
            bare_at = at if at is not None else float("nan")  # compares as no caveat after it
        all_meta = all_meta and (rec.extra or {}).get("isMeta") is True
    return all_meta


# What Claude Code sends for a reply whose content is an empty list (`Cp`, offset 305853735): as it
# builds the request (`mTe`, offset 322764334), `Eqi` (offset 322907878, run on the joined API
# messages: `vc=Eqi(Ad)`, offset 322791669) gives every assistant message but the request's last
# with no content block this one text block instead (dropping it instead is behind the
# `tengu_melodic_flute` gate, off by default). The last message of a request is the user's (the new
# prompt), so every such reply is sent so. A reply written over several lines is one message by
# then: only one none of whose lines holds a block is empty.
NO_CONTENT = "(no content)"


def reply_sent_as(rec: Record) -> str | None:
    """`Runtime.reply_sent_as`: "(no content)" for a reply without a content block. Such a line is
    read whole, never from its head (`_read_head`), so its message is in memory: a reply whose
    message is not (read from its head, merged or not) holds a block, and nothing is read here."""
    m = rec._message
    return NO_CONTENT if m is not None and not m.blocks else None


def _ends_on_unsent_user_line(led: Ledger, sent: list[int]) -> bool:
    """Whether the conversation ends on a user line after the last message sent, one whose empty
    content is not sent (`tft`): the resume looks at the lines it loaded (`iKn`'s last user or
    assistant row, offset 319235401), before the request leaves that line out (observed: a
    transcript ending so gets "No response requested." after the reply before it)."""
    leaf = led.leaf_seq
    if leaf is None or (sent and leaf <= sent[-1]):
        return False
    r = led.records[leaf]
    return r.kind == "message" and r.role == "user" and r.never_sent


def _ends_on_unsent_reply(led: Ledger, sent: list[int]) -> bool:
    """Whether the conversation's last message, after the last one sent, is a reply the request
    leaves out (a synthetic API error's): the resume judges the turn by the lines it loaded, ended
    on a reply (`iKn`: `Do`), and appends nothing (observed: order probe "a synthetic API error
    after an unanswered call, session ends"). A reply of thinking only is not among those lines
    (`_leave_out_thinking_only`: observed, order probe "call answered, thinking-only reply, session
    ends": the resume's reply is appended). A reply's line making no call that is merged into a
    reply sent before the last message (`_merge_undefined_ids`: a line without a message.id after
    a call's result joins the call's reply) is the last line, a reply's: nothing is appended
    (observed: order probe "no-id: call, result, call2, result2, done"); a line of the last
    message sent is that message's (order probe "call line, then its text line, ...")."""
    leaf = led.leaf_seq
    if leaf is None or (sent and leaf <= sent[-1]):
        return False
    after = sent[-1] if sent else -1
    records, by_id = led.records, None
    src = records[0]._source
    thinking = src.thinking_left_out if isinstance(src, _Source) else {}
    r = records[leaf]
    last_line = records[after].line if after >= 0 else None
    # (back over system lines, each once: a cycle ends it)
    while ((r.kind != "message" and not _joins_earlier(r, last_line)) or r.seq in thinking) and r.parent_id is not None:
        by_id = by_id or led.by_id()
        up = by_id.get(r.parent_id)
        if up is None or not after < up < r.seq:
            return False
        r = records[up]
    if _joins_earlier(r, last_line):  # (one making a call the session ended on: its result is made up, then the reply appended)
        return r.seq > after and not _line_makes_calls(r)
    return r.kind == "message" and r.role == "assistant" and r.seq > after


def _joins_earlier(r: Record, last_line: int | None) -> bool:
    """A reply's line whose blocks `_merge_replies` put on the first line of a reply other than
    the one at `last_line` (the last message sent)."""
    if r.type != "assistant" or r.kind != "meta":
        return False
    into = (r.extra or {}).get("merged_into_line")
    return into is not None and into != last_line


def _line_makes_calls(r: Record) -> bool:
    """Whether a reply's line, as written, holds a tool_use block (or cannot be read again)."""
    c = _line_content(r)
    return not isinstance(c, list) or any(isinstance(b, dict) and b.get("type") == "tool_use" for b in c)


def resume_reply(led: Ledger, sent: list[int], on_reply: bool) -> tuple[str, int] | None:
    """The reply Claude Code adds on resume to a conversation that ends inside a turn: it looks at
    the last line that is not a system or progress line (`iKn`), so a local command's note is
    passed, and splices its reply in right after that line (`Hr.splice(_d+1,0,...)`, offset
    319247653): before the notes that end the conversation (observed: a real transcript ending on
    "[Request interrupted by user for tool use]", then `/model` and its output, resumed by the
    real CLI). Returns the reply and how many of the messages sent come after it."""
    if (on_reply and not _ends_on_unsent_user_line(led, sent)) or _ends_on_unsent_reply(led, sent):
        return None
    lines = list(sent)
    while lines and led.records[lines[-1]].type == LOCAL_COMMAND_NOTE:
        lines.pop()
    if len(lines) < len(sent) and _answered_on_resume(led, lines):
        # (the "[Tool call interrupted ...]" results are a line appended last, after the notes: the
        # last line that is not a system line; observed, order probes "unanswered call, then a
        # local command, session ends", "parallel call lines, one answered, then ...")
        return RESUME_REPLY, 0
    if len(lines) < len(sent) and (not lines or led.records[lines[-1]].role == "assistant"):
        return None  # the notes followed a reply
    return None if _ends_on_local_command(led, lines) else (RESUME_REPLY, len(sent) - len(lines))


def _answered_on_resume(led: Ledger, sent: list[int]) -> bool:
    """Whether the last reply sent makes a call no line answers, with no user message after it
    but results (`sent`: the messages sent, a local command's notes passed): Claude Code answers
    such a call on resume ("[Tool call interrupted ...]", as `engine.sent_items` predicts it)."""
    src = led.records[0]._source if led.records else None
    if not isinstance(src, _Source) or not src.dangling:
        return False
    for s in reversed(sent):
        r = led.records[s]
        if r.role == "assistant":
            return not src.dangling.isdisjoint(r.call_ids)
        if r.role != "tool":
            return False
    return False


# ---------------------------------------------------------------------------------------- the format

FORMAT = Format(
    name=NAME,
    label="Claude Code JSONL",
    # The parentUuid chain from the newest line (with the lines of every reply on it and the
    # results answering them); a compact_boundary's summary line, then the messages it kept
    # verbatim, then what followed. isMeta lines are sent (hidden from the user, not the model); a
    # synthetic API-error reply is not. Summary text is sent as written (the line holds the wrapper).
    runtime=Runtime(
        name=NAME,
        tree=True,
        drop_stop_reasons=frozenset({"error"}),
        # ... taken out before its user lines are joined and paired (`Ff`'s filter, `dV`), so a
        # synthetic API error between a reply's calls and their results splits nothing (observed:
        # order probes "a synthetic API error between a call and its result", "... two results").
        drops_before_pairing=True,
        synthesize_missing_results=True,
        # What Claude Code sends for a call the conversation ended on without its result (`_C`,
        # offset 307863241; seen on resume), and for one some other call of its reply was
        # answered and it was not before the conversation went on (observed on resume; a reply
        # none of whose calls was answered is left out: `_leave_out_unanswered`).
        synthetic_result_text=(
            "[Tool call interrupted: the session ended before this call's result was recorded, so its outcome is unknown. "
            "Check whether it took effect before relying on it or running it again.]"
        ),
        missing_result_text="[Tool result missing due to internal error]",
        joins_user_lines=True,
        # The joined message's results first (`NU`, offset 322793647, and `fXo`, offset 322796584:
        # its tool_result blocks, in order, then its other blocks; `Pqi`, offset 322914102, then
        # puts the results it makes up ahead of them: `let tt=[...ze,...Je]`, offset 322916218).
        results_first=True,
        # `Pqi` (`ensureToolResultPairing`) removes from the user message after a reply each result
        # whose call that reply does not make, and a second one for a call (`Le`, `xe`); it sends
        # "(no content)" (`Cp`) for a message left with nothing, or, for the request's first message
        # (no reply before it: every result removed), its own placeholder. Observed:
        # tests/peers/claude_code_resume/order_probe.py.
        results_answer_reply_before=True,
        emptied_message_text=NO_CONTENT,
        emptied_first_message_text="[Orphaned tool result removed due to conversation resume]",
        # ... and, as it goes, removes each tool call whose id an earlier call already has (its
        # set `h`), sending "[Tool use interrupted]" for a reply left with no block (offset
        # 322915307). Observed: order probe "a call id reused by a later reply".
        removes_repeated_calls=True,
        emptied_reply_text="[Tool use interrupted]",
        many_results_per_message=True,
        # A local command's note passes (`iKn` looks back past system lines): the calls before it
        # are still the conversation's last, answered "[Tool call interrupted ...]" on resume.
        turn_neutral_types=frozenset({LOCAL_COMMAND_NOTE}),
        # The repair keeps a recent window as one preserved segment ending at the leaf (the lines
        # Claude Code relinks after the summary on resume): nothing is kept ahead of it.
        contiguous_tail=True,
        # The summary line holds Claude Code's wrapper ("This session is being continued ...
        # Summary: ..."): what the summary says is the part after "Summary:".
        unwrap_summary=claude_code_writer.summary_body,
        # ... which a repair writes around its summary (its `xye`): the planner budgets it.
        written_wrapper=claude_code_writer.summary_wrapper,
        # A session that ends inside a turn gets Claude Code's own "No response requested." on resume.
        resume_reply=resume_reply,
        # A reply without a content block is sent as "(no content)" (`Eqi`).
        reply_sent_as=reply_sent_as,
        # The signed thinking of a reply of another model than the request's is left out (`yio`).
        reply_trimmed=reply_trimmed,
        # Its count of the conversation at or over its threshold before the prompt: it compacts first.
        compacts_first=claude_code_resume.compacts_first,
    ),
    looks_like=looks_like,
    build=build,
    stream=stream,
    chunk_codec=_CODEC,
    extend=extend,
    writer=Writer(
        record_name="compact_boundary",
        id_prefix=claude_code_writer.ID_PREFIX,
        planned_id=claude_code_writer.PLANNED_ID,
        refusal=claude_code_writer.refusal,
        entry=claude_code_writer.boundary_entry,
        read_back=appended_record,
        lines=claude_code_writer.compaction_lines,
        fold=lambda recs, objs: _attach_summaries(recs, objs),
    ),
    default_places=("~/.claude/projects",),  # <project>/<session>.jsonl, sub-agents in <session>/subagents/
)
